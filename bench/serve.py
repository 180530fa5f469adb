"""`draftwise serve` against a single-model launch (issue 37, item 8), not a test.

1. Tokens written: the same real model (Gemma 3 270M Q4_K_M) with the same plan, through the
   router (the engine in router mode, the instance it starts from the preset section) and as
   a single-model launch (the launch session's LaunchSpec started as it is), both running;
   the chat, code and rewrite prompts, greedy, `--tokens` each, interleaved over `--rounds`
   rounds. The figure is the engine's own (`timings.predicted_per_second` of each reply),
   so the router's extra hop shows only where it slows the generation itself; the wall time
   of each reply is reported beside it.
2. A switch: with one model loaded at a time (`--models-max 1`), the time from a request for
   the other model until its first token (the router unloads one and loads the other),
   against the bare engine's start until ready plus its first token.

Everything runs in data folders of its own (nothing of the user's is read or written); the
machine is planned as it is. Exit 1 when the router writes below TARGET x the single launch.

    PYTHONPATH=app .venv/bin/python bench/serve.py [--tokens 64] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.97


def _post(url: str, key: str, path: str, body: dict, timeout: float = 300.0) -> tuple[dict, float]:
    from draftwise.core.launch import headless

    start = time.monotonic()
    status, raw = headless.request(url, key, path, body, timeout)
    took = time.monotonic() - start
    if status != 200:
        raise RuntimeError(f"{path} answered {status}: {raw[:300]!r}")
    return json.loads(raw), took


def _wait_loaded(url: str, key: str, ident: str, timeout: float = 300.0) -> None:
    from draftwise.core.launch import headless
    from draftwise.core.serving import instances

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, body = headless.request(url, key, "/models", None, 10.0)
        state = instances.read(body).get(ident) if status == 200 else None
        if state is not None and state.state == instances.LOADED:
            return
        if state is not None and state.state == instances.FAILED:
            raise RuntimeError(f"{ident} failed to load")
        time.sleep(0.1)  # polling the router's list with a deadline
    raise RuntimeError(f"{ident} not loaded after {timeout:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--switches", type=int, default=2)
    ap.add_argument("--json", default=None)
    opts = ap.parse_args()

    from draftwise.core.engines import discovery

    found = discovery.best_engine()  # the user's installed engine, before the data folders move
    if found is None:
        print("no engine installed: make engine", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="draftwise-bench-serve-"))
    for var, name in (("DRAFTWISE_DATA_DIR", "data"), ("DRAFTWISE_CONFIG_DIR", "config"),
                      ("DRAFTWISE_CACHE_DIR", "cache")):
        os.environ[var] = str(home / name)

    from dataclasses import replace

    from draftwise.core.engines import capabilities
    from draftwise.core.launch import headless, launch_spec, prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch
    from draftwise.core.machine import hardware
    from draftwise.core.measuring.prompts import PROMPTS, body
    from draftwise.core.serving import library, preset, serve_plan
    from draftwise.testing import realmodels

    try:
        gemma = realmodels.gemma3_270m()
    except RuntimeError as exc:
        print(f"the real Gemma 3 270M could not be had: {exc}", file=sys.stderr)
        return 2
    folder = home / "lib"
    folder.mkdir()
    (folder / "gemma-3-270m-a.gguf").symlink_to(gemma)
    # A second file (the library lists one file once, links resolved): a second instance to switch to.
    try:
        os.link(gemma, folder / "gemma-3-270m-b.gguf")
    except OSError:
        shutil.copyfile(gemma, folder / "gemma-3-270m-b.gguf")
    binary = Path(found.binary)
    engine = Engine(binary, capabilities.capabilities(binary), found.backend)
    machine = hardware.inventory(binary)
    records = Records.load(machine)
    key = launch_spec.new_api_key()
    request = prepare.Request(model=folder / "gemma-3-270m-a.gguf", api_key=key)
    lib = library.collect([folder])
    router_port = launch_spec.any_free_port()
    plan = serve_plan.plan_library(lib, request, engine, machine, records, port=router_port, api_key=key,
                                   models_max=1)
    ini = home / "models.ini"
    ini.write_text(preset.render(plan.sections()), encoding="utf-8")
    (home / "empty-cache").mkdir()
    router_spec = serve_plan.router_launch(binary, ini, plan, port=router_port, api_key=key, network=False,
                                           cache_dir=home / "empty-cache", sleep_idle_s=-1)
    a, b = plan.models[0].id, plan.models[1].id

    def single_spec(model: Path):
        planned = plan_launch(replace(request, model=model), engine, machine, records)
        return planned.spec(launch_spec.any_free_port(), key)

    logs = home / "logs"
    logs.mkdir()
    router = headless.serve(router_spec, log_dir=logs)
    single_launch = single_spec(folder / "gemma-3-270m-a.gguf")
    single = headless.serve(single_launch, log_dir=logs)
    rows = []
    switches = []
    try:
        router.wait_ready(300)
        single.wait_ready(300)
        _post(router.base_url, key, "/models/load", {"model": a})
        _wait_loaded(router.base_url, key, a)
        same = preset.section(a, plan.by_id(a).launch.options) == preset.section(a, single_launch.options)
        for r in range(opts.rounds):
            for p in PROMPTS:
                for arm in (("single", "router") if r % 2 == 0 else ("router", "single")):
                    url = router.base_url if arm == "router" else single.base_url
                    req = {**body(p.text, opts.tokens), **({"model": a} if arm == "router" else {})}
                    out, took = _post(url, key, "/completion", req)
                    t = out["timings"]
                    rows.append({"round": r, "kind": p.kind, "arm": arm, "tokens": t["predicted_n"],
                                 "tokens_per_s": t["predicted_per_second"], "wall_s": took})
        single.stop()
        single = None
        for i in range(opts.switches):
            # Through the router: `a` is loaded; a request for `b` unloads it and loads `b`.
            target = b if i % 2 == 0 else a
            _, took = _post(router.base_url, key, "/completion", {**body("Hello", 1), "model": target})
            # The bare engine: start, ready, first token.
            start = time.monotonic()
            bare = headless.serve(single_spec(folder / f"{target}.gguf"), log_dir=logs)
            try:
                bare.wait_ready(300)
                _post(bare.base_url, key, "/completion", body("Hello", 1))
                bare_s = time.monotonic() - start
            finally:
                bare.stop()
            switches.append({"to": target, "router_s": took, "bare_load_and_first_token_s": bare_s})
    finally:
        if single is not None:
            single.stop()
        router.stop()

    def rate(arm: str) -> float:
        mine = [x for x in rows if x["arm"] == arm]
        return sum(x["tokens"] for x in mine) / sum(x["tokens"] / x["tokens_per_s"] for x in mine)

    ratio = rate("router") / rate("single")
    wall = statistics.median(x["wall_s"] for x in rows if x["arm"] == "router") / \
        statistics.median(x["wall_s"] for x in rows if x["arm"] == "single")
    result = {
        "model": str(gemma), "engine": str(binary), "tokens": opts.tokens, "rounds": opts.rounds,
        "same_argv": same, "router_tokens_per_s": round(rate("router"), 2),
        "single_tokens_per_s": round(rate("single"), 2), "ratio": round(ratio, 4),
        "wall_ratio_median": round(wall, 4), "target": TARGET, "switches": switches, "rows": rows,
    }
    print(f"written tokens/s: router {result['router_tokens_per_s']}, single {result['single_tokens_per_s']} "
          f"-> {ratio:.3f}x (target {TARGET}); reply wall time router/single (median) {wall:.3f}; "
          f"same instance argv: {same}")
    for s in switches:
        print(f"switch to {s['to']}: router {s['router_s']:.2f} s to the first token; bare engine load + first "
              f"token {s['bare_load_and_first_token_s']:.2f} s")
    if opts.json:
        Path(opts.json).write_text(json.dumps(result, indent=2))
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
