"""Share this computer from the window: `ggml-rpc-server` as a process group the app owns.

The decisions are core/rpc/share.py's (the argv, the environment, whether the address
needs the warning); the process group is services/owned_qprocess.py's, as the engine's is:
the port checked before the start (another program already listening there is a failure,
never "listening"), its own session, the Windows Job, the lifeline (it stops with a
Draftwise that dies), the run file, and a stop that escalates to SIGKILL. What is left here:
say when it listens, and why it failed — as core Messages, translated by the view-model.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from draftwise.core.address import LOOPBACK, RPC_PORT
from draftwise.core.launch import crash
from draftwise.core.messages import Message, msg
from draftwise.core.rpc import share
from draftwise.services.owned_qprocess import OwnedQProcess

READY_POLL_MS = 100
READY_TIMEOUT_MS = 10_000
PEERS_POLL_MS = 2_000  # who is connected: read from the worker's sockets this often
STOP_TIMEOUT_MS = 5_000


class ShareProcess(QObject):
    """One shared worker. `start()`, then `listening` or `failed`; `stop()` -> `stopped`."""

    listening = Signal(str)  # host:port
    failed = Signal(object)  # a core Message: why it could not start or stopped before listening
    stopped = Signal()
    peers_changed = Signal(list)  # the host:port addresses connected to the worker now

    def __init__(self, binary: Path, host: str = LOOPBACK, port: int = RPC_PORT,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.binary, self.host, self.port = Path(binary), host, port
        self.argv = share.worker_argv(self.binary, host, port)
        self._group = OwnedQProcess(stop_timeout_ms=STOP_TIMEOUT_MS, parent=self)
        self._group.output.connect(self._read)
        self._group.started.connect(self._started)
        self._group.exited.connect(self._exited)
        self._group.port_busy.connect(self._port_busy)
        self._group.failed_to_start.connect(self._failed_to_start)
        self._tail = ""
        self._waited_ms = 0
        self._poll = QTimer(self)
        self._poll.setInterval(READY_POLL_MS)
        self._poll.timeout.connect(self._check_listening)
        self._peers: list[str] = []
        self._peers_poll = QTimer(self)
        self._peers_poll.setInterval(PEERS_POLL_MS)
        self._peers_poll.timeout.connect(self._check_peers)

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._group.running

    @property
    def pid(self) -> int | None:
        return self._group.pid if self._group.running else None

    def start(self) -> None:
        self._group.start(self.argv, share.worker_env(self.binary), binary=self.binary, host=self.host, port=self.port)

    def stop(self) -> None:
        self._group.stop()

    def shutdown(self, timeout_ms: int = STOP_TIMEOUT_MS) -> None:
        """Stop and wait (the application is quitting)."""
        self._group.shutdown(timeout_ms)

    # ------------------------------------------------------------ events
    def _started(self, _pid: int) -> None:
        self._waited_ms = 0
        self._poll.start()

    def _check_listening(self) -> None:
        self._waited_ms += READY_POLL_MS
        if not self._group.running:
            return  # its exit is on the way (exited says why)
        if share.listening(self.host, self.port):
            # The port was free before the start, and the worker still runs: it is ours.
            self._poll.stop()
            self._peers_poll.start()
            self.listening.emit(self.endpoint)
        elif self._waited_ms >= READY_TIMEOUT_MS:
            self._poll.stop()
            self._fail(msg("The worker did not start listening on {endpoint} within {seconds} s.",
                           endpoint=self.endpoint, seconds=f"{READY_TIMEOUT_MS // 1000}"))
            self.stop()

    def _check_peers(self) -> None:
        pid = self.pid
        now = share.peers(pid, self.port) if pid is not None else []
        if now != self._peers:
            self._peers = now
            self.peers_changed.emit(now)

    def _read(self, chunk: bytes) -> None:
        lines = [ln for ln in chunk.decode(errors="replace").splitlines() if ln.strip()]
        if lines:
            self._tail = lines[-1]

    def _exited(self, status: crash.ExitStatus) -> None:
        was_polling = self._poll.isActive()
        self._poll.stop()
        self._peers_poll.stop()
        if was_polling:
            self._fail(msg("The worker stopped at once: {line}", line=self._tail or status.words()))
        self.stopped.emit()

    def _port_busy(self, port: int) -> None:
        self._fail(msg("Port {port} is already in use on {host}; choose another sharing port.",
                       port=port, host=self.host))
        self.stopped.emit()

    def _failed_to_start(self, reason: str) -> None:
        self._poll.stop()
        self._fail(msg("The worker {program} could not be started: {reason}.", program=str(self.binary),
                       reason=reason))
        self.stopped.emit()

    def _fail(self, why: Message) -> None:
        self.failed.emit(why)
