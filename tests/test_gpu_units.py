"""GPU decisions on recorded engine output: device inventory and choice, per-device limits,
the GPU verdict (Vulkan, CUDA and ROCm lines), the CPU's extra weight buffers, and the one
relaunch without a feature that crashed."""

from __future__ import annotations

from pathlib import Path

import pytest

from draftwise.core import settings as settings_mod
from draftwise.core.engines.engine_settings import DEFAULTS
from draftwise.core.gguf.reader import TensorInfo
from draftwise.core.launch import crash, gpu_check
from draftwise.core.launch.crash import ExitStatus
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.launch_flow import GpuChecked, LaunchFlow, Notice, Relaunched, Spawn
from draftwise.core.launch.launch_spec import LaunchSpec, gpu_env
from draftwise.core.machine import device_choice, probe_parsers
from draftwise.core.machine.hardware import GB, DeviceLimit, Gpu, Machine
from draftwise.core.planning import cpu_buffers, model_shape, planner, weight_table
from draftwise.core.speculation.resolver import NONE, SpecDecision

MiB = 1 << 20
NO_SPEC = SpecDecision(None, None, NONE, False)

# Parser inputs in the formats of `vulkaninfo --summary` and the engine's `--list-devices`
# (llvmpipe's lines as lavapipe prints them here; the Radeon beside it is typed to give the
# parser a second, physical device). The tests read back what the text says; the live
# inventory and the GPU verdict on lavapipe are tests/test_gpu_vulkan.py's.
VULKANINFO = """Devices:
========
GPU0:
\tapiVersion         = 1.3.230
\tdeviceType         = PHYSICAL_DEVICE_TYPE_CPU
\tdeviceName         = llvmpipe (LLVM 15.0.6, 256 bits)
GPU1:
\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
\tdeviceName         = AMD Radeon RX 7800 XT (RADV NAVI32)
"""
LIST_ALL = """Available devices:
  Vulkan0: llvmpipe (LLVM 15.0.6, 256 bits) (2048 MiB, 2048 MiB free)
  Vulkan1: AMD Radeon RX 7800 XT (RADV NAVI32) (16368 MiB, 15800 MiB free)
"""
VULKAN_USED = [
    "0.00.1 I llama_model_load_from_file_impl: using device Vulkan0 (llvmpipe (LLVM 15.0.6, 256 bits)) (unknown id) - 2048 MiB free",
    "0.00.2 I load_tensors: offloaded 19/19 layers to GPU",
    "0.00.3 I load_tensors:      Vulkan0 model buffer size =    65.16 MiB",
    "0.00.3 I load_tensors:   CPU_Mapped model buffer size =   170.00 MiB",
]


# ------------------------------------------------------------------ inventory and choice
def test_vulkaninfo_and_software_marking():
    devices = probe_parsers.parse_vulkaninfo(VULKANINFO)
    assert [(d.index, d.software) for d in devices] == [(0, True), (1, False)]
    gpus = probe_parsers.mark_software(probe_parsers.parse_list_devices(LIST_ALL), devices)
    assert [g.software for g in gpus] == [True, False]
    # Without vulkaninfo the driver's name still gives lavapipe away.
    assert probe_parsers.mark_software(probe_parsers.parse_list_devices(LIST_ALL), [])[0].software


def test_cpu_variant_from_the_load_line():
    line = "0.00.04 I load_backend: loaded CPU backend from /e/libggml-cpu-sapphirerapids.so"
    assert probe_parsers.parse_cpu_variant(line) == "sapphirerapids"
    assert probe_parsers.parse_cpu_variant("load_backend: loaded CPU backend from C:\\e\\ggml-cpu-haswell.dll") == "haswell"
    assert probe_parsers.parse_cpu_variant("Available devices:\n  (none)") is None


def _machine() -> Machine:
    gpus = probe_parsers.mark_software(probe_parsers.parse_list_devices(LIST_ALL), probe_parsers.parse_vulkaninfo(VULKANINFO))
    return Machine(32 * GB, 30 * GB, gpus)


