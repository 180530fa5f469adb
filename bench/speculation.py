"""Does auto pick the fastest speculation? Each speed fixture and the real Gemma 3 270M: the
quick measurement, the sweep, and auto's choice against the sweep's best, side by side (not a test).

For every row:
1. the quick measurement (`core/measuring/quick.measure`), recorded: what auto knows without a sweep;
2. the sweep (`core/measuring/sweep.sweep`), not recorded: every setup, its best (none, when no
   setup beats it);
3. auto's plan from the rules and the recorded quick measurement (`prepare.prepare`, no flag);
4. a duel: auto's setup and the sweep's best in one interleaved run (same prompts, rounds
   round by round), their tokens/s overall and per prompt kind. The same setup is 1.00× by
   identity and not run again.

Rows: `paying_target` + `exact_draft` (auto companion; its quick measurement must pay > 1.3×),
`paying_target` + `never_accepted_draft` (must not pay: < 1.0×, and the next plan must not run
that drafter), `paying_target` alone with a prompt that repeats its input (n-gram), and the real
Gemma 3 270M Q4_K_M on the chat, code and rewrite prompts (no drafter: the n-gram types) at
the app's own settings (the window's and `draftwise measure`'s token count, the engine's
default threads: what a user's measurement runs). `--only gemma-bench` runs it at the
fixtures' settings too (`--tokens`, `--threads`: fewer tokens and one engine thread, for a
machine shared with other jobs), where the n-gram gains are within a few per cent.

The sweep's best is its fastest setup; for a model with no drafter (where nothing runs
without a measurement) only where it is faster than none beyond the noise, the rule auto turns
n-gram speculation on by (`Measurement.pays`), else none.

Exits 1 when auto is below 0.95× the sweep's best on a row (overall tokens/s over the row's
prompts) or on any one prompt kind of it (the duel's per-kind figures, `--duel-rounds`), when
a quick measurement took more than a third of its sweep's time, or when a fixture misses its
own target. Run: .venv/bin/python bench/speculation.py [--tokens 64] [--rounds 2]
[--duel-rounds 4] [--only gemma,pay,slow,ngram,gemma-bench]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from installed import cpu_engine  # bench/installed.py

BINARY = cpu_engine()  # found before the data dir moves to a scratch folder
SCRATCH = Path(tempfile.mkdtemp(prefix="draftwise-bench-"))
os.environ["DRAFTWISE_DATA_DIR"] = str(SCRATCH / "data")
os.environ["DRAFTWISE_CACHE_DIR"] = str(SCRATCH / "cache")

from draftwise.cli.measure import render_sweep  # noqa: E402
from draftwise.core.engines import capabilities  # noqa: E402
from draftwise.core.launch import prepare, session  # noqa: E402
from draftwise.core.machine import hardware  # noqa: E402
from draftwise.core.measurements import measured  # noqa: E402
from draftwise.core.measuring import arms, quick, sweep  # noqa: E402
from draftwise.core.measuring.arm import Arm  # noqa: E402
from draftwise.core.speculation import resolver  # noqa: E402
from draftwise.core.speculation import setup as setup_mod  # noqa: E402
from draftwise.testing import realmodels  # noqa: E402
from draftwise.testing import tinydrafts as td  # noqa: E402
from draftwise.testing import tinymodels as tm  # noqa: E402

REPEAT = quick.Prompt(
    "repeat",
    "Repeat the following text exactly.\n\nText: " + "the cat sat on the mat and looked at the door. " * 6
    + "\n\nRepeated: " + "the cat sat on the mat and looked at the door. " * 2,
)
TARGET_RATIO = 0.95  # auto against the sweep's best
TIME_SHARE = 1 / 3  # the quick measurement against the sweep


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    request: prepare.Request
    settings: arms.MeasureSettings
    expect: str = ""  # "pays", "does not pay", or "" (no target of its own)


def _interrupt(signum, _frame) -> None:
    # A stop (timeout, kill) unwinds like Ctrl-C, so each arm's `finally` stops its engine.
    raise KeyboardInterrupt


def _rows(args: argparse.Namespace, threads: tuple[str, ...]) -> list[Row]:
    target = td.paying_target()
    pay = tm.write_tiny_model(SCRATCH / "pay" / "speedy.gguf", target)[0]
    tm.write_tiny_model(SCRATCH / "pay" / "speedy-draft.gguf", td.exact_draft(target))
    slow = tm.write_tiny_model(SCRATCH / "slow" / "speedy.gguf", target)[0]
    tm.write_tiny_model(SCRATCH / "slow" / "speedy-draft.gguf", td.never_accepted_draft(target))
    alone = tm.write_tiny_model(SCRATCH / "alone" / "speedy.gguf", target)[0]
    s = arms.MeasureSettings(tokens=args.tokens, rounds=args.rounds)
    rows = [
        Row("pay", "exact 1-block draft", prepare.Request(model=pay, extra_args=threads), s, "pays"),
        Row("slow", "never-accepted 5-block draft", prepare.Request(model=slow, extra_args=threads), s,
            "does not pay"),
        Row("ngram", "no drafter, repeating prompt", prepare.Request(model=alone, extra_args=threads),
            arms.MeasureSettings(tokens=args.tokens * 2, rounds=args.rounds, prompts=(REPEAT,))),
    ]
    if args.only & {"gemma", "gemma-bench"}:
        gemma = realmodels.gemma3_270m()
        # As the window and `draftwise measure` run it: their token count, the engine's threads.
        app = arms.MeasureSettings(rounds=args.rounds)
        rows.append(Row("gemma", f"Gemma 3 270M Q4_K_M ({app.tokens} tokens)", prepare.Request(model=gemma), app))
        rows.append(Row("gemma-bench", f"Gemma 3 270M Q4_K_M ({args.tokens} tokens, --threads)",
                        prepare.Request(model=gemma, extra_args=threads), s))
    return [r for r in rows if r.key in args.only]


def _session(request: prepare.Request, caps, machine, records=None) -> prepare.Prepared:
    """The launch session's plan (as every launch), with the bench's measurements alone."""
    return session.plan_launch(request, session.Engine(BINARY, caps), machine,
                               session.Records(measured=records)).prepared


def _planned(request: prepare.Request, caps, machine, records=None) -> prepare.Prepared:
    """As `measure` plans it: a model with no drafter gets the n-gram types."""
    p = _session(request, caps, machine, records)
    ngram = quick.ngram_request(p) if records is None else None
    return _session(ngram, caps, machine) if ngram is not None else p


def _duel(prepared: prepare.Prepared, machine, settings: arms.MeasureSettings, setups: list[setup_mod.Setup]) -> dict:
    """The setups in one interleaved run: {setup: Arm}."""
    steps = arms.Steps(1 + len(settings.prompts))
    run = arms.EngineArms(prepared, BINARY, settings=settings, steps=steps)
    results = arms.Results()
    arms.run_stage(run, [arms.Line((s,), prune=False) for s in dict.fromkeys(setups)], settings.rounds, results,
                   steps)
    return results.arms


def _kinds(arm: Arm, settings: arms.MeasureSettings) -> str:
    return " ".join(f"{p.kind} {arm.tokens_per_s_of(i):.1f}" for i, p in enumerate(settings.prompts))


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--duel-rounds", type=int, default=4,
                    help="rounds of the duel between auto's setup and the sweep's best (the judge: its per-kind "
                         "figures need more rounds than a measurement)")
    ap.add_argument("--only", default="pay,slow,ngram,gemma",
                    help="rows to run, comma-separated (gemma-bench: the real model at the fixtures' settings)")
    ap.add_argument("--threads", type=int, default=1,
                    help="engine threads (default 1: on a shared 2-core machine the engine's spin-waiting "
                         "thread pool makes timings follow the other processes more than the model)")
    args = ap.parse_args()
    args.only = set(args.only.split(","))
    threads = ("--threads", str(args.threads), "--spec-draft-threads", str(args.threads)) if args.threads else ()
    caps = capabilities.capabilities(BINARY)
    machine = hardware.inventory(BINARY)
    records = measured.MeasuredRecords()
    rows = _rows(args, threads)
    print(f"engine: {BINARY}\n{args.tokens} tokens per prompt ({args.tokens * 2} for the repeating prompt), "
          f"{args.rounds} rounds, {args.threads or 'default'} engine thread(s)\n", flush=True)
    failures: list[str] = []
    summary: list[str] = []
    for row in rows:
        print(f"== {row.label}", flush=True)
        prepared = _planned(row.request, caps, machine)
        result = quick.measure(prepared, BINARY, machine, settings=row.settings)
        records.record(result)
        print(f"  quick: {result.ratio:.2f}× with {result.setup.label() if result.setup else result.what} "
              f"({result.tokens_per_s_with:.1f} vs {result.tokens_per_s_without:.1f} tokens/s, noise "
              f"±{result.noise * 100:.0f} %), {result.seconds:.0f} s", flush=True)
        table = sweep.sweep(prepared, BINARY, machine, settings=row.settings)
        best_row, swept = table.best, table.measurement()
        fastest = table.speed(best_row) if best_row is not None else 0.0
        if prepared.spec.source == resolver.AUTO_NGRAM:
            # Nothing runs without a measurement: the sweep's best counts where it is faster than
            # none beyond the noise (Measurement.pays), the rule auto turns n-gram on by.
            best = swept.setup if swept is not None and swept.setup is not None and swept.pays else setup_mod.NONE
        else:
            best = best_row.setup if best_row is not None and fastest > table.base_tokens_per_s else setup_mod.NONE
        print(f"  sweep: {len(table.rows) + 1} setups, best {best.label()} ({max(fastest, table.base_tokens_per_s):.1f} "
              f"vs {table.base_tokens_per_s:.1f} tokens/s without, in the final), {table.seconds:.0f} s", flush=True)
        print("\n".join("    " + line for line in render_sweep(table).splitlines()[:-2]), flush=True)
        again = _session(row.request, caps, machine, records)
        auto = setup_mod.of_decision(again.spec) if again.spec.argv else setup_mod.NONE
        kind_ratios: dict[str, float] = {}
        if auto == best:
            ratio, kinds = 1.0, "same setup"
        else:
            duel = replace(row.settings, rounds=args.duel_rounds)
            got = _duel(prepared, machine, duel, [auto, best])
            a, b = got[auto], got[best]
            ratio = a.tokens_per_s / b.tokens_per_s if b.tokens_per_s > 0 else 0.0
            kind_ratios = {p.kind: a.tokens_per_s_of(i) / max(b.tokens_per_s_of(i), 1e-9)
                           for i, p in enumerate(row.settings.prompts)}
            per_kind = ", ".join(f"{k} {r:.2f}×" for k, r in kind_ratios.items())
            kinds = (f"auto {a.tokens_per_s:.1f} ({_kinds(a, row.settings)}) vs best {b.tokens_per_s:.1f} "
                     f"({_kinds(b, row.settings)}); per kind {per_kind}")
        share = result.seconds / table.seconds if table.seconds > 0 else 0.0
        print(f"  auto: {auto.label()} -> {ratio:.2f}× the sweep's best ({kinds})", flush=True)
        print(f"  time: quick {result.seconds:.0f} s = {share:.2f} of the sweep's {table.seconds:.0f} s\n", flush=True)
        summary.append(f"{row.label:32} auto {ratio:5.2f}× best   quick/sweep {share:4.2f} "
                       f"({result.seconds:.0f}/{table.seconds:.0f} s)   auto: {auto.label()}   best: {best.label()}")
        if ratio < TARGET_RATIO:
            failures.append(f"{row.label}: auto {ratio:.2f}× the sweep's best (< {TARGET_RATIO})")
        failures += [f"{row.label}: auto {r:.2f}× the sweep's best on the {k} prompt (< {TARGET_RATIO})"
                     for k, r in kind_ratios.items() if r < TARGET_RATIO]
        if share > TIME_SHARE:
            failures.append(f"{row.label}: the quick measurement took {share:.2f} of the sweep's time (> 1/3)")
        if row.expect == "pays" and result.ratio <= 1.3:
            failures.append(f"{row.label}: ratio {result.ratio:.2f} ≤ 1.3")
        if row.expect == "does not pay":
            drafter = max((tps for _, tps in result.tried), default=0.0) / max(result.tokens_per_s_without, 1e-9)
            if drafter >= 1.0:
                failures.append(f"{row.label}: the drafter measured {drafter:.2f}× ≥ 1.0")
            if "--spec-draft-model" in again.spec.argv:
                failures.append(f"{row.label}: the next plan kept the never-accepted drafter")
    print("\n".join(summary))
    print()
    for f in failures:
        print(f"MISSED: {f}")
    print("all targets met" if not failures else f"{len(failures)} target(s) missed")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)  # ~300 MB of fixtures
    sys.exit(code)
