"""Does auto's choice hold on prompts the measurement never saw? (issue 38, item 5; not a test)

The built-in pool (core/measuring/prompt_pool.py) has two requests of each kind of work. One
half (`seen`, default `MEASURED`: what the product's quick measurement runs) is all the
measurement sees; the other half (`unseen`, default `HELD_OUT`; `--swap` the other way round)
is where its choice is judged. Per model, in data, config and cache folders of its own
(nothing of the user's is read or written):

1. auto's measurement: the real `draftwise measure MODEL` (cli/measure.py, run in this
   process), with one change: its call of `quick.measure` gets the seen half as its prompts
   (the CLI has no option for prompts). Everything else is the product's own: the launch
   session, the answer length from the noise of the first start, the rounds, the settings
   stage, the records kept.
2. auto's choice: the launch session with those records (`session.plan_launch`, as `launch`
   plans it): the setup it runs (`setup.of_decision` of its speculation) with the engine
   settings it adds (`PlannedLaunch.settings`). Where auto keeps no speculation (n-gram on
   trial that did not pay), auto's arm is none at its kept settings.
3. an exhaustive sweep on the unseen half, on the bare engine (`arms.EngineArms`, the plan
   without any measurement), every arm in one interleaved stage (`arms.run_stage`, no line
   pruned), `--rounds` rounds of `--tokens` tokens:
   - for a model with no drafter, each n-gram type the measurement knows (`NGRAM_MEASURED`)
     alone at `NGRAM_LENGTHS`, and each pair of them at equal lengths;
   - for a model with a drafter, its draft lengths (`sweep.DRAFT_LENGTHS`, 1 to 8), each
     n-gram type alone, and each beside the drafter at the measurement's own drafter
     lengths (`measured.n_max_candidates`);
   - crossed with the engine's speed settings that apply (`tuning.dimensions`, `tuning.BASICS`:
     repack, threads, flash attention; every combination of their values): `--cross full`
     runs every speculation setup at every combination; the default (`--cross cut`) runs every
     speculation setup at the engine's defaults and at auto's kept settings, and every
     combination on none and on auto's own speculation setup (see CUT);
   - auto's own arm and none at the defaults in the same stage.
4. each arm's geometric mean of its per-prompt speed-ups against none at the defaults
   (core/measuring/choice.py `standing`), the table, the sweep's best, auto's arm, and auto
   over the best. The best is the highest of many noisy means, so it leans high: the ratio
   errs against auto.
5. the confirmation (`--confirm` rounds, default 2; 0 leaves it out): none, auto's arm and
   the sweep's `CONFIRM_TOP` fastest run again in fresh interleaved rounds, and the verdict is
   auto over the sweep's best on those rounds alone. The sweep picked its best on its own
   rounds, so scoring it there carries the pick's luck (the top rows of the first Gemma run
   were eight setups within 3 % of each other, on 2 rounds of 64 tokens); fresh rounds score
   the pick and auto alike. Both ratios are printed and kept in the JSON.
6. auto at equal text (`equal_text`, printed and kept beside the verdict, not the exit code).
   An engine setting rounds differently, so the model writes other greedy answers, and an
   n-gram setup's speed-up follows what those answers repeat. The sweep's best across settings
   is then partly the luckiest text among eight combinations, which fresh rounds repeat (the
   text is deterministic) and no choice made on other prompts can find: on the real Gemma 3
   270M with the haswell module, ngram-simple 32 at `-nr -fa off` ran 1.394× on the held-out
   half against 1.325× at the defaults with 32 % more drafted tokens accepted, while none at
   `-nr -fa off` ran 0.999× (no faster), and on the seen half the same settings ran 1.032×
   against 1.129× with 17 % fewer accepted. So beside the verdict: the fastest setup at auto's
   settings (every setup there writes auto's text) times the fastest settings' own speed on
   none.

Models: the real Gemma 3 270M Q4_K_M (`gemma`; no drafter: auto's n-gram speculation on
trial), and `corpus:TARGET[+DRAFTER]`, a corpus file (testing/corpus: the published geometry,
every weight zero, so greedy output repeats one token and n-gram drafts are always accepted;
the zero drafter's were accepted at 0 % in the smoke run) with its drafter's corpus file
generated beside it, which the resolver pairs (the default pair: the smallest the resolver
pairs, SmolLM2-360M-Instruct with SmolLM2-135M-Instruct).

`--smoke`: a few setups, one round, 16 tokens, the measurement too (`--rounds 1 --tokens 16`,
not the product's defaults): checks the
script end to end in a few minutes; it prints the seconds per engine start and the full run's
estimated duration. `--cpu-variant`: as bench/engine_settings.py's (the default runs the AVX2
module alone, so repack is measured as on most users' x86 machines).

Exit 1 when auto is below TARGET × the sweep's best on any model (on the confirmation's rounds;
with `--confirm 0` on the sweep's); 2 when something needed is
missing (no engine, no model file, a drafter model the resolver pairs with none).

    PYTHONPATH=app .venv/bin/python bench/generalize.py [--models gemma,corpus:SmolLM2-360M-Instruct+SmolLM2-135M-Instruct]
        [--tokens 128] [--rounds 2] [--cross cut|full] [--swap] [--smoke] [--cpu-variant haswell|native] [--confirm 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.engines.spec_types import NGRAM_MEASURED, NGRAM_MOD
from draftwise.core.measuring import prompt_pool
from draftwise.core.speculation import setup as setup_mod
from draftwise.core.speculation.setup import Setup

TARGET = 0.95
# The confirmation's finalists: the sweep's fastest few (module text, step 5).
CONFIRM_TOP = 3
MODELS = "gemma,corpus:SmolLM2-360M-Instruct+SmolLM2-135M-Instruct"
NGRAM_LENGTHS = (8, 16, 32, 64)
SMOKE_TOKENS = 16
# CUT: the default cross. Every speculation setup at every settings combination is
# |setups| × |combinations| starts a round (gemma on 2 cores: 25 × 8 = 200, several hours);
# the settings change how fast the engine computes a token, the setups how many tokens a step
# keeps, so they are crossed where the choice meets them: every setup at the defaults and at
# the settings auto kept, every combination on none and on auto's own setup.
CUT, FULL = "cut", "full"


# ------------------------------------------------------------------ the pure parts
def halves(swap: bool = False) -> tuple[tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...]]:
    """(seen, unseen): the measurement's half and the held-out half of the pool."""
    seen, unseen = prompt_pool.MEASURED, prompt_pool.HELD_OUT
    return (unseen, seen) if swap else (seen, unseen)


