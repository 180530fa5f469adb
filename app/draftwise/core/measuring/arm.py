"""One setup's measured figures: an arm (every engine start of it so far) and each request's
own figures, from which an arm over some of the prompts is rebuilt (`Arm.over`). Filled by
core/measuring/arms.py, read by the choice (core/measuring/choice.py) and the settings stage
(core/measuring/tuning.py)."""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, replace

from draftwise.core.measurements import live_figures, measurement
from draftwise.core.speculation.setup import Setup


@dataclass(frozen=True)
class Timed:
    """One measured request's own figures (`timings`): what `Arm.over` rebuilds an arm from."""

    prompt: int  # its index in the settings' prompts
    start: int  # the round the start that ran it was asked for
    n: float  # tokens written
    ms: float
    prompt_n: float  # tokens read
    prompt_ms: float


@dataclass(frozen=True)
class Arm:
    """One setup's engine starts so far: tokens/s over all measured requests, and per request."""

    setup: Setup
    tokens: float  # generated over all measured requests
    ms: float  # the engine's generation time for them
    per_request: tuple[tuple[int, int, float], ...]  # (prompt index, round, tokens/s)
    counters: live_figures.Counters
    rounds: int = 1
    # Which type drafted how much (the engine's per-type statistics lines), last start's.
    per_type: tuple[live_figures.TypeStats, ...] = ()
    # Prompt processing: tokens and the engine's ms over the timed prompts (the long prompt
    # where `MeasureSettings.prompt_speed`, else the measured ones), and each round's tokens/s.
    prompt_tokens: float = 0.0
    prompt_ms: float = 0.0
    prompt_rounds: tuple[tuple[int, float], ...] = ()
    timed: tuple[Timed, ...] = ()  # each measured request's figures (none from a runner that keeps none)
    # Stopped after its first prompts: a model drafter whose drafts the target refused
    # (arms.refused); its figures cover those prompts alone, so it is not ranked prompt by prompt.
    refused: bool = False

    def over(self, prompts: Collection[int]) -> Arm:
        """This arm on `prompts` alone, rebuilt from its requests' own figures: the quick
        measurement's settings stage runs half the prompts and is set against none's arm on
        that half, writing and reading alike (an arm that also timed the long prompt reads it
        from its requests instead)."""
        timed = tuple(t for t in self.timed if t.prompt in prompts)
        starts = sorted({t.start for t in timed})
        reading = [(st, sum(t.prompt_n for t in timed if t.start == st), sum(t.prompt_ms for t in timed if t.start == st))
                   for st in starts]
        return replace(self, tokens=sum(t.n for t in timed), ms=sum(t.ms for t in timed),
                       per_request=tuple(x for x in self.per_request if x[0] in prompts),
                       prompt_tokens=sum(t.prompt_n for t in timed), prompt_ms=sum(t.prompt_ms for t in timed),
                       prompt_rounds=tuple((st, n * 1000.0 / ms) for st, n, ms in reading if ms > 0), timed=timed)

    @property
    def n_max(self) -> int | None:
        """The draft length of the setup's own type (the model drafter's, else the n-gram's)."""
        s = self.setup
        return s.n_max if s.drafter is not None else s.ngram_len

    @property
    def tokens_per_s(self) -> float:
        return self.tokens * 1000.0 / self.ms if self.ms > 0 else 0.0

    def plus(self, other: Arm) -> Arm:
        """This arm with another round of it (another engine start) added."""
        return Arm(self.setup, self.tokens + other.tokens, self.ms + other.ms,
                   self.per_request + other.per_request, self.counters.plus(other.counters),
                   self.rounds + other.rounds, other.per_type or self.per_type,
                   self.prompt_tokens + other.prompt_tokens, self.prompt_ms + other.prompt_ms,
                   self.prompt_rounds + other.prompt_rounds, self.timed + other.timed,
                   self.refused or other.refused)

    @property
    def prompt_per_s(self) -> float:
        return self.prompt_tokens * 1000.0 / self.prompt_ms if self.prompt_ms > 0 else 0.0

    def prompt_error(self) -> float:
        """The relative standard error of its prompt tokens/s (the spread between rounds over √rounds)."""
        return measurement.relative_error([tps for _r, tps in self.prompt_rounds])

    @property
    def figures(self) -> live_figures.Figures:
        return live_figures.Figures.from_counters(self.counters)

    def noise(self) -> float:
        """Relative spread between rounds of the same prompt (RMS over prompts)."""
        by_prompt: dict[int, list[float]] = {}
        for i, _, tps in self.per_request:
            by_prompt.setdefault(i, []).append(tps)
        spreads = [measurement.relative_spread(values) for values in by_prompt.values()
                   if len(values) >= 2 and min(values) > 0]
        if not spreads:
            return 0.0
        return math.sqrt(sum(s * s for s in spreads) / len(spreads))

    def error(self) -> float:
        """The relative standard error of its tokens/s: the spread between rounds over
        √rounds (the spread says how far one round strays; the mean of R strays √R less)."""
        return self.noise() / math.sqrt(self.rounds) if self.rounds > 0 else 0.0

    def tokens_per_s_of(self, prompt: int) -> float:
        """Mean tokens/s of one prompt over its rounds (the per-kind figures)."""
        values = [tps for i, _, tps in self.per_request if i == prompt]
        return sum(values) / len(values) if values else 0.0