def test_automatic_choice_never_takes_a_software_device_and_renames_for_the_engine():
    auto = device_choice.select(_machine())
    # Only the Radeon is shown, and with GGML_VK_VISIBLE_DEVICES=1 the engine calls it Vulkan0.
    assert [(g.index, g.device) for g in auto.gpus] == [(1, "Vulkan0")] and auto.visible == (1,)
    assert gpu_env("vulkan", auto.gpus, chosen=device_choice.visible_for(auto, "vulkan")).env == {
        "GGML_VK_VISIBLE_DEVICES": "1"}
    lavapipe_only = Machine(8 * GB, 8 * GB, [_machine().gpus[0]])
    alone = device_choice.select(lavapipe_only)
    assert alone.gpus == [] and gpu_env("vulkan", alone.gpus, chosen=device_choice.visible_for(alone, "vulkan")).env == {}


def test_explicit_choice_takes_the_software_device(tiny_info):
    picked = device_choice.select(_machine(), ["Vulkan0"])
    assert picked.pinned and [g.name for g in picked.gpus] == ["llvmpipe (LLVM 15.0.6, 256 bits)"]
    assert gpu_env("vulkan", picked.gpus, chosen=device_choice.visible_for(picked, "vulkan")).env == {
        "GGML_VK_VISIBLE_DEVICES": "0"}
    plan = planner.plan(tiny_info, NO_SPEC, picked, shape=_SHAPE, weights=_WT)
    assert plan.per_device[0].device == "Vulkan0" and plan.gpu_layers == plan.n_layers
    with pytest.raises(device_choice.DeviceChoiceError, match="Vulkan7"):
        device_choice.select(_machine(), ["Vulkan7"])
    # A machine with no GPU of that kind (a CPU build) runs without it; the verdict says why.
    none = device_choice.select(Machine(8 * GB, 8 * GB, []), ["Vulkan0"])
    assert none.gpus == [] and none.requested == ("Vulkan0",)


# ------------------------------------------------------------------ limits
def test_device_limit_capacity_margin_and_json():
    keep = DeviceLimit(keep_free=2 * GB)
    assert keep.capacity(8 * GB, GB) == 6 * GB and keep.margin(8 * GB) == 2 * GB
    most = DeviceLimit(at_most=3 * GB)
    assert most.capacity(8 * GB, GB) == 3 * GB and most.margin(8 * GB) == 5 * GB
    assert DeviceLimit.from_json({"max_gb": 3}) == most and DeviceLimit.from_json({}) is None
    for bad in ({"max_gb": 0}, {"keep_free_gb": "2"}, {"keep_free_gb": 1, "max_gb": 2}):
        with pytest.raises(ValueError):
            DeviceLimit.from_json(bad)
    with pytest.raises(ValueError, match="GPU 0: max_gb"):
        Machine.from_json({"ram_gb": 16, "gpus": [{"backend": "vulkan", "memory_gb": 8, "max_gb": -1}]})
    m = Machine.from_json({"ram_gb": 16, "gpus": [{"backend": "cuda", "memory_gb": 8, "keep_free_gb": 2}]})
    assert m.gpus[0].limit == DeviceLimit(keep_free=2 * GB)


def test_limits_reach_the_plan_and_the_fit_target(tiny_info):
    gpus = [Gpu(0, "cuda", "A", total_bytes=8 * GB, free_bytes=8 * GB, device="CUDA0",
                limit=DeviceLimit(keep_free=6 * GB)),
            Gpu(1, "cuda", "B", total_bytes=8 * GB, free_bytes=8 * GB, device="CUDA1",
                limit=DeviceLimit(at_most=1 * GB))]  # fmt: skip
    machine = Machine(64 * GB, 64 * GB, gpus)
    big = _WT.scaled(2000.0)  # about 10 GB of weights: must be split
    plan = planner.plan(tiny_info, NO_SPEC, machine, shape=_SHAPE, weights=big)
    caps = {d.device: d.capacity for d in plan.per_device}
    assert caps["CUDA0"] == 2 * GB and caps["CUDA1"] == 1 * GB
    assert all(d.total <= d.capacity for d in plan.per_device)
    args = plan.plan_args
    assert args[args.index("--fit-target") + 1] == f"{6 * 1024},{7 * 1024}"