def speculation_setups(own: Setup, engine_types: Iterable[str], *, drafter_lengths: Sequence[int],
                       beside_lengths: Sequence[int], ngram_lengths: Sequence[int] = NGRAM_LENGTHS,
                       pairs: bool = True) -> list[Setup]:
    """Every speculation setup the bench sweeps for a model whose own (resolver's) setup is
    `own`: a drafter's lengths, each n-gram type alone at each length, and each beside the
    drafter at `beside_lengths` of the drafter; with no drafter, each pair of n-gram types at
    equal lengths (`pairs`)."""
    types = [t for t in NGRAM_MEASURED if t in set(engine_types)]
    out: list[Setup] = []
    if own.drafter is not None:
        out += [replace(own, n_max=n, p_min=None, ngram=None, ngram_len=None, ngram2=None, ngram2_len=None)
                for n in drafter_lengths]
    out += [Setup(ngram=t, ngram_len=n) for t in types for n in ngram_lengths]
    if own.drafter is not None:
        out += [replace(own, n_max=d, p_min=None, ngram=t, ngram_len=n, ngram2=None, ngram2_len=None)
                for d in beside_lengths for t in types for n in ngram_lengths]
    elif pairs:
        out += [Setup(ngram=a, ngram_len=n, ngram2=b, ngram2_len=n)
                for a, b in itertools.combinations(types, 2) for n in ngram_lengths]
    return list(dict.fromkeys(out))


def settings_grid(dims: Iterable[Any]) -> list[EngineSettings]:
    """Every combination of the dimensions' values (`tuning.Dimension`: a name and values,
    None the engine's default), the defaults first."""
    dims = list(dims)
    values = [d.values for d in dims]
    grid = [EngineSettings(**{d.name: v for d, v in zip(dims, combo, strict=True) if v is not None})
            for combo in itertools.product(*values)]
    return sorted(dict.fromkeys(grid), key=lambda s: not s.default)


def arms_to_run(setups: Sequence[Setup], grid: Sequence[EngineSettings], auto: Setup, cross: str) -> list[Setup]:
    """The stage's arms: none and every setup at the defaults, auto's arm, and the settings
    crossed as `cross` says (module text, CUT)."""
    bare = replace(auto, engine=DEFAULTS)
    if cross == FULL:
        crossed = [replace(s, engine=g) for g in grid for s in (setup_mod.NONE, *setups)]
    else:
        crossed = [replace(s, engine=g) for g in (DEFAULTS, auto.engine) for s in (setup_mod.NONE, *setups)]
        crossed += [replace(s, engine=g) for g in grid for s in (setup_mod.NONE, bare)]
    return list(dict.fromkeys([setup_mod.NONE, auto, *crossed]))


