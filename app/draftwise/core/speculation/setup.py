"""One way to run speculation: the types, and the settings the engine takes for them.

What a measurement tries (core/measuring/quick.py), what the sweep tries
(core/measuring/sweep.py) and what auto passes once one of them was recorded
(core/launch/prepare.py). A setup names at most one model drafter (the one the resolver found:
a draft model, the MTP head, an EAGLE-3 or DFlash drafter, or, from the sweep, another the
files allow: `drafter_key`) and at most two n-gram types beside it or alone. The pinned engine
runs both in one launch (`--spec-type ngram-mod,draft-simple`: common/speculative.cpp keeps one
implementation per type and asks the n-gram ones first, the model drafter when they have no
draft), so a combined setup costs nothing more to start than a single one.

Pure data: the drafter's own file comes from the resolver's decision (for `drafter_key`, from
the alternative of that key: `SpecDecision.drafter_for`); a setup puts its types, lengths and
p-min on that decision (`on`), which renders them to the engine's options once.

Beside the speculation, a setup carries the engine's speed settings it runs with (`engine`:
core/engines/engine_settings.py; the engine's defaults unless the settings stage tries one,
core/measuring/tuning.py), so one arm of the measurement is one setup either way. They
are not speculation: `on` leaves them out (the arms pass them as engine arguments, which the
plan reads), and a record without them reads as the defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

from draftwise.core.engines.engine_settings import DEFAULTS as ENGINE_DEFAULTS
from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.engines.spec_types import (
    DRAFT_N_MAX,
    LENGTH_FLAGS,
    MODEL_DRAFTERS,
    PINNED,
)
from draftwise.core.kinds import SpecSource
from draftwise.core.speculation.decision_types import SpecDecision
from draftwise.core.speculation.drafter_key import DrafterKey

NGRAM_TYPES = tuple(t for t in PINNED if t.startswith("ngram-"))


@dataclass(frozen=True)
class Setup:
    drafter: str | None = None  # a model drafter's type (MODEL_DRAFTERS), or None
    n_max: int | None = None  # its --spec-draft-n-max (None: the engine's default)
    p_min: float | None = None  # its --spec-draft-p-min (None: the engine's 0, never stop early)
    ngram: str | None = None  # an n-gram type, alone or beside the drafter
    ngram_len: int | None = None  # that type's draft length (None: the engine's default)
    ngram2: str | None = None  # a second n-gram type beside the first
    ngram2_len: int | None = None  # its draft length
    # Which drafter of that type: the key (resolver.drafter_key) of one of the resolver's
    # alternatives; None: the resolver's own choice (every record from before alternatives).
    drafter_key: str | None = None
    # The engine's speed settings this setup runs with (the defaults: none passed).
    engine: EngineSettings = ENGINE_DEFAULTS

    def __post_init__(self) -> None:
        if self.drafter is not None and self.drafter not in MODEL_DRAFTERS:
            raise ValueError(f"{self.drafter!r} is not a model drafter type")
        if self.drafter_key is not None and DrafterKey.parse(self.drafter_key).kind != self.drafter:
            raise ValueError(f"drafter key {self.drafter_key!r} is not of a {self.drafter} drafter")
        if self.ngram is not None and self.ngram not in NGRAM_TYPES:
            raise ValueError(f"{self.ngram!r} is not an n-gram type")
        if self.ngram_len is not None and self.ngram not in LENGTH_FLAGS:
            raise ValueError(f"{self.ngram!r} has no draft length to set")
        if self.ngram2 is not None and (self.ngram is None or self.ngram2 == self.ngram
                                        or self.ngram2 not in NGRAM_TYPES):
            raise ValueError(f"{self.ngram2!r} is not a second n-gram type beside {self.ngram!r}")
        if self.ngram2_len is not None and self.ngram2 not in LENGTH_FLAGS:
            raise ValueError(f"{self.ngram2!r} has no draft length to set")
        if self.ngram2 is not None and PINNED.index(self.ngram2) < PINNED.index(self.ngram):
            # One pair, one setup: the types in the engine's order of asking, whichever came first.
            first, first_len = self.ngram, self.ngram_len
            object.__setattr__(self, "ngram", self.ngram2)
            object.__setattr__(self, "ngram_len", self.ngram2_len)
            object.__setattr__(self, "ngram2", first)
            object.__setattr__(self, "ngram2_len", first_len)
        for name, value in (("n_max", self.n_max), ("ngram_len", self.ngram_len), ("ngram2_len", self.ngram2_len)):
            if value is not None and not (isinstance(value, int) and 1 <= value <= 1024):
                raise ValueError(f"{name} {value!r} is not a draft length (1 to 1024)")
        if self.p_min is not None and not (0.0 <= self.p_min <= 1.0):
            raise ValueError(f"p_min {self.p_min!r} is not a probability")

    @property
    def speculates(self) -> bool:
        return self.drafter is not None or self.ngram is not None

    @property
    def combined(self) -> bool:
        return self.drafter is not None and self.ngram is not None

    @property
    def types(self) -> tuple[str, ...]:
        """In the engine's own order of asking (n-gram first), as `--spec-type` lists them."""
        return tuple(t for t in (*self.ngrams, self.drafter) if t is not None)

    @property
    def ngrams(self) -> tuple[str, ...]:
        """The n-gram types, in the engine's order of asking (spec_types.PINNED lists them so)."""
        return tuple(t for t in (self.ngram, self.ngram2) if t is not None)

    @property
    def several(self) -> bool:
        """More than one type runs: the engine's per-type lines say which drafted what."""
        return len(self.types) > 1

    @property
    def lengths(self) -> tuple[tuple[str, int], ...]:
        """The draft lengths it sets, by the engine's length option (none for what is left at
        the engine's default): `SpecDecision.lengths`."""
        out: list[tuple[str, int]] = []
        if self.drafter is not None and self.n_max is not None:
            out.append((DRAFT_N_MAX, self.n_max))
        for t, n in ((self.ngram, self.ngram_len), (self.ngram2, self.ngram2_len)):
            if t is not None and n is not None:
                out.append((LENGTH_FLAGS[t], n))
        return tuple(out)

    def on(self, decision: SpecDecision) -> SpecDecision:
        """`decision` running this setup: its types (not for the user's own `--spec-type`,
        which their extra arguments pass), lengths and p-min in place of the decision's; its
        drafter's file, bans and key kept while the setup runs a model drafter, dropped when
        it runs none."""
        p_min = self.p_min if self.drafter is not None and self.p_min else None
        run = replace(decision, lengths=self.lengths, p_min=p_min)
        if decision.source == SpecSource.USER_ARGS:
            return run
        run = replace(run, spec_type=",".join(self.types))
        return run if self.drafter is not None else replace(run, draft=None, draft_info=None, bans=())

    @property
    def drafter_file(self) -> str | None:
        """The file name of the drafter `drafter_key` names (None: the resolver's own)."""
        return drafter_file(self.drafter_key) if self.drafter_key is not None else None

    def label(self, own: str | None = None) -> str:
        """Short and technical, for the sweep's table and progress: "ngram-mod 32 + draft-simple
        n-max 4 p-min 0.5"; another drafter than the resolver's is named by its file
        ("draft-simple (b.gguf) n-max 4"), the resolver's own by `own` where given."""
        if not self.engine.default:
            return f"{replace(self, engine=ENGINE_DEFAULTS).label(own)} · {self.engine.label()}"
        if not self.speculates:
            return "no speculation"
        parts = []
        for t, n in ((self.ngram, self.ngram_len), (self.ngram2, self.ngram2_len)):
            if t is not None:
                parts.append(t + (f" {n}" if n is not None else ""))
        if self.drafter is not None:
            d = self.drafter
            name = self.drafter_file or own
            if name:
                d += f" ({name})"
            if self.n_max is not None:
                d += f" n-max {self.n_max}"
            if self.p_min:
                d += f" p-min {self.p_min:g}"
            parts.append(d)
        return " + ".join(parts)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"drafter": self.drafter, "n_max": self.n_max, "p_min": self.p_min,
                                "ngram": self.ngram, "ngram_len": self.ngram_len}
        if self.drafter_key is not None:  # absent: the resolver's own, as in every older record
            data["drafter_key"] = self.drafter_key
        if self.ngram2 is not None:  # absent in records from before pairs of n-gram types
            data.update(ngram2=self.ngram2, ngram2_len=self.ngram2_len)
        if not self.engine.default:  # absent: the engine's defaults, as in every older record
            data["engine"] = self.engine.to_json()
        return data

    @classmethod
    def from_json(cls, data: Any) -> Setup:
        if not isinstance(data, dict):
            raise ValueError("a setup is not an object")

        def opt(key: str, kind: type) -> Any:
            value = data.get(key)
            if value is None:
                return None
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise ValueError(f"setup field {key} is {value!r}")
            return value

        return cls(drafter=opt("drafter", str), n_max=opt("n_max", int), p_min=opt("p_min", float),
                   ngram=opt("ngram", str), ngram_len=opt("ngram_len", int), ngram2=opt("ngram2", str),
                   ngram2_len=opt("ngram2_len", int), drafter_key=opt("drafter_key", str),
                   engine=EngineSettings.from_json(data.get("engine")))


NONE = Setup()


def drafter_file(key: str) -> str:
    """The file name in a drafter key (for an embedded MTP head, the model's)."""
    return PurePath(DrafterKey.parse(key).path).name


def of_decision(decision: SpecDecision) -> Setup:
    """The setup a resolver decision runs: its types and the lengths and p-min it carries."""
    drafter = None
    ngrams: list[str] = []
    for t in decision.types:
        if t in MODEL_DRAFTERS:
            drafter = t
        elif t in NGRAM_TYPES and t not in ngrams:
            ngrams.append(t)
    ngram, ngram2 = (ngrams + [None, None])[:2]

    def length(t: str | None) -> int | None:
        n = decision.length(LENGTH_FLAGS[t]) if t is not None and t in LENGTH_FLAGS else None
        return n if n is not None and n >= 1 else None

    return Setup(drafter, length(drafter), decision.p_min or None if drafter else None, ngram, length(ngram),
                 ngram2, length(ngram2))
