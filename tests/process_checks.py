"""Whether a process has ended, for the tests that stop engines, workers and watchers.

One psutil question per answer: a process asked twice (`pid_exists`, then `Process(pid)`)
can end between the two, and the second then raises instead of answering.
"""

from __future__ import annotations

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
