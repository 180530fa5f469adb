"""The "Other computers" and "Share this computer" card's state (docs/rpc.md).

Other computers: a list of `host:port` entries (settings.workers), each with a probe status
(checking / its devices and free memory / the sentence of why it cannot be used). Probing
starts a short-lived llama-server per worker, so it runs off the UI thread and reports back
through a queued signal. `endpoints()` is what the launch uses: only workers that answered.

Share this computer: where the worker listens (loopback by default), the plain warning when
the user picks another address, and the ShareProcess that runs it and stops with the app.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from draftwise.core.address import LOOPBACK, RPC_PORT
from draftwise.core.errors import FieldError
from draftwise.core.kinds import EngineKind
from draftwise.core.machine.hardware import Gpu
from draftwise.core.messages import Message
from draftwise.core.readable import human_bytes
from draftwise.core.rpc import link, share, workers
from draftwise.core.settings import Settings
from draftwise.services.rpc_share import ShareProcess
from draftwise.viewmodels.i18n import tr, tr_error, tr_message

if TYPE_CHECKING:
    from draftwise.viewmodels.engine import EngineChoice

CHECKING, READY, FAILED = "checking", "ready", "failed"

Prober = Callable[[Path, str], list[Gpu]]  # (engine binary, host:port) -> devices; raises WorkerError


@dataclass
class WorkerRow:
    endpoint: str
    state: str = CHECKING
    text: str = ""  # what the card shows beside the address (translated)
    devices: tuple[Gpu, ...] = ()
    bad_address: bool = False  # not host:port: nothing to ask until it is fixed


class WorkersViewModel(QObject):
    changed = Signal()  # the list or a status changed
    error = Signal(str)  # an entry that could not be added (translated sentence)
    share_changed = Signal()
    _probed = Signal(str, object)  # endpoint, list[Gpu] | WorkerError (from the probe thread)

    def __init__(self, entries: Sequence[str] = (), *,
                 engine_binary: Path | Callable[[], Path | None] | None = None,
                 prober: Prober | None = None, parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        # The engine that asks the workers: a path, or a callable (the window's chosen engine).
        self._engine_binary = engine_binary
        self._prober: Prober = prober or (lambda binary, ep: workers.probe_worker(binary, ep))
        self.rows: list[WorkerRow] = []
        for entry in entries:
            try:
                for ep in workers.parse_endpoints(entry):
                    if all(r.endpoint != ep for r in self.rows):
                        self.rows.append(WorkerRow(ep))
            except workers.WorkerError as exc:
                self.rows.append(WorkerRow(entry, FAILED, tr_error(exc), bad_address=True))
        self._probed.connect(self._on_probed)
        self.share_host, self.share_port = LOOPBACK, RPC_PORT
        self.share: ShareProcess | None = None
        self.share_status = ""
        self._share_failed = False
        self._probed_once = False
        # Use the workers even where this computer alone is predicted faster (settings.
        # workers_always; the plan's `--use-workers always`). Off: auto.
        self.always = False

    @classmethod
    def from_settings(cls, settings: Settings, engine: Callable[[], EngineChoice | None], parent: QObject | None = None,
                      ) -> WorkersViewModel:  # fmt: skip
        """The window's card: entries and share address from settings, written back on change;
        `engine()` is the chosen engine (its llama-server asks the workers)."""

        def binary() -> Path | None:
            e = engine()
            return Path(e.binary) if e is not None and getattr(e, "kind", "") == EngineKind.LLAMA_CPP else None

        vm = cls(settings.workers, engine_binary=binary, parent=parent)
        vm.share_host, vm.share_port = settings.share_host, settings.share_port
        vm.always = settings.workers_always

        def store() -> None:
            settings.workers = vm.entries()
            settings.workers_always = vm.always
            settings.share_host, settings.share_port = vm.share_host, vm.share_port

        vm.changed.connect(store)
        vm.share_changed.connect(store)
        return vm

    def probe_once(self) -> None:
        """Ask the saved workers, the first time the machine is known with an engine to ask
        them: the window's first machine probe can finish before the engines are found, and
        the rows would stay "No engine is installed" (the next probe, with the engine, asks)."""
        if not self._probed_once:
            self._probed_once = self.engine_binary is not None
            self.probe_all()

    def leave_out(self, lost: Sequence[str]) -> None:
        """After the engine lost workers (its outcome names them: core/launch/launch_flow.py):
        they are marked so the next plan (and Launch) leaves them out; viewmodels/worker_loss.py
        launches again without them when the model fits."""
        for r in self.rows:
            if r.endpoint in lost:
                r.state, r.devices = FAILED, ()
                r.text = tr("Went away during the last run; Launch runs without it. Check again when it is back.")
        if lost:
            self.changed.emit()

    @property
    def engine_binary(self) -> Path | None:
        b = self._engine_binary
        return b() if callable(b) else b

    # ------------------------------------------------------------ other computers
    def entries(self) -> list[str]:
        """What settings.workers stores."""
        return [r.endpoint for r in self.rows]

    def endpoints(self) -> list[str]:
        """The workers a launch uses: the ones that answered."""
        return [r.endpoint for r in self.rows if r.state == READY]

    def devices(self) -> list[Gpu]:
        """Their devices, numbered as the engine will number them (RPC0, RPC1, …)."""
        out: list[Gpu] = []
        for r in self.rows:
            if r.state == READY:
                for d in r.devices:
                    out.append(Gpu(index=len(out), backend=d.backend, name=d.name, total_bytes=d.total_bytes,
                                   free_bytes=d.free_bytes, device=f"RPC{len(out)}", endpoint=d.endpoint,
                                   remote_index=d.remote_index))  # fmt: skip
        return out

    def set_always(self, on: bool) -> None:
        """Use every computer that answered even when this one alone would be faster."""
        if on != self.always:
            self.always = on
            self.changed.emit()  # stored, and the plan is made again

    def add(self, text: str) -> bool:
        try:
            new = workers.parse_endpoints(text)
            workers.parse_endpoints([*(r.endpoint for r in self.rows if not r.bad_address), *new])  # twice?
        except workers.WorkerError as exc:
            self.error.emit(tr_error(exc))
            return False
        for ep in new:
            self.rows.append(WorkerRow(ep))
            self.probe(ep)
        self.changed.emit()
        return bool(new)

    def remove(self, endpoint: str) -> None:
        self.rows = [r for r in self.rows if r.endpoint != endpoint]
        self.changed.emit()

    def probe_all(self) -> None:
        for r in self.rows:
            if not r.bad_address:
                self.probe(r.endpoint)

    def probe(self, endpoint: str) -> None:
        row = self._row(endpoint)
        if row is None:
            return
        binary = self.engine_binary
        if binary is None:
            row.state, row.text = FAILED, tr("No engine is installed to ask this computer.")
            self.changed.emit()
            return
        row.state, row.text = CHECKING, tr("Checking…")
        link.forget_failure(endpoint)  # its link is measured again too, at the next plan
        self.changed.emit()

        def run() -> None:
            try:
                result: object = self._prober(binary, endpoint)
            except workers.WorkerError as exc:
                result = exc
            self._probed.emit(endpoint, result)

        threading.Thread(target=run, name=f"probe {endpoint}", daemon=True).start()

    def _row(self, endpoint: str) -> WorkerRow | None:
        return next((r for r in self.rows if r.endpoint == endpoint), None)

    def _on_probed(self, endpoint: str, result: object) -> None:
        row = self._row(endpoint)
        if row is None:
            return
        if isinstance(result, FieldError):
            row.state, row.text, row.devices = FAILED, tr_error(result), ()
        else:
            devs = tuple(result)  # type: ignore[arg-type]
            row.state, row.devices = READY, devs
            free = sum(d.free_bytes for d in devs)
            row.text = tr("{free} free").format(free=human_bytes(free))
        self.changed.emit()

    def drop_gone(self) -> list[str]:
        """Ask the listed workers now; the ones that no longer answer are left out."""
        lost = workers.gone(self.endpoints())
        self.leave_out(lost)
        return lost

    # ------------------------------------------------------------ share this computer
    def share_warning(self) -> str:
        """The plain warning for a non-loopback address, or "" (or why the address is bad)."""
        try:
            warning = share.check_host(self.share_host, self.share_port)
        except FieldError as exc:
            return tr_error(exc)
        return tr_message(warning) if warning is not None else ""

    def set_share_address(self, host: str, port: int) -> None:
        self.share_host, self.share_port = host.strip() or LOOPBACK, port
        self.share_changed.emit()

    @property
    def sharing(self) -> bool:
        return self.share is not None and self.share.running

    def start_sharing(self, *, confirmed: bool = False) -> bool:
        """Start the worker. A non-loopback address needs `confirmed` (the user saw the
        warning and chose it); False when it was not started."""
        try:
            warning = share.check_host(self.share_host, self.share_port)
        except FieldError as exc:
            self.share_status = tr_error(exc)
            self.share_changed.emit()
            return False
        if warning is not None and not confirmed:
            self.share_status = tr_message(warning)
            self.share_changed.emit()
            return False
        binary = self.engine_binary
        if binary is None or not share.worker_binary(binary).is_file():
            self.share_status = tr("ggml-rpc-server is not installed beside the engine; reinstall the engine.")
            self.share_changed.emit()
            return False
        if self.sharing:
            return True
        proc = ShareProcess(share.worker_binary(binary), self.share_host, self.share_port, self)
        proc.listening.connect(self._on_listening)
        proc.failed.connect(self._on_share_failed)
        proc.stopped.connect(self._on_share_stopped)
        proc.peers_changed.connect(self._on_peers)
        self.share = proc
        self._share_failed = False
        self.share_status = tr("Starting…")
        proc.start()
        self.share_changed.emit()
        return True

    def stop_sharing(self) -> None:
        if self.share is not None:
            self.share.stop()

    def shutdown(self) -> None:
        """The app quits: the worker goes with it."""
        if self.share is not None:
            self.share.shutdown()

    def _on_listening(self, endpoint: str) -> None:
        self.share_status = tr("Sharing on {endpoint}").format(endpoint=endpoint)
        self.share_changed.emit()

    def _on_peers(self, peers: list[str]) -> None:
        """Who uses the worker now, from its sockets (the RPC protocol has no names)."""
        if self.share is None or not self.share.running:
            return
        status = tr("Sharing on {endpoint}").format(endpoint=self.share.endpoint)
        if peers:
            status += " — " + tr("in use by {computers}").format(computers=", ".join(peers))
        self.share_status = status
        self.share_changed.emit()

    def _on_share_failed(self, why: Message) -> None:
        self._share_failed = True
        self.share_status = tr("Sharing failed: {why}").format(why=tr_message(why))
        self.share_changed.emit()

    def _on_share_stopped(self) -> None:
        if not self._share_failed:
            self.share_status = tr("Not sharing")
        self.share_changed.emit()
