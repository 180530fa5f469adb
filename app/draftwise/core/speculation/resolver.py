"""The speculative decision: which drafter (if any) the engine runs beside the model.

Pure data in, pure data out. The rules are docs/rules.md ("Resolver"), in order:
backend, off, the user's own --spec-type, an explicit draft, then auto (embedded MTP head,
MTP-only sidecar, companion draft, optional ngram). Extra arguments that re-specify the
model or the draft are refused first, whatever the mode.

This module decides the order and builds the decision. The parts it asks live beside it:
its data, what it is asked and what it answers (decision_types.py), the check of one draft
file (draft_check.py), and the search and ranking of the companions beside the model
(companions.py). `SpecDecision`, `SpecOptions`, `ResolveError`, the `Source` aliases,
`NO_SPECULATION`, `LLAMA_CPP` and `drafter_key` are used in very many places and stay
importable from here (re-exported, `__all__`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.capabilities import EngineCaps, mtp_nextn_runs
from draftwise.core.engines.spec_types import DRAFT_MTP, DRAFT_N_MAX, DRAFT_SIMPLE, NGRAM_MOD
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import MtpMode
from draftwise.core.messages import Message, msg
from draftwise.core.speculation import field_settings
from draftwise.core.speculation.companions import Candidate, find_companions
from draftwise.core.speculation.decision_types import (
    AUTO_COMPANION,
    AUTO_MTP,
    AUTO_NGRAM,
    DRAFT_FLAG,
    EXPLICIT,
    LLAMA_CPP,
    NO_SPECULATION,
    NONE,
    OFF,
    USER_ARGS,
    DraftVerdict,
    ResolveError,
    Source,
    SpecDecision,
    SpecOptions,
    drafter_key,
    type_words,
)
from draftwise.core.speculation.draft_check import ASSISTANT, Reader, check_draft, read_draft

__all__ = [
    "AUTO_COMPANION",
    "AUTO_MTP",
    "AUTO_NGRAM",
    "EXPLICIT",
    "LLAMA_CPP",
    "NONE",
    "NO_SPECULATION",
    "OFF",
    "USER_ARGS",
    "ResolveError",
    "Source",
    "SpecDecision",
    "SpecOptions",
    "check_extra_args",
    "drafter_key",
    "resolve",
    "user_spec_type",
]

# Extra arguments that would re-specify what the model and draft fields own (rule 7).
_MODEL_FLAGS = {"-m": "Model", "--model": "Model"}
_DRAFT_FLAGS = {"-md": "Draft model", "--model-draft": "Draft model", "--spec-draft-model": "Draft model"}


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


def _draft_flag(caps: EngineCaps) -> str:
    """The engine's spelling of the draft file's option (an older build knows only `-md`)."""
    return DRAFT_FLAG if caps.has_flag(DRAFT_FLAG) else "-md"


# ------------------------------------------------------------------ resolve
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
        return SpecDecision(None, None, NONE, False,
                            notes=(msg("Speculative decoding is set up only for llama.cpp; {backend} runs without it.",
                                       backend=options.backend),))

    # 2. Off means off; a draft with it is a contradiction worth saying.
    if options.mtp == MtpMode.OFF:
        if options.draft is not None:
            raise ResolveError(
                "draft",
                msg("Speculation is off but a draft model is set; clear the Draft model field or set MTP to auto."),
            )
        return SpecDecision(None, None, OFF, False, notes=(msg("Speculation is off, as you chose."),))

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
            notes.append(msg("The draft model {name} is passed to the engine.", name=draft_path.name))
            bans = verdict.bans
            notes += [n for n in (verdict.ban_note(),) if n is not None]
        if _split_mode_tensor(extra):
            warnings.append(_SPLIT_WARNING)
        return SpecDecision(users, draft_path, USER_ARGS, False, tuple(notes), tuple(warnings),
                            draft_info=users_draft, bans=bans, draft_check=checked, draft_flag=_draft_flag(caps))

    # 4. An explicit draft: checked, typed by its own tensors, never dropped by fallback.
    if options.draft is not None:
        checked = _usable(check_draft(model, options.draft, caps, read=read))
        spec_type, verdict = checked.spec_type or DRAFT_SIMPLE, checked.pairing
        decision = SpecDecision(
            spec_type, options.draft, EXPLICIT, False,
            notes=(msg("Using your draft model {name} ({kind}).", name=options.draft.name,
                       kind=type_words(spec_type)),
                   *(n for n in (verdict.ban_note(),) if n is not None)),
            drafter_key=drafter_key(options.draft, spec_type), draft_info=checked.info, bans=verdict.bans,
            draft_check=checked, draft_flag=_draft_flag(caps),
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


def _usable(verdict: DraftVerdict) -> DraftVerdict:
    if not verdict.ok:
        raise verdict.error()
    return verdict


# ------------------------------------------------------------------ auto
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
            companions = find_companions(model, options, caps, read, [], [], [], [])
            field, field_note = field_settings.mtp_setting(arch, options.extra_args)
            return SpecDecision(
                DRAFT_MTP, None, AUTO_MTP, True,
                notes=(msg("MTP head found in the model: speculation is on."), *((field_note,) if field_note else ())),
                drafter_key=key,
                alternatives=tuple(_companion_decision(c, caps) for c in sorted(companions, key=lambda c: c.rank)),
                lengths=((DRAFT_N_MAX, field.n_max),) if field is not None else (),
                p_min=field.p_min if field is not None else None,
            )
    elif nextn > 0:
        notes.append(msg("The model declares an MTP head but this file does not contain it."))

    candidates = sorted(find_companions(model, options, caps, read, notes, skipped, left_out, refused),
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
                NGRAM_MOD, None, AUTO_NGRAM, True,
                notes=(*notes, msg("No drafter found: n-gram speculation is on (no extra memory).")),
                skipped=tuple(skipped), drafter_key=key, left_out=tuple(left_out), refused=tuple(refused),
            )
    return SpecDecision(
        None, None, NONE, False,
        notes=(*notes, msg("No drafter found: starting without speculation.")), skipped=tuple(skipped),
        left_out=tuple(left_out), refused=tuple(refused),
    )


def _companion_decision(c: Candidate, caps: EngineCaps) -> SpecDecision:
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
        c.spec_type, c.path, AUTO_COMPANION, True,
        notes=(why, *((ban_note,) if ban_note else ())), drafter_key=drafter_key(c.path, c.spec_type),
        draft_info=c.info, bans=c.verdict.bans, draft_flag=_draft_flag(caps),
    )
