"""The MTP draft context (`--spec-type draft-mtp`): the KV of the nextn blocks at the target's
cells, and its compute buffer, fitted per phase of the MTP graph on the engine's buffer lines
(the pinned engine's source 11434, src/models/<arch>.cpp graph_mtp; docs/planner.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from draftwise.core.planning.compute_buffer import mask_bytes
from draftwise.core.planning.context_bytes import ContextBytes
from draftwise.core.planning.kv_cache import Cells, kv_layer_bytes
from draftwise.core.planning.model_shape import Layer, Shape


def mtp_context(shape: Shape, c: Cells, kv_type: str) -> ContextBytes:
    """The MTP draft context: KV of the nextn blocks only, at the target's cells."""
    head = shape.head
    kv = [0] * shape.n_layer + [kv_layer_bytes(ly, c, kv_type, kv_type) for ly in head]
    e = shape.n_embd
    ff = max([ly.ff for ly in head] or [0])
    # Phases of the MTP graph: the FFN (mask already freed), attention with the mask, and a
    # MoE head's down projection.
    ffn_phase = c.ubatch * 4 * (3 * ff + 2 * e + 5)
    attention_phase = mask_bytes(c, shape, head) + c.ubatch * 4 * (4 * e + 5)
    if shape.arch in GATED_MTP:
        ffn_phase, attention_phase = _gated_mtp_phases(shape, c, head)
    compute = max(ffn_phase, attention_phase, mtp_moe_phase(shape, c, head))
    compute += c.n_seq * shape.n_vocab * 4
    output = c.n_seq * shape.n_vocab * 4
    return ContextBytes(kv, [0] * len(shape.layers), compute, output)


# MTP heads whose attention is gated (the query projection holds the query and its gate:
# src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp graph_mtp).
GATED_MTP = frozenset({"qwen35", "qwen35moe", "qwen3next"})
# Their phases in floats per ubatch token beyond the generic ones, fitted on the engine's
# "compute buffer size" of the MTP draft context (pinned 11434, CPU, ubatch 512): attention
# 4 x n_embd + the gated query (2 x query width) + 1572, one n_embd more with a MoE head
# (Qwen3.5-0.8B at 16k/32k/64k cells: 20.02 MiB beside the mask each time; Qwen3.5-27B at
# 64k; Qwen3.5-35B-A3B at 64k, MoE; all exact); a dense head's FFN 3 x FFN width + 2.25 x
# n_embd + 294 (Qwen3.5-0.8B and -27B at 4k cells: 27.02 and 126.02 MiB). The generic
# widths below them were 3 % under at 4k and 9.5 % under at the window's 32k (105.9 planned,
# 117.0 MiB the engine) on Qwen3.5-0.8B. Qwen3-Next (held out: MoE, its FFN on one row)
# comes within 0.8 % at 4k, 32k and 64k.
_GATED_MTP_ATTENTION = 1572
_GATED_MTP_FFN = 294


def _gated_mtp_phases(shape: Shape, c: Cells, head: Iterable[Layer]) -> tuple[int, int]:
    """(FFN phase, attention phase) bytes of a gated-attention MTP head (GATED_MTP)."""
    head = list(head)
    e = shape.n_embd
    attn = max(head, key=lambda ly: ly.q)
    moe = any(ly.n_used for ly in head)
    row_bytes = c.ubatch * 4
    attention = mask_bytes(c, shape, head) + row_bytes * (4 * e + 2 * attn.q + _GATED_MTP_ATTENTION + (e if moe else 0))
    if moe or shape.arch in MTP_ROWS_BEFORE_FFN:
        return 0, attention  # mtp_moe_phase is the MoE head's FFN
    ff = max(ly.ff for ly in head)
    return row_bytes * (3 * ff + 2 * e + e // 4 + _GATED_MTP_FFN), attention


# MTP graphs that keep only the output rows before their FFN (`ggml_get_rows(cur,
# inp_out_ids)` ahead of build_moe_ffn: src/models/qwen3next.cpp, nemotron-h-moe.cpp): their
# FFN runs on one row per sequence, not the whole batch.
MTP_ROWS_BEFORE_FFN = frozenset({"qwen3next", "nemotron_h_moe"})


def mtp_moe_phase(shape: Shape, c: Cells, head: Iterable[Layer]) -> int:
    """A MoE MTP head's down projection (build_moe_ffn in the graph_mtp of glm4-moe.cpp,
    qwen35moe.cpp, ...), as ggml-alloc lays it out over the whole batch: the block's input
    (n_embd) and its post-attention norm (n_embd) stay live; below them the attention mask's
    hole, unless the norm took it (a mask smaller than n_embd rows cannot); then the routed
    experts' gate, up and SwiGLU (3 x used x expert width), and the down projection's output
    (used x n_embd), which lands past them unless it fits where gate and up were freed
    (n_embd <= 2 x expert width). The engine's buffer lines on GLM-4.5-Air (150.01 MiB) and
    Qwen3.5-35B-A3B (65.02 MiB), 4096 cells: within 0.1 and 1.1 MiB (the router's rows)."""
    moe = [ly for ly in head if ly.n_used]
    if not moe or shape.arch in MTP_ROWS_BEFORE_FFN:
        return 0
    ly = max(moe, key=lambda x: x.ff)
    e, rows = shape.n_embd, ly.ff  # rows: used experts x expert width (Layer.ff)
    down = ly.n_used * e if ly.n_used * e > 2 * rows else 0
    row_bytes = c.ubatch * 4
    mask = mask_bytes(c, shape, head)
    return row_bytes * (2 * e + 3 * rows + down) + (mask if mask < row_bytes * e else 0)
