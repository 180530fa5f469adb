"""Reads the engine's connections to its workers without blocking the window: `ss` runs in a
QProcess and its answer comes back as a signal (core/rpc/upload.py parses it)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QObject, QProcess, Signal

from draftwise.core.rpc import upload


class UploadReader(QObject):
    read = Signal(object)  # dict[endpoint, bytes acknowledged], or None where it cannot be read

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._argv = upload.ss_argv()
        self._proc: QProcess | None = None
        self._ask: tuple[int, Mapping[str, tuple[str, int] | None]] | None = None

    def request(self, pid: int, peers: Mapping[str, tuple[str, int] | None]) -> None:
        """Read the sockets of `pid` once; a request while one runs is skipped (the next tick asks)."""
        if self._argv is None:
            self.read.emit(None)
            return
        if self._proc is not None:
            return
        self._ask = (pid, peers)
        proc = QProcess(self)
        proc.setProgram(self._argv[0])
        proc.setArguments(self._argv[1:])
        proc.finished.connect(self._finished)
        proc.errorOccurred.connect(self._failed)
        self._proc = proc
        proc.start()

    def _finished(self, code: int, _status: object = None) -> None:
        proc, ask = self._proc, self._ask
        self._proc, self._ask = None, None
        if proc is None or ask is None:
            return
        text = bytes(proc.readAllStandardOutput().data()).decode(errors="replace")
        proc.deleteLater()
        pid, peers = ask
        self.read.emit(upload.sent_by_endpoint(upload.parse_ss(text, [pid]), peers) if code == 0 else None)

    def _failed(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._argv = None  # not there after all: the expected time from then on
            proc = self._proc
            self._proc, self._ask = None, None
            if proc is not None:
                proc.deleteLater()
            self.read.emit(None)
