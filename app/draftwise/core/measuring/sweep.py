"""The sweep: every speculation setup the engine and the files allow, measured; the best kept.

`draftwise measure --sweep` and the window's "Measure speed: all settings". Where the quick
measurement (core/measuring/quick.py) tries a few setups, the sweep tries, for each model
drafter the files allow (the resolver's choice — a draft model, the MTP head, EAGLE-3, DFlash —
and its `alternatives`: the companions beside an MTP head, the companions ranked below the
chosen one; each that fits the machine's memory with its own plan) and for every n-gram type
the engine runs (ngram-mod, ngram-simple, ngram-map-k):

1. *types*: without speculation, each drafter at the engine's default length, each n-gram
   type at 32 (the noise of the rounds here bounds the pruning below);
2. *lengths*: `--spec-draft-n-max` 1 to 8 (`DRAFT_LENGTHS`) for each drafter faster than none
   in the types stage (the fastest drafter alone where none was: the default length may rank
   drafters wrongly, an MTP head's best is often 1 or 2), each n-gram type's draft length 8 to
   64 (`NGRAM_LENGTHS`), each widened from its start up and then down; then the two fastest
   n-gram types together, each at its best length (`SweepPlan.pairs`);
3. *p-min*: the fastest drafter so far at `--spec-draft-p-min` 0.5 and 0.75 (`P_MINS`), its
   length widened again from the best one (p-min moves the best length: Step-3.5's n-max 2
   with p-min 0.6, llama.cpp#24508); this and the next stages go to that one drafter only, so
   another drafter costs at most its lengths line;
4. *combined*: the best drafter setup with each n-gram type beside it (`--spec-type
   ngram-mod,draft-simple`: one launch, the n-gram type asked first), its length 8 to 64
   widened from that type's best alone; then the drafter's length widened again beside the
   best combination;
5. *final*: none and the `FINALISTS` fastest setups once more, in a stage of their own (at
   least `FINAL_ROUNDS` rounds); the choice's rule there (core/measuring/choice.py: the
   geometric mean of the per-prompt speed-ups, a combination or a longer draft only where it
   beats its simpler form on most prompts) picks the sweep's best (with dozens of setups, the
   fastest of two rounds is partly the luckiest), and its ratio is against none measured in
   the same stage;
6. *engine settings*: repack, threads, threads for prompts, flash attention on the CPU and
   the prompt batch on the setup auto will run (core/measuring/tuning.py), kept in
   `Sweep.tuned`, which the caller records beside the sweep.

The same arms, rounds and noise bounds as the quick measurement (core/measuring/arms.py): one
engine start per setup and round, interleaved round by round within a stage; a dimension stops
widening once a setup is beyond the noise below its best and falling. A setting the user's
own engine arguments fix is not swept. Nothing is recorded here: the caller records the
result (core/measurements/sweep_record.py) once the whole sweep finished; auto runs its best
from then on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.engines.spec_types import (
    DRAFT_N_MAX,
    DRAFT_P_MIN,
    LENGTH_FLAGS,
    MODEL_DRAFTERS,
    NGRAM_MEASURED,
)
from draftwise.core.kinds import Backend
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.prepare import Prepared, PrepareError, combination, with_drafter
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements.sweep_record import Sweep, SweepRow
from draftwise.core.measurements.tuned import TunedRecords
from draftwise.core.measuring import choice, quick, tuning
from draftwise.core.measuring.arms import (
    DEFAULT_SETTINGS,
    Line,
    MeasureError,
    MeasureSettings,
    Progress,
    Results,
    Runner,
    Steps,
    decision_for,
    ngram_pair,
    run_stage,
    runner_for,
    what_is_drafting,
)
from draftwise.core.messages import msg
from draftwise.core.speculation import resolver
from draftwise.core.speculation import setup as setup_mod
from draftwise.core.speculation.setup import Setup

DRAFT_LENGTHS = tuple(range(1, 9))  # --spec-draft-n-max for model drafters and MTP
DRAFT_START = 3  # the engine's default (common.h)
NGRAM_LENGTHS = (8, 16, 24, 32, 48, 64)  # each n-gram type's draft length
NGRAM_START = 32
P_MINS = (0.5, 0.75)  # beside the engine's 0
FINALISTS = 3  # the fastest setups measured again in the final stage
# The final's rounds at the least: its verdict is the one kept, and on the real Gemma 3 270M two
# rounds left none 7–22 % below its own figure in the stages before (a drift of the machine).
FINAL_ROUNDS = 3


def _user_sets(prepared: Prepared, *flags: str) -> bool:
    return engine_args.sets(list(prepared.extra_args), *flags)


class SweepPlan:
    """The sweep's stages for one prepared launch; each stage asks the results so far.

    `alternatives`: the other drafters to sweep beside the resolver's (decisions from
    `prepared.spec.alternatives`); None: all of them, as the duration offered counts them."""

    def __init__(self, prepared: Prepared, engine_types: Collection[str],
                 alternatives: Sequence[resolver.SpecDecision] | None = None) -> None:
        spec = prepared.spec
        if spec.source == resolver.USER_ARGS:
            raise MeasureError(msg("Your own --spec-type {type} decides the speculative types; remove it from the "
                                   "engine arguments to sweep them.", type=spec.spec_type))
        own = quick.own_setup(spec)
        self.prepared = prepared
        # Each model drafter at its bare type: the resolver's (no key), then the alternatives.
        self.drafters: tuple[Setup, ...] = ()
        if own.drafter is not None:
            others = spec.alternatives if alternatives is None else alternatives
            self.drafters = (Setup(own.drafter), *(
                Setup(o.spec_type, drafter_key=o.drafter_key) for o in others
                if o.spec_type in MODEL_DRAFTERS and o.drafter_key is not None))
        self.ngrams = tuple(t for t in NGRAM_MEASURED if t in engine_types or t == own.ngram)
        self.sweep_n_max = not _user_sets(prepared, DRAFT_N_MAX)
        self.sweep_p_min = not _user_sets(prepared, DRAFT_P_MIN, "--draft-p-min")

    def _ngram(self, t: str, length: int | None) -> Setup:
        return Setup(ngram=t, ngram_len=None if _user_sets(self.prepared, LENGTH_FLAGS[t]) else length)

    def _drafter(self, drafter: Setup, n: int | None, p_min: float | None = None) -> Setup:
        return replace(drafter, n_max=n if self.sweep_n_max else None, p_min=p_min, ngram=None, ngram_len=None)

    def types(self) -> list[Line]:
        setups = [setup_mod.NONE, *(self._drafter(d, DRAFT_START) for d in self.drafters)]
        setups += [self._ngram(t, NGRAM_START) for t in self.ngrams]
        return [Line((s,), prune=False) for s in dict.fromkeys(setups)]

    def lengths(self, results: Results | None = None) -> list[Line]:
        """The lengths lines: each drafter faster than none in `results` (the fastest drafter
        where none was; None: every drafter, the most there can be), each n-gram type."""
        lines = []
        if self.sweep_n_max:
            for d in self._length_drafters(results):
                lines.append(Line(tuple(self._drafter(d, n) for n in DRAFT_LENGTHS), DRAFT_LENGTHS.index(DRAFT_START)))
        for t in self.ngrams:
            if not _user_sets(self.prepared, LENGTH_FLAGS[t]):
                lines.append(Line(tuple(self._ngram(t, n) for n in NGRAM_LENGTHS), NGRAM_LENGTHS.index(NGRAM_START)))
        return lines

    def _length_drafters(self, results: Results | None) -> tuple[Setup, ...]:
        if results is None or len(self.drafters) <= 1:
            return self.drafters
        base = results.arms.get(setup_mod.NONE)
        bar = base.tokens_per_s if base is not None else 0.0
        ran = [(d, results.arms.get(self._drafter(d, DRAFT_START))) for d in self.drafters]
        faster = tuple(d for d, a in ran if a is not None and a.counters.drafted > 0 and a.tokens_per_s > bar)
        if faster:
            return faster
        best = _best(results, lambda s: s.drafter is not None and s.ngram is None)
        return tuple(d for d in self.drafters if best is not None and d == self._bare(best))

    @staticmethod
    def _bare(s: Setup) -> Setup:
        """The drafter of a setup at its bare type (what `self.drafters` holds)."""
        return Setup(s.drafter, drafter_key=s.drafter_key)

    def p_min(self, results: Results) -> list[Line]:
        if not self.drafters or not self.sweep_p_min:
            return []
        best = _best(results, lambda s: s.drafter is not None and s.ngram is None)
        if best is None:
            return []
        lengths = DRAFT_LENGTHS if self.sweep_n_max else (None,)
        start = lengths.index(best.n_max) if best.n_max in lengths else 0
        return [Line(tuple(self._drafter(self._bare(best), n, p) for n in lengths), start) for p in P_MINS]

    def beside(self, results: Results) -> list[Line]:
        """The drafter's length widened again beside the best n-gram type (the best length
        alone need not be the best with an n-gram type asked first)."""
        best = _best(results, lambda s: s.combined)
        if best is None or not self.sweep_n_max or best.n_max not in DRAFT_LENGTHS:
            return []
        return [Line(tuple(replace(best, n_max=n) for n in DRAFT_LENGTHS), DRAFT_LENGTHS.index(best.n_max))]

    def final(self, results: Results) -> list[Line]:
        """The fastest setups so far and none, once more: with dozens of setups, the fastest of
        two rounds is partly the luckiest; the finalists are compared in one interleaved stage."""
        drafted = [a for a in results.full() if a.setup.speculates and a.counters.drafted > 0]
        top = sorted(drafted, key=lambda a: -a.tokens_per_s)[:FINALISTS]
        return [Line((s,), prune=False) for s in (setup_mod.NONE, *(a.setup for a in top))]

    def combined(self, results: Results) -> list[Line]:
        """The best drafter setup with each n-gram type beside it, the type's length widened from
        its best alone (beside a drafter the n-gram type drafts only where it is asked first)."""
        drafter = _best(results, lambda s: s.drafter is not None and s.ngram is None)
        if drafter is None:
            return []
        lines = []
        for t in self.ngrams:
            ngram = _best(results, lambda s, t=t: s.drafter is None and s.ngram == t)
            if ngram is None:
                continue
            if ngram.ngram_len is None:  # the user's own length
                lines.append(Line((replace(drafter, ngram=t),), prune=False))
                continue
            lengths = NGRAM_LENGTHS if ngram.ngram_len in NGRAM_LENGTHS else (ngram.ngram_len,)
            lines.append(Line(tuple(replace(drafter, ngram=t, ngram_len=n) for n in lengths),
                              lengths.index(ngram.ngram_len)))
        return lines

    def pairs(self, results: Results) -> list[Line]:
        """The two fastest n-gram types together, each at its best length alone, where both
        drafted (`--spec-type ngram-simple,ngram-mod`: the engine asks the second where the
        first has no draft; setup.py): the pair can take each type's best prompt kinds."""
        pair = ngram_pair(results)
        return [Line((pair,), prune=False)] if pair is not None else []

    def most_starts(self, rounds: int) -> int:
        """Engine starts if nothing is pruned (the duration offered), the settings stage's too."""
        n = len(self.types()) + sum(len(line.setups) - 1 for line in self.lengths()) + (len(self.ngrams) > 1)
        if self.drafters:
            n += (len(P_MINS) * (len(DRAFT_LENGTHS) if self.sweep_n_max else 1) if self.sweep_p_min else 0)
            n += len(self.ngrams) * len(NGRAM_LENGTHS) + len(DRAFT_LENGTHS)
        tune = tuning.most_starts(tuning.dimensions(self.prepared, lambda _flag: True, which=tuning.SWEEP), rounds)
        return n * rounds + (1 + FINALISTS) * max(rounds, FINAL_ROUNDS) + tune


