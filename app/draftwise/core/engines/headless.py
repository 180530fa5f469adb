"""Run llama-server without Qt: for the CLI, the machine check and the tests.

The window uses the QProcess owner in services/; this is the same life cycle with the
standard library: start in its own process group, wait for /health, stop the whole group.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from draftwise.core.engines import provision

HOST = "127.0.0.1"


class EngineError(RuntimeError):
    """The engine did not start or answer; the message says what happened."""


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


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
        return f"http://{HOST}:{self.port}"

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _request(self, path: str, body: dict | None = None, timeout: float = 5.0) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base_url + path, data=data)
        req.add_header("Authorization", f"Bearer {self.api_key}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - loopback only
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def health(self) -> int | None:
        """HTTP status of /health, or None while nothing listens."""
        try:
            return self._request("/health", timeout=2.0)[0]
        except (OSError, urllib.error.URLError):
            return None

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
        status, body = self._request(
            "/completion", {"prompt": prompt, "n_predict": n_predict, "temperature": 0}, timeout
        )
        if status != 200:
            raise EngineError(f"/completion answered {status}: {body[:300]!r}")
        return json.loads(body)

    def stop(self, timeout: float = 10.0) -> int:
        """Terminate the whole process group, kill it after `timeout`; return the exit code."""
        proc = self.process
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _signal_group(proc, getattr(signal, "SIGKILL", signal.SIGTERM))
                proc.wait(timeout)
        return int(proc.returncode)


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    if sys.platform == "win32":
        proc.kill() if sig != signal.SIGTERM else proc.terminate()
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        return


def _tail(text: str, n: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def start_server(
    binary: Path,
    model: Path,
    *,
    port: int | None = None,
    extra_args: Sequence[str] = (),
    ctx: int = 512,
    log_dir: Path | None = None,
) -> RunningServer:
    """Start llama-server on loopback with a fresh API key passed in the environment."""
    port = port or free_port()
    api_key = secrets.token_urlsafe(24)
    argv = [
        str(binary), "-m", str(model), "--host", HOST, "--port", str(port),
        "-c", str(ctx), *extra_args,
    ]
    # The key goes in the environment: argv is visible to every user through ps.
    env = {**os.environ, **provision.library_env(binary.parent), "LLAMA_API_KEY": api_key}
    log_dir = log_dir or Path(tempfile.mkdtemp(prefix="draftwise-engine-"))
    log_path = log_dir / f"llama-server-{port}.log"
    log = log_path.open("wb")
    kwargs: dict = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.CREATE_NO_WINDOW
    else:
        kwargs["start_new_session"] = True
    try:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env, **kwargs
        )
    except OSError as exc:
        raise EngineError(f"Could not start {binary}: {exc.strerror or exc}") from exc
    finally:
        log.close()
    return RunningServer(process=process, port=port, api_key=api_key, log_path=log_path, argv=argv)