def test_settings_keep_device_limits_and_drop_bad_ones(tmp_path: Path):
    s = settings_mod.Settings(device="Vulkan0", device_limits={"vulkan:0:llvmpipe": {"max_gb": 1.5}})
    path = settings_mod.save(s, tmp_path / "settings.json")
    back = settings_mod.load(path).settings
    assert back.device == "Vulkan0" and back.device_limits == {"vulkan:0:llvmpipe": {"max_gb": 1.5}}
    raw = settings_mod.Settings.from_json({"device_limits": {"a": {"max_gb": 0}, "b": {"x": 1}, "c": {"keep_free_gb": 2}}})
    assert raw.device_limits == {"c": {"keep_free_gb": 2.0}}
    assert device_choice.limits_from(raw.device_limits) == {"c": DeviceLimit(keep_free=2 * GB)}


# ------------------------------------------------------------------ the verdict
def test_verdict_vulkan_used():
    v = gpu_check.check("vulkan", ["Vulkan0"], VULKAN_USED)
    assert v.used and str(v) == "19 of 19 layers on Vulkan0 (llvmpipe)."
    assert v.seen.model_buffers["Vulkan0"] == round(65.16 * MiB)


@pytest.mark.parametrize(("backend", "lines", "words"), [
    ("cuda", ["W ggml_cuda_init: failed to initialize CUDA: CUDA driver version is insufficient for CUDA runtime version"],
     "failed to initialize CUDA: CUDA driver version is insufficient"),
    ("rocm", ["W ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected"],
     "failed to initialize ROCm: no ROCm-capable device"),
    ("vulkan", ["I ggml_vulkan: No devices found."], "ggml_vulkan: No devices found."),
])  # fmt: skip
def test_verdict_gpu_runtime_failures(backend, lines, words):
    device = {"cuda": "CUDA0", "rocm": "ROCm0", "vulkan": "Vulkan0"}[backend]
    v = gpu_check.check(backend, [device], lines)
    assert not v.used and "GPU not used" in str(v) and words in str(v)


def test_verdict_other_cases():
    v = gpu_check.check("cpu", ["Vulkan0"], [])
    assert not v.used and "no Vulkan backend" in str(v) and "--backend vulkan" in str(v)
    zero = [VULKAN_USED[0], "load_tensors: offloaded 0/19 layers to GPU"]
    assert "offloaded 0 of 19" in str(gpu_check.check("vulkan", ["Vulkan0"], zero))
    assert "did not open Vulkan1" in str(gpu_check.check("vulkan", ["Vulkan0", "Vulkan1"], VULKAN_USED))
    assert gpu_check.check("cpu", [], ["whatever"]) is None
    assert gpu_check.check("vulkan", [], VULKAN_USED).used  # a GPU the engine chose itself


# ------------------------------------------------------------------ CPU extra buffers
def _t(name: str, shape: tuple[int, ...], type_name: str, nbytes: int, offset: int = 0) -> TensorInfo:
    return TensorInfo(name, shape, 0, type_name, offset, nbytes)


