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
  a few packets;
- the worker's compute rate, when the caller gives this computer's figure to compare with
  (`reference`, core/rpc/worker_rate.py): one matrix times a vector on the worker's first
  device, on the same connection after the bandwidth; `rate_ratio` is the worker's figure
  over this computer's. A failure there leaves the round trip and the bandwidth standing:
  the ratio stays unknown and `rate_error` says why.

Nothing here starts a process (this computer's figure does, once per engine build: the
caller's `reference`): the probe is a plain TCP client, and every failure to reach the worker
is a LinkError naming it. A measurement is remembered per worker and engine build
(`worker-links.json`, one records.JsonRecord) and taken again once it is a day old.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.messages import Message, from_data, msg, to_data
from draftwise.core.records import JsonRecord, keyed_record
from draftwise.core.rpc import wire, worker_rate

ROUND_TRIPS = 7
PROBE_SECONDS = 0.25
FIRST_PROBE_BYTES = 256 << 10
MAX_PROBE_BYTES = 32 << 20
TIMEOUT = 10.0
RECORD, RECORD_VERSION = "worker-links.json", 1
MAX_AGE_S = 24 * 3600.0  # a link measured longer ago is measured again (Wi-Fi moves)
# This computer's compute figure (worker_rate.here), asked only when a worker's is measured.
Reference = Callable[[], float]


class LinkError(wire.WorkerMeasureError):
    """The worker could not be measured; `message` says which and why."""


@dataclass(frozen=True)
class Link:
    endpoint: str
    rtt_ms: float  # median round trip of one small command
    mbit_s: float  # payload bandwidth towards the worker
    probe_bytes: int  # the largest transfer timed
    measured_at: float = 0.0  # time.time() when measured
    # The worker's compute rate over this computer's, on the same product (worker_rate.py);
    # None: not measured (an older record, no reference given) or it failed (`rate_error`).
    rate_ratio: float | None = None
    compute_gb_s: float | None = None  # the worker's figure itself, Q4_K GB a second
    rate_error: Message | None = None  # why the rate is unknown, a clause naming no worker

    def to_json(self) -> dict[str, object]:
        return {"endpoint": self.endpoint, "rtt_ms": round(self.rtt_ms, 3), "mbit_s": round(self.mbit_s, 1),
                "rate_ratio": None if self.rate_ratio is None else round(self.rate_ratio, 3),
                "compute_gb_s": None if self.compute_gb_s is None else round(self.compute_gb_s, 2)}

    def rate(self, here: float) -> float | None:
        """The worker's Q4_K bytes a second when this computer's are `here`; None: unknown."""
        return here * self.rate_ratio if self.rate_ratio else None


def _tensor(buffer: int, data: int, nbytes: int) -> bytes:
    return wire.tensor(1, wire.GGML_TYPE_I8, buffer, data, (nbytes,), (1,), name=b"draftwise-link-probe")


def measure(endpoint: str, *, timeout: float = TIMEOUT, max_bytes: int = MAX_PROBE_BYTES,
            reference: Reference | None = None) -> Link:
    """Round trip and bandwidth to the worker at `endpoint` (host:port), or a LinkError; with
    `reference` (this computer's compute figure), the worker's compute rate too."""
    host, _, port = endpoint.rpartition(":")
    try:
        conn = wire.Conn(host, int(port), timeout)
    except (OSError, ValueError) as exc:
        raise LinkError(endpoint, msg("The worker {worker} did not answer ({error}); check that ggml-rpc-server "
                                      "runs there and the network lets it through.",
                                      worker=endpoint, error=str(exc))) from exc
    compute: float | None = None
    failed: Message | None = None
    try:
        version = conn.hello()
        if not version:
            raise LinkError(endpoint, msg("The worker {worker} answered with something that is not the RPC "
                                          "protocol.", worker=endpoint))
        rtt = conn.round_trip(ROUND_TRIPS - 1)  # ROUND_TRIPS asks, the first left out
        mbit_s, probe_bytes = _bandwidth(conn, endpoint, rtt, max_bytes)
        if reference is not None:
            try:
                compute = worker_rate.compute_rate(conn, endpoint, version, rtt)
            except worker_rate.RateError as exc:
                failed = exc.message
    except (OSError, ConnectionError) as exc:
        raise LinkError(endpoint, msg("The connection to the worker {worker} broke while it was measured "
                                      "({error}).", worker=endpoint, error=str(exc))) from exc
    finally:
        conn.close()
    found = Link(endpoint, rtt * 1000, mbit_s, probe_bytes, time.time())
    if compute is not None and reference is not None:
        # Asked after the worker's connection is closed: it starts a worker here, for seconds.
        try:
            here = reference()
        except worker_rate.RateError as exc:
            failed = exc.message
        else:
            return replace(found, rate_ratio=compute / here, compute_gb_s=compute / 1e9)
    return replace(found, compute_gb_s=None if compute is None else compute / 1e9, rate_error=failed)


def _bandwidth(conn: wire.Conn, endpoint: str, rtt: float, max_bytes: int) -> tuple[float, int]:
    answer = conn.ask(wire.ALLOC_BUFFER, struct.pack("<IQ", 0, max_bytes))
    buffer, size = struct.unpack("<QQ", answer[:16])
    if not buffer or size < max_bytes:
        raise LinkError(endpoint, msg("The worker {worker} could not lend {size} MiB to measure its link.",
                                      worker=endpoint, size=max_bytes >> 20))
    try:
        (base,) = struct.unpack("<Q", conn.ask(wire.BUFFER_GET_BASE, struct.pack("<Q", buffer))[:8])
        n = min(FIRST_PROBE_BYTES, max_bytes)
        while True:
            payload = _tensor(buffer, base, n) + b"\0" + (0).to_bytes(8, "little") + bytes(n)
            t0 = time.perf_counter()
            conn.send(wire.SET_TENSOR, payload)
            conn.ask(wire.DEVICE_COUNT)  # the worker answers once the tensor is in
            took = time.perf_counter() - t0
            if took >= PROBE_SECONDS or n >= max_bytes:
                break
            n = min(max_bytes, n * 4 if took < PROBE_SECONDS / 8 else n * 2)
    finally:
        conn.send(wire.FREE_BUFFER, struct.pack("<Q", buffer))
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
        found = _from_json(entry) if isinstance(entry, dict) else None
    except (TypeError, ValueError):
        return None  # an entry of another shape: measured again, not a damaged file
    if found is None or (now if now is not None else time.time()) - found.measured_at > MAX_AGE_S:
        return None
    return found


def _from_json(entry: dict[str, Any]) -> Link:
    # An entry from before the compute rate has no rate fields: it reads with none.
    error = entry.get("rate_error")
    return Link(**{**entry, "rate_error": from_data(error) if error is not None else None})


def remember(found: Link, build: str, *, path: Path | None = None) -> None:
    entry = {**asdict(found), "rate_error": None if found.rate_error is None else to_data(found.rate_error)}
    record_file(path).update(lambda entries: {**entries, _key(found.endpoint, build): entry})


def link_to(endpoint: str, build: str, *, path: Path | None = None, measure_now: bool = True,
            reference: Reference | None = None) -> Link | None:
    """The link to `endpoint`: kept (a day at most), else measured and kept; None when there
    is none kept and `measure_now` is False. With `reference`, a kept link whose compute rate
    was never tried (an older record) is measured again. A LinkError when it fails."""
    kept = recorded(endpoint, build, path=path)
    tried = kept is not None and (reference is None or kept.rate_ratio is not None or kept.rate_error is not None)
    if tried or not measure_now:
        return kept
    failed = _FAILED.get(endpoint)
    if failed is not None and time.monotonic() - failed[0] < FAILED_KEPT_S:
        raise failed[1]  # asked again within minutes (every re-plan): the same answer, no new wait
    try:
        found = measure(endpoint, reference=reference)
    except LinkError as exc:
        _FAILED[endpoint] = (time.monotonic(), exc)
        raise
    _FAILED.pop(endpoint, None)
    remember(found, build, path=path)
    return found


# A link that could not be measured, by worker, for this process: the window plans again at
# every change of its inputs, and a worker that drops the probe can make each try wait for
# the timeout. "Check again" (forget_failure) asks at once.
FAILED_KEPT_S = 120.0
_FAILED: dict[str, tuple[float, LinkError]] = {}


def forget_failure(endpoint: str | None = None) -> None:
    """Measure `endpoint` (every worker: None) at the next ask, though it failed minutes ago."""
    if endpoint is None:
        _FAILED.clear()
    else:
        _FAILED.pop(endpoint, None)
