"""One process group the window owns, as a QProcess: the engine's and the shared worker's.

What both need, once (core/processes/process_group.py has the rules, shared with the headless
runner):

- the port is checked before the start: another program already listening there would
  answer the engine's /health or pass for the worker (`port_busy`, nothing started);
- the child leads its own session (Unix) with default signal handlers (Python ignores
  SIGPIPE, and an ignored signal would stay ignored in the engine);
- once started it is owned (`process_group.own`): the Windows Job, the lifeline that stops it
  within a second if Draftwise dies, the run file;
- `stop()` is SIGTERM to the group, again after TERM_AGAIN_S, SIGKILL after the timeout;
  `shutdown()` the same, waiting (the application is quitting: there is no later);
- at the exit, anything left in the group is killed and the ownership released before
  `exited` is emitted, after the last `output`.

One object per start: a relaunch makes a new one, so a late signal of the old one is told
apart by its sender.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from draftwise.core.launch import crash
from draftwise.core.processes import process_group


class OwnedQProcess(QObject):
    """`start()`, then `started` (pid) or `port_busy` / `failed_to_start`; `output` while it
    runs; `exited` (crash.ExitStatus) at the end."""

    started = Signal(int)  # the pid (which leads the group)
    output = Signal(bytes)  # what it printed since the last read
    exited = Signal(object)  # crash.ExitStatus
    port_busy = Signal(int)  # the port: another program listens there; not started
    failed_to_start = Signal(str)  # why the program could not be started (missing, not executable)

    def __init__(self, *, stop_timeout_ms: int = int(process_group.KILL_AFTER_S * 1000), record_run: bool = True,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.stop_timeout_ms = stop_timeout_ms
        self.record_run = record_run
        self.pid: int | None = None
        self._proc: QProcess | None = None
        self._owned: process_group.OwnedGroup | None = None
        self._binary: Path | None = None
        self._argv: tuple[str, ...] = ()
        self._port = 0
        self._stopping = False
        self._term_again = QTimer(self)
        self._term_again.setSingleShot(True)
        self._term_again.timeout.connect(lambda: self._signal(signal.SIGTERM))
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(lambda: self._signal(process_group.SIGKILL))

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.state() != QProcess.ProcessState.NotRunning

    def start(self, argv: Sequence[str], env: Mapping[str, str], *, binary: Path | str, host: str,
              port: int) -> None:  # fmt: skip
        """Start `argv` with exactly `env` (nothing of the system's added) unless `host:port`
        is taken; `port_busy` is then emitted at once."""
        if process_group.port_taken(host, port):
            self.port_busy.emit(port)
            return
        self._binary, self._argv, self._port = Path(binary), tuple(argv), port
        proc = QProcess(self)
        proc.setProgram(self._argv[0])
        proc.setArguments(list(self._argv[1:]))
        environment = QProcessEnvironment()
        for key, value in env.items():
            environment.insert(key, value)
        proc.setProcessEnvironment(environment)
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
        """SIGTERM the group, again after TERM_AGAIN_S, SIGKILL after the timeout; `exited` follows."""
        if not self.running or self._stopping:
            return
        self._stopping = True
        self._signal(signal.SIGTERM)
        self._term_again.start(int(process_group.TERM_AGAIN_S * 1000))
        self._kill_timer.start(self.stop_timeout_ms)

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Stop and wait (the application is quitting)."""
        proc = self._proc
        if proc is None or not self.running:
            return
        if not self._stopping:
            self._stopping = True
            self._signal(signal.SIGTERM)
        if not proc.waitForFinished(min(timeout_ms, int(process_group.TERM_AGAIN_S * 1000))):
            self._signal(signal.SIGTERM)
            if not proc.waitForFinished(timeout_ms):
                self._signal(process_group.SIGKILL)
                proc.waitForFinished(timeout_ms)

    # ------------------------------------------------------------ events
    def _signal(self, sig: int) -> None:
        proc = self._proc
        if proc is None or proc.state() == QProcess.ProcessState.NotRunning:
            return
        pid = int(proc.processId())
        if sys.platform == "win32" or pid <= 0:
            # Windows: see process_group.signal_group, llama-server ignores anything softer.
            # No pid yet (still starting): only QProcess can end it.
            proc.kill()
            return
        process_group.signal_group(pid, sig)

    def _started(self) -> None:
        proc = self._proc
        if proc is None:
            return
        self.pid = int(proc.processId())
        self._owned = process_group.own(self.pid, self._binary or self._argv[0], self._argv, self._port,
                                        record_run=self.record_run)
        self.started.emit(self.pid)

    def _read(self) -> None:
        proc = self._proc
        if proc is None:
            return
        data = bytes(proc.readAllStandardOutput().data())
        if data:
            self.output.emit(data)

    def _finished(self, code: int, status: QProcess.ExitStatus) -> None:
        proc = self._proc
        if proc is None:
            return
        self._read()
        self._term_again.stop()
        self._kill_timer.stop()
        if self._owned is not None:
            self._owned.release()  # stragglers of the group, the Job, the lifeline, the run file
            self._owned = None
        self._proc = None
        proc.deleteLater()
        self.exited.emit(crash.ExitStatus(None, int(code)) if status == QProcess.ExitStatus.CrashExit
                         else crash.ExitStatus(int(code), None))

    def _error(self, error: QProcess.ProcessError) -> None:
        proc = self._proc
        if proc is None or error != QProcess.ProcessError.FailedToStart:
            return  # crashes arrive through finished(); this only adds noise
        reason = proc.errorString()
        self._proc = None
        proc.deleteLater()
        self.failed_to_start.emit(reason)
