"""The quick measurement: does speculation pay on this machine, and with which setup?

The same prompts with speculation and without (core/measuring/arms.py: one engine start per
setup and round, the setups interleaved round by round, tokens/s from the engine's own
timings, noise from the spread between rounds). What it tries, in two stages:

1. without speculation, and
   - for a model drafter (a draft model, the MTP head, EAGLE-3, DFlash): its draft lengths
     (`measured.n_max_candidates`: 2, 4, 8; 1, 2, 4 for MTP) and, when auto chose it, n-gram
     speculation (ngram-mod) alone;
   - for a model with no drafter (auto's n-gram speculation): ngram-mod and ngram-simple
     (`QUICK_NGRAM_TYPES`) at one length (`QUICK_NGRAM_LENGTH`), so the quick measurement
     covers every model;
2. only where the first stage says it may pay, at most two more setups: the best drafter
   with p-min (`P_MIN_QUICK`) when its acceptance leaves drafts to cut (`P_MIN_ROOM`), and
   the best drafter with ngram-mod beside it (one launch, `--spec-type ngram-mod,X`, at
   `COMBINED_NGRAM_LENGTH`) when the drafter was faster than none; for a model with no
   drafter, the two n-gram types together (`--spec-type ngram-simple,ngram-mod`, each at its
   length) when both drafted, one was faster than none, and the pair may be kept at all
   (`_may_hold`: the engine asks the pair's first type first, so a prompt the first type alone
   slows, the pair slows too): they draft from different places (ngram-simple from a match
   anywhere in the context, the rewrite's source text; ngram-mod from its hash of what came
   before), and on the real Gemma 3 270M's held-out prompts pairs with ngram-simple first
   were the bench's best rows (setup.py);
3. the engine's speed settings on the CPU (repack alone, `tuning.QUICK`), without
   speculation, in a stage of their own (core/measuring/tuning.py); the measurement carries
   what it kept (`Measurement.tuned`), which the caller records beside it.

Before them, none's first start runs the prompts twice (`_first_start`): the spread is the
noise, and the answer length comes from it (`tokens_for`). Each setup runs once; the choice is
the choice's rule (core/measuring/choice.py: the geometric mean of per-prompt speed-ups, a
combination or longer draft only where it beats its simpler form on most prompts), and more
rounds go only to none and the setups that can still win, until the choice is beyond the
noise from none, up to `MAX_ROUNDS` (`_more_rounds`). The settings stage then runs repack
once against none's own arm (its two passes). On the real Gemma 3 270M on 2 cores that is
five engine starts' worth where the pair is skipped, about 50 s. The kept setup becomes the
measurement's `setup`, which auto runs from then on (measured.decide). The sweep
(core/measuring/sweep.py) tries every setup. Nothing is recorded here: the caller records
the result once the whole measurement finished.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.engines.spec_types import (
    DRAFT_P_MIN,
    LENGTH_FLAGS,
    NGRAM_MEASURED,
    NGRAM_MOD,
    NGRAM_SIMPLE,
)
from draftwise.core.kinds import AUTO_SOURCES, Backend
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.prepare import Prepared, Request, combination
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements import live_figures, measured
from draftwise.core.measurements.tuned import TunedRecords
from draftwise.core.measuring import arms, choice, tuning
from draftwise.core.measuring.arm import Arm
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
from draftwise.core.speculation.resolver import SpecDecision
from draftwise.core.speculation.setup import Setup

# The measurement's names from before the arms had a module of their own.
Cancelled, Prompt, PROMPTS = arms.Cancelled, arms.Prompt, arms.PROMPTS

# The n-gram draft length the quick measurement tries each type at (the sweep tries 8 to 64;
# 32 was ngram-mod's fastest of 16/32/64 on the real Gemma 3 270M, acceptance 91 %).
QUICK_NGRAM_LENGTH = 32
# The n-gram types a model with no drafter is measured with: ngram-map-k, which like
# ngram-simple drafts the m-gram after a match, is left to the sweep (it was never the clear
# best of the bench's rows; each type here costs an engine start).
QUICK_NGRAM_TYPES = (NGRAM_MOD, NGRAM_SIMPLE)
# ngram-mod beside a drafter: the engine's own `--spec-default` length (n-max 64 with its n-min
# 48), so it drafts only long repeated runs and leaves the rest to the drafter.
COMBINED_NGRAM_LENGTH = 64
# p-min for a model drafter, tried when its acceptance is below P_MIN_ROOM: below it, drafts
# the drafter was unsure of are rejected often enough that stopping them early may pay.
P_MIN_QUICK = 0.5
P_MIN_ROOM = 0.9
# The settings stage's prompts, half the eight (by kind, the four shortest): a setting changes
# how fast the engine computes a token, measured without speculation, so which text it writes
# matters little, and each start of the stage costs half the time (about 6 s of the 13 a start
# of all eight takes on the real Gemma 3 270M on 2 cores). None's arm is set against it on the
# same four (`Arm.over`).
SETTINGS_KINDS = ("chat", "write code", "translate", "extract JSON")  # of prompt_pool.KINDS
# Rounds of none and the choice at most, when the first ones leave the verdict within the noise.
MAX_ROUNDS = 3
# The quick measurement as the product runs it gives its choice in about a minute (issue 38):
# a round past the first runs only where it, and the settings stage after it, end within this
# (`MeasureSettings.within_s`). On the real Gemma 3 270M on 2 cores a start of the eight prompts
# takes some 13 s and the first stage about 40 s, so a second round of none and two types (81 s
# in all once) does not fit: the choice then stands on its first round, where the rule already
# keeps n-gram speculation off within the noise, and learning from use measures it again on the
# user's own requests.
MINUTE_S = 60.0
# The answer length of the first start, and the noise it must reach to be kept (else longer
# answers for every start, up to MAX_TOKENS: `tokens_for`). Not shorter: at 32 tokens the
# real Gemma 3 270M measured n-gram drafting at 0.96× of none on the eight prompts, while
# bench/generalize.py's sweep at 64 tokens found the same setups at 1.25× on the held-out
# eight — an answer's first tokens repeat its prompt less than the rest do.
FIRST_TOKENS = 64
# A built-in prompt's length, roughly (230 tokens on average on the real Gemma 3 270M).
PROMPT_TOKENS = 250
TARGET_NOISE = 0.04
MAX_TOKENS = 128


def own_setup(spec: SpecDecision) -> Setup:
    """The setup the decision itself runs (its types, and a length it already passes)."""
    return setup_mod.of_decision(spec)


def candidates(spec: SpecDecision, settings: MeasureSettings, extra_args: Sequence[str]) -> tuple[int | None, ...]:
    """Draft lengths to try; (None,) when the type has no length flag or the user set one."""
    flag = measured.n_max_flag(spec.spec_type)
    if flag is None or engine_args.sets(list(extra_args), flag):
        return (None,)
    return settings.n_max_values or measured.n_max_candidates(spec.spec_type) or (None,)


def ngram_request(prepared: Prepared, request: Request | None = None) -> Request | None:
    """The request (default: the one `prepared` was planned from) that measures n-gram
    speculation for a model with no drafter (auto found none and the user did not turn
    speculation off), or None: `measure` then measures the n-gram types instead of refusing."""
    request = request or prepared.request
    if prepared.spec.argv or prepared.chosen.source != resolver.NONE or request is None:
        return None
    return None if request.ngram_when_no_drafter else replace(request, ngram_when_no_drafter=True)


def first_stage(prepared: Prepared, settings: MeasureSettings, engine_types: Collection[str]) -> list[Setup]:
    """Without speculation, then the setups the first stage tries (see the module's text)."""
    spec = prepared.spec
    own = own_setup(spec)
    automatic = spec.source in AUTO_SOURCES
    lengths = candidates(spec, settings, prepared.extra_args)
    setups = [setup_mod.NONE]
    if own.drafter is not None:
        setups += [own if n is None else replace(own, n_max=n) for n in lengths]
        if automatic and own.ngram is None and NGRAM_MOD in engine_types:
            setups.append(Setup(ngram=NGRAM_MOD, ngram_len=_ngram_length(NGRAM_MOD, prepared)))
    elif own.ngram is not None:
        # One length per type (unless asked for more): the types differ more than the lengths.
        if lengths != (None,) and settings.n_max_values is None and own.ngram in NGRAM_MEASURED:
            lengths = (QUICK_NGRAM_LENGTH,)
        setups += [own if n is None else replace(own, ngram_len=n) for n in lengths]
        if automatic and own.ngram in NGRAM_MEASURED:
            setups += [Setup(ngram=t, ngram_len=_ngram_length(t, prepared)) for t in QUICK_NGRAM_TYPES
                       if t != own.ngram and t in engine_types]
    return list(dict.fromkeys(setups))


def second_stage(prepared: Prepared, results: Results) -> list[Setup]:
    """The cheap extras the first stage's figures call for (at most two; see the module's text)."""
    spec, own = prepared.spec, own_setup(prepared.spec)
    if own.drafter is None:
        return _ngram_pair(prepared, results)
    base = results.arms.get(setup_mod.NONE)
    drafter = max((a for a in results.full() if a.setup.drafter is not None), key=lambda a: a.tokens_per_s,
                  default=None)
    if base is None or drafter is None or drafter.refused:
        return []  # a drafter whose drafts are refused: p-min cannot make it pay, nor n-gram beside it
    out: list[Setup] = []
    acceptance = drafter.figures.acceptance
    if (acceptance is not None and acceptance < P_MIN_ROOM and not drafter.setup.p_min
            and not engine_args.sets(list(prepared.extra_args), DRAFT_P_MIN, "--draft-p-min")):
        out.append(replace(drafter.setup, p_min=P_MIN_QUICK))
    ngram = next((a for a in results.full() if a.setup.drafter is None and a.setup.ngram is not None), None)
    if spec.source in AUTO_SOURCES and ngram is not None and drafter.tokens_per_s > base.tokens_per_s:
        t = ngram.setup.ngram
        length = None if engine_args.sets(list(prepared.extra_args), LENGTH_FLAGS[t]) else COMBINED_NGRAM_LENGTH
        out.append(replace(drafter.setup, ngram=t, ngram_len=length))
    return out


def _ngram_pair(prepared: Prepared, results: Results) -> list[Setup]:
    """The two n-gram types of the first stage together, for auto's n-gram speculation, when
    both drafted, one of them was faster than none, and the pair may be kept (`_may_hold`)."""
    base = results.arms.get(setup_mod.NONE)
    if prepared.spec.source not in AUTO_SOURCES or base is None:
        return []
    pair = ngram_pair(results)
    fastest = max((a.tokens_per_s for a in results.full() if a.setup.drafter is None and a.setup.ngram is not None
                   and a.setup.ngram2 is None and a.counters.drafted > 0), default=0.0)
    return [pair] if pair is not None and fastest > base.tokens_per_s and _may_hold(pair, results) else []


def _may_hold(pair: Setup, results: Results) -> bool:
    """Whether the pair can be kept at all: the engine asks its first type for a draft and the
    second only where the first has none (common/speculative.cpp `common_speculative_draft`),
    so on every prompt the pair makes the first type's drafts, and a prompt where the first
    type alone is slower than none beyond the noise is slow with the pair too. A combination
    slower than none on a prompt where a type alone is not is never kept (choice.admissible),
    so where the first type is slow on a prompt the second is not, the pair is not started.
    On the real Gemma 3 270M on 2 cores, ngram-simple (the first) wrote the short chat
    question at 0.76-0.89× of none and ngram-mod at 0.95-1.06×, in three measurements of
    five starts each (60.6-65.6 s): the pair was never kept, and the start it cost is what
    kept them over the minute."""
    alone = {s.setup.ngram: s for s in standings(results)
             if s.setup.drafter is None and s.setup.ngram2 is None and s.setup.ngram in pair.ngrams}
    first, second = alone.get(pair.ngram), alone.get(pair.ngram2)
    if first is None or second is None:
        return True
    return choice.slower_on(first) <= choice.slower_on(second)


def _ngram_length(ngram: str, prepared: Prepared) -> int | None:
    """The quick length for an n-gram type, or None (the engine's) when the user set it."""
    return None if engine_args.sets(list(prepared.extra_args), LENGTH_FLAGS[ngram]) else QUICK_NGRAM_LENGTH


def engine_types_of(binary: Path) -> tuple[str, ...]:
    """The speculative types this engine runs (its --help, cached); () when it cannot say."""
    try:
        return capabilities.capabilities(binary).spec_types
    except (OSError, ValueError):
        return ()


def engine_starts(prepared: Prepared, settings: MeasureSettings = DEFAULT_SETTINGS,
                  engine_types: Collection[str] = NGRAM_MEASURED) -> int:
    """How many times a measurement loads the model: where the answer length comes from the
    noise (`draftwise measure`, the window), each setup once and none's first start, with its
    two passes, counted twice (more rounds go only to a verdict within the noise, which the
    offer does not count); else every setup every round. Each setting once, with no final
    (`measure`'s settings stage)."""
    # The second stage: two drafter extras, or the pair of n-gram types.
    extras = 2 if own_setup(prepared.spec).drafter is not None else 1 if prepared.spec.source in AUTO_SOURCES else 0
    tune = _settings_starts(prepared)
    rounds = 1 if settings.tokens_from_noise else settings.rounds
    first = 1 if settings.tokens_from_noise else 0  # none's two passes: one start's load, two of prompts
    return rounds * (len(first_stage(prepared, settings, engine_types)) + extras) + tune + first


def estimated_seconds(prepared: Prepared, settings: MeasureSettings = DEFAULT_SETTINGS,
                      engine_types: Collection[str] = NGRAM_MEASURED, *,
                      tokens_per_s: float | None = None) -> float:  # fmt: skip
    """A rough duration for the offer: every arm loads the model and generates the prompts
    (at `tokens_per_s`, the speed estimate here, where the caller knows it); the settings
    stage's starts, the prompts of SETTINGS_KINDS alone."""
    tune = _settings_starts(prepared)
    half = replace(settings, prompts=_settings_prompts(settings))
    return ((engine_starts(prepared, settings, engine_types) - tune) * seconds_per_start(prepared, settings, tokens_per_s)
            + tune * seconds_per_start(prepared, half, tokens_per_s))


def _settings_starts(prepared: Prepared) -> int:
    """The settings stage's starts: each setting of `tuning.QUICK` that applies, once."""
    return sum(len(d.values) - 1 for d in tuning.dimensions(prepared, lambda _flag: True, which=tuning.QUICK))


def seconds_per_start(prepared: Prepared, settings: MeasureSettings, tokens_per_s: float | None = None) -> float:
    """One engine start: loading reads the weights (~1 GB/s from a warm disk); generation at
    `tokens_per_s` (the speed estimate here, speed.speed_here: every arm counted at the
    model's own speed, a drafter's help not counted, so the figure errs long), else at one
    read of the weights a token at ~20 GB/s of memory bandwidth, generously."""
    weights = prepared.model.tensor_bytes + (prepared.draft.tensor_bytes if prepared.draft else 0)
    load = 2.0 + weights / 1e9
    per_token = 1.0 / tokens_per_s if tokens_per_s else max(weights / 20e9, 0.002)
    tokens = FIRST_TOKENS if settings.tokens_from_noise else settings.tokens
    # Reading the prompts (a few hundred tokens each) runs in batches, some ten times the rate
    # of writing on a CPU.
    reading = len(settings.prompts) * PROMPT_TOKENS / 10
    return load + (len(settings.prompts) * tokens + reading + 8) * per_token


def draft_cost(prepared: Prepared) -> float:
    """A drafted token's cost in target tokens, from the weight sizes the headers give."""
    spec = prepared.spec
    if spec.spec_type and spec.spec_type.startswith("ngram") and prepared.draft is None:
        return 0.0  # a hash-table lookup
    if (spec.spec_type or "").endswith("draft-mtp") and prepared.draft is None:
        layers = prepared.model.block_count or 1
        return (prepared.model.nextn_predict_layers or 1) / layers
    if prepared.draft is not None:
        return measured.draft_cost_from_sizes(prepared.draft.tensor_bytes, prepared.model.tensor_bytes)
    return 0.0


# ------------------------------------------------------------------ the measurement
def tokens_for(noise: float, prompts: int) -> int:
    """The answer length the quick measurement runs at, from the noise of its first start at
    `FIRST_TOKENS` (the spread of one prompt between its two passes, RMS over the prompts):
    the choice ranks the geometric mean over the prompts, whose error is that over √prompts;
    while it is within `TARGET_NOISE` the first length stays. Else longer answers, as a
    request's timing strays less the longer it runs (roughly as 1/√length), up to
    `MAX_TOKENS`, in steps of 16."""
    level = noise / math.sqrt(max(1, prompts))
    if level <= TARGET_NOISE:
        return FIRST_TOKENS
    wanted = FIRST_TOKENS * (level / TARGET_NOISE) ** 2
    return int(min(MAX_TOKENS, 16 * math.ceil(wanted / 16)))


def measure(
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
    clock: Callable[[], float] = time.monotonic,
) -> measured.Measurement:
    """Run the stages and return the measurement (not recorded: the caller records it, and
    its `tuned` engine settings). `fixes`: the engine-fix record (a fix found on the way is
    written there at once); `tuned`: the engine settings' record (a setting that crashed the
    engine is written there at once, and none recorded so is tried); `caps`: the build's
    flags (default: its --help); `runner`: runs one setup's round (default: on the real
    engine; tests pass their own, and a `clock` to go with it)."""
    spec = prepared.spec
    steps = Steps(1 + len(settings.prompts), report, cancel)
    settings = replace(settings, stop_refused=True)  # a drafter refused stops early (arms.refused)
    run = runner_for(prepared, binary, machine, steps, backend=backend, gpus=gpus, settings=settings,
                     cancel=cancel, fixes=fixes, runner=runner)
    started = clock()
    types = engine_types_of(binary) if engine_types is None else engine_types
    results = Results()
    first = first_stage(prepared, settings, types)
    if not any(s.speculates for s in first):
        raise MeasureError(msg("There is no speculation to measure for this model: {why}",
                               why=f"--spec-type {spec.spec_type}"))
    settings = _first_start(run, results, settings, steps)
    single = [Line((s,), prune=False) for s in first if s not in results.arms]
    run_stage(run, single, 1, results, steps)
    extras = [s for s in second_stage(prepared, results) if s not in results.arms]
    if extras:
        run_stage(run, [Line((s,), prune=False) for s in extras], 1, results, steps)
    # The settings stage's starts, each of the SETTINGS_KINDS prompts alone: in rounds of all of them.
    tuning_rounds = _settings_starts(prepared) * len(_settings_prompts(settings)) / max(1, len(settings.prompts))
    out = _more_rounds(run, results, settings, steps,
                       fits=lambda more: within(settings.within_s, clock() - started, results, more + tuning_rounds))
    m = _measurement(prepared, binary, machine, results, settings, clock() - started, out=out)
    # The engine's speed settings (core/measuring/tuning.py), measured without speculation:
    # a setting changes how fast the engine computes a token, the same with drafts or without
    # (repack: 1.10× on none and on ngram-simple 32 in bench/generalize.py's sweep of the real
    # Gemma 3 270M), but it also rounds differently, so greedy answers change and with them
    # what n-gram drafts are accepted: on a drafting setup one prompt went from 1.00× to 1.81×
    # with -nr there. Without drafts each prompt's speed is the setting's alone, and none's
    # first start has two rounds already.
    kept = tuning.settings_stage(run, prepared, m, binary, machine, has_flag=tuning.flags_of(binary, caps),
                                 which=tuning.QUICK, rounds=1, steps=steps, store=tuned,
                                 measured=_settings_half(run, results, settings, steps), carrier=setup_mod.NONE)
    steps.finish()
    return replace(m, tuned=kept, seconds=clock() - started)


def _settings_prompts(settings: MeasureSettings) -> tuple[arms.Prompt, ...]:
    """The settings stage's prompts: those of SETTINGS_KINDS, else (none of those kinds among
    the prompts: a measurement on the user's own) all of them."""
    return tuple(p for p in settings.prompts if p.kind in SETTINGS_KINDS) or settings.prompts


def within(limit: float | None, elapsed: float, results: Results, more: float) -> bool:
    """Whether `more` rounds of the prompts (an engine start of all of them is one) end the
    measurement within `limit` seconds, at the seconds a round took so far (`elapsed` over the
    rounds in `results`; none's first start, two passes on one load, counts two). No limit:
    always."""
    done = sum(a.rounds for a in results.arms.values())
    return limit is None or done == 0 or elapsed + more * elapsed / done <= limit


def _settings_half(run: Runner, results: Results, settings: MeasureSettings, steps: Steps) -> dict[Setup, Arm]:
    """The settings stage's prompts (`_settings_prompts`), where the runner is the engine's
    (each start then runs those alone), and none's arm over the same prompts."""
    kinds = {p.kind for p in _settings_prompts(settings)}
    half = {i for i, p in enumerate(settings.prompts) if p.kind in kinds}
    base = results.arms[setup_mod.NONE]
    if not isinstance(run, arms.EngineArms) or not half or len(half) == len(settings.prompts) or not base.timed:
        return dict(results.arms)
    run.settings = replace(run.settings, only=tuple(settings.prompts[i].kind for i in sorted(half)))
    steps.per_arm = 1 + len(half)
    return {setup_mod.NONE: base.over(half)}


def _first_start(run: Runner, results: Results, settings: MeasureSettings, steps: Steps) -> MeasureSettings:
    """Without speculation first. Where the settings take the answer length from the noise,
    this start runs the prompts twice at FIRST_TOKENS (without speculation nothing carries from
    one request to the next): the two passes are its two rounds when the noise allows that
    length, and set a longer one for every start when it does not. Returns the settings the
    rest of the measurement runs with."""
    if not settings.tokens_from_noise or not isinstance(run, arms.EngineArms):
        return settings
    run.settings = replace(settings, tokens=FIRST_TOKENS, passes=2)
    steps.per_arm = 1 + 2 * len(settings.prompts)
    steps.plan(1)
    try:
        first = run(setup_mod.NONE, 0)
    finally:
        steps.per_arm = 1 + len(settings.prompts)
    tokens = tokens_for(first.noise(), len(settings.prompts))
    settings = replace(settings, tokens=tokens, passes=1)
    run.settings = settings
    if tokens == FIRST_TOKENS:
        results.add(first)
    return settings


def standings(results: Results) -> list[choice.Standing]:
    """Every speculating setup that drafted, against none, prompt by prompt; not one stopped
    because its drafts were refused (its figures cover its first prompts alone, and it cannot
    pay: it stays among the measurement's others, by its tokens/s)."""
    base = results.arms[setup_mod.NONE]
    noise = results.noise()
    return [choice.standing(a, base, noise) for a in results.full()
            if a.setup.speculates and a.counters.drafted > 0 and not a.refused]


def _chosen(ranked: Sequence[choice.Standing], out: Collection[Setup]) -> choice.Standing | None:
    """The rule's choice among the setups still in the running (each held to every simpler form
    measured), else among all when none of those is admissible."""
    return choice.choose(ranked, among=[s.setup for s in ranked if s.setup not in out]) or choice.choose(ranked)


def kept_arm(results: Results, ranked: Sequence[choice.Standing],
             out: Collection[Setup] = ()) -> tuple[choice.Standing | None, Arm | None]:
    """The rule's choice (`_chosen`) and its arm; with none admissible, no standing and the
    fastest arm (`Results.best`). The quick measurement's and learning from use's pick."""
    chosen = _chosen(ranked, out)
    return chosen, results.arms[chosen.setup] if chosen is not None else results.best()


def _more_rounds(run: Runner, results: Results, settings: MeasureSettings, steps: Steps,
                 fits: Callable[[int], bool] = lambda _more: True) -> set[Setup]:
    """Rounds after the first, for none and the setups still in the running: a setup beyond
    the noise below the one chosen so far gets none (it cannot become the choice), and rounds
    go on while the choice and none are within the noise of each other, up to MAX_ROUNDS, and
    while `fits` says that many more starts keep the measurement within its time (MINUTE_S).
    Returns the setups left out."""
    out: set[Setup] = set()  # once behind, out for good: no round can make it the choice
    while True:
        ranked = standings(results)
        chosen = _chosen(ranked, out)
        if chosen is None:
            return out
        out |= {s.setup for s in ranked if choice.behind(s, chosen) and s.setup != chosen.setup}
        running = [s.setup for s in ranked if s.setup not in out]
        dropped = [s.setup for s in ranked if s.setup in out]
        # Ahead of the choice, yet not the choice: it has not beaten a simpler form beyond the
        # rounds' noise yet, which more rounds can settle (not a lead on half the prompts or
        # fewer, nor one within the prompts' own spread: the kinds differ, not the rounds).
        contenders = [s.setup for s in ranked if s.setup in running and s.setup != chosen.setup
                      and choice.rounds_may_settle(s, chosen)]
        rounds = min(results.arms[s].rounds for s in (setup_mod.NONE, *running))
        # Settled once the choice is beyond the noise from none, with none measured the planned
        # rounds (its first start's two passes count), and no contender: the others within the
        # noise of the choice are a tie more rounds of these prompts would not break (they
        # differ by kind of prompt, not by chance), which learning from use settles on the
        # user's own.
        settled = results.arms[setup_mod.NONE].rounds >= settings.rounds and not contenders and (
            chosen.geomean * (1 - chosen.error) > 1 or chosen.geomean * (1 + chosen.error) < 1)
        if rounds >= settings.rounds:  # past the planned rounds: the verdict on the choice (and its contenders)
            running = [chosen.setup, *contenders]
            rounds = min(results.arms[s].rounds for s in (setup_mod.NONE, *running))
        if settled or rounds >= MAX_ROUNDS:
            return out
        todo = [s for s in (setup_mod.NONE, *running) if results.arms[s].rounds <= rounds]
        if not todo:
            return out
        if not fits(len(todo)):
            steps.say(msg("no round {r}: it would take the measurement past {seconds} s; the choice stands on what "
                          "was measured, and learning from use checks it on your own requests",
                          r=rounds + 1, seconds=f"{settings.within_s or 0:.0f}"))
            return out
        steps.say(msg("round {r}: still checking {running} against none{dropped}", r=rounds + 1,
                      running=", ".join(s.label() for s in running),
                      dropped=msg("; left out, behind beyond the noise: {setups}",
                                  setups=", ".join(s.label() for s in dropped)) if dropped else ""))
        steps.plan(len(todo))
        for s in (reversed(todo) if rounds % 2 else todo):
            results.add(run(s, rounds))


def ratio_error(base: Arm, best: Arm) -> float:
    """The relative error of best/base: their standard errors combined."""
    return math.sqrt(base.error() ** 2 + best.error() ** 2)


def _measurement(prepared: Prepared, binary: Path, machine: Machine, results: Results, settings: MeasureSettings,
                 seconds: float, *, out: Collection[Setup] = ()) -> measured.Measurement:
    spec = prepared.spec
    base = results.arms[setup_mod.NONE]
    ranked = standings(results)
    chosen, best = kept_arm(results, ranked, out)
    assert best is not None  # the first stage always has a speculating setup
    figures = best.figures
    s = best.setup
    flag = (LENGTH_FLAGS[s.drafter] if s.drafter is not None and s.n_max is not None
            else LENGTH_FLAGS[s.ngram] if s.drafter is None and s.ngram is not None and s.ngram_len is not None
            else None)
    # The line that chose the kept length: the kept drafter alone at each length, or, where
    # n-gram alone is kept, its type alone (no p-min, nothing beside it). Never another
    # kind's lengths: the drafter's 2/4/8 beside a kept ngram-mod 32 read as if 32 had lost.
    tried = tuple((a.n_max, a.tokens_per_s) for a in results.full()
                  if a.n_max is not None and not a.setup.p_min and not a.setup.ngram2
                  and a.setup.drafter == s.drafter and a.setup.ngram == (None if s.drafter else s.ngram))
    return measured.Measurement(
        combination=combination(prepared.model.path, spec, binary, machine),
        spec_type=",".join(s.types), what=str(what_is_drafting(decision_for(spec, s))),
        tokens_per_s_with=base.tokens_per_s * chosen.geomean if chosen is not None else best.tokens_per_s,
        tokens_per_s_without=base.tokens_per_s,
        noise=chosen.error if chosen is not None else ratio_error(base, best),
        kinds=tuple(p.kind for p in settings.prompts),
        per_prompt=tuple((st.setup, st.speedups) for st in ranked),
        acceptance=figures.acceptance, mean_length=figures.mean_length,
        n_max=best.n_max if flag else None, n_max_flag=flag,
        tried=tried, tokens=settings.tokens, prompts=len(settings.prompts),
        seconds=seconds, when=time.strftime("%Y-%m-%dT%H:%M:%S"), setup=s,
        others=tuple((a.setup, a.tokens_per_s) for a in results.full() if a.setup.speculates),
    )


def watch_for(prepared: Prepared) -> live_figures.Watch:
    """The live-figures watch for a launch of `prepared` (break-even from its drafter's cost)."""
    spec = prepared.spec
    speculating = bool(spec.argv)
    break_even = live_figures.break_even_for(spec.spec_type, spec.lengths, draft_cost(prepared)) if speculating else None
    return live_figures.Watch(speculating=speculating, what=what_is_drafting(spec), break_even=break_even,
                          measured=prepared.measurement is not None)
