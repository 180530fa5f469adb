"""The engine judges the plan of every corpus model (issue 18): published geometries as
sparse GGUF files (app/draftwise/testing/corpus), one real engine start each.

For each model: the file is generated once into the cache (its tensor types from the pinned
llama-quantize's dry run), a CPU launch is planned for a machine with plenty of RAM and
started with the plan's arguments (`-nr`, no warm-up, mapped, the hole never read); small
models are also started without `-nr` on a haswell-only copy of the engine (CPU_REPACK),
on an AMX module where the CPU has one, and on the Vulkan device (lavapipe) when they fit
it. The engine's buffer lines are compared with the plan per device and component
(app/draftwise/testing/corpus/judge.py):

    weights, KV, recurrent state, AMX/CPU_REPACK   within 1 % (16 KiB at least)
    compute (compute + output buffers)            within 5 % (1 MiB floor below 20 MiB)
    the MTP drafter's own context                 within 5 % (1 MiB floor below 20 MiB)
    every component                               not more than 2 % under the engine's
    each device's total (every buffer on it)      within 5 %, not more than 2 % under

    .venv/bin/python bench/real_models.py [--engine PATH] [--vulkan-engine PATH]
        [--only NAME ...] [--modes cpu,repack,amx,vulkan] [--json OUT] [--markdown OUT]
        [--record [DIR]] [--record-extra [DIR]]

`--record` writes each row's engine lines into tests/data/corpus-engine/ (or DIR):
app/draftwise/testing/corpus/record.py; tests/test_corpus_recorded.py judges them again
without the engine. `--record-extra` writes the starts other tests read their engine figures
from (Gemma 3n's compute at other geometries, the real Gemma 3 270M's AMX copy, the Vulkan
compute buffer on lavapipe from --vulkan-engine) into
tests/data/engine-lines/ (or DIR): app/draftwise/testing/corpus/engine_lines.py; `--only`
picks cases by name there.

Exit status 1 when a row misses other than KNOWN_MISSES (corpus/gate.py) says, or does not
load. One engine at a time; each is stopped before the next starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from draftwise.testing.corpus import engine_lines, gate, judge, record, registry

ENGINES = Path.home() / ".local/share/draftwise/engines"
DEFAULT_ENGINE = ENGINES / "llama.cpp-11434.0.0-cpu/llama-server"
DEFAULT_VULKAN = ENGINES / "llama.cpp-11434.0.0-vulkan/llama-server"
MiB = 1 << 20


def _fmt_row(r: judge.Row) -> str:
    e = r.error
    err = "   -  " if e is None else f"{e:+6.1%}"
    return f"{r.device}:{r.component} {r.planned / MiB:.1f}/{r.actual / MiB:.1f} {err}{'' if r.ok else ' MISS'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", type=Path, default=DEFAULT_ENGINE)
    ap.add_argument("--vulkan-engine", type=Path, default=DEFAULT_VULKAN)
    ap.add_argument("--only", nargs="*", help="models whose name contains one of these words")
    ap.add_argument("--modes", default="cpu,repack,amx,vulkan", help="which of cpu,repack,amx,vulkan to run")
    ap.add_argument("--json", type=Path, help="write the runs here")
    ap.add_argument("--markdown", type=Path, help="write the per-model table here (docs/corpus.md has one)")
    ap.add_argument("--record", nargs="?", type=Path, const=record.RECORD_DIR,
                    help=f"write each row's engine lines into this folder (default {record.RECORD_DIR})")
    ap.add_argument("--record-extra", nargs="?", type=Path, const=engine_lines.LINES_DIR,
                    help=f"record the starts other tests read (engine_lines.CASES) into this folder "
                         f"(default {engine_lines.LINES_DIR}), and nothing else")
    ap.add_argument("--accept", action="store_true",
                    help="accept this run's errors as what the gate's drift is measured from (errors.json)")
    ap.add_argument("--recorded", action="store_true",
                    help="judge the recorded lines (tests/data/corpus-engine) instead of starting the engine")
    args = ap.parse_args(argv)
    if args.recorded:
        return _report(gate.rejudge_recorded(), args, time.monotonic())
    if not args.engine.is_file():
        print(f"no engine at {args.engine}; run `make engine`", file=sys.stderr)
        return 2
    if args.record_extra is not None:
        return _record_extra(args)
    wanted = set(args.modes.split(","))
    specs = [s for s in registry.all_models() if not args.only or any(w in s.name for w in args.only)]
    if args.record is not None and args.only:
        for s in specs:  # a partial refresh replaces only its own rows, in the modes it runs
            for old in args.record.glob(f"{s.name}-*.log"):
                if old.name[len(s.name) + 1:-4] in wanted:
                    old.unlink()
    elif args.record is not None:
        for old in args.record.glob("*.log"):
            if old.stem.rsplit("-", 1)[-1] in wanted:
                old.unlink()
    t0 = time.monotonic()
    print(f"{len(specs)} models", flush=True)

    def show(row: gate.Row, run: judge.Run) -> None:
        cells = "  ".join(_fmt_row(r) for r in run.rows)
        state = "ok" if run.ok else ("MISS" if run.judged and not run.problem else f"FAIL: {run.problem}")
        print(f"{row.spec.name:34} {row.mode:6} load {run.load_s:5.1f} s  wall {run.wall_s:5.1f} s  {state}\n    {cells}",
              flush=True)  # fmt: skip

    done = gate.judge_all(args.engine, args.vulkan_engine, specs=specs, wanted=wanted, record_dir=args.record,
                          on_run=show)  # fmt: skip
    return _report(done, args, t0)


def _record_extra(args: argparse.Namespace) -> int:
    cases = [c for c in engine_lines.CASES if not args.only or any(w in c.name for w in args.only)]
    if not args.only:
        for gone in engine_lines.prune(args.record_extra):
            print(f"removed {gone} (no case writes it)")

    def show(case: engine_lines.Case, run: judge.Run | None, note: str) -> None:
        figures = "  ".join(_fmt_row(r) for r in run.rows) if run else ""
        print(f"{case.name:44} {note}\n    {figures}", flush=True)

    vulkan = args.vulkan_engine if args.vulkan_engine.is_file() else None
    done = engine_lines.record_cases(args.engine, args.record_extra, cases=cases, vulkan_engine=vulkan, on_run=show)
    failed = [case.name for case, run, path in done if run is not None and path is None]
    for name in failed:
        print(f"  FAILED: {name}")
    return 1 if failed else 0


def _report(done: list[tuple[gate.Row, judge.Run]], args: argparse.Namespace, t0: float) -> int:
    runs = [run for _, run in done]
    if args.accept:
        print(f"accepted the errors: {gate.write_errors(done)}")
    errors = gate.accepted_errors()
    surprises = [s for row, run in done for s in gate.surprises(row.key, run, errors)]
    missed = [f"{row.spec.name} ({row.mode}): {', '.join(f'{r.device}:{r.component}' for r in run.misses)}"
              for row, run in done if run.misses]  # fmt: skip
    print(f"{len(runs)} runs of {len({row.spec.name for row, _ in done})} models, {len(missed)} with misses, {len(surprises)} not as "
          f"KNOWN_MISSES says, {time.monotonic() - t0:.0f} s")  # fmt: skip
    for m in missed:
        print(f"  missed: {m}")
    for m in surprises:
        print(f"  SURPRISE: {m}")
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in runs], indent=1))
    if args.markdown:
        args.markdown.write_text(markdown([r.to_json() for r in runs]))
    return 1 if surprises else 0


def _cell(rows: list[dict], device: str, component: str) -> str:
    r = next((x for x in rows if x["device"] == device and x["component"] == component), None)
    if r is None:
        return ""
    e = "" if r["error"] is None else f" ({r['error']:+.1%})"
    return f"{r['planned'] / MiB:.1f} / {r['actual'] / MiB:.1f}{e}{'' if r['ok'] else ' **MISS**'}"


def markdown(runs: list[dict]) -> str:
    """One row per run: planned / actual MiB (error) per device and component; "(fit)": a row a
    planner constant was fitted on (gate.FIT_ROWS), the rest are held out."""
    out = ["| model | mode | load s | weights | KV (+RS) | RS | compute | drafter | re-laid | other devices | totals |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rows = r["rows"]
        relaid = " ".join(f"{c}: {_cell(rows, 'CPU', c)}" for c in ("AMX", "CPU_REPACK")
                          if any(x["component"] == c for x in rows))  # fmt: skip
        gpus = sorted({x["device"] for x in rows if x["device"] not in ("CPU", "all", "draft")})
        other = "; ".join(f"{d} " + ", ".join(f"{c} {_cell(rows, d, c)}" for c in ("weights", "kv", "compute")
                                              if _cell(rows, d, c)) for d in gpus)  # fmt: skip
        totals = "; ".join(f"{x['device']} {_cell(rows, x['device'], 'total')}" for x in rows if x["component"] == "total")
        fit = " (fit)" if (r["model"], r["mode"]) in gate.FIT_ROWS else ""
        name = r["model"] + fit + (f" — {r['problem']}" if r["problem"] else "")
        out.append(f"| {name} | {r['mode']} | {r['load_s']:.1f} | {_cell(rows, 'CPU', 'weights')} | "
                   f"{_cell(rows, 'CPU', 'kv')} | {_cell(rows, 'all', 'rs')} | {_cell(rows, 'CPU', 'compute')} | "
                   f"{_cell(rows, 'draft', 'drafter')} | {relaid} | {other} | {totals} |")  # fmt: skip
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