def test_which_weights_the_cpu_re_lays():
    q4 = _t("blk.0.attn_q.weight", (640, 1024), "Q4_0", 1024 * 20 * 18)
    assert cpu_buffers.extra_buffer(q4, "haswell") == ("CPU_REPACK", q4.nbytes)
    assert cpu_buffers.extra_buffer(q4, "sandybridge") is None  # no AVX2
    assert cpu_buffers.extra_buffer(q4, None) is None
    assert cpu_buffers.extra_buffer(_t("blk.0.attn_q.weight", (640, 1020), "Q4_0", 1), "haswell") is None  # rows % 8
    q8 = _t("blk.0.ffn_up.weight", (256, 512), "Q8_0", 512 * 8 * 34)
    assert cpu_buffers.extra_buffer(q8, "haswell") is None  # x86 repacks no Q8_0
    assert cpu_buffers.extra_buffer(q8, "armv8.2_1") == ("CPU_REPACK", q8.nbytes)
    # AMX (sapphirerapids) takes Q8_0 with a 4-byte compensation per block, and F16 as it is.
    assert cpu_buffers.extra_buffer(q8, "sapphirerapids") == ("AMX", q8.nbytes + 512 * 8 * 4)
    f16 = _t("blk.0.ffn_up.weight", (256, 512), "F16", 256 * 512 * 2)
    assert cpu_buffers.extra_buffer(f16, "sapphirerapids") == ("AMX", f16.nbytes)
    assert cpu_buffers.extra_buffer(_t("token_embd.weight", (640, 1024), "Q4_0", 9), "haswell") is None  # GET_ROWS
    assert cpu_buffers.extra_buffer(_t("blk.0.attn_norm.weight", (640,), "F32", 9), "haswell") is None


def test_mapped_range_spans_the_holes():
    wt = weight_table.WeightTable((300, 300), (0, 0), 100, 0, tensors=(
        (0, _t("token_embd.weight", (8, 8), "F16", 100, 0)),
        (0, _t("blk.0.attn_q.weight", (64, 12), "Q4_0", 300, 100)),
        (0, _t("blk.1.attn_norm.weight", (8,), "F32", 300, 400)),
    ))  # fmt: skip
    cw = cpu_buffers.cpu_weights(wt, "haswell")
    assert cw.extra == {} and cw.mapped == 700  # 12 rows: not a multiple of 8 -> stays mapped
    wt2 = weight_table.WeightTable((300, 300), (0, 0), 100, 0, tensors=(
        (0, _t("token_embd.weight", (8, 8), "F16", 100, 0)),
        (0, _t("blk.0.attn_q.weight", (64, 16), "Q4_0", 300, 100)),
        (0, _t("blk.1.attn_norm.weight", (8,), "F32", 300, 400)),
    ))  # fmt: skip
    cw2 = cpu_buffers.cpu_weights(wt2, "haswell")
    # The Q4_0 tensor moves to CPU_REPACK, but the mapping still spans its bytes.
    assert cw2.extra == {"CPU_REPACK": 300} and cw2.mapped == 700 and cw2.total == 1000
    # With a GPU device there are no extra buffers; a block on the GPU between two tensors in
    # RAM is a hole the mapping spans (experts in RAM around GPU blocks).
    gpu_between = cpu_buffers.cpu_weights(wt2, None, on_cpu=lambda t: not t.name.startswith("blk.0"))
    assert gpu_between.mapped == 700 and gpu_between.summed < 700


# ------------------------------------------------------------------ one relaunch without the feature
def _spec(tmp_path: Path, backend: str = "vulkan") -> LaunchSpec:
    return LaunchSpec(kind="llama.cpp", binary=tmp_path / "llama-server", model_path=tmp_path / "m.gguf",
                      argv=("llama-server", "-m", "m.gguf"), env={}, host="127.0.0.1", port=8080, api_key="k",
                      spec=NO_SPEC, backend=backend, expected_devices=("Vulkan0",),
                      fix_devices=("Vulkan0",))  # fmt: skip


