"""The compute buffer of a Vulkan device that runs a model's whole graph.

The planner's compute figure (context_bytes.target_context) is the CPU graph's. A Vulkan device
that holds every block (the host keeping only compute_buffer.host_compute) reserves its own split of
that graph, and two things make its buffer differ, both read off the pinned engine's
allocation trace (docs/corpus.md, "Reading ggml-alloc's placement"):

- the scheduler copies to the GPU only the inputs its nodes use
  (ggml-backend.cpp ggml_backend_sched_split_graph): the raw-embeddings input `inp_embd`
  (n_embd x ubatch f32; src/llama-graph.cpp build_inp_embd keeps all three embedding paths
  in the graph) has no consumer in a token batch, so it stays on the host, where the CPU
  graph keeps it under its whole peak: one n_embd per ubatch token less;
- ggml-vulkan reorders each split (ggml_vk_graph_optimize), and where the query is not
  n_embd wide the reordered block can put the attention output above the split's inputs
  (one n_embd back: gemma-3-1b, gemma-2-2b) or the SwiGLU rows into the low region the
  input copies leave (one FFN width less: Qwen3-0.6B). The dense architectures whose block
  order was traced are replayed (ggml_sim.vulkan_block_peak); the rest keep the CPU's figure
  unless their query is n_embd wide.
"""

from __future__ import annotations

from dataclasses import replace

from draftwise.core.planning import ggml_sim
from draftwise.core.planning.kv_cache import Cells
from draftwise.core.planning.model_shape import Shape

# The order ggml_vk_graph_optimize gives each architecture's dense attention block, read off
# the engine's allocation trace (Llama-3.2-1B, Qwen2.5-0.5B, Qwen3-0.6B; gemma-3-270m and -1b).
VULKAN_BLOCK_ORDER = {"llama": "qvk", "qwen2": "qvk", "qwen3": "qvk", "gemma3": "gemma3"}


def vulkan_compute(shape: Shape, c: Cells, compute: int, outs: int = 1) -> int:
    """Vulkan0's compute buffer for a model wholly on it, from the CPU graph's `compute`.

    Measured on lavapipe, 4096 cells: the 13 corpus rows and 4 other published geometries
    (Llama-3.2-3B, Qwen2.5-3B, Qwen3-4B, gemma-3-4b) replayed to 0.01 MiB, 34 synthetic
    ones (query 0.5-3 x n_embd, K/V 0.25-2 x n_embd, FFN 3-4 x n_embd) too
    (tests/test_vulkan_compute.py); the query-wide-as-n_embd rule on LFM2, Phi-3, SmolLM3 and
    a qwen3moe geometry. The CPU's figure is never under the engine's."""
    trunk = shape.trunk
    e = shape.n_embd
    attn = [ly for ly in trunk if ly.k]
    if shape.gemma3n is not None or shape.dsv4 is not None or not attn or len(trunk) < 2 \
            or any(ly.mla_w or ly.idx_k for ly in trunk):  # fmt: skip
        return compute
    first = trunk[0]
    order = VULKAN_BLOCK_ORDER.get(shape.arch)
    if order and first.k and first.q and first.ff and all(
            ly == replace(first, swa=ly.swa) and not ly.recurrent and not ly.n_used for ly in trunk):  # fmt: skip
        kinds = sorted({ly.swa for ly in attn}, key=lambda swa: swa != first.swa)  # the first block's cache first
        masks = [(c.swa_per_stream if swa else c.per_stream) * c.ubatch * 2 for swa in kinds]
        return ggml_sim.vulkan_block_peak(order, n_embd=e, q=first.q, k=first.k, v=first.v, ff=first.ff,
                                          ubatch=c.ubatch, masks=masks, n_layer=len(trunk), outs=outs)
    if all(ly.q == e for ly in attn):
        return compute - c.ubatch * e * 4
    return compute