def fitting_drafters(prepared: Prepared, machine: Machine) -> dict[str, Prepared]:
    """The resolver's other drafters, each planned for this machine as the launch would plan
    it, by key: the ones whose plan fits and keeps them (a drafter that cannot run here is not
    swept)."""
    out: dict[str, Prepared] = {}
    for other in prepared.spec.alternatives:
        if other.drafter_key is None:
            continue
        try:
            p = with_drafter(prepared, other, machine)
        except PrepareError:  # its header changed under us: the resolver's drafter is swept still
            continue
        if p.plan.fits and not p.plan.drop_drafter:
            out[other.drafter_key] = p
    return out


def _best(results: Results, which: Callable[[Setup], bool]) -> Setup | None:
    """The fastest setup of a kind (one that drafted, where any did: Results.best's rule)."""
    arms = [a for a in results.full() if which(a.setup)]
    arms = [a for a in arms if a.counters.drafted > 0] or arms
    return max(arms, key=lambda a: a.tokens_per_s).setup if arms else None


def estimated_seconds(prepared: Prepared, settings: MeasureSettings = DEFAULT_SETTINGS,
                      engine_types: Collection[str] = NGRAM_MEASURED, *,
                      tokens_per_s: float | None = None) -> float:  # fmt: skip
    """The longest the sweep takes (nothing pruned; `tokens_per_s` as quick.seconds_per_start)."""
    per_start = quick.seconds_per_start(prepared, settings, tokens_per_s)
    return SweepPlan(prepared, engine_types).most_starts(settings.rounds) * per_start


