"""Live drafting figures: what the running engine says about its own speculation.

Three sources, all from the pinned llama-server (tools/server/):
- `/metrics` (only with `--metrics`, which the launch always passes): the Prometheus
  counters `llamacpp:spec_decode_num_draft_tokens_total` (drafted), `..._accepted_tokens_total`
  (accepted), `..._drafts_total` (verification steps), and `llamacpp:tokens_predicted_total` /
  `..._seconds_total` for generation speed (server-task.cpp `to_metrics`);
- the per-request log line `draft acceptance = 0.78125 (   25 accepted /    32 generated),
  mean len =  2.56` (server-context.cpp, `print_timings`);
- `/slots[].speculative`: whether the slot really has a speculative context (`can_speculate()`);
  `/props` always reads "none", so it cannot tell.

`/metrics` prints every counter through a default C++ stream: 6 significant digits
(1.23457e+06), so past 10^6 a counter no longer moves by a short request, and a difference of
two readings stalls. Differences therefore come from sources that do not round: each
request's own `timings` (`predicted_n`, `predicted_ms`, `draft_n`, `draft_n_accepted`:
integers and full doubles in JSON) and the per-request log lines (`draft acceptance = ...`,
`eval time = ... / N tokens`, integers); `/metrics` only gives running totals, whose ratios
the rounding cannot move (`EXACT_BELOW`).

Pure parsing and arithmetic; the drivers (CLI, window service) fetch the texts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from draftwise.core.engines.spec_types import DEFAULT_LENGTHS
from draftwise.core.measurements import measured
from draftwise.core.messages import Message, Text, msg

if TYPE_CHECKING:
    from draftwise.core.measurements.usage import Keeper

# Counter names as the pinned engine writes them (server-task.cpp).
DRAFTED = "llamacpp:spec_decode_num_draft_tokens_total"
ACCEPTED = "llamacpp:spec_decode_num_accepted_tokens_total"
DRAFTS = "llamacpp:spec_decode_num_drafts_total"
PREDICTED = "llamacpp:tokens_predicted_total"
PREDICTED_SECONDS = "llamacpp:tokens_predicted_seconds_total"

# Below this a /metrics counter (an integer printed with 6 significant digits) is exact.
EXACT_BELOW = 1_000_000
# The per-request generation line (server-context.cpp print_timings), not its prompt twin.
_EVAL_LINE = re.compile(r"(?<!prompt )\beval time =\s*(?P<ms>[0-9.]+) ms /\s*(?P<n>\d+) tokens")
_ACCEPTANCE_LINE = re.compile(
    r"draft acceptance = (?P<rate>[0-9.]+) \(\s*(?P<accepted>\d+) accepted /\s*(?P<generated>\d+) generated\),"
    r" mean len =\s*(?P<mean>[0-9.]+)"
)


# The engine's per-type line after each request, at -lv 4 (common/speculative.cpp
# `common_speculative_print_stats`): one per speculative type of the launch, its counters
# summed since the engine started.
_TYPE_STATS_LINE = re.compile(
    r"statistics\s+(?P<type>[a-z0-9-]+): #calls\(b,g,a\) =\s*\d+\s+\d+\s+\d+, #gen drafts =\s*(?P<drafts>\d+),"
    r" #acc drafts =\s*(?P<accepted_drafts>\d+), #gen tokens =\s*(?P<drafted>\d+), #acc tokens =\s*(?P<accepted>\d+)"
)


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text → {name: value} for unlabelled samples (labelled ones are skipped)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "{" in line:
            continue
        parts = line.split()
        if len(parts) < 2:
            continue
        try:
            out[parts[0]] = float(parts[1])
        except ValueError:
            continue  # a sample this parser does not understand is not a figure
    return out


@dataclass(frozen=True)
class Counters:
    """Cumulative counters of one engine run."""

    drafted: float = 0.0
    accepted: float = 0.0
    drafts: float = 0.0  # verification steps
    predicted: float = 0.0  # generated tokens
    predicted_seconds: float = 0.0

    @classmethod
    def from_metrics(cls, text: str) -> Counters:
        m = parse_metrics(text)
        return cls(m.get(DRAFTED, 0.0), m.get(ACCEPTED, 0.0), m.get(DRAFTS, 0.0),
                   m.get(PREDICTED, 0.0), m.get(PREDICTED_SECONDS, 0.0))

    @classmethod
    def from_timings(cls, timings: dict) -> Counters:
        """One request's own figures (its `timings`: exact). Verification steps are not in
        them; `drafts` is 0."""
        def num(key: str) -> float:
            value = timings.get(key, 0)
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0

        return cls(num("draft_n"), num("draft_n_accepted"), 0.0, num("predicted_n"), num("predicted_ms") / 1000.0)

    def plus(self, other: Counters) -> Counters:
        return Counters(self.drafted + other.drafted, self.accepted + other.accepted, self.drafts + other.drafts,
                        self.predicted + other.predicted, self.predicted_seconds + other.predicted_seconds)

    @property
    def exact(self) -> bool:
        """Whether every count is below where /metrics starts rounding."""
        return max(self.drafted, self.accepted, self.drafts, self.predicted) < EXACT_BELOW

    def minus(self, earlier: Counters) -> Counters:
        return Counters(self.drafted - earlier.drafted, self.accepted - earlier.accepted,
                        self.drafts - earlier.drafts, self.predicted - earlier.predicted,
                        self.predicted_seconds - earlier.predicted_seconds)


@dataclass(frozen=True)
class Figures:
    """What the user sees: None where the engine has not said yet."""

    acceptance: float | None  # accepted / drafted, 0..1
    mean_length: float | None  # tokens per verification step, the target's own included
    tokens_per_second: float | None  # generation speed
    drafted: int = 0
    accepted: int = 0

    @classmethod
    def from_counters(cls, c: Counters) -> Figures:
        acceptance = c.accepted / c.drafted if c.drafted > 0 else None
        # The engine's own definition (server-context.cpp): 1 + accepted / steps.
        mean = 1.0 + c.accepted / c.drafts if c.drafts > 0 else None
        tps = c.predicted / c.predicted_seconds if c.predicted_seconds > 0 else None
        return cls(acceptance, mean, tps, int(c.drafted), int(c.accepted))

    def text(self) -> Message:
        if self.tokens_per_second is None:
            return msg("no tokens generated yet")
        tps = f"{self.tokens_per_second:.1f}"
        if self.acceptance is None or self.mean_length is None:
            return msg("generating: {tps} tokens/s", tps=tps)
        return msg("drafting: acceptance {pct} % · mean accepted length {n} · {tps} tokens/s",
                   pct=f"{self.acceptance * 100:.0f}", n=f"{self.mean_length:.2f}", tps=tps)


@dataclass(frozen=True)
class AcceptanceLine:
    rate: float
    accepted: int
    generated: int
    mean_length: float


@dataclass(frozen=True)
class TypeStats:
    """What one speculative type of a launch drafted, since the engine started."""

    spec_type: str
    drafts: int  # drafts it made (the engine asks the types in turn; the first with a draft wins)
    accepted_drafts: int
    drafted: int  # tokens
    accepted: int

    @property
    def acceptance(self) -> float | None:
        return self.accepted / self.drafted if self.drafted > 0 else None


def parse_type_stats(line: str) -> TypeStats | None:
    """The engine's per-type `statistics <type>: ...` line, or None for any other line."""
    m = _TYPE_STATS_LINE.search(line)
    if m is None:
        return None
    return TypeStats(m["type"], int(m["drafts"]), int(m["accepted_drafts"]), int(m["drafted"]), int(m["accepted"]))


