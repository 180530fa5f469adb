"""Learning from use: measure the kept setup again, on the user's own prompts, when their
requests say another setup may be faster (core/measurements/usage_check.py).

When: at the next launch, before its engine starts (`before_launch`: `draftwise launch`, the
window's launch). The measurement starts engines of its own, one setup at a time; beside the
user's engine they would share the processor and the memory and both would suffer, and a
request in flight would slow every round. Before the launch nothing of the user's runs, and the
idle probe (core/machine/idle.py) says whether anything else does.

What: none, the setup kept and its rivals (`Trigger.rivals`: the fastest other setups the
measurement ran), then, for a model with no drafter, the pair of n-gram types the quick
measurement left out where the user's prompts say it may be kept (`quick.second_stage`),
interleaved as every measurement is (core/measuring/arms.py), on up to
`MAX_PROMPTS` of the user's latest prompts (usage.py). The result is recorded like a quick
measurement of the same combination (measured.py), with `Learned` saying what ran before and
how fast it was on those prompts, so the plan made next runs the choice's rule's pick (the
quick measurement's rule, core/measuring/choice.py) and says why:
"ngram-mod 32 is faster on your requests: 1.31× vs 1.12× with ngram-simple 32". At most once a
day per model (usage_check.ONCE_PER_S).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from draftwise.core.kinds import AUTO_SOURCES, Backend
from draftwise.core.launch import prepare, session
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements import measured, usage, usage_check
from draftwise.core.measurements.learned import Learned
from draftwise.core.measuring import arms, quick
from draftwise.core.measuring.arms import Line, MeasureSettings, Progress, Results, Runner, Steps
from draftwise.core.messages import Message, msg
from draftwise.core.speculation import setup as setup_mod
from draftwise.core.speculation.setup import Setup

# The user's latest prompts measured on: each costs a request per setup and round.
MAX_PROMPTS = 4
KIND = "yours"


def prompts_from(texts: Sequence[str], n: int = MAX_PROMPTS) -> tuple[arms.Prompt, ...]:
    """The latest `n` of the user's prompts, as the measurement's prompts."""
    return tuple(arms.Prompt(KIND, t) for t in list(dict.fromkeys(texts))[-n:])


def running_setup(prepared: prepare.Prepared) -> Setup:
    """The setup a planned launch runs (none when it does not speculate)."""
    return setup_mod.of_decision(prepared.spec) if prepared.spec.argv else setup_mod.NONE


def usage_key(planned: session.PlannedLaunch, *, fell_back: bool = False) -> usage.Key:
    """Where a launch's requests are kept: its model file, engine build, machine and setup (none
    once it `fell_back`: the startup fallback runs without speculation)."""
    return usage.key_for(planned.prepared.model.path, planned.engine.binary, planned.machine,
                         setup_mod.NONE if fell_back else running_setup(planned.prepared))


def remeasure(prepared: prepare.Prepared, binary: Path, machine: Machine, trigger: usage_check.Trigger,
              texts: Sequence[str], *, requests: int = 0, settings: MeasureSettings = arms.DEFAULT_SETTINGS,
              backend: str = Backend.CPU, gpus: Sequence[Gpu] = (), cancel: threading.Event | None = None,
              report: Callable[[Progress], None] | None = None, fixes: EngineFixes | None = None,
              runner: Runner | None = None) -> measured.Measurement:
    """Measure none, the kept setup and its rivals on the user's prompts; the measurement (not
    recorded: the caller records it), with `learned` saying what ran before."""
    prompts = prompts_from(texts)
    settings = replace(settings, prompts=prompts, n_max_values=None)
    steps = Steps(1 + len(prompts), report, cancel)
    run = arms.runner_for(prepared, binary, machine, steps, backend=backend, gpus=gpus, settings=settings,
                          cancel=cancel, fixes=fixes, runner=runner)
    started = time.monotonic()
    results = Results()
    setups = list(dict.fromkeys([setup_mod.NONE, trigger.kept, *trigger.rivals]))
    arms.run_stage(run, [Line((s,), prune=False) for s in setups], settings.rounds, results, steps)
    # What the quick measurement's minute may have left out for a model with no drafter: the two
    # n-gram types together, skipped there where the built-in prompts said it could not hold
    # (quick._may_hold); the user's own prompts may say otherwise. A drafter's extras are left
    # to `measure`: each would cost this wait, before the user's launch, a large model's starts.
    if quick.own_setup(prepared.spec).drafter is None:
        extras = [s for s in quick.second_stage(prepared, results) if s not in results.arms]
        if extras:
            arms.run_stage(run, [Line((s,), prune=False) for s in extras], settings.rounds, results, steps)
    steps.finish()
    base = results.arms[setup_mod.NONE]
    # The choice's rule, as the quick measurement's (core/measuring/choice.py): a rival with
    # more machinery than the kept setup (ngram-mod over ngram-simple, a pair over a type) is
    # kept only where it beats it beyond the noise on most of the user's prompts.
    _, best = quick.kept_arm(results, quick.standings(results))
    if best is None:
        raise arms.MeasureError(msg("No setup drafted on your prompts."))
    kept = results.arms[trigger.kept]
    before_ratio = kept.tokens_per_s / base.tokens_per_s if base.tokens_per_s > 0 else 0.0
    s, figures = best.setup, best.figures
    # The length the measurement's n_max shows: the drafter's, else the n-gram type's (as quick.py's).
    flag = (measured.n_max_flag(s.drafter) if s.drafter is not None and s.n_max is not None
            else measured.n_max_flag(s.ngram) if s.drafter is None and s.ngram_len is not None else None)
    return measured.Measurement(
        combination=prepare.combination(prepared.model.path, prepared.spec, binary, machine),
        spec_type=",".join(s.types), what=str(arms.what_is_drafting(arms.decision_for(prepared.spec, s))),
        tokens_per_s_with=best.tokens_per_s, tokens_per_s_without=base.tokens_per_s,
        noise=quick.ratio_error(base, best), acceptance=figures.acceptance, mean_length=figures.mean_length,
        n_max=best.n_max if flag else None, n_max_flag=flag, tokens=settings.tokens, prompts=len(prompts),
        seconds=time.monotonic() - started, when=time.strftime("%Y-%m-%dT%H:%M:%S"), setup=s,
        others=tuple((a.setup, a.tokens_per_s) for a in results.full() if a.setup.speculates),
        learned=Learned(trigger.kept.label(), before_ratio, len(prompts), requests,
                        time.strftime("%Y-%m-%dT%H:%M:%S")),
    )


# ------------------------------------------------------------------ at the next launch
@dataclass(frozen=True)
class LearnOutcome:
    trigger: usage_check.Trigger | None  # None: nothing called for a measurement
    measurement: measured.Measurement | None = None  # recorded; the caller plans again
    note: Message | None = None  # what to tell the user (why it measured, or why not now)


def measured_planned(planned: session.PlannedLaunch) -> session.PlannedLaunch | None:
    """The launch a measurement of this model measures (as `draftwise measure` plans it: an
    old record does not leave the drafter out; a model with no drafter measures n-gram), or
    None when speculation is the user's own choice or turned off."""
    request = planned.request
    again = session.plan_launch(request, planned.engine, planned.machine, planned.records,
                                ignore_measurements=True)
    ngram = quick.ngram_request(again.prepared)
    if ngram is not None:
        again = session.plan_launch(ngram, planned.engine, planned.machine, planned.records,
                                    ignore_measurements=True)
    spec = again.prepared.spec
    return again if spec.argv and spec.source in AUTO_SOURCES and again.prepared.plan.fits else None


