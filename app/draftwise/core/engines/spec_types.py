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

# Drafters that run a model (a file of their own, or the model's MTP head): they take the
# `--spec-draft-*` settings below (common_params_speculative_draft).
MODEL_DRAFTERS = (DRAFT_SIMPLE, DRAFT_EAGLE3, DRAFT_MTP, DRAFT_DFLASH, DRAFT_DSPARK)
# The n-gram types a measurement tries (ngram-map-k4v and ngram-cache aside: the first is the
# engine's own "not sure this is a good config" in --spec-default, the second needs cache files).
NGRAM_MEASURED = (NGRAM_MOD, NGRAM_SIMPLE, NGRAM_MAP_K)
# The one n-gram type that drafts from the request's own context alone: ngram-simple's begin
# and accept do nothing (common/speculative.cpp). ngram-mod's hash is "shared across all
# sequences" and fed by every request, ngram-map-k keeps a map per slot from one request to
# the next, ngram-cache its dynamic cache: what they draft on a request depends on what the
# engine saw before it. On the real Gemma 3 270M, the same eight prompts in reverse order in a
# fresh engine gave ngram-mod other drafts on four of them (the edit: 17 drafted, 17 accepted
# against 98 and 41), ngram-map-k on one, ngram-simple the same on all eight.
NGRAM_STATELESS = NGRAM_SIMPLE
# The flag that sets each type's draft length (common/arg.cpp): the model drafters share
# --spec-draft-n-max; ngram-mod has its own n-max; ngram-simple and ngram-map-k draft the
# m-gram that follows a matched n-gram, so their length is size-m.
DRAFT_N_MAX = "--spec-draft-n-max"
LENGTH_FLAGS = {
    **{t: DRAFT_N_MAX for t in MODEL_DRAFTERS},
    NGRAM_MOD: "--spec-ngram-mod-n-max",
    NGRAM_SIMPLE: "--spec-ngram-simple-size-m",
    NGRAM_MAP_K: "--spec-ngram-map-k-size-m",
}
# The engine's draft lengths when the flag is not given (common/common.h).
DEFAULT_LENGTHS = {DRAFT_N_MAX: 3, "--spec-ngram-mod-n-max": 64, "--spec-ngram-simple-size-m": 48,
                   "--spec-ngram-map-k-size-m": 48}
# The greedy confidence below which a model drafter stops its draft (default 0: never).
DRAFT_P_MIN = "--spec-draft-p-min"


def split_types(value: str | None) -> tuple[str, ...]:
    """`--spec-type`'s comma list as words ("ngram-mod,draft-simple" -> both)."""
    return tuple(t for t in (value or "").split(",") if t)
