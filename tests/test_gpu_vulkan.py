"""The GPU tier: the Vulkan engine on a real Vulkan device (lavapipe here, a conformant
Vulkan 1.3 device that runs on the CPU), launched the way `draftwise launch` does it.

Each launch plans with the device the inventory read from the engine's own
`--list-devices`, starts the engine, answers one short request and reads the engine's
buffer lines back: weights and KV per device must be within 2 % of the plan. lavapipe is
slow (readiness 5-35 s), so the models are small and the requests a few tokens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core.launch import crash
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.machine import device_choice, hardware
from draftwise.core.planning import plan_types, planner
from draftwise.testing import gpu_launch
from draftwise.testing import tinyarchs as ta
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

pytestmark = [pytest.mark.gpu, pytest.mark.engine, pytest.mark.real_machine]

MiB = 1 << 20
LIMIT = 40 * MiB  # "use at most 40 MB of this GPU": about a third of the dense model below


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("gpu-models")
    dense = TinyModel(name="gpu-llama", dtype="F16", n_embd=512, n_ff=2048, n_head=8, n_head_kv=4, n_layer=8)
    moe = ta.qwen3moe_model(name="gpu-moe", n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_ff_exp=512,
                            n_expert=8, n_expert_used=2, n_layer=4, dtype="F16")  # fmt: skip
    return {"dense": write_tiny_model(d / "dense.gguf", dense)[0], "moe": ta.write_arch(d / "moe.gguf", moe)[0]}


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("DRAFTWISE_DATA_DIR", "DRAFTWISE_CONFIG_DIR", "DRAFTWISE_CACHE_DIR"):
        monkeypatch.setenv(var, str(tmp_path / var.lower()))
    return tmp_path


def within_2_percent(o: gpu_launch.Outcome, device: str, component: str) -> None:
    row = o.row(device, component)
    assert row is not None and row["actual"] > 0, (device, component, o.rows)
    assert abs(row["planned"] - row["actual"]) <= 0.02 * row["actual"] + 16 * 1024, row


def limits_for(binary: Path, limit: hardware.DeviceLimit) -> dict[str, hardware.DeviceLimit]:
    return {g.key: limit for g in hardware.inventory(binary, max_age=0).gpus}


def test_inventory_reads_the_software_device_from_the_engine(vulkan_engine):
    machine = hardware.inventory(vulkan_engine.binary, max_age=0)
    vk = [g for g in machine.gpus if g.backend == hardware.VULKAN]
    assert vk and vk[0].device == "Vulkan0" and vk[0].total_bytes > 0
    lavapipe = [g for g in vk if "llvmpipe" in g.name]
    if lavapipe:
        assert lavapipe[0].software and lavapipe[0] not in machine.automatic_gpus
        auto = device_choice.select(machine)
        assert lavapipe[0].key not in {g.key for g in auto.gpus}
    chosen = device_choice.select(machine, ["Vulkan0"])
    assert chosen.pinned and [g.engine_name for g in chosen.gpus] == ["Vulkan0"] and chosen.visible == (vk[0].index,)


def test_full_offload_on_vulkan0(vulkan_engine, models, isolated):
    o = gpu_launch.run(vulkan_engine.binary, "vulkan", models["dense"], log_dir=isolated, devices=["Vulkan0"],
                       n_predict=4)  # fmt: skip
    assert o.ready and o.completion is not None, o.log[-20:]
    assert o.spec.env["GGML_VK_VISIBLE_DEVICES"] == str(o.machine.gpus[0].index)
    assert "-ngl" in o.argv and o.argv[o.argv.index("-ngl") + 1] == "all"
    assert o.verdict is not None and o.verdict.used
    assert str(o.verdict.message).startswith("9 of 9 layers on Vulkan0 (")
    within_2_percent(o, "Vulkan0", "weights")
    within_2_percent(o, "Vulkan0", "kv")


@pytest.mark.parametrize("engine_fit", [False, True], ids=["planned-split", "engine-fit"])
def test_partial_offload_under_a_per_device_limit(vulkan_engine, models, isolated, engine_fit):
    limit = hardware.DeviceLimit(at_most=LIMIT)
    o = gpu_launch.run(vulkan_engine.binary, "vulkan", models["dense"], log_dir=isolated, devices=["Vulkan0"],
                       limits=limits_for(vulkan_engine.binary, limit),
                       prefs=planner.PlanPrefs(ctx=512, engine_fit=engine_fit), n_predict=4)  # fmt: skip
    assert o.ready and o.completion is not None, o.log[-20:]
    plan = o.prepared.plan
    gpu = next(d for d in plan.per_device if d.device == "Vulkan0")
    assert plan.fit_state == plan_types.PARTIAL and 0 < gpu.layers < 8 and gpu.total <= LIMIT
    if engine_fit:
        free = o.machine.gpus[0].free_bytes
        i = o.argv.index("--fit-target")
        assert o.argv[i + 1] == str((free - LIMIT) // MiB)  # the engine keeps the rest free
    n, m = o.verdict.seen.offloaded
    assert o.verdict.used and 0 < n < m
    within_2_percent(o, "Vulkan0", "weights")
    within_2_percent(o, "Vulkan0", "kv")
    within_2_percent(o, "CPU", "weights")
    within_2_percent(o, "CPU", "kv")


def test_moe_experts_stay_on_the_cpu_and_a_driver_crash_is_survived(vulkan_engine, models, isolated):
    """The experts of the first layers stay in RAM (--n-cpu-moe). On lavapipe this MoE also
    segfaults on its first request with flash attention on: the flow relaunches once with
    `-fa off`, remembers it, and the next launch starts with it."""
    fixes = EngineFixes(isolated / "fixes.json")
    limits = limits_for(vulkan_engine.binary, hardware.DeviceLimit(at_most=30 * MiB))
    prefs = planner.PlanPrefs(ctx=512, engine_fit=False)
    o = gpu_launch.run(vulkan_engine.binary, "vulkan", models["moe"], log_dir=isolated, devices=["Vulkan0"],
                       limits=limits, prefs=prefs, fixes=fixes, n_predict=4)  # fmt: skip
    assert o.ready and o.completion is not None, o.log[-20:]
    moe = o.prepared.plan.n_cpu_moe
    assert 0 < moe and o.argv[o.argv.index("--n-cpu-moe") + 1] == str(moe)
    within_2_percent(o, "Vulkan0", "weights")
    within_2_percent(o, "CPU", "weights")
    within_2_percent(o, "Vulkan0", "kv")
    assert o.verdict is not None and o.verdict.used
    if any(type(a).__name__ == "Relaunched" for a in o.actions):
        # The crash happened: it was survived once, and is remembered for this model and device.
        assert fixes.args_for(vulkan_engine.binary, models["moe"], ("Vulkan0",)) == crash.FA_OFF
        again = gpu_launch.run(vulkan_engine.binary, "vulkan", models["moe"], log_dir=isolated,
                               devices=["Vulkan0"], limits=limits, prefs=prefs, fixes=fixes, n_predict=4)  # fmt: skip
        assert again.ready and again.completion is not None
        assert "-fa" in again.argv and again.argv[again.argv.index("-fa") + 1] == "off"
        assert not any(type(a).__name__ == "Relaunched" for a in again.actions)


def test_vulkan_engine_started_plainly_says_no_devices(vulkan_engine, models, isolated):
    """No device chosen and only a software device here: automatic choice leaves it out, no
    visible-devices variable is set, and the engine's own "No devices found" is reported."""
    machine = hardware.inventory(vulkan_engine.binary, max_age=0)
    if machine.automatic_gpus:
        pytest.skip("this machine has a hardware Vulkan GPU")
    o = gpu_launch.run(vulkan_engine.binary, "vulkan", models["dense"], log_dir=isolated, n_predict=2)
    assert o.ready and "GGML_VK_VISIBLE_DEVICES" not in o.spec.env
    assert o.verdict is not None and not o.verdict.used
    assert "No devices found" in str(o.verdict.message)


