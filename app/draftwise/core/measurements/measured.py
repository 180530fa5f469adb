"""What speculation measurably did on this machine, remembered per combination.

A measurement (core/measuring/quick.py) runs a fixed prompt set twice, with the chosen
speculation and without it, and tunes the draft length. Its result is recorded here per
(model, drafter, engine build, machine), because each of the four changes the outcome: a
new engine build or another computer gets a new measurement, as a rebuilt drafter does.

The next plan asks `decide()`: an automatic drafter measured slower than none, beyond the
noise the measurement itself reported, is left out; a drafter the user forced stays, with
the figure shown and its tuned draft length and p-min; otherwise the fastest setup measured
(core/speculation/setup.py: the types, an n-gram type beside the drafter too, the lengths,
p-min) is run. A sweep's best (core/measurements/sweep_record.py, the file beside this one)
outranks a quick measurement of the same combination; forgetting a model forgets both. Without a measurement, the
live figures still count: `cannot_pay()` says when the acceptance seen so far is too low
for drafting to pay, from the break-even worked out in `break_even_acceptance()`.

The keys are core/identity.py's: the model's `file_key`, the resolver's drafter key, the
`engine_build_key` and the `machine_key` of the machine as selected — the same in the window,
`launch` and `measure` (a measurement filed under the earlier machine key is still found).
`speculation-measured.json` in paths.data_dir(), one `records.JsonRecord` (docs/records.md:
a damaged file set aside, a newer one left alone, atomic writes), problems through `problem`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.engines import args as engine_args
from draftwise.core.engines.spec_types import DRAFT_N_MAX, DRAFT_P_MIN, LENGTH_FLAGS
from draftwise.core.measurements.learned import switched_words
from draftwise.core.measurements.measurement import Combination, Measurement
from draftwise.core.measurements.sweep_record import FILE_NAME as SWEEPS
from draftwise.core.measurements.sweep_record import Sweep, SweepRecords
from draftwise.core.measurements.tuned import FILE_NAME as TUNED
from draftwise.core.measurements.tuned import TunedRecords
from draftwise.core.messages import Message, msg
from draftwise.core.records import JsonRecord, Store
from draftwise.core.speculation.setup import Setup
from draftwise.core.speculation.words import words_of

log = logging.getLogger(__name__)

FILE_NAME = "speculation-measured.json"
VERSION = 1

# Live figures: no verdict before this many drafted tokens, and then only when even the
# upper end of the acceptance's 95 % interval is below break-even.
MIN_DRAFTED = 256
Z_95 = 1.96

# Draft lengths a quick measurement tries, per length flag (spec_types.LENGTH_FLAGS): the
# engine's default for draft models is 3, for ngram-mod 64, for ngram-simple/-map-k 48.
N_MAX_CANDIDATES = {DRAFT_N_MAX: (2, 4, 8), "--spec-ngram-mod-n-max": (16, 32, 64),
                    "--spec-ngram-simple-size-m": (16, 32, 64), "--spec-ngram-map-k-size-m": (16, 32, 64)}
# An MTP head drafts from the model's own hidden state: short drafts pay (for Gemma 4's MTP
# 1 beats 2, llama.cpp#24266), so 1 and 2 are tried, and the engine's default 3's neighbour 4.
MTP_N_MAX_CANDIDATES = (1, 2, 4)


def n_max_candidates(spec_type: str | None) -> tuple[int, ...] | None:
    """The draft lengths a measurement tries for this type (None: it has no length flag)."""
    if spec_type == "draft-mtp":
        return MTP_N_MAX_CANDIDATES
    flag = n_max_flag(spec_type)
    return N_MAX_CANDIDATES[flag] if flag is not None else None


def n_max_flag(spec_type: str | None) -> str | None:
    return LENGTH_FLAGS.get(spec_type or "")


# ------------------------------------------------------------------ what the next plan does
@dataclass(frozen=True)
class Use:
    """What a measurement means for a launch."""

    keep: bool  # run the drafter
    # The tuned draft length for the decision's own type, by its length option
    # (SpecDecision.lengths), and the drafter's p-min: data the decision carries.
    lengths: tuple[tuple[str, int], ...] = ()
    note: Message | None = None
    warning: Message | None = None
    p_min: float | None = None
    # The measured setup to run instead of the decision's own types (an automatic decision
    # only: n-gram beside the drafter, another n-gram type); the user's own flags left out.
    setup: Setup | None = None


def decide(m: Measurement, *, automatic: bool, user_args: tuple[str, ...] = ()) -> Use:
    """Leave out an automatic drafter measured slower; keep a forced one with its figure;
    otherwise pass the fastest setup measured (auto) or its draft length and p-min (a drafter
    the user chose), leaving out what the user's own arguments set."""
    ratio = f"{m.ratio:.2f}"
    if m.slower and automatic:
        return Use(False, note=msg("measured slower: {ratio}× — started without {what}", ratio=ratio, what=words_of(m.what)))
    if m.setup is not None and automatic and not m.slower:
        setup = _without_user_settings(m.setup, user_args)
        if m.learned is not None:  # measured again on the user's own prompts: say why it runs
            return Use(True, setup=setup, note=switched_words(m.setup.label(), m.ratio, m.learned))
        return Use(True, setup=setup, note=msg("measured {ratio}× with {what} ({setup}, the fastest tried)",
                                               ratio=ratio, what=words_of(m.what), setup=setup.label()))
    lengths: tuple[tuple[str, int], ...] = ()
    p_min = None
    # A drafter the user chose keeps its type: only its own length (not an n-gram type's).
    own_length = m.setup is None or m.setup.drafter is not None
    if own_length and m.n_max is not None and m.n_max_flag and m.n_max_flag not in user_args:
        lengths = ((m.n_max_flag, m.n_max),)
    if m.setup is not None and m.setup.drafter is not None and m.setup.p_min and not _user_sets(user_args, DRAFT_P_MIN):
        p_min = m.setup.p_min
    if m.slower:
        return Use(True, lengths, p_min=p_min, warning=msg(
            "measured slower: {ratio}× with {what}; it stays because you chose it", ratio=ratio, what=words_of(m.what)))
    if lengths or p_min:
        return Use(True, lengths, p_min=p_min, note=msg(
            "measured {ratio}× with {what}; draft length {n} (the fastest tried)",
            ratio=ratio, what=words_of(m.what), n=m.n_max))
    return Use(True, note=msg("measured {ratio}× with {what}", ratio=ratio, what=words_of(m.what)))


