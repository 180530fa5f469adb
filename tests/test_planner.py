"""The planner's byte formulas and decisions, without an engine.

Formulas are checked against tiny files whose true sizes are known by construction (and
equal the engine's own buffer lines: bench/plan_accuracy.py, test_plan_engine.py).
Decisions are checked on described machines with big models described in numbers: a real
ModelInfo with its geometry replaced (dataclasses.replace) and a WeightTable of the size a
real quantized file has.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.machine import device_choice
from draftwise.core.machine.hardware import GB, Gpu, Machine, cpu_only
from draftwise.core.messages import msg
from draftwise.core.planning import (
    compute_buffer,
    context_bytes,
    cpu_buffers,
    extra_args,
    kv_cache,
    logparse,
    model_shape,
    mtp_head,
    placement,
    plan_types,
    planned_vs_actual,
    planner,
    weight_table,
)
from draftwise.core.speculation.resolver import (
    AUTO_COMPANION,
    AUTO_MTP,
    AUTO_NGRAM,
    EXPLICIT,
    NONE,
    SpecDecision,
)
from draftwise.testing import tinyarchs as ta
from draftwise.testing.corpus import record
from draftwise.testing.tinymodels import TinyModel, draft_model, write_tiny_model

MiB = 1 << 20
NO_SPEC = SpecDecision(None, None, NONE, False)
MTP_AUTO = SpecDecision("draft-mtp", None, AUTO_MTP, True)


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("plan")
    g = dict(ta.BENCH_GEOMETRY, n_pieces=100)
    models = {
        "llama": TinyModel(name="t-llama", n_layer=4, **g),
        "gemma3": ta.gemma3_model(**g),
        "hybrid": ta.granitehybrid_model(**g),
        "moe": ta.qwen3moe_model(n_ff_exp=256, **g),
        "mtp": ta.mtp_bench_model(n_layer=5, n_ff_exp=256, n_pieces=100),
        "draft": draft_model(TinyModel(name="t-llama", **g), n_embd=128, n_head=2, n_head_kv=1, n_ff=256),
    }
    return {k: ta.write_arch(d / f"{k}.gguf", m)[0] for k, m in models.items()}


def info_of(path: Path) -> gguf.ModelInfo:
    return gguf.read_model(path)


@pytest.fixture(scope="module")
def base_info(tmp_path_factory: pytest.TempPathFactory) -> gguf.ModelInfo:
    p = write_tiny_model(tmp_path_factory.mktemp("base") / "base.gguf", TinyModel())[0]
    return gguf.read_model(p)


def big(base: gguf.ModelInfo, *, arch: str = "llama", n: int = 32, e: int = 4096, heads: int = 32,
        kv: int = 8, hd: int = 128, ff: int = 14336, vocab: int = 128256, ctx: int = 131072,
        weights_gb: float = 4.6, nextn: int = 0, experts: tuple[int, int, int] | None = None,
        extra_kv: dict | None = None, **fields):  # fmt: skip
    """A described model: (ModelInfo, Shape, WeightTable). Defaults: Llama-3-8B Q4_K_M."""
    info = replace(
        base, architecture=arch, block_count=n + nextn, embedding_length=e, head_count=heads,
        head_count_kv=kv, key_length=hd, value_length=hd, context_length=ctx,
        feed_forward_length=ff, tokenizer=replace(base.tokenizer, vocab_size=vocab),
        nextn_predict_layers=nextn or None, mtp_head_present=bool(nextn),
        expert_count=experts[0] if experts else None,
        expert_used_count=experts[1] if experts else None, **fields,
    )
    kvs = dict(extra_kv or {})
    if experts:
        kvs[f"{arch}.expert_feed_forward_length"] = experts[2]
    shape = model_shape.shape_of(info, kvs)
    emb = int(vocab * e * 4.5 / 8)
    per = int((weights_gb * GB - 2 * emb) / (n + nextn))
    ex = tuple([int(per * 0.95)] * (n + nextn)) if experts else (0,) * (n + nextn)
    wt = weight_table.WeightTable(tuple(per - x for x in ex), ex, emb, emb, 0, tuple([per] * nextn))
    return info, shape, wt


def gpu_machine(vram_gb: float, ram_gb: float, n: int = 1, free_gb: float | None = None) -> Machine:
    """GPUs whose free memory is `free_gb` (default: the desktop holds 0.5 GB of each)."""
    free = int((vram_gb - 0.5 if free_gb is None else free_gb) * GB)
    gpus = [Gpu(i, "cuda", "RTX 4060", f"GPU-{i}", int(vram_gb * GB), free, device=f"CUDA{i}")
            for i in range(n)]  # fmt: skip
    return Machine(int(ram_gb * GB), int(ram_gb * GB), gpus, "Linux")


def plan_big(model, spec=NO_SPEC, machine=None, prefs=None, **kw) -> planner.Plan:
    info, shape, wt = model
    return planner.plan(info, spec, machine or gpu_machine(8, 16), prefs or planner.PlanPrefs(),
                        shape=shape, weights=wt, **kw)  # fmt: skip


# ------------------------------------------------------------------ byte formulas
def test_kv_type_bytes():
    assert kv_cache.kv_row_bytes("f16", 128) == 256
    assert kv_cache.kv_row_bytes("f32", 128) == 512
    assert kv_cache.kv_row_bytes("q8_0", 128) == 128 // 32 * 34
    assert kv_cache.kv_row_bytes("q4_0", 128) == 4 * 18
    assert kv_cache.kv_row_bytes("q5_1", 64) == 2 * 24
    assert kv_cache.kv_row_bytes("iq4_nl", 64) == 2 * 18
    with pytest.raises(ValueError, match="unknown KV cache type"):
        kv_cache.kv_row_bytes("q3_k", 64)


def test_cells_pad_slots_and_window():
    c = kv_cache.cells(1000, 1, 0)
    assert (c.n_ctx, c.per_stream, c.ubatch) == (1024, 1024, 512)
    c = kv_cache.cells(4096, 3, 256)
    assert (c.n_ctx, c.per_stream, c.n_stream) == (12288, 4096, 3)
    # llama_kv_cache_iswa: PAD(min(cells, n_swa + ubatch), 256), per stream when not unified.
    assert c.swa_per_stream == 768
    assert kv_cache.cells(4096, 1, 256, swa_full=True).swa_per_stream == 4096
    assert kv_cache.cells(256, 1, 0).ubatch == 256


def test_weights_exact_from_tensor_table(files):
    info = info_of(files["llama"])
    wt = weight_table.read_weight_table(info)
    header = gguf.read_header(files["llama"])
    assert wt.total() == sum(-(-t.nbytes // 32) * 32 for t in header.tensors)
    blk0 = sum(t.nbytes for t in header.tensors if t.name.startswith("blk.0."))
    assert wt.layers[0] == blk0 and wt.experts == (0, 0, 0, 0)
    assert wt.input == 1 * (256 * 359 * 4) and not wt.tied


def test_tied_head_is_duplicated_only_off_the_cpu(files):
    wt = weight_table.read_weight_table(info_of(files["gemma3"]))
    assert wt.tied
    assert wt.head(on_gpu=False) == wt.output  # output_norm only: mmap shares token_embd
    assert wt.head(on_gpu=True) == wt.output + wt.input


def test_experts_and_nextn_grouped(files):
    wt = weight_table.read_weight_table(info_of(files["moe"]))
    assert all(x > 0 for x in wt.experts)
    assert wt.experts[0] == 3 * 8 * 256 * 256 * 4  # gate, up, down x 8 experts, F32
    mtp = weight_table.read_weight_table(info_of(files["mtp"]))
    assert len(mtp.nextn) == 1 and mtp.total(with_nextn=False) == mtp.total() - mtp.nextn[0]


def test_kv_bytes_dense_llama(files):
    shape = model_shape.read_shape(info_of(files["llama"]))
    ctx = context_bytes.target_context(shape, kv_cache.cells(4096, 1, 0), "f16")
    # 4 layers x 2 KV heads x 64 x (K + V) x 2 bytes x 4096 cells: the engine says 8.00 MiB.
    assert ctx.kv == 4 * 2 * 64 * 2 * 2 * 4096 == 8 * MiB
    assert context_bytes.target_context(shape, kv_cache.cells(4096, 1, 0), "q8_0").kv == 4 * 2 * 4 * 34 * 4096


def test_kv_bytes_sliding_window(files):
    shape = model_shape.read_shape(info_of(files["gemma3"]))
    assert [ly.swa for ly in shape.layers] == [True] * 5 + [False]
    kv = context_bytes.target_context(shape, kv_cache.cells(4096, 1, shape.n_swa), "f16").kv
    row = 2 * 64 * 2 * 2
    assert kv == row * 4096 + 5 * row * 768
    full = context_bytes.target_context(shape, kv_cache.cells(4096, 1, shape.n_swa, swa_full=True), "f16").kv
    assert full == 6 * row * 4096


def test_recurrent_state_bytes(files):
    shape = model_shape.read_shape(info_of(files["hybrid"]))
    assert [ly.recurrent for ly in shape.layers] == [True, True, False, True, True, False]
    ctx = context_bytes.target_context(shape, kv_cache.cells(4096, 2, 0), "f16")
    conv = 3 * (512 + 2 * 64)
    ssm = 64 * 512
    assert ctx.rs == 4 * (conv + ssm) * 4 * 2  # 4 mamba layers, f32, 2 sequences
    assert ctx.kv == 2 * 2 * 64 * 2 * 2 * 4096 * 2  # 2 attention layers, 4096 cells x 2 streams
    # Architectures that roll back recurrent state while drafting keep 1 + n_max snapshots.
    rolled = replace(shape, arch="nemotron_h")
    spec_ctx = context_bytes.target_context(rolled, kv_cache.cells(4096, 1, 0), "f16", spec_type="draft-mtp")
    assert spec_ctx.rs == 4 * (conv + ssm) * 4 * (1 + context_bytes.SPEC_DRAFT_N_MAX)


def test_mtp_blocks_only_with_mtp(files):
    info = info_of(files["mtp"])
    shape = model_shape.read_shape(info)
    assert shape.n_nextn == 1 and shape.n_layer == 4
    c = kv_cache.cells(4096, 1, 0)
    assert context_bytes.target_context(shape, c, "f16").kv == 4 * 2 * 64 * 2 * 2 * 4096
    assert mtp_head.mtp_context(shape, c, "f16").kv == 1 * 2 * 64 * 2 * 2 * 4096
    no = planner.plan(info, NO_SPEC, cpu_only(8 * GB), planner.PlanPrefs(ctx=4096))
    yes = planner.plan(info, MTP_AUTO, cpu_only(8 * GB), planner.PlanPrefs(ctx=4096))
    wt = weight_table.read_weight_table(info)
    assert no.bytes.weights == wt.total(with_nextn=False) and no.bytes.drafter == 0
    assert yes.bytes.weights == no.bytes.weights
    assert yes.bytes.drafter > wt.nextn[0] and yes.drafter == msg("MTP head")


def test_shape_of_per_layer_heads_shared_kv_and_mla(base_info):
    info = replace(base_info, architecture="gemma3n", block_count=6, head_count_kv=[2, 2, 2, 2, 2, 2],
                   shared_kv_layers=2, sliding_window=None)  # fmt: skip
    shape = model_shape.shape_of(info)
    assert [ly.k > 0 for ly in shape.layers] == [True] * 4 + [False] * 2
    mla = model_shape.shape_of(replace(base_info, architecture="deepseek2", key_length=576, value_length=512,
                               head_count_kv=1), {"deepseek2.attention.key_length_mla": 192})  # fmt: skip
    assert mla.layers[0].k == 576 and mla.layers[0].v == 0
    qnext = model_shape.shape_of(replace(base_info, architecture="qwen3next", block_count=8,
                                 full_attention_interval=4, ssm_conv_kernel=4, ssm_inner_size=512,
                                 ssm_state_size=128, ssm_group_count=2))  # fmt: skip
    assert [ly.recurrent for ly in qnext.layers] == [True, True, True, False] * 2
    assert qnext.r_state == 3 * (512 + 2 * 2 * 128) and qnext.s_state == 128 * 512


def test_compute_estimate_follows_ubatch_and_mask(files, engine, tmp_path):
    from draftwise.core.launch import headless
    from draftwise.core.planning import logparse

    shape = model_shape.read_shape(info_of(files["llama"]))
    small = context_bytes.target_context(shape, kv_cache.cells(4096, 1, 0), "f16").compute
    large = context_bytes.target_context(shape, kv_cache.cells(8192, 1, 0), "f16").compute
    # The f16 KQ mask grows by cells x ubatch x 2 bytes (the engine printed 9.52 -> 13.52 MiB).
    assert large - small == 4096 * 512 * 2
    # What the engine itself allocates for this file at 4096 cells, one slot, f16 KV.
    server = headless.start_server(engine.binary, files["llama"], ctx=4096, log_dir=tmp_path,
                                   extra_args=["-np", "1", "-ctk", "f16", "-ctv", "f16", "--no-warmup", "-nr"])
    try:
        server.wait_ready(60)
    finally:
        server.stop()
    actual = logparse.parse_lines(server.log_text().splitlines()).component("compute", logparse.TARGET)
    assert actual > 0 and abs(small - actual) < 0.05 * MiB, (small / MiB, actual / MiB)


# ------------------------------------------------------------------ decisions
def test_8b_on_8gb_gpu_takes_q8_0_before_shrinking_context(base_info):
    p = plan_big(big(base_info))
    assert p.fits and p.fit_state == plan_types.FITS
    assert p.kv_type == "q8_0"
    assert p.ctx < 32768 and p.ctx >= 28 * 1024
    assert p.gpu_layers == p.n_layers == 33
    assert "-ngl" in p.plan_args and p.plan_args[p.plan_args.index("-ngl") + 1] == "all"
    assert any("q8_0" in r for r in p.reasons)
    gpu = p.per_device[0]
    assert gpu.kind == "gpu" and gpu.total <= gpu.capacity
    assert gpu.capacity == int(6.5 * GB)  # 7.5 GB free minus the 1 GB margin


def test_more_room_keeps_f16_and_full_context(base_info):
    p = plan_big(big(base_info), machine=gpu_machine(16, 32))
    assert (p.kv_type, p.ctx, p.slots) == ("f16", 32768, 1)
    assert p.reasons == []


def test_fewer_slots_is_the_first_concession(base_info):
    p = plan_big(big(base_info), machine=gpu_machine(12, 32), prefs=planner.PlanPrefs(slots=4))
    assert p.slots == 1 and p.kv_type == "f16" and p.ctx == 32768
    assert p.reasons[0].startswith("One slot instead of 4")
    ok = plan_big(big(base_info), machine=gpu_machine(24, 64), prefs=planner.PlanPrefs(slots=4))
    assert ok.slots == 4 and ok.n_ctx == 4 * 32768
    assert ok.plan_args[:4] == ("-c", str(4 * 32768), "-np", "4")


def test_families_that_degrade_shrink_context_instead_of_q8_0(base_info):
    p = plan_big(big(base_info, arch="gemma3", extra_kv={}))
    assert p.kv_type == "f16" and p.ctx < 32768
    assert any("instead of 32k" in r for r in p.reasons)
    forced = plan_big(big(base_info, arch="gemma3"), prefs=planner.PlanPrefs(kv_type="q8_0"))
    assert forced.kv_type == "q8_0"


def test_context_never_below_the_floor_then_partial_offload(base_info):
    # A 14B at Q4 (9 GB) cannot be wholly on an 8 GB GPU even at 2k: part goes to the CPU,
    # and the context goes back to what was asked (shrinking it no longer buys anything).
    p = plan_big(big(base_info, n=48, e=5120, heads=40, ff=13824, weights_gb=9))
    assert p.fits and p.fit_state == plan_types.PARTIAL
    assert 0 < p.gpu_layers < p.n_layers and p.ctx == 32768 and p.kv_type == "f16"
    assert any("layers run on the GPU and the rest on the CPU" in r for r in p.reasons)
    assert "--fit" in p.plan_args and p.plan_args[p.plan_args.index("--fit") + 1] == "on"
    assert "--fit-target" in p.plan_args and "-ngl" not in p.plan_args
    explicit = plan_big(big(base_info, n=48, e=5120, heads=40, ff=13824, weights_gb=9),
                        prefs=planner.PlanPrefs(engine_fit=False))  # fmt: skip
    i = explicit.plan_args.index("-ngl")
    assert explicit.plan_args[i + 1] == str(p.gpu_layers)
    assert explicit.plan_args[-2:] == ("--fit", "off")
    ram = next(d for d in p.per_device if d.kind == "cpu")
    assert ram.layers + p.per_device[0].layers == 48 and ram.weights > 0


def test_moe_experts_leave_the_gpu_before_layers(base_info):
    moe = big(base_info, arch="qwen3moe", n=48, e=2048, heads=32, kv=4, ff=6144, vocab=151936,
              weights_gb=17, experts=(128, 8, 768))  # fmt: skip
    p = plan_big(moe, machine=gpu_machine(8, 32), prefs=planner.PlanPrefs(engine_fit=False))
    assert p.fits and p.gpu_layers == p.n_layers and 0 < p.n_cpu_moe < 48
    assert ("--n-cpu-moe", str(p.n_cpu_moe)) == p.plan_args[p.plan_args.index("--n-cpu-moe"):][:2]
    assert any("experts of" in r for r in p.reasons)
    # One expert layer fewer in RAM would not fit on the GPU.
    assert p.per_device[0].total <= p.per_device[0].capacity


def test_cpu_only_machine_and_refusal(base_info):
    p = plan_big(big(base_info), machine=cpu_only(16 * GB))
    assert p.fits and p.gpu_layers == 0 and [d.kind for d in p.per_device] == ["cpu"]
    assert ("-ngl", "0") == p.plan_args[p.plan_args.index("-ngl"):][:2]
    no = plan_big(big(base_info, n=48, e=5120, heads=40, ff=13824, weights_gb=9), machine=cpu_only(8 * GB))
    assert not no.fits and no.fit_state == plan_types.NO_FIT and no.plan_args == ()
    text = no.reasons[-1]
    assert "does not fit" in text and "close other apps" in text and "smaller quantization" in text
    assert "2k context" in text


def test_unified_memory_is_one_pool(base_info):
    uni = Machine(24 * GB, 20 * GB, [Gpu(0, "metal", "Apple M3", None, 18 * GB, 18 * GB, True, None, "MTL0")],
                  "Darwin", True)  # fmt: skip
    p = plan_big(big(base_info, n=48, e=5120, heads=40, ff=13824, weights_gb=9), machine=uni)
    assert p.fits and len(p.per_device) == 1 and p.per_device[0].kind == "unified"
    assert p.per_device[0].capacity == 17 * GB and p.gpu_layers == p.n_layers
    described = Machine.from_json({"ram_gb": 24, "unified_memory": True})
    q = plan_big(big(base_info), machine=described)
    assert q.per_device[0].capacity == int(24 * GB * placement.METAL_SHARE) - GB


def test_two_gpus_share_the_layers(base_info):
    p = plan_big(big(base_info, n=48, e=5120, heads=40, ff=13824, weights_gb=9), machine=gpu_machine(8, 32, n=2))
    gpus = [d for d in p.per_device if d.kind == "gpu"]
    assert p.fits and len(gpus) == 2 and all(g.layers > 0 for g in gpus)
    assert sum(g.layers for g in gpus) == 48


def test_auto_mtp_is_dropped_when_it_would_shrink_the_context(base_info):
    model = big(base_info, nextn=1)
    p = plan_big(model, spec=MTP_AUTO)
    assert p.drop_drafter and p.drafter is None
    assert p.drop_reason.startswith("The MTP head was left out: with it, the context would shrink from 32k to")
    assert p.reasons[0] == p.drop_reason
    assert p.bytes.drafter == 0 and p.fallback_plan_args == p.plan_args


def test_forced_drafter_stays_and_the_target_concedes(base_info):
    model = big(base_info, nextn=1)
    p = plan_big(model, spec=replace(MTP_AUTO, source=EXPLICIT))
    assert not p.drop_drafter and p.drafter == msg("MTP head") and p.bytes.drafter > 0
    assert p.ctx < plan_big(model, spec=MTP_AUTO).ctx
    assert any("stays because you chose it" in r for r in p.reasons)
    # The fallback (no drafter) gets the larger context back.
    assert p.fallback_plan_args != p.plan_args


def test_auto_drafter_that_costs_nothing_stays(base_info):
    p = plan_big(big(base_info, nextn=1), spec=MTP_AUTO, machine=gpu_machine(24, 32))
    assert not p.drop_drafter and p.drafter == msg("MTP head") and p.ctx == 32768
    assert p.per_device[0].drafter > 0


def test_companion_draft_model_dropped_or_kept(files, base_info):
    draft = info_of(files["draft"])
    target = big(base_info)
    spec = SpecDecision("draft-simple", files["draft"], AUTO_COMPANION, True)
    big_draft = weight_table.read_weight_table(draft).scaled(1.2 * GB / weight_table.read_weight_table(draft).total())
    shape_d = replace(model_shape.read_shape(draft), layers=model_shape.read_shape(draft).layers * 14)
    wt_d = replace(big_draft, layers=big_draft.layers * 14, experts=big_draft.experts * 14)
    p = plan_big(target, spec=spec, draft=draft, draft_shape=shape_d, draft_weights=wt_d)
    assert p.drop_drafter and "draft model was left out" in p.drop_reason
    kept = plan_big(target, spec=spec, draft=draft, machine=gpu_machine(24, 32))
    assert not kept.drop_drafter and ("--spec-draft-ngl", "all") == kept.plan_args[-2:]
    # An arm without the drafter runs the same plan less the drafter's own option (an f16
    # cache: no draft KV types), planned so, not cut out of the argv.
    assert kept.target_plan_args == kept.plan_args[:-2] and "--spec-draft-ngl" not in kept.target_plan_args
    assert p.target_plan_args is None  # the drafter dropped: its plan holds none of its options


def test_ngram_speculation_costs_nothing(base_info):
    spec = SpecDecision("ngram-simple", None, AUTO_NGRAM, True)
    p = plan_big(big(base_info), spec=spec, machine=gpu_machine(16, 32))
    assert not p.drop_drafter and p.bytes.drafter == 0


def test_context_preferences(base_info):
    p = plan_big(big(base_info, ctx=8192), machine=gpu_machine(24, 32))
    assert p.ctx == 8192  # never above the trained context by default
    # Above the trained length the engine caps each slot (server-context.cpp n_ctx_slot):
    # the plan stops there too, and says why and what raises the cap.
    up = plan_big(big(base_info, ctx=8192), machine=gpu_machine(24, 32), prefs=planner.PlanPrefs(ctx=16384))
    assert up.ctx == 8192 and up.max_context == 8192
    assert any("8k instead of 16k" in r and "RoPE scaling" in r for r in up.reasons)
    yarn = plan_big(big(base_info, ctx=8192), machine=gpu_machine(24, 32),
                    prefs=planner.PlanPrefs(ctx=16384, ctx_train=16384))  # fmt: skip
    assert yarn.ctx == 16384 and yarn.max_context == 16384
    tiny = plan_big(big(base_info, ctx=1024), machine=gpu_machine(24, 32))
    assert tiny.ctx == 1024  # the floor is never above the model's own maximum


def test_mtp_forces_one_slot(base_info):
    p = plan_big(big(base_info, nextn=1), spec=MTP_AUTO, machine=gpu_machine(24, 32),
                 prefs=planner.PlanPrefs(slots=4))  # fmt: skip
    assert p.slots == 1 and any("one slot" in r for r in p.reasons)


def test_to_json_and_plan_json(files):
    info = info_of(files["llama"])
    data = planner.plan_json(info, NO_SPEC, cpu_only(8 * GB), planner.PlanPrefs(ctx=4096))
    for key in ("ctx", "kv_type", "slots", "gpu_layers", "bytes", "per_device", "reasons", "plan_args"):
        assert key in data
    for key in ("weights", "kv", "drafter", "compute", "total"):
        assert isinstance(data["bytes"][key], int)
    assert data["per_device"][0]["name"] == "RAM"
    assert data["bytes"]["total"] == sum(d["total"] for d in data["per_device"])


def test_prefs_from_options_validates():
    assert planner.prefs_from_options(ctx=8192, kv="q8_0").kv_type == "q8_0"
    with pytest.raises(ValueError, match="--kv"):
        planner.prefs_from_options(kv="q3")
    with pytest.raises(ValueError, match="--ctx"):
        planner.prefs_from_options(ctx=10)


def test_unreadable_tensor_table_is_estimated(base_info, tmp_path):
    info = replace(base_info, files=[tmp_path / "missing.gguf"], path=tmp_path / "missing.gguf")
    wt = weight_table.read_weight_table(info)
    assert not wt.exact and wt.total() > 0
    p = planner.plan(info, NO_SPEC, cpu_only(8 * GB), shape=model_shape.shape_of(info))
    assert p.estimated_weights and any("estimated" in w for w in p.warnings)


def test_fit_state_badge(files):
    assert planner.fit_state(info_of(files["llama"]), cpu_only(8 * GB)) == plan_types.FITS
    assert planner.fit_state(info_of(files["llama"]), cpu_only(GB)) == plan_types.NO_FIT


def test_compare_planned_with_actual(files):
    info = info_of(files["llama"])
    p = planner.plan(info, NO_SPEC, cpu_only(8 * GB), planner.PlanPrefs(ctx=4096))
    actual = logparse.parse_log(
        "load_tensors:   CPU_Mapped model buffer size =     3.68 MiB\n"
        "llama_context:        CPU  output buffer size =     0.00 MiB\n"
        "llama_kv_cache:        CPU KV buffer size =     8.00 MiB\n"
        "sched_reserve:        CPU compute buffer size =     9.52 MiB\n"
    )
    rows = {r["component"]: r for r in planned_vs_actual.compare(p, actual)}
    assert rows["kv"]["error"] == 0.0
    assert abs(rows["compute"]["error"]) < 0.01
    assert rows["drafter"]["error"] is None


def test_gpu_without_free_memory_is_left_out(base_info):
    p = plan_big(big(base_info), machine=gpu_machine(8, 16, free_gb=0.6))
    assert p.gpu_layers == 0 and [d.kind for d in p.per_device] == ["cpu"]
    assert any("is left out: only" in r for r in p.reasons)


def test_tied_head_goes_to_the_gpu_unless_the_backend_refuses_its_size(files, monkeypatch):
    """TENSOR_DUPLICATED copies a tied head to its GPU; ggml-vulkan refuses a matrix (or the
    loader's probe output, n_vocab x 512 f32) above maxStorageBufferRange, and then the head
    stays on the CPU (lavapipe: Qwen3-0.6B's stays, SmolLM2's goes; docs/planner.md)."""
    info = info_of(files["gemma3"])
    wt = weight_table.read_weight_table(info)
    shape = model_shape.read_shape(info)
    assert wt.tied

    def gpu_weights(backend: str, software: bool = False) -> int:
        g = Gpu(0, backend, "dev", None, 8 * GB, 8 * GB, device=f"{backend.upper()}0", software=software)
        machine = Machine(16 * GB, 16 * GB, [g], "Linux")
        if software:  # only an explicit choice takes a device that runs on the CPU
            machine = device_choice.select(machine, [g.device])
        p = planner.plan(info, NO_SPEC, machine, planner.PlanPrefs(ctx=4096), shape=shape, weights=wt)
        return next(d.weights for d in p.per_device if d.kind == "gpu")

    cuda = gpu_weights("cuda")
    assert gpu_weights("vulkan", software=True) == cuda  # a tiny head fits lavapipe's 2^27
    monkeypatch.setattr(placement, "VULKAN_SOFTWARE_MAX_STORAGE_RANGE", shape.n_vocab * 512 * 4 - 1)
    assert gpu_weights("vulkan", software=True) == cuda - wt.input


@pytest.mark.parametrize("name, e, heads, kv_heads, head, used, expert, vocab, log", [
    # zai-org/GLM-4.5-Air: the nextn block's MoE (8 of 128 experts, 1408 wide) over 4096 wide
    ("glm4moe", 4096, 96, 8, 128, 8, 1408, 151552, "GLM-4.5-Air-cpu.log"),
    # Qwen/Qwen3.5-35B-A3B: 8 of 256 experts, 512 wide, over 2048 wide
    ("qwen35moe", 2048, 16, 2, 256, 8, 512, 248320, "Qwen3.5-35B-A3B-cpu.log"),
])  # fmt: skip
def test_a_moe_mtp_heads_context_is_the_engines(name, e, heads, kv_heads, head, used, expert, vocab, log):
    """The MTP context of a MoE head, at 4096 cells: the engine's KV + compute + output lines
    of the draft context in the corpus row's recorded log (tests/data/corpus-engine/<log>,
    `bench/real_models.py --record`: the row starts with `--spec-type draft-mtp -c 4096 -np 1`).
    The down projection's output (used x n_embd per token) lands past the experts' gate, up
    and SwiGLU rows; without it the plan was 99.2 and 41.9 MiB."""
    actual = logparse.parse_lines(record.read(record.RECORD_DIR / log).lines)
    assert [(k.cells, k.seqs) for k in actual.caches if k.context == logparse.DRAFT] == [(4096, 1)]
    engine_mib = sum(actual.by_component(logparse.DRAFT).values()) / MiB
    head_layer = model_shape.Layer(k=kv_heads * head, v=kv_heads * head, ff=used * expert, n_used=used, q=heads * head)
    shape = model_shape.Shape(arch=name, n_embd=e, n_vocab=vocab, n_ctx_train=131072,
                      layers=(model_shape.Layer(k=1, v=1, ff=1), head_layer), n_nextn=1)  # fmt: skip
    ctx = mtp_head.mtp_context(shape, kv_cache.cells(4096, 1, 0), "f16")
    got = (ctx.kv + ctx.compute + ctx.output) / (1 << 20)
    assert abs(got - engine_mib) <= max(0.05 * engine_mib, 8), got
    assert abs(got - engine_mib) <= 1.5, got  # to the router's rows, which the plan leaves out


def test_a_partial_offload_runs_the_cpu_blocks_prompt_on_the_gpu(files):
    """With blocks in RAM on a GPU whose backend offloads ops (Vulkan, CUDA, ROCm), the GPU runs
    their prompt batch and copies each CPU-held weight in: the host keeps the inputs' buffer,
    the GPU the graph with the largest CPU-held FFN input weight under it. --no-op-offload
    (or Metal's one pool) leaves the CPU its own blocks' graph."""
    info = info_of(files["llama"])
    shape, wt = model_shape.read_shape(info), weight_table.read_weight_table(info)
    machine = Machine(16 * GB, 16 * GB, [Gpu(0, "vulkan", "dev", None, 8 * GB, 8 * GB, device="Vulkan0")], "Linux")
    c = kv_cache.cells(4096, 1, 0)
    tctx = context_bytes.target_context(shape, c, "f16")

    def devices(**prefs):
        p = planner.plan(info, NO_SPEC, machine, planner.PlanPrefs(ctx=4096, gpu_layers=3, engine_fit=False, **prefs),
                         shape=shape, weights=wt)  # fmt: skip
        return next(d for d in p.per_device if d.kind == "cpu"), next(d for d in p.per_device if d.kind == "gpu")

    ram, gpu = devices()
    assert ram.layers == 2 and gpu.layers == 2  # blocks 0-1 in RAM, 2-3 and the head on the GPU
    cpu_ffn = max(t.nbytes for _fi, t in wt.tensors
                  if t.name.split(".")[1] in ("0", "1") and t.name.split(".")[2] in ("ffn_gate", "ffn_up"))  # fmt: skip
    assert ram.compute == compute_buffer.host_compute(shape, c)
    assert gpu.compute >= tctx.compute + cpu_ffn
    ram_off, gpu_off = devices(op_offload=False)
    assert ram_off.compute == gpu_off.compute == tctx.compute
    assert extra_args.with_engine_args(planner.PlanPrefs(), info, ["--no-op-offload"]).op_offload is False


# ------------------------------------------------------------------ one walk of a tensor table
def test_a_second_plan_of_an_unchanged_model_does_not_walk_its_tensor_table_again(tmp_path, monkeypatch):
    """Each re-plan and launch plans again: the weight table and the CPU buffers per placement
    come from the shared headers once (identity_cache.IdentityCache), until the file changes."""
    import os
    import time

    model = write_tiny_model(tmp_path / "walk" / "walk-F32.gguf", TinyModel(name="walk"))[0]
    old = time.time() - 3600  # a model on disk for a while: its header is cached (reader.RACY_NS)
    os.utime(model, (old, old))
    walks = {"table": 0, "cpu": 0}
    table, cpu = weight_table.weight_table, cpu_buffers.cpu_weights

    def counted(name, f):
        def wrapper(*a, **kw):
            walks[name] += 1
            return f(*a, **kw)
        return wrapper

    monkeypatch.setattr(weight_table, "weight_table", counted("table", table))
    monkeypatch.setattr(cpu_buffers, "cpu_weights", counted("cpu", cpu))
    machine = Machine(ram_total=16 * GB, ram_available=12 * GB, gpus=[], os="linux")
    first = planner.plan(gguf.read_model(model), NO_SPEC, machine, planner.PlanPrefs(ctx=2048))
    assert walks == {"table": 1, "cpu": 1}
    again = planner.plan(gguf.read_model(model), NO_SPEC, machine, planner.PlanPrefs(ctx=1024))
    assert walks == {"table": 1, "cpu": 1} and again.ctx == 1024
    assert again.bytes.weights == first.bytes.weights
    # Written again (another size, a new mtime): a new header, so its own table and buffers.
    write_tiny_model(model, TinyModel(name="walk", n_layer=3))
    os.utime(model, (old + 60, old + 60))
    changed = planner.plan(gguf.read_model(model), NO_SPEC, machine, planner.PlanPrefs(ctx=2048))
    assert walks == {"table": 2, "cpu": 2}
    assert changed.n_layers == first.n_layers + 1 and changed.bytes.weights > first.bytes.weights
