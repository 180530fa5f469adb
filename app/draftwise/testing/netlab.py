"""Another computer on a real network path, made on this machine for tests and benches.

A worker runs in a network namespace of its own, joined to this one by a veth pair. The
pair's bandwidth is shaped with `tc` (tbf on both ends: this kernel has no netem), and the
latency is added by a TCP relay this module owns (`Relay`: each chunk is passed on `delay_ms`
after it arrived, in both directions, without waiting for the one before it, so the delay
does not throttle the bandwidth). Traffic goes only to the namespace's own link-local
address (169.254.231.0/24) and to 127.0.0.1.

Needs root (CI runs as root) and `ip`/`tc` (iproute2): `available()` says why not otherwise.
Everything made is removed on `close()`, and a namespace's processes are killed with it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SUBNET = "169.254.231"
_counter = itertools.count(1)


@dataclass(frozen=True)
class Profile:
    name: str
    mbit: float  # bandwidth each way (tbf)
    delay_ms: float  # one way, added by the relay (round trip: twice this)


# The link profiles of issue 29: wired gigabit, fast Ethernet / good Wi-Fi, poor Wi-Fi.
PROFILES = (Profile("1 Gbit, 0.2 ms", 1000, 0.1), Profile("100 Mbit, 2 ms", 100, 1.0),
            Profile("20 Mbit, 10 ms", 20, 5.0))  # fmt: skip


def available() -> str | None:
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            return f"`{tool}` is missing (Debian: iproute2)"
    return None


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


@dataclass
class Namespace:
    """One namespace with a veth link to this one, shaped to `profile`'s bandwidth."""

    profile: Profile
    name: str = ""
    host_ip: str = ""
    ns_ip: str = ""
    _host_dev: str = ""
    procs: list[subprocess.Popen] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = next(_counter) + (os.getpid() % 50) * 4
        self.name = f"dwlab{os.getpid()}x{n}"
        self._host_dev = f"dwh{os.getpid() % 100000}x{n}"[:15]
        ns_dev = f"dwn{os.getpid() % 100000}x{n}"[:15]
        octet = (n % 60) * 4
        self.host_ip, self.ns_ip = f"{SUBNET}.{octet + 1}", f"{SUBNET}.{octet + 2}"
        _run("ip", "netns", "add", self.name)
        try:
            _run("ip", "link", "add", self._host_dev, "type", "veth", "peer", "name", ns_dev)
            _run("ip", "link", "set", ns_dev, "netns", self.name)
            _run("ip", "addr", "add", f"{self.host_ip}/30", "dev", self._host_dev)
            _run("ip", "link", "set", self._host_dev, "up")
            _run("ip", "-n", self.name, "addr", "add", f"{self.ns_ip}/30", "dev", ns_dev)
            _run("ip", "-n", self.name, "link", "set", ns_dev, "up")
            _run("ip", "-n", self.name, "link", "set", "lo", "up")
            rate = f"{self.profile.mbit}mbit"
            # burst: at least one rate-tick's worth (and a 64 KiB floor), as tbf needs.
            burst = f"{max(64, int(self.profile.mbit * 1000 / 8 / 250))}kb"
            _run("tc", "qdisc", "add", "dev", self._host_dev, "root", "tbf", "rate", rate, "burst", burst,
                 "latency", "100ms")
            _run("ip", "netns", "exec", self.name, "tc", "qdisc", "add", "dev", ns_dev, "root", "tbf", "rate",
                 rate, "burst", burst, "latency", "100ms")
        except subprocess.CalledProcessError:
            self.close()
            raise

    def start(self, argv: list[str], **kw) -> subprocess.Popen:
        """A process inside the namespace (killed by close())."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.name, *argv], **kw)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        subprocess.run(["ip", "link", "del", self._host_dev], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


def wait_for_port(host: str, port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


# What the relay holds on the way, like a router's small buffer: its queue and its own socket
# buffers, so a sender's acknowledged bytes follow the shaped link (upload.py reads those)
# instead of running megabytes ahead of it into the relay's memory.
RELAY_BUFFER = 256 << 10


class Relay:
    """127.0.0.1:port -> target, each chunk passed on `delay_ms` after it arrived, both ways,
    holding at most about RELAY_BUFFER bytes in each direction."""

    def __init__(self, target: tuple[str, int], delay_ms: float) -> None:
        self.target, self.delay = target, delay_ms / 1000
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RELAY_BUFFER)  # accepted ones inherit it
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.endpoint = f"127.0.0.1:{self.port}"
        self._closed = threading.Event()
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.server.accept()
                upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, RELAY_BUFFER)
                upstream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RELAY_BUFFER)
                upstream.settimeout(10)
                upstream.connect(self.target)
            except OSError:
                return
            client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, RELAY_BUFFER)
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                s.settimeout(None)
                self._socks.append(s)
            self._pipe(client, upstream)
            self._pipe(upstream, client)

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        queue: deque[tuple[float, bytes]] = deque()
        ready = threading.Condition()
        held = [0]  # bytes in the queue

        def read() -> None:
            while True:
                with ready:
                    while held[0] >= RELAY_BUFFER and not self._closed.is_set():
                        ready.wait(0.5)  # full: the sender waits, as behind a real link
                try:
                    data = src.recv(1 << 16)
                except OSError:
                    data = b""
                with ready:
                    queue.append((time.monotonic() + self.delay, data))
                    held[0] += len(data)
                    ready.notify_all()
                if not data:
                    return

        def write() -> None:
            while True:
                with ready:
                    while not queue:
                        ready.wait()
                    due, data = queue.popleft()
                    held[0] -= len(data)
                    ready.notify_all()
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                if not data:
                    try:
                        dst.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass  # the other side went first: nothing left to tell it
                    return
                try:
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()

    def close(self) -> None:
        self._closed.set()
        self.server.close()
        for s in self._socks:
            s.close()


@dataclass
class Worker:
    """A `ggml-rpc-server` in its own namespace: `direct` is its address on the shaped link,
    `endpoint` the relay's (the shaped link plus the profile's delay)."""

    ns: Namespace
    port: int
    relay: Relay

    @property
    def direct(self) -> str:
        return f"{self.ns.ns_ip}:{self.port}"

    @property
    def endpoint(self) -> str:
        return self.relay.endpoint


@contextmanager
def worker(profile: Profile, rpc_binary: Path, env: dict[str, str], port: int,
           threads: int | None = None) -> Iterator[Worker]:
    """A worker behind `profile`'s link, listening on `port` in its namespace (with `threads`,
    else the worker's default: half the logical cores); removed after. Without `--cache`,
    unlike `share.worker_argv`: every worker here starts as on a first launch, so a test of
    the first upload or a bench's timing never meets tensors an earlier run left cached."""
    ns = Namespace(profile)
    relay = None
    try:
        ns.start([str(rpc_binary), "-H", ns.ns_ip, "-p", str(port), *(["-t", str(threads)] if threads else [])], env=env,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        wait_for_port(ns.ns_ip, port)
        relay = Relay((ns.ns_ip, port), profile.delay_ms)
        yield Worker(ns, port, relay)
    finally:
        if relay is not None:
            relay.close()
        ns.close()
