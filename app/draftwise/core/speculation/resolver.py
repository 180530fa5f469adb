"""The speculative decision: which drafter (if any) the engine runs beside the model.

Pure data in, pure data out. The rules are docs/rules.md ("Resolver"), in order:
backend, off, the user's own --spec-type, an explicit draft, then auto (embedded MTP head,
MTP-only sidecar, companion draft, optional ngram). Extra arguments that re-specify the
model or the draft are refused first, whatever the mode.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.capabilities import MTP_ASSISTANTS_11434, EngineCaps, mtp_nextn_runs
from draftwise.core.engines.spec_types import (
    DRAFT_DFLASH,
    DRAFT_DSPARK,
    DRAFT_EAGLE3,
    DRAFT_MTP,
    DRAFT_SIMPLE,
    NGRAM_MOD,
)
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import EngineKind, MtpMode, SpecSource
from draftwise.core.messages import Message, Text, msg
from draftwise.core.speculation import field_settings, pairing
from draftwise.core.speculation.drafter_key import DrafterKey

# The names live in core/kinds.py; these aliases keep the resolver's vocabulary short.
Source = SpecSource
OFF, USER_ARGS, EXPLICIT = Source.OFF, Source.USER_ARGS, Source.EXPLICIT
AUTO_MTP, AUTO_COMPANION, AUTO_NGRAM, NONE = Source.AUTO_MTP, Source.AUTO_COMPANION, Source.AUTO_NGRAM, Source.NONE

LLAMA_CPP = EngineKind.LLAMA_CPP

# Extra arguments that would re-specify what the model and draft fields own (rule 7).
_MODEL_FLAGS = {"-m": "Model", "--model": "Model"}
_DRAFT_FLAGS = {"-md": "Draft model", "--model-draft": "Draft model", "--spec-draft-model": "Draft model"}

# Name hints for companions, strongest first (rule 5). "mtp" outranks the draft-like names.
_DRAFT_WORDS = ("draft", "assistant", "eagle", "dflash")
_QUANT_TAG = re.compile(
    r"[-_.](?:I?Q\d(?:_[0-9A-Z]+)*|BF16|F16|F32|FP16|FP8|MXFP4)$", re.IGNORECASE
)


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


@dataclass(frozen=True)
class SpecDecision:
    spec_type: str | None
    draft: Path | None
    source: SpecSource
    fallback_eligible: bool
    argv: tuple[str, ...]
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
NO_SPECULATION = SpecDecision(None, None, NONE, False, ())


def drafter_key(path: Path, kind: str) -> str:
    """Identity of a drafter: its file's path, size and mtime, and how it is used."""
    return str(DrafterKey.of_file(path, kind))


# ------------------------------------------------------------------ extra arguments
def check_extra_args(extra_args: Sequence[str]) -> None:
    """Rule 7: extra arguments may not re-specify the model or the draft."""
    for token in extra_args:
        name = engine_args.flag_name(token)
        if name in _MODEL_FLAGS:
            raise ResolveError(
                "extra_args",
                msg("Extra engine arguments may not set the model ({flag}); choose the model in the Model field.",
                    flag=token),
            )
        if name in _DRAFT_FLAGS:
            raise ResolveError(
                "extra_args",
                msg("Extra engine arguments may not set the draft model ({flag}); use the Draft model field.",
                    flag=token),
            )


def user_spec_type(extra_args: Sequence[str]) -> str | None:
    """The value of a `--spec-type X` or `--spec-type=X` the user wrote, else None."""
    return engine_args.value_of(extra_args, "--spec-type")


def _split_mode_tensor(extra_args: Sequence[str]) -> bool:
    return engine_args.value_of(extra_args, "-sm", "--split-mode") == "tensor"


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


def _spec_argv(caps: EngineCaps, spec_type: str, draft: Path | None) -> tuple[str, ...]:
    argv = ["--spec-type", spec_type]
    if draft is not None:
        flag = "--spec-draft-model" if caps.has_flag("--spec-draft-model") else "-md"
        argv += [flag, str(draft)]
    return tuple(argv)


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


