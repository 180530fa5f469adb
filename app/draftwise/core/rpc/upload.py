"""The first upload to a worker: how much of its share of the weights has been sent, and how
long the rest will take (issue 29, item 5).

While the engine loads, it sends each worker the weights the plan put there (SET_TENSOR over
one TCP connection per worker, ggml-rpc.cpp); the engine itself prints nothing about it (its
load-progress callback goes to the router only, tools/server/server-context.cpp), so the
truthful source is the engine's own sockets: on Linux `ss -tinp` gives, per connection, the
bytes the worker has acknowledged (`bytes_acked`, from the kernel's tcp_info). Where that
cannot be read (no `ss`: macOS, Windows, a minimal container), the time left is the expected
one, from the link measured before the launch (core/rpc/link.py), and says so.

The total is the plan's: the worker's weights and output head (`DeviceUse.weights + output`).
A worker whose tensor cache (`ggml-rpc-server -c`) already holds the big tensors is only sent
their hashes, so the bytes sent can stop short of the total: the total is "up to".
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from draftwise.core.messages import Message, msg
from draftwise.core.readable import human_bytes, human_duration

SAMPLE_EVERY_S = 1.0  # how often the sockets are read while the engine loads
RATE_WINDOW_S = 5.0  # the rate is the bytes of the last few seconds (a link's speed moves)
SS_TIMEOUT_S = 2.0

_PID = re.compile(r"pid=(\d+)")
_ACKED = re.compile(r"\bbytes_acked:(\d+)")
_SENT = re.compile(r"\bbytes_sent:(\d+)")


@dataclass(frozen=True)
class Upload:
    """One worker's share of the weights, as planned: what the engine will send it."""

    endpoint: str  # host:port, as in --rpc
    total: int  # bytes
    mbit_s: float | None = None  # its link's measured bandwidth, when known

    def to_json(self) -> dict:
        return {"endpoint": self.endpoint, "total": self.total, "mbit_s": self.mbit_s}


def uploads(per_device: Iterable[object], links: Iterable[object] = ()) -> tuple[Upload, ...]:
    """The uploads of a plan: each worker's weights and output head (DeviceUse rows with a
    `worker`), with its link's bandwidth from `links` (link.Link) where measured."""
    mbit = {getattr(lk, "endpoint", ""): getattr(lk, "mbit_s", None) for lk in links}
    totals: dict[str, int] = {}
    for d in per_device:
        ep = getattr(d, "worker", None)
        if ep:
            totals[ep] = totals.get(ep, 0) + int(getattr(d, "weights", 0)) + int(getattr(d, "output", 0))
    return tuple(Upload(ep, n, mbit.get(ep)) for ep, n in totals.items() if n > 0)


# ------------------------------------------------------------------ the engine's sockets
def ss_argv() -> list[str] | None:
    """The command that lists the established TCP connections with their tcp_info and owner
    (iproute2's `ss`); None where there is none (not Linux, or not installed)."""
    if not sys.platform.startswith("linux"):
        return None
    ss = shutil.which("ss") or next((p for p in ("/usr/sbin/ss", "/sbin/ss", "/usr/bin/ss")
                                     if shutil.which(p)), None)  # fmt: skip
    return [ss, "-tinpH", "state", "established"] if ss else None


def parse_ss(text: str, pids: Iterable[int]) -> dict[tuple[str, int], int]:
    """Bytes sent and acknowledged on each connection of the processes `pids`, by peer
    (address, port), from `ss -tinpH state established`: a line per socket (Recv-Q, Send-Q,
    local, peer, users:((…,pid=N,…))) followed by an indented line of tcp_info."""
    wanted = {int(p) for p in pids}
    out: dict[tuple[str, int], int] = {}
    peer: tuple[str, int] | None = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            peer = None
            cols = line.split()
            owners = {int(p) for p in _PID.findall(line)}
            if len(cols) >= 4 and owners & wanted:
                host, _, port = cols[3].rpartition(":")
                if port.isdigit():
                    peer = (host.strip("[]"), int(port))
            continue
        if peer is not None:
            m = _ACKED.search(line) or _SENT.search(line)
            if m:
                out[peer] = out.get(peer, 0) + int(m.group(1))
            peer = None
    return out


