"""The engine as a QProcess the window can hold: start, watch, stop, never block the UI.

A thin owner in the manner of qutebrowser's guiprocess: every decision (stages, fallback,
crash causes, warnings) is core/launch/launch_flow.py's, shared with the headless CLI runner.
What lives here is the Qt side of it:

- the process group is services/owned_qprocess.py's: the port checked before each start,
  its own session, the Windows Job, the lifeline (it stops with a Draftwise that dies), the
  run file, and the stop's escalation to SIGKILL;
- output is read as it comes, kept in a bounded ring, and handed to the UI at most once
  per `batch_ms` (a widget updated per line freezes the window: docs/architecture.md,
  "Measured facts about Qt");
- readiness is asked of /health with QNetworkAccessManager on a backoff timer;
- quitting the application stops the engine (and waits for it, briefly).

What it tells: the engine's whole state, `outcome` (core/launch/outcome.py, written by the
flow alone), in one `changed` signal each time the flow replaces it; and the output lines in
`log_batch`.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque

from PySide6.QtCore import (
    QByteArray,
    QCoreApplication,
    QObject,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkProxy, QNetworkReply, QNetworkRequest

from draftwise.core.launch import crash, launch_flow
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.outcome import EngineOutcome, Stage
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.services.owned_qprocess import OwnedQProcess

log = logging.getLogger(__name__)

POLL_FIRST_MS, POLL_MAX_MS = 10, 250
HEALTH_TIMEOUT_MS = 1000


class EngineProcess(QObject):
    """One engine launch. Create, connect the signals, `start()`; `stop()` when done."""

    changed = Signal(object)  # the new EngineOutcome, whole: stage, cause, fallback, ladder, attempt, ...
    # The output is a stream, not state: at most one batch per interval, many thousand lines
    # (docs/architecture.md, "Measured facts about Qt"); an outcome carrying them would be
    # copied per batch. A relaunch's lines follow the `changed` that carries its attempt.
    log_batch = Signal(list)  # list[str]

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        broken: BrokenDrafters | None = None,
        ladder: Ladder | None = None,
        fixes: EngineFixes | None = None,
        parent: QObject | None = None,
        log_lines: int = 5000,
        batch_ms: int = 50,
        max_batch: int = 2000,
        startup_window: float = launch_flow.STARTUP_WINDOW_S,
        stall_after: float = launch_flow.STALL_AFTER_S,
        stop_timeout: float = launch_flow.KILL_AFTER_S,
        record_run: bool = True,
    ) -> None:
        super().__init__(parent)
        self.flow = launch_flow.LaunchFlow(spec, broken=broken, ladder=ladder, fixes=fixes, startup_window=startup_window,
                                           stall_after=stall_after)
        self._log: deque[str] = deque(maxlen=log_lines)
        self._pending: deque[str] = deque(maxlen=max_batch)
        self._dropped = 0  # lines that overflowed `_pending` since the last batch
        self._partial = b""
        self._proc: OwnedQProcess | None = None
        self._record_run = record_run
        self._stop_timeout_ms = int(stop_timeout * 1000)
        self.pids: list[int] = []
        self.lines_read = 0
        self._told = self.flow.outcome  # the outcome last emitted

        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(batch_ms)
        self._flush_timer.timeout.connect(self._flush)
        self._watchdog = QTimer(self)
        self._watchdog.setInterval(1000)
        self._watchdog.timeout.connect(lambda: self._do(self.flow.tick(time.monotonic())))
        self._poll_timer = QTimer(self)
        self._poll_timer.setSingleShot(True)
        self._poll_timer.timeout.connect(self._poll_health)
        self._poll_delay = POLL_FIRST_MS
        self._reply: QNetworkReply | None = None
        self._poll_again = False  # the engine said it is ready while an answer was on its way
        # Made at the first health check, after the engine was started: nothing but the
        # start itself stands between Launch and the engine's exec (bench/launch.py).
        self._net: QNetworkAccessManager | None = None

        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------ properties for view-models
    @property
    def spec(self) -> LaunchSpec:
        """The running start's spec (a ladder rung replaces the first one)."""
        return self.flow.spec

    @property
    def outcome(self) -> EngineOutcome:
        """The engine's whole state (read only; the launch flow writes it)."""
        return self.flow.outcome

    @property
    def stage(self) -> Stage:
        return self.flow.stage

    @property
    def url(self) -> str:
        return self.outcome.url if self.flow.is_ready else ""

    @property
    def api_key(self) -> str:
        return self.spec.api_key

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.running

    @property
    def pid(self) -> int | None:
        return self.pids[-1] if self.pids and self.running else None

    def log_lines(self) -> list[str]:
        """The last lines of output (bounded), for a log view opened later."""
        return list(self._log)

    # ------------------------------------------------------------ control
    def start(self) -> None:
        self._flush_timer.start()
        self._watchdog.start()
        self._do(self.flow.start(time.monotonic()))

    def stop(self) -> None:
        """Terminate the group, kill it after the timeout; a `changed` to stopped follows."""
        self._do(self.flow.stop())

    def relaunch_refused(self) -> None:
        """After a lost worker: the plan on the workers left does not fit (core/launch/lost_worker.py)."""
        self._do(self.flow.relaunch_refused())

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop and wait (the application is quitting: there is no later)."""
        if self.flow.ended:
            return
        self._do(self.flow.stop())
        if self._proc is not None:
            self._proc.shutdown(timeout_ms)

    # ------------------------------------------------------------ actions
    def _do(self, actions: list[launch_flow.Action]) -> None:
        for action in actions:
            if isinstance(action, launch_flow.Spawn):
                self._spawn(action.argv, action.attempt)
            elif isinstance(action, launch_flow.Ready):
                self._poll_timer.stop()
            elif isinstance(action, launch_flow.Crashed):
                self._finish_timers()
            elif isinstance(action, launch_flow.PollHealth):
                if self._reply is None:
                    self._poll_timer.start(0)
                else:
                    # The answer on its way was asked for before this line: ask again the
                    # moment it is in, not after the back-off (up to POLL_MAX_MS).
                    self._poll_again = True
            elif isinstance(action, launch_flow.Terminate):
                self._poll_timer.stop()
                if self._proc is not None:
                    self._proc.stop()
            elif isinstance(action, launch_flow.Stopped):
                self._finish_timers()
        self._tell()

    def _tell(self) -> None:
        """Emit the outcome when the flow replaced it (it is frozen: a new one is a change)."""
        if self.flow.outcome is not self._told:
            self._told = self.flow.outcome
            self.changed.emit(self._told)

    def _spawn(self, argv: tuple[str, ...], attempt: int = 0) -> None:
        if attempt:
            # The lines so far were the previous start's: hand them over, then say that a new
            # start begins, before it can print: a reader never mixes two starts' lines.
            self._flush()
            self._tell()
        proc = OwnedQProcess(stop_timeout_ms=self._stop_timeout_ms, record_run=self._record_run, parent=self)
        proc.output.connect(self._read)
        proc.started.connect(self._started)
        proc.exited.connect(self._exited)
        proc.failed_to_start.connect(self._failed_to_start)
        proc.port_busy.connect(self._port_busy)
        self._proc = proc
        self._partial = b""
        self._poll_delay = POLL_FIRST_MS
        self._poll_again = False
        # The whole environment from core (the engine's option variables left out), not the
        # system's plus additions: nothing outside the argv may change what runs.
        proc.start(argv, self.spec.environment(os.environ), binary=self.spec.binary, host=self.spec.host,
                   port=self.spec.port)

    def _finish_timers(self) -> None:
        for timer in (self._poll_timer, self._watchdog):
            timer.stop()
        self._flush()
        self._flush_timer.stop()

    # ------------------------------------------------------------ process events
    def _current(self) -> OwnedQProcess | None:
        """The group that sent this signal, if it is the running start's (not an old one's)."""
        proc = self.sender()
        return proc if isinstance(proc, OwnedQProcess) and proc is self._proc else None

    def _started(self, pid: int) -> None:
        if self._current() is None:
            return
        self.pids.append(pid)
        self.flow.spawned(time.monotonic())
        if self.flow.polling:
            self._poll_timer.start(0)

    def _read(self, chunk: bytes) -> None:
        if self._current() is None:
            return
        data = self._partial + chunk
        cut = data.rfind(b"\n")
        if cut < 0:
            self._partial = data
            return
        self._partial = data[cut + 1:]
        self._take(data[:cut].replace(b"\r\n", b"\n").decode("utf-8", "replace").split("\n"))

    def _take(self, lines: list[str]) -> None:
        self.lines_read += len(lines)
        self._log.extend(lines)
        overflow = len(self._pending) + len(lines) - (self._pending.maxlen or 0)
        if overflow > 0:
            self._dropped += overflow
        self._pending.extend(lines)
        self._do(self.flow.output(lines, time.monotonic()))

    def _flush(self) -> None:
        if not self._pending:
            return
        batch = list(self._pending)
        self._pending.clear()
        if self._dropped:
            batch.insert(0, f"[{self._dropped} lines not shown here; the full tail is in the log]")
            self._dropped = 0
        self.log_batch.emit(batch)

    def _exited(self, status: crash.ExitStatus) -> None:
        proc = self._current()
        if proc is None:
            return
        if self._partial:
            self._take([self._partial.decode("utf-8", "replace")])
            self._partial = b""
        self._proc = None
        proc.deleteLater()
        self._do(self.flow.exited(status, time.monotonic()))

    def _failed_to_start(self, reason: str) -> None:
        proc = self._current()
        if proc is None:
            return
        self._proc = None
        proc.deleteLater()
        self._do(self.flow.spawn_failed(reason, time.monotonic()))

    def _port_busy(self, _port: int) -> None:
        proc = self._current()
        if proc is None:
            return
        self._proc = None
        proc.deleteLater()
        self._do(self.flow.port_taken(time.monotonic()))

    # ------------------------------------------------------------ readiness
    def _poll_health(self) -> None:
        if not self.flow.polling or self._reply is not None or not self.running:
            return
        request = QNetworkRequest(QUrl(self.spec.url + self.spec.health_path))
        request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {self.spec.api_key}".encode()))
        request.setTransferTimeout(HEALTH_TIMEOUT_MS)
        self._poll_again = False
        if self._net is None:
            self._net = QNetworkAccessManager(self)
            # Never send loopback health checks through a proxy from the environment.
            self._net.setProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))
        self._reply = self._net.get(request)
        self._reply.finished.connect(self._health_answered)

    def _health_answered(self) -> None:
        reply = self._reply
        self._reply = None
        if reply is None:
            return
        code = reply.attribute(QNetworkRequest.Attribute.HttpStatusCodeAttribute)
        reply.deleteLater()
        status = int(code) if code is not None else None
        self._do(self.flow.health(status, time.monotonic()))
        if self.flow.polling and self.running:
            if self._poll_again:
                self._poll_timer.start(0)
                return
            self._poll_delay = min(int(self._poll_delay * 1.5) + 1, POLL_MAX_MS)
            self._poll_timer.start(self._poll_delay)
