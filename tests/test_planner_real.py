"""The memory plan on real models' geometries, against numbers the pinned engine printed.

Each test plans for a described machine and compares with the engine's own buffer lines
(`-lv 4`), recorded here with where they came from: sparse GGUF files of the published
geometries (draftwise/testing/geometries.py, mapped with `-nr --no-warmup`), the real Gemma 3
270M, and the pinned source where the engine was not run. tests/test_plan_geometries_engine.py
starts the engine on the same files. Issue 18, item 5.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.machine.hardware import GB, Gpu, Machine, cpu_only
from draftwise.core.planning import (
    context_bytes,
    cpu_buffers,
    extra_args,
    kv_cache,
    logparse,
    model_shape,
    planner,
    weight_table,
)
from draftwise.core.speculation.resolver import AUTO_MTP, AUTO_NGRAM, EXPLICIT, NONE, SpecDecision
from draftwise.testing import geometries as geo
from draftwise.testing import projectors
from draftwise.testing import tinyarchs as ta
from draftwise.testing.corpus import engine_lines, record
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

MiB = 1 << 20
NO_SPEC = SpecDecision(None, None, NONE, False)
BIG_CPU = cpu_only(512 * GB)  # room for anything: the plan is exactly what was asked


@pytest.fixture(scope="module")
def sparse(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("geometries")

    def get(g: geo.Geometry) -> gguf.ModelInfo:
        return gguf.read_model(geo.write_sparse(folder / f"{g.name}.gguf", g))

    return get


def plan(info: gguf.ModelInfo, ctx: int, *, machine: Machine = BIG_CPU, spec: SpecDecision = NO_SPEC,
         **prefs) -> planner.Plan:  # fmt: skip
    return planner.plan(info, spec, machine, planner.PlanPrefs(ctx=ctx, kv_type="f16", no_repack=True, **prefs))


def within(planned: int, actual_mib: float, share: float = 0.05, floor_mib: float = 8) -> bool:
    return abs(planned - actual_mib * MiB) <= max(share * actual_mib * MiB, floor_mib * MiB)


# ------------------------------------------------------------------ 1. AMX
# The pinned engine on a CPU whose engine module is AMX (sapphirerapids), the real Gemma 3
# 270M Q4_K_M, CPU only, without -nr: load_tensors prints an AMX model buffer beside the
# mapped file. Its lines: tests/data/engine-lines/<AMX_LOG>.log (`bench/real_models.py
# --record-extra`; only a CPU with AMX re-records it): AMX 213.91 MiB, 449.07 MiB of weights
# in all (issue 18's filer reported 213.9 and 449.1). The plan counted 23.9 MiB of AMX (259.1
# MiB of weights): the tied head (token_embd duplicated as output.weight, Q8_0 640 x 262144)
# is a MUL_MAT weight the AMX buffer takes with its compensation (amx/mmq.cpp get_row_size:
# +4 bytes per Q8_0 block): 190.0 MiB of the 213.9.
AMX_LOG = "gemma-3-270m-it-real-amx-c4096-np1"


def test_amx_copies_the_tied_head_beside_the_mapped_file():
    from draftwise.testing import realmodels

    try:
        info = gguf.read_model(realmodels.gemma3_270m())
    except RuntimeError as exc:
        pytest.skip(f"the real Gemma 3 270M is not at hand: {exc}")
    rec = engine_lines.read(AMX_LOG)
    assert rec.machine.cpu_variant == "sapphirerapids" and "-nr" not in rec.header["argv"].split()
    actual = logparse.parse_lines(rec.lines)
    amx_mib = actual.by_buffer_component()["AMX"]["weights"] / MiB
    weights_mib = actual.component("weights", logparse.TARGET) / MiB
    amx = replace(BIG_CPU, cpu_variant="sapphirerapids")
    p = planner.plan(info, NO_SPEC, amx, planner.PlanPrefs(ctx=4096))
    assert abs(p.bytes.cpu_extra["AMX"] - amx_mib * MiB) < 0.01 * MiB
    assert abs(p.bytes.weights - weights_mib * MiB) < 0.1 * MiB
    # -nr: no extra buffers, the mapped file alone; a GPU device: no CPU extra buffers either.
    nr = planner.plan(info, NO_SPEC, amx, planner.PlanPrefs(ctx=4096, no_repack=True))
    assert nr.bytes.cpu_extra == {} and nr.bytes.weights < p.bytes.weights - 200 * MiB
    # The head's own copy: Q8_0 with a 4-byte compensation per block.
    head = cpu_buffers.tied_head_extra(weight_table.read_weight_table(info), "sapphirerapids")
    assert head == ("AMX", 262144 * 640 // 32 * (34 + 4))
    # AVX2 repacks Q4_0/Q4_K/IQ4_NL/MXFP4, not Q8_0: no copy of this head there.
    assert cpu_buffers.tied_head_extra(weight_table.read_weight_table(info), "haswell") is None


def _engine_figure(log: str, component: str) -> tuple[int, int]:
    """(cells a slot, bytes of `component`) the engine printed in a recorded start: a corpus
    row (tests/data/corpus-engine/<log>.log) or an engine-lines case (engine-lines/<log>.log)."""
    row = record.RECORD_DIR / f"{log}.log"
    rec = record.read(row) if row.is_file() else engine_lines.read(log)
    argv = rec.header["argv"].split()
    return int(argv[argv.index("-c") + 1]), logparse.parse_lines(rec.lines).component(component, logparse.TARGET)


# ------------------------------------------------------------------ 2. gpt-oss sliding windows
# gpt-oss-20b (sparse, geometries.gpt_oss_20b), CPU engine, -np 1 f16: the iSWA cache of 12
# full layers (4096 or 8192 cells) and 12 sliding ones (768 cells, n_swa 128 + ubatch 512
# padded): the corpus row at 4096 cells printed 96 + 18 MiB, the engine-lines case at 8192
# 192 + 18. Keyed under "openai-moe" (the enum's name, not the file's "gpt-oss"), every layer
# got the full cache: 192 and 384 MiB.
@pytest.mark.parametrize("log", ["gpt-oss-20b-cpu", "gpt-oss-20b-cpu-c8192-np1"])
def test_gpt_oss_sliding_window_by_the_files_architecture_name(sparse, log):
    ctx, kv = _engine_figure(log, "kv")
    info = sparse(geo.gpt_oss_20b())
    assert info.architecture == "gpt-oss"
    p = plan(info, ctx)
    assert p.bytes.kv == kv
    shape = model_shape.read_shape(info)
    assert [ly.swa for ly in shape.layers[:4]] == [True, False, True, False]  # layer 0 slides


def test_sliding_window_patterns_match_the_pinned_source(pinned_source: Path):
    """SWA_PATTERNS holds every architecture whose loader calls load_swa_pattern /
    set_swa_pattern with a constant, under the name files give it (llama-arch.cpp)."""
    src = pinned_source
    names = dict(re.findall(r'\{\s*(LLM_ARCH_\w+),\s*"([^"]+)"', (src / "src/llama-arch.cpp").read_text()))
    cls_arch: dict[str, list[str]] = {}
    pending: list[str] = []
    for line in (src / "src/llama-model.cpp").read_text(errors="replace").splitlines():
        if m := re.search(r"case (LLM_ARCH_\w+):", line):
            pending.append(m.group(1))
        elif m := re.search(r"return new (llama_model_\w+)\(", line):
            cls_arch.setdefault(m.group(1), []).extend(names[a] for a in pending if a in names)
            pending = []
    found: dict[str, tuple[int, bool]] = {}
    for f in (src / "src/models").glob("*.cpp"):
        text = f.read_text(errors="replace")
        hp = re.search(r"(llama_model_\w+)::load_arch_hparams\(.*?\n\}", text, re.S)
        if hp is None or hp.group(1) == "llama_model_dflash":  # a draft: its pattern is conditional
            continue
        m = re.search(r"load_swa_pattern\(ml,\s*(\d+)(?:,\s*(?:/\*[^*]*\*/\s*)?(true|false))?\)", hp.group(0))
        m = m or re.search(r"set_swa_pattern\((\d+)(?:,\s*(true|false))?\)", hp.group(0))
        if m:
            for arch in cls_arch.get(hp.group(1), []):
                found[arch] = (int(m.group(1)), m.group(2) == "true")
    assert "gpt-oss" in found and "openai-moe" not in model_shape.SWA_PATTERNS
    assert {a: model_shape.SWA_PATTERNS.get(a) for a in found} == found


# ------------------------------------------------------------------ 3. Qwen3 MoE compute
# Qwen3-30B-A3B (sparse, geometries.qwen3_30b_a3b), CPU engine, f16, 1 slot: sched_reserve's
# CPU compute buffer, from the corpus row (48 blocks, 4096 cells: 92.02 MiB) and the
# engine-lines case at 32768 cells (120.02 MiB on the EPYC, 120.6 on the Xeon); the 4-block
# file gives the same to 0.01 MiB. The older fit (3 x expert width x used + 5 x n_embd)
# planned 60.6 MiB at 4k, -34 %: the down projection holds n_embd per used expert before the
# sum, and the gate/up rows stay under it.
QWEN3_30B_LOGS = ("Qwen3-30B-A3B-cpu", "Qwen3-30B-A3B-cpu-c32768-np1")
# Sparse qwen3moe geometries (geometries.moe_grid: 2 blocks, 16 heads x 128, 16 experts,
# vocabulary 4096), 4096 cells: (n_embd, expert width, used) -> the compute buffer the engine
# printed (engine_lines.MOE_GRID's cases, tests/data/engine-lines/qwen3moe-grid-*.log).


@pytest.mark.parametrize("log", QWEN3_30B_LOGS)
def test_qwen3_30b_a3b_compute(sparse, log):
    ctx, compute = _engine_figure(log, "compute")
    p = plan(sparse(geo.qwen3_30b_a3b(4)), ctx)
    assert within(p.bytes.compute, compute / MiB)


def test_moe_compute_over_geometries():
    base = model_shape.Shape("qwen3moe", 0, 4096, 40960, ())
    for e, ff, used in engine_lines.MOE_GRID:
        cells, compute = _engine_figure(f"{geo.moe_grid(e, ff, used).name}-cpu-c4096-np1", "compute")
        assert cells == 4096
        actual = compute / MiB
        layer = model_shape.Layer(k=512, v=512, ff=ff * used, n_used=used, q=16 * 128)
        shape = replace(base, n_embd=e, layers=(layer, layer))
        ctx = context_bytes.target_context(shape, kv_cache.cells(4096, 1, 0), "f16")
        assert within(ctx.compute, actual), (e, ff, used, ctx.compute / MiB, actual)


# ------------------------------------------------------------------ 4. the DSA indexer
# DeepSeek-V3.2's attention and indexer geometry on 4 blocks (sparse,
# geometries.deepseek32_small), CPU engine, -c 4096 f16: llama_kv_cache_dsa printed the MLA
# cache (576 per token and block: 18.00 MiB) and the indexer's own cache (128: 4.00 MiB),
# +22 %; the compute buffer 430.08 MiB (the plan had 18 MiB of KV and 88 MiB of compute).
# The engine's lines: tests/data/engine-lines/deepseek32-attn-4L-cpu-c4096-np1.log.
def test_deepseek32_indexer_cache(sparse):
    log = f"{geo.deepseek32_small().name}-cpu-c4096-np1"
    cells, kv = _engine_figure(log, "kv")
    p = plan(sparse(geo.deepseek32_small()), cells)
    assert p.bytes.kv == kv
    assert within(p.bytes.compute, _engine_figure(log, "compute")[1] / MiB)


def _described(base: gguf.ModelInfo, arch: str, n: int, kv: dict, **fields) -> model_shape.Shape:
    info = replace(base, architecture=arch, block_count=n, embedding_length=1024, head_count=8,
                   head_count_kv=fields.pop("heads_kv", 1), key_length=fields.pop("hk", 576),
                   value_length=fields.pop("hv", 512), context_length=fields.pop("ctx", 163840), **fields)
    return model_shape.shape_of(info, {f"{arch}.{k}": v for k, v in kv.items()})


@pytest.fixture(scope="module")
def base_info(tmp_path_factory: pytest.TempPathFactory) -> gguf.ModelInfo:
    return gguf.read_model(write_tiny_model(tmp_path_factory.mktemp("base") / "base.gguf", TinyModel())[0])


MLA_KV = {"attention.key_length_mla": 192, "attention.value_length_mla": 128,
          "attention.indexer.key_length": 128, "attention.indexer.head_count": 64}  # fmt: skip


def test_glm_dsa_indexer_layers_from_the_source(base_info):
    # GLM-5/5.1 (trained context under 1M): every block; GLM-5.2: its default pattern
    # (blocks 0, 1, then every fourth from 2); a file's indexer.types wins.
    glm5 = _described(base_info, "glm-dsa", 8, MLA_KV, ctx=202752)
    assert [ly.idx_k for ly in glm5.layers] == [128] * 8
    glm52 = _described(base_info, "glm-dsa", 8, MLA_KV, ctx=1048576)
    assert [bool(ly.idx_k) for ly in glm52.layers] == [True, True, True, False, False, False, True, False]
    typed = _described(base_info, "glm-dsa", 4, {**MLA_KV, "attention.indexer.types": [1, 0, 0, 1]})
    assert [bool(ly.idx_k) for ly in typed.layers] == [True, False, False, True]
    c = kv_cache.cells(4096, 1, 0)
    kv = context_bytes.target_context(glm5, c, "f16").kv
    assert kv == 8 * 4096 * (576 + 128) * 2  # MLA K row + the indexer's, f16
    assert not glm5.notes and glm5.kv_margin == 0


# ------------------------------------------------------------------ 5. own cache types
def test_minimax_m3_indexer_has_a_v_row_after_the_dense_blocks(base_info):
    s = _described(base_info, "minimax-m3", 4, {"leading_dense_block_count": 1, "attention.indexer.key_length": 128},
                   heads_kv=2, hk=128, hv=128)  # fmt: skip
    assert [(ly.idx_k, ly.idx_v) for ly in s.layers] == [(0, 0)] + [(128, 128)] * 3
    assert s.kv_margin == model_shape.UNCHECKED_CACHE_MARGIN and any("not yet checked" in str(n) for n in s.notes)
    c = kv_cache.cells(4096, 1, 0)
    exact = 4 * 4096 * 2 * 256 * 2 + 3 * 4096 * (128 + 128) * 2
    kv = sum(context_bytes.target_context(s, c, "f16").kv_layers)
    assert kv == pytest.approx(exact * (1 + model_shape.UNCHECKED_CACHE_MARGIN), rel=1e-6)


def test_hy_v4_and_qwen4exp_and_glm5_next_indexers(base_info):
    hy = _described(base_info, "hy_v4", 4, {**MLA_KV, "attention.indexer.top_k": 1024,
                                            "attention.indexer.types": [1, 0, 1, 0]})  # fmt: skip
    assert [ly.idx_k for ly in hy.layers] == [128, 0, 128, 0]
    dense_hy = _described(base_info, "hy_v4", 4, {**MLA_KV, "attention.indexer.top_k": 0})
    assert not any(ly.idx_k for ly in dense_hy.layers)  # a full-attention checkpoint: no indexer
    q4 = _described(base_info, "qwen4exp", 8, {"attention.indexer.key_length": 64, "attention.indexer.head_count": 4,
                                               "attention.compress_ratios": [0, 0, 0, 4, 0, 0, 0, 4]},
                    heads_kv=2, hk=128, hv=128, full_attention_interval=4, ssm_conv_kernel=4, ssm_inner_size=256,
                    ssm_state_size=64, ssm_group_count=2)  # fmt: skip
    # QSA on the attention blocks (every 4th), raw key | pooled key.
    assert [ly.idx_k for ly in q4.layers] == [0, 0, 0, 128, 0, 0, 0, 128]
    g5 = _described(base_info, "glm5-next", 4, {**MLA_KV, "attention.indexer.types": [1, 1, 0, 1]}, heads_kv=[0, 1, 1, 1])
    assert [ly.idx_k for ly in g5.layers] == [0, 3 * 128, 0, 3 * 128]  # key | gate | pooled


def test_deepseek4_caches_from_the_source(base_info):
    ratios = [0, 4, 128, 4]
    s = _described(base_info, "deepseek4", 4, {"attention.compress_ratios": ratios,
                                               "attention.indexer.key_length": 128},
                   hk=512, hv=512, sliding_window=128)  # fmt: skip
    assert s.dsv4 is not None and not any(ly.k for ly in s.layers)
    c = kv_cache.cells(4096, 1, s.n_swa)  # raw cache: 768 cells (128 + 512, padded)
    ctx = context_bytes.target_context(s, c, "f16")
    raw = 512 * 2 * 768
    csa_rows, hca_rows = 1024, 256  # ceil(4096 / 4) and ceil(4096 / 128) padded to 256
    kv = [raw, raw + (512 + 128) * 2 * csa_rows, raw + 512 * 2 * hca_rows, raw + (512 + 128) * 2 * csa_rows]
    assert ctx.kv_layers == [int(x * (1 + model_shape.UNCHECKED_CACHE_MARGIN)) for x in kv]
    # compressor states, f32: kv + score, CSA 8 rows of 2 x 512 and the indexer's 8 of 2 x 128.
    csa_state = 2 * 4 * 8 * (2 * 512 + 2 * 128)
    assert ctx.rs_layers == [0, csa_state, 2 * 4 * 128 * 512, csa_state]


# ------------------------------------------------------------------ 6 and 10. the trained length
def test_context_is_capped_at_the_trained_length_unless_yarn_raises_it(sparse):
    info = sparse(geo.qwen3_30b_a3b(4))  # trained for 40960
    p = plan(info, 131072)
    assert p.ctx == 40960 and p.max_context == 40960 and p.plan_args[:2] == ("-c", "40960")
    assert any("stops each conversation at the 40k" in str(r) for r in p.reasons)
    args = ("--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "32768")
    assert extra_args.trained_context(info, args) == 131072
    assert extra_args.trained_context(info, ("--rope-scale", "4")) is None  # linear: the cap stays
    prefs = extra_args.with_engine_args(planner.PlanPrefs(ctx=131072, kv_type="f16", no_repack=True), info, args)
    assert planner.plan(info, NO_SPEC, BIG_CPU, prefs).ctx == 131072
    # gpt-oss is YaRN-scaled in the file (factor 32): the same factor changes nothing.
    gpt = sparse(geo.gpt_oss_20b())
    assert extra_args.trained_context(gpt, ("--rope-scale", "32")) is None
    assert extra_args.trained_context(gpt, ("--rope-scale", "64")) == 262144


def test_c_0_as_the_trained_context_is_planned(sparse):
    """`-c 0` is the trained context (core/launch/owned_args.py maps it): the plan takes it
    as the user's explicit choice."""
    info = sparse(geo.qwen3_30b_a3b(4))
    p = plan(info, info.context_length)
    assert p.ctx == 40960 and p.n_ctx == 40960 and not any("instead of" in str(r) for r in p.reasons)
    assert p.fits and p.plan_args[:2] == ("-c", "40960")
    # PlanPrefs(ctx=0), the engine's own spelling of it, plans the same.
    zero = plan(info, 0)
    assert (zero.ctx, zero.n_ctx, zero.plan_args[:2]) == (40960, 40960, ("-c", "40960"))


