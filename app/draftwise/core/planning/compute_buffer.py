"""How big the compute buffer is: not derivable from the header (it is ggml-alloc's
high-water mark of the worst-case graph), so it is a fit to measurements of the engine on
the CPU (bench/plan_accuracy.py, docs/planner.md): ubatch x a per-layer activation width,
plus the attention mask of each KV cache. Also the host compute buffer of a model wholly on
GPUs, the GPU's when it runs the CPU blocks' prompt batch (the copies it makes of what stays
in RAM), and the graphs replayed from the engine's own (Gemma 3n, gemma3n_graph.py). The MTP
head's phases are mtp_head.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from draftwise.core.planning import gemma3n_graph
from draftwise.core.planning.kv_cache import Cells
from draftwise.core.planning.model_shape import Layer, Shape

# Compute-buffer fit (floats per ubatch token), from the CPU engine; docs/planner.md.
# attention + FFN block: 3 x FFN width + 5 x n_embd (+10), never below 6 x n_embd.
# MTP head (one block, own context; mtp_head.py): the larger of 3 x FFN width + 2 x n_embd
# and the attention mask + 4 x n_embd.
# Mamba-2 style mixer: 7 x d_inner + 7 x (n_group x d_state) + 280; in hybrids the FFN
# phase is 4 x FFN width + 4 x n_embd.
_W_CONST = 10
_W_MAMBA_CONST = 280


def _width_attn(shape: Shape, layer: Layer) -> int:
    e = shape.n_embd
    # A query wider than n_embd (Qwen3: 2 x n_embd) widens the attention phase by its
    # projection and the attention output: 2 x q + 5 x n_embd (sparse qwen3moe geometries,
    # q 2048-4096 over n_embd 1024-2048).
    wide_q = 2 * layer.q + 5 * e + _W_CONST if layer.q > e else 0
    # MLA (DeepSeek-V3.2's geometry, 64 and 128 heads): the absorbed query and the output
    # in the latent space, per head 2 x (the cached K row + the V head).
    mla = layer.mla_w + 5 * e + _W_CONST if layer.mla_w else 0
    return max(3 * layer.ff + 5 * e + _W_CONST, 6 * e + _W_CONST, _width_moe_down(shape, layer), wide_q, mla)


def indexer_phase(shape: Shape, c: Cells, layers: Iterable[Layer]) -> int:
    """The DSA indexer's phase of the graph: its query (3 x indexer heads x head length)
    beside the block's inputs, and f32 scores over every cell (8 B per cell and token).
    Fitted on the engine over sparse DeepSeek-V3.2 attention geometries (16-128 heads,
    2k-32k cells); 0 without an indexer."""
    q = max((ly.idx_q for ly in layers), default=0)
    if not q:
        return 0
    return c.ubatch * (4 * (5 * shape.n_embd + 3 * q) + 8 * c.per_stream)


def _width_moe_down(shape: Shape, layer: Layer) -> int:
    """A MoE block's down projection: its output holds n_embd per used expert and token
    before the experts are summed, beside the block's inputs. The gate/up/SwiGLU rows stay
    under it when they did not fit the attention phase's freed blocks (3 x rows > 4 x
    n_embd) and the output cannot take their place (n_embd > 2 x expert width). Fitted on
    the CPU engine over sparse qwen3moe geometries (n_embd 1024-4096, expert width
    256-1536, 2 and 8 used; docs/planner.md)."""
    if not layer.n_used:
        return 0
    e, u = shape.n_embd, layer.n_used
    ff_exp = layer.ff // u
    rows = 3 * ff_exp * u
    stacked = rows if rows > 4 * e and e > 2 * ff_exp else 0
    return u * e + 5 * e + stacked + _W_CONST


def _width_mamba(shape: Shape) -> int:
    if shape.arch in GDN_ARCHS:
        return _width_gdn(shape)
    return 7 * shape.ssm_inner + 7 * shape.ssm_groups_state + _W_MAMBA_CONST


# Hybrids whose recurrent blocks are a gated delta net (src/models/qwen35.cpp
# build_layer_attn_linear, delta-net-base.cpp), not a Mamba-2 scan.
GDN_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe", "qwen4exp"})


def _width_gdn(shape: Shape) -> int:
    """A gated delta net mixer's phase: the fused qkv projection (2 x K + V, K = key heads
    x key head length, V = d_inner) and z (V) stay live while the convolution writes its
    output (2 x K + V), beside the block's inputs (5 x n_embd): 4 x K + 3 x V + 5 x n_embd.
    Fitted on the CPU engine over Qwen3.5-0.8B's geometry with n_embd 1024/2048, K
    1024-4096, V 2048/4096 (to 0.5 MiB); the fused CPU kernel keeps the heads unrepeated."""
    return 4 * shape.ssm_groups_state + 3 * shape.ssm_inner + 5 * shape.n_embd + _W_CONST


def compute_width(shape: Shape, layers: Iterable[Layer]) -> int:
    """Floats per ubatch token at the graph's peak (the fitted model, see module doc)."""
    e = shape.n_embd
    widths = [6 * e + _W_CONST]
    hybrid = shape.hybrid
    for ly in layers:
        if ly.recurrent and shape.ssm_inner:
            widths.append(_width_mamba(shape))
        if ly.k or not ly.recurrent:
            widths.append(_width_attn(shape, ly))
        if hybrid and ly.ff and shape.ssm_inner and shape.arch not in GDN_ARCHS:
            # A Mamba-2 hybrid's FFN phase (granite-hybrid, nemotron-h, falcon-h1...); the
            # gated delta net and short-conv (LFM2) hybrids' FFN is the attention block's
            # 3 x ffn + 5 x n_embd (Qwen3.5 0.8B/27B, LFM2 700M/1.2B on the engine).
            widths.append(4 * ly.ff + 4 * e)
    return max(widths)


