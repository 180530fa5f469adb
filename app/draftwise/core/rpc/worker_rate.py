"""How fast a worker computes, against this computer, measured through the RPC protocol
(issue 29, item 1): the ratio split_speed predicts a worker's layers with.

Decoding a token is, layer after layer, a matrix of weights times one vector: the time is the
weights read and multiplied. The probe has the worker do exactly that, on its first device
(the one the engine gives layers first: its accelerator, else its processor), with nothing
large crossing the link:

- ALLOC_BUFFER a matrix of Q4_K rows (MATRIX_BYTES, at most a quarter of what the device has
  free: GET_DEVICE_MEMORY), BUFFER_CLEAR it to zeros on the worker (the kernels do the same
  work whatever the values, and a cleared page is real memory, not the shared zero page);
- GRAPH_COMPUTE one MUL_MAT node, the matrix times an F32 vector (ggml-rpc.cpp
  `graph_compute`: the tensors go by id, sources first, every one inside the buffer), sent
  `runs` times without waiting (it has no answer in protocol 7.0.0) and closed by a
  DEVICE_COUNT, which answers once the worker is done: the time less one round trip is
  `runs` products. The runs grow until they take PROBE_SECONDS; the best of REPEATS is kept.

Q4_K because the rate it gives is what speed.Throughput.cpu counts (Q4_K bytes a second; a
Q4_K_M file is mostly Q4_K), and a row as wide as the speed probe's model's (4096). The same
graph on a `ggml-rpc-server` this computer starts on 127.0.0.1, lending its processor with the
engine's threads, is this computer's figure for the same work (`here`, kept per processor and
engine build in `speed-probe.json`); the worker's rate is Throughput.cpu x (the worker's
figure / this one). Every failure is a RateError naming the worker: its rate stays unknown
(this computer's, as before) and the plan says so.

The graph is sent only to a worker that answers exactly wire.PROTOCOL: another build may
number ggml's operations otherwise, and a graph it cannot compute ends the worker (an assert).
The engine sends its own graphs to any worker of the same major and minor version without
asking what it supports (ggml-rpc.cpp `supports_op` answers yes), so a worker that runs the
model runs this product.
"""

from __future__ import annotations

import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import identity
from draftwise.core.address import LOOPBACK
from draftwise.core.errors import FieldError
from draftwise.core.machine import speed
from draftwise.core.messages import msg
from draftwise.core.processes import process_group
from draftwise.core.rpc import share, wire

ROW = 4096  # values a row: the speed probe's model's width (speed._E)
MATRIX_BYTES = 256 << 20  # more than a processor's cache or a graphics card's L2
MIN_MATRIX_BYTES = 32 << 20  # less would be read from a cache, not memory
FREE_SHARE = 4  # the matrix takes at most a quarter of the device's free memory
PROBE_SECONDS = 0.2
MAX_RUNS = 512
REPEATS = 3
ROUND_TRIPS = 5
# A timing waits about 2 x PROBE_SECONDS, or one product on a slow worker (256 MiB at 50 MB/s
# is 5 s); a socket read that waits longer than this fails.
TIMEOUT = 30.0
HERE_DEVICE = "CPU"  # the name ggml gives the processor: this computer's figure is the processor's
HERE_KIND = "rpc-mul-mat"  # the figure's source in speed-probe.json (beside the engine probe's)


class RateError(wire.WorkerMeasureError):
    """The compute rate could not be measured; `message` says why, in a clause."""