@dataclass(frozen=True)
class Row:
    label: str
    geomean: float
    error: float
    speedups: tuple[float, ...]  # per unseen prompt, in pool order
    tokens_per_s: float


@dataclass
class Verdict:
    model: str
    kinds: tuple[str, ...]
    rows: list[Row]
    auto: str
    best: str = ""
    ratio: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # `best` given: the setup picked elsewhere (the sweep's), scored on these rows.
        best = next((r for r in self.rows if r.label == self.best), None) or max(self.rows, key=lambda r: r.geomean)
        auto = next(r for r in self.rows if r.label == self.auto)
        self.best = best.label
        self.ratio = auto.geomean / best.geomean if best.geomean > 0 else 0.0

    @property
    def met(self) -> bool:
        return self.ratio >= TARGET

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "kinds": list(self.kinds), "auto": self.auto, "best": self.best,
                "ratio": self.ratio, "target": TARGET, "met": self.met,
                "rows": [r.__dict__ | {"speedups": list(r.speedups)} for r in self.rows], **self.extra}


def render(v: Verdict) -> str:
    """The table, fastest first (auto's row marked `<- auto`), and the verdict."""
    width = max(len(r.label) for r in v.rows) + 2
    heads = [k[:9] for k in v.kinds]
    lines = [f"{'setup · settings':{width}} {'geomean':>8} {'±':>5} " + " ".join(f"{h:>9}" for h in heads)]
    lines.append("-" * len(lines[0]))
    for r in sorted(v.rows, key=lambda r: -r.geomean):
        mark = "  <- auto" if r.label == v.auto else "  <- best" if r.label == v.best else ""
        lines.append(f"{r.label:{width}} {r.geomean:7.3f}× {r.error * 100:4.0f}% "
                     + " ".join(f"{x:8.2f}×" for x in r.speedups) + mark)
    auto = next(r for r in v.rows if r.label == v.auto)
    best = next(r for r in v.rows if r.label == v.best)
    lines += ["", f"the sweep's best: {v.best} ({best.geomean:.3f}×)",
              f"auto's arm:       {v.auto} ({auto.geomean:.3f}×)",
              f"{v.model}: auto / best on the unseen half = {v.ratio:.3f} "
              f"(target >= {TARGET}: {'met' if v.met else 'MISSED'})"]
    return "\n".join(lines)


def rows_of(setups: Sequence[Setup], results: Any) -> list[Row]:
    """Each setup's row from one stage's arms (`arms.Results`): its standing against none there,
    with that stage's noise (the sweep's rows, and the confirmation's on its own rounds)."""
    from draftwise.core.measuring import choice

    none, noise = results.arms[setup_mod.NONE], results.noise()
    rows = []
    for s in setups:
        st = choice.standing(results.arms[s], none, noise)
        rows.append(Row(s.label(), st.geomean, st.error, st.speedups, results.arms[s].tokens_per_s))
    return rows


def equal_text(setups: Sequence[Setup], rows: Sequence[Row], auto: Setup) -> tuple[str, float]:
    """The sweep's best where every arm writes auto's text (module text, step 6): the fastest
    speculation setup at auto's settings (speculation keeps the target's greedy tokens, so at
    one set of settings every setup writes the same answers), times the fastest settings' own
    speed on none over none at auto's settings (without drafts the words written do not change
    the speed). Returns its label and geometric mean."""
    by = dict(zip(setups, rows, strict=True))
    none_at = {s.engine: r.geomean for s, r in by.items() if not s.speculates}
    fastest = max(none_at, key=lambda e: none_at[e])
    factor = none_at[fastest] / none_at[auto.engine] if none_at.get(auto.engine) else 1.0
    spec, row = max(((s, r) for s, r in by.items() if s.speculates and s.engine == auto.engine),
                    key=lambda sr: sr[1].geomean)
    label = spec.label() if factor <= 1.0 else f"{spec.label()} × {replace(setup_mod.NONE, engine=fastest).label()}"
    return label, row.geomean * max(factor, 1.0)


