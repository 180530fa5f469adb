"""The draft check: whether one draft file can draft for a model on this engine, and as what.

One check for the window and the command line (`check_draft` -> `DraftVerdict`): the resolver
raises its reason for an explicit draft, and the window shows the same verdict under the Draft
model field. The facts it rests on are a draft's own: the speculative type its metadata and
tensors call for (`draft_type`), its vocabulary against the model's (`vocabulary_verdict`,
core/speculation/pairing.py), and whether an MTP head or assistant fits this model. The
companion search (companions.py) asks the same facts of every file beside the model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path

from draftwise.core.engines.capabilities import MTP_ASSISTANTS_11434, EngineCaps, mtp_nextn_runs
from draftwise.core.engines.spec_types import (
    DRAFT_DFLASH,
    DRAFT_DSPARK,
    DRAFT_EAGLE3,
    DRAFT_MTP,
    DRAFT_SIMPLE,
)
from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Message, msg
from draftwise.core.speculation import pairing
from draftwise.core.speculation.decision_types import DraftState, DraftVerdict, type_words

Reader = Callable[[Path], gguf.ModelInfo]
# Drafts are read keeping their token list: the pairing check compares it with the model's
# without reading the draft's header a second time.
read_draft = functools.partial(gguf.read_model, keep_vocab=True)


ASSISTANT = "assistant"  # gguf.ModelInfo.sidecar_kind of an MTP drafter model of its own architecture


# ------------------------------------------------------------------ drafter facts
def draft_type(draft: gguf.ModelInfo) -> str:
    """The speculative type a draft file calls for, from its own metadata and tensors."""
    kind = draft.sidecar_kind
    if kind == "dspark":
        return DRAFT_DSPARK
    if kind == "dflash":
        return DRAFT_DFLASH
    if kind == "eagle3":
        return DRAFT_EAGLE3
    if draft.mtp_layout in ("mtp-only", "full"):
        return DRAFT_MTP
    return DRAFT_SIMPLE


def vocabulary_verdict(target: gguf.ModelInfo, draft: gguf.ModelInfo) -> pairing.Verdict:
    """Whether `draft` may draft for `target` by vocabulary (core/speculation/pairing.py).
    A sidecar without a tokenizer uses the target's, so it always may."""
    if _vocabless_sidecar(draft):
        return pairing.COMPATIBLE
    return pairing.check(target, draft)


def check_draft(model: gguf.ModelInfo, draft: Path, caps: EngineCaps, *, own_type: bool = True,
                read: Reader = read_draft) -> DraftVerdict:
    """The draft check: whether the file `draft` can draft for `model` on this engine, and as
    what. Reads its header once (through the reader's cache); never raises.

    In order: the file is there and is a file, not the model itself, a readable GGUF, of the
    model's vocabulary; then (`own_type`, unless the user's --spec-type says how it drafts)
    this engine runs its type, and an MTP head or assistant fits this model."""
    def bad(state: DraftState, reason: Message, info: gguf.ModelInfo | None = None) -> DraftVerdict:
        return DraftVerdict(draft, state, reason, info=info)

    if not draft.exists():
        return bad(DraftState.MISSING, msg("The draft model {path} does not exist; choose the file again.",
                                           path=str(draft)))
    if not draft.is_file():
        return bad(DraftState.FOLDER, msg("The draft model {path} is a folder; choose a .gguf file inside it.",
                                          path=str(draft)))
    if _same_file(draft, model.files):
        return bad(DraftState.SAME_FILE, msg("{name} is the model itself; choose a smaller draft model.",
                                             name=draft.name))
    try:
        info = read(draft)
    except gguf.GGUFError as exc:
        return bad(DraftState.NOT_GGUF, msg("The draft model cannot be used: {error}", error=exc.message))
    verdict = vocabulary_verdict(model, info)
    if not verdict.ok:
        return bad(DraftState.VOCAB, msg(
            "{name} cannot draft for this model: {reason}. A draft must come from the same model family.",
            name=draft.name, reason=verdict.reason), info)
    spec_type = draft_type(info)
    unsuitable = _unsuitable_explicit(model, draft.name, info, spec_type, caps) if own_type else None
    if unsuitable is not None:
        return bad(DraftState.UNSUITABLE, unsuitable, info)
    return DraftVerdict(draft, DraftState.OK, None, spec_type, verdict, info)


