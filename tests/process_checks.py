"""Whether a process has ended, for the tests that stop engines, workers and watchers.

One psutil question per answer: a process asked twice (`pid_exists`, then `Process(pid)`)
can end between the two, and the second then raises instead of answering.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from collections.abc import Iterable

import psutil

POLL_S = 0.01


def gone(pid: int) -> bool:
    """The process has exited: there is no such process, or only its zombie is left (a parent
    has not reaped it yet, or nobody will: a container's first process may never reap)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def until_gone(pids: Iterable[int], timeout: float) -> bool:
    """Poll until every pid has exited (True), or `timeout` seconds pass (False)."""
    pending = list(pids)
    deadline = time.monotonic() + timeout
    while True:
        pending = [p for p in pending if not gone(p)]
        if not pending:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)


class StdoutLines:
    """A child's stdout read on a thread, so waiting for a line has a timeout; every line read
    so far is in `seen`."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.q: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.q.put(line.rstrip("\n"))
        self.q.put(None)

    def wait_for(self, start: str, timeout: float = 60) -> str:
        """The next line that starts with `start`; AssertionError with the last lines read
        when none came within `timeout` or the output ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.seen.append(line)
            if line.startswith(start):
                return line
        raise AssertionError(f"no {start!r} line; got:\n" + "\n".join(self.seen[-80:]))

    def drain(self) -> None:
        """Move what was read so far into `seen`, without waiting."""
        while True:
            try:
                line = self.q.get_nowait()
            except queue.Empty:
                return
            if line is None:
                return
            self.seen.append(line)
