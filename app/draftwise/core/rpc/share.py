"""Share this computer: run `ggml-rpc-server` so another Draftwise can use its memory.

The worker has no authentication (tools/rpc/README.md): anyone who reaches its port can
allocate memory and run code paths of the engine on this machine. So it listens on
127.0.0.1 unless the user deliberately picks another address, and that choice comes with
`NETWORK_WARNING`. The worker is owned like an engine (core/processes/process_group.py): it
stops with a Draftwise that dies, and its run file is the last net at the next start.

Flags (tools/rpc/rpc-server.cpp of the pinned engine): `-H/--host` (default 127.0.0.1),
`-p/--port` (default 50052), `-t/--threads`, `-d/--device`, `-c/--cache`.

The worker keeps a tensor cache (`-c`, in Draftwise's cache folder: `LLAMA_CACHE` names the
folder the worker puts its `rpc/` cache in): the engine offers every tensor over 10 MiB by
its hash first (ggml-rpc.cpp SET_TENSOR_HASH), so a second launch of the same model sends
only what the worker does not hold (issue 29, item 5). Who is connected is read from the
worker's own sockets (`peers`): its log only says "Accepted client connection".
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.address import LOOPBACK
from draftwise.core.engines import provision
from draftwise.core.errors import FieldError
from draftwise.core.messages import Message, msg
from draftwise.core.processes import process_group
from draftwise.core.rpc.workers import DEFAULT_PORT

READY_TIMEOUT_S = 10.0
NETWORK_WARNING = msg(
    "Anyone who can reach this address can use this computer's memory and processor: the worker has no password "
    "or encryption. Share on a network you trust, and stop sharing when you are done."
)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, port: int) -> Message | None:
    """None for a loopback address; the warning for any other. FieldError for a bad one."""
    if not 1 <= port <= 65535:
        raise FieldError("share_port", msg("The sharing port must be from 1 to 65535, not {port}.", port=port))
    if not is_loopback(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError as exc:
            raise FieldError("share_host", msg(
                "The sharing address {host!r} is not an IPv4 address of this computer.", host=host)) from exc
        return NETWORK_WARNING
    return None


def worker_argv(binary: Path, host: str = LOOPBACK, port: int = DEFAULT_PORT, threads: int | None = None,
                devices: Sequence[str] = ()) -> list[str]:
    argv = [str(binary), "--host", host, "--port", str(port), "--cache"]
    if threads:
        argv += ["--threads", str(threads)]
    if devices:
        argv += ["--device", ",".join(devices)]
    return argv


def tensor_cache_dir() -> Path:
    """Where the worker keeps the tensors it was sent (`<it>/rpc/<hash>`)."""
    return paths.cache_dir() / "rpc-worker"


def worker_env(binary: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    return {**env, **provision.library_env(binary.parent), "GGML_NO_BACKTRACE": "1",
            "LLAMA_CACHE": str(tensor_cache_dir())}


def peers(pid: int, port: int) -> list[str]:
    """The computers connected to the worker `pid` listening on `port` (their addresses, sorted;
    a computer is named once whatever its ports), from its sockets; [] when they cannot be read."""
    import psutil  # noqa: PLC0415 - only when someone asks

    try:
        conns = psutil.Process(pid).net_connections(kind="tcp")
    except (psutil.Error, OSError):
        return []
    return sorted({c.raddr.ip for c in conns
                   if c.raddr and c.laddr and c.laddr.port == port and c.status == psutil.CONN_ESTABLISHED})


def listening(host: str, port: int) -> bool:
    """Whether something accepts connections on host:port (before a start: someone else)."""
    return process_group.port_taken(host, port)


@dataclass
class SharedWorker:
    """A running worker this process started (headless: the CLI and the tests)."""

    process: subprocess.Popen[bytes]
    argv: list[str]
    host: str
    port: int
    log_path: Path
    owned: process_group.OwnedGroup

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def peers(self) -> list[str]:
        return peers(self.process.pid, self.port)

    def stop(self) -> int:
        code = process_group.stop_popen(self.process)
        self.owned.release()
        return code


def start(binary: Path, host: str = LOOPBACK, port: int = DEFAULT_PORT, *, log_path: Path,
          threads: int | None = None, devices: Sequence[str] = (),
          timeout: float = READY_TIMEOUT_S) -> SharedWorker:  # fmt: skip
    """Start the worker and wait until it accepts connections; FieldError when the address is
    bad, the port is taken, or it exits first (nothing is left running then). `devices`: the
    engine's device names it lends (default: its accelerators, else the processor)."""
    check_host(host, port)
    if listening(host, port):
        raise FieldError("share_port", msg("Port {port} is already in use on {host}; choose another sharing port.",
                                           port=port, host=host))
    argv = worker_argv(binary, host, port, threads, devices)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    env=worker_env(binary), **process_group.new_group_kwargs())  # fmt: skip
        except OSError as exc:
            raise FieldError("share", msg("The worker {program} could not be started: {reason}.",
                                          program=str(binary), reason=exc.strerror or str(exc))) from exc
    worker = SharedWorker(proc, argv, host, port, log_path, process_group.own(proc.pid, binary, argv, port))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            worker.stop()
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise FieldError("share", msg("The worker stopped at once: {line}", line=tail[0]))
        if listening(host, port):
            return worker
        time.sleep(0.05)
    worker.stop()
    raise FieldError("share", msg("The worker did not start listening on {endpoint} within {seconds} s.",
                                  endpoint=worker.endpoint, seconds=f"{timeout:.0f}"))


def worker_binary(engine_binary: Path) -> Path:
    """The ggml-rpc-server beside an engine's llama-server."""
    return provision.rpc_server_binary(Path(engine_binary).parent)
