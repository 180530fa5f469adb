"""The network path to a worker: its round-trip time and bandwidth, measured through the RPC
protocol itself (issue 29, item 1).

Over a real network each token crosses the link several times, so whether a worker pays
depends on the link as much as on its memory. Both figures are taken the way the engine
will use the worker, over one `ggml-rpc-server` connection (ggml/src/ggml-rpc/ggml-rpc.cpp,
protocol 7.0.0: `| cmd (1 byte) | size (8 bytes, LE) | data |`, answers `| size | data |`):

- the round trip: DEVICE_COUNT, a command with no input and a 4-byte answer, asked a few
  times; the median is kept (the first answer also pays the worker's thread start);
- the bandwidth: SET_TENSOR, the command the engine sends the weights with, into a buffer
  the probe allocates on the worker's first device (ALLOC_BUFFER, BUFFER_GET_BASE) and frees
  after (FREE_BUFFER). SET_TENSOR has no answer, so each transfer is closed by a
  DEVICE_COUNT: the time is the bytes plus one round trip, and the round trip is taken off.
  The transfer grows until it takes long enough to time (PROBE_SECONDS) or reaches
  MAX_PROBE_BYTES, so a slow link is not kept busy for long and a fast one is not timed on
  a few packets.

Nothing here starts a process: the probe is a plain TCP client, and every failure is a
LinkError naming the worker. A measurement is remembered per worker and engine build
(`worker-links.json`, one records.JsonRecord) and taken again once it is a day old.
"""

from __future__ import annotations

import socket
import statistics
import struct
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.messages import Message, msg
from draftwise.core.records import JsonRecord, keyed_record

# Command numbers (enum rpc_cmd).
ALLOC_BUFFER, BUFFER_GET_BASE, FREE_BUFFER, SET_TENSOR, HELLO, DEVICE_COUNT = 0, 3, 4, 6, 14, 15
CONN_CAPS = 24  # RPC_CONN_CAPS_SIZE: zeros ask for no transport upgrade
GGML_TYPE_I8 = 24
# struct rpc_tensor, packed: id, type, buffer, ne[4], nb[4], op, op_params[16], flags, src[10],
# view_src, view_offs, data, name[64], use_count (296 bytes, a multiple of 8 as asserted there).
_TENSOR = struct.Struct("<QIQ4I4II16ii10QQQQ64si")
assert _TENSOR.size == 296

ROUND_TRIPS = 7
PROBE_SECONDS = 0.25
FIRST_PROBE_BYTES = 256 << 10
MAX_PROBE_BYTES = 32 << 20
TIMEOUT = 10.0
RECORD, RECORD_VERSION = "worker-links.json", 1
MAX_AGE_S = 24 * 3600.0  # a link measured longer ago is measured again (Wi-Fi moves)


class LinkError(Exception):
    """The worker could not be measured; `message` says which and why."""

    def __init__(self, endpoint: str, message: Message) -> None:
        super().__init__(str(message))
        self.endpoint = endpoint
        self.message = message


@dataclass(frozen=True)
class Link:
    endpoint: str
    rtt_ms: float  # median round trip of one small command
    mbit_s: float  # payload bandwidth towards the worker
    probe_bytes: int  # the largest transfer timed
    measured_at: float = 0.0  # time.time() when measured

    def to_json(self) -> dict[str, object]:
        return {"endpoint": self.endpoint, "rtt_ms": round(self.rtt_ms, 3), "mbit_s": round(self.mbit_s, 1)}