def sweep(
    prepared: Prepared,
    binary: Path,
    machine: Machine,
    *,
    backend: str = Backend.CPU,
    gpus: Sequence[Gpu] = (),
    settings: MeasureSettings = DEFAULT_SETTINGS,
    cancel: threading.Event | None = None,
    report: Callable[[Progress], None] | None = None,
    fixes: EngineFixes | None = None,
    runner: Runner | None = None,
    engine_types: Collection[str] | None = None,
    caps: EngineCaps | None = None,
    tuned: TunedRecords | None = None,
) -> Sweep:
    """Run the stages and return the table (not recorded: the caller records it, and its
    `tuned` engine settings; `caps`, `tuned` as quick.measure's)."""
    spec = prepared.spec
    steps = Steps(1 + len(settings.prompts), report, cancel)
    drafters = fitting_drafters(prepared, machine)
    run = runner_for(prepared, binary, machine, steps, backend=backend, gpus=gpus, settings=settings,
                     cancel=cancel, fixes=fixes, runner=runner, drafters=drafters)
    started = time.monotonic()
    plan = SweepPlan(prepared, quick.engine_types_of(binary) if engine_types is None else engine_types,
                [d.spec for d in drafters.values()])
    results = Results()
    run_stage(run, plan.types(), settings.rounds, results, steps)
    run_stage(run, plan.lengths(results), settings.rounds, results, steps)
    run_stage(run, plan.pairs(results), settings.rounds, results, steps)
    run_stage(run, plan.p_min(results), settings.rounds, results, steps)
    run_stage(run, plan.combined(results), settings.rounds, results, steps)
    run_stage(run, plan.beside(results), settings.rounds, results, steps)
    # The final: its own results, so the finalists and none are compared on the same rounds.
    finals = Results()
    run_stage(run, plan.final(results), max(settings.rounds, FINAL_ROUNDS), finals, steps)
    base = finals.arms[setup_mod.NONE]
    noise = finals.noise()
    chosen = choice.choose(choice.standing(a, base, noise) for a in finals.full()
                           if a.setup.speculates and a.counters.drafted > 0)
    rows = tuple(
        SweepRow(setup=a.setup, tokens_per_s=a.tokens_per_s, noise=a.noise(), rounds=a.rounds,
            acceptance=a.figures.acceptance, mean_length=a.figures.mean_length, stopped=a.setup in results.stopped,
            what=str(what_is_drafting(decision_for(spec, a.setup))),
            final_tokens_per_s=finals.arms[a.setup].tokens_per_s if a.setup in finals.arms else None)
        for a in results.arms.values() if a.setup.speculates
    )
    result = Sweep(combination=combination(prepared.model.path, spec, binary, machine),
                   base_tokens_per_s=base.tokens_per_s, base_noise=base.noise(), rows=rows, tokens=settings.tokens,
                   prompts=len(settings.prompts), seconds=time.monotonic() - started,
                   when=time.strftime("%Y-%m-%dT%H:%M:%S"),
                   stages_base_tokens_per_s=results.arms[setup_mod.NONE].tokens_per_s,
                   chosen=chosen.setup if chosen is not None else None)
    # The engine's speed settings, on the setup auto will run (core/measuring/tuning.py).
    kept = tuning.settings_stage(run, prepared, result.measurement(), binary, machine,
                                 has_flag=tuning.flags_of(binary, caps), which=tuning.SWEEP,
                                 rounds=settings.rounds, steps=steps, store=tuned)
    steps.finish()
    return replace(result, tuned=kept, seconds=time.monotonic() - started)
