"""Engines left running by a Draftwise that died: find them at the next start, stop them.

Each engine we start gets a run file in paths.data_dir()/"run": its pid and start time,
executable and argv, and the pid and start time of the Draftwise process that owns it. A
clean stop removes the file. At the next start, a file whose owner is gone names a
possible orphan; it is stopped only when the process with that pid is still the same
engine (start time, executable path and command line all match) — a pid reused by
another program is never touched.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from draftwise.core import paths, records
from draftwise.core.messages import Message, msg

log = logging.getLogger(__name__)

_TIME_SLACK_S = 0.05  # create_time is rounded differently by the readers of /proc


def run_dir() -> Path:
    return paths.data_dir() / "run"


@dataclass(frozen=True)
class RunRecord:
    pid: int
    create_time: float
    exe: str
    argv: list[str]
    port: int
    owner_pid: int
    owner_create_time: float

    @classmethod
    def from_json(cls, data: dict) -> RunRecord:
        return cls(int(data["pid"]), float(data["create_time"]), str(data["exe"]),
                   [str(a) for a in data["argv"]], int(data["port"]), int(data["owner_pid"]),
                   float(data["owner_create_time"]))


@dataclass(frozen=True)
class OrphanReport:
    pid: int
    port: int
    stopped: bool
    message: Message


def _create_time(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0


def register(pid: int, binary: Path, argv: Sequence[str], port: int) -> Path | None:
    """Write the run file of an engine we just started; None when it cannot be written.

    Losing the file only loses orphan cleanup after a crash, so a write error is logged
    rather than allowed to fail the launch.
    """
    record = RunRecord(pid, _create_time(pid), str(Path(binary).resolve()), list(argv), port,
                       os.getpid(), _create_time(os.getpid()))
    path = run_dir() / f"engine-{pid}.json"
    try:
        records.write_atomic(path, json.dumps(record.__dict__))
    except OSError as exc:
        log.warning("could not write the engine run file %s: %s", path, exc)
        return None
    return path


def release(path: Path | None) -> None:
    """The engine ended under our control: its run file goes."""
    if path is None:
        return
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("could not remove the engine run file %s: %s", path, exc)


def _alive_as(pid: int, create_time: float) -> psutil.Process | None:
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - create_time) > _TIME_SLACK_S:
            return None  # the pid now belongs to another process
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except psutil.Error:
        return None


def verify(record: RunRecord) -> tuple[psutil.Process | None, str]:
    """(process, "") when `record` still names our engine, else (None, why not)."""
    proc = _alive_as(record.pid, record.create_time)
    if proc is None:
        return None, "not running any more"
    try:
        exe = proc.exe()
        cmdline = proc.cmdline()
    except psutil.Error as exc:
        return None, f"cannot be inspected ({exc})"
    try:
        same_exe = Path(exe).resolve() == Path(record.exe)
    except OSError:
        same_exe = False
    if not same_exe:
        return None, f"pid {record.pid} is now {exe}, not the engine"
    if cmdline != record.argv:
        return None, f"pid {record.pid} runs another command line"
    return proc, ""


def _group_and_tree(proc: psutil.Process) -> list[psutil.Process]:
    members = [proc]
    try:
        members += proc.children(recursive=True)
    except psutil.Error as exc:
        log.info("children of %s not listed: %s", proc.pid, exc)
    if sys.platform != "win32":
        # The engine leads its own session: anything else in its process group is its own.
        for p in psutil.process_iter(["pid"]):
            try:
                if p.pid not in {m.pid for m in members} and os.getpgid(p.pid) == proc.pid:
                    members.append(p)
            except (psutil.Error, ProcessLookupError):
                continue
    return members


def stop_process_tree(proc: psutil.Process, timeout: float = 5.0) -> bool:
    """Terminate the engine, its children and its group; kill what is left. True when gone."""
    members = _group_and_tree(proc)
    for p in members:
        try:
            p.send_signal(signal.SIGTERM)
        except psutil.Error as exc:
            log.info("SIGTERM to %s: %s", p.pid, exc)
    _gone, alive = psutil.wait_procs(members, timeout=timeout)
    for p in alive:
        try:
            p.kill()
        except psutil.Error as exc:
            log.info("SIGKILL to %s: %s", p.pid, exc)
    _gone, alive = psutil.wait_procs(alive, timeout=timeout)
    return not alive


def find_orphans() -> list[tuple[Path, RunRecord | None]]:
    """Run files whose owner is gone (and unreadable ones, with None)."""
    found: list[tuple[Path, RunRecord | None]] = []
    folder = run_dir()
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("engine-*.json")):
        try:
            record = RunRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("unreadable engine run file %s: %s", path, exc)
            found.append((path, None))
            continue
        if _alive_as(record.owner_pid, record.owner_create_time) is not None:
            continue  # a running Draftwise owns it (this one or another window)
        found.append((path, record))
    return found


def stop_orphans(timeout: float = 5.0) -> list[OrphanReport]:
    """Stop every verified orphan engine and clear the stale run files."""
    reports: list[OrphanReport] = []
    for path, record in find_orphans():
        if record is None:
            release(path)
            continue
        proc, why = verify(record)
        if proc is None:
            release(path)
            log.info("run file %s is stale: %s", path.name, why)
            continue
        stopped = stop_process_tree(proc, timeout)
        if stopped:
            release(path)
            message = msg("Stopped an engine left running by an earlier Draftwise (pid {pid}, port {port}).",
                          pid=record.pid, port=record.port)
        else:
            message = msg("An engine left running by an earlier Draftwise (pid {pid}) would not stop; end it in the "
                          "task manager.", pid=record.pid)
        reports.append(OrphanReport(record.pid, record.port, stopped, message))
    return reports
