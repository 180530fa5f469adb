"""The GPU path, end to end: one tiny model on the CPU engine and on the Vulkan engine.

Both launches go the way `draftwise launch` goes (inventory from the engine, device choice,
plan, argv and environment, the headless driver); each answers a short request. Printed:
tokens per second for both (a proof the path works, not a speed claim: on lavapipe the
"GPU" is the CPU), the plan against the engine's own buffer lines per device (weights and
KV, target 2 %), and the GPU verdict of each launch.

    .venv/bin/python bench/gpu_path.py [--device Vulkan0] [--tokens 16] [--json OUT]

Exit status 1 when a launch fails, the Vulkan launch does not put its layers on the chosen
device, or a weights/KV row misses 2 %; 2 when an engine is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from draftwise.core.engines import provision
from draftwise.core.planning import planner
from draftwise.testing import gpu_launch
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

TARGET = 0.02
MODEL = TinyModel(name="gpu-path-llama", dtype="F16", n_embd=512, n_ff=2048, n_head=8, n_head_kv=4, n_layer=8)


def _row_misses(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        if r["actual"] and abs(r["planned"] - r["actual"]) > TARGET * r["actual"] + 16 * 1024:
            out.append(f"{r['device']} {r['component']} {r['error']:+.1%}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="Vulkan0", help="the Vulkan device to choose (default Vulkan0)")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    engines = {b: provision.installed(b) for b in ("cpu", "vulkan")}
    missing = [b for b, e in engines.items() if e is None]
    if missing:
        print(f"missing engine(s): {', '.join(missing)}; run `make engine-gpu`", file=sys.stderr)
        return 2
    failures: list[str] = []
    results = {}
    with tempfile.TemporaryDirectory(prefix="draftwise-gpu-path-") as tmp:
        folder = Path(tmp)
        model = write_tiny_model(folder / "model.gguf", MODEL)[0]
        for name, backend, devices in (("cpu", "cpu", None), ("vulkan", "vulkan", [args.device])):
            build = engines[backend]
            assert build is not None
            t0 = time.monotonic()
            o = gpu_launch.run(build.binary, backend, model, log_dir=folder, devices=devices,
                               prefs=planner.PlanPrefs(ctx=512), n_predict=args.tokens)  # fmt: skip
            took = time.monotonic() - t0
            results[name] = o
            if not o.ready or o.completion is None:
                failures.append(f"{name}: the launch did not answer ({' | '.join(o.log[-3:])})")
            failures += [f"{name}: {m}" for m in _row_misses(o.rows)]
            if name == "vulkan" and not (o.verdict is not None and o.verdict.used):
                failures.append(f"vulkan: GPU not used ({o.verdict})")
            print(f"== {name}: {' '.join(o.argv[3:])}"
                  + (f"  [{', '.join(f'{k}={v}' for k, v in o.spec.env.items() if 'VISIBLE' in k)}]"
                     if any('VISIBLE' in k for k in o.spec.env) else ""))  # fmt: skip
            tps = f"{o.tokens_per_second:.1f} tokens/s" if o.tokens_per_second else "no answer"
            print(f"   {tps}, launch+request {took:.1f} s")
            print(f"   verdict: {o.verdict if o.verdict is not None else 'runs on the CPU (a CPU build)'}")
            print(f"   {'device':8} {'component':9} {'planned MiB':>12} {'actual MiB':>11} {'error':>7}")
            for r in o.rows:
                err = f"{r['error']:+.2%}" if r["error"] is not None else "-"
                print(f"   {r['device']:8} {r['component']:9} {r['planned'] / 2**20:12.2f} "
                      f"{r['actual'] / 2**20:11.2f} {err:>7}")  # fmt: skip
    cpu, vk = results.get("cpu"), results.get("vulkan")
    if cpu and vk and cpu.tokens_per_second and vk.tokens_per_second:
        print(f"Vulkan/CPU tokens per second: {vk.tokens_per_second / cpu.tokens_per_second:.2f}x")
    if args.json:
        args.json.write_text(json.dumps({
            name: {"argv": list(o.argv), "tokens_per_second": o.tokens_per_second, "rows": o.rows,
                   "verdict": str(o.verdict) if o.verdict is not None else None, "ready": o.ready}
            for name, o in results.items()
        }, indent=1))  # fmt: skip
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