@dataclass(frozen=True)
class MatMul:
    """Where the product's tensors lie in the probe's buffer, and its GRAPH_COMPUTE input."""

    rows: int
    matrix_bytes: int
    size: int  # the buffer's bytes: matrix, vector and result, each aligned
    vector_at: int  # offsets from the buffer's base
    result_at: int

    @classmethod
    def fitting(cls, budget: int, alignment: int, row: int = ROW) -> MatMul:
        """The most rows whose product fits `budget` bytes."""
        row_bytes = row // wire.Q4_K_BLOCK * wire.Q4_K_BYTES
        return cls.of_rows(max(1, (budget - row * 4 - 2 * alignment) // (row_bytes + 4)), alignment, row)

    @classmethod
    def of_rows(cls, rows: int, alignment: int, row: int = ROW) -> MatMul:
        matrix = rows * (row // wire.Q4_K_BLOCK * wire.Q4_K_BYTES)
        vector_at = _align(matrix, alignment)
        result_at = _align(vector_at + row * 4, alignment)
        return cls(rows, matrix, result_at + rows * 4, vector_at, result_at)

    def graph(self, buffer: int, base: int, device: int = 0, row: int = ROW) -> bytes:
        """One MUL_MAT node: result (rows x 1, F32) = matrix (row x rows, Q4_K) x vector (row, F32)."""
        row_bytes = row // wire.Q4_K_BLOCK * wire.Q4_K_BYTES
        matrix = wire.tensor(1, wire.GGML_TYPE_Q4_K, buffer, base, (row, self.rows), (wire.Q4_K_BYTES, row_bytes),
                             name=b"draftwise-rate-a")
        vector = wire.tensor(2, wire.GGML_TYPE_F32, buffer, base + self.vector_at, (row, 1), (4, row * 4),
                             name=b"draftwise-rate-x")
        result = wire.tensor(3, wire.GGML_TYPE_F32, buffer, base + self.result_at, (self.rows, 1),
                             (4, self.rows * 4), op=wire.GGML_OP_MUL_MAT, src=(1, 2),
                             flags=wire.GGML_TENSOR_FLAG_COMPUTE, name=b"draftwise-rate-y")
        return wire.graph(device, [3], [matrix, vector, result])


def _align(n: int, alignment: int) -> int:
    return -(-n // max(alignment, 1)) * max(alignment, 1)


def compute_rate(conn: wire.Conn, endpoint: str, version: tuple[int, ...], rtt: float, *,
                 max_bytes: int = MATRIX_BYTES) -> float:
    """Q4_K bytes a second the worker behind `conn` (HELLO answered with `version`) multiplies
    on its first device, one round trip `rtt` (seconds) taken off each timing; a RateError."""
    if version != wire.PROTOCOL:
        raise RateError(endpoint, msg("it runs protocol {version}, whose operations this Draftwise does not number",
                                      version=".".join(map(str, version))))
    try:
        free, _total = struct.unpack("<QQ", conn.ask(wire.GET_DEVICE_MEMORY, struct.pack("<I", 0))[:16])
        budget = min(max_bytes, free // FREE_SHARE)
        if budget < MIN_MATRIX_BYTES:
            raise RateError(endpoint, msg("it has {free} MiB free, and the test needs {need} MiB free",
                                          free=free >> 20, need=MIN_MATRIX_BYTES * FREE_SHARE >> 20))
        (alignment,) = struct.unpack("<Q", conn.ask(wire.GET_ALIGNMENT, struct.pack("<I", 0))[:8])
        mm = MatMul.fitting(budget, alignment)
        buffer, size = struct.unpack("<QQ", conn.ask(wire.ALLOC_BUFFER, struct.pack("<IQ", 0, mm.size))[:16])
        if not buffer or size < mm.size:
            if buffer:
                conn.send(wire.FREE_BUFFER, struct.pack("<Q", buffer))
            raise RateError(endpoint, msg("it could not lend {size} MiB for the test", size=mm.size >> 20))
        try:
            (base,) = struct.unpack("<Q", conn.ask(wire.BUFFER_GET_BASE, struct.pack("<Q", buffer))[:8])
            conn.send(wire.BUFFER_CLEAR, struct.pack("<QB", buffer, 0))
            seconds = _products(conn, mm.graph(buffer, base), rtt)
        finally:
            conn.send(wire.FREE_BUFFER, struct.pack("<Q", buffer))
        conn.ask(wire.DEVICE_COUNT)  # the buffer is gone before the connection closes
    except (OSError, ConnectionError) as exc:
        raise RateError(endpoint, msg("it stopped answering during the test ({error})", error=str(exc))) from exc
    return mm.matrix_bytes / seconds


def _products(conn: wire.Conn, graph: bytes, rtt: float) -> float:
    """Seconds one product takes: the best of REPEATS timings of `runs` products in a row."""

    def timed(runs: int) -> float:
        t0 = time.perf_counter()
        for _ in range(runs):
            conn.send(wire.GRAPH_COMPUTE, graph)
        conn.ask(wire.DEVICE_COUNT)
        return max(time.perf_counter() - t0 - rtt, 1e-9)

    timed(1)  # the first pays the pages' first touch and the worker's threads starting
    runs = 1
    took = timed(runs)
    while took < PROBE_SECONDS and runs < MAX_RUNS:
        runs = min(MAX_RUNS, runs * 4 if took < PROBE_SECONDS / 8 else runs * 2)
        took = timed(runs)
    best = took / runs
    for _ in range(REPEATS - 1):
        best = min(best, timed(runs) / runs)
    return best


def measure(endpoint: str, *, timeout: float = TIMEOUT, max_bytes: int = MATRIX_BYTES) -> float:
    """The compute rate of the worker at `endpoint` on its own connection (Q4_K bytes a second)."""
    host, _, port = endpoint.rpartition(":")
    try:
        conn = wire.Conn(host, int(port), timeout)
    except (OSError, ValueError) as exc:
        raise RateError(endpoint, msg("it did not answer ({error})", error=str(exc))) from exc
    try:
        version = conn.hello()
        rtt = conn.round_trip(ROUND_TRIPS)
        return compute_rate(conn, endpoint, version, rtt, max_bytes=max_bytes)
    except (OSError, ConnectionError) as exc:
        raise RateError(endpoint, msg("it stopped answering during the test ({error})", error=str(exc))) from exc
    finally:
        conn.close()


# ------------------------------------------------------------------ this computer's figure
def _key(binary: Path) -> str:
    return f"{identity.processor_key()}#{identity.engine_build_key(binary)}#{HERE_KIND}#{speed.PROBE_KIND}"


def here(binary: Path, *, threads: int | None = None, path: Path | None = None) -> float:
    """This computer's figure for the probe's product (Q4_K bytes a second): kept per processor
    and engine build, else measured (`measure_here`) and kept by speed.measured_once, the one
    writer of `speed-probe.json` (a figure taken while other work held the processor is used,
    not kept). A RateError when it cannot be."""
    n = threads or speed.cores()
    tp = speed.measured_once(_key(binary), lambda: speed.Throughput(measure_here(binary, threads=n), HERE_KIND, n),
                             path=path)
    if tp is None:  # measure_here raises rather than find nothing
        raise RateError(LOOPBACK, msg("this computer's own figure could not be taken"))
    return tp.cpu


def measure_here(binary: Path, *, threads: int | None = None) -> float:
    """The probe's product on a `ggml-rpc-server` started beside `binary` on 127.0.0.1, lending
    the processor only (`--device CPU`: a GPU build's worker would lend its card first) with
    the engine's threads, and stopped after. A RateError naming this computer."""
    port = process_group.free_port()
    with tempfile.TemporaryDirectory(prefix="draftwise-rate-") as tmp:
        try:
            worker = share.start(share.worker_binary(binary), LOOPBACK, port, log_path=Path(tmp) / "worker.log",
                                 threads=threads or speed.cores(), devices=(HERE_DEVICE,))
        except FieldError as exc:
            raise RateError(f"{LOOPBACK}:{port}", msg("this computer's own worker did not start ({error})",
                                                      error=exc.message)) from exc
        try:
            return measure(worker.endpoint)
        except RateError as exc:
            raise RateError(worker.endpoint, msg("this computer's own figure could not be taken: {why}",
                                                 why=exc.message)) from exc
        finally:
            worker.stop()