def peer_of(endpoint: str) -> tuple[str, int] | None:
    """The (address, port) the engine's socket to `endpoint` shows: a name resolved as the
    engine resolves it (IPv4); None when it does not resolve."""
    host, _, port = endpoint.rpartition(":")
    if not port.isdigit():
        return None
    try:
        addr = socket.gethostbyname(host)
    except OSError:
        return None
    return addr, int(port)


def sent_by_endpoint(acked: Mapping[tuple[str, int], int], peers: Mapping[str, tuple[str, int] | None],
                     ) -> dict[str, int]:  # fmt: skip
    """Each worker's bytes from `parse_ss`'s connections (`peers`: endpoint -> its peer)."""
    return {ep: acked.get(peer, 0) for ep, peer in peers.items() if peer is not None}


def read_sent(pid: int, peers: Mapping[str, tuple[str, int] | None]) -> dict[str, int] | None:
    """Bytes acknowledged by each worker on the engine `pid`'s connections; None when they
    cannot be read here (then the watch shows the expected time from the link)."""
    argv = ss_argv()
    if argv is None:
        return None
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=SS_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return sent_by_endpoint(parse_ss(out.stdout, [pid]), peers)


# ------------------------------------------------------------------ progress
@dataclass(frozen=True)
class UploadProgress:
    """Where the upload stands: bytes sent of the total (to every worker), the rate of the
    last seconds and the time left; `measured` False when no socket could be read (the time
    left is then the expected one from the measured link, and `sent` is unknown: 0)."""

    sent: int
    total: int
    bytes_per_s: float | None
    seconds_left: float | None
    measured: bool
    workers: tuple[str, ...]

    @property
    def done(self) -> bool:
        return self.measured and self.sent >= self.total

    def text(self) -> Message:
        where = ", ".join(self.workers)
        if not self.measured:
            if self.seconds_left is None:
                return msg("Sending up to {total} of weights to {workers}…", total=human_bytes(self.total),
                           workers=where)
            return msg("Sending up to {total} of weights to {workers}: about {left} left at the measured link speed.",
                       total=human_bytes(self.total), workers=where, left=human_duration(self.seconds_left))
        if self.done:
            return msg("Sent {sent} of weights to {workers}; the engine is getting ready.",
                       sent=human_bytes(self.sent), workers=where)
        if self.bytes_per_s is None or self.seconds_left is None:
            return msg("Sending weights to {workers}: {sent} of up to {total}.", workers=where,
                       sent=human_bytes(self.sent), total=human_bytes(self.total))
        return msg("Sending weights to {workers}: {sent} of up to {total}, {rate}/s, about {left} left.",
                   workers=where, sent=human_bytes(self.sent), total=human_bytes(self.total),
                   rate=human_bytes(self.bytes_per_s), left=human_duration(self.seconds_left))


class UploadWatch:
    """Turns socket readings over time into UploadProgress. Pure: the caller reads the sockets
    (`read_sent`, or a QProcess running `ss_argv()`) and gives the time."""

    def __init__(self, planned: Sequence[Upload], started_at: float) -> None:
        self.planned = tuple(planned)
        self.started_at = started_at
        self.total = sum(u.total for u in self.planned)
        self.peers = {u.endpoint: peer_of(u.endpoint) for u in self.planned}
        self._samples: list[tuple[float, int]] = []

    @property
    def active(self) -> bool:
        return self.total > 0

    def update(self, now: float, sent: Mapping[str, int] | None) -> UploadProgress:
        workers = tuple(u.endpoint for u in self.planned)
        if sent is None:
            return UploadProgress(0, self.total, None, self._expected_left(now), False, workers)
        done = sum(min(sent.get(u.endpoint, 0), u.total) for u in self.planned)
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW_S:
            self._samples.pop(0)
        (t0, b0), (t1, b1) = self._samples[0], self._samples[-1]
        rate = (b1 - b0) / (t1 - t0) if t1 > t0 and b1 > b0 else None
        left = max(self.total - done, 0) / rate if rate else None
        return UploadProgress(done, self.total, rate, left, True, workers)

    def _expected_left(self, now: float) -> float | None:
        """The time left were every worker's link as fast as measured (the workers' shares go
        one after the other, as the engine loads the tensors in order)."""
        if any(u.mbit_s is None or u.mbit_s <= 0 for u in self.planned):
            return None
        seconds = sum(u.total * 8 / (u.mbit_s * 1e6) for u in self.planned if u.mbit_s)
        return max(seconds - (now - self.started_at), 0.0)