# ------------------------------------------------------------------ 7. draft lengths
def test_rollback_and_output_rows_from_the_draft_length_that_runs(base_info):
    shape = _described(base_info, "qwen35", 4, {}, heads_kv=2, hk=128, hv=128, full_attention_interval=4,
                       ssm_conv_kernel=4, ssm_inner_size=256, ssm_state_size=64, ssm_group_count=2)  # fmt: skip
    c = kv_cache.cells(4096, 1, 0)
    rs_row = (shape.r_state + shape.s_state) * 4
    for n_max in (2, 3, 8):
        ctx = context_bytes.target_context(shape, c, "f16", spec_type="draft-mtp", lengths=context_bytes.DraftLength(draft=n_max))
        assert ctx.rs_layers[0] == rs_row * (1 + n_max)
        assert ctx.output == (1 + n_max) * shape.n_vocab * 4
    ngram = context_bytes.target_context(shape, c, "f16", spec_type="ngram-mod")
    assert ngram.output == 65 * shape.n_vocab * 4 and ngram.rs_layers[0] == rs_row  # no rollback
    assert context_bytes.DraftLength(ngram_mod=16).outputs("ngram-mod") == 16


def test_draft_length_from_the_measurement_or_the_users_argument(base_info):
    measured = SpecDecision("draft-mtp", None, AUTO_MTP, True, lengths=(("--spec-draft-n-max", 8),))
    assert extra_args.draft_lengths(measured, planner.PlanPrefs()).draft == 8
    user = extra_args.with_engine_args(planner.PlanPrefs(), base_info, ("--spec-draft-n-max", "2"))
    assert extra_args.draft_lengths(measured, user).draft == 2
    ngram = SpecDecision("ngram-mod", None, AUTO_NGRAM, True)
    assert extra_args.draft_lengths(ngram, planner.PlanPrefs()).outputs("ngram-mod") == 64


