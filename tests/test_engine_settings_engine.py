"""The settings stage on the real engine (issue 30): every setting it tries starts, answers
and times a long prompt; the layout the launch then runs is the one planned, buffer by
buffer. On an engine copy that loads the AVX2 (haswell) CPU module, which re-lays Q4_0
weights (CPU_REPACK), so repack is a dimension here too (this Xeon's own module is AMX's,
which faults here and is fixed with -nr: tests/test_cpu_buffers_engine.py).

Structure and the engine's own figures, not speed: which setting is faster on a 2-core
machine shared with other work is the measurement's to say, not the test's.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities
from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.kinds import Switch
from draftwise.core.launch import prepare
from draftwise.core.machine import device_choice, hardware
from draftwise.core.measurements import measured, tuned
from draftwise.core.measuring import arms, tuning
from draftwise.core.planning import planned_vs_actual, planner
from draftwise.core.speculation.setup import NONE
from draftwise.testing import gpu_launch
from draftwise.testing import tinyarchs as ta
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

pytestmark = [pytest.mark.engine, pytest.mark.real_machine]


@pytest.fixture
def haswell(engine, tmp_path: Path) -> Path:
    if not any(p.name == "libggml-cpu-haswell.so" for p in engine.binary.parent.iterdir()):
        pytest.skip("this engine has no haswell CPU module")
    return gpu_launch.engine_with_cpu_variant(engine.binary, tmp_path / "haswell", "haswell")


@pytest.mark.timeout(600)
def test_the_settings_stage_runs_every_setting_and_the_kept_layout_is_the_planned_one(haswell, tmp_path):
    model = write_tiny_model(tmp_path / "q4.gguf", TinyModel(name="q4", n_layer=4, dtype="Q4_0",
                                                               **dict(ta.BENCH_GEOMETRY, n_ctx_train=4096)))[0]
    machine = device_choice.select(hardware.inventory(haswell, max_age=0), None, None)
    assert machine.cpu_variant == "haswell"
    caps = capabilities.capabilities(haswell)
    prepared = prepare.prepare(prepare.Request(model=model, prefs=planner.PlanPrefs(ctx=2048)), caps, machine)
    assert prepared.plan.bytes.cpu_extra.get("CPU_REPACK", 0) > 0
    dims = tuning.dimensions(prepared, caps.has_flag)
    assert {d.name for d in dims} >= {"repack", "flash_attn"}
    settings = arms.MeasureSettings(tokens=8, rounds=2, prompt_speed=True)
    steps = arms.Steps(1 + len(settings.prompts))
    run = arms.EngineArms(prepared, haswell, settings=settings, steps=steps, machine=machine)
    key = tuned.key_for(model, haswell, machine)
    t = tuning.tune(run, NONE, dims, settings.rounds, steps, key=key)
    assert t is not None
    tried = {r.settings for r in t.rows}
    assert EngineSettings(repack=False) in tried and EngineSettings() in tried
    for row in t.rows:
        # Every setting ran (none faulted) and the engine timed both: what it wrote and the
        # long prompt it read (more tokens than the largest batch tried, so -ub shows in it).
        assert not row.fault and row.rounds >= 2 and row.speed.decode > 0 and row.speed.prompt > 0, row
    # The -nr arm was planned without the copies, as a launch with -nr is.
    flat = run._planned[(None, EngineSettings(repack=False))]
    assert flat.plan.bytes.cpu_extra == {} and flat.engine == EngineSettings(repack=False)
    assert flat.argv(haswell)[-1:] == ["-nr"]  # rendered once, after the user's arguments
    # Kept and launched: the plan passes -nr and plans the mapped file alone, and the engine's
    # buffers say the same (no CPU_REPACK; the CPU's weights within 2 %).
    store = measured.MeasuredRecords(tmp_path / "data" / "speculation-measured.json")
    store.tuned().record(replace(t, settings=EngineSettings(repack=False)))
    o = gpu_launch.run(haswell, "cpu", model, log_dir=tmp_path, prefs=planner.PlanPrefs(ctx=2048), measured=store)
    assert o.ready and o.completion is not None, o.log[-15:]
    assert "-nr" in o.argv and o.prepared.plan.bytes.cpu_extra == {}
    assert o.actual.by_buffer().get("CPU_REPACK", 0) == 0
    row = o.row("CPU", "weights")
    assert row is not None and abs(row["planned"] - row["actual"]) <= 0.02 * row["actual"], o.rows
    assert any(str(r).startswith("weights not repacked (-nr):") for r in o.prepared.plan.settings_notes)
    # Flash attention off as well: the compute buffer then holds the KQ scores
    # (compute_buffer.scores_bytes), planned as the engine allocates them.
    both = EngineSettings(repack=False, flash_attn=Switch.OFF)
    store.tuned().record(replace(t, settings=both))
    off = gpu_launch.run(haswell, "cpu", model, log_dir=tmp_path, prefs=planner.PlanPrefs(ctx=2048), measured=store)
    assert off.ready and ("-fa", "off") == tuple(off.argv[off.argv.index("-fa"):][:2])
    rows = {r["component"]: r for r in planned_vs_actual.compare(off.prepared.plan, off.actual)}
    assert abs(rows["compute"]["error"]) <= 0.10, rows
    assert rows["compute"]["planned"] > o.prepared.plan.bytes.compute


@pytest.mark.timeout(600)
def test_the_quick_measurements_settings_stage_runs_half_the_prompts(haswell, tmp_path, capsys):
    """`draftwise measure` tries repack where the weights are re-laid (Q4_0 on the haswell
    module), on the prompts of quick.SETTINGS_KINDS alone, set against none on those."""
    from draftwise.cli.main import main
    from draftwise.core.measuring import quick

    model = write_tiny_model(tmp_path / "q4" / "q4.gguf", TinyModel(name="q4", n_layer=4, dtype="Q4_0",
                                                                    **dict(ta.BENCH_GEOMETRY, n_ctx_train=4096)))[0]
    code = main(["measure", str(model), "--engine", str(haswell), "--tokens", "8", "--rounds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    ran = re.findall(r"without speculation \(-nr\): (.+) prompt, round 1$", out, re.M)
    assert ran == list(quick.SETTINGS_KINDS), out
    assert len(re.findall(r"without speculation: (.+) prompt, round 1$", out, re.M)) == len(quick.PROMPTS)
    assert re.search(r"^-nr +\d", out, re.M), out  # its row in the settings table
