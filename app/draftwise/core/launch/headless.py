"""Run llama-server without Qt: for the CLI, the machine check, the tests and benchmarks.

Two levels:
- `HeadlessLaunch` drives a `LaunchSpec` through core/launch/launch_flow.py (stages, readiness,
  the startup fallback, crash causes) with the standard library — the same decisions the
  window's QProcess owner (services/engine_process.py) executes.
- `serve` is the bare minimum (start, wait for /health, stop) that the machine check uses;
  `start_server` builds a plain LaunchSpec (no planner: the raw engine, for tests and
  benchmarks) and serves it. Either way the argv and environment come from the one builder
  (core/launch/llamacpp.py, launch_spec.py; docs/launch-path.md).

Either way the engine leads its own process group (a new session on Unix, a kill-on-close
Job Object on Windows), so stopping it stops everything it started.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from draftwise.core.address import LOOPBACK
from draftwise.core.launch import crash, launch_flow, launch_spec, orphans
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.speculation.broken import BrokenDrafters

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = launch_flow.KILL_AFTER_S
# /health backoff: ask soon (a small model is ready in tens of ms), then less often.
POLL_FIRST_S, POLL_MAX_S, POLL_GROWTH = 0.01, 0.25, 1.5


class EngineError(RuntimeError):
    """The engine did not start or answer; the message says what happened."""


# ------------------------------------------------------------------ process groups
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


def engine_environment(spec: LaunchSpec) -> dict[str, str]:
    return spec.environment(os.environ)


# ------------------------------------------------------------------ the launch, headless
# Loopback requests never go through a proxy named in the environment (http_proxy).
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def health_status(url: str, api_key: str = "", timeout: float = 1.0) -> int | None:
    """HTTP status of GET url, or None while nothing answers."""
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, urllib.error.URLError):
        return None


ActionSink = Callable[[launch_flow.Action], None]


class HeadlessLaunch:
    """One launch driven by LaunchFlow with subprocess, a reader thread and urllib.

    Call `start()`, then `pump()` in a loop (or `wait_ready()` / `run()`), `stop()` at
    the end. Every action the flow decides is passed to `on_action` after it is done.
    """

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        broken: BrokenDrafters | None = None,
        ladder: Ladder | None = None,
        fixes: EngineFixes | None = None,
        on_action: ActionSink | None = None,
        on_lines: Callable[[list[str]], None] | None = None,
        log_path: Path | None = None,
        log_lines: int = 2000,
        startup_window: float = launch_flow.STARTUP_WINDOW_S,
        stall_after: float = launch_flow.STALL_AFTER_S,
        stop_timeout: float = STOP_TIMEOUT_S,
        record_run: bool = True,
    ) -> None:
        self.flow = launch_flow.LaunchFlow(spec, broken=broken, ladder=ladder, fixes=fixes, startup_window=startup_window,
                                           stall_after=stall_after)
        self.on_action = on_action
        self.on_lines = on_lines
        self.log: deque[str] = deque(maxlen=log_lines)
        self.log_path = log_path
        self.stop_timeout = stop_timeout
        self.record_run = record_run
        self.process: subprocess.Popen[bytes] | None = None
        self.pids: list[int] = []  # every engine process started, fallback included
        self.spawned_at: list[float] = []  # monotonic time of each spawn (benchmarks)
        self.exited_at: list[float] = []  # monotonic time each exit was seen
        self._lines: queue.Queue[tuple[int, str | None]] = queue.Queue()
        self._generation = 0
        self._eof = False
        self._reader: threading.Thread | None = None
        self._next_poll = 0.0
        self._delay = POLL_FIRST_S
        self._kill_at: float | None = None
        self._term_again_at: float | None = None
        self._run_file: Path | None = None
        self._job: WindowsJob | None = None
        self._log_file: IO[str] | None = None

    # ------------------------------------------------------------ public
    @property
    def spec(self) -> LaunchSpec:
        """The running start's spec (a ladder rung replaces the first one)."""
        return self.flow.spec

    @property
    def stage(self) -> str:
        return self.flow.stage

    @property
    def url(self) -> str:
        return self.spec.url

    def start(self) -> None:
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log_file = self.log_path.open("w", encoding="utf-8", errors="replace")  # one launch per file
        self._do(self.flow.start(time.monotonic()))

    def pump(self, timeout: float = 0.05) -> None:
        """Handle what happened since the last call, waiting at most `timeout` for output."""
        now = time.monotonic()
        if self.flow.polling:
            timeout = max(0.0, min(timeout, self._next_poll - now))
        self._read_lines(timeout)
        self._check_exit()
        now = time.monotonic()
        if self.flow.polling and self.process is not None and now >= self._next_poll:
            status = health_status(self.spec.url + self.spec.health_path, self.spec.api_key)
            self._delay = min(self._delay * POLL_GROWTH, POLL_MAX_S)
            self._next_poll = time.monotonic() + self._delay
            self._do(self.flow.health(status, time.monotonic()))
        if self._term_again_at is not None and now >= self._term_again_at and self.process is not None:
            self._term_again_at = None
            signal_group(self.process.pid, signal.SIGTERM)
        if self._kill_at is not None and now >= self._kill_at and self.process is not None:
            self._kill_at = None
            signal_group(self.process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        self._do(self.flow.tick(now))

    def wait_ready(self, timeout: float = 120.0) -> bool:
        """Pump until ready (True) or ended / out of time (False)."""
        deadline = time.monotonic() + timeout
        while not self.flow.is_ready and not self.flow.ended and time.monotonic() < deadline:
            self.pump()
        return self.flow.is_ready

    def run(self, should_stop: Callable[[], bool]) -> None:
        """Pump until the engine ends; stop it when `should_stop()` turns true."""
        while not self.flow.ended:
            if should_stop():
                self.stop()
                return
            self.pump()

    def stop(self, timeout: float | None = None) -> None:
        """Terminate the group, kill it after the timeout, wait until it is gone."""
        if timeout is not None:
            self.stop_timeout = timeout
        self._do(self.flow.stop())
        deadline = time.monotonic() + self.stop_timeout * 2 + 5
        while not self.flow.ended and time.monotonic() < deadline:
            self.pump()
        self._close()

    def log_text(self) -> str:
        return "\n".join(self.log)

    # ------------------------------------------------------------ actions
    def _do(self, actions: list[launch_flow.Action]) -> None:
        for action in actions:
            if isinstance(action, launch_flow.Spawn):
                self._spawn(action.argv)
            elif isinstance(action, launch_flow.Terminate):
                self._terminate()
            elif isinstance(action, launch_flow.PollHealth):
                self._next_poll = 0.0
            elif isinstance(action, (launch_flow.Stopped, launch_flow.Crashed)):
                self._close()
            if self.on_action is not None:
                self.on_action(action)

    def _spawn(self, argv: Sequence[str]) -> None:
        self._generation += 1
        self._eof = False
        self._delay = POLL_FIRST_S
        self._next_poll = 0.0
        self.spawned_at.append(time.monotonic())
        try:
            self.process = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                env=engine_environment(self.spec), **new_group_kwargs(),
            )
        except OSError as exc:
            self.process = None
            self._do(self.flow.spawn_failed(exc.strerror or str(exc), time.monotonic()))
            return
        self.pids.append(self.process.pid)
        self.flow.spawned(time.monotonic())
        self._job = kill_on_close_job(self.process.pid)
        if self.record_run:
            self._run_file = orphans.register(self.process.pid, self.spec.binary, argv, self.spec.port)
        self._reader = threading.Thread(
            target=_read_into, args=(self.process.stdout, self._lines, self._generation),
            name=f"engine-log-{self.process.pid}", daemon=True,
        )
        self._reader.start()

    def _terminate(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        signal_group(self.process.pid, signal.SIGTERM)
        self._term_again_at = time.monotonic() + launch_flow.TERM_AGAIN_S
        self._kill_at = time.monotonic() + self.stop_timeout

    # ------------------------------------------------------------ events
    def _read_lines(self, timeout: float) -> None:
        batch: list[str] = []
        try:
            item = self._lines.get(timeout=timeout) if timeout > 0 else self._lines.get_nowait()
            while True:
                generation, line = item
                if generation == self._generation:
                    if line is None:
                        self._eof = True
                    else:
                        batch.append(line)
                item = self._lines.get_nowait()
        except queue.Empty:
            pass  # nothing (more) to read right now
        if batch:
            self.log.extend(batch)
            if self._log_file is not None:
                self._log_file.write("\n".join(batch) + "\n")
            if self.on_lines is not None:
                self.on_lines(batch)
            self._do(self.flow.output(batch, time.monotonic()))

    def _check_exit(self) -> None:
        proc = self.process
        if proc is None:
            return
        code = proc.poll()
        if code is None:
            return
        if not self._eof and self._reader is not None:
            # The last lines say why it died: let the reader finish (a grandchild holding
            # the pipe open must not hold us up for long).
            self._reader.join(timeout=0.5)
            self._read_lines(0)
        self.exited_at.append(time.monotonic())
        self._kill_at = self._term_again_at = None
        if sys.platform != "win32":
            signal_group(proc.pid, signal.SIGKILL)  # anything the engine left in its group
        self._release_run_file()
        self.process = None
        self._do(self.flow.exited(crash.ExitStatus.from_returncode(code), time.monotonic()))

    def _release_run_file(self) -> None:
        if self._run_file is not None:
            orphans.release(self._run_file)
            self._run_file = None
        if self._job is not None:
            self._job.close()
            self._job = None

    def _close(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


def _read_into(stream: IO[bytes] | None, out: queue.Queue, generation: int) -> None:
    if stream is None:
        out.put((generation, None))
        return
    with stream:
        for raw in iter(stream.readline, b""):
            out.put((generation, raw.decode("utf-8", "replace").rstrip("\r\n")))
    out.put((generation, None))


# ------------------------------------------------------------------ the bare minimum
@dataclass
class RunningServer:
    """A llama-server we started, with what is needed to talk to it and stop it."""

    process: subprocess.Popen[bytes]
    port: int
    api_key: str
    log_path: Path
    argv: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _request(self, path: str, body: dict | None = None, timeout: float = 5.0) -> tuple[int, bytes]:
        return request(self.base_url, self.api_key, path, body, timeout)

    def health(self) -> int | None:
        """HTTP status of /health, or None while nothing listens."""
        return health_status(self.base_url + "/health", self.api_key, timeout=2.0)

    def wait_ready(self, timeout: float = 120.0) -> float:
        """Seconds until /health said 200; EngineError if the engine exits or time runs out."""
        start = time.monotonic()
        delay = 0.05
        while time.monotonic() - start < timeout:
            if self.process.poll() is not None:
                raise EngineError(
                    f"llama-server exited with code {self.process.returncode} before it was ready. "
                    f"Last lines:\n{_tail(self.log_text())}"
                )
            if self.health() == 200:
                return time.monotonic() - start
            time.sleep(delay)
            delay = min(delay * 1.5, 0.5)
        raise EngineError(f"llama-server was not ready after {timeout:.0f} s.\n{_tail(self.log_text())}")

    def complete(self, prompt: str, n_predict: int = 8, timeout: float = 60.0) -> dict:
        return complete(self.base_url, self.api_key, prompt, n_predict, timeout)

    def stop(self, timeout: float = 10.0) -> int:
        """Terminate the whole process group, kill it after `timeout`; return the exit code."""
        return stop_popen(self.process, timeout)


def request(base_url: str, api_key: str, path: str, body: dict | None = None,
            timeout: float = 5.0) -> tuple[int, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data)
    req.add_header("Authorization", f"Bearer {api_key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with _OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def complete(base_url: str, api_key: str, prompt: str, n_predict: int = 8, timeout: float = 60.0) -> dict:
    status, body = request(base_url, api_key, "/completion",
                           {"prompt": prompt, "n_predict": n_predict, "temperature": 0}, timeout)
    if status != 200:
        raise EngineError(f"/completion answered {status}: {body[:300]!r}")
    return json.loads(body)


def stop_popen(proc: subprocess.Popen, timeout: float = STOP_TIMEOUT_S) -> int:
    """SIGTERM the process group, SIGKILL it after `timeout`; return the exit code."""
    if proc.poll() is None:
        signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(min(timeout, launch_flow.TERM_AGAIN_S))
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGTERM)  # see launch_flow.TERM_AGAIN_S
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
            proc.wait(timeout)
    if sys.platform != "win32":
        signal_group(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
    return int(proc.returncode)


def _tail(text: str, n: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def serve(spec: LaunchSpec, *, log_dir: Path | None = None) -> RunningServer:
    """Start `spec` (its argv and environment as built, nothing added), output to a log file."""
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="draftwise-engine-"))
    log_path = log_dir / f"llama-server-{spec.port}.log"
    log = log_path.open("wb")
    try:
        process = subprocess.Popen(
            list(spec.argv), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            env=engine_environment(spec), **new_group_kwargs(),
        )
    except OSError as exc:
        raise EngineError(f"Could not start {spec.binary}: {exc.strerror or exc}") from exc
    finally:
        log.close()
    return RunningServer(process=process, port=spec.port, api_key=spec.api_key, log_path=log_path,
                         argv=list(spec.argv))


def start_server(
    binary: Path,
    model: Path,
    *,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    ctx: int = 512,
    log_dir: Path | None = None,
) -> RunningServer:
    """The raw engine on `model` with `extra_args` and a `ctx`-token context, no planner (tests
    and benchmarks observing the engine itself): on loopback, the key in the environment."""
    spec = launch_spec.llamacpp_launch(
        binary, model, launch_spec.NO_SPECULATION, port=port or launch_spec.any_free_port(),
        plan_args=("-c", str(ctx)), extra_args=extra_args,
    )
    return serve(spec, log_dir=log_dir)