def _unsuitable_explicit(model: gguf.ModelInfo, name: str, info: gguf.ModelInfo, spec_type: str,
                         caps: EngineCaps) -> Message | None:
    """Why this engine cannot run the chosen draft `name` (its header `info`) for `model`."""
    if not caps.has_spec_type(spec_type):
        return msg("This engine cannot run a {kind} (--spec-type {type}); update the engine.",
                   kind=type_words(spec_type), type=spec_type)
    if info.sidecar_kind == ASSISTANT:
        unusable = assistant_unsuitable(model, info)
        if unusable is not None:
            return msg("{name} cannot draft for this model: {reason}.", name=name, reason=unusable)
    elif spec_type == DRAFT_MTP and info.architecture != model.architecture:
        return msg("{name} is the MTP head of a {draft_arch} model; it drafts only for that model, not for "
                   "this {arch} model.", name=name, draft_arch=info.architecture, arch=model.architecture)
    elif spec_type == DRAFT_MTP and not mtp_nextn_runs(info.architecture, info.nextn_predict_layers):
        return _one_nextn_only(info)
    if spec_type == DRAFT_MTP and info.sidecar_kind != ASSISTANT and not caps.runs_mtp(info.architecture):
        return msg("{name} is an MTP head for {draft_arch}, which this engine does not run.",
                   name=name, draft_arch=info.architecture)
    return None


def _vocabless_sidecar(info: gguf.ModelInfo) -> bool:
    """Sidecars (MTP heads, DFlash, EAGLE-3) may carry no tokenizer: they use the target's."""
    return info.sidecar_kind is not None and info.tokenizer.vocab_size is None


def _same_file(path: Path, files: Sequence[Path]) -> bool:
    try:
        target = path.resolve()
        return any(target == f.resolve() for f in files)
    except OSError:
        return False


def _one_nextn_only(info: gguf.ModelInfo) -> Message:
    return msg("{name} has {n} MTP layers, but this engine's {arch} MTP runs only one (it would stop at the "
               "first draft).", name=info.path.name, n=info.nextn_predict_layers or 0, arch=info.architecture)


def assistant_unsuitable(model: gguf.ModelInfo, draft: gguf.ModelInfo) -> Message | None:
    """What keeps an MTP assistant (Gemma 4's) from drafting for `model`, or None: it reads the
    model's token embeddings, its hidden state and the KV cache of its last windowed and
    global layers (llama-model.cpp `share`), so it fits one architecture and width."""
    for_arch = MTP_ASSISTANTS_11434.get(draft.architecture or "")
    if for_arch is None:
        return msg("this engine runs no MTP assistant of architecture {draft_arch}", draft_arch=draft.architecture)
    if model.architecture != for_arch:
        return msg("it is the MTP assistant of {target_arch} models, not {arch}", target_arch=for_arch,
                   arch=model.architecture)
    if not draft.mtp_head_present:
        return msg("it lacks the nextn.pre_projection tensor the engine loads")
    if draft.embedding_length_out != model.embedding_length:
        return msg("it was made for a model {width} wide, and this one is {model_width} wide",
                   width=draft.embedding_length_out or 0, model_width=model.embedding_length or 0)
    pattern = model.sliding_window_pattern
    if isinstance(pattern, list) and len(pattern) >= 2 and (bool(pattern[-1]) or not bool(pattern[-2])):
        return msg("the model's last two layers are not the windowed and global pair whose KV cache it reads")
    return None
