"""The pinned engine's `--spec-type` words (common/speculative.cpp), one definition each."""

from __future__ import annotations

NONE = "none"
DRAFT_SIMPLE = "draft-simple"  # a separate small model of the same family
DRAFT_EAGLE3 = "draft-eagle3"
DRAFT_MTP = "draft-mtp"  # the model's own Multi-Token Prediction head (or an MTP-only sidecar)
DRAFT_DFLASH = "draft-dflash"
DRAFT_DSPARK = "draft-dspark"
NGRAM_SIMPLE, NGRAM_MAP_K, NGRAM_MAP_K4V, NGRAM_MOD, NGRAM_CACHE = (
    "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache",
)
# Every type the pinned engine (11434) accepts, in its own order.
PINNED = (NONE, DRAFT_SIMPLE, DRAFT_EAGLE3, DRAFT_MTP, DRAFT_DFLASH, DRAFT_DSPARK,
          NGRAM_SIMPLE, NGRAM_MAP_K, NGRAM_MAP_K4V, NGRAM_MOD, NGRAM_CACHE)
# Drafters whose recurrent state the engine rolls back (llm_arch_supports_rs_rollback).
ROLLBACK = frozenset({DRAFT_MTP, DRAFT_EAGLE3, DRAFT_DFLASH, DRAFT_DSPARK})