def mask_bytes(c: Cells, shape: Shape, layers: Iterable[Layer]) -> int:
    """The f16 KQ mask of each KV cache: cells per stream x ubatch tokens."""
    layers = list(layers)
    size = 0
    if any(ly.k and not ly.swa for ly in layers):
        size += c.per_stream * c.ubatch * 2
    if any(ly.k and ly.swa for ly in layers):
        size += c.swa_per_stream * c.ubatch * 2
    if any(ly.idx_k for ly in layers):
        size += c.per_stream * c.ubatch * 2  # the indexer cache's own mask (measured, DSA)
    return size


def scores_bytes(c: Cells, layers: Iterable[Layer]) -> int:
    """What the attention phase adds without flash attention (`-fa off`): each block's KQ
    scores in f32 (llama-graph.cpp build_attn_mha: `kq = mul_mat(k, q)`, cells x ubatch x
    heads, the softmax taking its place) and its cache's mask kept in f32 where flash attention
    casts it to f16, so ubatch x cells x (4 x heads + 2), at the block with the most. On the
    CPU engine, with and without -fa: Gemma 3 270M (4 heads) grew by 31.0, 67.0 and 283.0 MiB
    at 4k, 8k and 32k cells (ubatch 512; planned 36, 72, 288) and by 141.4 and 567.0 MiB at
    32k with ubatch 256 and 1024 (planned 144, 576); tiny llamas of 8 and 16 heads at 8k and
    32k by 133.5, 541.5, 265.0 and 1057.0 MiB (planned 136, 544, 264, 1056)."""
    peak = 0
    for ly in layers:
        if ly.k and ly.heads:
            cells = c.swa_per_stream if ly.swa else c.per_stream
            peak = max(peak, cells * (4 * ly.heads + 2))
    return c.ubatch * peak


def host_compute(shape: Shape, c: Cells) -> int:
    """The host compute buffer of a model wholly on GPUs (`Vulkan_Host compute buffer size`):
    the CPU backend holds the graph inputs (ggml_backend_sched assigns every
    GGML_TENSOR_FLAG_INPUT tensor to the last backend, the CPU) and the token embedding's
    lookup (token_embd stays in RAM). Measured on the Vulkan engine (Llama-3.2-1B, Qwen3-0.6B,
    gemma-3-1b, gemma-2-2b at 4k and 8k cells): 16 B per ubatch token and n_embd, plus the
    f16 masks of the caches (2 B per cell and token, `mask_bytes`), to 0.03 MiB."""
    return c.ubatch * shape.n_embd * 16 + mask_bytes(c, shape, shape.trunk)


# A GPU backend that runs a host tensor's operation itself for a large batch
# (`offload_op`: ggml-vulkan, ggml-cuda (ROCm too), ggml-sycl; at least 32 rows,
# GGML_OP_OFFLOAD_MIN_BATCH), unless the engine runs with --no-op-offload.
OP_OFFLOAD_MIN_BATCH = 32
# The CPU-held weights whose copy on the GPU is live under the FFN's peak: the inputs' matmuls
# (their copy is freed before the outputs are, and the next one takes its hole); the down
# projection's copy goes where gate and up were.
_FFN_IN = ("ffn_gate", "ffn_up")


@dataclass(frozen=True)
class OffloadCopies:
    """What the GPU copies in for one prompt batch when blocks (or experts) stay in RAM and
    its backend offloads their operations: ggml_backend_sched makes every CPU-held weight of
    an offloaded op, and the KV cache views of a CPU block, inputs of their own split, copied
    into the GPU's compute buffer before the op and freed after it (the engine's allocation
    trace: gemma-2-2b on Vulkan, 146 splits for the prompt graph, 3 for one token)."""

    ffn_weight: int = 0  # the largest CPU-held FFN input weight (gate, up; routed experts too)
    attn_weight: int = 0  # the largest CPU-held attention weight
    kv: int = 0  # the largest K + V of a block whose cache stays in RAM, at the cells in use


def offloaded_compute(shape: Shape, c: Cells, compute: int, copies: OffloadCopies) -> int:
    """The compute buffer of the GPU that runs the CPU blocks' prompt batch: the graph's own
    peak with the FFN weight's copy under it, or a CPU block's attention with its K and V
    copies beside the masks, the block's input and its mixed-batch copy (2 x n_embd), and the
    query and attention output (2 x q). gemma-2-2b on lavapipe (11 of 26 blocks in RAM, 4k):
    95.89 MiB, planned 96.9; SmolLM2-1.7B: 81.0, planned 81.2."""
    q = max((ly.q for ly in shape.trunk), default=0) or shape.n_embd
    attn = mask_bytes(c, shape, shape.trunk) + c.ubatch * 4 * (2 * shape.n_embd + 2 * q) + copies.kv \
        + copies.attn_weight
    return max(compute + copies.ffn_weight, attn)


def ffn_input_weight(name: str) -> bool:
    """A block's FFN input matmul (ffn_gate, ffn_up, their _exps/_shexp forms)."""
    kind = name.split(".")[2] if name.count(".") >= 2 else ""
    return kind.startswith(_FFN_IN)


def graph_compute(shape: Shape, c: Cells, outs: int) -> int | None:
    """The compute buffer replayed from the engine's own graph (ggml_sim), for the
    architectures whose peak is decided by ggml-alloc's placement rather than one phase's
    width (Gemma 3n: gemma3n_graph); None for the rest, which use the fitted widths."""
    if shape.gemma3n is not None:
        return gemma3n_graph.compute_bytes(shape.gemma3n, c.ubatch, c.per_stream, c.swa_per_stream, outs)
    return None

