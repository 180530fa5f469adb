"""The settings stage: the engine's speed settings tried on the setup the measurement chose.

After the speculation stages (core/measuring/quick.py, sweep.py) have chosen what auto
will run (`carrier_of`: the best setup where auto would run it, else none), this stage tries
the engine's speed settings on that one setup — never crossed with every setup, so it costs a
few starts — with the same arms, rounds and noise bounds (core/measuring/arms.py), each
start also timing a long prompt (`Settings.prompt_speed`), because a setting is judged on the
time of a whole request (core/measurements/tuned.py, "The rule").

The dimensions, each where it applies to this engine build (its `--help` lists the flag), this
plan and this device, and where neither the user's own arguments nor a remembered engine fix
set it (theirs win), nor a fault recorded on this machine ruled it out:

- *repack* (`-nr`): where the plan has re-laid copies of the weights (the CPU's AMX or
  CPU_REPACK buffers: no GPU, a CPU module that takes the model's quant);
- *threads* (`-t`): the physical cores (the engine's default) and one either side, never more
  than the logical cores, where any layer runs on the CPU;
- *flash attention* (`-fa off`) where every layer runs on the CPU: `auto` (the default) turns
  it on there (the engine's log: "Flash Attention enabled"), so off is the one other choice;
- the sweep also tries *threads for prompts* (`-tb` at the logical cores, where there are more
  than physical ones: prompt processing is compute-bound and may use them) and *the prompt
  batch* (`-ub` 256 and 1024 beside the engine's 512), judged on prompt speed alone. The
  logical batch (`-b`, 2048) is not a dimension: the engine computes a prompt in `-ub`-sized
  pieces and takes `-ub` as min(`-b`, `-ub`) (llama-context.cpp), so `-b` changes the work only
  below `-ub`, which is the `-ub` line's own setting; above it, it only bounds how many of a
  prompt's tokens one server step hands over, for one request at a time the same pieces.

One stage runs every dimension as a line from the defaults (the lines interleaved round by
round, so the defaults and every setting meet the same machine; a line stops widening once a
setting is beyond the noise and falling). Each dimension's fastest setting beyond the noise
(`tuned.faster`) is kept; where more than one dimension changed, the settings together, the
best single one and the defaults run again in a final of their own (`FINAL_ROUNDS` at least),
and the fastest of those beyond the noise is kept. Otherwise the engine's own settings stay:
a setting is passed only when measured faster here.

A setting whose start fails (`arms.SettingFault`) is left out of the stage; a crash (illegal
instruction, segfault, abort) is recorded once per machine and engine build (`on_fault`), and
no later measurement here tries it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.engines.engine_settings import DEFAULTS, FLAGS, EngineSettings
from draftwise.core.kinds import AUTO_SOURCES, DeviceKind, Switch
from draftwise.core.launch import crash
from draftwise.core.launch.prepare import Prepared
from draftwise.core.machine import cores
from draftwise.core.measurements import live_figures, tuned
from draftwise.core.measurements.measurement import Combination, Measurement
from draftwise.core.measuring import choice
from draftwise.core.measuring.arm import Arm
from draftwise.core.measuring.arms import (
    EngineArms,
    Line,
    Results,
    Runner,
    SettingFault,
    Steps,
    run_stage,
)
from draftwise.core.planning import cpu_buffers
from draftwise.core.speculation import resolver
from draftwise.core.speculation import setup as setup_mod
from draftwise.core.speculation.setup import Setup

# The dimensions every CPU launch may gain from; the quick measurement tries repack alone
# (threads are the sweep's: on 2 cores one thread is the only other value, and on the real
# Gemma 3 270M it wrote 66 tokens/s against the default's 97; flash attention off was within
# the noise of the default there, 1.03× on none and on ngram-simple 32 in bench/generalize.py's
# sweep, and each setting is one more engine start of the minute the quick measurement has),
# the sweep all and the prompts'.
BASICS = ("repack", "threads", "flash_attn")
QUICK = ("repack",)
SWEEP = (*BASICS, "threads_batch", "ubatch")
UBATCHES = (256, 1024)  # beside the engine's 512
FINAL_ROUNDS = 3  # as the sweep's final: its verdict is the one kept
# What a start that failed this way says about the setting: the engine crashed on it.
CRASHES = frozenset({crash.ILLEGAL_INSTRUCTION, crash.SEGFAULT, crash.ASSERT, crash.UNKNOWN})


@dataclass(frozen=True)
class Dimension:
    name: str  # an EngineSettings field
    values: tuple[Any, ...]  # in order; None (the engine's default) at `start`
    start: int
    prompt_only: bool = False  # judged on prompt speed alone (the batch sizes)


def carrier_of(m: Measurement, *, automatic: bool, on_trial: bool) -> Setup:
    """The setup auto runs after this measurement (the settings are measured on it): the best
    where it pays (n-gram on trial) or is not slower (an automatic drafter; a chosen one stays),
    else none."""
    if m.setup is None or not m.runs(automatic=automatic, on_trial=on_trial):
        return setup_mod.NONE
    return replace(m.setup, engine=DEFAULTS)


def dimensions(prepared: Prepared, has_flag: Callable[[str], bool], *, which: Collection[str] = BASICS,
               fixed: EngineSettings = DEFAULTS, faults: Collection[EngineSettings] = (),
               physical: int | None = None, logical: int | None = None) -> list[Dimension]:
    """The dimensions that apply (see the module's text). `fixed`: engine fixes found since the
    plan (they win like the remembered ones in `prepared.engine` and the user's own arguments);
    `faults`: settings that crashed on this machine before."""
    plan, prefs = prepared.plan, prepared.prefs
    given = prepared.extra_args  # the user's own
    taken = set(prepared.engine.merged(fixed).changed())  # Draftwise's own: the fixes, a setting
    physical = physical or cores.physical()
    logical = max(logical or cores.logical(), physical)
    holding = [d for d in plan.per_device if d.layers]
    on_cpu = [d for d in holding if d.kind == DeviceKind.CPU]
    only_cpu = bool(holding) and len(on_cpu) == len(holding)
    out: list[Dimension] = []
    if "repack" in which and plan.bytes.cpu_extra and not prefs.no_repack and "repack" not in taken \
            and not engine_args.sets(given, *cpu_buffers.NO_REPACK_FLAGS):
        out.append(Dimension("repack", (None, False), 0))
    if "threads" in which and on_cpu:
        around = [n for n in (physical - 1, physical + 1) if 1 <= n <= logical]
        values = (*(n for n in around if n < physical), None, *(n for n in around if n > physical))
        if len(values) > 1:
            out.append(Dimension("threads", values, values.index(None)))
    if "threads_batch" in which and on_cpu and logical > physical:
        out.append(Dimension("threads_batch", (None, logical), 0, prompt_only=True))
    if "flash_attn" in which and only_cpu and prefs.flash_attn is None:
        out.append(Dimension("flash_attn", (None, Switch.OFF), 0))
    if "ubatch" in which and prefs.ubatch is None and prefs.batch is None:
        out.append(Dimension("ubatch", (UBATCHES[0], None, UBATCHES[1]), 1, prompt_only=True))
    kept = []
    for d in out:
        if not has_flag(FLAGS[d.name][0]) or engine_args.sets(given, *FLAGS[d.name]) or d.name in taken:
            continue  # a flag this build does not know is never passed; the user's or a fix's wins
        values = tuple(v for v in d.values if v is None or EngineSettings(**{d.name: v}) not in faults)
        if len(values) > 1:
            kept.append(replace(d, values=values, start=values.index(None)))
    return kept


def most_starts(dims: Sequence[Dimension], rounds: int) -> int:
    """Engine starts if nothing is pruned, the final included."""
    if not dims:
        return 0
    n = 1 + sum(len(d.values) - 1 for d in dims)
    return n * rounds + (3 * max(rounds, FINAL_ROUNDS) if len(dims) > 1 else 0)


def _speed(arm: Arm) -> tuned.Speed:
    return tuned.Speed(arm.tokens_per_s, arm.prompt_per_s, arm.error(), arm.prompt_error())


def _empty(setup: Setup) -> Arm:
    return Arm(setup, 0.0, 0.0, (), live_figures.Counters(), rounds=0)


def tune(run: Runner, carrier: Setup, dims: Sequence[Dimension], rounds: int, steps: Steps, *,
         key: Combination, on_fault: Callable[[SettingFault], None] | None = None,
         base_arm: Arm | None = None) -> tuned.Tuned | None:
    """Run the stage on `carrier` and return what to keep (None without a dimension).
    `base_arm`: the carrier at the engine's defaults as the speculation stages measured it
    (the quick measurement's): not run again; each setting then runs once, and a second time
    only while it is ahead of the defaults (core/measuring/choice.py)."""
    if not dims:
        return None
    started = time.monotonic()
    faulted: dict[Setup, SettingFault] = {}

    def guarded(setup: Setup, r: int) -> Arm:
        if setup in faulted:
            return _empty(setup)
        try:
            return run(setup, r)
        except SettingFault as exc:
            faulted[setup] = exc
            if on_fault is not None:
                on_fault(exc)
            return _empty(setup)

    def at(settings: EngineSettings) -> Setup:
        return replace(carrier, engine=settings)

    base = at(DEFAULTS)
    results = Results()
    lines = [Line(tuple(at(EngineSettings(**{d.name: v})) for v in d.values), d.start) for d in dims]
    if base_arm is not None:
        results.add(replace(base_arm, setup=base))
        run_stage(guarded, lines, 1, results, steps)
        _second_rounds(guarded, results, base, faulted, rounds, steps)
    else:
        run_stage(guarded, lines, rounds, results, steps)
    ran = {s: a for s, a in results.arms.items() if s not in faulted}
    winners: list[tuple[float, EngineSettings]] = []
    base_speed = _speed(ran[base])
    noise = results.noise()
    for d in dims:
        best, best_gain = None, 0.0
        for v in d.values:
            arm = ran.get(at(EngineSettings(**{d.name: v})))
            if v is None or arm is None:
                continue
            speed = _speed(arm)
            g = tuned.gain(speed, base_speed, prompt_only=d.prompt_only)
            # The request's time beyond the noise, and (but for a prompt-only setting) the
            # choice's rule prompt by prompt: faster on most, slower on none.
            if (tuned.faster(speed, base_speed, prompt_only=d.prompt_only) and g > best_gain
                    and (d.prompt_only or choice.holds(choice.standing(arm, ran[base], noise)))):
                best, best_gain = arm.setup.engine, g
        if best is not None:
            winners.append((best_gain, best))
    chosen, final = DEFAULTS, Results()
    if len(winners) == 1:
        chosen = winners[0][1]
    elif winners and base_arm is not None:
        # The quick measurement runs no final: the best single setting, each measured beside
        # the defaults; settings together are the sweep's to measure.
        chosen = max(winners, key=lambda w: w[0])[1]
    elif winners:
        together = DEFAULTS
        for _g, w in winners:
            together = together.merged(w)
        single = max(winners, key=lambda w: w[0])[1]
        run_stage(guarded, [Line((s,), prune=False) for s in (base, at(together), at(single))],
                  max(rounds, FINAL_ROUNDS), final, steps)
        speeds = {a.setup.engine: _speed(a) for a in final.arms.values() if a.setup not in faulted and a.rounds}
        beats = [s for s in (together, single) if s in speeds and tuned.faster(speeds[s], speeds[DEFAULTS])]
        # Settings together only where they beat the best single one on most prompts, as a
        # combination of speculation types must beat each type alone (choice.py).
        if together in beats and single in speeds and not _together_holds(final, at(together), at(single)):
            beats.remove(together)
        chosen = max(beats, key=lambda s: tuned.gain(speeds[s], speeds[DEFAULTS]), default=DEFAULTS)
    source = final if chosen in {a.setup.engine for a in final.arms.values()} else results
    rows = tuple(
        tuned.Row(a.setup.engine, _speed(a), a.rounds, stopped=a.setup in results.stopped,
                  fault=str(faulted[a.setup].message) if a.setup in faulted else "",
                  final=_speed(final.arms[a.setup]) if a.setup in final.arms else None)
        for a in results.arms.values())
    extra = tuple(tuned.Row(a.setup.engine, _speed(a), a.rounds, final=_speed(a))
                  for a in final.arms.values() if a.setup not in results.arms)
    return tuned.Tuned(
        combination=key, settings=chosen, speed=_speed(source.arms[at(chosen)]), base=_speed(source.arms[base]),
        rows=rows + extra, on=carrier.label(), prompt_only=tuple(d.name for d in dims if d.prompt_only),
        seconds=time.monotonic() - started, when=time.strftime("%Y-%m-%dT%H:%M:%S"))


def _together_holds(final: Results, together: Setup, single: Setup) -> bool:
    arms = final.arms
    if together not in arms or single not in arms:
        return False
    noise = final.noise()
    return choice.beats(choice.standing(arms[together], arms[single], noise),
                        choice.standing(arms[single], arms[single], noise))


def _second_rounds(run: Runner, results: Results, base: Setup, faulted: Collection[Setup], rounds: int,
                   steps: Steps) -> None:
    """Up to `rounds` rounds for each setting still ahead of the defaults (a geometric mean
    above 1 prompt by prompt); one behind them has lost already (the quick measurement's)."""
    noise = results.noise()
    ahead = [s for s, a in results.arms.items() if s != base and s not in faulted and a.rounds
             and choice.standing(a, results.arms[base], noise).geomean > 1.0]
    for r in range(1, rounds):
        todo = [s for s in ahead if results.arms[s].rounds <= r]
        steps.plan(len(todo))
        for s in todo:
            results.add(run(s, r))


def recording_faults(store: tuned.TunedRecords | None, binary: Any, machine: Any) -> Callable[[SettingFault], None]:
    """`on_fault` for `tune`: a crash of a setting recorded at once for this machine and engine
    build (a start that failed otherwise only leaves it out of this stage)."""
    def record(exc: SettingFault) -> None:
        if store is not None and exc.cause is not None and exc.cause.kind in CRASHES:
            store.record_fault(binary, machine, exc.settings, exc.cause.sentence)
    return record


def settings_stage(run: Runner, prepared: Prepared, m: Measurement | None, binary: Any, machine: Any, *,
                   has_flag: Callable[[str], bool], which: Collection[str], rounds: int, steps: Steps,
                   store: tuned.TunedRecords | None, measured: Mapping[Setup, Arm] | None = None,
                   carrier: Setup | None = None) -> tuned.Tuned | None:
    """The stage as the quick measurement and the sweep run it after their own: on the setup
    auto will run after `m`, the dimensions `which` that apply, faults recorded in `store`.
    `measured`: the speculation stages' arms (the quick measurement's): the setup's own there
    is `tune`'s `base_arm`. `carrier`: the setup to measure them on, where not the one auto
    will run (the quick measurement's: none)."""
    spec = prepared.spec
    if carrier is None:
        carrier = setup_mod.NONE if m is None else carrier_of(
            m, automatic=spec.source in AUTO_SOURCES, on_trial=spec.source == resolver.AUTO_NGRAM)
    engine_arms = run if isinstance(run, EngineArms) else None
    dims = dimensions(prepared, has_flag, which=which, fixed=engine_arms.fixed if engine_arms else DEFAULTS,
                      faults=store.faults_for(binary, machine) if store is not None else ())
    base = (measured or {}).get(carrier)
    if base is not None:  # the quick measurement: reading speed from its own prompts
        timing: Runner = run
    else:
        timing = engine_arms.measuring_prompts() if engine_arms is not None else run
    return tune(timing, carrier, dims, rounds, steps, key=tuned.key_for(prepared.model.path, binary, machine),
                on_fault=recording_faults(store, binary, machine), base_arm=base)


def flags_of(binary: Any, caps: Any = None) -> Callable[[str], bool]:
    """Which flags the engine build knows: `caps.has_flag`, else its --help (cached); none when
    it cannot be asked (nothing is then tried or passed)."""
    if caps is not None:
        return caps.has_flag
    try:
        return capabilities.capabilities(binary).has_flag
    except (OSError, ValueError):
        return lambda _flag: False
