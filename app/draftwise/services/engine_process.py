"""The engine as a QProcess the window can hold: start, watch, stop, never block the UI.

A thin owner in the manner of qutebrowser's guiprocess: every decision (stages, fallback,
crash causes, warnings) is core/launch/launch_flow.py's, shared with the headless CLI runner.
What lives here is the Qt side of it:

- the process leads its own session (Unix: CreateNewSession) so a stop signals the whole
  group; on Windows a kill-on-close Job Object holds the tree;
- output is read as it comes, kept in a bounded ring, and handed to the UI at most once
  per `batch_ms` (a widget updated per line freezes the window: docs/architecture.md,
  "Measured facts about Qt");
- readiness is asked of /health with QNetworkAccessManager on a backoff timer;
- quitting the application stops the engine (and waits for it, briefly).
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections import deque

from PySide6.QtCore import (
    Property,
    QByteArray,
    QCoreApplication,
    QObject,
    QProcess,
    QProcessEnvironment,
    QTimer,
    QUrl,
    Signal,
)
from PySide6.QtNetwork import QNetworkAccessManager, QNetworkProxy, QNetworkReply, QNetworkRequest

from draftwise.core.launch import crash, headless, launch_flow, orphans
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.messages import Message
from draftwise.core.speculation.broken import BrokenDrafters

log = logging.getLogger(__name__)

POLL_FIRST_MS, POLL_MAX_MS = 10, 250
HEALTH_TIMEOUT_MS = 1000


class EngineProcess(QObject):
    """One engine launch. Create, connect the signals, `start()`; `stop()` when done."""

    stage_changed = Signal(str)
    log_batch = Signal(list)  # list[str], at most one per batch interval
    ready = Signal(str)  # the base URL
    crashed = Signal(object)  # crash.Cause
    fell_back = Signal(object, object)  # why speculation was dropped (a core Message), the crash.Cause
    fallback_note = Signal(object)  # more about this run's fallback (a core Message): for its details
    climbed = Signal(object, object)  # out of memory: the ladder's sentence (Message) and Concessions
    notice = Signal(object)  # running, but the user should know (a core Message: speculation off, GPU unused)
    stalled = Signal(float)  # seconds without output and not ready: offer to stop
    stopped = Signal()

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
        self._proc: QProcess | None = None
        self._job: headless.WindowsJob | None = None
        self._run_file = None
        self._record_run = record_run
        self._stop_timeout_ms = int(stop_timeout * 1000)
        self.pids: list[int] = []
        self.lines_read = 0

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
        self._net = QNetworkAccessManager(self)
        # Never send loopback health checks through a proxy from the environment.
        self._net.setProxy(QNetworkProxy(QNetworkProxy.ProxyType.NoProxy))
        self._term_again = QTimer(self)
        self._term_again.setSingleShot(True)
        self._term_again.timeout.connect(lambda: self._signal(signal.SIGTERM))
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(lambda: self._signal(getattr(signal, "SIGKILL", signal.SIGTERM)))

        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    # ------------------------------------------------------------ properties for view-models
    @property
    def spec(self) -> LaunchSpec:
        """The running start's spec (a ladder rung replaces the first one)."""
        return self.flow.spec

    def _get_stage(self) -> str:
        return self.flow.stage

    def _get_url(self) -> str:
        return self.spec.url if self.flow.is_ready else ""

    stage = Property(str, _get_stage, notify=stage_changed)
    url = Property(str, _get_url, notify=ready)

    @property
    def api_key(self) -> str:
        return self.spec.api_key

    @property
    def cause(self) -> crash.Cause | None:
        return self.flow.cause

    @property
    def fallback_reason(self) -> Message | None:
        return self.flow.fallback_reason

    @property
    def notices(self) -> list[Message]:
        return list(self.flow.notices)

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

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
        """Terminate the group, kill it after the timeout; `stopped` follows."""
        self._do(self.flow.stop())

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop and wait (the application is quitting: there is no later)."""
        if self.flow.ended:
            return
        self.stop()
        proc = self._proc
        if proc is not None and not proc.waitForFinished(min(timeout_ms, int(launch_flow.TERM_AGAIN_S * 1000))):
            self._signal(signal.SIGTERM)
            if not proc.waitForFinished(timeout_ms):
                self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))
                proc.waitForFinished(timeout_ms)

    # ------------------------------------------------------------ actions
    def _do(self, actions: list[launch_flow.Action]) -> None:
        for action in actions:
            if isinstance(action, launch_flow.Spawn):
                self._spawn(action.argv)
            elif isinstance(action, launch_flow.StageChanged):
                self.stage_changed.emit(action.stage)
            elif isinstance(action, launch_flow.Ready):
                self._poll_timer.stop()
                self.ready.emit(action.url)
            elif isinstance(action, launch_flow.FellBack):
                self.fell_back.emit(action.reason, action.cause)
            elif isinstance(action, launch_flow.Climbed):
                self.climbed.emit(action.reason, action.concessions)
            elif isinstance(action, launch_flow.Crashed):
                self._finish_timers()
                self.crashed.emit(action.cause)
            elif isinstance(action, launch_flow.Notice):
                (self.fallback_note if action.about_fallback else self.notice).emit(action.text)
            elif isinstance(action, launch_flow.GpuChecked) and action.verdict.used:
                # "18 of 18 layers on Vulkan0 (llvmpipe)": shown beside the other notices.
                self.notice.emit(action.verdict.message)
            elif isinstance(action, launch_flow.Stalled):
                self.stalled.emit(action.seconds)
            elif isinstance(action, launch_flow.PollHealth):
                if self._reply is None:
                    self._poll_timer.start(0)
            elif isinstance(action, launch_flow.Terminate):
                self._poll_timer.stop()
                self._signal(signal.SIGTERM)
                self._term_again.start(int(launch_flow.TERM_AGAIN_S * 1000))
                self._kill_timer.start(self._stop_timeout_ms)
            elif isinstance(action, launch_flow.Stopped):
                self._finish_timers()
                self.stopped.emit()

    def _spawn(self, argv: tuple[str, ...]) -> None:
        proc = QProcess(self)
        proc.setProgram(argv[0])
        proc.setArguments(list(argv[1:]))
        # The whole environment from core (the engine's option variables left out), not the
        # system's plus additions: nothing outside the argv may change what runs.
        env = QProcessEnvironment()
        for key, value in headless.engine_environment(self.spec).items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.setStandardInputFile(QProcess.nullDevice())
        if sys.platform != "win32":
            flags = QProcess.UnixProcessFlag
            # Own session: a stop signals the whole group. Default signal handlers: Python
            # ignores SIGPIPE, and an ignored signal would stay ignored in the engine.
            proc.setUnixProcessParameters(flags.CreateNewSession | flags.ResetSignalHandlers)
        proc.readyReadStandardOutput.connect(self._read)
        proc.started.connect(self._started)
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._error)
        self._proc = proc
        self._partial = b""
        self._poll_delay = POLL_FIRST_MS
        proc.start()

    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is None or proc.state() == QProcess.ProcessState.NotRunning:
            return
        pid = int(proc.processId())
        if sys.platform == "win32" or pid <= 0:
            # Windows: see headless.signal_group, llama-server ignores anything softer.
            # No pid yet (still starting): only QProcess can end it.
            proc.kill()
            return
        headless.signal_group(pid, sig)

    def _finish_timers(self) -> None:
        for timer in (self._poll_timer, self._term_again, self._kill_timer, self._watchdog):
            timer.stop()
        self._flush()
        self._flush_timer.stop()

    # ------------------------------------------------------------ process events
    def _started(self) -> None:
        proc = self.sender()
        if not isinstance(proc, QProcess) or proc is not self._proc:
            return
        pid = int(proc.processId())
        self.pids.append(pid)
        self.flow.spawned(time.monotonic())
        self._job = headless.kill_on_close_job(pid)
        if self._record_run:
            self._run_file = orphans.register(pid, self.spec.binary, self.flow.current_argv, self.spec.port)
        if self.flow.polling:
            self._poll_timer.start(0)

    def _read(self) -> None:
        proc = self._proc
        if proc is None:
            return
        data = self._partial + bytes(proc.readAllStandardOutput().data())
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

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        proc = self.sender()
        if not isinstance(proc, QProcess) or proc is not self._proc:
            return
        self._read()
        if self._partial:
            self._take([self._partial.decode("utf-8", "replace")])
            self._partial = b""
        pid = self.pids[-1] if self.pids else None
        if sys.platform != "win32" and pid is not None:
            headless.signal_group(pid, signal.SIGKILL)  # anything the engine left in its group
        self._release()
        self._term_again.stop()
        self._kill_timer.stop()
        self._proc = None
        proc.deleteLater()
        exit_status = crash.ExitStatus(None, int(code)) if status == QProcess.ExitStatus.CrashExit \
            else crash.ExitStatus(int(code), None)
        self._do(self.flow.exited(exit_status, time.monotonic()))

    def _error(self, error: QProcess.ProcessError) -> None:
        proc = self.sender()
        if not isinstance(proc, QProcess) or proc is not self._proc:
            return
        if error != QProcess.ProcessError.FailedToStart:
            return  # crashes arrive through finished(); this only adds noise
        reason = proc.errorString()
        self._proc = None
        proc.deleteLater()
        self._do(self.flow.spawn_failed(reason, time.monotonic()))

    def _release(self) -> None:
        orphans.release(self._run_file)
        self._run_file = None
        if self._job is not None:
            self._job.close()
            self._job = None

    # ------------------------------------------------------------ readiness
    def _poll_health(self) -> None:
        if not self.flow.polling or self._reply is not None or not self.running:
            return
        request = QNetworkRequest(QUrl(self.spec.url + self.spec.health_path))
        request.setRawHeader(QByteArray(b"Authorization"), QByteArray(f"Bearer {self.spec.api_key}".encode()))
        request.setTransferTimeout(HEALTH_TIMEOUT_MS)
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
            self._poll_delay = min(int(self._poll_delay * 1.5) + 1, POLL_MAX_MS)
            self._poll_timer.start(self._poll_delay)