def finalists(rows: Sequence[Row], auto: str, top: int) -> list[str]:
    """The rows the confirmation runs again: no speculation, auto's, and the sweep's `top`
    fastest (labels, in that order, each once)."""
    ranked = [r.label for r in sorted(rows, key=lambda r: -r.geomean)]
    return list(dict.fromkeys([setup_mod.NONE.label(), auto, *ranked[:top]]))


def estimate_seconds(starts: int, wall_s: float, generating_s: float, tokens: int, smoke_tokens: int) -> float:
    """A run of `starts` engine starts at `tokens` per prompt, from a smoke run's mean start
    (`wall_s`, of which `generating_s` the engine's generation at `smoke_tokens`)."""
    return starts * ((wall_s - generating_s) + generating_s * tokens / smoke_tokens)


# ------------------------------------------------------------------ the model
def _model(name: str) -> Path:
    """The model's file (and a corpus target's drafter file beside it), before the folders move."""
    try:
        if name == "gemma":
            from draftwise.testing import realmodels

            return realmodels.gemma3_270m()
        if name.startswith("corpus:"):
            from draftwise.testing.corpus import build, registry

            target, _, drafter = name.split(":", 1)[1].partition("+")
            if drafter:
                build.generate(registry.get(drafter))
            return build.generate(registry.get(target))
    except (RuntimeError, OSError, KeyError) as exc:
        print(f"{name}: the model file could not be had: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    raise SystemExit(f"unknown model {name!r}: gemma or corpus:TARGET[+DRAFTER]")


class _Lines(io.TextIOBase):
    """The measurement's output, passed on as it comes, less the per-prompt progress lines."""

    PROMPT_STEP = re.compile(r"^\s*\[\d+/\d+\] .*prompt, round \d+$")

    def __init__(self) -> None:
        self.text, self._part = [], ""

    def write(self, s: str) -> int:
        self._part += s
        *done, self._part = self._part.split("\n")
        for line in done:
            self.text.append(line)
            if not self.PROMPT_STEP.match(line):
                sys.__stdout__.write(f"    | {line}\n")
                sys.__stdout__.flush()
        return len(s)


def _measure_seen(model: Path, engine: Path, seen: tuple, *, smoke: bool) -> tuple[Any, float]:
    """`draftwise measure MODEL` in this process, its quick measurement on the seen half."""
    from draftwise.cli import main as cli
    from draftwise.core.measuring import prompts, quick

    original, got = quick.measure, []

    def on_seen(prepared: Any, binary: Any, machine: Any, *, settings: Any, **kw: Any) -> Any:
        m = original(prepared, binary, machine, settings=replace(settings, prompts=prompts.built_in(seen)), **kw)
        got.append(m)
        return m

    quick.measure = on_seen
    t0 = time.monotonic()
    try:
        with redirect_stdout(_Lines()):
            # The smoke run's measurement: one round of SMOKE_TOKENS (the product's answer
            # length from the noise reaches 128 tokens on a busy machine: minutes a start).
            quick_args = ["--rounds", "1", "--tokens", str(SMOKE_TOKENS)] if smoke else []
            rc = cli.main(["measure", "--engine", str(engine), *quick_args, str(model)])
    finally:
        quick.measure = original
    took = time.monotonic() - t0
    if rc != 0:
        print(f"  draftwise measure exited {rc}", flush=True)
        raise SystemExit(rc if rc == 130 else 1)
    if not got:
        print("  `draftwise measure` no longer runs quick.measure: the seen half never reached it", file=sys.stderr)
        raise SystemExit(2)
    return got[0], took


def _bench_model(name: str, model: Path, engine: Path, args: argparse.Namespace) -> Verdict:
    from draftwise.core.engines import capabilities
    from draftwise.core.kinds import Backend
    from draftwise.core.launch import prepare, session
    from draftwise.core.machine import device_choice, hardware
    from draftwise.core.measurements import measured
    from draftwise.core.measuring import arms, prompts, quick, sweep, tuning
    from draftwise.core.measuring.arm import Arm
    from draftwise.core.speculation.setup import of_decision

    seen, unseen = halves(args.swap)
    m, measure_s = _measure_seen(model, engine, seen, smoke=args.smoke)
    print(f"  the measurement (seen half): {measure_s:.0f} s; its setup {m.setup.label() if m.setup else '—'}, "
          f"settings kept {m.tuned.settings.label() if m.tuned and not m.tuned.settings.default else 'the defaults'}",
          flush=True)

    caps = capabilities.capabilities(engine)
    eng = session.Engine(engine, caps, Backend.CPU)
    machine = device_choice.select(hardware.inventory(engine, max_age=0), None, None)
    records = session.Records.load(machine)
    # Auto: the launch session with the measurement's records, as `launch` plans it.
    planned = session.plan_launch(prepare.Request(model=model), eng, machine, records)
    auto = replace(of_decision(planned.prepared.spec), engine=planned.settings)
    # The bare engine: the plan without any measurement, n-gram speculation where no drafter.
    base = session.plan_launch(prepare.Request(model=model, ngram_when_no_drafter=True), eng, machine,
                               session.Records(fixes=records.fixes), ignore_measurements=True).prepared
    own = of_decision(base.spec)
    if name.startswith("corpus:") and "+" in name and own.drafter is None:
        print(f"  {name}: the resolver pairs no drafter with {model.name}", file=sys.stderr)
        raise SystemExit(2)
    types = quick.engine_types_of(engine)
    dims = tuning.dimensions(base, tuning.flags_of(engine, caps), which=tuning.BASICS)
    grid = settings_grid(dims)
    if args.smoke:
        setups = [s for s in speculation_setups(own, types, drafter_lengths=(2,), beside_lengths=(),
                                                ngram_lengths=(32,), pairs=False)
                  if s.drafter is not None or s.ngram == NGRAM_MOD]
        grid = grid[:2]
    else:
        setups = speculation_setups(own, types, drafter_lengths=sweep.DRAFT_LENGTHS,
                                    beside_lengths=measured.n_max_candidates(own.drafter) or (None,))
    todo = arms_to_run(setups, grid, auto, args.cross)
    print(f"  auto runs {auto.label()}; the sweep: {len(todo)} arms × {args.rounds} rounds "
          f"({len(setups)} speculation setups; settings {', '.join(d.name for d in dims) or 'none apply'}: "
          f"{len(grid)} combinations; cross {args.cross})", flush=True)

    settings = arms.MeasureSettings(prompts=prompts.built_in(unseen), tokens=args.tokens, rounds=args.rounds)
    steps = arms.Steps(1 + len(settings.prompts))
    run = arms.EngineArms(base, engine, settings=settings, steps=steps, machine=machine, fixes=records.fixes,
                          requested=machine.requested)
    walls: list[float] = []

    def timed(setup: Setup, r: int) -> Arm:
        t0 = time.monotonic()
        arm = run(setup, r)
        walls.append(time.monotonic() - t0)
        print(f"    {len(walls):4}/{len(todo) * args.rounds} {setup.label():60} {arm.tokens_per_s:7.1f} tokens/s "
              f"({walls[-1]:.1f} s)", flush=True)
        return arm

    results = arms.Results()
    t0 = time.monotonic()
    arms.run_stage(timed, [arms.Line((s,), prune=False) for s in todo], args.rounds, results, steps)
    sweep_s = time.monotonic() - t0
    rows = rows_of(todo, results)
    generating = sum(a.ms for a in results.arms.values()) / 1000.0 / max(len(walls), 1)
    per_start = sum(walls) / max(len(walls), 1)
    extra = {"measure_s": measure_s, "sweep_s": sweep_s, "per_start_s": per_start, "arms": len(todo),
             "rounds": args.rounds, "tokens": args.tokens, "measurement_setup": m.setup.label() if m.setup else None,
             "measurement_settings": m.tuned.settings.label() if m.tuned else None,
             "measurement_per_prompt": [[s.label(), list(r)] for s, r in m.per_prompt],
             "seen_kinds": [k for k, _ in seen]}
    kinds = tuple(p.kind for p in settings.prompts)
    v = Verdict(name, kinds, rows, auto.label(), extra=extra)
    print(render(v), flush=True)
    text_best, text_geomean = equal_text(todo, rows, auto)
    auto_geomean = next(r.geomean for r in rows if r.label == auto.label())
    extra.update(equal_text_best=text_best, equal_text_ratio=auto_geomean / text_geomean if text_geomean else 0.0)
    print(f"at equal text (step 6): the best {text_best} ({text_geomean:.3f}×); "
          f"auto / that = {extra['equal_text_ratio']:.3f}", flush=True)
    if args.confirm > 0 and not args.smoke:
        by_label = {s.label(): s for s in todo}
        again = [by_label[label] for label in finalists(rows, auto.label(), CONFIRM_TOP)]
        print(f"  the confirmation: {len(again)} arms × {args.confirm} fresh rounds "
              f"(none, auto's, the sweep's {CONFIRM_TOP} fastest)", flush=True)
        fresh = arms.Results()
        arms.run_stage(timed, [arms.Line((s,), prune=False) for s in again], args.confirm, fresh, steps)
        confirmed = rows_of(again, fresh)
        c = Verdict(f"{name} (confirmed)", kinds, confirmed, auto.label(), best=v.best)
        print(render(c), flush=True)
        extra.update(sweep_ratio=v.ratio, sweep_best=v.best, confirmed_ratio=c.ratio, confirm_rounds=args.confirm,
                     confirmed_rows=[r.__dict__ | {"speedups": list(r.speedups)} for r in confirmed])
        v.ratio = c.ratio  # the verdict: the sweep's pick and auto, each on rounds that picked neither
    print(f"  {len(walls)} engine starts, {per_start:.1f} s each ({generating:.1f} s of it generating "
          f"{args.tokens} tokens × {len(unseen)} prompts); the sweep {sweep_s:.0f} s", flush=True)
    if args.smoke:
        full = speculation_setups(own, types, drafter_lengths=sweep.DRAFT_LENGTHS,
                                  beside_lengths=measured.n_max_candidates(own.drafter) or (None,))
        all_grid = settings_grid(dims)
        for cross, rounds in ((CUT, 2), (FULL, 2)):
            n = len(arms_to_run(full, all_grid, auto, cross))
            est = estimate_seconds(n * rounds, per_start, generating, 128, args.tokens)
            print(f"  estimate, --cross {cross} --tokens 128 --rounds {rounds}: {n} arms, {n * rounds} starts, "
                  f"about {est / 60:.0f} min (+ the measurement)", flush=True)
            extra[f"estimate_{cross}_s"] = est
    return v


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=MODELS, help="gemma and/or corpus:TARGET[+DRAFTER], comma-separated")
    ap.add_argument("--tokens", type=int, default=128, help="the sweep's tokens per prompt")
    ap.add_argument("--rounds", type=int, default=2, help="the sweep's rounds")
    ap.add_argument("--cross", choices=(CUT, FULL), default=CUT, help="which settings cross the setups (module text)")
    ap.add_argument("--swap", action="store_true", help="the measurement sees the held-out half, the sweep the other")
    ap.add_argument("--smoke", action="store_true", help="a few setups, 1 round, 16 tokens: the script end to end")
    ap.add_argument("--cpu-variant", default="haswell", help="a CPU module to run alone, or native")
    ap.add_argument("--confirm", type=int, default=2,
                    help="rounds of the confirmation (module text, step 5); 0: none")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if args.smoke:
        args.tokens, args.rounds = SMOKE_TOKENS, 1
    if args.tokens < 1 or args.rounds < 1:
        ap.error("--tokens and --rounds must be at least 1")
    verdicts: list[Verdict] = []
    with tempfile.TemporaryDirectory(prefix="draftwise-bench-generalize-") as tmp:
        work = Path(tmp)
        from engine_settings import engine_for  # bench/ is on the path, as for any bench script

        engine = engine_for(args.cpu_variant, work)
        models = [(name, _model(name)) for name in args.models.split(",")]  # before the folders move
        saved = {k: os.environ.get(k) for k in ("DRAFTWISE_DATA_DIR", "DRAFTWISE_CONFIG_DIR", "DRAFTWISE_CACHE_DIR")}
        try:
            for name, model in models:
                print(f"== {name}: {model.name} on {engine}", flush=True)
                slug = re.sub(r"[^A-Za-z0-9.-]+", "_", name)
                for key, sub in (("DRAFTWISE_DATA_DIR", "data"), ("DRAFTWISE_CONFIG_DIR", "config"),
                                 ("DRAFTWISE_CACHE_DIR", "cache")):
                    os.environ[key] = str(work / slug / sub)
                verdicts.append(_bench_model(name, model, engine, args))
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    for v in verdicts:
        on = (f" on the confirmation's fresh rounds ({v.extra['sweep_ratio']:.3f} on the sweep's own)"
              if "confirmed_ratio" in v.extra else "")
        print(f"{v.model}: auto {v.auto} / the sweep's best {v.best} = {v.ratio:.3f}{on} "
              f"(target >= {TARGET}: {'met' if v.met else 'MISSED'}); at equal text "
              f"{v.extra.get('equal_text_ratio', 0.0):.3f} against {v.extra.get('equal_text_best', '—')}", flush=True)
    if args.json:
        args.json.write_text(json.dumps([v.to_json() for v in verdicts], indent=1))
    return 0 if all(v.met for v in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
