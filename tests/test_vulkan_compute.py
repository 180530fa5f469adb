"""The compute buffer of a Vulkan device that runs a model's whole graph
(core/planning/vulkan_compute.py, ggml_sim.vulkan_block_peak): no engine, the engine's own numbers
recorded.

The figures are the pinned engine's `sched_reserve: Vulkan0 compute buffer size` lines on
lavapipe (Mesa 22.3, llvmpipe, LLVM 15), context 4096, one slot, f16 KV, flash attention auto
(on), `--no-warmup -nr -ngl all --fit off`, for sparse files written by the corpus tooling:
published geometries that are not Vulkan corpus rows (the corpus rows are judged by
tests/test_corpus_recorded.py) and synthetic ones that move the query, KV and FFN widths
(qwen3, llama and gemma3 builders, 2-7 blocks). The block orders were read off the engine's
allocation trace of Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B, gemma-3-270m and gemma-3-1b
(docs/corpus.md, "Reading ggml-alloc's placement"); none of the figures below was."""

from __future__ import annotations

import pytest

from draftwise.core.planning import context_bytes, kv_cache, model_shape
from draftwise.core.planning.ggml_sim import vulkan_block_peak
from draftwise.core.planning.vulkan_compute import vulkan_compute

MiB = 1 << 20
MASK = 4096 * 512 * 2  # the f16 mask of a 4096-cell cache for a 512-token ubatch
SWA_MASK = 1024 * 512 * 2  # a 512-token window's: pad(512 + 512) cells

# (order, n_embd, q, k, v, ff, masks, blocks) -> the engine's MiB
CASES = [
    # published geometries, every block on Vulkan0
    ("qvk", 3072, 3072, 1024, 1024, 8192, [MASK], 28, 76.01),  # Llama-3.2-3B
    ("qvk", 2048, 2048, 256, 256, 11008, [MASK], 36, 84.51),  # Qwen2.5-3B
    ("qvk", 2560, 4096, 1024, 1024, 9728, [MASK], 36, 81.01),  # Qwen3-4B
    ("gemma3", 2560, 2048, 1024, 1024, 10240, [1536 * 512 * 2, MASK], 34, 90.52),  # gemma-3-4b (1024 window)
    # qwen3, n_embd 1024: the query 0.5-3 x n_embd, K/V 0.25-2 x n_embd
    ("qvk", 1024, 2048, 1024, 1024, 3072, [MASK], 4, 26.01),
    ("qvk", 1024, 2048, 1024, 1024, 4096, [MASK], 4, 38.01),
    ("qvk", 1024, 512, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 768, 256, 256, 4096, [MASK], 2, 38.01),
    ("qvk", 1024, 1024, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1280, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1536, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1792, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2048, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2304, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2560, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 3072, 256, 256, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2048, 512, 512, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2048, 2048, 2048, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1536, 512, 512, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1536, 768, 768, 4096, [MASK], 2, 38.01),
    ("qvk", 1024, 1536, 1536, 1536, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1024, 512, 512, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 1024, 1024, 1024, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 2560, 1280, 1280, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 3072, 1024, 1024, 4096, [MASK], 2, 36.01),
    ("qvk", 1024, 768, 768, 768, 4096, [MASK], 2, 38.01),
    ("qvk", 1024, 512, 512, 512, 4096, [MASK], 2, 36.01),
    # llama (no Q/K norms), 3 blocks
    ("qvk", 1024, 768, 256, 256, 4096, [MASK], 3, 38.01),
    ("qvk", 1024, 2048, 1024, 1024, 4096, [MASK], 3, 38.01),
    ("qvk", 1024, 1536, 768, 768, 4096, [MASK], 3, 38.01),
    ("qvk", 1024, 2048, 1024, 1024, 3072, [MASK], 3, 26.01),
    ("qvk", 1024, 512, 256, 256, 4096, [MASK], 3, 36.01),
    # gemma3, 7 blocks (5 sliding-window, 512)
    ("gemma3", 1024, 512, 256, 256, 4096, [SWA_MASK, MASK], 7, 37.02),
    ("gemma3", 1024, 768, 256, 256, 4096, [SWA_MASK, MASK], 7, 39.02),
    ("gemma3", 1024, 1024, 512, 512, 4096, [SWA_MASK, MASK], 7, 37.02),
    ("gemma3", 1024, 1536, 256, 256, 4096, [SWA_MASK, MASK], 7, 37.02),
    ("gemma3", 1024, 2048, 1024, 1024, 4096, [SWA_MASK, MASK], 7, 39.02),
    ("gemma3", 1024, 2048, 1024, 1024, 3072, [SWA_MASK, MASK], 7, 27.02),
]


