"""Ready-made tiny models for the speculative-decoding cases: targets and their drafters.

Each returns a `TinyModel` (the writer, tinymodels.py, puts it in a file): an MTP target, a
companion draft with the target's vocabulary (or another one), a padded target and its draft,
a draft with the target's own weights, a target on which drafting pays on a CPU and its exact
or never-accepted drafts, and the feature-reading EAGLE-3 and DFlash drafts. What the engine
does with each is measured in docs/engine-observations.md. A draft the engine refuses to load
is written, not described: `tinymodels.broken_draft`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from draftwise.testing.tinyspec import TinyModel


def mtp_model(**overrides: Any) -> TinyModel:
    """A glm4moe model with an embedded MTP head whose MTP graph runs in the pinned engine.

    3 blocks: block 0 dense, block 1 MoE, block 2 the nextn (MTP) block. Loads with and
    without `--spec-type draft-mtp`.
    """
    base: dict[str, Any] = dict(
        arch="glm4moe", name="tiny-glm4moe-mtp", n_layer=3, nextn_predict_layers=1,
        n_layer_dense_lead=1, n_expert=4, n_expert_used=2, n_expert_shared=1, n_ff_exp=32,
    )
    base.update(overrides)
    return TinyModel(**base)


def draft_model(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A smaller llama with the target's vocabulary: a companion draft for draft-simple.

    Pass `vocab="other"` for a draft the engine will find incompatible.
    """
    target = target or TinyModel()
    base: dict[str, Any] = dict(
        arch="llama", name=f"{target.name}-draft", n_embd=32, n_layer=1, n_head=2,
        n_head_kv=1, n_ff=64, vocab=target.vocab, n_pieces=target.n_pieces,
        dtype=target.dtype, seed=target.seed + 1,
    )
    base.update(overrides)
    return TinyModel(**base)


def padded_pair(draft_vocab: int = 800, target_vocab: int = 900, **target_overrides: Any) -> tuple[TinyModel, TinyModel]:
    """A target whose vocabulary is the draft's padded with UNUSED `[PADn]` entries to
    `target_vocab` tokens (as Qwen2.5 7B+ pads 151,936 to 152,064), and its draft."""
    pieces = draft_vocab - 3 - 256
    target = TinyModel(name="tiny-padded", n_pieces=pieces, n_pad=target_vocab - draft_vocab, **target_overrides)
    return target, draft_model(target, n_pad=0)


def twin_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A draft with the target's very weights: every drafted token is accepted
    (`draft acceptance = 1.00000`), for tests that need speculation to pay off."""
    target = target or TinyModel()
    return replace(target, **{"name": f"{target.name}-twin", **overrides})


def paying_target(**overrides: Any) -> TinyModel:
    """A target on which a draft model must pay off on a CPU (bench/speculation.py).

    Wide and deep enough that each token costs real work (12 blocks of 512, F16, ~75 MB),
    with `zero_output`: the blocks are computed but add nothing, so the next token is a
    function of the current one. `exact_draft()` computes that function with one block.
    """
    base: dict[str, Any] = dict(
        name="tiny-paying-target", n_embd=512, n_layer=12, n_head=8, n_head_kv=4, n_ff=1536,
        dtype="F16", zero_output=True, seed=11,
    )
    base.update(overrides)
    return TinyModel(**base)


def exact_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """One block of `target` with the same embeddings and head (same seed and shapes draw the
    same numbers): it predicts the zero-output target exactly at a fraction of the cost, so
    every drafted token is accepted."""
    target = target or paying_target()
    return replace(target, **{"name": f"{target.name}-draft", "n_layer": 1, **overrides})


def never_accepted_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A draft of `target` that costs a good part of it (5 of 12 blocks: still under half
    its size, so auto picks it as a companion) and whose every guess is wrong: its head is
    the target's shifted by one word, so drafting can never pay."""
    target = target or paying_target()
    layers = max(1, (target.n_layer * 5) // 12)
    return replace(target, **{"name": f"{target.name}-slow-draft", "n_layer": layers, "shift_head": 1,
                              **overrides})


def eagle3_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """An EAGLE3 draft for `target` (reads 3 of its layers' hidden states)."""
    target = target or TinyModel()
    last = target.n_layer - 1
    base: dict[str, Any] = dict(
        arch="eagle3", name=f"{target.name}-eagle3", n_embd=target.n_embd, n_layer=1,
        n_head=target.n_head, n_head_kv=target.n_head_kv, n_ff=target.n_ff,
        vocab=target.vocab, n_pieces=target.n_pieces, seed=target.seed + 2,
        target_layers=(0, last // 2, last), target_hidden_size=target.n_embd,
    )
    base.update(overrides)
    return TinyModel(**base)


def dflash_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A DFlash draft for `target` (reads its hidden states; same hidden size)."""
    target = target or TinyModel()
    base: dict[str, Any] = dict(
        arch="dflash", name=f"{target.name}-dflash", n_embd=target.n_embd, n_layer=1,
        n_head=target.n_head, n_head_kv=target.n_head_kv, n_ff=target.n_ff,
        vocab=target.vocab, n_pieces=target.n_pieces, seed=target.seed + 3,
        target_layers=tuple(sorted({0, target.n_layer - 1})),
    )
    base.update(overrides)
    return TinyModel(**base)
