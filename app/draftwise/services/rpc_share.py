"""Share this computer from the window: `ggml-rpc-server` as a QProcess the app owns.

The decisions are core/launch/share.py's (the argv, the environment, whether the address
needs the warning); this is the Qt side: start it in its own session, say when it listens,
stop it with the app (`shutdown` from aboutToQuit), and keep a run file while it runs so a
Draftwise that died has it stopped at the next start (core/launch/orphans.py).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from draftwise.core.address import LOOPBACK, RPC_PORT
from draftwise.core.launch import headless, orphans, share

READY_POLL_MS = 100
READY_TIMEOUT_MS = 10_000
STOP_TIMEOUT_MS = 5_000


class ShareProcess(QObject):
    """One shared worker. `start()`, then `listening` or `failed`; `stop()` -> `stopped`."""

    listening = Signal(str)  # host:port
    failed = Signal(str)  # the last line it printed, or why it could not start
    stopped = Signal()

    def __init__(self, binary: Path, host: str = LOOPBACK, port: int = RPC_PORT,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.binary, self.host, self.port = Path(binary), host, port
        self.argv = share.worker_argv(self.binary, host, port)
        self._proc: QProcess | None = None
        self._run_file: Path | None = None
        self._tail = ""
        self._waited_ms = 0
        self._poll = QTimer(self)
        self._poll.setInterval(READY_POLL_MS)
        self._poll.timeout.connect(self._check_listening)

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

    @property
    def pid(self) -> int | None:
        return int(self._proc.processId()) if self._proc is not None else None

    def start(self) -> None:
        proc = QProcess(self)
        proc.setProgram(self.argv[0])
        proc.setArguments(self.argv[1:])
        env = QProcessEnvironment()
        for key, value in share.worker_env(self.binary).items():
            env.insert(key, value)
        proc.setProcessEnvironment(env)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        proc.setStandardInputFile(QProcess.nullDevice())
        if sys.platform != "win32":
            flags = QProcess.UnixProcessFlag
            proc.setUnixProcessParameters(flags.CreateNewSession | flags.ResetSignalHandlers)
        proc.readyReadStandardOutput.connect(self._read)
        proc.started.connect(self._started)
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._error)
        self._proc = proc
        proc.start()

    def stop(self) -> None:
        proc = self._proc
        if proc is None or proc.state() == QProcess.ProcessState.NotRunning:
            return
        pid = int(proc.processId())
        if sys.platform == "win32" or pid <= 0:
            proc.kill()
        else:
            headless.signal_group(pid, signal.SIGTERM)

    def shutdown(self, timeout_ms: int = STOP_TIMEOUT_MS) -> None:
        """Stop and wait (the application is quitting)."""
        proc = self._proc
        if proc is None or proc.state() == QProcess.ProcessState.NotRunning:
            return
        self.stop()
        if not proc.waitForFinished(timeout_ms):
            proc.kill()
            proc.waitForFinished(timeout_ms)
        self._release()

    # ------------------------------------------------------------ events
    def _started(self) -> None:
        if self._proc is not None:
            self._run_file = orphans.register(int(self._proc.processId()), self.binary, self.argv, self.port)
        self._waited_ms = 0
        self._poll.start()

    def _check_listening(self) -> None:
        self._waited_ms += READY_POLL_MS
        if share.listening(self.host, self.port):
            self._poll.stop()
            self.listening.emit(self.endpoint)
        elif self._waited_ms >= READY_TIMEOUT_MS:
            self._poll.stop()
            self.failed.emit(f"not listening on {self.endpoint} after {READY_TIMEOUT_MS // 1000} s")
            self.stop()

    def _read(self) -> None:
        if self._proc is not None:
            text = bytes(self._proc.readAllStandardOutput().data()).decode(errors="replace")
            lines = [ln for ln in text.splitlines() if ln.strip()]
            if lines:
                self._tail = lines[-1]

    def _finished(self, *_args: object) -> None:
        was_polling = self._poll.isActive()
        self._poll.stop()
        self._release()
        if was_polling:
            self.failed.emit(self._tail or "the worker exited")
        self.stopped.emit()

    def _error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._poll.stop()
            self.failed.emit(self._proc.errorString() if self._proc is not None else "failed to start")

    def _release(self) -> None:
        orphans.release(self._run_file)
        self._run_file = None