def test_gpu_crash_after_ready_relaunches_once_with_fa_off_and_is_remembered(tmp_path: Path):
    fixes = EngineFixes(tmp_path / "fixes.json")
    flow = LaunchFlow(_spec(tmp_path), fixes=fixes)
    flow.start(0.0)
    flow.output(VULKAN_USED, 1.0)
    ready = flow.health(200, 2.0)
    assert any(isinstance(a, GpuChecked) and a.verdict.used for a in ready)
    # The first request segfaults the driver.
    actions = flow.exited(ExitStatus.from_returncode(-11), 3.0)
    relaunch = [a for a in actions if isinstance(a, Relaunched)]
    spawn = [a for a in actions if isinstance(a, Spawn)]
    assert relaunch and relaunch[0].fix.args == crash.FA_OFF
    assert spawn and spawn[0].argv[-2:] == crash.FA_OFF
    assert any(isinstance(a, Notice) and "flash attention off" in a.text for a in actions)
    assert fixes.args_for(flow.spec.binary, flow.spec.model_path, ("Vulkan0",)) == ()  # not yet: not ready
    flow.output(VULKAN_USED, 4.0)
    flow.health(200, 5.0)
    assert fixes.args_for(flow.spec.binary, flow.spec.model_path, ("Vulkan0",)) == crash.FA_OFF
    # A second crash is not relaunched again.
    assert not any(isinstance(a, Relaunched) for a in flow.exited(ExitStatus.from_returncode(-11), 6.0))


def test_features_that_are_not_relaunched():
    seg = ExitStatus.from_returncode(-11)
    assert crash.feature_fix(seg, VULKAN_USED, DEFAULTS, after_ready=False) is None  # startup: other rules
    assert crash.feature_fix(seg, ["I load_tensors: CPU_Mapped"], DEFAULTS, after_ready=True) is None  # no GPU
    assert crash.feature_fix(seg, VULKAN_USED, crash.FA_OFF_FIX, after_ready=True) is None  # already off
    sigill = ExitStatus.from_returncode(-4)
    amx = ["I load_backend: loaded CPU backend from /e/libggml-cpu-sapphirerapids.so"]
    fix = crash.feature_fix(sigill, amx, DEFAULTS, after_ready=False)
    assert fix is not None and fix.args == crash.NO_REPACK
    assert crash.feature_fix(sigill, amx, crash.NO_REPACK_FIX, after_ready=False) is None
    haswell = ["I load_backend: loaded CPU backend from /e/libggml-cpu-haswell.so"]
    assert crash.feature_fix(sigill, haswell, DEFAULTS, after_ready=False) is None


# ------------------------------------------------------------------ helpers
@pytest.fixture(scope="module")
def tiny_info(tmp_path_factory: pytest.TempPathFactory):
    from draftwise.core.gguf import reader as gguf
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    return gguf.read_model(write_tiny_model(tmp_path_factory.mktemp("u") / "tiny.gguf", TinyModel())[0])


_SHAPE = model_shape.Shape("llama", 64, 323, 4096, (model_shape.Layer(k=32, v=32, ff=128),) * 2)
_WT = weight_table.WeightTable((2 * MiB, 2 * MiB), (0, 0), MiB, MiB)


# ------------------------------------------------------------------ the window's picker
def test_devices_viewmodel_choice_and_limit(qapp=None):
    pytest.importorskip("PySide6")
    from draftwise.viewmodels.devices import DevicesViewModel

    s = settings_mod.Settings()
    vm = DevicesViewModel(s)
    vm.set_probed(_machine())
    assert [c.name for c in vm.choices()] == [None, "Vulkan0", "Vulkan1"]
    assert "software" in vm.choices()[1].label
    assert [g.index for g in vm.machine.gpus] == [1]  # automatic: the Radeon
    vm.select("Vulkan0")
    assert s.device == "Vulkan0" and vm.machine.pinned and vm.machine.gpus[0].software
    vm.set_keep_free_gb(0.5)
    assert vm.machine.gpus[0].limit == DeviceLimit(keep_free=GB // 2) and vm.keep_free_gb() == 0.5
    vm.set_keep_free_gb(None)
    assert vm.machine.gpus[0].limit is None
    s.device = "Vulkan9"  # a stored choice this engine lacks: automatic instead
    assert [g.index for g in vm.machine.gpus] == [1]