@dataclass(frozen=True)
class Due:
    """A measurement on the user's prompts that their requests call for (`due`)."""

    trigger: usage_check.Trigger
    target: session.PlannedLaunch  # the launch measured (measured_planned)
    prompts: tuple[str, ...]
    requests: int  # real requests seen

    def note(self) -> Message:
        return msg("measuring again on {n} of your prompts, because {why}", n=len(prompts_from(self.prompts)),
                   why=self.trigger.reason)


def due(planned: session.PlannedLaunch, store: usage.UsageRecords, *, now: float | None = None) -> Due | None:
    """Whether the user's requests call for measuring again (all of usage_check but the idle
    probe, which the caller asks: it takes seconds)."""
    records = planned.records.measured
    now = time.time() if now is None else now
    if records is None:
        return None
    seen = store.usage(usage_key(planned))
    model = store.model(planned.prepared.model.path)
    if seen is None or len(seen.requests) < usage_check.MIN_REQUESTS or len(model.prompts) < usage_check.MIN_PROMPTS:
        return None  # cheap answers first: planning the measured launch again costs a plan
    target = measured_planned(planned)
    if target is None:
        return None
    prepared = target.prepared
    m = records.get(prepare.combination(prepared.model.path, prepared.spec, planned.engine.binary, planned.machine))
    trigger = usage_check.should_remeasure(seen, m, prompts=model.prompts, last=model.remeasured, now=now, idle=True)
    return Due(trigger, target, model.prompts, seen.count) if trigger is not None else None


def run_due(d: Due, store: usage.UsageRecords, *, now: float | None = None,
            settings: MeasureSettings = arms.DEFAULT_SETTINGS, cancel: threading.Event | None = None,
            report: Callable[[Progress], None] | None = None, runner: Runner | None = None) -> measured.Measurement:
    """Measure again on the user's prompts and record it (with when, for once a day)."""
    target = d.target
    result = remeasure(target.prepared, target.engine.binary, target.machine, d.trigger, d.prompts,
                       requests=d.requests, settings=settings, backend=target.engine.backend,
                       gpus=getattr(target.machine, "gpus", ()), cancel=cancel, report=report,
                       fixes=target.records.fixes, runner=runner)
    records = target.records.measured
    assert records is not None  # due() found a measurement there
    records.record(result)
    store.remeasured(target.prepared.model.path, time.time() if now is None else now)
    return result


def before_launch(planned: session.PlannedLaunch, store: usage.UsageRecords, *, now: float | None = None,
                  idle: Callable[[], bool], settings: MeasureSettings = arms.DEFAULT_SETTINGS,
                  cancel: threading.Event | None = None, report: Callable[[Progress], None] | None = None,
                  on_start: Callable[[Message], None] | None = None, runner: Runner | None = None) -> LearnOutcome:
    """Measure again on the user's prompts when their requests call for it and the machine is
    idle; record the measurement. `idle` is asked last (it takes seconds); `on_start` hears
    why it measures before it does."""
    d = due(planned, store, now=now)
    if d is None:
        return LearnOutcome(None)
    if not idle():
        return LearnOutcome(d.trigger, note=msg("Your requests suggest measuring again ({why}), but the computer is busy; "
                                           "Draftwise asks again at the next launch.", why=d.trigger.reason))
    if on_start is not None:
        on_start(d.note())
    result = run_due(d, store, now=now, settings=settings, cancel=cancel, report=report, runner=runner)
    return LearnOutcome(d.trigger, result, d.note())
