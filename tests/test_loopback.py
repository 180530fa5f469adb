"""Every request to our own engines bypasses the proxy the environment names (issue 36):
core/processes/loopback.py, under `http_proxy` and `HTTP_PROXY` pointing at a dead address.

Behind a proxy, urllib's default opener asks the proxy for 127.0.0.1 too: the speed probe,
which posted with a bare `urlopen`, quietly fell back to the memory scan that way (`draftwise
get --json` said `measured_by: memory`). These run the real engine with the variables set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from draftwise.core.engines import args as engine_args
from draftwise.core.launch import headless, launch_spec
from draftwise.core.processes import loopback
from draftwise.testing.tinymodels import write_tiny_model

DEAD_PROXY = "http://127.0.0.1:9"  # nothing listens there (the discard port)


@pytest.fixture
def dead_proxy(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of a user behind a proxy that does not answer, no host exempted."""
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("http_proxy", DEAD_PROXY)
    monkeypatch.setenv("HTTP_PROXY", DEAD_PROXY)
    return dict(os.environ)


@pytest.mark.engine
@pytest.mark.timeout(240)
def test_the_launch_path_reaches_its_engine_behind_a_dead_proxy(engine, tmp_path: Path, dead_proxy):
    """HeadlessLaunch polls /health and Draftwise asks the engine through the loopback client;
    the same request through urllib's default opener goes to the dead proxy and fails (what
    the environment does to a client that does not keep loopback away from it)."""
    model = write_tiny_model(tmp_path / "m.gguf")[0]
    spec = launch_spec.llamacpp_launch(engine.binary, model, launch_spec.NO_SPECULATION,
                                       port=launch_spec.any_free_port(), plan_options=(engine_args.option("-c", "256"),))
    run = headless.HeadlessLaunch(spec)
    run.start()
    try:
        assert run.wait_ready(120), run.log_text()[-2000:]
        status, raw = loopback.request(spec.url, spec.api_key, "/completion",
                                       {"prompt": "a", "n_predict": 4, "ignore_eos": True}, 60)
        assert status == 200 and json.loads(raw)["tokens_predicted"] == 4
        assert loopback.health_status(spec.url + "/health", spec.api_key) == 200
        # A fresh default opener reads the proxy variables now; `urlopen`'s module-wide one was
        # built by whichever earlier test first called it, before this one set them.
        with pytest.raises(urllib.error.URLError):
            urllib.request.build_opener().open(spec.url + "/health", timeout=10)
    finally:
        run.stop()


@pytest.mark.engine
@pytest.mark.timeout(600)
def test_draftwise_get_measures_with_the_engine_behind_a_dead_proxy(engine, dead_proxy):
    """The Done-when of issue 36: with `http_proxy` set, `draftwise get`'s first-run probe reads
    a speed on the engine (before: `measured_by: memory`). Offline (the hub is behind the same
    dead proxy): the curated starters, judged at that speed."""
    env = {**dead_proxy, "HF_ENDPOINT": "http://127.0.0.1:9"}
    out = subprocess.run([sys.executable, "-m", "draftwise.cli.main", "get", "--json"], capture_output=True,
                         text=True, timeout=540, env=env)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["measured_by"] == "engine", out.stderr
    assert data["rate_gbs"] > 0
