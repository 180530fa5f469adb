"""Plans the real engine must accept, and whose bytes it must confirm.

Each test plans a launch of a tiny model of one architecture, starts the pinned CPU
llama-server with exactly the plan's arguments (plus the speculative ones and `-lv 4`),
waits until it is ready and compares the plan with the engine's own buffer lines. A plan
the engine refuses fails here. GPU-shaped plans (partial offload, experts in RAM, engine
fit) are launched too: a CPU build parses and accepts the same flags.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import headless
from draftwise.core.machine.hardware import GB, Gpu, Machine, cpu_only
from draftwise.core.planning import logparse, plan_types, planned_vs_actual, planner, weight_table
from draftwise.core.speculation.resolver import AUTO_MTP, EXPLICIT, NONE, SpecDecision
from draftwise.testing import tinyarchs as ta
from draftwise.testing.tinymodels import TinyModel, draft_model

pytestmark = pytest.mark.engine

G = dict(ta.BENCH_GEOMETRY, n_ctx_train=32768, n_pieces=200)
NO_SPEC = SpecDecision(None, None, NONE, False)
MTP = SpecDecision("draft-mtp", None, AUTO_MTP, True)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("plan-engine")
    llama = TinyModel(name="pe-llama", n_layer=4, **G)
    specs = {
        "llama": llama,
        "qwen3": ta.qwen3_model(**G),
        "gemma3": ta.gemma3_model(**G),
        "moe": ta.qwen3moe_model(n_ff_exp=256, **G),
        "hybrid": ta.granitehybrid_model(**G),
        "mtp": ta.mtp_bench_model(n_layer=5, n_ff_exp=256, n_ctx_train=32768, n_pieces=200),
        "draft": replace(draft_model(llama, n_embd=128, n_head=2, n_head_kv=1, n_ff=256, n_layer=2),
                         n_ctx_train=32768),
    }
    return {k: ta.write_arch(d / f"{k}.gguf", m)[0] for k, m in specs.items()}


def _strip_ctx(args: tuple[str, ...]) -> list[str]:
    out = list(args)
    i = out.index("-c")
    del out[i : i + 2]
    return out


def launch(engine, path: Path, plan: planner.Plan, spec: SpecDecision, tmp_path: Path) -> logparse.ActualMemory:
    """Start the engine with the plan; fail the test if it is not ready."""
    assert plan.fits, plan.reasons
    server = headless.start_server(
        engine.binary, path, ctx=plan.n_ctx, log_dir=tmp_path,
        extra_args=[*_strip_ctx(plan.plan_args), *spec.argv, "-lv", "4"],
    )  # fmt: skip
    try:
        server.wait_ready(60)
        server.complete("Hello", n_predict=2)
    finally:
        server.stop()
    return logparse.parse_log(server.log_text())


def assert_close(plan: planner.Plan, actual: logparse.ActualMemory, nextn_bytes: int = 0) -> None:
    t = actual.by_component(logparse.TARGET)
    assert abs(plan.bytes.weights + nextn_bytes - t["weights"]) <= 0.02 * t["weights"]
    assert abs(plan.bytes.kv - (t["kv"] + t["rs"])) <= 0.02 * (t["kv"] + t["rs"]) + 10240
    compute = t["compute"] + t["output"]
    assert abs(plan.bytes.compute + plan.bytes.output - compute) <= 0.15 * compute
    assert plan.bytes.total >= 0.98 * actual.total


@pytest.mark.parametrize("name, ctx, kv, slots", [
    ("llama", 8192, "f16", 1),
    ("qwen3", 4096, "q8_0", 2),
    ("gemma3", 8192, "f16", 1),
    ("moe", 4096, "q4_0", 1),
    ("hybrid", 8192, "f16", 2),
])  # fmt: skip
def test_planned_setups_launch_and_match(engine, models, tmp_path, name, ctx, kv, slots):
    info = gguf.read_model(models[name])
    prefs = planner.PlanPrefs(ctx=ctx, kv_type=kv, slots=slots)
    plan = planner.plan(info, NO_SPEC, cpu_only(8 * GB), prefs)
    assert (plan.ctx, plan.kv_type, plan.slots) == (ctx, kv, slots)
    actual = launch(engine, models[name], plan, NO_SPEC, tmp_path)
    assert_close(plan, actual)
    assert actual.caches[0].streams == slots


def test_mtp_plan_launches_with_its_draft_context(engine, models, tmp_path):
    info = gguf.read_model(models["mtp"])
    plan = planner.plan(info, MTP, cpu_only(8 * GB), planner.PlanPrefs(ctx=8192))
    assert str(plan.drafter) == "MTP head" and plan.slots == 1
    actual = launch(engine, models["mtp"], plan, MTP, tmp_path)
    assert actual.has_draft
    nextn = sum(weight_table.read_weight_table(info).nextn)
    assert_close(plan, actual, nextn_bytes=nextn)
    drafter = actual.summary()["drafter"]
    assert abs(plan.bytes.drafter - nextn - drafter) <= 0.05 * drafter


def test_forced_draft_model_kept_on_a_tight_machine(engine, models, tmp_path):
    """A small described RAM: the target's context shrinks, the user's draft stays, the
    engine starts with both."""
    info = gguf.read_model(models["llama"])
    draft = gguf.read_model(models["draft"])
    spec = SpecDecision("draft-simple", models["draft"], EXPLICIT, False)
    prefs = planner.PlanPrefs(ctx=32768, kv_type="f16")
    roomy = planner.plan(info, spec, cpu_only(8 * GB), prefs, draft)
    need = roomy.bytes.total
    tight = cpu_only(plan_types.RAM_MARGIN + need - 8 * (1 << 20))
    plan = planner.plan(info, spec, tight, prefs, draft)
    assert plan.fits and not plan.drop_drafter and plan.ctx < 32768
    actual = launch(engine, models["llama"], plan, spec, tmp_path)
    assert actual.has_draft and actual.caches[-1].cells == plan.ctx


def test_gpu_shaped_plans_are_accepted_by_the_engine(engine, models, tmp_path):
    """Partial-offload plans made for a described GPU machine: the flags they carry
    (--n-cpu-moe, -ngl N, --fit on --fit-target) must parse and start."""
    info = gguf.read_model(models["moe"])
    wt = weight_table.read_weight_table(info)
    prefs = planner.PlanPrefs(ctx=4096, kv_type="f16")
    roomy = Gpu(0, "cuda", "big GPU", None, 0, 8 * GB, device="CUDA0")
    whole = planner.plan(info, NO_SPEC, Machine(8 * GB, 8 * GB, [roomy], "Linux"), prefs)
    assert whole.fit_state == plan_types.FITS
    # A GPU 1.5 layers of experts short: those experts must stay in RAM.
    short = whole.per_device[0].total - wt.experts[0] * 3 // 2
    machine = Machine(8 * GB, 8 * GB, [replace(roomy, free_bytes=plan_types.GPU_MARGIN + short)], "Linux")
    for engine_fit in (False, True):
        plan = planner.plan(info, NO_SPEC, machine, replace(prefs, engine_fit=engine_fit))
        assert plan.n_cpu_moe == 2
        assert plan.fit_state == plan_types.PARTIAL, plan.reasons
        if engine_fit:
            assert "--fit-target" in plan.plan_args
        else:
            assert "--n-cpu-moe" in plan.plan_args
        launch(engine, models["moe"], plan, NO_SPEC, tmp_path)


def test_planned_vs_actual_rows_for_an_mtp_head(engine, models, tmp_path):
    """The window's rows compare like with like: the engine counts an embedded MTP head in
    the model buffer, so the plan's head bytes move from drafter to weights there."""
    info = gguf.read_model(models["mtp"])
    plan = planner.plan(info, MTP, cpu_only(8 * GB), planner.PlanPrefs(ctx=4096))
    assert plan.bytes.embedded_head > 0
    rows = {r["component"]: r for r in planned_vs_actual.compare(plan, launch(engine, models["mtp"], plan, MTP, tmp_path))}
    assert abs(rows["weights"]["error"]) < 0.02
    assert abs(rows["drafter"]["error"]) < 0.15
    assert rows["total"]["planned"] == plan.bytes.total
