"""The companion search: which files beside the model may draft for it, and in which order.

Rule 5 of docs/rules.md ("Resolver", auto): a file in the model's folder is looked at when its
name says it drafts ("mtp", "draft", "assistant", "eagle", "dflash") or names the model's
family (its prefix, its family name before the parameter count, or a shared first word);
each is then read once and kept only if it is a drafter (a sidecar, or a model under half the
target's size), this engine runs it for this model, its vocabulary pairs (pairing.py), and it
did not make this engine fail before. The survivors are ranked, strongest name first; the
resolver turns the best into its decision and the others into its alternatives. The family
naming (`family_prefix`, `family_name`) is also the library's quick drafter badge (tags.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.engines.capabilities import EngineCaps, mtp_nextn_runs
from draftwise.core.engines.spec_types import DRAFT_MTP, DRAFT_SIMPLE
from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Message, msg
from draftwise.core.speculation import pairing
from draftwise.core.speculation.decision_types import SpecOptions, drafter_key, type_words
from draftwise.core.speculation.draft_check import (
    ASSISTANT,
    Reader,
    assistant_unsuitable,
    draft_type,
    vocabulary_verdict,
)

# Name hints for companions, strongest first (rule 5). "mtp" outranks the draft-like names.
_DRAFT_WORDS = ("draft", "assistant", "eagle", "dflash")
_QUANT_TAG = re.compile(
    r"[-_.](?:I?Q\d(?:_[0-9A-Z]+)*|BF16|F16|F32|FP16|FP8|MXFP4)$", re.IGNORECASE
)


def family_prefix(path: Path) -> str:
    """File stem without shard tag and quant tag: "Qwen3-8B" for Qwen3-8B-Q4_K_M-00001-of-00002."""
    stem = gguf.shard_stem(path)
    while True:
        shorter = _QUANT_TAG.sub("", stem)
        if shorter == stem:
            return stem
        stem = shorter


# "-1.5B", "_8b", "-270m": the parameter count in a file name; what precedes it is the family.
_SIZE_TAG = re.compile(r"[-_](?:\d+x)?\d+(?:\.\d+)?[bm](?=[-_.]|$)", re.IGNORECASE)


def family_name(path: Path) -> str:
    """The model family a file name states: "qwen2.5" for qwen2.5-0.5b-instruct-q8_0 and for
    Qwen2.5-7B-Instruct-Q4_K_M; "" when the name has no parameter count. Publishers name a
    family's small model this way (Qwen's own 0.5B beside its 7B), not with "draft"."""
    stem = family_prefix(path)
    m = _SIZE_TAG.search(stem)
    return stem[: m.start()].lower() if m else ""


_WORD = re.compile(r"[a-z]{3,}")


def family_words(path: Path) -> tuple[str, ...]:
    """The first two words of a file name ("meta", "llama" for Meta-Llama-3.1-8B-Instruct):
    publishers name one family's models with other versions (Llama 3.1 8B and Llama 3.2 1B,
    which share one tokenizer), so a shared family word makes a file worth a header read; the
    vocabulary rule then decides."""
    return tuple(_WORD.findall(family_prefix(path).lower())[:2])


def same_family_word(a: Path, b: Path) -> bool:
    """The first word of either name is one of the other's first two words."""
    wa, wb = family_words(a), family_words(b)
    return bool(wa and wb) and (wa[0] in wb or wb[0] in wa)


@dataclass(frozen=True)
class Candidate:
    """A file beside the model that may draft for it: its header, type, rank and vocabulary verdict."""

    path: Path
    info: gguf.ModelInfo
    spec_type: str
    rank: tuple
    verdict: pairing.Verdict = pairing.COMPATIBLE


