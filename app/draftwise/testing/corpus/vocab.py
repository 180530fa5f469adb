"""The tokenizer keys of a corpus model: a real token list wherever one is at hand.

Sources (spec.Vocab.source):

- `vocab:NAME`: the pinned llama.cpp source's `models/ggml-vocab-NAME.gguf` (written by
  `convert_hf_to_gguf_update.py` from the published tokenizer), its `tokenizer.*` keys;
- `gemma3-270m`: the real Gemma 3 270M Q4_K_M (`realmodels.gemma3_270m()`);
- `synth:BASE`: no real list at hand; the list of BASE (a source above) is cut or extended
  with made-up normal pieces to the published size, with the family's special tokens at
  their published ids. A spec using one says so in its notes.

On top of the source, a spec names its own special tokens (`specials`: id, text, type) and
key overrides; ids up to the converted size that have no token become the converter's
padding: `[PAD{id}]`, type UNUSED (`conversion/base.py` get_vocab_base; for SentencePiece
`_create_vocab_sentencepiece`, score -10000). Entries a source file marked `[PADn]` with
another type (files written by older converters) are re-typed UNUSED, as the pinned
converter writes them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from draftwise.core.gguf.writer import Typed
from draftwise.testing.corpus import sparse
from draftwise.testing.corpus.spec import Vocab

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPM_PAD_SCORE = -10000.0
SPECIAL_SCORE = -1000.0


@functools.lru_cache(maxsize=8)
def _source_kv(path: str) -> tuple[tuple[str, Typed], ...]:
    return tuple((k, v) for k, v in sparse.read_kv(Path(path)) if k.startswith("tokenizer."))


def source_path(source: str, pinned_source: Path) -> Path:
    kind, _, name = source.partition(":")
    if source == "gemma3-270m":
        from draftwise.testing import realmodels

        return realmodels.gemma3_270m()
    if kind in ("vocab", "synth"):
        base = name.split("@")[0]
        if base == "gemma3-270m":
            return source_path("gemma3-270m", pinned_source)
        path = pinned_source / "models" / f"ggml-vocab-{base}.gguf"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: the pinned source has no such vocabulary")
        return path
    raise ValueError(f"unknown vocabulary source {source!r}")


def tokenizer_kv(v: Vocab, pinned_source: Path) -> list[tuple[str, Any]]:
    """The tokenizer.* keys for `v`, in the source's order (overrides replace in place,
    new keys go last; an override of None removes the key)."""
    kv = dict(_source_kv(str(source_path(v.source, pinned_source))))
    order = list(kv)
    tokens = list(kv["tokenizer.ggml.tokens"].value)
    types = list(kv["tokenizer.ggml.token_type"].value)
    scores = list(kv["tokenizer.ggml.scores"].value) if "tokenizer.ggml.scores" in kv else None
    spm = scores is not None
    if v.source.startswith("synth:"):
        tokens, types, scores = _synthesize(tokens, types, scores, v)
    else:
        del tokens[v.size:], types[v.size:]
        if scores is not None:
            del scores[v.size:]
    for i, (text, ty) in enumerate(zip(tokens, types, strict=True)):
        if ty != UNUSED and text == f"[PAD{i}]":
            types[i] = UNUSED
    while len(tokens) < v.size:
        i = len(tokens)
        tokens.append(f"[PAD{i}]")
        types.append(UNUSED)
        if scores is not None:
            scores.append(SPM_PAD_SCORE)
    for i, text, ty in v.specials:
        if not 0 <= i < v.size:
            raise ValueError(f"special token {text!r} at {i} is outside the {v.size} ids")
        tokens[i], types[i] = text, ty
        if scores is not None and spm:
            scores[i] = SPECIAL_SCORE
    kv["tokenizer.ggml.tokens"] = Typed(tokens, "str")
    kv["tokenizer.ggml.token_type"] = Typed(types, "i32")
    if scores is not None:
        kv["tokenizer.ggml.scores"] = Typed(scores, "f32")
    for key, value in v.overrides:
        if value is None:
            kv.pop(key, None)
            continue
        if key not in kv:
            order.append(key)
        kv[key] = value
    return [(k, kv[k]) for k in order if k in kv]


def _synthesize(tokens: list[str], types: list[int], scores: list[float] | None,
                v: Vocab) -> tuple[list[str], list[int], list[float] | None]:  # fmt: skip
    """BASE's first `keep_head` ids as they are, then (from id `first_normal`) its normal and
    byte pieces (its specials and padding left out), cut or extended with made-up pieces to
    `n_normal` of them; ids in between and after are padding until the spec's specials are
    put at their ids."""
    opts = v.synth or {}
    keep_head = opts.get("keep_head", 0)  # ids of BASE kept as they are (SPM control/byte tokens)
    normal = [(t, ty, scores[i] if scores else 0.0) for i, (t, ty) in enumerate(zip(tokens, types, strict=True))
              if i >= keep_head and ty in (NORMAL, BYTE)]  # fmt: skip
    head = [(tokens[i], types[i], scores[i] if scores else 0.0) for i in range(min(keep_head, len(tokens)))]
    first = opts.get("first_normal", len(head))  # where the normal pieces start in the synthesized list
    out: list[tuple[str, int, float]] = head + [(f"[PAD{i}]", UNUSED, SPM_PAD_SCORE) for i in range(len(head), first)]
    n_normal = opts.get("n_normal", v.size - first)
    seen = {t for t, _, _ in out}
    j = 0
    for t, ty, sc in normal:
        if len(out) >= first + n_normal:
            break
        if t in seen:
            continue
        out.append((t, ty, sc))
        seen.add(t)
    while len(out) < first + n_normal:
        t = f"\u0120synth{j}"  # a made-up word piece (Ġ: a leading space in byte-level BPE)
        j += 1
        if t not in seen:
            out.append((t, NORMAL, -1.0 * j))
            seen.add(t)
    del out[v.size:]
    return [t for t, _, _ in out], [ty for _, ty, _ in out], ([sc for _, _, sc in out] if scores is not None else None)


def identity(v: Vocab, pinned_source: Path) -> dict[str, Any]:
    """What the keys are made from, for the spec's content hash: the source file's size
    and name (the pinned files do not change; the real Gemma 3 270M is checked by sha256)."""
    path = source_path(v.source, pinned_source)
    return {**v.identity(), "file": path.name, "bytes": path.stat().st_size}
