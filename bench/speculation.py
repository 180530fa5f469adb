"""Does speculation pay? The speed fixtures measured side by side in one run (not a test).

Rows (each one `core/launch/measure.measure`: the same prompts with the speculation and
without, greedy, a fixed token count, the draft length tuned over a small set):
1. `paying_target` + `exact_draft` (auto companion) — must pay: ratio > 1.3;
2. `paying_target` + `never_accepted_draft` (auto companion) — must not: ratio < 1.0, and
   once recorded, the next plan leaves the drafter out on its own;
3. n-gram speculation (ngram-mod) on the same target alone, with a prompt that repeats its
   input (the zero-output target falls into a cycle, so its own output repeats too).

Exits 1 when a row misses its target. Run: .venv/bin/python bench/speculation.py [--tokens 64] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path


def _engine_binary() -> Path:
    from draftwise.core.engines import provision

    build = provision.installed("cpu")
    if build is None:
        sys.exit("llama-server is not installed; run `draftwise engine install`")
    return build.binary


BINARY = _engine_binary()  # found before the data dir moves to a scratch folder
SCRATCH = Path(tempfile.mkdtemp(prefix="draftwise-bench-"))
os.environ["DRAFTWISE_DATA_DIR"] = str(SCRATCH / "data")
os.environ["DRAFTWISE_CACHE_DIR"] = str(SCRATCH / "cache")

from draftwise.core.engines import capabilities  # noqa: E402
from draftwise.core.launch import measure, prepare  # noqa: E402
from draftwise.core.machine import hardware  # noqa: E402
from draftwise.core.speculation import measured  # noqa: E402
from draftwise.testing import tinymodels as tm  # noqa: E402

REPEAT = measure.Prompt(
    "repeat",
    "Repeat the following text exactly.\n\nText: " + "the cat sat on the mat and looked at the door. " * 6
    + "\n\nRepeated: " + "the cat sat on the mat and looked at the door. " * 2,
)


def _interrupt(signum, _frame) -> None:
    # A stop (timeout, kill) unwinds like Ctrl-C, so each arm's `finally` stops its engine.
    raise KeyboardInterrupt


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1,
                    help="engine threads (default 1: on a shared 2-core machine the engine's spin-waiting "
                         "thread pool makes timings follow the other processes more than the model)")
    args = ap.parse_args()
    threads = ("--threads", str(args.threads), "--spec-draft-threads", str(args.threads)) if args.threads else ()
    target = tm.paying_target()
    pay = tm.write_tiny_model(SCRATCH / "pay" / "speedy.gguf", target)[0]
    tm.write_tiny_model(SCRATCH / "pay" / "speedy-draft.gguf", tm.exact_draft(target))
    slow = tm.write_tiny_model(SCRATCH / "slow" / "speedy.gguf", target)[0]
    tm.write_tiny_model(SCRATCH / "slow" / "speedy-draft.gguf", tm.never_accepted_draft(target))
    alone = tm.write_tiny_model(SCRATCH / "alone" / "speedy.gguf", target)[0]

    caps = capabilities.capabilities(BINARY)
    machine = hardware.inventory(BINARY)
    records = measured.MeasuredRecords()
    settings = measure.Settings(tokens=args.tokens, rounds=args.rounds)
    rows = [
        ("exact 1-block draft", prepare.Request(model=pay, extra_args=threads), settings, "pays"),
        ("never-accepted 5-block draft", prepare.Request(model=slow, extra_args=threads), settings, "does not pay"),
        ("n-gram (ngram-mod), repeating prompt",
         prepare.Request(model=alone, ngram_when_no_drafter=True, extra_args=threads),
         measure.Settings(tokens=args.tokens * 2, rounds=args.rounds, prompts=(REPEAT,)), "report"),
    ]
    print(f"engine: {BINARY}\nfixture target: {target.n_layer} blocks × {target.n_embd}, {target.dtype}, "
          f"{pay.stat().st_size / 1e6:.0f} MB; {args.tokens} tokens per prompt, {args.rounds} rounds, "
          f"{args.threads or 'default'} engine thread(s)\n")
    header = f"{'fixture':38} {'with t/s':>9} {'without':>9} {'ratio':>7} {'noise':>6} {'accept':>7} " \
             f"{'mean len':>8} {'n-max':>6}  tried (n-max: t/s)"
    print(header)
    print("-" * len(header))
    failures: list[str] = []
    for label, request, s, expect in rows:
        prepared = prepare.prepare(request, caps, machine)
        started = time.monotonic()
        try:
            m = measure.measure(prepared, BINARY, machine, settings=s)
        except measure.MeasureError as exc:
            print(f"{label:38} FAILED: {exc.message}")
            failures.append(f"{label}: {exc.message}")
            continue
        records.record(m)
        acc = f"{m.acceptance * 100:.0f} %" if m.acceptance is not None else "—"
        mean = f"{m.mean_length:.2f}" if m.mean_length is not None else "—"
        tried = ", ".join(f"{n}: {tps:.0f}" for n, tps in m.tried)
        print(f"{label:38} {m.tokens_per_s_with:9.1f} {m.tokens_per_s_without:9.1f} {m.ratio:6.2f}× "
              f"{m.noise * 100:5.0f}% {acc:>7} {mean:>8} {m.n_max!s:>6}  {tried}  ({time.monotonic() - started:.0f} s)")
        if expect == "pays" and m.ratio <= 1.3:
            failures.append(f"{label}: ratio {m.ratio:.2f} ≤ 1.3")
        if expect == "does not pay":
            if m.ratio >= 1.0:
                failures.append(f"{label}: ratio {m.ratio:.2f} ≥ 1.0")
            again = prepare.prepare(request, caps, machine, measured=records, engine=BINARY)
            left_out = not again.spec.argv
            print(f"{'':38} next plan: {'drafter left out — ' + str(again.spec.notes[-1]) if left_out else 'drafter KEPT'}")
            if not left_out:
                failures.append(f"{label}: the next plan kept the drafter")
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