# ------------------------------------------------------------------ resolve
Reader = Callable[[Path], gguf.ModelInfo]
# Drafts are read keeping their token list: the pairing check compares it with the model's
# without reading the draft's header a second time.
read_draft = functools.partial(gguf.read_model, keep_vocab=True)


def resolve(
    model: gguf.ModelInfo,
    options: SpecOptions,
    caps: EngineCaps,
    *,
    read: Reader = read_draft,
) -> SpecDecision:
    """Decide the speculative setup. Raises ResolveError for a user error."""
    extra = tuple(options.extra_args)
    check_extra_args(extra)
    if options.mtp not in tuple(MtpMode):
        raise ResolveError("mtp", msg("MTP mode must be 'auto' or 'off', not {value}.", value=repr(options.mtp)))

    # 1. Other backends run their own speculation settings; ours would be silently wrong.
    if options.backend != LLAMA_CPP:
        if options.draft is not None:
            raise ResolveError(
                "draft",
                msg("A draft model works only with llama.cpp, not {backend}; clear the Draft model field or "
                    "choose llama.cpp.", backend=options.backend),
            )
        if options.mtp == MtpMode.OFF:
            raise ResolveError(
                "mtp",
                msg("MTP on/off applies only to llama.cpp; {backend} decides speculation itself. Set MTP to auto.",
                    backend=options.backend),
            )
        return SpecDecision(None, None, NONE, False, (),
                            notes=(msg("Speculative decoding is set up only for llama.cpp; {backend} runs without it.",
                                       backend=options.backend),))

    # 2. Off means off; a draft with it is a contradiction worth saying.
    if options.mtp == MtpMode.OFF:
        if options.draft is not None:
            raise ResolveError(
                "draft",
                msg("Speculation is off but a draft model is set; clear the Draft model field or set MTP to auto."),
            )
        return SpecDecision(None, None, OFF, False, (), notes=(msg("Speculation is off, as you chose."),))

    warnings = []
    # 3. The user's own --spec-type wins; we add nothing of ours.
    users = user_spec_type(extra)
    if users is not None:
        if not users:
            raise ResolveError("extra_args", msg("--spec-type needs a value, e.g. --spec-type draft-simple."))
        for t in users.split(","):
            if caps.spec_types and t not in caps.spec_types:
                raise ResolveError(
                    "extra_args",
                    msg("This engine has no speculative type {type}; it knows {known}.",
                        type=repr(t), known=", ".join(caps.spec_types)),
                )
        argv: tuple[str, ...] = ()
        notes = [msg("Your own --spec-type {type} is used; automatic detection was skipped.", type=users)]
        draft_path = None
        users_draft = None
        bans: tuple[int, ...] = ()
        checked = None
        if options.draft is not None:
            # The field is the only place a draft may come from (rule 7), so pass it on; the
            # user's --spec-type says how it drafts, so its own type is not checked.
            checked = _usable(check_draft(model, options.draft, caps, own_type=False, read=read))
            users_draft, verdict = checked.info, checked.pairing
            draft_path = options.draft
            argv = _spec_argv(caps, users, draft_path)[2:]
            notes.append(msg("The draft model {name} is passed to the engine.", name=draft_path.name))
            bans = verdict.bans
            notes += [n for n in (verdict.ban_note(),) if n is not None]
        if _split_mode_tensor(extra):
            warnings.append(_SPLIT_WARNING)
        return SpecDecision(users, draft_path, USER_ARGS, False, argv, tuple(notes), tuple(warnings),
                            draft_info=users_draft, bans=bans, draft_check=checked)

    # 4. An explicit draft: checked, typed by its own tensors, never dropped by fallback.
    if options.draft is not None:
        checked = _usable(check_draft(model, options.draft, caps, read=read))
        spec_type, verdict = checked.spec_type or DRAFT_SIMPLE, checked.pairing
        decision = SpecDecision(
            spec_type, options.draft, EXPLICIT, False, _spec_argv(caps, spec_type, options.draft),
            notes=(msg("Using your draft model {name} ({kind}).", name=options.draft.name,
                       kind=type_words(spec_type)),
                   *(n for n in (verdict.ban_note(),) if n is not None)),
            drafter_key=drafter_key(options.draft, spec_type), draft_info=checked.info, bans=verdict.bans,
            draft_check=checked,
        )
        return _with_split_warning(decision, extra)

    # 5. Auto.
    decision = _with_split_warning(_auto(model, options, caps, read), extra)
    return replace(decision, alternatives=tuple(_with_split_warning(a, extra) for a in decision.alternatives))