class _Conn:
    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, cmd: int, payload: bytes = b"") -> None:
        self.sock.sendall(bytes([cmd]) + len(payload).to_bytes(8, "little") + payload)

    def answer(self) -> bytes:
        size = int.from_bytes(self._recv(8), "little")
        return self._recv(size)

    def ask(self, cmd: int, payload: bytes = b"") -> bytes:
        self.send(cmd, payload)
        return self.answer()

    def _recv(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the worker closed the connection")
            out += chunk
        return bytes(out)

    def close(self) -> None:
        self.sock.close()


def _tensor(buffer: int, data: int, nbytes: int) -> bytes:
    ne = (nbytes, 1, 1, 1)
    nb = (1, nbytes, nbytes, nbytes)
    return _TENSOR.pack(1, GGML_TYPE_I8, buffer, *ne, *nb, 0, *([0] * 16), 0, *([0] * 10), 0, 0, data,
                        b"draftwise-link-probe", 0)


def measure(endpoint: str, *, timeout: float = TIMEOUT, max_bytes: int = MAX_PROBE_BYTES) -> Link:
    """Round trip and bandwidth to the worker at `endpoint` (host:port), or a LinkError."""
    host, _, port = endpoint.rpartition(":")
    try:
        conn = _Conn(host, int(port), timeout)
    except (OSError, ValueError) as exc:
        raise LinkError(endpoint, msg("The worker {worker} did not answer ({error}); check that ggml-rpc-server "
                                      "runs there and the network lets it through.",
                                      worker=endpoint, error=str(exc))) from exc
    try:
        hello = conn.ask(HELLO, bytes(CONN_CAPS))
        if len(hello) < 3:
            raise LinkError(endpoint, msg("The worker {worker} answered with something that is not the RPC "
                                          "protocol.", worker=endpoint))
        rtts = []
        for _ in range(ROUND_TRIPS):
            t0 = time.perf_counter()
            conn.ask(DEVICE_COUNT)
            rtts.append(time.perf_counter() - t0)
        rtt = statistics.median(rtts[1:])
        mbit_s, probe_bytes = _bandwidth(conn, endpoint, rtt, max_bytes)
    except (OSError, ConnectionError) as exc:
        raise LinkError(endpoint, msg("The connection to the worker {worker} broke while it was measured "
                                      "({error}).", worker=endpoint, error=str(exc))) from exc
    finally:
        conn.close()
    return Link(endpoint, rtt * 1000, mbit_s, probe_bytes, time.time())


def _bandwidth(conn: _Conn, endpoint: str, rtt: float, max_bytes: int) -> tuple[float, int]:
    answer = conn.ask(ALLOC_BUFFER, struct.pack("<IQ", 0, max_bytes))
    buffer, size = struct.unpack("<QQ", answer[:16])
    if not buffer or size < max_bytes:
        raise LinkError(endpoint, msg("The worker {worker} could not lend {size} MiB to measure its link.",
                                      worker=endpoint, size=max_bytes >> 20))
    try:
        (base,) = struct.unpack("<Q", conn.ask(BUFFER_GET_BASE, struct.pack("<Q", buffer))[:8])
        n = min(FIRST_PROBE_BYTES, max_bytes)
        while True:
            payload = _tensor(buffer, base, n) + b"\0" + (0).to_bytes(8, "little") + bytes(n)
            t0 = time.perf_counter()
            conn.send(SET_TENSOR, payload)
            conn.ask(DEVICE_COUNT)  # the worker answers once the tensor is in
            took = time.perf_counter() - t0
            if took >= PROBE_SECONDS or n >= max_bytes:
                break
            n = min(max_bytes, n * 4 if took < PROBE_SECONDS / 8 else n * 2)
    finally:
        conn.send(FREE_BUFFER, struct.pack("<Q", buffer))
    sending = max(took - rtt, 1e-6)
    return len(payload) * 8 / sending / 1e6, n


# ------------------------------------------------------------------ the record
def record_path() -> Path:
    return paths.data_dir() / RECORD


def record_file(path: Path | None = None) -> JsonRecord[dict[str, Any]]:
    """`worker-links.json` (docs/records.md): per `endpoint#engine build`, the last Link."""
    return keyed_record(path or record_path(), msg("record of the links to other computers"), RECORD_VERSION)


def _key(endpoint: str, build: str) -> str:
    return f"{endpoint}#{build}"


def recorded(endpoint: str, build: str, *, path: Path | None = None, now: float | None = None) -> Link | None:
    """The kept Link to `endpoint` for this engine build, if it is younger than MAX_AGE_S."""
    entry = record_file(path).read().get(_key(endpoint, build))
    try:
        found = Link(**entry) if isinstance(entry, dict) else None
    except TypeError:
        return None  # an entry of another shape: measured again, not a damaged file
    if found is None or (now if now is not None else time.time()) - found.measured_at > MAX_AGE_S:
        return None
    return found


def remember(found: Link, build: str, *, path: Path | None = None) -> None:
    record_file(path).update(lambda entries: {**entries, _key(found.endpoint, build): asdict(found)})


def link_to(endpoint: str, build: str, *, path: Path | None = None, measure_now: bool = True) -> Link | None:
    """The link to `endpoint`: kept (a day at most), else measured and kept; None when there
    is none kept and `measure_now` is False. A LinkError when the measurement fails."""
    kept = recorded(endpoint, build, path=path)
    if kept is not None or not measure_now:
        return kept
    found = measure(endpoint)
    remember(found, build, path=path)
    return found
