"""Launch and status: the engine's life as the status bar tells it.

Idle → Starting… → Loading model… (elapsed time) → Ready (URL, key) → Stopped, or Failed
with a sentence and a next step. A banner says when speculation was turned off on the way
(startup fallback, the engine refusing the drafter, a vocabulary mismatch) and why.
The process itself belongs to `services.engine_process.EngineProcess`, and the engine's
state is its `EngineOutcome` (core/launch/outcome.py), written by the launch flow alone:
this view-model keeps the last one it was given, reads it, and turns it into words.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from draftwise.core.launch import crash, launch_flow
from draftwise.core.launch.ladder import Concessions, Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.outcome import (
    FAILED,
    IDLE,
    LOADING,
    NOTHING,
    READY,
    RUNNING,
    STARTED,
    STARTING,
    STOPPED,
    STOPPING,
    EngineOutcome,
    Stage,
)
from draftwise.core.launch.session import Records
from draftwise.core.messages import Text, msg
from draftwise.core.readable import human_duration
from draftwise.core.rpc import upload
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.roles import EngineProcessRole

log = logging.getLogger(__name__)

EngineFactory = Callable[[LaunchSpec, QObject], EngineProcessRole]


def default_engine_factory(spec: LaunchSpec, parent: QObject) -> EngineProcessRole:
    from draftwise.services.engine_process import EngineProcess

    # The records the launch was planned with (LaunchViewModel.start: the launch session's):
    # they make the next launch leave out a drafter that killed this one's start, and a feature
    # that crashed (flash attention for this model on this device, the AMX kernels on this
    # machine); the ladder climbs after an out-of-memory start.
    ladder = getattr(parent, "ladder", None)
    records = getattr(parent, "records", None) or Records.load(getattr(ladder, "machine", None))
    return EngineProcess(spec, broken=records.broken, fixes=records.fixes, ladder=ladder, parent=parent)


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
        # The running engine's state as its process last told it (read here, never written).
        self.outcome: EngineOutcome = NOTHING
        self.spec: LaunchSpec | None = None
        self.process: EngineProcessRole | None = None
        self.ladder: Ladder | None = None  # the out-of-memory ladder of the running launch
        self.records: Records | None = None  # the stores the launch was planned with, for its engine
        self.launch_notes: list[Text] = []
        self.wanted_port: int | None = None  # the port the user chose (the engine may get another)
        self.model_name = ""  # the running model, as the window names it
        self._clock = QElapsedTimer()
        self._tick = QTimer(self)
        self._tick.setInterval(500)
        self._tick.timeout.connect(self.changed.emit)
        self._tick.timeout.connect(self._sample_upload)
        # The weights being sent to the workers while the engine loads (core/rpc/upload.py):
        # read from the engine's connections by this side's reader, not part of the outcome,
        # which holds what the launch flow decides from the engine's lines and exits.
        self.upload: upload.UploadProgress | None = None
        self._upload_watch: upload.UploadWatch | None = None
        self._upload_reader: QObject | None = None
        self._upload_next = 0.0

    # ---------------------------------------------------------------- the outcome, read
    @property
    def state(self) -> Stage:
        return self.outcome.stage

    @property
    def cause(self) -> crash.Cause | None:
        return self.outcome.cause

    @property
    def fallback_reason(self) -> Text | None:
        return self.outcome.fallback_reason

    @property
    def fallback_cause(self) -> crash.Cause | None:
        """Why the first start failed (for "Details")."""
        return self.outcome.fallback_cause

    @property
    def fallback_notes(self) -> list[Text]:
        """What was remembered about the fallback."""
        return list(self.outcome.fallback_notes)

    @property
    def lowered(self) -> Concessions:
        """What the running start gave up (docs/ladder.md)."""
        return self.outcome.concessions

    @property
    def ladder_reason(self) -> Text | None:
        return self.outcome.ladder_reason

    @property
    def notices(self) -> list[Text]:
        return list(self.outcome.notices)

    @property
    def stalled_seconds(self) -> float | None:
        return self.outcome.stalled_seconds

    @property
    def ready_seconds(self) -> float | None:
        return self.outcome.ready_seconds

    # ---------------------------------------------------------------- commands
    @property
    def running(self) -> bool:
        return self.state in RUNNING

    def start(self, spec: LaunchSpec, notes: list[Text] | None = None, model_name: str = "",
              wanted_port: int | None = None, ladder: Ladder | None = None, records: Records | None = None) -> None:
        if self.running:
            raise RuntimeError("an engine is already running")
        self._drop_process()
        self.spec = spec
        self.ladder = ladder
        self.records = records
        self.model_name = model_name or getattr(getattr(spec, "model_path", None), "stem", "")
        self.outcome = NOTHING
        self.launch_notes = list(notes or [])
        self.wanted_port = wanted_port
        self.upload = None
        self._upload_watch = upload.UploadWatch(spec.uploads, time.monotonic()) if spec.uploads else None
        self._upload_next = 0.0
        self._clock.start()
        try:
            proc = self.factory(spec, self)
        except ImportError as exc:
            self._on_changed(launch_flow.not_started(spec, crash.Cause(
                "failed-to-start", msg("This build of Draftwise cannot start engines ({error}).", error=str(exc)),
                msg("Reinstall Draftwise."))))
            return
        self.process = proc
        proc.changed.connect(self._on_changed)
        proc.log_batch.connect(self._on_logs)
        proc.start()

    def stop(self) -> None:
        if self.process is not None and self.state in (STARTING, LOADING, READY):
            self.process.stop()  # its outcome says stopping, then stopped

    def relaunch_refused(self) -> None:
        """After a lost worker, the plan on the workers left does not fit: the engine's
        outcome says what to do (core/launch/lost_worker.py)."""
        if self.process is not None:
            self.process.relaunch_refused()

    def reset(self) -> None:
        """Back to idle after a stop or a failure (a new model was chosen)."""
        if not self.running:
            self._drop_process()
            self.launch_notes = []
            self._on_changed(NOTHING)

    def _drop_process(self) -> None:
        if self.process is not None:
            # A process that is let go says nothing more: its late outcomes would be taken for
            # the next launch's.
            try:
                self.process.changed.disconnect(self._on_changed)
            except (RuntimeError, TypeError):
                log.debug("the old engine process was not connected")
            try:
                self.process.deleteLater()
            except (AttributeError, RuntimeError):
                log.debug("the old engine process is already gone")
        self.process = None

    # ---------------------------------------------------------------- events
    def _on_changed(self, outcome: EngineOutcome) -> None:
        """The engine's new outcome: say what changed, in the order the window needs it."""
        was, self.outcome = self.outcome, outcome
        if outcome.stage != was.stage:
            if outcome.stage in STARTED:
                self._tick.start()
            else:
                self._tick.stop()
            self.state_changed.emit(outcome.stage)
        if outcome.attempt > was.attempt:
            self.attempt_started.emit(outcome.plan)
        self.changed.emit()
        if outcome.fallback_reason is not None and outcome.fallback_reason != was.fallback_reason:
            self.fell_back.emit(outcome.fallback_reason)
        if outcome.stage == READY and was.stage != READY:
            self.became_ready.emit(self.api_url())
        if outcome.ended and not was.ended:
            self.ended.emit(outcome.stage)

    def _on_logs(self, lines: list[str]) -> None:
        self.log_lines.emit(list(lines))

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
