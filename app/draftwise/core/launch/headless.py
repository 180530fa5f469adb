"""Run llama-server without Qt: for the CLI, the machine check, the tests and benchmarks.

Two levels:
- `HeadlessLaunch` drives a `LaunchSpec` through core/launch/launch_flow.py (stages, readiness,
  the startup fallback, crash causes) with the standard library — the same decisions the
  window's QProcess owner (services/engine_process.py) executes.
- `serve` is the bare minimum (start, wait for /health, stop) that the machine check uses;
  `start_server` builds a plain LaunchSpec (no planner: the raw engine, for tests and
  benchmarks) and serves it. Either way the argv and environment come from the one builder
  (core/launch/llamacpp.py, launch_spec.py; docs/launch-path.md).

Either way the engine leads its own process group and is owned as one
(core/processes/process_group.py: the Windows Job, the lifeline, the run file), so stopping it
stops everything it started, and a Draftwise that dies takes it along.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from draftwise.core.address import LOOPBACK
from draftwise.core.engines import args as engine_args
from draftwise.core.launch import crash, launch_flow, launch_spec
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.outcome import EngineOutcome, Stage
from draftwise.core.processes import process_group
from draftwise.core.processes.loopback import health_status, request
from draftwise.core.speculation.broken import BrokenDrafters

log = logging.getLogger(__name__)

STOP_TIMEOUT_S = process_group.KILL_AFTER_S
# /health backoff: ask soon (a small model is ready in tens of ms), then less often.
POLL_FIRST_S, POLL_MAX_S, POLL_GROWTH = 0.01, 0.25, 1.5


class EngineError(RuntimeError):
    """The engine did not start or answer; the message says what happened."""


def engine_environment(spec: LaunchSpec) -> dict[str, str]:
    return spec.environment(os.environ)


# ------------------------------------------------------------------ the launch, headless
# /health and every request go through core/processes/loopback.py, never through a proxy
# (`health_status`, `request`: callers may ask them here too).
ActionSink = Callable[[launch_flow.Action], None]
OutcomeSink = Callable[[EngineOutcome], None]


class HeadlessLaunch:
    """One launch driven by LaunchFlow with subprocess, a reader thread and urllib.

    Call `start()`, then `pump()` in a loop (or `wait_ready()` / `run()`), `stop()` at
    the end. Every action the flow decides is passed to `on_action` after it is done; the
    engine's whole state, `outcome` (core/launch/outcome.py), is passed to `on_changed` each
    time it changes. The output lines go to `on_lines` as read: a stream, not state.
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
        on_changed: OutcomeSink | None = None,
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
        self.on_changed = on_changed
        self._told = self.flow.outcome  # the outcome last handed to on_changed
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
        self._owned: process_group.OwnedGroup | None = None
        self._log_file: IO[str] | None = None

    # ------------------------------------------------------------ public
    @property
    def spec(self) -> LaunchSpec:
        """The running start's spec (a ladder rung replaces the first one)."""
        return self.flow.spec

    @property
    def outcome(self) -> EngineOutcome:
        """The engine's whole state, as the launch flow last left it (read only)."""
        return self.flow.outcome

    @property
    def stage(self) -> Stage:
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
            process_group.signal_group(self.process.pid, signal.SIGTERM)
        if self._kill_at is not None and now >= self._kill_at and self.process is not None:
            self._kill_at = None
            process_group.signal_group(self.process.pid, process_group.SIGKILL)
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

    def relaunch_refused(self) -> None:
        """After a lost worker: the plan on the workers left does not fit (core/launch/lost_worker.py)."""
        self._do(self.flow.relaunch_refused())

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
        self._tell()

    def _tell(self) -> None:
        """Hand the outcome on when the flow replaced it (it is frozen: a new one is a change)."""
        if self.flow.outcome is not self._told:
            self._told = self.flow.outcome
            if self.on_changed is not None:
                self.on_changed(self._told)

    def _spawn(self, argv: Sequence[str]) -> None:
        self._generation += 1
        self._eof = False
        self._delay = POLL_FIRST_S
        self._next_poll = 0.0
        self.spawned_at.append(time.monotonic())
        if process_group.port_taken(self.spec.host, self.spec.port):
            self.process = None
            self._do(self.flow.port_taken(time.monotonic()))
            return
        try:
            self.process = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                env=engine_environment(self.spec), **process_group.new_group_kwargs(),
            )
        except OSError as exc:
            self.process = None
            self._do(self.flow.spawn_failed(exc.strerror or str(exc), time.monotonic()))
            return
        self.pids.append(self.process.pid)
        self.flow.spawned(time.monotonic())
        self._owned = process_group.own(self.process.pid, self.spec.binary, argv, self.spec.port,
                                        record_run=self.record_run)
        self._reader = threading.Thread(
            target=_read_into, args=(self.process.stdout, self._lines, self._generation),
            name=f"engine-log-{self.process.pid}", daemon=True,
        )
        self._reader.start()

    def _terminate(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        process_group.signal_group(self.process.pid, signal.SIGTERM)
        self._term_again_at = time.monotonic() + process_group.TERM_AGAIN_S
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
        self._release()
        self.process = None
        self._do(self.flow.exited(crash.ExitStatus.from_returncode(code), time.monotonic()))

    def _release(self) -> None:
        """Anything the engine left in its group, its Job, lifeline and run file."""
        if self._owned is not None:
            self._owned.release()
            self._owned = None

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
    owned: process_group.OwnedGroup | None = None

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
        code = process_group.stop_popen(self.process, timeout)
        if self.owned is not None:
            self.owned.release()
        return code


def complete(base_url: str, api_key: str, prompt: str, n_predict: int = 8, timeout: float = 60.0) -> dict:
    status, body = request(base_url, api_key, "/completion",
                           {"prompt": prompt, "n_predict": n_predict, "temperature": 0}, timeout)
    if status != 200:
        raise EngineError(f"/completion answered {status}: {body[:300]!r}")
    return json.loads(body)


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
            env=engine_environment(spec), **process_group.new_group_kwargs(),
        )
    except OSError as exc:
        raise EngineError(f"Could not start {spec.binary}: {exc.strerror or exc}") from exc
    finally:
        log.close()
    owned = process_group.own(process.pid, spec.binary, spec.argv, spec.port)
    return RunningServer(process=process, port=spec.port, api_key=spec.api_key, log_path=log_path,
                         argv=list(spec.argv), owned=owned)


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
        plan_options=(engine_args.option("-c", str(ctx)),), extra_args=extra_args,
    )
    return serve(spec, log_dir=log_dir)
