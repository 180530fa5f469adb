"""The life of one engine launch as a state machine, shared by the CLI and the window.

No processes, sockets or timers here: the drivers (core/launch/headless.py with the
standard library, services/engine_process.py with QProcess) report what happened —
started, output lines, a /health answer, an exit, a stop request, a clock tick — and carry
out the actions returned. So the rules live once:

- stages: starting → loading (a loading line, or /health 503) → ready (/health 200);
  failed or stopped at the end;
- startup fallback (docs/rules.md, "Launch and the startup fallback"): only for a
  LaunchSpec whose speculation came from auto-detection; the engine exits non-zero before it is ready and within the startup
  window → relaunch exactly once, same port, with the spec's fallback argv (rebuilt from
  scratch without speculation), and record the drafter as broken. Never after a user stop,
  never for a user's draft or --spec-type;
- drafter crash while serving: an automatic drafter that kills the engine after it was
  ready (crash.DRAFTER_CRASH: the missing-token abort, a backtrace through speculative
  code) gets the same single relaunch without speculation, and is recorded as broken at
  once (the crash itself is the evidence). Any other crash after readiness is reported;
- the out-of-memory ladder (core/launch/ladder.py, docs/ladder.md): an out-of-memory exit
  before ready, within the startup window, relaunches with the ladder's next rung (a spec
  re-planned from scratch), once per rung; a rung that fails for another reason ends it;
- warnings while serving: speculation silently off, GPU build running on the CPU;
- a stall watchdog: no output and not ready for a long time;
- a worker lost (core/launch/crash.py WORKER_GONE, WORKER_UNREACHABLE): the workers that no
  longer answer are named in the cause and kept in the outcome; core/launch/lost_worker.py
  is the one rule for launching again without them (the CLI's `launch` and the window).

The state of the launch is one `EngineOutcome` (core/launch/outcome.py), and this module is
the only one that writes it: each event replaces `LaunchFlow.outcome`, and the drivers hand
the new one on whole.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from draftwise.core.launch import crash, gpu_check
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Climb, Concessions, Halt, Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.lost_worker import worker_relaunch
from draftwise.core.launch.outcome import (
    FAILED,
    IDLE,
    LOADING,
    READY,
    STARTING,
    STOPPED,
    STOPPING,
    EngineOutcome,
    Stage,
)
from draftwise.core.messages import Message, Text, msg
from draftwise.core.planning.plan_types import Plan
from draftwise.core.processes import process_group
from draftwise.core.records import write_error
from draftwise.core.rpc import workers
from draftwise.core.speculation.broken import BrokenDrafters

log = logging.getLogger(__name__)

# The stages are core/launch/outcome.py's `Stage` (one definition), imported above: the
# drivers and tests may keep saying `launch_flow.READY`.

STARTUP_WINDOW_S = 180.0  # docs/rules.md: a crash later than this is not the drafter's startup
STALL_AFTER_S = 120.0  # silent and not ready this long: say so, offer to stop
TAIL_LINES = 400  # what the classifier reads; the UI keeps its own bounded log
# Stopping (the drivers' part of a Terminate): core/processes/process_group.py, where the
# reason for the second SIGTERM is.
TERM_AGAIN_S, KILL_AFTER_S = process_group.TERM_AGAIN_S, process_group.KILL_AFTER_S

# Lines that say the model is being loaded (the /health 503 may never be seen: this
# engine binds its port only after loading a small model).
_LOADING_MARKERS = ("load_model: loading model", "llama_model_loader:", "loading model '")
# Lines after which /health answers 200: worth asking at once instead of on the backoff.
_LISTENING_MARKERS = ("listening on http", "model loaded")


# ------------------------------------------------------------------ actions for the driver
@dataclass(frozen=True)
class Spawn:
    """Start the engine with this argv (the spec's env and address are unchanged)."""

    argv: tuple[str, ...]
    attempt: int  # 0 first start, 1 the fallback, then one per ladder rung


@dataclass(frozen=True)
class StageChanged:
    stage: Stage


@dataclass(frozen=True)
class Ready:
    url: str
    seconds: float  # from the first start, fallback included


@dataclass(frozen=True)
class Crashed:
    cause: crash.Cause


@dataclass(frozen=True)
class FellBack:
    reason: Message
    cause: crash.Cause


@dataclass(frozen=True)
class Climbed:
    """Out of memory before ready: relaunching on the ladder's next rung (`LaunchFlow.spec`
    is now that rung's; same binary, port, key and environment)."""

    reason: Message
    cause: crash.Cause
    concessions: Concessions


@dataclass(frozen=True)
class Notice:
    """Something the user should know; the engine keeps running. `about_fallback`: it
    tells more about this run's fallback (what is remembered), not news of its own."""

    text: Message
    about_fallback: bool = False


@dataclass(frozen=True)
class GpuChecked:
    """What the engine did with the GPU, once ready ("18 of 18 layers on Vulkan0 (llvmpipe)")."""

    verdict: gpu_check.GpuVerdict


@dataclass(frozen=True)
class Relaunched:
    """The engine crashed on a feature and starts again without it (crash.FeatureFix)."""

    fix: crash.FeatureFix
    cause: crash.Cause


@dataclass(frozen=True)
class Stalled:
    seconds: float


@dataclass(frozen=True)
class Terminate:
    """Stop the process group: terminate now, kill after the driver's timeout."""


@dataclass(frozen=True)
class PollHealth:
    """Ask /health now rather than at the next backoff step."""


@dataclass(frozen=True)
class Stopped:
    pass


Action = (Spawn | StageChanged | Ready | Crashed | FellBack | Climbed | Notice | Stalled | Terminate | PollHealth
          | Stopped | GpuChecked | Relaunched)


class LaunchFlow:
    """Decisions for one launch. Feed it events; do what it returns, in order."""

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        broken: BrokenDrafters | None = None,
        ladder: Ladder | None = None,
        fixes: EngineFixes | None = None,
        startup_window: float = STARTUP_WINDOW_S,
        stall_after: float = STALL_AFTER_S,
        workers_gone: Callable[[Sequence[str]], list[str]] = workers.gone,
    ) -> None:
        self.spec = spec
        self.broken = broken
        self.ladder = ladder
        self._argv: tuple[str, ...] | None = None  # a ladder rung's command
        self.fixes = fixes
        self.workers_gone = workers_gone  # which of these workers no longer answer (a network probe)
        self._fixed_args: tuple[str, ...] = ()
        self._fix_pending = False
        self.startup_window = startup_window
        self.stall_after = stall_after
        # Launch warnings that are not about speculation (those show with the decision), e.g.
        # "other computers can connect".
        self.outcome = EngineOutcome(
            model=spec.model_path, concessions=self.concessions,
            notices=tuple(w for w in spec.warnings if w not in spec.spec.warnings))
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._gpu_lines: list[str] = []
        self._first_start = 0.0
        self._attempt_start = 0.0
        self._last_activity = 0.0
        self._stall_reported = False
        self._blame: tuple[str | None, Text, Text] | None = None  # the drafter a fallback suspects
        self._stop_requested = False
        self._spec_warned = False
        self._blame_recorded = False
        self._fell_back = False  # the fallback start (without speculation) happened

    # ------------------------------------------------------------ state (read from the outcome)
    def _set(self, **changes: Any) -> None:
        """The one place an engine's outcome changes: a new, whole outcome each time."""
        self.outcome = replace(self.outcome, **changes)

    @property
    def stage(self) -> Stage:
        return self.outcome.stage

    @property
    def attempt(self) -> int:
        return self.outcome.attempt

    @property
    def cause(self) -> crash.Cause | None:
        return self.outcome.cause

    @property
    def fallback_reason(self) -> Message | None:
        return self.outcome.fallback_reason

    @property
    def ladder_reason(self) -> Message | None:
        return self.outcome.ladder_reason

    @property
    def gpu_verdict(self) -> gpu_check.GpuVerdict | None:
        return self.outcome.gpu_verdict

    @property
    def fix(self) -> crash.FeatureFix | None:
        return self.outcome.fix

    @property
    def notices(self) -> list[Message]:
        """Every notice said in this launch: about the fallback, then the others."""
        return [*self.outcome.fallback_notes, *self.outcome.notices]

    @property
    def ended(self) -> bool:
        return self.outcome.ended

    @property
    def is_ready(self) -> bool:
        return self.stage == READY

    @property
    def polling(self) -> bool:
        """Whether the driver should keep asking /health."""
        return self.stage in (STARTING, LOADING) and not self._stop_requested

    @property
    def speculating(self) -> bool:
        """Whether the running attempt carries speculative flags."""
        return not self._fell_back and bool(self.spec.spec.argv)

    @property
    def concessions(self) -> Concessions:
        """What the running start gave up to the ladder (a remembered rung included)."""
        return self.ladder.current if self.ladder is not None else Concessions()

    @property
    def current_argv(self) -> tuple[str, ...]:
        # A ladder rung replaced self.spec (planned from scratch); a feature fix (-fa off, -nr)
        # rides on whichever command runs.
        if not self._fell_back or self.spec.fallback_argv is None:
            return (*self.spec.argv, *self._fixed_args)
        return (*self.spec.fallback_argv, *self._fixed_args)

    def _planned(self) -> Plan | None:
        """The plan the running attempt starts with (the ladder's, re-planned per rung and fix)."""
        prepared = self.ladder.prepared if self.ladder is not None else None
        return prepared.plan if prepared is not None else None

    def _stage(self, stage: Stage) -> list[Action]:
        if stage == self.stage:
            return []
        self._set(stage=stage)
        return [StageChanged(stage)]

    def _new_attempt(self, now: float) -> list[Action]:
        """A relaunch (fallback, feature fix, ladder rung) begins: its own lines, clock and plan."""
        self.tail.clear()
        self._gpu_lines.clear()
        self._attempt_start = self._last_activity = now
        self._stall_reported = False
        self._set(attempt=self.attempt + 1, stage=STARTING, concessions=self.concessions, plan=self._planned())
        return [StageChanged(STARTING), Spawn(self.current_argv, self.attempt)]

    # ------------------------------------------------------------ events
    def start(self, now: float) -> list[Action]:
        self._first_start = self._attempt_start = self._last_activity = now
        self._set(plan=self._planned(), workers_used=self.spec.workers)
        return [*self._stage(STARTING), Spawn(self.spec.argv, 0)]

    def spawned(self, now: float) -> None:
        """The process exists; the startup window counts from here."""
        self._attempt_start = self._last_activity = now

    @property
    def spawned_at(self) -> float:
        """When the running start's process came to exist (the drivers' clock: monotonic)."""
        return self._attempt_start

    def output(self, lines: Iterable[str], now: float) -> list[Action]:
        lines = list(lines)
        if not lines:
            return []
        self._last_activity = now
        self._stall_reported = False
        self.tail.extend(lines)
        # One scan of the joined batch decides whether any line needs a closer look: a
        # 300k-line flood must cost the UI thread almost nothing.
        text = "\n".join(lines)
        actions: list[Action] = []
        if self.stage == STARTING and any(m in text for m in _LOADING_MARKERS):
            actions += self._stage(LOADING)
        if self.polling and any(m in text for m in _LISTENING_MARKERS):
            actions.append(PollHealth())
        if any(m in text for m in gpu_check.MARKERS) or "loaded CPU backend" in text:
            self._gpu_lines += [x for x in lines if any(m in x for m in gpu_check.MARKERS)
                                or "loaded CPU backend" in x][:200]
            del self._gpu_lines[400:]
        if not self._spec_warned and self.speculating and (
            crash.VOCAB_MISMATCH in text or crash.SPEC_INIT_FAILED in text
        ):
            self._spec_warned = True
            actions.append(self._notice(crash.SPECULATION_OFF_WARNING))
        return actions

    def health(self, status: int | None, now: float) -> list[Action]:
        if not self.polling:
            return []
        if status == 503:
            self._last_activity = now
            return self._stage(LOADING)
        if status != 200:
            return []
        actions = self._stage(READY)
        self._set(url=self.spec.url, ready_seconds=now - self._first_start)
        actions.append(Ready(self.spec.url, now - self._first_start))
        if self._blame is not None and self.attempt >= 1 and not self._blame_recorded:
            self._blame_recorded = True
            actions += self._record_broken()
        if self.ladder is not None and self._argv is not None:
            actions += [self._notice(m) for m in self.ladder.succeeded()]
        if self._fix_pending:
            self._fix_pending = False
            actions += self._record_fix()
        verdict = gpu_check.check(self.spec.backend, self.spec.fix_devices, self._gpu_lines)
        self._set(gpu_verdict=verdict)
        if verdict is not None:
            actions.append(GpuChecked(verdict))
            if verdict.used:
                # "18 of 18 layers on Vulkan0 (llvmpipe)": shown beside the other notices.
                self._tell(verdict.message)
            else:
                actions.append(self._notice(verdict.message))
        return actions

    def exited(self, status: crash.ExitStatus, now: float) -> list[Action]:
        if self.ended:
            return []
        if self._stop_requested:
            return [*self._stage(STOPPED), Stopped()]
        after_ready = self.stage == READY
        cause = crash.classify(status, list(self.tail), speculation=self.speculating, after_ready=after_ready)
        # What ran, as data (one fix a launch: none rides on the command while this is asked).
        fix = None if self.fix is not None else crash.feature_fix(
            status, [*self._gpu_lines, *self.tail], self.spec.settings, after_ready=after_ready)
        if not after_ready and self._may_climb(status, now):
            assert self.ladder is not None
            # The rung is compared with the planned command, not with a feature fix riding on it.
            planned = self.current_argv[: len(self.current_argv) - len(self._fixed_args)]
            step = self.ladder.climb(cause, planned)
            if isinstance(step, Climb):
                return self._climb(step, cause, now)
            # A rung that died of a feature (AMX, a GPU driver fault) still gets its one fix.
            if isinstance(step, Halt) and fix is None:
                return [self._notice(step.reason), *self._failed(cause)]
        if fix is not None:
            return self._relaunch(fix, cause, now)
        if not after_ready and self._may_fall_back(status, now):
            return self._fall_back(cause, now)
        if after_ready and cause.kind == crash.DRAFTER_CRASH and self.spec.fallback_eligible and not self._fell_back:
            return self._fall_back(cause, now, while_serving=True)
        return self._failed(self._name_lost_workers(cause))

    def spawn_failed(self, reason: str, now: float) -> list[Action]:
        """The program could not be started at all (missing, not executable)."""
        if self.ended:
            return []
        return self.refused(crash.failed_to_start(str(self.spec.binary), reason))

    def port_taken(self, now: float) -> list[Action]:
        """The driver found another program listening on the spec's port before a start: not
        started (that program would answer /health for the engine)."""
        if self.ended:
            return []
        return self.refused(crash.port_taken(self.spec.port))

    def refused(self, cause: crash.Cause) -> list[Action]:
        """The engine could not be started for `cause` (the program, the port, a build of
        Draftwise without the driver): failed, or stopped when a stop was asked meanwhile."""
        if self.ended:
            return []
        self._set(cause=cause)
        if self._stop_requested:
            return [*self._stage(STOPPED), Stopped()]
        return [Crashed(cause), *self._stage(FAILED)]

    def _failed(self, cause: crash.Cause) -> list[Action]:
        self._set(cause=cause)
        return [Crashed(cause), *self._stage(FAILED)]

    def _name_lost_workers(self, cause: crash.Cause) -> crash.Cause:
        """A worker went away (or never answered): ask each worker the engine used, keep the
        ones that no longer answer in the outcome and name them in the cause (the engine's
        line does not say which). core/launch/lost_worker.py decides what follows."""
        if cause.kind not in (crash.WORKER_GONE, crash.WORKER_UNREACHABLE):
            return cause
        used = self.spec.workers
        lost = tuple(self.workers_gone(used)) if used else ()
        self._set(workers_used=tuple(used), workers_lost=lost)
        return crash.name_gone_workers(cause, lost)

    def relaunch_refused(self) -> list[Action]:
        """The plan without the lost workers does not fit (lost_worker.worker_relaunch): the
        failure's next step says so."""
        relaunch = worker_relaunch(self.outcome)
        cause = self.cause
        if relaunch is None or cause is None:
            return []
        self._set(cause=crash.Cause(cause.kind, cause.sentence, relaunch.refused_step(), cause.status, cause.evidence))
        return []

    def stop(self) -> list[Action]:
        """The user (or the app quitting) asks to stop. Never followed by a relaunch."""
        if self.ended or self._stop_requested:
            return []
        self._stop_requested = True
        if self.stage == IDLE:  # never started
            return [*self._stage(STOPPED), Stopped()]
        return [*self._stage(STOPPING), Terminate()]

    def tick(self, now: float) -> list[Action]:
        if not self.polling or self._stall_reported:
            return []
        silent = now - self._last_activity
        if silent >= self.stall_after:
            self._stall_reported = True
            self._set(stalled_seconds=silent)
            return [Stalled(silent)]
        return []

    # ------------------------------------------------------------ fallback
    def _may_fall_back(self, status: crash.ExitStatus, now: float) -> bool:
        return (
            self.spec.fallback_eligible
            and not self._fell_back
            and status.failed
            and now - self._attempt_start <= self.startup_window
        )

    def _may_climb(self, status: crash.ExitStatus, now: float) -> bool:
        return self.ladder is not None and status.failed and now - self._attempt_start <= self.startup_window

    def _climb(self, step: Climb, cause: crash.Cause, now: float) -> list[Action]:
        """Relaunch on the ladder's next rung: a spec planned from scratch, never an edit."""
        self._set(ladder_reason=step.reason)
        log.warning("%s", step.reason)
        self.spec = step.spec
        self._argv = tuple(step.spec.argv)
        self._blame = None  # a drafter is blamed only by the fallback's own proof
        return [Climbed(step.reason, cause, step.concessions), *self._new_attempt(now)]

    def _fall_back(self, cause: crash.Cause, now: float, *, while_serving: bool = False) -> list[Action]:
        what: Text = self.spec.spec.draft.name if self.spec.spec.draft else msg("the model's MTP head")
        if self.spec.spec.spec_type and self.spec.spec.spec_type.startswith("ngram"):
            what = msg("{type} speculation", type=self.spec.spec.spec_type)
        # One short sentence for the banner; the cause (which may quote the engine's own
        # words) travels beside it in FellBack.cause, for a "Details" disclosure.
        if while_serving:
            reason = msg("{what} made the engine stop while it was serving, so it was started again "
                         "without speculation.", what=what)
        else:
            reason = msg("The engine could not start with {what}, so it was started again without speculation.",
                         what=what)
        self._set(fallback_reason=reason, fallback_cause=cause)
        actions: list[Action] = [FellBack(reason, cause)]
        # Blame the drafter only once the engine starts without it: when the second start
        # fails too, the cause was something else (an argument, memory, a library). A crash
        # while serving inside the drafter's code is evidence enough by itself.
        self._fell_back = True
        self._blame = (self.spec.drafter_key, what, cause.sentence)
        if while_serving:
            actions += self._record_broken()
            self._blame = None
        return [*actions, *self._new_attempt(now)]

    def _relaunch(self, fix: crash.FeatureFix, cause: crash.Cause, now: float) -> list[Action]:
        """Start again, once, without the feature that crashed; the same port and flags.

        With a ladder the running rung is planned again with the fix (Ladder.with_fix): the
        plan then matches what runs, and the later rungs keep the fix. Otherwise the fix
        rides on the command as it is."""
        self._set(fix=fix)
        self._fix_pending = True
        refit = self.ladder.with_fix(fix.args) if self.ladder is not None else None
        if refit is not None:
            self.spec, self._fixed_args = refit, ()
        else:
            self._fixed_args = fix.args
        return [Relaunched(fix, cause), self._notice(fix.message), *self._new_attempt(now)]

    def _record_fix(self) -> list[Action]:
        if self.fixes is None or self.fix is None:
            return []
        try:
            self.fixes.record(self.spec.binary, self.spec.model_path, self.spec.fix_devices,
                              self.fix.args, self.fix.message)
        except OSError as exc:
            return [self._notice(msg("Could not remember the engine fix ({error}); the next launch may "
                                     "crash once more.", error=write_error(exc)))]
        return []

    def _record_broken(self) -> list[Action]:
        """The start without speculation worked: remember the drafter so the next launch
        leaves it out without crashing first."""
        key, what, why = self._blame or (None, "", "")
        if self.broken is None or not key:
            return []
        try:
            self.broken.record(self.spec.binary, key, why)
        except OSError as exc:
            return [self._notice(msg(
                "Could not remember the broken drafter ({error}); the next launch will try it again.",
                error=write_error(exc)), about_fallback=True)]
        return [self._notice(msg("The engine started without {what}, so it will be left out from now on.", what=what),
                             about_fallback=True)]

    def _notice(self, text: Message, *, about_fallback: bool = False) -> Notice:
        self._tell(text, about_fallback=about_fallback)
        log.warning("%s", text)
        return Notice(text, about_fallback)

    def _tell(self, text: Message, *, about_fallback: bool = False) -> None:
        """Keep a notice in the outcome, once: with the fallback's details, or with the others."""
        if about_fallback:
            if text not in self.outcome.fallback_notes:
                self._set(fallback_notes=(*self.outcome.fallback_notes, text))
        elif text not in self.outcome.notices:
            self._set(notices=(*self.outcome.notices, text))


def not_started(spec: LaunchSpec, cause: crash.Cause) -> EngineOutcome:
    """The outcome of a launch that could not even be handed to a driver (a build of
    Draftwise without one): failed, for `cause`."""
    flow = LaunchFlow(spec)
    flow.refused(cause)
    return flow.outcome