def type_stats(lines: list[str]) -> tuple[TypeStats, ...]:
    """The latest figures of each type in `lines` (the lines are running totals), in the order
    the types first appear."""
    latest: dict[str, TypeStats] = {}
    for line in lines:
        found = parse_type_stats(line)
        if found is not None:
            latest[found.spec_type] = found
    return tuple(latest.values())


def types_text(stats: tuple[TypeStats, ...]) -> Message | None:
    """Which type drafted how much, for a launch that runs more than one: "ngram-mod drafted
    80 % of the tokens (95 % accepted), draft-simple 20 % (60 % accepted)"; None for one type."""
    drafted = sum(s.drafted for s in stats)
    if len(stats) < 2 or drafted <= 0:
        return None
    parts = [str(msg("{type} {share} % ({accepted} % accepted)", type=s.spec_type,
                     share=f"{100 * s.drafted / drafted:.0f}",
                     accepted=f"{100 * (s.acceptance or 0.0):.0f}")) for s in stats]
    return msg("drafted tokens by type: {parts}", parts=", ".join(parts))


def parse_eval_line(line: str) -> tuple[int, float] | None:
    """(tokens, ms) of the engine's per-request `eval time = X ms / N tokens` line, or None."""
    m = _EVAL_LINE.search(line)
    return (int(m["n"]), float(m["ms"])) if m is not None else None


def parse_acceptance_line(line: str) -> AcceptanceLine | None:
    """The engine's per-request `draft acceptance = …` line, or None for any other line."""
    m = _ACCEPTANCE_LINE.search(line)
    if m is None:
        return None
    return AcceptanceLine(float(m["rate"]), int(m["accepted"]), int(m["generated"]), float(m["mean"]))


def slots_speculative(body: bytes | str) -> bool | None:
    """True when any slot of `/slots` has a speculative context, False when none does,
    None when the answer is not a slot list (an old engine, slots endpoint off)."""
    try:
        data = json.loads(body)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, list) or not data or not all(isinstance(s, dict) for s in data):
        return None
    values = [s.get("speculative") for s in data]
    if not any(isinstance(v, bool) for v in values):
        return None
    return any(v is True for v in values)