@pytest.mark.parametrize("order, e, q, k, v, ff, masks, blocks, engine_mib", CASES)
def test_the_replayed_vulkan_split_is_the_engines(order, e, q, k, v, ff, masks, blocks, engine_mib):
    got = vulkan_block_peak(order, n_embd=e, q=q, k=k, v=v, ff=ff, ubatch=512, masks=masks, n_layer=blocks)
    assert abs(got / MiB - engine_mib) <= 0.006, got / MiB


def _shape(arch: str, e: int, q: int, k: int, ff: int, blocks: int, n_used: int = 0) -> model_shape.Shape:
    layer = model_shape.Layer(k=k, v=k, ff=ff, n_used=n_used, q=q)
    return model_shape.Shape(arch, e, 32000, 131072, (layer,) * blocks)


@pytest.mark.parametrize("shape, engine_mib", [
    (_shape("phi3", 3072, 3072, 3072, 8192, 32), 76.01),  # Phi-3-mini: its fused QKV block is not replayed
    (_shape("smollm3", 2048, 2048, 512, 11008, 36), 84.51),  # SmolLM3-3B
    (_shape("qwen3moe", 1024, 1024, 512, 8 * 768, 3, n_used=8), 48.01),  # 16 experts of 768, 8 used
])  # fmt: skip
def test_without_a_traced_order_a_query_as_wide_as_n_embd_leaves_out_the_embeddings_input(shape, engine_mib):
    """The GPU never holds inp_embd (no consumer in a token batch, so no copy), which the CPU
    graph keeps under its whole peak: one n_embd per ubatch token less than the CPU's figure."""
    c = kv_cache.cells(4096, 1, 0)
    cpu = context_bytes.target_context(shape, c, "f16").compute
    got = vulkan_compute(shape, c, cpu)
    assert got == cpu - 512 * shape.n_embd * 4
    assert 0 <= got / MiB - engine_mib <= 0.02, got / MiB


def test_without_a_traced_order_another_query_width_keeps_the_cpu_figure():
    """gemma-2-2b (query 2048 of n_embd 2304) on Vulkan0 alone: 84.52 MiB, the CPU graph's
    figure: the reordered block puts the attention output above the inputs."""
    layers = tuple(model_shape.Layer(k=1024, v=1024, ff=9216, q=2048, swa=i % 2 == 0) for i in range(26))
    shape = model_shape.Shape("gemma2", 2304, 256000, 8192, layers, n_swa=4096)
    c = kv_cache.cells(4096, 1, shape.n_swa)
    cpu = context_bytes.target_context(shape, c, "f16").compute
    assert vulkan_compute(shape, c, cpu) == cpu
    assert abs(cpu / MiB - 84.52) <= 0.02, cpu / MiB


def test_the_replay_covers_only_dense_attention_blocks_of_one_geometry():
    c = kv_cache.cells(4096, 1, 0)
    moe = _shape("qwen3", 1024, 2048, 1024, 8 * 768, 4, n_used=8)
    hybrid = model_shape.Shape("qwen3", 1024, 32000, 131072, (model_shape.Layer(k=1024, v=1024, ff=3072, q=2048),
                                                      model_shape.Layer(recurrent=True, ff=3072)) * 2)  # fmt: skip
    for shape in (moe, hybrid):
        cpu = context_bytes.target_context(shape, c, "f16").compute
        assert vulkan_compute(shape, c, cpu) == cpu  # query 2 x n_embd, no traced order: the CPU's