def find_companions(
    model: gguf.ModelInfo,
    options: SpecOptions,
    caps: EngineCaps,
    read: Reader,
    notes: list[Message],
    skipped: list[str],
    left_out: list[str],
    refused: list[tuple[str, Message]],
) -> list[Candidate]:
    """The suitable companions of `model` in its folder, unsorted (`Candidate.rank` orders
    them); what the search skipped, left out or refused goes into the lists passed in."""
    folder = model.path.parent
    own = {f.resolve() for f in model.files}
    own_stem = gguf.shard_stem(model.path)
    prefix = family_prefix(model.path).lower()
    family = family_name(model.path)
    half = model.size_bytes / 2
    found: list[Candidate] = []
    seen_sets: set[str] = set()
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        notes.append(msg("Could not look for draft models in {folder}: {error}.", folder=str(folder),
                         error=exc.strerror or str(exc)))
        return []
    for path in entries:
        if path.suffix.lower() != ".gguf" or not path.is_file() or path.resolve() in own:
            continue
        stem = gguf.shard_stem(path)
        if stem == own_stem or stem in seen_sets:
            continue  # another shard of the model, or of a candidate already looked at
        seen_sets.add(stem)
        lower = stem.lower()
        if "mmproj" in lower:
            continue
        is_mtp_name = "mtp" in lower
        is_draft_name = any(w in lower for w in _DRAFT_WORDS)
        has_prefix = (len(prefix) >= 3 and lower.startswith(prefix)) or (
            len(family) >= 3 and family_name(path) == family
        ) or same_family_word(model.path, path)
        if not (is_mtp_name or is_draft_name or has_prefix):
            continue
        try:
            info = read(path)
        except gguf.GGUFError as exc:
            skipped.append(f"{path.name}: {exc}")
            notes.append(msg("Skipped {name}: {reason}.", name=path.name,
                             reason=msg("it is not a readable GGUF file")))
            continue
        spec_type = draft_type(info)
        if spec_type == DRAFT_SIMPLE and (info.size_bytes >= half or same_weights(model, info)):
            continue  # not a drafter: as big as the model, or another quant of it
        # Sidecars (MTP head, EAGLE-3, DFlash) are drafters by their tensors, whatever their
        # size: a tiny head file can hold a full embedding table.
        reason = _unsuitable(model, info, spec_type, caps)
        verdict = pairing.COMPATIBLE
        if reason is None:
            # Last: the only check that may read the token lists.
            verdict = vocabulary_verdict(model, info)
            reason = verdict.reason
        if reason is None and drafter_key(path, spec_type) in options.broken:
            left_out.append(drafter_key(path, spec_type))
            reason = msg("it made this engine fail before")
        elif reason is not None:
            refused.append((path.name, reason))
        if reason is not None:
            skipped.append(f"{path.name}: {reason}")
            notes.append(msg("Skipped {name}: {reason}.", name=path.name, reason=reason))
            continue
        rank = (not is_mtp_name, not is_draft_name, not has_prefix, info.size_bytes, path.name)
        found.append(Candidate(path, info, spec_type, rank, verdict))
    return found


def same_weights(model: gguf.ModelInfo, other: gguf.ModelInfo) -> bool:
    """`other` is the model itself at another quantization (a Q2_K beside its Q8_0, both in
    one hub repository): the same architecture, blocks, width and parameter count. Under half
    the size it would pass the size rule, but it is no drafter: each drafted token still
    reads a third or more of the target's bytes, and keeping it means downloading and holding
    the model twice."""
    return (other.architecture == model.architecture and other.parameters == model.parameters
            and other.block_count == model.block_count
            and other.embedding_length == model.embedding_length)


def _unsuitable(model: gguf.ModelInfo, draft: gguf.ModelInfo, spec_type: str, caps: EngineCaps) -> Message | None:
    if spec_type == DRAFT_MTP and draft.sidecar_kind == ASSISTANT:
        return assistant_unsuitable(model, draft) or (
            None if caps.has_spec_type(DRAFT_MTP) else msg("this engine cannot run a {kind}", kind=type_words(DRAFT_MTP)))
    if spec_type == DRAFT_MTP:
        if draft.mtp_layout != "mtp-only":
            return msg("it carries its own MTP head, so it is a model, not a drafter")
        if not (model.nextn_predict_layers and not model.has_mtp_head):
            return msg("it is an MTP head for a model without its own head, and this model does not need it")
        if draft.architecture != model.architecture:
            return msg("it is an MTP head for {draft_arch}, not {arch}", draft_arch=draft.architecture,
                       arch=model.architecture)
        if not caps.runs_mtp(model.architecture):
            return msg("this engine does not run MTP for {arch}", arch=model.architecture)
        if not mtp_nextn_runs(draft.architecture, draft.nextn_predict_layers):
            return msg("it has {n} MTP layers, and this engine's {arch} MTP runs only one",
                       n=draft.nextn_predict_layers or 0, arch=draft.architecture)
    # A plain draft of another architecture is fine: the engine's rule compares vocabularies
    # only (a Qwen3 dense draft for a Qwen3 MoE model).
    if not caps.has_spec_type(spec_type):
        return msg("this engine cannot run a {kind}", kind=type_words(spec_type))
    return None
