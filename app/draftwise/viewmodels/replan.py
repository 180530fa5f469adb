"""Re-planning: the chain from the window's inputs to the command Launch would run.

Every change (model, speculation, context, KV type, engine, port, machine...) re-runs
`replan` on the pool, on the next turn of the event loop (bursts coalesce); only the answer
to the newest inputs is used ("latest request wins", `viewmodels.latest`). The answer
feeds the speculation and plan view-models and holds the command Launch would run.
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import Backend, EngineKind, MtpMode, WorkerUse
from draftwise.core.launch import prepare, session
from draftwise.core.launch.ladder import Concessions
from draftwise.core.machine import hardware
from draftwise.core.messages import Text
from draftwise.core.readable import command_line
from draftwise.core.speculation import decision_types, draft_check, resolver
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels.engine import EngineChoice
from draftwise.viewmodels.i18n import tr, tr_error
from draftwise.viewmodels.latest import Latest
from draftwise.viewmodels.plan import PlanView, PlanViewModel, make_plan, prefs_for, view_of
from draftwise.viewmodels.speculation import SpeculationViewModel

log = logging.getLogger(__name__)

# ------------------------------------------------------------------ the re-plan job
@dataclass(frozen=True)
class Inputs:
    generation: int
    model: gguf.ModelInfo
    mtp: MtpMode
    draft: str
    extra_args: tuple[str, ...]
    engine: EngineChoice | None
    caps: EngineCaps
    context: int | None
    kv_type: str | None
    machine: hardware.Machine
    port: int
    network: bool = False
    use_workers: WorkerUse = WorkerUse.AUTO
    log_prompts: bool = False  # the user's consent to keep prompts: Launch's engine logs them


@dataclass(frozen=True)
class Outcome:
    generation: int
    check: decision_types.DraftVerdict | None  # the resolver's draft check (None: the field is empty)
    decision: resolver.SpecDecision | None
    error: FieldError | None
    plan: PlanView | None
    plan_error: str | None
    launch_decision: resolver.SpecDecision  # what Launch runs (the planner may drop a drafter)
    argv: tuple[str, ...]  # the command Launch would run (core's one builder; key in the env)
    prepared: prepare.Prepared | None = None  # what Launch turns into a LaunchSpec
    request: prepare.Request | None = None  # the user's request, before a remembered ladder rung
    start: Concessions = Concessions()  # the rung remembered after running out of memory (docs/ladder.md)
    start_problem: Text | None = None  # a record could not be read (shown in the banner)
    planned: session.PlannedLaunch | None = None  # the session's answer: spec and ladder for Launch
    # The records this outcome was planned from: the one set the window's measurement, the
    # ladder and the forget actions use until the next re-plan (None: not planned yet).
    records: session.Records | None = None


def records_of(out: Outcome | None) -> session.Records:
    """The records of the outcome shown (`Outcome.records`), or the user's before the first
    plan (core/launch/session.py `Records.load` makes every store)."""
    if out is not None and out.records is not None:
        return out.records
    return session.Records.load()


def replan(inp: Inputs) -> Outcome:
    """Resolve speculation, plan memory, build the command: the launch session
    (core/launch/session.py) the CLI uses too, with the remembered fixes, rung, broken drafters
    and measurements. A user error (bad draft, bad extra arguments) still gets a plan without
    speculation, so the memory bars stay meaningful while the user fixes the field."""
    model = inp.model
    decision: resolver.SpecDecision | None = None
    error: FieldError | None = None
    plan: PlanView | None = None
    plan_error = None
    launch_decision = resolver.NO_SPECULATION
    planned: session.PlannedLaunch | None = None
    request = request_of(inp)
    start: Concessions = Concessions()
    argv: tuple[str, ...] = ()
    records = session.Records.load(inp.machine) if inp.machine is not None else session.Records.none()
    try:
        planned = session.plan_launch(request, engine_of(inp), inp.machine, records, model=model)
        prepared = planned.prepared
        request, start = planned.request, planned.start
        decision, launch_decision, plan = prepared.chosen, prepared.spec, view_of(prepared.plan)
        argv = tuple(planned.spec(log_prompts=inp.log_prompts).argv)
    except FieldError as exc:
        error = exc
        planned = None
    except (OSError, ValueError) as exc:
        log.exception("planning failed")
        plan_error = tr("Could not plan memory: {0}").format(exc)
    check = _draft_check(request, decision, error, model, inp.caps)
    if plan is None and plan_error is None:
        try:
            plan = make_plan(model, resolver.NO_SPECULATION, inp.machine, inp.context, inp.kv_type)
        except (OSError, ValueError) as exc:
            plan_error = tr("Could not plan memory: {0}").format(exc)
    problems = records.problems()
    return Outcome(inp.generation, check, decision, error, plan, plan_error, launch_decision, argv,
                   planned.prepared if planned is not None else None, request, start,
                   problems[0] if problems else None, planned, records)


def _draft_check(request: prepare.Request, decision: resolver.SpecDecision | None, error: FieldError | None,
                 model: gguf.ModelInfo, caps: EngineCaps) -> decision_types.DraftVerdict | None:
    """The resolver's verdict on the Draft model field, as the launch session's resolve gave
    it; only when another field's error stopped the plan before the draft was looked at is
    the same check asked for itself (the header comes from the reader's cache)."""
    if request.draft is None:
        return None
    if decision is not None and decision.draft_check is not None:
        return decision.draft_check
    if error is not None and getattr(error, "draft", None) is not None:
        return error.draft  # type: ignore[attr-defined]
    return draft_check.check_draft(model, request.draft, caps)


def engine_of(inp: Inputs) -> session.Engine:
    """The session's engine for the window's choice (a bare `llama-server` before one is found)."""
    engine = inp.engine
    if engine is None:
        return session.Engine(Path("llama-server"), inp.caps)
    return session.Engine(Path(engine.binary), inp.caps, engine.backend or Backend.CPU)


def request_of(inp: Inputs) -> prepare.Request:
    """The window's settings as core's launch request (the same one `draftwise plan` builds);
    the session adds what was remembered."""
    draft = Path(inp.draft.strip()).expanduser() if inp.draft.strip() else None
    return prepare.Request(
        model=inp.model.path, mtp=inp.mtp, draft=draft,
        backend=inp.engine.kind if inp.engine is not None else EngineKind.LLAMA_CPP,
        extra_args=tuple(inp.extra_args), prefs=prefs_for(inp.context, inp.kv_type),
        port=inp.port, network=inp.network, use_workers=inp.use_workers,
    )


# ------------------------------------------------------------------ the view-model
class Replanner(QObject):
    """Runs `replan` for the newest inputs and hands the answer to the speculation and plan
    view-models. `inputs(generation)` gives the inputs now (None while the model or the
    machine is not known yet); `has_model()` says whether there is anything to plan."""

    outcome_changed = Signal()  # decision, plan and command are up to date (or failed)

    DELAY_MS = 0  # re-plan on the next turn of the event loop (coalesces bursts)

    def __init__(
        self,
        runner: TaskRunner,
        speculation: SpeculationViewModel,
        plan: PlanViewModel,
        inputs: Callable[[int], Inputs | None],
        has_model: Callable[[], bool],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.speculation = speculation
        self.plan = plan
        self.outcome: Outcome | None = None
        self._inputs = inputs
        self._has_model = has_model
        self._latest = Latest()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.DELAY_MS)
        self._timer.timeout.connect(self._run)

    @property
    def replanning(self) -> bool:
        """A re-plan is scheduled or running and its answer has not arrived yet."""
        return self._timer.isActive() or (
            self._has_model() and (self.outcome is None or self.outcome.generation != self._latest.current)
        )

    def schedule(self) -> None:
        """Re-plan soon; answers to the inputs before this call are dropped."""
        self._latest.new()
        self.speculation.pending = True
        self.plan.planning = True
        self._timer.start()

    def clear(self) -> None:
        """Another model: the last answer no longer applies."""
        self.outcome = None

    def command_text(self) -> str:
        """The engine command Launch would run (the API key is not in it: it goes by env)."""
        if self.outcome is None:
            return ""
        return command_line(self.outcome.argv)

    def _run(self) -> None:
        gen = self._latest.current
        inputs = self._inputs(gen)
        if inputs is None:
            return  # the app re-plans once the model and the machine are known
        self.runner.submit(replan, inputs, on_done=self._latest.deliver(self._on_outcome, gen),
                           on_error=self._latest.deliver(self._on_failed, gen), name="replan")

    def _on_outcome(self, out: Outcome) -> None:
        self.outcome = out
        dropped = out.plan is not None and out.plan.drop_drafter and out.decision is not None
        # A speed measurement had its say too (drafter left out, or the tuned draft length).
        dropped = dropped or (out.prepared is not None and out.prepared.measurement is not None)
        # When the plan left the drafter out, show what will run (and why) rather than what
        # the resolver picked.
        self.speculation.set_measurement(out.prepared.measurement if out.prepared is not None else None)
        self.speculation.set_result(out.check, out.launch_decision if dropped else out.decision, out.error)
        self.plan.set_result(out.plan, out.plan_error)
        self.outcome_changed.emit()

    def _on_failed(self, exc: BaseException) -> None:
        log.error("re-plan failed: %s", exc)
        self.outcome = None
        self.speculation.set_measurement(None)
        self.plan.set_result(None, tr("Could not plan: {0}").format(tr_error(exc)))
        self.speculation.set_result(None, None, resolver.ResolveError("model", getattr(exc, "message", None) or str(exc)))
        self.outcome_changed.emit()


def split_args(text: str) -> tuple[tuple[str, ...], str | None]:
    """Extra engine arguments as typed; (tokens, error in words)."""
    try:
        return tuple(shlex.split(text, posix=sys.platform != "win32")), None
    except ValueError as exc:
        return (), tr("The extra arguments cannot be read: {0}.").format(exc)