def test_cpu_engine_asked_for_vulkan0_says_it_has_no_vulkan_backend(engine, models, isolated):
    o = gpu_launch.run(engine.binary, "cpu", models["dense"], log_dir=isolated, devices=["Vulkan0"], n_predict=2)
    assert o.ready and o.machine.requested == ("Vulkan0",)
    assert o.verdict is not None and not o.verdict.used
    text = str(o.verdict.message)
    assert "no Vulkan backend" in text and "draftwise engine install --backend vulkan" in text


def test_gemma3_270m_q4_k_m_on_vulkan0(vulkan_engine, isolated):
    """A real quantized model (from PyPI chunk packages, checked against SHA256SUMS): its
    blocks on Vulkan0, the tied head and the embeddings on the CPU, within 2 % per device.
    lavapipe with flash attention segfaults on its first request; the launch survives that
    once and starts with `-fa off`."""
    from draftwise.testing import realmodels

    try:
        model = realmodels.gemma3_270m()
    except RuntimeError as exc:
        pytest.skip(f"Gemma 3 270M is not available here: {exc}")
    fixes = EngineFixes(isolated / "fixes.json")
    o = gpu_launch.run(vulkan_engine.binary, "vulkan", model, log_dir=isolated, devices=["Vulkan0"], fixes=fixes,
                       prefs=planner.PlanPrefs(ctx=1024), prompt="The capital of France is", n_predict=3)  # fmt: skip
    assert o.ready and o.completion is not None, o.log[-20:]
    assert o.verdict is not None and str(o.verdict.message).startswith("19 of 19 layers on Vulkan0 (")
    relaunched = any(type(a).__name__ == "Relaunched" for a in o.actions)
    if relaunched:
        assert fixes.args_for(vulkan_engine.binary, model, ("Vulkan0",)) == crash.FA_OFF
        # The plan was made before the relaunch; the engine lines are of the relaunched start.
    within_2_percent(o, "Vulkan0", "weights")
    within_2_percent(o, "Vulkan0", "kv")
    within_2_percent(o, "CPU", "weights")
