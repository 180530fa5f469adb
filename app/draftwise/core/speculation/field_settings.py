"""The draft length and p-min an MTP head starts with before Draftwise has measured it here:
what the field reports for its family, in one table.

The engine's defaults (`--spec-draft-n-max 3`, `--spec-draft-p-min 0`, common/common.h in the
pinned source) draft three tokens whatever their probability. The published MTP GGUFs of
Qwen3.5 and Qwen3.6 report their 1.4–1.8× with a draft length of 2–4 and
`--spec-draft-p-min 0.75` (stop drafting once the head is unsure; a rejected draft costs a
verification for nothing). So auto starts an MTP head of those architectures at length 3 (the
middle, and the length the planner sizes the recurrent rollback state for) and p-min 0.75.
A measurement (`draftwise measure`, Measure speed) replaces both (core/launch/prepare.py
applies the measured setup over these), and a user's own `--spec-draft-n-max` or
`--spec-draft-p-min` is never doubled: a setting the user gave is left to them.
Sources: docs/measure.md, "Before a measurement".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.spec_types import DRAFT_N_MAX, DRAFT_P_MIN
from draftwise.core.messages import Message, msg


@dataclass(frozen=True)
class FieldSetting:
    n_max: int
    p_min: float
    family: str  # as the note names it


_QWEN_MTP = FieldSetting(3, 0.75, "Qwen3.5 and Qwen3.6")
# general.architecture -> the setting reported for its MTP head.
MTP_SETTINGS: dict[str, FieldSetting] = {"qwen35": _QWEN_MTP, "qwen35moe": _QWEN_MTP}


def mtp_setting(arch: str, extra_args: Sequence[str]) -> tuple[FieldSetting | None, Message | None]:
    """The draft length and p-min an MTP head of `arch` starts with (the decision carries them:
    `SpecDecision.lengths`, `p_min`), and the note that says so; None for an architecture with
    no reported setting, or when the user set either flag."""
    setting = MTP_SETTINGS.get(arch)
    users = {engine_args.canonical(a.split("=", 1)[0]) for a in extra_args}
    if setting is None or DRAFT_N_MAX in users or DRAFT_P_MIN in users:
        return None, None
    return setting, _note(setting)


def _note(setting: FieldSetting) -> Message:
    return msg("It drafts {n} tokens at a time and stops at p-min {p}, as reported for the MTP heads of {family}, "
               "until Draftwise measures it here.", n=setting.n_max, p=f"{setting.p_min:g}", family=setting.family)


def is_field_note(note: object) -> bool:
    """Whether `note` is mtp_setting's: a measurement of the model supersedes it (its own note
    says what runs instead)."""
    return isinstance(note, Message) and note.template == _note(_QWEN_MTP).template
