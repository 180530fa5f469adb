"""The compute buffer of a Vulkan device that runs a model's whole graph
(core/planning/vulkan_compute.py, ggml_sim.vulkan_block_peak): no engine, the engine's own numbers
recorded.

The figures are the pinned engine's `sched_reserve: Vulkan0 compute buffer size` lines on
lavapipe (Mesa 22.3, llvmpipe, LLVM 15), context 4096, one slot, f16 KV, flash attention auto
(on), `--no-warmup -nr -ngl all --fit off`, read from the starts recorded in
tests/data/engine-lines/ (engine_lines.CASES, `bench/real_models.py --record-extra
--only=vulkan-c4096`), for sparse files written by the corpus tooling: published geometries
that are not Vulkan corpus rows (the corpus's own Q4_K_M files, the device described larger
than lavapipe's reported 2048 MiB so every block is planned on it; the corpus rows are judged
by tests/test_corpus_recorded.py) and synthetic ones that move the query, KV and FFN widths
(geometries.dense: qwen3, llama and gemma3, 2-7 blocks). The block orders were read off the
engine's allocation trace of Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B, gemma-3-270m and
gemma-3-1b (docs/corpus.md, "Reading ggml-alloc's placement"); none of the figures read here
was."""

from __future__ import annotations

import pytest

from draftwise.core.planning import context_bytes, kv_cache, logparse, model_shape
from draftwise.core.planning.ggml_sim import vulkan_block_peak
from draftwise.core.planning.vulkan_compute import vulkan_compute
from draftwise.testing import geometries as geo
from draftwise.testing.corpus import engine_lines

MiB = 1 << 20
MASK = 4096 * 512 * 2  # the f16 mask of a 4096-cell cache for a 512-token ubatch
SWA_MASK = 1024 * 512 * 2  # a 512-token window's: pad(512 + 512) cells

# What every recorded start is assumed to have run with (the replay is of one 512-token
# ubatch over a 4096-cell f16 cache, every block on the device); flash attention is left on
# auto (no -fa).
_ASSUMED = ("-c 4096 -np 1 -ctk f16 -ctv f16", "-ngl all --fit off", "--no-warmup -nr")
_GRID = ("qwen3", "llama", "gemma3")


def engine_mib(source: str, e: int = 0, q: int = 0, k: int = 0, ff: int = 0, blocks: int = 0) -> float:
    """The Vulkan0 compute buffer (MiB) the engine printed for one recorded start
    (tests/data/engine-lines/<case>-vulkan-c4096-np1.log): `source` a corpus spec or a
    geometry's name, or a grid builder (qwen3, llama, gemma3) whose file has these widths."""
    if source in _GRID:
        source = geo.dense(source, n_embd=e, q=q, kv=k, ff=ff, n_layer=blocks).name
    rec = engine_lines.read(f"{source}-vulkan-c4096-np1")
    argv = rec.header["argv"]
    assert all(a in argv for a in _ASSUMED) and not {"-fa", "-ub"} & set(argv.split()), rec.path
    return logparse.parse_lines(rec.lines).by_device()["Vulkan0"]["compute"] / MiB


# (the recorded file, order, n_embd, q, k, v, ff, masks, blocks): the engine's figure is read
# from the file's recorded start
CASES = [
    # published geometries (the corpus files), every block on Vulkan0
    ("Llama-3.2-3B-Instruct", "qvk", 3072, 3072, 1024, 1024, 8192, [MASK], 28),
    ("Qwen2.5-3B-Instruct", "qvk", 2048, 2048, 256, 256, 11008, [MASK], 36),
    ("Qwen3-4B", "qvk", 2560, 4096, 1024, 1024, 9728, [MASK], 36),
    ("gemma-3-4b-it", "gemma3", 2560, 2048, 1024, 1024, 10240, [1536 * 512 * 2, MASK], 34),  # 1024 window
    # qwen3, n_embd 1024: the query 0.5-3 x n_embd, K/V 0.25-2 x n_embd
    ("qwen3", "qvk", 1024, 2048, 1024, 1024, 3072, [MASK], 4),
    ("qwen3", "qvk", 1024, 2048, 1024, 1024, 4096, [MASK], 4),
    ("qwen3", "qvk", 1024, 512, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 768, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1024, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1280, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1536, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1792, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2048, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2304, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2560, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 3072, 256, 256, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2048, 512, 512, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2048, 2048, 2048, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1536, 512, 512, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1536, 768, 768, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1536, 1536, 1536, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1024, 512, 512, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 1024, 1024, 1024, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 2560, 1280, 1280, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 3072, 1024, 1024, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 768, 768, 768, 4096, [MASK], 2),
    ("qwen3", "qvk", 1024, 512, 512, 512, 4096, [MASK], 2),
    # llama (no Q/K norms), 3 blocks
    ("llama", "qvk", 1024, 768, 256, 256, 4096, [MASK], 3),
    ("llama", "qvk", 1024, 2048, 1024, 1024, 4096, [MASK], 3),
    ("llama", "qvk", 1024, 1536, 768, 768, 4096, [MASK], 3),
    ("llama", "qvk", 1024, 2048, 1024, 1024, 3072, [MASK], 3),
    ("llama", "qvk", 1024, 512, 256, 256, 4096, [MASK], 3),
    # gemma3, 7 blocks (a 512-token window: blocks 0-4 and 6 slide, the engine's pattern of 6)
    ("gemma3", "gemma3", 1024, 512, 256, 256, 4096, [SWA_MASK, MASK], 7),
    ("gemma3", "gemma3", 1024, 768, 256, 256, 4096, [SWA_MASK, MASK], 7),
    ("gemma3", "gemma3", 1024, 1024, 512, 512, 4096, [SWA_MASK, MASK], 7),
    ("gemma3", "gemma3", 1024, 1536, 256, 256, 4096, [SWA_MASK, MASK], 7),
    ("gemma3", "gemma3", 1024, 2048, 1024, 1024, 4096, [SWA_MASK, MASK], 7),
    ("gemma3", "gemma3", 1024, 2048, 1024, 1024, 3072, [SWA_MASK, MASK], 7),
]


