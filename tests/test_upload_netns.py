"""The first upload to a worker shows its progress (issue 29, item 5): `draftwise launch` with a
worker behind the 20 Mbit / 10 ms path of a network namespace (draftwise/testing/netlab.py)
prints `upload:` lines while the engine sends the weights: the bytes the worker acknowledged
(the engine's own socket, `ss`), the plan's total, the rate and the time left.

A tiny llama of 12 blocks (F32, about 20 MiB on the worker) takes some seconds on that link,
so the lines come (one every 3 s, the first after 3 s); what they say is checked against the
shaped rate and the plan.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from draftwise.core.launch import launch_spec
from draftwise.core.readable import human_bytes
from draftwise.core.rpc import share, upload
from draftwise.testing import netlab
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

NO_LAB = netlab.available()
SLOW = netlab.Profile("20 Mbit, 10 ms", 20, 5.0)
_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_LINE = re.compile(r"upload: Sending weights to (?P<ep>\S+): (?P<sent>[\d.]+ \w+) of up to (?P<total>[\d.]+ \w+), "
                   r"(?P<rate>[\d.]+ \w+)/s, about (?P<left>.+) left\.")


def _bytes(text: str) -> float:
    n, unit = text.split()
    return float(n) * _UNITS[unit]


@pytest.mark.skipif(upload.ss_argv() is None, reason="no `ss` here to read the engine's sockets")
@pytest.mark.skipif(NO_LAB is not None, reason=str(NO_LAB))
def test_launch_shows_the_weights_going_to_a_worker_on_a_slow_link(engine, tmp_path):
    model = write_tiny_model(tmp_path / "m.gguf", TinyModel(n_layer=12, n_embd=256, n_ff=512))[0]
    rpc_binary = share.worker_binary(engine.binary)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "app"), "DRAFTWISE_API_KEY": "k1"}
    with netlab.worker(SLOW, rpc_binary, share.worker_env(rpc_binary), launch_spec.any_free_port()) as w:
        common = ["--engine", str(engine.binary), "--rpc", w.endpoint, "--use-workers", "always", str(model)]
        planned = json.loads(subprocess.run([sys.executable, "-m", "draftwise.cli.main", "plan", "--json", *common],
                                            capture_output=True, text=True, env=env, check=True, timeout=120).stdout)
        total = sum(d["weights"] + d["output"] for d in planned["plan"]["per_device"] if d.get("worker"))
        assert total > 8 << 20
        proc = subprocess.Popen([sys.executable, "-m", "draftwise.cli.main", "launch", "--port",
                                 str(launch_spec.any_free_port()), *common],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip
        seen: list[str] = []
        try:
            for line in proc.stdout:
                seen.append(line)
                if line.startswith(("ready", "crashed")):
                    break
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
    out = "".join(seen)
    assert seen[-1].startswith("ready"), out
    lines = [m for m in map(_LINE.match, seen) if m]
    assert len(lines) >= 2, out
    for m in lines:
        assert m["ep"] == w.endpoint and m["total"] == human_bytes(total)
        assert 0.4 * SLOW.mbit * 1e6 / 8 <= _bytes(m["rate"]) <= 1.1 * SLOW.mbit * 1e6 / 8, m.group(0)
    sent = [_bytes(m["sent"]) for m in lines]
    assert sent == sorted(sent) and sent[-1] > sent[0] > 0, out
