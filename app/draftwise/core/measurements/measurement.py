"""One speed measurement as data: what it is valid for (`Combination`) and what it found
(`Measurement`), with the noise rule that calls it faster or slower.

Its own module so that both records build on it without importing each other: the quick
measurements' (core/measurements/measured.py) and the sweeps'
(core/measurements/sweep_record.py), which measured.py consults beside its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from draftwise.core.identity import same_file
from draftwise.core.measurements.learned import Learned
from draftwise.core.messages import Message, msg
from draftwise.core.speculation.setup import Setup
from draftwise.core.speculation.words import words_of

# A ratio this close to 1 is never called slower, whatever noise the run reported: two arms
# of a short measurement rarely agree better than this.
NOISE_FLOOR = 0.03


def relative_spread(values: Sequence[float]) -> float:
    """How far one of `values` strays: their sample standard deviation over their mean; 0
    with fewer than two (or any not above 0)."""
    if len(values) < 2 or min(values) <= 0:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) / mean


def relative_error(values: Sequence[float]) -> float:
    """The relative standard error of the mean of `values` (one per round): their spread
    over √n; 0 with fewer than two."""
    return relative_spread(values) / math.sqrt(len(values)) if len(values) >= 2 else 0.0


@dataclass(frozen=True)
class Combination:
    """What a measurement is valid for."""

    model: str  # identity.file_key of the model
    drafter: str  # the resolver's drafter key (kind, path, size, mtime)
    engine: str  # identity.engine_build_key of the llama-server binary
    machine: str  # identity.machine_key of the machine as selected
    # The machine's key in an earlier form (identity.legacy_*): a stored measurement filed
    # under one of these is this combination's too. Not stored, not compared.
    earlier_machines: tuple[str, ...] = field(default=(), compare=False)

    def matches_model(self, model_path: Path | str) -> bool:
        return same_file(self.model, model_path)

    def covers(self, stored: Combination) -> bool:
        """Whether a stored measurement's combination is this one (under any form of the machine key)."""
        return ((stored.model, stored.drafter, stored.engine) == (self.model, self.drafter, self.engine)
                and stored.machine in (self.machine, *self.earlier_machines))

    def to_json(self) -> dict[str, str]:
        return {"model": self.model, "drafter": self.drafter, "engine": self.engine, "machine": self.machine}


