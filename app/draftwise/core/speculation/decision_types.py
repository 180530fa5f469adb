"""The resolver's vocabulary: what it is asked (`SpecOptions`), what it answers
(`SpecDecision`), the draft check's verdict (`DraftVerdict`) and its error (`ResolveError`).

Data only, with the words for a speculative type and a drafter's key: the resolver
(resolver.py), the draft check (draft_check.py) and the companion search (companions.py) all
speak it, and the planner, the launch and the window read the decision. It sits below them so
none imports another to name a decision.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.spec_types import (
    DRAFT_DFLASH,
    DRAFT_DSPARK,
    DRAFT_EAGLE3,
    DRAFT_MTP,
    DRAFT_N_MAX,
    DRAFT_P_MIN,
    DRAFT_SIMPLE,
    MODEL_DRAFTERS,
    NGRAM_MOD,
    split_types,
)
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import EngineKind, MtpMode, SpecSource
from draftwise.core.messages import Message, Text, msg
from draftwise.core.speculation import pairing
from draftwise.core.speculation.drafter_key import DrafterKey

# The names live in core/kinds.py; these aliases keep the resolver's vocabulary short.
Source = SpecSource
OFF, USER_ARGS, EXPLICIT = Source.OFF, Source.USER_ARGS, Source.EXPLICIT
AUTO_MTP, AUTO_COMPANION, AUTO_NGRAM, NONE = Source.AUTO_MTP, Source.AUTO_COMPANION, Source.AUTO_NGRAM, Source.NONE

LLAMA_CPP = EngineKind.LLAMA_CPP


class ResolveError(FieldError):
    """A user error in the speculative settings. `draft`: the draft check's verdict, when the
    error is the draft's (the window shows it under the Draft model field)."""

    def __init__(self, field_name: str, message: Text, draft: DraftVerdict | None = None) -> None:
        super().__init__(field_name, message)
        self.draft = draft


class DraftState(StrEnum):
    """What the draft check found in the Draft model field."""

    MISSING = "missing"
    FOLDER = "folder"
    NOT_GGUF = "not-gguf"
    SAME_FILE = "same-file"
    VOCAB = "vocab"  # another vocabulary (core/speculation/pairing.py)
    UNSUITABLE = "unsuitable"  # this engine cannot run it for this model (type, architecture, MTP layers)
    OK = "ok"


@dataclass(frozen=True)
class DraftVerdict:
    """The draft check, one for the window and the command line (`check_draft`): a draft file
    judged for a model and an engine. The resolver raises its reason when it is not ok; the
    window shows the same verdict under the Draft model field."""

    path: Path
    state: DraftState
    reason: Message | None = None  # why it cannot draft (None when ok)
    spec_type: str | None = None  # the speculative type its own metadata and tensors call for
    # The vocabulary verdict: the ids banned on the model while it drafts.
    pairing: pairing.Verdict = pairing.COMPATIBLE
    # Its header as read, so nothing reads it again (the planner sizes it from this).
    info: gguf.ModelInfo | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.state == DraftState.OK

    def error(self) -> ResolveError:
        """The resolver's error for a verdict that is not ok."""
        assert self.reason is not None, "an ok draft has no error"
        return ResolveError("draft", self.reason, draft=self)


@dataclass(frozen=True)
class SpecOptions:
    """What the user asked for."""

    mtp: MtpMode = MtpMode.AUTO
    draft: Path | None = None
    backend: EngineKind = LLAMA_CPP
    extra_args: tuple[str, ...] = ()
    ngram_when_no_drafter: bool = False
    # Drafters the launcher saw crash this engine (keys from `drafter_key`): auto skips them.
    broken: Collection[str] = frozenset()


# How the engine is given a draft file (an older build knows only `-md`: the resolver asks its caps).
DRAFT_FLAG = "--spec-draft-model"


