"""Dense FFN offload (core/planning/ffn_offload.py, issue 21 item 5): a dense model over the
GPU is planned both ways, whole layers on the CPU or the FFN weights of the first blocks on
the CPU with `-ot`, and the faster by the stated cost model is chosen. Placement only; the
engine's judgement of both layouts is tests/test_dense_offload_engine.py."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import owned_args
from draftwise.core.machine.hardware import GB, DeviceLimit, Gpu, Machine
from draftwise.core.planning import (
    compute_buffer,
    ffn_offload,
    kv_cache,
    model_shape,
    plan_types,
    planner,
    weight_table,
)
from draftwise.core.speculation.resolver import NONE, SpecDecision
from draftwise.testing import tinyarchs as ta
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

MiB = 1 << 20
NO_SPEC = SpecDecision(None, None, NONE, False)
# The GPU tier's dense model (tests/test_gpu_vulkan.py): 8 blocks of 7.5 MiB, 6 MiB of them FFN.
# The GPU limit (MiB) at which seven of its FFNs must move: the compute buffer counts the copy
# of a CPU-held FFN weight the GPU makes for the prompt batch (compute_buffer.offloaded_compute).
LIMIT = 42
DENSE = TinyModel(name="gpu-llama", dtype="F16", n_embd=512, n_ff=2048, n_head=8, n_head_kv=4, n_layer=8)


@pytest.fixture(scope="module")
def dense(tmp_path_factory: pytest.TempPathFactory) -> gguf.ModelInfo:
    return gguf.read_model(write_tiny_model(tmp_path_factory.mktemp("dense") / "dense.gguf", DENSE)[0])


def machine(limit_mib: float, *, software: bool = False, workers: list[Gpu] | None = None) -> Machine:
    """One GPU with 8 GiB free, of which the plan may use `limit_mib` (a user's limit)."""
    gpu = Gpu(0, "vulkan" if software else "cuda", "llvmpipe (LLVM 15.0.6, 256 bits)" if software else "RTX 4060",
              None, 8 * GB, 8 * GB, device="Vulkan0" if software else "CUDA0", software=software,
              limit=DeviceLimit(at_most=int(limit_mib * MiB)))  # fmt: skip
    return Machine(16 * GB, 16 * GB, [gpu], "Linux", pinned=True, workers=workers or [])


def plan(info: gguf.ModelInfo, m: Machine, **prefs) -> planner.Plan:
    return planner.plan(info, NO_SPEC, m, planner.PlanPrefs(ctx=512, **prefs))


def cpu_span(info: gguf.ModelInfo, on_cpu) -> int:
    """The mapped range over the tensors that stay on the CPU (the engine's CPU_Mapped)."""
    ts = [t for t in gguf.read_header(info.path).tensors if on_cpu(t.name)]
    return max(t.offset + t.nbytes for t in ts) - min(t.offset for t in ts)


def test_a_dense_model_over_the_gpu_keeps_attention_and_kv_there(dense):
    p = plan(dense, machine(LIMIT))
    assert p.fits and p.fit_state == plan_types.PARTIAL
    assert p.gpu_layers == p.n_layers and p.n_cpu_ffn == 7
    args = p.plan_args
    assert args[args.index("-ngl") + 1] == "all" and args[-2:] == ("--fit", "off") and "--fit-target" not in args
    assert args[args.index("-ot") + 1] == r"blk\.(0|1|2|3|4|5|6)\.ffn_(up|down|gate)\.=CPU"
    assert any("feed-forward weights of 7 of 8 layers on the CPU" in r for r in p.reasons)
    gpu, ram = p.per_device
    assert gpu.total <= gpu.capacity and gpu.layers == 8 and ram.layers == 0
    # Every KV byte on the GPU; the CPU holds token_embd and the moved FFN tensors, mapped as
    # one range from the first to the last (the attention between them is a hole).
    assert ram.kv == 0 and gpu.kv == p.bytes.kv

    def moved(name: str) -> bool:
        return name == "token_embd.weight" or re.match(r"blk\.[0-6]\.ffn_(up|down|gate)\.", name) is not None

    assert ram.weights == cpu_span(dense, moved)
    tensors = gguf.read_header(dense.path).tensors
    assert gpu.weights == sum(-(-t.nbytes // 32) * 32 for t in tensors if not moved(t.name))
    # The holes (the attention of blocks 0-6 and the norms) are not the working set.
    holes = ram.weights - sum(-(-t.nbytes // 32) * 32 for t in tensors if moved(t.name))
    assert ram.lazy == holes > 0 and ram.working_set == ram.total - holes


def test_the_fewest_blocks_move(dense):
    """One block fewer and the GPU would not hold the rest: planned as given (--n-cpu-ffn),
    that plan does not fit; the automatic one is the same as the fixed one with 7."""
    auto = plan(dense, machine(LIMIT))
    six = plan(dense, machine(LIMIT), n_cpu_ffn=6)
    seven = plan(dense, machine(LIMIT), n_cpu_ffn=7)
    assert not six.fits and six.plan_args == ()
    assert seven.fits and seven.plan_args == auto.plan_args
    assert [d.to_json() for d in seven.per_device] == [d.to_json() for d in auto.per_device]


def test_both_layouts_are_planned_and_the_cost_model_chooses(dense):
    p = plan(dense, machine(LIMIT))
    layers, ffn = p.layouts
    assert (layers.name, ffn.name) == (ffn_offload.LAYERS, ffn_offload.FFN) and ffn.chosen and not layers.chosen
    assert 0 < layers.gpu_layers < p.n_layers and layers.n_cpu_ffn == 0
    assert ffn.gpu_layers == p.n_layers and ffn.n_cpu_ffn == 7
    # Each layout has its own bytes per device; the chosen one is the plan's (which adds the
    # host cache sized from what is left).
    assert [replace(d, host_cache=0) for d in ffn.per_device] == [replace(d, host_cache=0) for d in p.per_device]
    assert layers.per_device[1].layers == 8 - (layers.gpu_layers - 1) and layers.per_device[1].kv > 0
    # The same bytes are read per token either way; the FFN layout reads fewer of them from RAM.
    assert layers.cpu_read + sum(layers.gpu_read) == ffn.cpu_read + sum(ffn.gpu_read)
    assert ffn.cpu_read < layers.cpu_read and ffn.tokens_per_s > layers.tokens_per_s
    r = ffn_offload.rates(machine(LIMIT), [machine(LIMIT).gpus[0].label], None, dense.quant)
    assert ffn.seconds == pytest.approx(ffn.cpu_read / r.cpu + ffn.gpu_read[0] / r.gpus[0])
    # Either way the GPU runs the CPU's large matrix products of the reserved graph
    # (offload_op), so the CPU's compute buffer is the host buffer of the inputs alone.
    host = compute_buffer.host_compute(model_shape.read_shape(dense), kv_cache.cells(512, 1, 0))
    assert layers.per_device[1].compute == ffn.per_device[1].compute == host
    alone = planner.plan(dense, NO_SPEC, Machine(16 * GB, 16 * GB, [], "Linux"), planner.PlanPrefs(ctx=512))
    assert alone.per_device[0].compute > host  # no GPU: the CPU reserves the whole graph
    text = next(x for x in p.reasons if "feed-forward" in x)
    assert plan_types.human_bytes(ffn.cpu_read) in text and plan_types.human_bytes(layers.cpu_read) in text
    json = p.to_json()
    assert json["n_cpu_ffn"] == 7 and [lay["layout"] for lay in json["layouts"]] == ["layers", "ffn"]


def test_whole_layers_stay_where_they_read_less_from_ram(dense):
    """At 45 MiB, four layers fit whole and leave 40 MiB in RAM; the FFN layout leaves 42."""
    p = plan(dense, machine(45))
    layers, ffn = p.layouts
    assert layers.chosen and layers.cpu_read < ffn.cpu_read
    assert p.n_cpu_ffn == 0 and 0 < p.gpu_layers < p.n_layers and "-ot" not in p.plan_args


def test_a_software_device_is_a_tie_and_keeps_whole_layers(dense):
    """lavapipe reads the CPU's memory: both layouts cost the same, the layer layout stays."""
    p = plan(dense, machine(LIMIT, software=True))
    layers, ffn = p.layouts
    assert layers.seconds == pytest.approx(ffn.seconds) and layers.chosen and "-ot" not in p.plan_args


def test_the_cpu_rate_changes_the_estimate_not_the_layout(dense):
    slow = plan(dense, machine(LIMIT), cpu_rate=5e9)
    fast = plan(dense, machine(LIMIT), cpu_rate=80e9)
    assert slow.n_cpu_ffn == fast.n_cpu_ffn == 7
    assert slow.layouts[1].tokens_per_s < fast.layouts[1].tokens_per_s


def test_no_ffn_layout_without_a_choice(dense, tmp_path: Path):
    moe = gguf.read_model(ta.write_arch(tmp_path / "moe.gguf", ta.qwen3moe_model(
        name="gpu-moe", n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_ff_exp=512, n_expert=8, n_expert_used=2,
        n_layer=4, dtype="F16"))[0])  # fmt: skip
    p = plan(moe, machine(12))
    assert p.n_cpu_ffn == 0 and p.layouts == [] and "-ot" not in p.plan_args
    # No tensor table: the weights are estimated, nothing to name in a pattern.
    est = weight_table.estimated_weight_table(dense)
    p = planner.plan(dense, NO_SPEC, machine(LIMIT), planner.PlanPrefs(ctx=512), weights=est)
    assert p.layouts == [] and p.n_cpu_ffn == 0
    # The user fixed the GPU layers: planned as given.
    p = plan(dense, machine(LIMIT), gpu_layers=3)
    assert p.layouts == [] and p.plan_args[p.plan_args.index("-ngl") + 1] == "3"
    # A model on another computer's device too: its blocks would cross the network twice.
    worker = Gpu(0, "rpc", "192.168.1.20:50052", None, 8 * GB, 8 * GB, device="RPC0", endpoint="192.168.1.20:50052")
    p = plan(dense, replace(machine(LIMIT), workers=[worker]))
    assert p.n_cpu_ffn == 0 and p.layouts == []


def test_the_override_names_exactly_the_moved_tensors(dense):
    flag, value = ffn_offload.override_args(3)
    pattern, buffer = value.rsplit("=", 1)
    assert flag == "-ot" and buffer == "CPU" and "," not in value  # the engine splits the value at commas
    names = [t.name for t in gguf.read_header(dense.path).tensors]
    assert [n for n in names if re.search(pattern, n)] == [n for n in names if ffn_offload.moves(n, 3)]
    assert {n.split(".")[1] for n in names if ffn_offload.moves(n, 3)} == {"0", "1", "2"}
    assert not any(ffn_offload.moves(n, 3) for n in ("blk.10.ffn_up.weight", "blk.1.ffn_norm.weight",
                                                     "blk.1.attn_q.weight", "blk.1.ffn_up_exps.weight"))  # fmt: skip
    assert ffn_offload.override_args(0) == ()


def test_the_pattern_is_the_engines_own(pinned_source):
    """The FFN tensors are the ones the engine's --n-cpu-ffn moves (LLM_FFN_DENSE_REGEX)."""
    header = (pinned_source / "common" / "common.h").read_text(encoding="utf-8")
    m = re.search(r'LLM_FFN_DENSE_REGEX\s*=\s*"([^"]+)"', header)
    assert m and m.group(1).replace("\\\\", "\\") == ffn_offload.FFN_TENSORS


def test_n_cpu_ffn_is_planned_and_a_users_override_refused(dense):
    inputs = owned_args.read(("--n-cpu-ffn", "2", "--temp", "0.5"), planner.PlanPrefs(ctx=512))
    assert inputs.prefs.n_cpu_ffn == 2 and inputs.rest == ("--temp", "0.5")
    p = planner.plan(dense, NO_SPEC, machine(100), inputs.prefs)
    assert p.n_cpu_ffn == 2 and p.plan_args[p.plan_args.index("-ot") + 1].startswith(r"blk\.(0|1)\.")
    assert p.layouts == []  # fixed by the user: no comparison
    with pytest.raises(owned_args.OwnedArgError) as err:
        owned_args.read(("-ot", "ffn=CPU"), planner.PlanPrefs())
    assert "--n-cpu-ffn" in str(err.value.message) and "-ot" in str(err.value.message)


def test_the_launch_session_passes_the_measured_cpu_rate(dense, tmp_path: Path):
    """The session gives the cost model the processor's recorded rate (speed-probe.json);
    without a record the planner's default stands."""
    from draftwise.core.engines import capabilities
    from draftwise.core.launch import prepare, session
    from draftwise.core.machine import speed

    binary = tmp_path / "llama-server"
    binary.write_bytes(b"#!/bin/sh\n")
    engine = session.Engine(binary, capabilities.pinned_caps())
    request = prepare.Request(model=dense.path, mtp="off", prefs=planner.PlanPrefs(ctx=512))
    before = session.plan_launch(request, engine, machine(LIMIT), session.Records.none()).prepared.plan
    speed.remember(binary, speed.Throughput(5e9, "engine", 2))
    after = session.plan_launch(request, engine, machine(LIMIT), session.Records.none()).prepared.plan
    rate = ffn_offload.DEFAULT_CPU_RATE * speed.quant_efficiency(dense.quant)
    assert before.layouts[1].cpu_read / rate < before.layouts[1].seconds
    assert after.layouts[1].tokens_per_s < before.layouts[1].tokens_per_s  # 5 GB/s against the default 20
    assert after.n_cpu_ffn == before.n_cpu_ffn == 7
