"""What one llama_context allocates besides weights: the target's and a separate draft
model's, split by layer where it matters.

Written against the pinned engine's source (11434):
- KV cache: per layer (kv_cache.py);
- recurrent state: `llama_memory_recurrent` (R = conv state, S = SSM state per layer, f32,
  one row per sequence, times 1 + n_rs_seq rollback snapshots);
- output buffer: `llama_context::output_reserve` (logits of n_outputs rows, f32);
- compute buffer: compute_buffer.py's fit.
How many output rows and rollback snapshots drafting adds is `DraftLength`'s; the MTP head's
own context is mtp_head.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from draftwise.core.engines import spec_types
from draftwise.core.planning.compute_buffer import (
    compute_width,
    graph_compute,
    indexer_phase,
    mask_bytes,
    scores_bytes,
)
from draftwise.core.planning.kv_cache import Cells, cells, dsv4_layer_bytes, kv_layer_bytes
from draftwise.core.planning.model_shape import Shape

# Engine default the planner does not change: --spec-draft-n-max 3.
SPEC_DRAFT_N_MAX = 3
# Archs that keep rollback snapshots of the recurrent state while drafting
# (llm_arch_supports_rs_rollback): n_rs_seq = --spec-draft-n-max with draft-mtp/eagle3/dflash.
RS_ROLLBACK_ARCHS = frozenset({
    "kimi-k3", "qwen35", "qwen35moe", "qwen4exp", "deepseek4", "glm5-next", "nemotron_h",
    "nemotron_h_moe", "lfm2", "lfm2moe", "bailingmoe3",
})  # fmt: skip
ROLLBACK_SPEC_TYPES = spec_types.ROLLBACK


@dataclass
class ContextBytes:
    """What one llama_context allocates besides weights, split by layer where it matters."""

    kv_layers: list[int] = field(default_factory=list)  # per block (all blocks, 0 = none)
    rs_layers: list[int] = field(default_factory=list)  # recurrent state per block
    compute: int = 0
    output: int = 0

    @property
    def kv(self) -> int:
        return sum(self.kv_layers)

    @property
    def rs(self) -> int:
        return sum(self.rs_layers)


# common/common.h defaults of the drafters' lengths (common_speculative_n_max): the n-gram
# drafters propose up to their m-gram size, ngram-mod up to --spec-ngram-mod-n-max.
NGRAM_MOD_N_MAX = 64
NGRAM_MAP_SIZE_M = 48  # ngram-simple, ngram-map-k, ngram-map-k4v (size_m)
NGRAM_CACHE_N_MAX = 8


@dataclass(frozen=True)
class DraftLength:
    """The draft lengths the engine will run with (passed or its defaults)."""

    draft: int = SPEC_DRAFT_N_MAX  # --spec-draft-n-max (draft-* types)
    ngram_mod: int = NGRAM_MOD_N_MAX  # --spec-ngram-mod-n-max
    ngram_map: int = NGRAM_MAP_SIZE_M  # --spec-ngram-simple-size-m / --spec-ngram-map-k-size-m

    def outputs(self, spec_type: str | None) -> int:
        """common_speculative_n_max: tokens drafted per step, the largest over the types."""
        n = 0
        for t in (spec_type or "").split(","):
            t = t.strip()
            if t.startswith("draft-"):
                n = max(n, self.draft)
            elif t == spec_types.NGRAM_MOD:
                n = max(n, self.ngram_mod)
            elif t in (spec_types.NGRAM_SIMPLE, spec_types.NGRAM_MAP_K):
                n = max(n, self.ngram_map)
            elif t == spec_types.NGRAM_MAP_K4V:
                n = max(n, NGRAM_MAP_SIZE_M)
            elif t == spec_types.NGRAM_CACHE:
                n = max(n, NGRAM_CACHE_N_MAX)
        return n

    def rollback(self, spec_type: str | None, arch: str) -> int:
        """n_rs_seq (common_params_speculative::need_n_rs_seq, clamped to 0 where the
        architecture cannot roll back its recurrent state)."""
        types = {t.strip() for t in (spec_type or "").split(",")}
        return self.draft if types & ROLLBACK_SPEC_TYPES and arch in RS_ROLLBACK_ARCHS else 0


def n_outputs(slots: int, speculative: bool, n_draft: int = SPEC_DRAFT_N_MAX) -> int:
    """llama-server's output rows (common_speculative_get_output_limits): one per slot,
    plus the drafted tokens it verifies."""
    return slots * (1 + (n_draft if speculative else 0))


def target_context(
    shape: Shape, c: Cells, kv_type: str, *, spec_type: str | None = None, mtp: bool = False,
    lengths: DraftLength = DraftLength(), flash_attn_off: bool = False,
) -> ContextBytes:
    """The main context's KV/RS, compute and output bytes (`flash_attn_off`: -fa off, the
    attention phase holding its KQ scores: compute_buffer.scores_bytes)."""
    trunk = shape.trunk
    kv = [kv_layer_bytes(ly, c, kv_type, kv_type) for ly in trunk] + [0] * shape.n_nextn
    n_rs_seq = lengths.rollback(spec_type, shape.arch)
    rows = max(1, c.n_seq) * (1 + n_rs_seq)
    rs_one = (shape.r_state + shape.s_state) * 4 * rows
    rs = [rs_one if ly.recurrent else 0 for ly in trunk] + [0] * shape.n_nextn
    if shape.dsv4 is not None:
        # The raw cache covers the MTP blocks too; the compressor states only the trunk.
        for il in range(len(shape.layers)):
            k_bytes, state = dsv4_layer_bytes(shape.dsv4, il, c, kv_type, n_rs_seq)
            kv[il] += k_bytes
            rs[il] += state if il < shape.n_layer else 0
    if shape.kv_margin:
        kv = [int(x * (1 + shape.kv_margin)) for x in kv]
    speculative = spec_type is not None and spec_type != spec_types.NONE
    outs = min(n_outputs(c.n_seq, speculative, lengths.outputs(spec_type)), c.ubatch)
    compute = graph_compute(shape, c, outs)
    if compute is None:
        compute = c.ubatch * 4 * compute_width(shape, trunk) + mask_bytes(c, shape, trunk)
        if flash_attn_off:
            compute += scores_bytes(c, trunk)
        compute = max(compute, indexer_phase(shape, c, trunk))
        # The reserved graph's logits come after the last block, when its activations are
        # freed: they take those holes and add to the peak only past them (the engine's
        # compute lines on the corpus: every CPU row was one logits row under the sum,
        # Qwen3.5/Gemma 4 with draft-mtp's 4 rows four; tests/data/corpus-engine/).
        compute = max(compute, outs * shape.n_vocab * 4 + c.ubatch * 4 * 2 * shape.n_embd)
    output = outs * shape.n_vocab * 4
    return ContextBytes(kv, rs, compute, output)


def draft_context(shape: Shape, c: Cells, kv_type: str, *, flash_attn_off: bool = False) -> ContextBytes:
    """A separate draft model's context: its own KV at the target's cells (flash attention
    as the target's: common/speculative.cpp `common_base_params_to_speculative` copies -fa)."""
    cd = cells(c.per_stream, c.n_stream, shape.n_swa)
    return target_context(shape, replace(cd, ubatch=c.ubatch), kv_type, flash_attn_off=flash_attn_off)
