"""Auto's launch against the best of a sweep that also tries the engine's speed settings
(issue 30, item 4): repack, threads, flash attention and the prompt batch sizes beside the
speculation (core/measuring/tuning.py), not a test.

Per model, each in data folders of its own (nothing of the user's is read or written):
1. `draftwise measure MODEL` (the quick measurement, its settings stage included): what auto
   knows after the window's "Measure speed";
2. `draftwise measure --sweep MODEL`: every speculation setup, then the settings stage on its
   best (repack on/off, threads around the physical cores, flash attention off on the CPU,
   -tb and -ub), recorded in a folder of its own;
3. a duel: auto's launch (the launch session with the quick measurement's records: its setup
   and its kept engine settings) against the sweep's best with the sweep's kept settings, in
   one interleaved stage (`--rounds` rounds, the chat, code and rewrite prompts, greedy,
   `--tokens` each): written and read tokens/s, and per prompt kind.

`--cpu-variant haswell` (the default where the engine has that module) runs a copy of the
engine that loads only that CPU module (testing/gpu_launch.py): on this project's CI machine
the engine's own module is the AMX one, whose kernels fault, so the remembered `-nr` fix would
keep repack out of every sweep; the AVX2 module re-lays Q4_K and lets repack be measured, as on
most users' x86 machines. `--cpu-variant native` runs the engine as installed.

Models: the real Gemma 3 270M Q4_K_M (`gemma`), and `corpus:NAME` for a corpus file
(testing/corpus: the published geometry with its tensor data a file hole, so every weight is
zero: the engine settings are timed on the real geometry, but greedy output repeats one token
and n-gram drafts are always accepted).

Exit 1 when auto's written tokens/s is below TARGET × the sweep's best on any model; 2 when
something needed is missing.

    PYTHONPATH=app .venv/bin/python bench/engine_settings.py [--models gemma,corpus:Qwen2.5-0.5B-Instruct]
        [--tokens 128] [--rounds 4] [--cpu-variant haswell|native] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.95
DUEL = "--duel"  # this file run again for one duel, in the quick measurement's data folder


def engine_for(variant: str, work: Path) -> Path:
    """The installed engine, or a copy that loads only the `variant` CPU module (bench/generalize.py too)."""
    from draftwise.core.engines import discovery
    from draftwise.testing import gpu_launch

    found = discovery.best_engine()
    if found is None:
        print("no engine installed: make engine", file=sys.stderr)
        raise SystemExit(2)
    binary = Path(found.binary)
    if variant == "native":
        return binary
    if not list(binary.parent.glob(f"libggml-cpu-{variant}.so")):
        print(f"the engine has no {variant} CPU module: running it as installed", flush=True)
        return binary
    return gpu_launch.engine_with_cpu_variant(binary, work / f"engine-{variant}", variant)


def _model(name: str) -> Path:
    if name == "gemma":
        from draftwise.testing import realmodels

        return realmodels.gemma3_270m()
    if name.startswith("corpus:"):
        from draftwise.testing.corpus import build, registry

        return build.generate(registry.get(name.split(":", 1)[1]))
    raise SystemExit(f"unknown model {name!r}: gemma or corpus:NAME")


def _measure(model: Path, engine: Path, data: Path, args: argparse.Namespace, *, sweep: bool) -> float:
    env = {**os.environ, "DRAFTWISE_DATA_DIR": str(data), "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "app")}
    cmd = [sys.executable, "-m", "draftwise.cli.main", "measure", "--engine", str(engine), "--tokens",
           str(args.tokens), *(["--sweep"] if sweep else []), str(model)]
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600, check=False)
    took = time.monotonic() - t0
    tail = "\n".join(f"    | {x}" for x in out.stdout.splitlines()[-14:])
    print(f"  measure{' --sweep' if sweep else ''}: {took:.0f} s, exit {out.returncode}\n{tail}", flush=True)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        raise SystemExit(1)
    return took


def _duel_child(argv: list[str]) -> int:
    """One duel, in a process whose data folder is the quick measurement's (set before import)."""
    model, binary, quick_dir, sweep_dir, tokens, rounds, out = argv
    os.environ["DRAFTWISE_DATA_DIR"] = quick_dir
    from dataclasses import replace

    from draftwise.core.engines import capabilities
    from draftwise.core.kinds import Backend
    from draftwise.core.launch import prepare, session
    from draftwise.core.launch.fixes import EngineFixes
    from draftwise.core.machine import device_choice, hardware
    from draftwise.core.measurements import tuned
    from draftwise.core.measurements.measured import MeasuredRecords
    from draftwise.core.measuring import arms, tuning
    from draftwise.core.speculation import resolver
    from draftwise.core.speculation.setup import of_decision

    model_p, binary_p, quick, swept_dir = Path(model), Path(binary), Path(quick_dir), Path(sweep_dir)
    machine = device_choice.select(hardware.inventory(binary_p, max_age=0), None, None)
    caps = capabilities.capabilities(binary_p)
    engine = session.Engine(binary_p, caps, Backend.CPU)
    fixes = EngineFixes(quick / "engine-fixes.json", machine=machine)
    measured = MeasuredRecords(quick / "speculation-measured.json")
    # Auto: the launch session with the quick measurement's records, as `launch` runs it.
    auto = session.plan_launch(prepare.Request(model=model_p), engine, machine,
                               session.Records(measured=measured, fixes=fixes))  # fmt: skip
    plan = auto.prepared.plan
    print("  auto's plan:", *[f"\n    - {r}" for r in (*plan.reasons, *plan.settings_notes)], flush=True)
    auto_setup = of_decision(auto.prepared.spec)
    kept = measured.tuned().get(tuned.key_for(model_p, binary_p, machine))
    user_args = auto.request.extra_args[:len(auto.request.extra_args) - len(auto.settings)]
    if kept is not None:
        auto_setup = replace(auto_setup, engine=tuned.applicable(kept, caps.has_flag, user_args))
    # The sweep's best, with the settings the sweep kept.
    base = session.plan_launch(prepare.Request(model=model_p, ngram_when_no_drafter=True), engine, machine,
                               session.Records(fixes=fixes), ignore_measurements=True).prepared
    swept = MeasuredRecords(swept_dir / "speculation-measured.json")
    m = swept.get(prepare.combination(model_p, base.spec, binary_p, machine))
    best = tuning.carrier_of(m, automatic=True, on_trial=base.spec.source == resolver.AUTO_NGRAM)
    st = swept.tuned().get(tuned.key_for(model_p, binary_p, machine))
    best = replace(best, engine=st.settings if st else best.engine)
    print(f"  auto runs {auto_setup.label()} | the sweep's best: {best.label()}", flush=True)
    settings = arms.MeasureSettings(tokens=int(tokens), rounds=int(rounds), prompt_speed=True)
    steps = arms.Steps(1 + len(settings.prompts))
    run = arms.EngineArms(base, binary_p, settings=settings, steps=steps, machine=machine, fixes=fixes)
    results = arms.Results()
    setups = list(dict.fromkeys([auto_setup, best]))
    arms.run_stage(run, [arms.Line((s,), prune=False) for s in setups], settings.rounds, results, steps)
    figures = {}
    for s in setups:
        a = results.arms[s]
        kinds = {p.kind: a.tokens_per_s_of(i) for i, p in enumerate(settings.prompts)}
        figures[s.label()] = {"written": a.tokens_per_s, "written_error": a.error(), "read": a.prompt_per_s,
                              "kinds": kinds}
        print(f"  {s.label():44} written {a.tokens_per_s:6.1f} ±{a.error() * 100:.0f} % "
              f"({', '.join(f'{k} {v:.1f}' for k, v in kinds.items())}); read {a.prompt_per_s:6.0f}", flush=True)
    a, b = results.arms[setups[0]], results.arms[setups[-1]]
    ratio = a.tokens_per_s / b.tokens_per_s if len(setups) == 2 else 1.0
    per_kind = {p.kind: (a.tokens_per_s_of(i) / b.tokens_per_s_of(i) if len(setups) == 2 else 1.0)
                for i, p in enumerate(settings.prompts)}
    Path(out).write_text(json.dumps({"auto": auto_setup.label(), "best": best.label(), "ratio": ratio,
                                     "read_ratio": a.prompt_per_s / b.prompt_per_s if len(setups) == 2 else 1.0,
                                     "per_kind": per_kind, "figures": figures}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == [DUEL]:
        return _duel_child(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gemma", help="gemma and/or corpus:NAME, comma-separated")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=4, help="the duel's rounds")
    ap.add_argument("--cpu-variant", default="haswell", help="a CPU module to run alone, or native")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    rows, failed = [], False
    with tempfile.TemporaryDirectory(prefix="draftwise-bench-settings-") as tmp:
        work = Path(tmp)
        engine = engine_for(args.cpu_variant, work)
        for name in args.models.split(","):
            model = _model(name)
            print(f"== {name}: {model.name} on {engine}", flush=True)
            quick, swept = work / f"{name}-quick", work / f"{name}-sweep"
            t_quick = _measure(model, engine, quick, args, sweep=False)
            t_sweep = _measure(model, engine, swept, args, sweep=True)
            out = work / f"{name}-duel.json"
            env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "app")}
            done = subprocess.run([sys.executable, __file__, DUEL, str(model), str(engine), str(quick), str(swept),
                                   str(args.tokens), str(args.rounds), str(out)], env=env, timeout=3600, check=False)
            if done.returncode != 0:
                return 1
            duel = json.loads(out.read_text())
            duel.update(model=name, quick_s=t_quick, sweep_s=t_sweep)
            rows.append(duel)
            ok = duel["ratio"] >= TARGET
            failed |= not ok
            kinds = ", ".join(f"{k} {v:.3f}x" for k, v in duel["per_kind"].items())
            print(f"{name}: auto {duel['auto']} / the sweep's best {duel['best']}: written {duel['ratio']:.3f}x "
                  f"({kinds}), read {duel['read_ratio']:.3f}x; target >= {TARGET}: {'met' if ok else 'MISSED'}",
                  flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