@dataclass(frozen=True)
class Measurement:
    combination: Combination
    spec_type: str
    what: str  # the drafter in words ("tiny-draft.gguf", "the MTP head")
    # With speculation: where the measurement ran per-prompt figures (`per_prompt`), none's
    # tokens/s times the kept setup's geometric-mean speed-up (core/measuring/choice.py: every
    # kind of prompt weighed alike), so `ratio` is that mean; in records from before, the
    # setup's own tokens/s over all prompts.
    tokens_per_s_with: float
    tokens_per_s_without: float
    noise: float  # relative error of the ratio (the rounds' spread over √rounds), e.g. 0.04 for ±4 %
    acceptance: float | None
    mean_length: float | None
    n_max: int | None  # the best draft length found (None: not tunable)
    n_max_flag: str | None
    tried: tuple[tuple[int, float], ...] = ()  # (draft length, tokens/s) of each try
    tokens: int = 0  # generated per prompt
    prompts: int = 0
    seconds: float = 0.0  # how long the whole measurement took
    when: str = ""
    # The fastest setup tried (types, combined ones too, lengths, p-min): what auto runs. None
    # in records from before setups, which `n_max`/`n_max_flag` describe.
    setup: Setup | None = None
    swept: bool = False  # the best of a sweep (every setup), not a quick measurement
    # Every speculating setup it ran, with its tokens/s: what the user's traffic is compared
    # with (core/measurements/usage_check.py). Empty in records from before.
    others: tuple[tuple[Setup, float], ...] = ()
    # Measured again on the user's own prompts (core/measuring/learn.py): what it replaced.
    learned: Learned | None = None
    # The engine's speed settings the run kept (tuned.Tuned, whose module builds on this one):
    # recorded in their own store (engine-settings.json), not in this entry; None when read back.
    tuned: Any = field(default=None, compare=False)
    kinds: tuple[str, ...] = ()  # the prompts' kinds, in order
    # Each speculating setup that drafted, with its speed-up on each prompt (in `kinds` order).
    per_prompt: tuple[tuple[Setup, tuple[float, ...]], ...] = ()

    @property
    def ratio(self) -> float:
        if self.tokens_per_s_without <= 0:
            return 0.0
        return self.tokens_per_s_with / self.tokens_per_s_without

    @property
    def slower(self) -> bool:
        """Slower than no speculation beyond the noise the run reported."""
        return self.ratio * (1.0 + max(self.noise, NOISE_FLOOR)) < 1.0

    @property
    def faster(self) -> bool:
        return self.ratio * (1.0 - max(self.noise, NOISE_FLOOR)) > 1.0

    @property
    def pays(self) -> bool:
        """Worth turning on where nothing runs yet (n-gram speculation for a model with no
        drafter): faster beyond the noise. Within the noise the gain is not shown, and the
        prompt kinds can pull apart: on the real Gemma 3 270M every n-gram setup measured
        0.95–1.00× overall on a quiet machine, while one of them ran code prompts at 0.78× and
        rewrites at 1.22× (docs/measure.md), so a tie leaves speculation off."""
        return self.faster

    def runs(self, *, automatic: bool, on_trial: bool) -> bool:
        """Whether auto runs the measured setup from now on: n-gram speculation on trial where
        it pays; a drafter unless it is automatic and slower beyond the noise (one the user
        chose stays)."""
        return self.setup is not None and (self.pays if on_trial else not (self.slower and automatic))

    def summary(self) -> Message:
        return msg(
            "{ratio}× with {what} ({with_tps} vs {without_tps} tokens/s, noise ±{noise} %)",
            ratio=f"{self.ratio:.2f}", what=words_of(self.what), with_tps=f"{self.tokens_per_s_with:.1f}",
            without_tps=f"{self.tokens_per_s_without:.1f}", noise=f"{self.noise * 100:.0f}",
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(replace(self, tuned=None))
        del data["tuned"]
        data["combination"] = self.combination.to_json()
        data["tried"] = [list(t) for t in self.tried]
        data["ratio"] = round(self.ratio, 4)  # for people reading the file; recomputed on load
        data["setup"] = self.setup.to_json() if self.setup is not None else None
        data["others"] = [[s.to_json(), tps] for s, tps in self.others]
        data["learned"] = self.learned.to_json() if self.learned is not None else None
        data["kinds"] = list(self.kinds)
        data["per_prompt"] = [[s.to_json(), list(r)] for s, r in self.per_prompt]
        return data

    @classmethod
    def from_json(cls, data: Any) -> Measurement:
        if not isinstance(data, dict):
            raise ValueError("an entry is not an object")
        combo = Combination(*(str(data["combination"][k]) for k in ("model", "drafter", "engine", "machine")))
        known = {f.name for f in fields(cls)} - {"combination", "tried", "setup", "others", "learned", "tuned",
                                                 "kinds", "per_prompt"}
        kwargs = {k: data[k] for k in known if k in data}
        for key in ("tokens_per_s_with", "tokens_per_s_without", "noise"):
            kwargs[key] = float(data[key])
        tried = tuple((int(a), float(b)) for a, b in data.get("tried", ()))
        setup = Setup.from_json(data["setup"]) if data.get("setup") is not None else None
        others = tuple((Setup.from_json(s), float(tps)) for s, tps in data.get("others") or ())
        learned = Learned.from_json(data["learned"]) if data.get("learned") is not None else None
        kinds = tuple(str(k) for k in data.get("kinds") or ())
        per_prompt = tuple((Setup.from_json(s), tuple(float(r) for r in rs)) for s, rs in data.get("per_prompt") or ())
        return cls(combination=combo, tried=tried, setup=setup, others=others, learned=learned, kinds=kinds,
                   per_prompt=per_prompt, **kwargs)
