"""A worker on a real slow link is left out by `--use-workers auto` and kept by `always`
(issue 29, item 3), with the real Gemma 3 270M, the real engine and a real `ggml-rpc-server`
in a network namespace behind the 20 Mbit / 10 ms path (draftwise/testing/netlab.py).

`draftwise plan --json` probes the worker through the engine, measures its link through the
RPC protocol (link.link_to) and weighs the layouts with this computer's rate, measured by the
engine probe first (core/launch/speed_probe.py): in an empty home the plan itself measures it
before it weighs a worker. The worker holds every block and the output head, so
each token sends Gemma's 262,144 logits (1 MiB) back over 20 Mbit/s: bench/rpc_network.py
measured that layout several times slower than the model alone here (docs/rpc.md).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from dataclasses import replace

import pytest

from draftwise.core.launch import launch_spec, speed_probe
from draftwise.core.machine import speed
from draftwise.core.rpc import share
from draftwise.testing import netlab, realmodels

NO_LAB = netlab.available()
# The real engine probe (conftest's stand-in replaces it for in-process tests).
REAL_PROBE = speed_probe.probe_engine
DEAD_PROXY = "http://127.0.0.1:9"  # nothing listens there
SLOW = netlab.Profile("20 Mbit, 10 ms", 20, 5.0)


def _plan(*argv: str) -> dict:
    from draftwise.cli.main import main

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["plan", "--json", *argv]) == 0
    return json.loads(out.getvalue())


@pytest.mark.skipif(NO_LAB is not None, reason=str(NO_LAB))
def test_auto_leaves_out_a_worker_on_a_slow_link_and_always_keeps_it(engine):
    model = realmodels.gemma3_270m()
    rpc_binary = share.worker_binary(engine.binary)
    # This computer's rate, kept for the plan: the probe's figure is kept even when other
    # work held the processor (a busy figure is otherwise not kept, and the plan would then
    # use every worker as listed for want of a rate).
    tp = speed_probe.throughput(engine.binary)
    speed.remember(engine.binary, replace(tp, busy=False))
    with netlab.worker(SLOW, rpc_binary, share.worker_env(rpc_binary), launch_spec.any_free_port()) as w:
        ep = w.endpoint
        common = ["--engine", str(engine.binary), "--rpc", ep, str(model)]
        auto = _plan(*common)
        always = _plan("--use-workers", "always", *common)
    assert "--rpc" not in auto["argv"], (auto["plan"]["reasons"], auto["plan"].get("speed"))
    assert always["argv"][always["argv"].index("--rpc") + 1] == ep
    sp = auto["plan"]["speed"]
    (lk,) = sp["link"]
    assert lk["endpoint"] == ep and lk["mbit_s"] <= 1.1 * SLOW.mbit and lk["rtt_ms"] >= 2 * SLOW.delay_ms
    by = {tuple(a["workers"]): a for a in sp["alternatives"]}
    assert by[()]["fits"] and by[(ep,)]["fits"]
    assert by[(ep,)]["tokens_per_s"] < by[()]["tokens_per_s"] == sp["tokens_per_s"]
    assert any(f"{ep} would make it slower here" in r for r in map(str, auto["plan"]["reasons"]))
    assert always["plan"]["speed"]["workers"] == [ep]


@pytest.mark.skipif(NO_LAB is not None, reason=str(NO_LAB))
@pytest.mark.timeout(600)
def test_in_an_empty_home_auto_measures_this_computer_first_and_runs_alone(engine, monkeypatch):
    """Issue 36: before any speed probe, `plan --rpc H:P` (auto) to a worker on a slow link
    used the worker "as listed", every layout's speed null. Now the plan measures this
    computer with the engine first (through the launch path, behind a dead proxy), weighs
    every layout and runs the model alone; the figure is kept for the next plan."""
    monkeypatch.setattr(speed_probe, "probe_engine", REAL_PROBE)
    for var in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("http_proxy", DEAD_PROXY)
    monkeypatch.setenv("HTTP_PROXY", DEAD_PROXY)
    model = realmodels.gemma3_270m()
    rpc_binary = share.worker_binary(engine.binary)
    assert speed.record_file().read() == {}, "an empty home"
    with netlab.worker(SLOW, rpc_binary, share.worker_env(rpc_binary), launch_spec.any_free_port()) as w:
        ep = w.endpoint
        auto = _plan("--engine", str(engine.binary), "--rpc", ep, "--use-workers", "auto", str(model))
    reasons = [str(r) for r in auto["plan"]["reasons"]]
    assert "--rpc" not in auto["argv"], reasons
    sp = auto["plan"]["speed"]
    by = {tuple(a["workers"]): a for a in sp["alternatives"]}
    assert set(by) == {(), (ep,)}
    assert all(a["tokens_per_s"] is not None for a in sp["alternatives"]), sp
    assert by[(ep,)]["tokens_per_s"] < by[()]["tokens_per_s"] == sp["tokens_per_s"]
    assert any(f"{ep} would make it slower here" in r for r in reasons)
    # Measured with the engine (kept, unless other work held the processor: then held in memory).
    tp = speed_probe.engine_rate(engine.binary, measure=False)
    assert tp is not None and tp.source == "engine"