def dropped_drafter_warning(expected: bool, speculative: bool | None, what: Text) -> Message | None:
    """A warning when the launch asked for speculation and the engine runs without it."""
    if expected and speculative is False:
        return msg(
            "The engine started without {what}: its slots report no speculative decoding, "
            "so generation runs at the plain speed. The engine log says why.",
            what=what,
        )
    return None


# ------------------------------------------------------------------ one run, watched
# The engine's default draft lengths (common/common.h), when the launch does not set one.
DEFAULT_N_MAX = DEFAULT_LENGTHS
# A verification pass over k+1 tokens costs a little more than a one-token pass even while
# generation is memory-bound (more activations, a wider attention): per drafted token,
# this fraction of a target token. A floor, so n-gram drafting (nearly free to draft) with
# no accepted tokens still reads as not paying.
VERIFY_COST_PER_TOKEN = 0.02


def n_max_of(spec_type: str | None, lengths: tuple[tuple[str, int], ...]) -> int:
    """The draft length a launch runs with: the one its decision sets (SpecDecision.lengths),
    else the engine's default."""
    flag = measured.n_max_flag(spec_type)
    if flag is None:
        return 3
    return dict(lengths).get(flag) or DEFAULT_N_MAX[flag]


def break_even_for(spec_type: str | None, lengths: tuple[tuple[str, int], ...], draft_cost: float) -> float:
    n = n_max_of(spec_type, lengths)
    return measured.break_even_acceptance(draft_cost, n, verify_cost=1.0 + VERIFY_COST_PER_TOKEN * n)


class Watch:
    """The figures of one running engine, and the warnings they call for (each said once).

    Feed it `/slots` and `/metrics` answers; it keeps the counters at the last call, the
    figures since the engine started, and whether drafting visibly does not pay.
    """

    def __init__(self, *, speculating: bool, what: Text, break_even: float | None, measured: bool = False) -> None:
        self.speculating = speculating
        self.what = what
        self.break_even = break_even
        self.measured = measured  # a measurement exists: it, not the live figures, decides
        self.counters = Counters()
        self.figures = Figures(None, None, None)
        self.speculative: bool | None = None
        self.last_line: AcceptanceLine | None = None
        # Which type drafted how much (a combined launch, `--spec-type ngram-mod,draft-simple`).
        self.per_type: dict[str, TypeStats] = {}
        # Requests the engine has finished, counted from its own per-request lines (exact,
        # where /metrics totals stop moving past 10^6): what "new tokens" means.
        self.requests = 0
        self._requests_at_metrics = 0
        self._said: set[str] = set()
        # The launch's requests kept per model and setup (usage.Keeper), where the driver keeps them.
        self.usage: Keeper | None = None

    def slots(self, body: bytes | str) -> Message | None:
        self.speculative = slots_speculative(body)
        warning = dropped_drafter_warning(self.speculating, self.speculative, self.what)
        return self._once("dropped", warning)

    def metrics(self, text: str) -> tuple[bool, Message | None]:
        """(whether new tokens were generated since the last call, a warning or None)."""
        counters = Counters.from_metrics(text)
        # A request finished since the last reading (its own line), or the totals moved: the
        # totals alone stall once they print rounded (EXACT_BELOW).
        changed = self.requests != self._requests_at_metrics or counters.predicted != self.counters.predicted
        self._requests_at_metrics = self.requests
        self.counters = counters
        self.figures = Figures.from_counters(counters)
        return changed, self._once("cannot-pay", self.cannot_pay_warning())

    def line(self, line: str) -> AcceptanceLine | None:
        found = parse_acceptance_line(line)
        if found is not None:
            self.last_line = found
        elif parse_eval_line(line) is not None:
            self.requests += 1
        elif (stats := parse_type_stats(line)) is not None:
            self.per_type[stats.spec_type] = stats
        return found

    def types_text(self) -> Message | None:
        return types_text(tuple(self.per_type.values()))

    def lines(self, lines: list[str]) -> None:
        for line in lines:
            self.line(line)

    @property
    def dropped(self) -> bool:
        return self.speculating and self.speculative is False

    def cannot_pay(self) -> bool:
        if not self.speculating or self.measured or self.break_even is None:
            return False
        return measured.cannot_pay(self.figures.acceptance, self.figures.drafted, self.break_even)

    def cannot_pay_warning(self) -> Message | None:
        if not self.cannot_pay() or self.figures.acceptance is None or self.break_even is None:
            return None
        return measured.cannot_pay_warning(self.figures.acceptance, self.break_even)

    def _once(self, key: str, warning: Message | None) -> Message | None:
        if warning is None or key in self._said:
            return None
        self._said.add(key)
        return warning
