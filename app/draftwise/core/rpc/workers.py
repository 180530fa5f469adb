"""Other computers lending their memory through llama.cpp's RPC backend (docs/rpc.md).

A worker is a `ggml-rpc-server` at `host:port`. It is asked what it offers the way the
engine will use it: `llama-server --rpc host:port --list-devices` (`--rpc` first: the engine
acts on `--list-devices` as soon as it reads it). Its devices are `RPC0`, `RPC1`, … in the
order of the `--rpc` list, described by their `host:port`; their buffers are named
`RPC<i>[host:port]` where `i` counts the worker's own devices (ggml-rpc.cpp).

Every failure names the worker and what to do: an address the engine cannot read, a worker
that does not answer, one speaking another protocol version, one with no free memory.
Probing starts one short-lived `llama-server` per worker and waits for it; nothing stays.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from draftwise.core.address import RPC_PORT
from draftwise.core.engines import provision
from draftwise.core.errors import FieldError
from draftwise.core.machine.machine_types import RPC, Gpu, Machine, MiB
from draftwise.core.messages import Message, msg
from draftwise.core.rpc import wire

FIELD = "rpc"  # the setting a worker error points at (the window's "Other computers")
DEFAULT_PORT = RPC_PORT
PROBE_TIMEOUT = 10.0
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,251}[A-Za-z0-9])?$")
_RPC_DEVICE = re.compile(
    r"^\s+RPC(?P<idx>\d+):\s*(?P<desc>\S+)\s*\((?P<total>\d+) MiB,\s*(?P<free>\d+) MiB free\)\s*$"
)
# What the engine prints when a worker fails (ggml/src/ggml-rpc/ggml-rpc.cpp).
_VERSION = re.compile(r"RPC server version mismatch: (?P<v>[\d.]+)")
_CONNECT = "Failed to connect to"
_PARSE = "Failed to parse endpoint"
_HANDSHAKE = "RPC handshake failed"
_MALFORMED = "Remote RPC server crashed or returned malformed response"


class WorkerError(FieldError):
    """A worker that cannot be used; `endpoint` is the one named."""

    def __init__(self, endpoint: str, message: Message) -> None:
        super().__init__(FIELD, message)
        self.endpoint = endpoint


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_endpoint(text: str) -> Endpoint:
    """One `host:port`, or a WorkerError saying what is wrong with it. IPv6 is refused: the
    engine splits at the first colon (ggml-rpc.cpp `parse_endpoint`)."""
    raw = text.strip()
    host, sep, port_text = raw.partition(":")
    if not sep or not host:
        raise WorkerError(raw, msg("The worker address {address!r} is not host:port (for example "
                                   "192.168.1.20:50052).", address=raw))
    if ":" in port_text:
        raise WorkerError(raw, msg("The worker address {address!r} has more than one colon: IPv6 addresses "
                                   "are not supported by the engine; use an IPv4 address or a name.", address=raw))
    if not _HOST.match(host):
        raise WorkerError(raw, msg("The worker address {address!r} has an invalid host name {host!r}.",
                                   address=raw, host=host))
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise WorkerError(raw, msg("The worker address {address!r} needs a port from 1 to 65535 after the "
                                   "colon.", address=raw))
    return Endpoint(host, int(port_text))


def parse_endpoints(items: str | Iterable[str]) -> tuple[str, ...]:
    """`a:1,b:2` (or a list of entries, each maybe comma-separated) as normalized `host:port`
    strings; a WorkerError for the first bad or repeated one."""
    parts = items.split(",") if isinstance(items, str) else [p for it in items for p in it.split(",")]
    out: list[str] = []
    for part in parts:
        if not part.strip():
            continue
        ep = str(parse_endpoint(part))
        if ep in out:
            raise WorkerError(ep, msg("The worker {worker} is listed twice; list each computer once.", worker=ep))
        out.append(ep)
    return tuple(out)


def parse_worker_devices(text: str, endpoint: str, first_index: int = 0) -> list[Gpu]:
    """The RPC devices of one worker in `--list-devices` output, numbered from `first_index`
    (the engine numbers them across the whole `--rpc` list)."""
    out = []
    for line in text.splitlines():
        m = _RPC_DEVICE.match(line)
        if m is None or m["desc"] != endpoint:
            continue
        n = len(out)
        out.append(Gpu(index=first_index + n, backend=RPC, name=endpoint, total_bytes=int(m["total"]) * MiB,
                       free_bytes=int(m["free"]) * MiB, device=f"RPC{first_index + n}", endpoint=endpoint,
                       remote_index=n))  # fmt: skip
    return out


def failure_sentence(endpoint: str, text: str) -> Message:
    """Why the engine could not use a worker, from what it printed."""
    m = _VERSION.search(text)
    version = m["v"] if m else (hello_version(endpoint) if _HANDSHAKE in text else None)
    if version:
        return msg("The worker {worker} runs another version of the RPC protocol ({version}); install the same "
                   "engine build there as here and start its ggml-rpc-server again.",
                   worker=endpoint, version=version)
    if _HANDSHAKE in text:
        # negotiate_hello fails only on a version mismatch (a broken answer aborts instead).
        return msg("The worker {worker} runs another version of the RPC protocol; install the same engine build "
                   "there as here and start its ggml-rpc-server again.", worker=endpoint)
    if _PARSE in text:
        return msg("The engine cannot read the worker address {worker}; write it as host:port.", worker=endpoint)
    if _CONNECT in text:
        return msg("The worker {worker} cannot be reached: nothing answers there. Start ggml-rpc-server on that "
                   "computer (or check the address and firewall), or remove it from Other computers.",
                   worker=endpoint)
    if _MALFORMED in text:
        return msg("The worker {worker} answered, but not as an RPC worker of this engine; check that the port "
                   "belongs to ggml-rpc-server.", worker=endpoint)
    return msg("The worker {worker} could not be used; the engine's log has the details.", worker=endpoint)


def hello_version(endpoint: str, timeout: float = 2.0) -> str | None:
    """The protocol version a worker answers HELLO with (`major.minor.patch`), or None. The
    engine does not print it at the verbosity a probe runs with, only that the handshake failed."""
    try:
        ep = parse_endpoint(endpoint)
        with socket.create_connection((ep.host, ep.port), timeout=timeout) as sock:
            sock.sendall(bytes([wire.HELLO]) + wire.CONN_CAPS.to_bytes(8, "little") + bytes(wire.CONN_CAPS))
            head = _recv(sock, 8)
            body = _recv(sock, min(int.from_bytes(head, "little"), 64))
    except (OSError, WorkerError, ValueError):
        return None
    return f"{body[0]}.{body[1]}.{body[2]}" if len(body) >= 3 else None


def _recv(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            break
        out += chunk
    return out


def probe_env(binary: Path) -> dict[str, str]:
    """The probe's environment: the engine's libraries, no backtrace (a failed connection is
    an abort), and no `LLAMA_ARG_*` from the parent (LLAMA_ARG_RPC would add workers)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    return {**env, **provision.library_env(binary.parent), "GGML_NO_BACKTRACE": "1"}


