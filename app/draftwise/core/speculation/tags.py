"""What the library shows about speculation before anything is resolved: which files are
drafters (a "draft" tag), and which models have one beside them (a "+ drafter" badge).

A quick look from headers the library scan already read: file roles by tensors and names,
companions by folder, name and size, and the tokenizer model. The launch still runs the full
resolver and the engine's pairing rule, which may refuse a pair this badge offered.
"""

from __future__ import annotations

from collections.abc import Iterable

from draftwise.core.gguf import reader as gguf
from draftwise.core.speculation.companions import family_name, family_prefix

DRAFT_WORDS = ("draft", "assistant", "eagle", "dflash", "mtp")


def is_drafter(info: gguf.ModelInfo) -> bool:
    """A file that only helps a target model (MTP head, EAGLE-3, DFlash) or is named a draft."""
    if info.sidecar_kind is not None or info.mtp_layout == "mtp-only":
        return True
    stem = gguf.shard_stem(info.path).lower()
    return any(w in stem for w in DRAFT_WORDS) and not info.mtp_head_present


def has_companion(model: gguf.ModelInfo, others: Iterable[gguf.ModelInfo]) -> bool:
    """Whether a file beside `model` looks like its drafter (see module doc)."""
    if is_drafter(model):
        return False
    prefix = family_prefix(model.path).lower()
    family = family_name(model.path)
    for other in others:
        if other.path.parent != model.path.parent or other.path == model.path:
            continue
        if other.tokenizer.model != model.tokenizer.model:
            continue
        stem = gguf.shard_stem(other.path).lower()
        named = is_drafter(other) or (len(prefix) >= 3 and stem.startswith(prefix)) or (
            len(family) >= 3 and family_name(other.path) == family
        )
        sidecar = other.sidecar_kind is not None or other.mtp_layout == "mtp-only"
        if named and (sidecar or other.size_bytes < model.size_bytes / 2):
            return True
    return False