def is_decision_note(note: object) -> bool:
    """Whether `note` is decide()'s (each of its notes starts "measured "): the window shows the
    measurement once, with its undo, and leaves this one out."""
    return isinstance(note, Message) and note.template.startswith("measured ")


def _user_sets(user_args: tuple[str, ...], flag: str) -> bool:
    return any(engine_args.canonical(a) == engine_args.canonical(flag) for a in user_args)


def _without_user_settings(s: Setup, user_args: tuple[str, ...]) -> Setup:
    """The setup without the settings the user's own arguments give (theirs win, never doubled)."""
    from dataclasses import replace

    if s.drafter is not None and _user_sets(user_args, DRAFT_N_MAX):
        s = replace(s, n_max=None)
    if s.drafter is not None and _user_sets(user_args, DRAFT_P_MIN):
        s = replace(s, p_min=None)
    if s.ngram is not None and _user_sets(user_args, LENGTH_FLAGS[s.ngram]):
        s = replace(s, ngram_len=None)
    if s.ngram2 is not None and _user_sets(user_args, LENGTH_FLAGS[s.ngram2]):
        s = replace(s, ngram2_len=None)
    return s


# ------------------------------------------------------------------ live: can drafting pay?
def break_even_acceptance(draft_cost: float, n_max: int, verify_cost: float = 1.0) -> float:
    """The acceptance rate below which drafting cannot pay.

    One step drafts `n_max` tokens (each costing `draft_cost` target tokens) and verifies
    them in one target pass costing `verify_cost` single-token passes (≥ 1; close to 1 while
    generation is memory-bound). It yields 1 + a·n_max tokens for acceptance a, against 1
    token per pass without drafting, so it pays when 1 + a·n ≥ verify_cost + n·draft_cost:
    a ≥ draft_cost + (verify_cost − 1)/n.
    """
    n = max(1, n_max)
    return min(1.0, max(0.0, draft_cost + (max(verify_cost, 1.0) - 1.0) / n))


def draft_cost_from_sizes(draft_bytes: int, target_bytes: int) -> float:
    """A draft token's cost in target tokens: generation reads every weight once per token,
    so the weight sizes (which the plan measured from the tensor tables) set the ratio."""
    if target_bytes <= 0:
        return 0.0
    return max(0.0, draft_bytes / target_bytes)


