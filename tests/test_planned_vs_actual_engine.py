"""Planned vs actual per start (issue 19 item 4), on the real engine.

A start that crashes after allocating its buffers and is relaunched: what the engine really
uses is the ready start's buffer lines alone, compared with the plan that start runs — in the
window (AppViewModel's own launch, PlanViewModel) and in `draftwise launch --verbose`. Seen as
a user saw it: the first launch of a quantized model on a machine whose CPU reports AMX but
faults on it showed model 684.4 MiB actual against 259.1 planned, both starts' lines summed.
The fault comes from `draftwise.testing.faults.amx_faulting_engine` (the real engine, dying of
SIGILL after allocating, on any machine); the models are a tiny Q4_0 llama and the real Gemma 3
270M Q4_K_M.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.launch import launch_spec
from draftwise.core.planning import logparse
from draftwise.core.settings import LoadResult, Settings
from draftwise.testing import faults, realmodels
from draftwise.testing import tinymodels as tm
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.engine import EngineChoice
from draftwise.viewmodels.plan import probe_machine

pytestmark = pytest.mark.engine
ROOT = Path(__file__).resolve().parents[1]
MiB = 1 << 20
# The planner is within 2 % on real models (Gemma: 235.2 MiB planned and allocated); on a 60 KiB
# tiny model alignment makes it a few KiB (64.5 planned, 61.4 allocated) — far below what a sum
# of two starts adds (the whole model again).
SMALL_SLACK = 16 * 1024


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(params=["tiny-Q4_0", "gemma-3-270m-q4_k_m"])
def model(request, tmp_path: Path) -> Path:
    if request.param == "tiny-Q4_0":
        return tm.write_tiny_model(tmp_path / "m" / "tiny-Q4_0.gguf", tm.TinyModel(name="tiny-q", dtype="Q4_0"))[0]
    try:
        return realmodels.gemma3_270m()
    except RuntimeError as exc:
        pytest.skip(f"Gemma 3 270M is not to be had here: {exc}")


def _starts(lines: list[str]) -> list[list[str]]:
    """The log cut at each start of the engine."""
    cuts = [i for i, x in enumerate(lines) if "llama_server: initializing" in x]
    return [lines[a:b] for a, b in zip(cuts, [*cuts[1:], len(lines)], strict=True)]


def _weights(lines: list[str]) -> int:
    return logparse.parse_lines(lines).summary()["weights"]


def test_the_window_compares_the_plan_with_the_start_that_became_ready(qtbot, engine, model, tmp_path):
    faulty = faults.amx_faulting_engine(engine.binary, tmp_path / "amx-vm")
    vm = AppViewModel(LoadResult(Settings(port=launch_spec.any_free_port()), Path("/nonexistent/s.json")),
                      persist=False)
    vm.engine.set_engines([EngineChoice("llama.cpp", faulty, "cpu", "", "test", "", capabilities.capabilities(faulty))])
    vm.set_machine(probe_machine())
    with qtbot.waitSignal(vm.outcome_changed, timeout=30000):
        vm.open_model(model)
    qtbot.waitUntil(lambda: not vm.replanning, timeout=30000)
    assert vm.do_launch()
    try:
        qtbot.waitUntil(lambda: vm.launch.state in ("ready", "failed"), timeout=120000)
        assert vm.launch.state == "ready", vm.launch.failure_text()
        qtbot.waitUntil(lambda: vm.plan.actual is not None and vm.plan.actual.summary()["compute"] > 0,
                        timeout=10000)
        lines = vm.launch.process.log_lines()
        first, ready = _starts(lines)
        assert faults.faults(faulty) == 1 and "-nr" in vm.launch.process.flow.current_argv
        # What the window shows is the ready start's, never the two added up.
        assert vm.plan.actual.summary() == logparse.parse_lines(ready).summary()
        # The faulting start's own buffer lines reach us only when the engine's log was flushed
        # before it died (killed mid-start, what it had not written yet is gone, as after a
        # real SIGILL); where they did, the two added up would read more.
        if _weights(first):
            assert vm.plan.actual.summary()["weights"] < _weights(first) + _weights(ready)
        # Compared with the plan the ready start runs (-nr: no re-laid copy of the weights).
        launched = vm.plan.launched.raw
        assert launched.bytes.cpu_extra == {}
        rows = {r[0]: (r[1], r[2]) for r in vm.plan.planned_vs_actual()}
        planned_w = launched.bytes.weights + launched.bytes.embedded_head
        actual_w = vm.plan.actual.summary()["weights"]
        print(f"{model.name}: weights planned {planned_w / MiB:.1f} MiB, actual {actual_w / MiB:.1f} MiB "
              f"(the two starts summed: {(_weights(first) + _weights(ready)) / MiB:.1f} MiB); rows {rows}")
        assert abs(planned_w - actual_w) <= max(0.02 * actual_w, SMALL_SLACK)
    finally:
        with qtbot.waitSignal(vm.launch.ended, timeout=20000):
            vm.do_stop()


def test_launch_verbose_prints_the_plan_beside_the_ready_starts_buffers(engine, tmp_path):
    faulty = faults.amx_faulting_engine(engine.binary, tmp_path / "amx-vm")
    model = tm.write_tiny_model(tmp_path / "m" / "tiny-Q4_0.gguf", tm.TinyModel(name="tiny-q", dtype="Q4_0"))[0]
    proc = subprocess.Popen([sys.executable, "-m", "draftwise.cli.main", "launch", str(model), "--engine", str(faulty),
                             "--ctx", "512", "--mtp", "off", "--verbose"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line.rstrip("\n"))
            if line.startswith("  total"):
                break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "\n".join(seen)
    assert "relaunch: The CPU's AMX kernels" in text and faults.faults(faulty) == 1, text[-3000:]
    engine_lines = [x[4:] for x in seen if x.startswith("  | ")]
    first, ready = _starts(engine_lines)
    row = next(x for x in seen if x.startswith("  weights"))
    print(row)
    (planned, p_unit), (actual, a_unit) = _sizes(row)[:2]
    shown = logparse.parse_lines(ready).summary()["weights"]
    assert abs(actual - shown) <= 0.05 * a_unit, (row, shown)  # printed with one decimal
    # The first start's lines, where it printed them, are not added in. On a CPU whose AMX
    # really faults (this CI's Xeon VM) the SIGILL can end that start before the engine's log
    # thread prints its buffers; on the emulated fault they are always there.
    assert shown < _weights(first) + _weights(ready) if _weights(first) else _weights(ready) > 0
    assert abs(planned - actual) <= max(0.02 * actual, SMALL_SLACK) + 0.05 * max(p_unit, a_unit), row


_UNITS = {"B": 1, "KiB": 1024, "MiB": MiB, "GiB": 1 << 30}


def _sizes(text: str) -> list[tuple[float, int]]:
    """(bytes, unit) of each size printed in `text` ("47.0 KiB")."""
    return [(float(v) * _UNITS[u], _UNITS[u]) for v, u in re.findall(r"([\d.]+) (B|KiB|MiB|GiB)\b", text)]
