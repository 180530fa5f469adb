"""The window's brain: one view-model that owns the others and wires them together.

pick a model → read its header (pool thread) → resolve speculation and plan memory
(`viewmodels.replan`: pool thread, re-run at once on every change, the newest answer wins)
→ the command that Launch would run → Launch builds a LaunchSpec and hands it to the
engine process. Settings (folders, last model, per-model overrides, language...) are
loaded here and saved shortly after each change; profiles are `viewmodels.profiles`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from draftwise.core import settings as settings_mod
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import EngineKind, WorkerUse
from draftwise.core.launch import launch_spec
from draftwise.core.launch.outcome import IDLE, LOADING, READY, RUNNING, STARTING
from draftwise.core.machine import hardware
from draftwise.core.messages import Text
from draftwise.core.processes import orphans
from draftwise.core.readable import command_line
from draftwise.core.records import write_error
from draftwise.core.rpc import workers as workers_mod
from draftwise.core.settings import LoadResult, Settings
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels import launch_gate
from draftwise.viewmodels.chat import ChatViewModel
from draftwise.viewmodels.devices import DevicesViewModel
from draftwise.viewmodels.drafting import DraftingViewModel
from draftwise.viewmodels.engine import EngineViewModel
from draftwise.viewmodels.i18n import LanguageManager, tr, tr_error, tr_message
from draftwise.viewmodels.ladder import LadderActions, ladder_for
from draftwise.viewmodels.latest import Latest
from draftwise.viewmodels.launch import EngineFactory, LaunchViewModel
from draftwise.viewmodels.library import LibraryViewModel
from draftwise.viewmodels.logs import LogsViewModel
from draftwise.viewmodels.machine_check import MachineCheckViewModel
from draftwise.viewmodels.model_details import ModelDetailsViewModel
from draftwise.viewmodels.plan import KV_TYPES, PlanViewModel, kv_types_for, probe_machine
from draftwise.viewmodels.profiles import ProfilesViewModel
from draftwise.viewmodels.replan import Inputs, Outcome, Replanner, records_of, split_args
from draftwise.viewmodels.serve import ServeViewModel
from draftwise.viewmodels.speculation import SpeculationViewModel
from draftwise.viewmodels.switch import ModelSwitch
from draftwise.viewmodels.worker_loss import WorkerLoss
from draftwise.viewmodels.workers import WorkersViewModel

log = logging.getLogger(__name__)


# ------------------------------------------------------------------ the app
class AppViewModel(LadderActions, QObject):
    model_changed = Signal()  # another model was chosen
    outcome_changed = Signal()  # decision, plan and command are up to date (or failed)
    launch_state_changed = Signal()  # can Launch/Stop now, and why not
    settings_problem = Signal(str)
    banner_changed = Signal()
    message = Signal(str)  # a passing note for the status bar
    retranslated = Signal()
    extra_args_changed = Signal()
    machine_known = Signal()

    SAVE_DELAY_MS = 400

    def __init__(
        self,
        loaded: LoadResult | None = None,
        *,
        persist: bool = True,
        engine_factory: EngineFactory | None = None,
        language: LanguageManager | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        loaded = loaded or settings_mod.load()
        self.settings: Settings = loaded.settings
        self.settings_path = loaded.path
        self.settings_problem_text = loaded.problem
        self.persist = persist
        self.runner = TaskRunner(parent=self)
        self.library = LibraryViewModel(self.runner, self)
        self.details = ModelDetailsViewModel(self)
        self.speculation = SpeculationViewModel(self)
        self.engine = EngineViewModel(self.runner, self)
        self.plan = PlanViewModel(self)
        self.launch = LaunchViewModel(engine_factory, self)
        self.logs = LogsViewModel(parent=self)
        self.check = MachineCheckViewModel(self.runner, self)
        self.chat = ChatViewModel(self.launch, self.settings, parent=self)
        self.chat.settings_changed.connect(self.schedule_save)
        self.chat.keep_prompts_changed.connect(self.schedule_replan)  # the command's --log-prompts-dir
        # The chat pane's hints name the chosen model, and say when it only continues text.
        self.model_changed.connect(lambda: self.chat.set_chosen(
            self.details.title() if self.model is not None else "",
            self.model is not None and not self.model.has_chat_template))
        self.drafting = DraftingViewModel(self)
        self.devices = DevicesViewModel(self.settings, self)
        self.language = language or LanguageManager(parent=self)
        # Other computers / share this computer (docs/rpc.md); asked once the machine is known.
        self.workers = WorkersViewModel.from_settings(self.settings, lambda: self.engine.selected, self)
        self.workers.changed.connect(self.schedule_replan)
        self.machine: hardware.Machine | None = None
        self.model: gguf.ModelInfo | None = None
        self.model_path: Path | None = None
        self.extra_args_text = ""
        self.extra_args: tuple[str, ...] = ()
        self.extra_args_error: str | None = None
        self.launch_error: str | None = None
        self._model_reads = Latest()  # only the newest chosen model's header is used
        self._machine_probes = Latest()  # only the newest probe (or set_machine) counts
        self.replanner = Replanner(self.runner, self.speculation, self.plan, self._replan_inputs,
                                   lambda: self.model is not None, self)
        self.profiles = ProfilesViewModel(
            self.settings, self.speculation, self.plan, model_path=lambda: self.model_path,
            extra_args=lambda: (self.extra_args, self.extra_args_error),
            set_extra_args_text=lambda text: self._set_extra_args_text(text, replan=False),
            replan=self.schedule_replan, save=self.schedule_save, parent=self)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(self.SAVE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_settings)

        self.library.set_sources(self.settings.model_folders, self.settings.model_files)
        self.engine.preferred_binary = self.settings.engine_binary
        self.check.configured_engine = self.settings.engine_binary
        self.speculation.inputs_changed.connect(self._on_inputs_changed)
        self.plan.inputs_changed.connect(self._on_inputs_changed)
        self.engine.selection_changed.connect(self._on_engine_changed)
        self.engine.changed.connect(self.launch_state_changed)
        self.library.folders_changed.connect(self._on_folders_changed)
        self.launch.log_lines.connect(self.logs.append)
        self.launch.log_lines.connect(self.plan.feed_log)
        self.launch.attempt_started.connect(self.plan.new_attempt)  # each start's buffers, its own plan
        self.launch.changed.connect(self.launch_state_changed)
        self.launch.changed.connect(lambda: self.speculation.set_fell_back_in_this_run(
            self.launch.running and bool(self.launch.fallback_reason)))
        self.switcher = ModelSwitch(self)
        self.worker_loss = WorkerLoss(self)  # a worker gone mid-run: named, and launched again without it
        # Ready after a fallback: the drafter is now on the broken record, so re-plan and the
        # shown command and the next Launch leave it out instead of crashing the same way.
        self.launch.became_ready.connect(
            lambda _url: self.schedule_replan() if self.launch.fallback_reason or self.launch.ladder_reason else None)
        self.replanner.outcome_changed.connect(self._show_record_problem)
        self.replanner.outcome_changed.connect(self.outcome_changed)
        # A measurement recorded or forgotten re-plans: the library's measured speed-ups follow.
        self.replanner.outcome_changed.connect(self.library.model.refresh_speedups)
        self.replanner.outcome_changed.connect(self.launch_state_changed)
        self.language.language_changed.connect(self._on_language_changed)
        self.devices.changed.connect(self._on_devices_changed)
        # "Serve my models": the library through one address, beside Launch (its own engine).
        self.serve = ServeViewModel(self, parent=self)

    # ---------------------------------------------------------------- start-up
    def start(self, *, detect_engines: bool = True, probe: bool = True, scan: bool = True,
              reopen_last: bool = True, stop_orphans: bool = True) -> None:
        """Kick off the background work of a fresh window."""
        if self.settings_problem_text:
            self.settings_problem.emit(tr_message(self.settings_problem_text))
        if stop_orphans:
            # An engine left behind by a Draftwise that crashed still holds memory and a port.
            self.runner.submit(orphans.stop_orphans,
                               on_done=self._on_orphans_stopped,
                               on_error=lambda exc: log.warning("orphan check failed: %s", exc),
                               name="stop-orphans")
        if detect_engines:
            self.engine.detect()
        if probe:
            self.probe_machine(None)
        if scan:
            self.library.rescan()
        if reopen_last and self.settings.last_model and Path(self.settings.last_model).is_file():
            self.open_model(self.settings.last_model)

    def _on_orphans_stopped(self, reports: list) -> None:
        for report in reports:
            self.message.emit(tr_message(report.message))

    def probe_machine(self, engine_binary: Path | None) -> None:
        """Ask what the machine (as this engine sees it) has, off the GUI thread."""
        self._machine_probes.new()
        self.runner.submit(probe_machine, engine_binary,
                           on_done=self._machine_probes.deliver(self._use_machine),
                           on_error=lambda exc: log.warning("machine probe failed: %s", exc),
                           name="probe-machine")

    def set_machine(self, machine: hardware.Machine) -> None:
        """Use this machine (a described one, or a test's); probes still running are ignored."""
        self._machine_probes.new()
        self._use_machine(machine)

    def _use_machine(self, machine: hardware.Machine) -> None:
        self.devices.set_probed(machine)
        self.workers.probe_once()
        self._apply_devices()

    def _apply_devices(self) -> None:
        # The plan and the launch see the chosen device and the user's limit (devices.py).
        self.machine = self.devices.machine
        self.library.set_machine(self.machine)
        self.machine_known.emit()
        self.schedule_replan()

    def _on_devices_changed(self) -> None:
        self._apply_devices()
        self.schedule_save()

    # ---------------------------------------------------------------- library
    def add_folder(self, folder: str | Path) -> bool:
        return self.library.add_folder(folder)

    def remove_folder(self, folder: str) -> None:
        self.library.remove_folder(folder)

    def _on_folders_changed(self) -> None:
        self.settings.model_folders = list(self.library.folders)
        self.settings.model_files = list(self.library.files)
        self.schedule_save()

    def open_file(self, path: str | Path) -> str | None:
        """A file from Browse…, Ctrl+O or a drop: list it and choose it. Returns an error."""
        p = Path(path).expanduser()
        if p.suffix.lower() != ".gguf":
            return tr("{0} is not a .gguf model file.").format(p.name)
        if not p.is_file():
            return tr("{0} does not exist.").format(p)
        self.library.add_file(p)
        self.open_model(p)
        return None

    def open_model(self, path: str | Path) -> None:
        p = Path(path)
        if self.model_path is not None and p == self.model_path and (self.model is not None or self.details.loading):
            return
        read = self._model_reads.new()
        self.model_path = p
        self.model = None
        self.replanner.clear()
        if not self.launch.running:
            self.launch.reset()
            self.plan.clear_actual()
        self.plan.kv_types = KV_TYPES  # until the header says which this model can use
        self.profiles.load(self.settings.overrides_for(p), max_context=0)
        self.speculation.clear_result()
        self.plan.set_result(None)
        self.details.set_loading(p)
        self.settings.last_model = str(p)
        self.schedule_save()
        self.model_changed.emit()
        self.launch_state_changed.emit()
        self.runner.submit(
            self.library.scanner.read, p,
            on_done=self._model_reads.deliver(self._on_model_read, read),
            on_error=self._model_reads.deliver(lambda exc, q=p: self._on_model_failed(q, exc), read),
            name="read-model",
        )

    def _on_model_read(self, info: gguf.ModelInfo) -> None:
        self.model = info
        self.plan.max_context = info.context_length or 0
        self.plan.set_kv_types(kv_types_for(info))
        self.details.set_info(info)
        self.model_changed.emit()
        self.schedule_replan()

    def _on_model_failed(self, path: Path, exc: BaseException) -> None:
        self.details.set_error(path, tr_error(exc))
        self.model_changed.emit()
        self.launch_state_changed.emit()

    # ---------------------------------------------------------------- inputs
    def set_extra_args_text(self, text: str) -> None:
        self._set_extra_args_text(text, replan=True)

    def _set_extra_args_text(self, text: str, *, replan: bool) -> None:
        if text == self.extra_args_text and replan:
            return
        self.extra_args_text = text
        self.extra_args, self.extra_args_error = split_args(text)
        self.extra_args_changed.emit()
        if replan:
            self._on_inputs_changed()

    def _on_engine_changed(self) -> None:
        chosen = self.engine.selected
        if chosen is not None and chosen.usable and chosen.kind == EngineKind.LLAMA_CPP:
            # What the engine itself sees (a CPU build sees no GPU): plan for that.
            self.probe_machine(chosen.binary)
            if self.machine is not None:
                self.workers.probe_once()  # saved workers asked before an engine was found
        self.settings.engine_binary = self.engine.preferred_binary
        self.check.configured_engine = self.settings.engine_binary
        self.schedule_save()
        if chosen is not None:
            self.schedule_replan()
        self.launch_state_changed.emit()

    def _on_inputs_changed(self) -> None:
        self.profiles.store()
        self._clear_finished_run()
        self.schedule_replan()

    def _clear_finished_run(self) -> None:
        """The user changed what Launch would run: a failure or fallback panel about the
        last run no longer applies."""
        if not self.launch.running and self.launch.state != IDLE:
            self.launch.reset()
            self.plan.clear_actual()

    # ---------------------------------------------------------------- broken drafters
    def retry_broken_drafters(self) -> int:
        """Forget the drafters recorded as having made this engine fail, and re-plan: the
        next Launch tries them again (falling back again if they still fail)."""
        engine = self.engine.selected
        try:
            gone = records_of(self.outcome).broken.forget(binary=engine.binary if engine is not None else None)
        except OSError as exc:
            self.message.emit(tr("Could not clear the record: {0}").format(tr_message(write_error(exc))))
            return 0
        self.schedule_replan()
        return gone

    # ---------------------------------------------------------------- settings problem
    def dismiss_settings_problem(self) -> None:
        if self.settings_problem_text:
            self.settings_problem_text = None
            self.banner_changed.emit()

    def banner_text(self) -> str:
        """The warning strip: the last run's fallback and notices, and a settings problem
        until the user dismisses it."""
        parts = [t for t in (self.launch.banner_text(), tr_message(self.settings_problem_text)) if t]
        return "\n".join(parts)

    def set_port(self, port: int) -> None:
        if 1 <= port <= 65535 and port != self.settings.port:
            self.settings.port = port
            self.schedule_save()
            self.schedule_replan()

    def set_network(self, on: bool) -> None:
        if on != self.settings.network:
            self.settings.network = on
            self.schedule_save()
            self.schedule_replan()

    # ---------------------------------------------------------------- re-plan
    @property
    def outcome(self) -> Outcome | None:
        """The newest re-plan's answer (None while there is none for this model)."""
        return self.replanner.outcome

    @property
    def replanning(self) -> bool:
        return self.replanner.replanning

    def schedule_replan(self) -> None:
        if self.model is None:
            return
        self.replanner.schedule()
        self.launch_state_changed.emit()

    def _replan_inputs(self, generation: int) -> Inputs | None:
        if self.model is None or self.machine is None:
            return None  # set_machine re-plans once the machine is known
        return Inputs(
            generation=generation, model=self.model, mtp=self.speculation.mtp, draft=self.speculation.draft,
            extra_args=self.extra_args, engine=self.engine.selected, caps=self.engine.caps(),
            context=self.plan.context, kv_type=self.plan.kv_type,
            machine=workers_mod.with_workers(self.machine, self.workers.devices()),  # other computers that answered
            port=self.settings.port, network=self.settings.network, log_prompts=self.settings.keep_prompts,
            use_workers=WorkerUse.ALWAYS if self.settings.workers_always else WorkerUse.AUTO,
        )

    def command_text(self) -> str:
        """The engine command Launch would run (the API key is not in it: it goes by env)."""
        return self.replanner.command_text()

    # ---------------------------------------------------------------- launch
    def running_model_path(self) -> Path | None:
        spec = self.launch.spec
        return spec.model_path if self.launch.running and spec is not None else None

    def launch_block_reason(self) -> str | None:
        return launch_gate.block_reason(self)

    def can_launch(self) -> bool:
        return self.launch_block_reason() is None

    def can_stop(self) -> bool:
        return self.launch.state in (STARTING, LOADING, READY)

    def do_launch(self, *, notes: Sequence[Text] = ()) -> bool:
        why = self.launch_block_reason()
        if why is not None:
            self.message.emit(why)
            return False
        out = self.outcome
        engine = self.engine.selected
        assert out is not None and engine is not None and self.model is not None
        notes: list[Text] = list(notes)
        try:
            if out.planned is None:
                raise launch_spec.LaunchError("model", tr("Planning…"))
            host = launch_spec.ALL_INTERFACES if self.settings.network else launch_spec.LOOPBACK
            port, note = launch_spec.choose_port(self.settings.port, host=host)
            if note:
                notes.append(note)
            if not self.settings.api_key:
                self.settings.api_key = launch_spec.new_api_key()
                self.schedule_save()
            # The launch session's spec: what the shown command and `draftwise plan`/`launch` run.
            # No chat template (and none given to the engine): the chat pane continues text.
            self.chat.base_model = not self.model.has_chat_template and not any(
                a.startswith("--chat-template") for a in self.extra_args)
            spec = out.planned.spec(port, self.settings.api_key, notes, log_prompts=self.settings.keep_prompts)
        except (FieldError, OSError) as exc:
            self.launch_error = tr_error(exc)
            self.message.emit(self.launch_error)
            self.launch_state_changed.emit()
            return False
        self.launch_error = None
        self.logs.clear()
        self.plan.set_launched(out.plan)
        self.logs.append([f"$ {command_line(spec.argv)}"])
        climber = ladder_for(out, spec)
        # The engine records what it learns (a broken drafter, a fix) in the stores the plan
        # was made from: the launch session's.
        self.launch.start(spec, notes, model_name=self.details.title() or self.model.path.stem,
                          wanted_port=self.settings.port, ladder=climber, records=out.planned.records)
        return True


    def do_stop(self) -> None:
        self.switcher.pending = None
        self.launch.stop()

    # ---------------------------------------------------------------- switch models
    def can_switch(self) -> bool:
        return self.switcher.can_switch()

    @property
    def switching(self) -> bool:
        return self.switcher.pending is not None

    def switch_to_chosen(self) -> bool:
        """"Stop and launch this one": stop the running engine, launch the chosen model once it exited."""
        return self.switcher.switch()

    def engine_running(self) -> bool:
        return self.launch.state in RUNNING

    # ---------------------------------------------------------------- language
    def set_language(self, code: str) -> None:
        self.settings.language = code
        self.schedule_save()
        self.language.apply(code)

    def _on_language_changed(self, lang: str) -> None:
        self.library.model.retranslate()
        for vm in (self.details, self.speculation, self.plan, self.launch, self.engine, self.check, self.library,
                   self.chat, self.serve):
            vm.changed.emit()
        self.retranslated.emit()
        self.launch_state_changed.emit()

    # ---------------------------------------------------------------- settings
    def schedule_save(self) -> None:
        if self.persist:
            self._save_timer.start()

    def save_settings(self) -> str | None:
        """Write the settings now; returns an error in words, or None."""
        if not self.persist:
            return None
        self._save_timer.stop()
        try:
            settings_mod.save(self.settings, self.settings_path)
        except OSError as exc:
            text = tr("Could not save your settings to {0}: {1}").format(self.settings_path, exc.strerror or exc)
            self.message.emit(text)
            return text
        return None

    def shutdown(self, stop_engine: bool = True) -> None:
        """Before the app quits: save, stop the engine and the shared worker, let background work end."""
        self.workers.shutdown()
        self.save_settings()
        self.drafting.shutdown()  # a measurement's engine stops too
        if stop_engine and self.engine_running():
            self.launch.stop()
        if stop_engine:
            self.serve.shutdown()
        self.library.scanner.cancel()
        self.check.cancel()
