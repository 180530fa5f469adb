"""The sweep's results (core/measuring/sweep.py), remembered per model, drafter, engine
and machine.

A sweep tries every speculation setup the engine and the files allow and keeps a table of
them. Its key is the quick measurement's (`measured.Combination`, from
`prepare.combination`): the same model file, drafter, engine build and machine, so a new
build, file or computer is swept afresh. Auto reads it through `measured.MeasuredRecords`,
which prefers a sweep's best to a quick measurement of the same combination
(`Sweep.measurement()`), and forgets both together.

The file is one of core/records.py's records (docs/records.md): versioned JSON in
paths.data_dir(), written atomically; a damaged one is set aside (renamed, never deleted), a
newer version's left alone, and either reported through `problem` as a Message.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.measurements.measurement import Combination, Measurement
from draftwise.core.messages import Message, msg
from draftwise.core.records import JsonRecord, Store
from draftwise.core.speculation.setup import Setup

log = logging.getLogger(__name__)

FILE_NAME = "speculation-sweeps.json"
VERSION = 1


@dataclass(frozen=True)
class SweepRow:
    """One setup the sweep ran: its tokens/s over every round it got."""

    setup: Setup
    tokens_per_s: float
    noise: float  # relative spread between its rounds (0 after one round)
    rounds: int
    acceptance: float | None = None
    mean_length: float | None = None
    stopped: bool = False  # its dimension stopped widening here (beyond the noise and falling)
    what: str = ""  # the setup in words ("the draft model x.gguf with n-gram speculation")
    # Its tokens/s in the final stage (the fastest few and none, once more), None if not a finalist.
    final_tokens_per_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"setup": self.setup.to_json(), "tokens_per_s": self.tokens_per_s, "noise": self.noise,
                "rounds": self.rounds, "acceptance": self.acceptance, "mean_length": self.mean_length,
                "stopped": self.stopped, "what": self.what, "final_tokens_per_s": self.final_tokens_per_s}

    @classmethod
    def from_json(cls, data: Any) -> SweepRow:
        if not isinstance(data, dict):
            raise ValueError("a row is not an object")
        return cls(setup=Setup.from_json(data["setup"]), tokens_per_s=float(data["tokens_per_s"]),
                   noise=float(data["noise"]), rounds=int(data["rounds"]),
                   acceptance=_opt_float(data.get("acceptance")), mean_length=_opt_float(data.get("mean_length")),
                   stopped=bool(data.get("stopped", False)), what=str(data.get("what", "")),
                   final_tokens_per_s=_opt_float(data.get("final_tokens_per_s")))


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Sweep:
    combination: Combination
    base_tokens_per_s: float  # without speculation (in the final stage, beside the finalists)
    base_noise: float
    rows: tuple[SweepRow, ...]  # every speculating setup tried, in the order run
    tokens: int = 0  # generated per prompt and round
    # Without speculation in the stages before the final: what the rows' own tokens/s compare with.
    stages_base_tokens_per_s: float = 0.0
    prompts: int = 0
    seconds: float = 0.0
    when: str = ""
    # The engine's speed settings the sweep kept (tuned.Tuned): recorded in their own store
    # (engine-settings.json), not in this entry; None when read back.
    tuned: Any = field(default=None, compare=False)
    # The finalist the choice's rule kept (core/measuring/choice.py: the geometric mean of its
    # per-prompt speed-ups, a combination or longer draft only where it beats the simpler form
    # on most prompts). None in records from before: the fastest finalist then.
    chosen: Setup | None = None

    @property
    def best(self) -> SweepRow | None:
        """The finalist the rule chose; in records from before it, the fastest finalist (the
        final stage compared them on the same rounds); without a final, the fastest speculating
        setup. One that drafted nothing (no acceptance) ran as without speculation: it is the
        best only when no setup drafted at all."""
        picked = next((r for r in self.rows if self.chosen is not None and r.setup == self.chosen), None)
        if picked is not None:
            return picked
        finals = [r for r in self.rows if r.final_tokens_per_s is not None and r.final_tokens_per_s > 0]
        if finals:
            return max(finals, key=lambda r: r.final_tokens_per_s or 0.0)
        full = [r for r in self.rows if r.tokens_per_s > 0]
        full = [r for r in full if r.acceptance is not None] or full
        return max(full, key=lambda r: r.tokens_per_s) if full else None

    def speed(self, row: SweepRow) -> float:
        """A row's tokens/s as its ratio counts it: the final stage's for a finalist."""
        return row.final_tokens_per_s if row.final_tokens_per_s is not None else row.tokens_per_s

    def ratio(self, row: SweepRow) -> float:
        """Against none measured beside it: in the final for a finalist, in the stages otherwise."""
        base = self.base_tokens_per_s if row.final_tokens_per_s is not None else (
            self.stages_base_tokens_per_s or self.base_tokens_per_s)
        return self.speed(row) / base if base > 0 else 0.0

    def measurement(self) -> Measurement | None:
        """The best setup as a measurement, which is how auto reads it (measured.decide)."""
        best = self.best
        if best is None:
            return None
        s = best.setup
        length_flag, length = _length_of(s)
        return Measurement(
            combination=self.combination, spec_type=",".join(s.types), what=best.what or s.label(),
            tokens_per_s_with=self.speed(best), tokens_per_s_without=self.base_tokens_per_s,
            # The error of the two means (spread over √rounds), as the quick measurement's.
            noise=math.sqrt((self.base_noise ** 2 + best.noise ** 2) / max(best.rounds, 1)), acceptance=best.acceptance,
            mean_length=best.mean_length, n_max=length, n_max_flag=length_flag,
            tokens=self.tokens, prompts=self.prompts, seconds=self.seconds, when=self.when, setup=s, swept=True,
            others=tuple((r.setup, self.speed(r)) for r in self.rows),
        )

    def summary(self) -> Message:
        best = self.best
        if best is None:
            return msg("no setup was measured")
        return msg("fastest of {n} setups: {setup}, {ratio}× ({with_tps} vs {without_tps} tokens/s)",
                   n=len(self.rows), setup=best.setup.label(), ratio=f"{self.ratio(best):.2f}",
                   with_tps=f"{self.speed(best):.1f}", without_tps=f"{self.base_tokens_per_s:.1f}")

    def to_json(self) -> dict[str, Any]:
        return {"combination": {f.name: getattr(self.combination, f.name) for f in fields(Combination)},
                "base_tokens_per_s": self.base_tokens_per_s, "base_noise": self.base_noise,
                "rows": [r.to_json() for r in self.rows], "tokens": self.tokens, "prompts": self.prompts,
                "seconds": self.seconds, "when": self.when, "stages_base_tokens_per_s": self.stages_base_tokens_per_s,
                "chosen": self.chosen.to_json() if self.chosen is not None else None}

    @classmethod
    def from_json(cls, data: Any) -> Sweep:
        if not isinstance(data, dict):
            raise ValueError("an entry is not an object")
        combo = Combination(*(str(data["combination"][k]) for k in ("model", "drafter", "engine", "machine")))
        rows = data.get("rows")
        if not isinstance(rows, list):
            raise ValueError("an entry has no rows list")
        return cls(combination=combo, base_tokens_per_s=float(data["base_tokens_per_s"]),
                   base_noise=float(data["base_noise"]), rows=tuple(SweepRow.from_json(r) for r in rows),
                   tokens=int(data.get("tokens", 0)), prompts=int(data.get("prompts", 0)),
                   seconds=float(data.get("seconds", 0.0)), when=str(data.get("when", "")),
                   stages_base_tokens_per_s=float(data.get("stages_base_tokens_per_s", 0.0)),
                   chosen=Setup.from_json(data["chosen"]) if data.get("chosen") is not None else None)


def _length_of(s: Setup) -> tuple[str | None, int | None]:
    """The draft length a measurement's `n_max`/`n_max_flag` fields show for a setup: the
    model drafter's, else the n-gram type's."""
    from draftwise.core.engines.spec_types import LENGTH_FLAGS

    if s.drafter is not None and s.n_max is not None:
        return LENGTH_FLAGS[s.drafter], s.n_max
    if s.ngram is not None and s.ngram_len is not None:
        return LENGTH_FLAGS[s.ngram], s.ngram_len
    return None, None


def _parse(entries: Any, _version: int) -> list[Sweep]:
    if not isinstance(entries, list):
        raise ValueError("no entries list")
    return [Sweep.from_json(e) for e in entries]


class SweepRecords(Store):
    """The persistent record (core/records.py: one version and damage policy, atomic writes).
    Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("record of speculation sweeps"),
                                      VERSION, parse=_parse, dump=lambda ss: [e.to_json() for e in ss], empty=list)


    def entries(self) -> list[Sweep]:
        return self.record_file.read()

    def get(self, combination: Combination) -> Sweep | None:
        return next((s for s in self.entries() if combination.covers(s.combination)), None)

    def record(self, sweep: Sweep) -> None:
        """Keep `sweep`, in place of an earlier sweep of its combination (under any key form)."""
        self.record_file.update(lambda old: [*(e for e in old if not sweep.combination.covers(e.combination)), sweep])

    def forget(self, *, model: Path | str | None = None) -> int:
        """Drop the sweeps of every combination of a model (all of them without one)."""
        gone = 0

        def change(old: list[Sweep]) -> list[Sweep] | None:
            nonlocal gone
            keep = [e for e in old if model is not None and not e.combination.matches_model(model)]
            gone = len(old) - len(keep)
            return keep if gone else None

        self.record_file.update(change)
        return gone
