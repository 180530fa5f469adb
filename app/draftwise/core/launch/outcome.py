"""The whole state of one running engine, in one object anyone can query.

After qutebrowser's `ProcessOutcome` (misc/guiprocess.py): the process owner keeps one
outcome, and whoever wants to know how the engine is doing reads it, whole, instead of
piecing it together from a dozen signals. Here:

- core/launch/launch_flow.py's `LaunchFlow` is its only writer: every rule that changes it
  (stages, fallback, the ladder, fixes, a lost worker) lives there;
- the drivers (core/launch/headless.py, services/engine_process.py) hand it on whole after
  each change (`on_changed`, the `changed` signal);
- view-models, the CLI and the UI read it. The UI maps `Stage` to words and colours in one
  place (ui/theme.py, viewmodels/launch.py `status_text`).

One outcome belongs to one engine for one model: serving many models keeps one per model
(`model` says whose it is), none shared, written by core/serving/serve_flow.py `ServeFlow`
alone (the router starts those instances, not a LaunchFlow).

Not in it: the live figures (tokens a second, acceptance), measured per request from the
engine's /metrics and log lines by their own owner (core/measurements/live_figures.py),
and the output lines themselves, a stream the drivers hand on beside it.

Frozen: a reader cannot change what it was given, and an old outcome stays what it was
(the drivers compare by identity to know whether anything changed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from draftwise.core.launch import crash, gpu_check
from draftwise.core.launch.ladder import Concessions
from draftwise.core.messages import Message

if TYPE_CHECKING:
    from draftwise.core.planning.plan_types import Plan


class Stage(StrEnum):
    """Where one engine is: the one definition the window, the CLI and the tests compare with.

    idle (nothing launched) → starting → loading (a loading line, or /health 503) → ready
    (/health 200); stopping after a stop request; stopped or failed at the end."""

    IDLE = "idle"
    STARTING = "starting"
    LOADING = "loading"
    READY = "ready"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


IDLE, STARTING, LOADING, READY, STOPPING, STOPPED, FAILED = (
    Stage.IDLE, Stage.STARTING, Stage.LOADING, Stage.READY, Stage.STOPPING, Stage.STOPPED, Stage.FAILED,
)
STARTED = frozenset({STARTING, LOADING})  # on the way to ready: the elapsed time counts
RUNNING = frozenset({STARTING, LOADING, READY, STOPPING})  # a process is (or is about to be) there
ENDED = frozenset({STOPPED, FAILED})


@dataclass(frozen=True)
class EngineOutcome:
    """One engine's state. Written by `LaunchFlow` alone (a served model's by `ServeFlow`); everyone else reads it."""

    model: Path | None = None  # whose engine this is (one outcome per model served)
    stage: Stage = IDLE
    attempt: int = 0  # 0 the first start, then one per relaunch (fallback, fix, ladder rung)
    cause: crash.Cause | None = None  # why it failed (set with FAILED)
    # The startup fallback: the one short sentence for the banner, the first start's cause
    # (for "Details") and what was remembered about it.
    fallback_reason: Message | None = None
    fallback_cause: crash.Cause | None = None
    fallback_notes: tuple[Message, ...] = ()
    # What the running start gave up to the out-of-memory ladder (a remembered rung included),
    # and the last rung's sentence.
    concessions: Concessions = field(default_factory=Concessions)
    ladder_reason: Message | None = None
    fix: crash.FeatureFix | None = None  # the feature switched off after it crashed the engine
    gpu_verdict: gpu_check.GpuVerdict | None = None  # what the ready engine did with the GPU
    # What the user should know while it runs: the launch's warnings that are not about
    # speculation, speculation silently off, the GPU used (or not).
    notices: tuple[Message, ...] = ()
    stalled_seconds: float | None = None  # silent and not ready this long (never cleared in a launch)
    url: str = ""  # the base URL, once ready
    ready_seconds: float | None = None  # from the first start to ready, relaunches included
    # The plan the running attempt was started with (the ladder re-plans each rung and fix);
    # None when the launch has no ladder. What the engine really allocated is read from the
    # attempt's own log lines (viewmodels/plan.py, cli/launch.py --verbose): a stream, not state.
    plan: Plan | None = None
    # The workers the engine used (`--rpc`) and those that no longer answered after it lost one.
    workers_used: tuple[str, ...] = ()
    workers_lost: tuple[str, ...] = ()

    @property
    def running(self) -> bool:
        return self.stage in RUNNING

    @property
    def ended(self) -> bool:
        return self.stage in ENDED

    @property
    def ready(self) -> bool:
        return self.stage == READY


NOTHING = EngineOutcome()  # no engine launched (the window before Launch, after a reset)