@dataclass(frozen=True)
class SpecDecision:
    """Which speculation runs, as data: its types, its draft file and the settings it sets
    (`lengths`, `p_min`). `options` names them as the engine's options, rendered to argv once
    (`argv`, engine_args.OwnOptions); nothing reads them back from argv."""

    spec_type: str | None
    draft: Path | None
    source: SpecSource
    fallback_eligible: bool
    notes: tuple[Message, ...] = ()
    warnings: tuple[Message, ...] = ()
    # The drafter's identity for the broken-drafter record (None when nothing was chosen).
    drafter_key: str | None = None
    skipped: tuple[str, ...] = field(default=())
    # Drafters auto left out because they made this engine fail before (their keys): the
    # window offers to try them again.
    left_out: tuple[str, ...] = ()
    # The draft's header as the resolver read it, so the planner need not read it again.
    draft_info: gguf.ModelInfo | None = field(default=None, compare=False, repr=False)
    # Ids only the model has that the draft lacks and no reply needs: banned on the model
    # while this drafter runs (core/launch/llamacpp.py passes `-l ID-inf` for each).
    bans: tuple[int, ...] = ()
    # Companions beside the model that auto could not use, each with why (the card names
    # them instead of "no draft model found").
    refused: tuple[tuple[str, Message], ...] = ()
    # The draft check of the Draft model field (None when it is empty): the window shows it.
    draft_check: DraftVerdict | None = field(default=None, compare=False, repr=False)
    # Auto only: the other drafters the files allow, each a whole decision that passed the
    # checks this one passed (for an embedded MTP head, the suitable companions; else the
    # companions ranked below), best-ranked first. The sweep measures each; a recorded sweep
    # whose best names one of them runs it (core/launch/prepare.py).
    alternatives: tuple[SpecDecision, ...] = field(default=(), compare=False, repr=False)
    # The draft lengths it sets, by the engine's length option (spec_types.LENGTH_FLAGS: the
    # model drafters' `--spec-draft-n-max`, each n-gram type's own), and the model drafter's
    # p-min (None: the engine's 0). Absent: the engine's default, or the user's own setting in
    # the extra arguments (the plan reads those: planning/extra_args.py). From the field
    # (field_settings.py), a measurement (core/launch/prepare.py) or a measured setup.
    lengths: tuple[tuple[str, int], ...] = ()
    p_min: float | None = None
    draft_flag: str = DRAFT_FLAG  # the engine's spelling of the draft file's option

    @property
    def types(self) -> tuple[str, ...]:
        """`spec_type`'s types as words ("ngram-mod,draft-simple" -> both)."""
        return split_types(self.spec_type)

    @property
    def model_drafter(self) -> str | None:
        """Its model drafter's type (spec_types.MODEL_DRAFTERS), None when it runs none."""
        return next((t for t in self.types if t in MODEL_DRAFTERS), None)

    def length(self, flag: str) -> int | None:
        """The draft length it sets with the length option `flag` (None: it sets none)."""
        return dict(self.lengths).get(flag)

    def options(self) -> engine_args.OwnOptions:
        """Its options, each once: `--spec-type` (not for the user's own, which their extra
        arguments pass), the draft file, the model drafter's length and p-min, the n-gram
        types' lengths."""
        o = engine_args.OwnOptions()
        if self.spec_type and self.source != USER_ARGS:
            o.set("--spec-type", self.spec_type)
        if self.draft is not None:
            o.set(DRAFT_FLAG, str(self.draft), spelling=self.draft_flag)
        lengths = dict(self.lengths)
        if (n := lengths.pop(DRAFT_N_MAX, None)) is not None:
            o.set(DRAFT_N_MAX, str(n))
        if self.p_min:
            o.set(DRAFT_P_MIN, f"{self.p_min:g}")
        for flag, n in lengths.items():
            o.set(flag, str(n))
        return o

    @property
    def argv(self) -> tuple[str, ...]:
        """Its options as the engine reads them (empty: nothing speculative is passed)."""
        return self.options().argv()

    def drafter_for(self, key: str | None) -> SpecDecision | None:
        """The decision running the drafter `key` (None: this one's own): this decision or one
        of its alternatives; None when no suitable drafter has that key (any more)."""
        if key is None or key == self.drafter_key:
            return self
        return next((a for a in self.alternatives if a.drafter_key == key), None)

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.spec_type,
            "draft": str(self.draft) if self.draft else None,
            "source": self.source,
            "fallback_eligible": self.fallback_eligible,
            "notes": [str(n) for n in self.notes],
            "warnings": [str(w) for w in self.warnings],
            "argv": list(self.argv),
            "bans": list(self.bans),
        }


# The decision without any speculation (the fallback relaunch, a plan that drops the drafter).
NO_SPECULATION = SpecDecision(None, None, NONE, False)


def drafter_key(path: Path, kind: str) -> str:
    """Identity of a drafter: its file's path, size and mtime, and how it is used."""
    return str(DrafterKey.of_file(path, kind))


def type_words(spec_type: str) -> Text:
    """A speculative type in words ("draft model" for draft-simple), for notes and the card."""
    return {
        DRAFT_MTP: msg("MTP head"),
        DRAFT_SIMPLE: msg("draft model"),
        DRAFT_EAGLE3: msg("EAGLE-3 drafter"),
        DRAFT_DFLASH: msg("DFlash drafter"),
        DRAFT_DSPARK: msg("DSpark drafter"),
        NGRAM_MOD: msg("n-gram lookup"),
    }.get(spec_type, spec_type)
