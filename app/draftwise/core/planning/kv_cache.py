"""How big the KV cache is: the cells of one context (llama_context pads the context, the
SWA cache keeps the window plus a batch) and the bytes per layer.

Pure arithmetic on the GGUF header, written against the pinned engine's source (11434):
`llama_kv_cache` (src/llama-kv-cache.cpp): one K and one V tensor per layer with KV,
`kv_size` cells x `n_stream` streams, row = heads x head length in the KV type;
sliding-window layers get `llama_kv_cache_iswa`'s smaller cache; layers that share KV
(gemma3n/gemma4) and recurrent layers have none (model_shape.py); DeepSeek-V4's
`llama_kv_cache_dsv4` keeps compressed caches and compressor states beside its raw one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from draftwise.core.planning.model_shape import Dsv4Cache, Layer

# ggml type -> (elements per block, bytes per block), for the KV types llama-server accepts.
KV_TYPES: dict[str, tuple[int, int]] = {
    "f32": (1, 4), "f16": (1, 2), "bf16": (1, 2), "q8_0": (32, 34), "q4_0": (32, 18),
    "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "iq4_nl": (32, 18),
}  # fmt: skip

# llama_context pads the context to 256 cells (GGML_PAD(n_ctx, 256)); the SWA cache too.
CTX_PAD = 256
# Engine defaults the planner does not change: -b 2048, -ub 512.
N_BATCH = 2048
N_UBATCH = 512


def kv_row_bytes(kv_type: str, n: int) -> int:
    """Bytes of one cache row of `n` elements in `kv_type` (ggml_row_size)."""
    try:
        block, size = KV_TYPES[kv_type]
    except KeyError:
        raise ValueError(f"unknown KV cache type {kv_type!r} (known: {', '.join(KV_TYPES)})") from None
    return n // block * size if n % block == 0 else math.ceil(n / block) * size


def pad(n: int, to: int = CTX_PAD) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class Cells:
    """KV cache sizes of one context as llama_context/llama_kv_cache(_iswa) make them."""

    n_ctx: int  # total, padded (what `-c` becomes)
    per_stream: int  # cells per stream of the full cache
    swa_per_stream: int  # cells per stream of the SWA cache
    n_stream: int
    n_seq: int
    ubatch: int


def cells(ctx_per_slot: int, slots: int, n_swa: int, swa_full: bool = False, *,
          batch: int | None = None, ubatch: int | None = None) -> Cells:
    """Cells for `-c ctx_per_slot*slots -np slots` (non-unified KV: one stream per slot,
    llama-server's default when -np is given); `batch`/`ubatch`: -b/-ub when the user set them."""
    n_ctx = pad(ctx_per_slot * slots)
    per_stream = pad(n_ctx // slots) if slots > 1 else n_ctx
    n_batch = min(n_ctx, batch or N_BATCH)
    ubatch = min(n_batch, ubatch or N_UBATCH)
    if n_swa and not swa_full:
        swa = pad(min(per_stream, n_swa + ubatch))
    else:
        swa = per_stream
    return Cells(n_ctx, per_stream, swa, slots, slots, ubatch)


def kv_layer_bytes(layer: Layer, c: Cells, kv_type_k: str, kv_type_v: str) -> int:
    if not layer.k:
        return 0
    n = c.swa_per_stream if layer.swa else c.per_stream
    size = kv_row_bytes(kv_type_k, layer.k) * n * c.n_stream
    if layer.v:
        size += kv_row_bytes(kv_type_v, layer.v) * n * c.n_stream
    # The indexer's cache: a llama_kv_cache of its own over the same cells (one key head).
    if layer.idx_k:
        size += kv_row_bytes(kv_type_k, layer.idx_k) * c.per_stream * c.n_stream
    if layer.idx_v:
        size += kv_row_bytes(kv_type_v, layer.idx_v) * c.per_stream * c.n_stream
    return size


DSV4_CSA, DSV4_HCA = 4, 128  # llama-kv-cache-dsv4.cpp DSV4_CSA_RATIO / DSV4_HCA_RATIO


def dsv4_layer_bytes(d: Dsv4Cache, il: int, c: Cells, kv_type: str, n_rs_seq: int) -> tuple[int, int]:
    """(KV, state) bytes of block `il` in llama_kv_cache_dsv4."""
    streams = c.n_stream
    kv = kv_row_bytes(kv_type, d.k) * c.swa_per_stream * streams  # raw, all blocks sliding
    ratio = d.ratios[il] if il < len(d.ratios) else 0
    state = 0
    planes = streams * (1 + n_rs_seq)
    if ratio == DSV4_CSA:
        rows = pad(max(1, -(-c.per_stream // DSV4_CSA)))
        kv += (kv_row_bytes(kv_type, d.k) + kv_row_bytes(kv_type, d.idx_k)) * rows * streams
        # kv + score tensors: csa (2 x head, 8 rows) and the indexer's (2 x idx head, 8 rows)
        state += 2 * 4 * planes * 2 * DSV4_CSA * (2 * d.head_k + 2 * d.idx_k)
    elif ratio == DSV4_HCA:
        rows = pad(max(1, -(-c.per_stream // DSV4_HCA)))
        kv += kv_row_bytes(kv_type, d.k) * rows * streams
        state += 2 * 4 * planes * DSV4_HCA * d.head_k
    return kv, state
