"""The engine judges the plan of every corpus model (issue 18): published geometries as
sparse GGUF files (app/draftwise/testing/corpus), one real engine start each.

For each model: the file is generated once into the cache (its tensor types from the pinned
llama-quantize's dry run), a CPU launch is planned for a machine with plenty of RAM and
started with the plan's arguments (`-nr`, no warm-up, mapped, the hole never read); small
models are also started without `-nr` on a haswell-only copy of the engine (CPU_REPACK),
on an AMX module where the CPU has one, and on the Vulkan device (lavapipe) when they fit
it. The engine's buffer lines are compared with the plan per device and component:

    weights, KV, recurrent state, AMX/CPU_REPACK   within 1 % (16 KiB at least)
    compute (compute + output buffers)            within 5 % or 8 MiB
    the MTP drafter's own context                 within 5 % or 8 MiB

    .venv/bin/python bench/real_models.py [--engine PATH] [--vulkan-engine PATH]
        [--only NAME ...] [--modes cpu,repack,amx,vulkan] [--json OUT]

Exit status 1 when any model misses a target or does not load. One engine at a time; each
is stopped before the next starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from draftwise.testing.corpus import build, judge, registry

ENGINES = Path.home() / ".local/share/draftwise/engines"
DEFAULT_ENGINE = ENGINES / "llama.cpp-11434.0.0-cpu/llama-server"
DEFAULT_VULKAN = ENGINES / "llama.cpp-11434.0.0-vulkan/llama-server"
MiB = 1 << 20


def _fmt_row(r: judge.Row) -> str:
    e = r.error
    err = "   -  " if e is None else f"{e:+6.1%}"
    return f"{r.device}:{r.component} {r.planned / MiB:.1f}/{r.actual / MiB:.1f} {err}{'' if r.ok else ' MISS'}"


def vulkan_capacity(binary: Path | None) -> int | None:
    if binary is None or not binary.is_file():
        return None
    machine = judge.described_vulkan(binary)
    gpus = [g for g in machine.gpus if g.device == "Vulkan0"]
    return gpus[0].total_bytes if gpus else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", type=Path, default=DEFAULT_ENGINE)
    ap.add_argument("--vulkan-engine", type=Path, default=DEFAULT_VULKAN)
    ap.add_argument("--only", nargs="*", help="models whose name contains one of these words")
    ap.add_argument("--modes", default="cpu,repack,amx,vulkan", help="which of cpu,repack,amx,vulkan to run")
    ap.add_argument("--json", type=Path, help="write the runs here")
    ap.add_argument("--markdown", type=Path, help="write the per-model table here (docs/corpus.md has one)")
    args = ap.parse_args(argv)
    if not args.engine.is_file():
        print(f"no engine at {args.engine}; run `make engine`", file=sys.stderr)
        return 2
    wanted = set(args.modes.split(","))
    vk = args.vulkan_engine if "vulkan" in wanted and args.vulkan_engine.is_file() else None
    capacity = vulkan_capacity(vk)
    specs = [s for s in registry.all_models() if not args.only or any(w in s.name for w in args.only)]
    runs: list[judge.Run] = []
    failed: list[str] = []
    t0 = time.monotonic()
    print(f"{len(specs)} models; Vulkan device: {capacity / MiB if capacity else 'none'} MiB")
    with tempfile.TemporaryDirectory(prefix="draftwise-corpus-bench-") as tmp:
        for spec in specs:
            g0 = time.monotonic()
            try:
                path = build.generate(spec)
            except Exception as exc:  # noqa: BLE001 - a model that cannot be written is a miss, reported
                print(f"{spec.name:34} NOT WRITTEN: {exc}", flush=True)
                failed.append(spec.name)
                continue
            gen_s = time.monotonic() - g0
            modes = [m for m in judge.default_modes(spec, path, capacity) if m in wanted]
            if spec.companion_of:
                modes = [judge.CPU]  # the target, launched with this drafter beside it
            for mode in modes:
                if spec.companion_of:
                    target = registry.get(spec.companion_of)
                    run = judge.judge_run(target, build.generate(target), mode, cpu_engine=args.engine,
                                          work=Path(tmp) / f"{spec.name}-{mode}", companion=path)  # fmt: skip
                    run.model = f"{target.name} + assistant"
                else:
                    run = judge.judge_run(spec, path, mode, cpu_engine=args.engine, vulkan_engine=vk,
                                          work=Path(tmp) / f"{spec.name}-{mode}")  # fmt: skip
                if mode == judge.AMX and not run.ready and run.problem.startswith("the engine loads"):
                    continue  # no AMX module on this CPU
                runs.append(run)
                cells = "  ".join(_fmt_row(r) for r in run.rows)
                state = "ok" if run.ok else ("MISS" if run.ready and not run.problem else f"FAIL: {run.problem}")
                print(f"{spec.name:34} {mode:6} {path.stat().st_size / 2**30:7.2f} GiB  gen {gen_s:5.1f} s  "
                      f"load {run.load_s:5.1f} s  wall {run.wall_s:5.1f} s  {state}\n    {cells}", flush=True)  # fmt: skip
                if not run.ok:
                    failed.append(f"{spec.name} ({mode})")
                gen_s = 0.0
    print(f"{len(runs)} runs of {len(specs)} models, {len(failed)} missed, {time.monotonic() - t0:.0f} s")
    for f in failed:
        print(f"  missed: {f}")
    if args.json:
        args.json.write_text(json.dumps([r.to_json() for r in runs], indent=1))
    if args.markdown:
        args.markdown.write_text(markdown([r.to_json() for r in runs]))
    return 1 if failed else 0


def _cell(rows: list[dict], device: str, component: str) -> str:
    r = next((x for x in rows if x["device"] == device and x["component"] == component), None)
    if r is None:
        return ""
    e = "" if r["error"] is None else f" ({r['error']:+.1%})"
    return f"{r['planned'] / MiB:.1f} / {r['actual'] / MiB:.1f}{e}{'' if r['ok'] else ' **MISS**'}"


def markdown(runs: list[dict]) -> str:
    """One row per run: planned / actual MiB (error) per device and component."""
    out = ["| model | mode | load s | weights | KV (+RS) | RS | compute | drafter | re-laid | other devices |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        rows = r["rows"]
        relaid = " ".join(f"{c}: {_cell(rows, 'CPU', c)}" for c in ("AMX", "CPU_REPACK")
                          if any(x["component"] == c for x in rows))  # fmt: skip
        gpus = sorted({x["device"] for x in rows if x["device"] not in ("CPU", "all", "draft")})
        other = "; ".join(f"{d} " + ", ".join(f"{c} {_cell(rows, d, c)}" for c in ("weights", "kv", "compute")
                                              if _cell(rows, d, c)) for d in gpus)  # fmt: skip
        name = r["model"] + (f" — {r['problem']}" if r["problem"] else "")
        out.append(f"| {name} | {r['mode']} | {r['load_s']:.1f} | {_cell(rows, 'CPU', 'weights')} | "
                   f"{_cell(rows, 'CPU', 'kv')} | {_cell(rows, 'all', 'rs')} | {_cell(rows, 'CPU', 'compute')} | "
                   f"{_cell(rows, 'draft', 'drafter')} | {relaid} | {other} |")  # fmt: skip
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
