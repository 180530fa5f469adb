"""Context checkpoints, the host cache's part per slot: whether llama-server makes them for a
model (its memory cannot drop a sequence's tail, or it has a sliding window) and what one
costs (server-context.cpp `do_checkpoint`, the pinned engine's source 11434).
"""

from __future__ import annotations

from collections.abc import Iterable

from draftwise.core.planning.kv_cache import Cells, kv_row_bytes
from draftwise.core.planning.model_shape import Layer, Shape

# --ctx-checkpoints and --cache-ram defaults of the pinned server (common/common.h).
CTX_CHECKPOINTS = 32
CACHE_RAM_MIB = 8192


def makes_checkpoints(shape: Shape, swa_full: bool) -> bool:
    """llama-server keeps context checkpoints of a slot when its memory cannot drop the tail
    of a sequence (recurrent state: seq_rm type FULL, or RS with rollback) or has a sliding
    window (n_swa > 0 unless --swa-full), server-context.cpp `do_checkpoint`."""
    trunk = shape.trunk
    return any(ly.recurrent for ly in trunk) or (not swa_full and shape.n_swa > 0 and any(ly.swa for ly in trunk))


def partial_state_bytes(shape: Shape, c: Cells, kv_type: str, layers: Iterable[Layer] | None = None) -> int:
    """What one sequence's state costs with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY (a context
    checkpoint): a sliding-window cache writes only its SWA cells that the window still sees
    (n_swa + 1 of them, llama_kv_cache::state_write with is_masked_swa; the engine's
    "created context checkpoint ... size" agrees to 0.1 %), a hybrid only its
    recurrent rows (one per layer, llama_memory_hybrid::state_write); a plain cache ignores
    the flag and writes the whole sequence."""
    layers = list(shape.trunk if layers is None else layers)
    rec = sum((shape.r_state + shape.s_state) * 4 for ly in layers if ly.recurrent)
    swa_layers = [ly for ly in layers if ly.k and ly.swa]
    if rec or swa_layers:
        cells = min(shape.n_swa + 1 if shape.n_swa else c.swa_per_stream, c.swa_per_stream)
        return rec + sum(kv_row_bytes(kv_type, ly.k) + kv_row_bytes(kv_type, ly.v) for ly in swa_layers) * cells
    return sum(kv_row_bytes(kv_type, ly.k) + (kv_row_bytes(kv_type, ly.v) if ly.v else 0)
               for ly in layers if ly.k) * c.per_stream  # fmt: skip