_SPLIT_WARNING = msg(
    "--split-mode tensor together with speculative decoding crashes some engines; "
    "if the engine fails to start, remove one of them."
)


def _with_split_warning(decision: SpecDecision, extra: Sequence[str]) -> SpecDecision:
    if decision.argv and _split_mode_tensor(extra):
        return replace(decision, warnings=(*decision.warnings, _SPLIT_WARNING))
    return decision


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


def _usable(verdict: DraftVerdict) -> DraftVerdict:
    if not verdict.ok:
        raise verdict.error()
    return verdict


def _unsuitable_explicit(model: gguf.ModelInfo, name: str, info: gguf.ModelInfo, spec_type: str,
                         caps: EngineCaps) -> Message | None:
    """Why this engine cannot run the chosen draft `name` (its header `info`) for `model`."""
    if not caps.has_spec_type(spec_type):
        return msg("This engine cannot run a {kind} (--spec-type {type}); update the engine.",
                   kind=type_words(spec_type), type=spec_type)
    if info.sidecar_kind == ASSISTANT:
        unusable = _assistant_unsuitable(model, info)
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


# ------------------------------------------------------------------ auto
@dataclass(frozen=True)
class _Candidate:
    path: Path
    info: gguf.ModelInfo
    spec_type: str
    rank: tuple
    verdict: pairing.Verdict = pairing.COMPATIBLE


def _auto(model: gguf.ModelInfo, options: SpecOptions, caps: EngineCaps, read: Reader) -> SpecDecision:
    notes: list[Message] = []
    skipped: list[str] = []
    left_out: list[str] = []
    refused: list[tuple[str, Message]] = []
    arch = model.architecture
    nextn = model.nextn_predict_layers or 0

    if model.has_mtp_head:
        key = drafter_key(model.path, DRAFT_MTP)
        if not caps.runs_mtp(arch):
            notes.append(msg(
                "The model has an MTP head, but this engine does not run MTP for {arch} models; "
                "looking for a draft model instead.", arch=arch,
            ))
        elif not mtp_nextn_runs(arch, nextn):
            notes.append(msg(
                "The model's MTP head has {n} layers, but this engine's {arch} MTP runs only one (it would stop "
                "at the first draft); looking for a draft model instead.", n=nextn, arch=arch,
            ))
        elif key in options.broken:
            left_out.append(key)
            notes.append(msg("The model's MTP head made this engine fail before; it is left out."))
        else:
            # The companions are still looked for: the sweep measures them beside the head. What
            # the search says of them (skipped, refused) is not this decision's to show.
            companions = _companions(model, options, caps, read, [], [], [], [])
            field, field_note = field_settings.mtp_argv(arch, options.extra_args)
            return SpecDecision(
                DRAFT_MTP, None, AUTO_MTP, True, (*_spec_argv(caps, DRAFT_MTP, None), *field),
                notes=(msg("MTP head found in the model: speculation is on."), *((field_note,) if field_note else ())),
                drafter_key=key,
                alternatives=tuple(_companion_decision(c, caps) for c in sorted(companions, key=lambda c: c.rank)),
            )
    elif nextn > 0:
        notes.append(msg("The model declares an MTP head but this file does not contain it."))

    candidates = sorted(_companions(model, options, caps, read, notes, skipped, left_out, refused),
                        key=lambda c: c.rank)
    if candidates:
        best, others = candidates[0], candidates[1:]
        if others:
            notes.append(msg("Also suitable, not chosen: {names}.", names=", ".join(c.path.name for c in others)))
        own = _companion_decision(best, caps)
        return replace(
            own, notes=(*own.notes, *notes), skipped=tuple(skipped), left_out=tuple(left_out),
            refused=tuple(refused), alternatives=tuple(_companion_decision(c, caps) for c in others),
        )

    if options.ngram_when_no_drafter and caps.has_spec_type(NGRAM_MOD):
        # Keyed by the model: n-gram speculation has no file of its own to blame.
        key = drafter_key(model.path, NGRAM_MOD)
        if key in options.broken:
            left_out.append(key)
            notes.append(msg("N-gram speculation made this engine fail before with this model; it is left out."))
        else:
            return SpecDecision(
                NGRAM_MOD, None, AUTO_NGRAM, True, _spec_argv(caps, NGRAM_MOD, None),
                notes=(*notes, msg("No drafter found: n-gram speculation is on (no extra memory).")),
                skipped=tuple(skipped), drafter_key=key, left_out=tuple(left_out), refused=tuple(refused),
            )
    return SpecDecision(
        None, None, NONE, False, (),
        notes=(*notes, msg("No drafter found: starting without speculation.")), skipped=tuple(skipped),
        left_out=tuple(left_out), refused=tuple(refused),
    )


