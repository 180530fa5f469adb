"""Launch and status: the engine's life as the status bar tells it.

Idle → Starting… → Loading model… (elapsed time) → Ready (URL, key) → Stopped, or Failed
with a sentence and a next step. A banner says when speculation was turned off on the way
(startup fallback, the engine refusing the drafter, a vocabulary mismatch) and why.
The process itself belongs to `services.engine_process.EngineProcess`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from draftwise.core.launch import crash
from draftwise.core.launch.ladder import Concessions, Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.machine import upload
from draftwise.core.messages import Text, msg
from draftwise.core.readable import human_duration
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.roles import EngineProcessRole

IDLE, STARTING, LOADING, READY, STOPPING, STOPPED, FAILED = (
    "idle", "starting", "loading", "ready", "stopping", "stopped", "failed",
)
RUNNING = frozenset({STARTING, LOADING, READY, STOPPING})

EngineFactory = Callable[[LaunchSpec, QObject], EngineProcessRole]


def default_engine_factory(spec: LaunchSpec, parent: QObject) -> EngineProcessRole:
    from draftwise.core.launch.fixes import EngineFixes
    from draftwise.core.speculation.broken import BrokenDrafters
    from draftwise.services.engine_process import EngineProcess

    # The records make the next launch leave out a drafter that killed this one's start, and
    # a feature that crashed (flash attention for this model on this device, the AMX kernels on
    # this machine); the ladder (set by LaunchViewModel.start) climbs after an out-of-memory
    # start, and knows the machine the fixes are filed under.
    ladder = getattr(parent, "ladder", None)
    return EngineProcess(spec, broken=BrokenDrafters(), fixes=EngineFixes(machine=getattr(ladder, "machine", None)),
                         ladder=ladder, parent=parent)


class LaunchViewModel(QObject):
    changed = Signal()
    state_changed = Signal(str)
    log_lines = Signal(list)
    became_ready = Signal(str)  # the API URL
    ended = Signal(str)  # stopped | failed
    fell_back = Signal(object)  # the engine was restarted without the automatic drafter (a core Message)
    # A relaunch (fallback, feature fix, ladder rung) begins: the plan it runs (planner.Plan; None:
    # the launch's own), its buffer lines to follow. What the engine really uses is that start's.
    attempt_started = Signal(object)

    def __init__(self, factory: EngineFactory | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.factory = factory or default_engine_factory
        self.state = IDLE
        self.spec: LaunchSpec | None = None
        self.process: EngineProcessRole | None = None
        self.cause: crash.Cause | None = None
        self.fallback_reason: Text | None = None
        self.fallback_cause: crash.Cause | None = None  # why the first start failed (for "Details")
        self.fallback_notes: list[Text] = []  # what was remembered about it
        self.ladder: Ladder | None = None  # the out-of-memory ladder of the running launch
        self.lowered: Concessions = Concessions()  # what the running start gave up (docs/ladder.md)
        self.ladder_reason: Text | None = None  # the last rung's sentence
        self.notices: list[Text] = []
        self.stalled_seconds: float | None = None
        self.ready_seconds: float | None = None
        self.launch_notes: list[Text] = []
        self.wanted_port: int | None = None  # the port the user chose (the engine may get another)
        self.model_name = ""  # the running model, as the window names it
        self._clock = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(500)
        self._tick.timeout.connect(self.changed.emit)
        self._tick.timeout.connect(self._sample_upload)
        # The weights being sent to the workers while the engine loads (core/machine/upload.py).
        self.upload: upload.Progress | None = None
        self._upload_watch: upload.UploadWatch | None = None
        self._upload_reader: QObject | None = None
        self._upload_next = 0.0

    # ---------------------------------------------------------------- commands
    @property
    def running(self) -> bool:
        return self.state in RUNNING

    def start(self, spec: LaunchSpec, notes: list[Text] | None = None, model_name: str = "",
              wanted_port: int | None = None, ladder: Ladder | None = None) -> None:
        if self.running:
            raise RuntimeError("an engine is already running")
        self._drop_process()
        self.spec = spec
        self.ladder = ladder
        self.lowered = ladder.start if ladder is not None else Concessions()
        self.ladder_reason = None
        self.model_name = model_name or getattr(getattr(spec, "model_path", None), "stem", "")
        self.cause = None
        self.fallback_reason = None
        self.fallback_cause = None
        self.fallback_notes = []
        # Launch warnings that are not about speculation (those show with the decision),
        # e.g. "other computers can connect".
        self.notices = [w for w in spec.warnings if w not in spec.spec.warnings]
        self.stalled_seconds = None
        self.ready_seconds = None
        self.launch_notes = list(notes or [])
        self.wanted_port = wanted_port
        self.upload = None
        self._upload_watch = upload.UploadWatch(spec.uploads, time.monotonic()) if spec.uploads else None
        self._upload_next = 0.0
        self._clock.start()
        self._set_state(STARTING)
        self._tick.start()
        try:
            proc = self.factory(spec, self)
        except ImportError as exc:
            self._fail(crash.Cause("failed-to-start",
                                   msg("This build of Draftwise cannot start engines ({error}).", error=str(exc)),
                                   msg("Reinstall Draftwise.")))
            return
        self.process = proc
        for name, slot in (
            ("stage_changed", self._on_stage),
            ("log_batch", self._on_logs),
            ("ready", self._on_ready),
            ("crashed", self._on_crashed),
            ("fell_back", self._on_fell_back),
            ("climbed", self._on_climbed),
            ("notice", self._on_notice),
            ("fallback_note", self._on_fallback_note),
            ("stalled", self._on_stalled),
            ("attempt_started", self._on_attempt),
            ("stopped", self._on_stopped),
        ):
            sig = getattr(proc, name, None)
            if sig is not None:
                sig.connect(slot)
        proc.start()

    def stop(self) -> None:
        if self.process is not None and self.state in (STARTING, LOADING, READY):
            self._set_state(STOPPING)
            self.process.stop()

    def reset(self) -> None:
        """Back to idle after a stop or a failure (a new model was chosen)."""
        if not self.running:
            self._drop_process()
            self.cause = None
            self.fallback_reason = None
            self.fallback_cause = None
            self.fallback_notes = []
            self.notices = []
            self.launch_notes = []
            self._set_state(IDLE)

    def _drop_process(self) -> None:
        if self.process is not None:
            try:
                self.process.deleteLater()
            except (AttributeError, RuntimeError):
                pass
        self.process = None

    # ---------------------------------------------------------------- events
    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            if state not in (STARTING, LOADING):
                self._tick.stop()
            self.state_changed.emit(state)
        self.changed.emit()

    def _on_stage(self, stage: str) -> None:
        mapping = {"starting": STARTING, "loading": LOADING, "ready": READY, "stopping": STOPPING,
                   "stopped": STOPPED, "failed": FAILED}
        state = mapping.get(stage)
        if state is None or state == READY:
            return  # ready comes with its URL through _on_ready
        if state == STOPPED:
            self._on_stopped()
            return
        if state == FAILED:
            if self.state != FAILED:
                self._set_state(FAILED)
                self._tick.stop()
                self.ended.emit(FAILED)
            return
        if state in (STARTING, LOADING) and self.state in (STARTING, LOADING):
            self._set_state(state)
            self._tick.start()

    def _on_logs(self, lines: list[str]) -> None:
        self.log_lines.emit(list(lines))

    def _on_ready(self, url: str = "", *args: object) -> None:
        self.ready_seconds = self._clock.elapsed() / 1000.0
        self._set_state(READY)
        self.became_ready.emit(self.api_url())

    def _on_crashed(self, cause: object) -> None:
        self._fail(cause if isinstance(cause, crash.Cause) else crash.Cause("unknown", str(cause), tr("Look at the log for details.")))

    def _fail(self, cause: crash.Cause) -> None:
        self.cause = cause
        was = self.state
        self._set_state(FAILED)
        self._tick.stop()
        if was != FAILED:
            self.ended.emit(FAILED)

    def _on_fell_back(self, reason: Text, cause: object = None) -> None:
        self.fallback_reason = reason
        self.fallback_cause = cause if isinstance(cause, crash.Cause) else None
        if self.state not in (STARTING, LOADING):
            self._set_state(STARTING)
            self._tick.start()
        self.changed.emit()
        self.fell_back.emit(self.fallback_reason)

    def _on_climbed(self, reason: Text, concessions: object) -> None:
        self.ladder_reason = reason
        if isinstance(concessions, Concessions):
            self.lowered = concessions
        if self.state not in (STARTING, LOADING):
            self._set_state(STARTING)
            self._tick.start()
        self.changed.emit()

    def _on_attempt(self, _attempt: int) -> None:
        # A feature fix or a rung re-planned the ladder's Prepared (Ladder.with_fix, climb).
        prepared = self.ladder.prepared if self.ladder is not None else None
        self.attempt_started.emit(prepared.plan if prepared is not None else None)

    def _on_notice(self, text: Text) -> None:
        if text not in self.notices:
            self.notices.append(text)
            self.changed.emit()

    def _on_fallback_note(self, text: Text) -> None:
        if text not in self.fallback_notes:
            self.fallback_notes.append(text)
            self.changed.emit()

    def _on_stalled(self, seconds: float) -> None:
        self.stalled_seconds = float(seconds)
        self.changed.emit()

    def _sample_upload(self) -> None:
        """While the engine loads: read its connections to the workers (once a second)."""
        watch, pid = self._upload_watch, getattr(self.process, "pid", None)
        now = time.monotonic()
        if watch is None or pid is None or self.state not in (STARTING, LOADING) or now < self._upload_next:
            return
        self._upload_next = now + upload.SAMPLE_EVERY_S
        if self._upload_reader is None:
            from draftwise.services.upload_reader import UploadReader

            reader = UploadReader(self)
            reader.read.connect(self._on_upload_read)
            self._upload_reader = reader
        self._upload_reader.request(pid, watch.peers)  # type: ignore[attr-defined]

    def _on_upload_read(self, sent: object) -> None:
        watch = self._upload_watch
        if watch is None or self.state not in (STARTING, LOADING):
            return
        self.upload = watch.update(time.monotonic(), sent if isinstance(sent, dict) else None)
        self.changed.emit()

    def _on_stopped(self, *args: object) -> None:
        # The engine reports its exit twice (stage "stopped", then `stopped`): one end.
        if self.state in (FAILED, STOPPED):
            return
        self._set_state(STOPPED)
        self.ended.emit(STOPPED)

    # ---------------------------------------------------------------- texts
    def elapsed(self) -> float:
        return self._clock.elapsed() / 1000.0 if self._clock.isValid() else 0.0

    def base_url(self) -> str:
        return self.spec.url if self.spec is not None else ""

    def api_url(self) -> str:
        return f"{self.spec.url}/v1" if self.spec is not None else ""

    def api_key(self) -> str:
        return self.spec.api_key if self.spec is not None else ""

    def status_text(self) -> str:
        s = self.state
        if s == IDLE:
            return tr("Idle")
        if s == STARTING:
            return tr("Starting… {0}").format(human_duration(self.elapsed()))
        if s == LOADING:
            text = tr("Loading model… {0}").format(human_duration(self.elapsed()))
            if self.upload is not None:
                text += " — " + tr_message(self.upload.text())
            if self.stalled_seconds:
                text += " — " + tr("no progress for {0}; you can stop it.").format(human_duration(self.stalled_seconds))
            return text
        if s == READY:
            took = tr(" (started in {0})").format(human_duration(self.ready_seconds)) if self.ready_seconds else ""
            name = f" — {self.model_name}" if self.model_name else ""
            return tr("Ready") + name + took
        if s == STOPPING:
            return tr("Stopping…")
        if s == STOPPED:
            return tr("Stopped")
        if self.cause is not None:
            return tr("Failed — {0}").format(tr_message(self.cause.sentence))
        return tr("Failed")

    def failure_text(self) -> str:
        """The crash message with its next step (and the deciding log line)."""
        c = self.cause
        if c is None or self.state != FAILED:
            return ""
        text = f"{tr_message(c.sentence)}\n" + tr("Next step: {0}").format(tr_message(c.next_step))
        if c.evidence:
            text += "\n" + tr("From the log: {0}").format(c.evidence)
        return text

    def lowered_text(self) -> str:
        """What the launch gave up to fit in memory (the ladder, or a remembered rung), else ""."""
        if self.lowered.empty or self.state == IDLE:
            return ""
        text = tr("Lowered to fit in memory: {0}.").format(tr_message(self.lowered.summary()))
        if self.ladder_reason:
            text += " " + tr_message(self.ladder_reason)
        return text

    def banner_text(self) -> str:
        """Why speculation was turned off (one short sentence), and other warnings about the
        running engine; "" once it stops: they describe a run that is over."""
        if not self.running:
            return ""
        parts = [tr_message(self.fallback_reason)] if self.fallback_reason else []
        parts += [tr_message(n) for n in self.notices]
        return "\n".join(parts)

    def fallback_details(self) -> str:
        """The banner's "Details": why the first start failed, the engine's own line, and
        what was remembered. The engine's words stay here, not in the sentence."""
        if not self.running or not self.fallback_reason:
            return ""
        lines = []
        c = self.fallback_cause
        if c is not None:
            lines.append(tr("Why: {0}").format(tr_message(c.sentence)))
            if c.evidence:
                lines.append(tr("From the log: {0}").format(c.evidence))
        lines += [tr_message(n) for n in self.fallback_notes]
        return "\n".join(lines)

    def port_note(self) -> str:
        """The port move ("Port 8080 is in use; the engine listens on 8081 instead") while
        the engine runs: a client set up for the old port would talk to another program."""
        if not self.running:
            return ""
        return " ".join(tr_message(n) for n in self.launch_notes)

    def port_moved(self) -> tuple[int, int] | None:
        """(wanted, actual) when the engine listens on another port than the one chosen."""
        spec = self.spec
        if not self.running or spec is None or self.wanted_port is None or spec.port == self.wanted_port:
            return None
        return self.wanted_port, spec.port
