"""The engine and the shared worker as process groups Draftwise owns: start, signal, stop, release.

Every llama-server and ggml-rpc-server Draftwise starts — from the CLI's headless runner,
the machine check, the window's QProcess owner (services/owned_qprocess.py) — leads its own
process group (a new session on Unix, a new process group on Windows), so a stop reaches
whatever it started too. Once started, `own()` makes it ours in three ways, released
together when it has ended (`OwnedGroup.release`):

- a kill-on-close Job Object on Windows: Windows kills the tree when Draftwise dies;
- the lifeline on Linux and macOS (core/processes/lifeline.py): a watcher stops the group
  within a second when Draftwise dies;
- a run file (core/processes/orphans.py): the last net, read at the next start.

Stopping is SIGTERM to the group, again after `TERM_AGAIN_S`, SIGKILL after a timeout
(docs/engine-facts.md, "Starting, readiness, stopping"); `stop_popen` does it for a Popen, the Qt
owner with timers. A port is checked before a start (`port_taken`): something else already
listening there would otherwise answer for us.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.address import ALL_INTERFACES, LOOPBACK
from draftwise.core.processes import lifeline, orphans

log = logging.getLogger(__name__)

# SIGTERM to the group, again after TERM_AGAIN_S, SIGKILL after KILL_AFTER_S.
# llama-server reports ready before it installs its signal handler, and a SIGTERM that
# lands between the two sets its "terminating" flag before the main loop starts, which then
# never ends; its handler exits at once on a second signal ("Received second interrupt").
TERM_AGAIN_S = 1.0
KILL_AFTER_S = 10.0
SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def new_group_kwargs() -> dict:
    """Popen arguments that make the child lead its own process group."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW}
    return {"start_new_session": True}


def signal_group(pid: int, sig: int) -> bool:
    """Send `sig` to the process group `pid` leads; False when nothing is left in it.

    On Windows every stop is TerminateProcess: llama-server answers only CTRL_C_EVENT,
    which a process started in a new process group never receives; the Job Object takes
    the rest of the tree when it is closed.
    """
    if pid <= 0:
        return False  # killpg(0) would signal our own process group
    if sys.platform == "win32":
        try:
            os.kill(pid, signal.SIGTERM)  # TerminateProcess on Windows
        except OSError:
            return False
        return True
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # The group id was reused by someone else's processes: not ours to signal.
        return False
    return True


def free_port(host: str = LOOPBACK) -> int:
    """A port nothing listens on now at `host` (the system's pick): the one way Draftwise
    picks a port for a process it starts."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_taken(host: str, port: int) -> bool:
    """Whether something already accepts connections on `host:port` (all interfaces: asked
    on loopback). Checked before a start: the engine's /health or the worker's port would
    otherwise be answered by that other program."""
    try:
        with socket.create_connection((LOOPBACK if host == ALL_INTERFACES else host, port), timeout=0.5):
            return True
    except OSError:
        return False


class WindowsJob:
    """A Job Object with kill-on-close: when Draftwise dies, Windows kills the engine tree.

    Untested here (Linux CI); the calls follow the Win32 documentation.
    """

    _KILL_ON_JOB_CLOSE = 0x2000
    _EXTENDED_LIMIT_INFORMATION = 9
    _PROCESS_SET_QUOTA_AND_TERMINATE = 0x0100 | 0x0001

    def __init__(self) -> None:
        import ctypes
        from ctypes import wintypes

        class _Basic(ctypes.Structure):
            _fields_ = [
                ("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                ("LimitFlags", wintypes.DWORD), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", wintypes.DWORD),
                ("Affinity", ctypes.c_size_t), ("PriorityClass", wintypes.DWORD),
                ("SchedulingClass", wintypes.DWORD),
            ]

        class _Io(ctypes.Structure):
            _fields_ = [(n, ctypes.c_uint64) for n in (
                "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
                "ReadTransferCount", "WriteTransferCount", "OtherTransferCount")]

        class _Extended(ctypes.Structure):
            _fields_ = [
                ("BasicLimitInformation", _Basic), ("IoInfo", _Io),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t),
            ]

        self._k32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
        self._handle = self._k32.CreateJobObjectW(None, None)
        if not self._handle:
            raise OSError(ctypes.get_last_error(), "CreateJobObjectW failed")
        info = _Extended()
        info.BasicLimitInformation.LimitFlags = self._KILL_ON_JOB_CLOSE
        if not self._k32.SetInformationJobObject(
            self._handle, self._EXTENDED_LIMIT_INFORMATION, ctypes.byref(info), ctypes.sizeof(info)
        ):
            raise OSError(ctypes.get_last_error(), "SetInformationJobObject failed")

    def assign(self, pid: int) -> None:
        import ctypes

        process = self._k32.OpenProcess(self._PROCESS_SET_QUOTA_AND_TERMINATE, False, pid)
        if not process:
            raise OSError(ctypes.get_last_error(), f"OpenProcess({pid}) failed")
        try:
            if not self._k32.AssignProcessToJobObject(self._handle, process):
                raise OSError(ctypes.get_last_error(), "AssignProcessToJobObject failed")
        finally:
            self._k32.CloseHandle(process)

    def close(self) -> None:
        """Closing the last handle kills every process still in the job."""
        if self._handle:
            self._k32.CloseHandle(self._handle)
            self._handle = None


def kill_on_close_job(pid: int) -> WindowsJob | None:
    """On Windows, a job that takes the engine tree down with us; None elsewhere."""
    if sys.platform != "win32":
        return None
    try:
        job = WindowsJob()
        job.assign(pid)
    except OSError as exc:
        # The engine still runs and stops normally; only a crash of Draftwise would now
        # leave it behind (the run file lets the next start find it).
        log.warning("could not put engine %s in a kill-on-close job: %s", pid, exc)
        return None
    return job


@dataclass
class OwnedGroup:
    """A started group made ours: its Job, its place on the lifeline, its run file."""

    pid: int
    job: WindowsJob | None = None
    run_file: Path | None = None
    released: bool = False

    def release(self) -> None:
        """The group's leader has exited (and was reaped): kill anything it left in its group,
        then let go of the Job, the lifeline and the run file. Idempotent."""
        if self.released:
            return
        self.released = True
        if sys.platform != "win32":
            signal_group(self.pid, SIGKILL)  # stragglers of the group, if any
        if self.job is not None:
            self.job.close()
            self.job = None
        lifeline.let_go(self.pid)
        orphans.release(self.run_file)
        self.run_file = None


def own(pid: int, binary: Path | str, argv: Sequence[str], port: int, *, record_run: bool = True) -> OwnedGroup:
    """Make the group `pid` leads ours (call right after it started)."""
    job = kill_on_close_job(pid)
    lifeline.hold(pid)
    run_file = orphans.register(pid, Path(binary), argv, port) if record_run else None
    return OwnedGroup(pid, job, run_file)


def stop_popen(proc: subprocess.Popen, timeout: float = KILL_AFTER_S) -> int:
    """SIGTERM the process group, again after TERM_AGAIN_S, SIGKILL it after `timeout`;
    return the exit code."""
    if proc.poll() is None:
        signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(min(timeout, TERM_AGAIN_S))
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGTERM)  # see TERM_AGAIN_S
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, SIGKILL)
            proc.wait(timeout)
    if sys.platform != "win32":
        signal_group(proc.pid, SIGKILL)  # stragglers of the group, if any
    return int(proc.returncode)
