"""The real llama-server, provisioned by `draftwise engine install`, on a tiny real model."""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from draftwise.core.launch import headless

pytestmark = pytest.mark.engine


def _ours(pid: int) -> list[psutil.Process]:
    """Processes still alive in the engine's process group (it leads its own session)."""
    alive = []
    for p in psutil.process_iter(["pid"]):
        try:
            in_group = sys.platform != "win32" and os.getpgid(p.pid) == pid
            if (p.pid == pid or in_group) and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except (psutil.Error, ProcessLookupError):
            continue
    return alive


def test_ready_tokens_stop_nothing_left(engine, tiny_llama, tmp_path):
    server = headless.start_server(engine.binary, tiny_llama, log_dir=tmp_path)
    try:
        seconds = server.wait_ready(timeout=120)
        assert seconds < 120
        assert server.health() == 200
        result = server.complete("Hello", n_predict=8)
        assert result["tokens_predicted"] > 0
        assert isinstance(result["content"], str)
    finally:
        code = server.stop()
    assert code is not None
    assert _ours(server.process.pid) == []
    log = server.log_text()
    # The pinned engine's tools/server/server.cpp logs "model loaded", then "listening on" each
    # address it serves: here the one it was given.
    loaded = log.index("srv  llama_server: model loaded\n")
    assert log.index(f"srv  llama_server: listening on {server.base_url}\n", loaded) > loaded


def test_key_is_not_in_argv_and_is_required(engine, tiny_llama, tmp_path):
    server = headless.start_server(engine.binary, tiny_llama, log_dir=tmp_path)
    try:
        server.wait_ready(timeout=120)
        cmdline = open(f"/proc/{server.process.pid}/cmdline", "rb").read() if sys.platform == "linux" else b""
        assert server.api_key.encode() not in cmdline
        import urllib.error
        import urllib.request

        req = urllib.request.Request(server.base_url + "/completion", data=b'{"prompt":"a","n_predict":1}')
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 401
    finally:
        server.stop()


def test_engine_that_exits_is_reported(engine, tmp_path):
    bogus = tmp_path / "not-a-model.gguf"
    bogus.write_bytes(b"GGUF" + b"\0" * 64)
    server = headless.start_server(engine.binary, bogus, log_dir=tmp_path)
    try:
        with pytest.raises(headless.EngineError, match="exited with code"):
            server.wait_ready(timeout=60)
    finally:
        server.stop()


def test_cli_check_runs_the_engine(engine, tmp_path):
    env = {**os.environ, "DRAFTWISE_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", "check"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok  Writing text" in out.stdout
    assert "ok  Stopping it: stopped; nothing is left running" in out.stdout
    assert "ok  Faster answers (speculation): works" in out.stdout
    # It speaks of the machine, not of build numbers or paths.
    assert "build" not in out.stdout and "commit" not in out.stdout and str(engine.binary) not in out.stdout
