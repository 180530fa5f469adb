""""Serve my models": every model of the library at one address, beside Launch.

Serving is `draftwise serve` in the window: the library planned model by model
(core/serving/serve_plan.py, off the GUI thread), the preset written, and the engine started
in router mode as one LaunchSpec, owned by `services.engine_process.EngineProcess` like any
launch (its outcome is the router's; Launch keeps its own engine). Once the router is ready its
`/models` list is read on a timer (services/router_models.py) and each model's state, its
speculation, its measured speed-up and its last request's figures are core/serving/
served_state.py's rows. Each model's failures follow core/serving/serve_flow.py's rules, as
`draftwise serve`'s do: this only writes the preset and asks the router to load the model
again when it says so, and shows what it says. The idle time and "Start when I log in" are the user's settings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from draftwise.core import paths
from draftwise.core.errors import FieldError
from draftwise.core.identity import path_key
from draftwise.core.kinds import Backend, EngineKind, MtpMode
from draftwise.core.launch import launch_spec, prepare
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.outcome import (
    FAILED,
    IDLE,
    NOTHING,
    READY,
    RUNNING,
    STOPPED,
    EngineOutcome,
    Stage,
)
from draftwise.core.launch.session import Engine, Records
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message
from draftwise.core.planning import planner
from draftwise.core.serving import (
    autostart,
    copy_lines,
    instances,
    library,
    serve_flow,
    serve_plan,
    served_state,
)
from draftwise.core.serving.served_state import LiveByModel, ServedRow
from draftwise.core.serving.served_usage import ServedUsage
from draftwise.viewmodels.i18n import N_, tr, tr_error, tr_message
from draftwise.viewmodels.roles import EngineProcessRole

if TYPE_CHECKING:
    from draftwise.viewmodels.app import AppViewModel

log = logging.getLogger(__name__)

RouterFactory = Callable[[LaunchSpec, QObject], EngineProcessRole]
PLANNING = "planning"  # before the router starts: the library is being planned

# The router's model states in plain words (core/serving/instances.py, served_state.WAITING).
STATE_WORDS = {
    instances.LOADED: N_("Loaded"),
    instances.LOADING: N_("Loading…"),
    instances.SLEEPING: N_("Sleeping"),
    instances.UNLOADED: N_("Not loaded"),
    instances.FAILED: N_("Failed"),
    served_state.WAITING: N_("Waiting"),
}
STATE_TIPS = {
    instances.LOADED: N_("In memory: answers at once"),
    instances.LOADING: N_("Being read into memory for a request"),
    instances.SLEEPING: N_("Idle for a while, so its memory was given back; the next request wakes it"),
    instances.UNLOADED: N_("Not in memory: it starts when a program asks for it by name"),
    instances.FAILED: N_("It could not start; the other models keep serving"),
    served_state.WAITING: N_("The engine has not listed it yet"),
}


def default_router_factory(spec: LaunchSpec, parent: QObject) -> EngineProcessRole:
    from draftwise.services.engine_process import EngineProcess

    # The router runs no model itself: no drafter to drop, no ladder of its own (each
    # instance's is in its section).
    return EngineProcess(spec, parent=parent)


@dataclass(frozen=True)
class ServeInputs:
    """What planning needs, read on the GUI thread and handed to the worker."""

    sources: tuple[Path, ...]  # the library's folders and files
    engine: Engine
    machine: Machine
    port: int
    api_key: str
    network: bool
    sleep_idle_s: int
    log_prompts: bool = False  # the user's consent to keep prompts: each instance logs them


@dataclass(frozen=True)
class ServePrepared:
    plan: serve_plan.ServePlan
    router: LaunchSpec
    preset: Path  # the router's preset file, written again when a model falls back or climbs
    speedups: dict[str, float | None]  # id -> measured speed-up


def prepare_serving(inp: ServeInputs) -> ServePrepared:
    """Plan every model and write the router's preset (a worker thread: reads every header)."""
    lib = library.collect(list(inp.sources))
    records = Records.load(inp.machine)
    request = prepare.Request(model=lib.models[0].path, mtp=MtpMode.AUTO, prefs=planner.prefs_from_options(),
                              port=inp.port, network=inp.network, api_key=inp.api_key)
    plan = serve_plan.plan_library(lib, request, inp.engine, inp.machine, records, port=inp.port,
                                   api_key=inp.api_key, log_prompts=inp.log_prompts)
    # What was logged before (a launch of one of these models, an earlier serve), taken in now.
    problem = serve_plan.ingest_prompts(plan, keep=inp.log_prompts)
    if problem is not None:
        log.info("%s", problem)
    router, preset_path = serve_plan.write_router(inp.engine.binary, plan, paths.cache_dir() / "serve", port=inp.port,
                                              api_key=inp.api_key, network=inp.network,
                                              sleep_idle_s=inp.sleep_idle_s)
    try:
        measured = records.measured.speedups() if records.measured is not None else {}
    except OSError as exc:  # an unreadable record: the rows show no speed-up
        log.info("measured speed-ups not read: %s", exc)
        measured = {}
    speedups = {m.id: measured.get(path_key(m.path)) for m in plan.models}
    return ServePrepared(plan, router, preset_path, speedups)