# ------------------------------------------------------------------ 8. checkpoints and --cache-ram
def test_sliding_window_checkpoints_and_the_prompt_cache(sparse):
    info = sparse(geo.gpt_oss_20b())
    p = plan(info, 8192, machine=cpu_only(64 * GB))
    # One checkpoint: the SWA cells the window still sees (128 + 1) of the 12 sliding layers.
    one = 12 * 129 * 2 * 512 * 2
    assert p.ctx_checkpoints == 32 and p.bytes.checkpoints == 32 * one
    i = p.plan_args.index("--cache-ram")
    assert p.cache_ram_mib == 8192 and p.plan_args[i + 1] == "8192"
    ram = next(d for d in p.per_device if d.kind == "cpu")
    assert ram.host_cache == p.bytes.checkpoints + 8192 * MiB
    # Tight RAM: fewer checkpoints, a smaller prompt cache, both passed, and said.
    tight = plan(info, 8192, machine=Machine(14 * GB, 14 * GB, [], "Linux"))
    # The headroom is what the working set leaves: the embedding's untouched rows are clean
    # file pages the prompt cache may push out (core/planning/residency.py).
    headroom = 13 * GB - (tight.bytes.total - tight.bytes.lazy)
    assert 0 <= tight.bytes.checkpoints + tight.cache_ram_mib * MiB <= headroom
    assert "--cache-ram" in tight.plan_args and tight.cache_ram_mib < 8192