def probe_worker(binary: Path, endpoint: str, first_index: int = 0, timeout: float = PROBE_TIMEOUT) -> list[Gpu]:
    """One worker's devices as the engine sees them, or a WorkerError naming it."""
    try:
        out = subprocess.run([str(binary), "--rpc", endpoint, "--list-devices"], capture_output=True, text=True,
                             errors="replace", timeout=timeout, env=probe_env(binary),
                             creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))  # fmt: skip
    except subprocess.TimeoutExpired as exc:
        raise WorkerError(endpoint, msg("The worker {worker} did not answer within {seconds} s; check that "
                                        "ggml-rpc-server runs there and the network lets it through.",
                                        worker=endpoint, seconds=f"{timeout:.0f}")) from exc
    except OSError as exc:
        raise WorkerError(endpoint, msg("The engine could not be started to ask the worker {worker}: {reason}.",
                                        worker=endpoint, reason=exc.strerror or str(exc))) from exc
    text = out.stdout + out.stderr
    devices = parse_worker_devices(text, endpoint, first_index)
    if out.returncode != 0 or not devices:
        raise WorkerError(endpoint, failure_sentence(endpoint, text))
    return devices


def check_free(devices: Sequence[Gpu], margin: int) -> None:
    """A worker the user named that has no memory to lend is an error, not a silent skip."""
    for d in devices:
        if d.free_bytes <= margin:
            raise WorkerError(d.endpoint or d.name, msg(
                "The worker {worker} has no memory to lend: {free} MiB free of {total} MiB. Close programs there, "
                "or remove it from Other computers.",
                worker=d.endpoint or d.name, free=d.free_bytes // MiB, total=d.total_bytes // MiB))


def probe_workers(binary: Path, endpoints: Sequence[str], timeout: float = PROBE_TIMEOUT) -> list[Gpu]:
    """Every worker's devices in `--rpc` order (RPC0, RPC1, … across them)."""
    out: list[Gpu] = []
    for ep in endpoints:
        out += probe_worker(binary, ep, len(out), timeout)
    return out


def with_workers(machine: Machine, devices: Sequence[Gpu]) -> Machine:
    return replace(machine, workers=list(devices))


def reachable(endpoint: str, timeout: float = 1.0) -> bool:
    """Whether something still accepts connections at the worker's address (after a crash:
    which worker went away). Connects and closes; sends nothing."""
    try:
        ep = parse_endpoint(endpoint)
    except WorkerError:
        return False
    try:
        with socket.create_connection((ep.host, ep.port), timeout=timeout):
            return True
    except OSError:
        return False


def gone(endpoints: Sequence[str], timeout: float = 1.0) -> list[str]:
    return [ep for ep in endpoints if not reachable(ep, timeout)]


def buffer_name(device: Gpu) -> str:
    """The engine's buffer name for an RPC device: `RPC<i>[host:port]`."""
    return f"RPC{device.remote_index}[{device.endpoint}]"


def rpc_args(devices: Sequence[Gpu]) -> tuple[str, ...]:
    """`--rpc a,b` for the workers of these devices, in order, each once."""
    eps: list[str] = []
    for d in devices:
        if d.endpoint and d.endpoint not in eps:
            eps.append(d.endpoint)
    return ("--rpc", ",".join(eps)) if eps else ()