class ServeViewModel(QObject):
    changed = Signal()
    log_lines = Signal(list)
    message = Signal(str)  # a passing note (the login entry could not be written)

    def __init__(self, app: AppViewModel, factory: RouterFactory | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.app = app  # AppViewModel: its settings, runner, engine, machine and library
        self.factory = factory or default_router_factory
        self.outcome: EngineOutcome = NOTHING  # the router's, as its process last told it
        self.process: EngineProcessRole | None = None
        self.planning = False
        self.problem: str = ""  # why serving could not start, in words
        self.prepared: ServePrepared | None = None
        self.instances: dict[str, instances.Instance] = {}
        self.live = LiveByModel()
        self.lines = instances.ChildLines.new()  # each instance's last lines: why one failed
        self.flow: serve_flow.ServeFlow | None = None  # each model's failures and what is done about them
        self.pending_start = False  # --serve: start once the engine and the machine are known
        self._watch = None  # services.router_models.RouterModels, made when first ready
        self._plans = 0  # the newest planning's number: an older answer is dropped
        self._prompts_said = False  # a failure to keep the logged prompts, said once
        self.usage: ServedUsage | None = None  # each model's requests, for learning from use
        self._usage_said = False  # a failure to keep them, said once
        self.log_lines.connect(app.logs.append)
        self.message.connect(app.message)
        for signal in (app.machine_known, app.engine.selection_changed, app.engine.changed):
            signal.connect(self.try_pending)

    # ---------------------------------------------------------------- state
    @property
    def stage(self) -> Stage | str:
        return PLANNING if self.planning else self.outcome.stage

    @property
    def running(self) -> bool:
        """Planning or a router that has not ended: what closing the window must not drop."""
        return self.planning or self.outcome.stage in RUNNING

    @property
    def ready(self) -> bool:
        return self.outcome.stage == READY

    @property
    def url(self) -> str:
        return self.outcome.url if self.ready else ""

    @property
    def api_key(self) -> str:
        return self.prepared.router.api_key if self.prepared is not None else ""

    def block_reason(self) -> str | None:
        """Why "Serve my models" cannot start now, in words; None when it can."""
        if self.running:
            return None
        engine = self.app.engine.selected
        if engine is None or not engine.usable or engine.kind != EngineKind.LLAMA_CPP:
            return tr("Serving needs the llama.cpp engine: install it first (Engine menu).")
        if self.app.machine is None:
            return tr("Looking at this computer…")
        if not self.app.settings.model_folders and not self.app.settings.model_files:
            return tr("Add a folder of models to the library first.")
        return None

    def status_text(self) -> str:
        s = self.stage
        if s == PLANNING:
            return tr("Getting your models ready…")
        if s in (IDLE,) or s == STOPPED:
            return self.problem or tr("Not serving.")
        if s == READY:
            n = len(self.prepared.plan.models) if self.prepared is not None else 0
            return tr("Serving {0} models. Programs pick one by its name.").format(n) if n != 1 else \
                tr("Serving 1 model. Programs pick it by its name.")
        if s == FAILED:
            cause = self.outcome.cause
            return tr("Serving stopped: {0}").format(tr_message(cause.sentence)) if cause is not None else \
                tr("Serving stopped.")
        return tr("Starting the engine…")

    def rows(self) -> tuple[ServedRow, ...]:
        """One per served model while serving (none once it stopped: nothing is served)."""
        if self.prepared is None or not self.running:
            return ()
        sections = {m.id: m.section for m in self.prepared.plan.models}
        return served_state.rows(sections, self.instances if self.ready else {}, self.live, self.prepared.speedups,
                                 self.lines, self.flow)

    def notes(self) -> list[str]:
        """What planning said: files left out and why, and how many stay loaded together."""
        if self.prepared is None or not self.running:
            return []
        plan = self.prepared.plan
        out = [tr_message(x.why) for x in plan.left_out]
        out += [tr_message(w) for w in plan.budget.words]
        out += [tr_message(n) for m in plan.models for n in m.notes]
        return out

    def failures(self) -> tuple[list[str], list[str]]:
        """(why models failed, what was done about failures), in words, one sentence per model."""
        rows = self.rows()
        return ([tr_message(r.problem) for r in rows if r.problem is not None],
                [tr_message(r.done) for r in rows if r.done is not None])

    def copy_lines(self) -> tuple[copy_lines.CopyLine, ...]:
        """The ready-to-paste lines (the first served model's name in them)."""
        if not self.ready or self.prepared is None or not self.prepared.plan.models:
            return ()
        return copy_lines.copy_lines(self.url, self.api_key, self.prepared.plan.models[0].id)

    @staticmethod
    def state_text(row: ServedRow) -> str:
        return tr(STATE_WORDS.get(row.state, row.state))

    @staticmethod
    def state_tip(row: ServedRow) -> str:
        tip = tr(STATE_TIPS.get(row.state, "")) if row.state in STATE_TIPS else ""
        return "\n".join(filter(None, [tip, tr_message(row.problem) if row.problem is not None else "",
                                       tr_message(row.done) if row.done is not None else ""]))

    @staticmethod
    def speedup_text(row: ServedRow) -> str:
        return f"{row.speedup:.2f}×" if row.speedup else ""

    @staticmethod
    def live_text(row: ServedRow) -> str:
        """The last request: "42.0 tokens/s · 78 % accepted"; "" before any."""
        f = row.live
        if f.tokens_per_second is None:
            return ""
        text = tr("{0} tokens/s").format(f"{f.tokens_per_second:.1f}")
        if f.acceptance is not None:
            text += " · " + tr("{0} % of drafts accepted").format(f"{f.acceptance * 100:.0f}")
        return text

    # ---------------------------------------------------------------- start, stop
    def start(self) -> bool:
        """Plan the library and start the router; False (and `problem` says why) when it cannot."""
        reason = self.block_reason()
        if self.running:
            return False
        if reason is not None:
            self.problem = reason
            self.changed.emit()
            return False
        settings = self.app.settings
        host = launch_spec.ALL_INTERFACES if settings.network else launch_spec.LOOPBACK
        try:
            port, _note = launch_spec.choose_port(settings.port, host=host)
        except launch_spec.LaunchError as exc:
            self.problem = tr_error(exc)
            self.changed.emit()
            return False
        if not settings.api_key:
            settings.api_key = launch_spec.new_api_key()
            self.app.schedule_save()
        chosen = self.app.engine.selected
        engine = Engine(Path(chosen.binary), chosen.caps, chosen.backend or Backend.CPU)
        inp = ServeInputs(tuple(Path(p) for p in (*settings.model_folders, *settings.model_files)), engine,
                          self.app.machine, port, settings.api_key, settings.network, settings.serve_sleep_idle_s,
                          settings.keep_prompts)
        self.planning, self.problem, self.prepared = True, "", None
        self.instances, self.live, self.lines = {}, LiveByModel(), instances.ChildLines.new()
        self.flow, self.usage = None, None
        self._plans += 1
        number = self._plans
        self.changed.emit()
        self.app.runner.submit(prepare_serving, inp, name="plan-serving",
                               on_done=lambda p: self._planned(number, p),
                               on_error=lambda exc: self._plan_failed(number, exc))
        return True

    def start_when_ready(self) -> None:
        """Start as soon as the engine and the machine are known (the window's --serve)."""
        self.pending_start = True
        self.try_pending()

    def try_pending(self) -> None:
        if self.pending_start and self.block_reason() is None:
            self.pending_start = False
            self.start()

    def _planned(self, number: int, prepared: ServePrepared) -> None:
        if number != self._plans or not self.planning:
            return  # stopped (or started again) while planning
        self.planning = False
        self.prepared = prepared
        self.flow = serve_flow.ServeFlow.from_plan(prepared.plan, Path(prepared.router.binary))
        self.usage = ServedUsage.from_plan(prepared.plan)
        process = self.factory(prepared.router, self)
        self.process = process
        process.changed.connect(self._on_outcome)
        process.log_batch.connect(self._on_lines)
        process.start()
        self.changed.emit()

    def _plan_failed(self, number: int, exc: BaseException) -> None:
        if number != self._plans:
            return
        self.planning = False
        if isinstance(exc, FieldError | OSError):
            self.problem = tr_error(exc)
        else:
            log.exception("planning the library for serving failed", exc_info=exc)
            self.problem = tr("Your models could not be planned: {0}").format(exc)
        self.changed.emit()

    def stop(self) -> None:
        self.pending_start = False
        if self.planning:
            self.planning = False
            self._plans += 1  # the answer on its way is dropped
            self.changed.emit()
            return
        if self.process is not None:
            self.process.stop()

    def _on_outcome(self, outcome: EngineOutcome) -> None:
        if self.sender() is not self.process:
            return
        was_ready = self.ready
        self.outcome = outcome
        if self.ready and not was_ready:
            self._watch_models()
        if outcome.stage not in RUNNING:
            self._ingest_prompts(final=True)
            self._save_usage(final=True)
            if self._watch is not None:
                self._watch.stop()
            process, self.process = self.process, None
            if process is not None:
                process.deleteLater()
        self.changed.emit()

    def _watch_models(self) -> None:
        from draftwise.services.router_models import RouterModels

        if self._watch is None:
            self._watch = RouterModels(self)
            self._watch.answered.connect(self._on_models)
        self._watch.start(self.url, self.api_key)

    def _ingest_prompts(self, *, final: bool = False) -> None:
        """The prompts each instance logged (with consent), taken in: the newest kept per model,
        the files deleted (core/measurements/prompt_log.py); unticked, deleted unread."""
        if self.prepared is None:
            return
        problem = serve_plan.ingest_prompts(self.prepared.plan, keep=self.app.settings.keep_prompts, final=final)
        if problem is not None and not self._prompts_said:
            self._prompts_said = True
            self.message.emit(tr_message(problem))

    def _save_usage(self, *, final: bool = False) -> None:
        """The requests each model served since the last save, kept for learning from use
        (core/serving/served_usage.py)."""
        if self.usage is None:
            return
        self._usage_problem(self.usage.save(final=final))

    def _usage_problem(self, problem: Message | None) -> None:
        """A failure to keep the served requests, said once."""
        if problem is not None and not self._usage_said:
            self._usage_said = True
            self.message.emit(tr_message(problem))

    def _on_models(self, body: bytes) -> None:
        self._ingest_prompts()  # on the router's watch: every few seconds while it serves
        self._save_usage()
        now = instances.read(body)
        if now == self.instances:
            return
        self.instances = now
        self.live.set_instances(now)
        if self.flow is not None:
            self._do(self.flow.models(now))
        self.changed.emit()

    def _do(self, actions: list[serve_flow.Action]) -> None:
        """What the flow says: the preset written and the model loaded again, its sentences logged
        (the rows show them)."""
        for a in actions:
            if isinstance(a, serve_flow.Rewrite):
                self._rewrite(a)
            elif isinstance(a, serve_flow.ModelFellBack | serve_flow.ModelClimbed):
                self.log_lines.emit([f"draftwise: {a.reason}"])
                if isinstance(a, serve_flow.ModelFellBack) and self.usage is not None:
                    self._usage_problem(self.usage.fell_back(a.id))
            elif isinstance(a, serve_flow.Failed):
                self.log_lines.emit([f"draftwise: {a.problem}"])
            elif isinstance(a, serve_flow.ModelNotice):
                self.log_lines.emit([f"draftwise: {a.text}"])

    def _rewrite(self, action: serve_flow.Rewrite) -> None:
        if self.prepared is None or self._watch is None:
            return
        try:
            self.prepared.preset.write_text(action.text, encoding="utf-8")
        except OSError as exc:
            self.message.emit(tr("The engine's model list could not be written ({0}): {1}").format(
                self.prepared.preset, exc.strerror or exc))
            return
        self._watch.reload(action.load)

    def _on_lines(self, lines: list[str]) -> None:
        self.log_lines.emit(lines)
        self.lines.add(lines)
        if self.flow is not None:
            self.flow.add_lines(lines)
        if self.usage is not None:
            self.usage.lines(lines)
        if self.live.add(lines):
            self.changed.emit()

    # ---------------------------------------------------------------- the user's choices
    @property
    def sleep_minutes(self) -> int:
        """Minutes before an idle model sleeps; 0: never."""
        s = self.app.settings.serve_sleep_idle_s
        return 0 if s < 0 else max(1, round(s / 60))

    def set_sleep_minutes(self, minutes: int) -> None:
        """Takes effect at the next start (the router reads it once)."""
        seconds = -1 if minutes <= 0 else minutes * 60
        if seconds != self.app.settings.serve_sleep_idle_s:
            self.app.settings.serve_sleep_idle_s = seconds
            self.app.schedule_save()
            self.changed.emit()

    def login_entry(self) -> autostart.AutostartEntry:
        return autostart.entry(autostart.app_command())

    @property
    def at_login(self) -> bool:
        return autostart.is_enabled(self.login_entry())

    def set_at_login(self, on: bool) -> bool:
        """Write or remove the login entry; False (and a message) when it could not."""
        entry = self.login_entry()
        try:
            autostart.enable(entry) if on else autostart.disable(entry)
        except OSError as exc:
            self.message.emit(tr("Could not change the start at login ({0}): {1}").format(
                entry.path or autostart.RUN_KEY, exc.strerror or exc))
            self.changed.emit()
            return False
        self.app.settings.serve_at_login = on
        self.app.schedule_save()
        self.changed.emit()
        return True

    def shutdown(self) -> None:
        self.stop()