def cannot_pay(acceptance: float | None, drafted: int, break_even: float) -> bool:
    """True when enough tokens were drafted and even the upper end of the acceptance's 95 %
    interval is below break-even (so chance alone does not explain the shortfall)."""
    if acceptance is None or drafted < MIN_DRAFTED:
        return False
    upper = acceptance + Z_95 * math.sqrt(max(acceptance * (1 - acceptance), 1e-9) / drafted)
    return upper < break_even


def cannot_pay_warning(acceptance: float, break_even: float) -> Message:
    return msg(
        "Only {pct} % of drafted tokens are accepted; drafting pays only above about {be} %, so "
        "speculation is slowing this model down.",
        pct=f"{acceptance * 100:.0f}", be=f"{break_even * 100:.0f}",
    )


# ------------------------------------------------------------------ the record
def _parse(entries: Any, _version: int) -> list[Measurement]:
    if not isinstance(entries, list):
        raise ValueError("no entries list")
    return [Measurement.from_json(e) for e in entries]


class MeasuredRecords(Store):
    """The persistent record. Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("record of speed measurements"),
                                      VERSION, parse=_parse, dump=lambda ms: [m.to_json() for m in ms], empty=list)
        self._sweeps: SweepRecords | None = None
        self._tuned: TunedRecords | None = None

    @property
    def problem(self) -> Message | None:
        """Set when this file or the sweeps' beside it could not be read, was set aside, or is a
        newer version's."""
        return self.record_file.problem or next(
            (s.problem for s in (self._sweeps, self._tuned) if s is not None and s.problem), None)

    def entries(self) -> list[Measurement]:
        return self.record_file.read()

    def get(self, combination: Combination) -> Measurement | None:
        """A sweep's best of this combination (it tried every setup), else the quick measurement."""
        swept = self.sweeps().get(combination)
        best = swept.measurement() if swept is not None else None
        quick = next((m for m in self.entries() if combination.covers(m.combination)), None)
        # A measurement on the user's own prompts made after the sweep outranks it (learn.py).
        if quick is not None and quick.learned is not None and (best is None or quick.when >= best.when):
            return quick
        return best if best is not None else quick

    def speedups(self) -> dict[str, float]:
        """Per model (its `identity.path_key`), the speed-up its newest measurement here found
        where speculation pays (`Measurement.pays`), whatever the engine or drafter: what the
        library shows beside each model."""
        found = [*self.entries(), *(m for s in self.sweeps().entries() if (m := s.measurement()) is not None)]
        out: dict[str, float] = {}
        for m in sorted(found, key=lambda m: m.when):
            path = m.combination.model.split("|", 1)[0]
            if m.pays:
                out[path] = m.ratio
            else:
                out.pop(path, None)
        return out

    def sweeps(self) -> SweepRecords:
        """The sweeps' record beside this file."""
        if self._sweeps is None:
            self._sweeps = SweepRecords(self.path.with_name(SWEEPS))
        return self._sweeps

    def tuned(self) -> TunedRecords:
        """The engine settings kept beside this file (core/measurements/tuned.py)."""
        if self._tuned is None:
            self._tuned = TunedRecords(self.path.with_name(TUNED))
        return self._tuned

    def record(self, m: Measurement) -> None:
        """Keep `m`, in place of an earlier measurement of its combination (under any key form)."""
        self.record_file.update(lambda old: [*(e for e in old if not m.combination.covers(e.combination)), m])

    def keep(self, result: Measurement | Sweep) -> None:
        """Record what `measure` (a measurement) or `measure --sweep` (a sweep) found, each in
        its file, and the engine settings its settings stage kept."""
        (self.sweeps() if isinstance(result, Sweep) else self).record(result)
        if result.tuned is not None:
            self.tuned().record(result.tuned)

    def forget(self, *, model: Path | str | None = None, combination: Combination | None = None) -> int:
        """Drop the records of one combination, of every combination of a model, or all."""
        gone = 0

        def change(old: list[Measurement]) -> list[Measurement] | None:
            nonlocal gone
            keep = [e for e in old if not (
                (combination is None or combination.covers(e.combination))
                and (model is None or e.combination.matches_model(model)))]
            gone = len(old) - len(keep)
            return keep if gone else None

        self.record_file.update(change)
        # A sweep's best is a measurement too: forgetting a model forgets its sweeps, and the
        # engine settings measured with them (part of a measurement, not counted apart).
        if combination is None:
            gone += self.sweeps().forget(model=model)
            self.tuned().forget(model=model)
        return gone