@pytest.mark.parametrize("source, order, e, q, k, v, ff, masks, blocks", CASES)
def test_the_replayed_vulkan_split_is_the_engines(source, order, e, q, k, v, ff, masks, blocks):
    engine = engine_mib(source, e, q, k, ff, blocks)
    got = vulkan_block_peak(order, n_embd=e, q=q, k=k, v=v, ff=ff, ubatch=512, masks=masks, n_layer=blocks)
    assert abs(got / MiB - engine) <= 0.006, (got / MiB, engine)


def _shape(arch: str, e: int, q: int, k: int, ff: int, blocks: int, n_used: int = 0) -> model_shape.Shape:
    layer = model_shape.Layer(k=k, v=k, ff=ff, n_used=n_used, q=q)
    return model_shape.Shape(arch, e, 32000, 131072, (layer,) * blocks)


@pytest.mark.parametrize("shape, source", [
    (_shape("phi3", 3072, 3072, 3072, 8192, 32), "Phi-3-mini-4k-instruct"),  # its fused QKV block is not replayed
    (_shape("smollm3", 2048, 2048, 512, 11008, 36), "SmolLM3-3B"),
    # 16 experts of 768, 8 used (engine_lines._vulkan_moe)
    (_shape("qwen3moe", 1024, 1024, 512, 8 * 768, 3, n_used=8), "qwen3moe-e1024-ff768-u8-3L"),
])  # fmt: skip
def test_without_a_traced_order_a_query_as_wide_as_n_embd_leaves_out_the_embeddings_input(shape, source):
    """The GPU never holds inp_embd (no consumer in a token batch, so no copy), which the CPU
    graph keeps under its whole peak: one n_embd per ubatch token less than the CPU's figure."""
    c = kv_cache.cells(4096, 1, 0)
    cpu = context_bytes.target_context(shape, c, "f16").compute
    got = vulkan_compute(shape, c, cpu)
    assert got == cpu - 512 * shape.n_embd * 4
    engine = engine_mib(source)
    assert 0 <= got / MiB - engine <= 0.02, (got / MiB, engine)


def test_without_a_traced_order_another_query_width_keeps_the_cpu_figure():
    """gemma-2-2b (query 2048 of n_embd 2304) on Vulkan0 alone: the CPU graph's figure (the
    engine's recorded start: the corpus file, every block on Vulkan0): the reordered block
    puts the attention output above the inputs."""
    layers = tuple(model_shape.Layer(k=1024, v=1024, ff=9216, q=2048, swa=i % 2 == 0) for i in range(26))
    shape = model_shape.Shape("gemma2", 2304, 256000, 8192, layers, n_swa=4096)
    c = kv_cache.cells(4096, 1, shape.n_swa)
    cpu = context_bytes.target_context(shape, c, "f16").compute
    assert vulkan_compute(shape, c, cpu) == cpu
    engine = engine_mib("gemma-2-2b-it")
    assert abs(cpu / MiB - engine) <= 0.02, (cpu / MiB, engine)


def test_the_replay_covers_only_dense_attention_blocks_of_one_geometry():
    c = kv_cache.cells(4096, 1, 0)
    moe = _shape("qwen3", 1024, 2048, 1024, 8 * 768, 4, n_used=8)
    hybrid = model_shape.Shape("qwen3", 1024, 32000, 131072, (model_shape.Layer(k=1024, v=1024, ff=3072, q=2048),
                                                      model_shape.Layer(recurrent=True, ff=3072)) * 2)  # fmt: skip
    for shape in (moe, hybrid):
        cpu = context_bytes.target_context(shape, c, "f16").compute
        assert vulkan_compute(shape, c, cpu) == cpu  # query 2 x n_embd, no traced order: the CPU's