def test_no_checkpoints_without_a_window_or_recurrent_state(sparse):
    p = plan(sparse(geo.qwen3_30b_a3b(4)), 4096, machine=cpu_only(64 * GB))
    assert p.ctx_checkpoints == 0 and p.bytes.checkpoints == 0 and "--ctx-checkpoints" not in p.plan_args
    users = plan(sparse(geo.qwen3_30b_a3b(4)), 4096, machine=cpu_only(64 * GB), cache_ram_mib=1024)
    assert users.cache_ram_mib == 1024 and "--cache-ram" not in users.plan_args  # the user's stays theirs


# ------------------------------------------------------------------ 9. the projector
@pytest.fixture(scope="module")
def vision(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("vision")
    m = ta.gemma3_model(**dict(ta.BENCH_GEOMETRY, n_ctx_train=8192))
    model = ta.write_arch(d / "gemma3-tiny.gguf", m)[0]
    good = projectors.write_gemma3_projector(d / "mmproj-gemma3-tiny-F16.gguf", m.n_embd, n_embd=256, n_layer=4)
    other = projectors.write_gemma3_projector(d / "mmproj-other-F16.gguf", m.n_embd * 2)
    return {"model": model, "good": good, "other": other}


def test_the_projector_that_belongs_to_the_model(vision):
    info = gguf.read_model(vision["model"])
    assert sorted(p.name for p in info.projectors) == ["mmproj-gemma3-tiny-F16.gguf", "mmproj-other-F16.gguf"]
    assert extra_args.projector_for(info) == vision["good"]  # the other one's width is not n_embd
    prefs, rest = extra_args.engine_inputs(planner.PlanPrefs(), info, ("--temp", "0.5"))
    assert prefs.projector == vision["good"] and rest == ("--temp", "0.5")
    off, _ = extra_args.engine_inputs(planner.PlanPrefs(), info, ("--no-mmproj",))
    assert off.projector is None
    mine, rest = extra_args.engine_inputs(planner.PlanPrefs(), info, ("-mm", str(vision["other"])))
    assert mine.projector == vision["other"] and rest == ()


def test_projector_planned_on_the_gpu_unless_kept_in_ram(vision):
    info = gguf.read_model(vision["model"])
    weights = gguf.read_projector(vision["good"]).tensor_bytes
    gpu = Machine(16 * GB, 16 * GB, [Gpu(0, "cuda", "RTX 4060", "GPU-0", 8 * GB, 8 * GB, device="CUDA0")], "Linux")
    p = planner.plan(info, NO_SPEC, gpu, planner.PlanPrefs(projector=vision["good"]))
    assert p.bytes.projector == weights
    assert next(d for d in p.per_device if d.kind == "gpu").projector == weights
    assert p.plan_args[p.plan_args.index("--mmproj") + 1] == str(vision["good"])
    ram = planner.plan(info, NO_SPEC, gpu, planner.PlanPrefs(projector=vision["good"], projector_offload=False))
    assert next(d for d in ram.per_device if d.kind == "cpu").projector == weights


def test_prepare_passes_the_projector(vision):
    from draftwise.core.engines.capabilities import pinned_caps
    from draftwise.core.launch import prepare

    prepared = prepare.prepare(prepare.Request(model=vision["model"], mtp="off"), pinned_caps(),
                               cpu_only(16 * GB))  # fmt: skip
    argv = prepared.argv("/opt/llama-server")
    assert argv[argv.index("--mmproj") + 1] == str(vision["good"])
    assert prepared.plan.bytes.projector == gguf.read_projector(vision["good"]).tensor_bytes


def test_explicit_draft_spec_keeps_its_plan(base_info):
    # A user's draft model with a user's n-max: the output rows follow it.
    spec = SpecDecision("draft-simple", None, EXPLICIT, False)
    assert extra_args.draft_lengths(spec, planner.PlanPrefs(draft_n_max=6)).outputs("draft-simple") == 6