def _companion_decision(c: _Candidate, caps: EngineCaps) -> SpecDecision:
    """The decision running the companion `c`: its type, file flags, bans and why."""
    if c.info.sidecar_kind == ASSISTANT:
        why = msg("MTP assistant found beside the model: {name} (it reads the model's own KV cache). "
                  "Speculation is on.", name=c.path.name)
    elif c.spec_type == DRAFT_MTP:
        why = msg("MTP head found beside the model in {name}: speculation is on.", name=c.path.name)
    else:
        why = msg("Draft model found beside the model: {name} ({kind}). Speculation is on.",
                  name=c.path.name, kind=type_words(c.spec_type))
    ban_note = c.verdict.ban_note()
    return SpecDecision(
        c.spec_type, c.path, AUTO_COMPANION, True, _spec_argv(caps, c.spec_type, c.path),
        notes=(why, *((ban_note,) if ban_note else ())), drafter_key=drafter_key(c.path, c.spec_type),
        draft_info=c.info, bans=c.verdict.bans,
    )


def _companions(
    model: gguf.ModelInfo,
    options: SpecOptions,
    caps: EngineCaps,
    read: Reader,
    notes: list[Message],
    skipped: list[str],
    left_out: list[str],
    refused: list[tuple[str, Message]],
) -> list[_Candidate]:
    folder = model.path.parent
    own = {f.resolve() for f in model.files}
    own_stem = gguf.shard_stem(model.path)
    prefix = family_prefix(model.path).lower()
    family = family_name(model.path)
    half = model.size_bytes / 2
    found: list[_Candidate] = []
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
        if spec_type == DRAFT_SIMPLE and info.size_bytes >= half:
            continue  # not a drafter: as big as the model, e.g. another quant of it
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
        found.append(_Candidate(path, info, spec_type, rank, verdict))
    return found


ASSISTANT = "assistant"  # gguf.ModelInfo.sidecar_kind of an MTP drafter model of its own architecture


def _one_nextn_only(info: gguf.ModelInfo) -> Message:
    return msg("{name} has {n} MTP layers, but this engine's {arch} MTP runs only one (it would stop at the "
               "first draft).", name=info.path.name, n=info.nextn_predict_layers or 0, arch=info.architecture)


def _assistant_unsuitable(model: gguf.ModelInfo, draft: gguf.ModelInfo) -> Message | None:
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


def _unsuitable(model: gguf.ModelInfo, draft: gguf.ModelInfo, spec_type: str, caps: EngineCaps) -> Message | None:
    if spec_type == DRAFT_MTP and draft.sidecar_kind == ASSISTANT:
        return _assistant_unsuitable(model, draft) or (
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
