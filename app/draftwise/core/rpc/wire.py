"""The RPC protocol `ggml-rpc-server` speaks, as far as Draftwise speaks it itself: the
command and type numbers, the packed tensor, one connection, and a graph to compute.

From the pinned engine (ggml/src/ggml-rpc/ggml-rpc.cpp, protocol 7.0.0): a request is
`| cmd (1 byte) | size (8 bytes, LE) | data |`, an answer `| size | data |`; the first command
of a connection is HELLO. Commands that change the worker (SET_TENSOR, BUFFER_CLEAR,
FREE_BUFFER, GRAPH_COMPUTE) have no answer in this version: the next command that answers
(DEVICE_COUNT) comes back once they are done, since the worker serves one connection's
commands in turn. A command the worker cannot carry out closes the connection.

The operation and type numbers are ggml's enums (ggml/include/ggml.h) of this build: they move
when ggml adds an operation, which the protocol's patch version follows (ggml-rpc.h asserts
GGML_OP_COUNT), so a graph is sent only to a worker that answers exactly PROTOCOL.
tests/test_worker_rate.py reads them from the pinned source.
"""

from __future__ import annotations

import socket
import statistics
import struct
import time
from collections.abc import Sequence

from draftwise.core.messages import Message

PROTOCOL = (7, 0, 0)  # RPC_PROTO_{MAJOR,MINOR,PATCH}_VERSION of the pinned engine

# Command numbers (enum rpc_cmd).
ALLOC_BUFFER = 0
GET_ALIGNMENT = 1
BUFFER_GET_BASE = 3
FREE_BUFFER = 4
BUFFER_CLEAR = 5
SET_TENSOR = 6
GRAPH_COMPUTE = 10
GET_DEVICE_MEMORY = 11
HELLO = 14
DEVICE_COUNT = 15
CONN_CAPS = 24  # RPC_CONN_CAPS_SIZE (ggml-rpc/transport.h): zeros ask for no transport upgrade

# ggml's numbers (enum ggml_type, enum ggml_op).
GGML_TYPE_F32 = 0
GGML_TYPE_Q4_K = 12
GGML_TYPE_I8 = 24
GGML_OP_NONE = 0
GGML_OP_MUL_MAT = 29
# enum ggml_tensor_flag: a node without it is skipped (ggml-cpu.c `ggml_graph_compute_thread`;
# ggml_build_forward_expand sets it on every node of the engine's graphs).
GGML_TENSOR_FLAG_COMPUTE = 16
Q4_K_BLOCK, Q4_K_BYTES = 256, 144  # values and bytes of one Q4_K block (ggml-common.h block_q4_K)

# struct rpc_tensor, packed: id, type, buffer, ne[4], nb[4], op, op_params[16], flags, src[10],
# view_src, view_offs, data, name[64], use_count (296 bytes, a multiple of 8 as asserted there).
TENSOR = struct.Struct("<QIQ4I4II16ii10QQQQ64si")
assert TENSOR.size == 296
MAX_SRC = 10


class WorkerMeasureError(Exception):
    """A worker could not be measured (link.LinkError, worker_rate.RateError); `message`
    says which and why."""

    def __init__(self, endpoint: str, message: Message) -> None:
        super().__init__(str(message))
        self.endpoint = endpoint
        self.message = message


def tensor(tid: int, ggml_type: int, buffer: int, data: int, ne: Sequence[int], nb: Sequence[int], *,
           op: int = GGML_OP_NONE, src: Sequence[int] = (), flags: int = 0, name: bytes = b"",
           use_count: int = 0) -> bytes:
    """One rpc_tensor: `ne` and `nb` of up to 4 dimensions (the rest 1 and the last stride),
    `src` the ids of its sources. `data` must lie in `buffer` on the worker: the worker
    asserts it (deserialize_tensor) and a failed assert ends the worker."""
    ne4 = (*ne, *([1] * (4 - len(ne))))
    nb4 = (*nb, *([nb[-1] * ne4[len(nb) - 1]] * (4 - len(nb))))
    srcs = (*src, *([0] * (MAX_SRC - len(src))))
    return TENSOR.pack(tid, ggml_type, buffer, *ne4, *nb4, op, *([0] * 16), flags, *srcs, 0, 0, data, name,
                       use_count)


def graph(device: int, nodes: Sequence[int], tensors: Sequence[bytes]) -> bytes:
    """GRAPH_COMPUTE's input (serialize_graph): | device (4) | n_nodes (4) | node ids (8 each) |
    n_tensors (4) | tensors (296 each) |; each node's sources are found among `tensors` by id."""
    return (struct.pack("<II", device, len(nodes)) + struct.pack(f"<{len(nodes)}Q", *nodes)
            + struct.pack("<I", len(tensors)) + b"".join(tensors))


class Conn:
    """One TCP connection to a worker (no Nagle: the probes time single small commands)."""

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

    def round_trip(self, samples: int) -> float:
        """The median round trip of DEVICE_COUNT over `samples` timings, seconds; one ask
        before them is left out (the worker's thread for the connection starting)."""
        took = []
        for _ in range(samples + 1):
            t0 = time.perf_counter()
            self.ask(DEVICE_COUNT)
            took.append(time.perf_counter() - t0)
        return statistics.median(took[1:])

    def hello(self) -> tuple[int, ...]:
        """The worker's protocol version; () for an answer that is not the protocol's."""
        body = self.ask(HELLO, bytes(CONN_CAPS))
        return tuple(body[:3]) if len(body) >= 3 else ()

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
