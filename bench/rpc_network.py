"""A worker over a real network path: the real Gemma 3 270M's decode speed alone on this
computer and split with a worker behind each link profile of issue 29, beside what
core/rpc/split_speed.py predicts (issue 29, items 2 and 3).

Per profile (draftwise/testing/netlab.py): a `ggml-rpc-server` in a network namespace behind
a tc-shaped veth pair and a delaying relay; the link measured through the RPC protocol
(link.measure); the model launched with the argv `draftwise plan --json` gives (a) without
the worker and (b) with it (`--rpc relay --use-workers always`: the layers where the plan
puts them); a fixed prompt, `--tokens` generated at temperature 0, `--rounds` requests, the
best `timings.predicted_per_second` kept. The engine runs with `-lv 4` so its log says the
graph's splits (`sched_reserve: graph: nodes = N, splits = S`), from which the hops a token
makes over the link are counted (split_speed.hops_from_splits).

This machine has 2 cores and the worker shares them: a single sequence runs the layers one
device after the other, so their compute does not overlap (the prediction counts the
worker's bytes at this computer's rate).

    PYTHONPATH=app .venv/bin/python bench/rpc_network.py [--tokens 64] [--rounds 2] [--only 20] [--json OUT]

Exit 1 when a profile's measured / predicted is outside [LOW, HIGH]; 2 when something needed
is missing (root, iproute2, the engine, the model).
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from draftwise.core.launch import launch_spec, speed_probe
from draftwise.core.machine import speed
from draftwise.core.rpc import link, share, split_speed
from draftwise.testing import netlab, realmodels

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed_estimate  # noqa: E402 — the speed bench's quiet-processor helpers, beside this file

LOW, HIGH = 0.75, 1.25
PROMPT = "Write a short story about a lighthouse keeper who finds a message in a bottle."
_SPLITS = re.compile(r"graph(?: \(pp bs=\d+, tg bs=\d+\))?: nodes = (?P<nodes>[\d /]+), splits = (?P<splits>[\d /]+)")


def calibrated(work: split_speed.SplitWork, tokens_per_s: float) -> speed.Throughput:
    """The processor rate at which the single-machine estimate gives `tokens_per_s`."""
    fixed = (work.work.blocks * speed.BLOCK_SECONDS + work.work.vocab * speed.VOCAB_SECONDS
             + speed.TOKEN_SECONDS)
    return speed.Throughput(speed.cpu_seconds(work.work, 1.0) / max(1 / tokens_per_s - fixed, 1e-6), "described")


def engine_binary() -> Path:
    from draftwise.core.engines import discovery

    found = discovery.best_engine()
    if found is None:
        raise SystemExit(2)
    return Path(found.binary)


def plan_argv(model: Path, rpc: str | None) -> list[str]:
    """The engine command `draftwise plan --json` gives (the layers where the plan puts them)."""
    cmd = [sys.executable, "-m", "draftwise.cli.main", "plan", "--json", str(model)]
    if rpc:
        cmd += ["--rpc", rpc, "--use-workers", "always"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120)
    return list(json.loads(out.stdout)["argv"])


def _post(url: str, body: dict, timeout: float = 300) -> dict:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:  # noqa: S310 — our own engine on loopback
        return json.loads(r.read())


def run_engine(argv: list[str], binary: Path, tokens: int, rounds: int) -> dict:
    """Start `argv` on a free port, ask `rounds` times for `tokens`, return the best timings
    and the graph's split counts from its log."""
    port = launch_spec.any_free_port()
    argv = list(argv)
    i = argv.index("--port")
    argv[i + 1] = str(port)
    argv = [*argv, "-lv", "4"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLAMA_ARG_")}
    env.update(share.worker_env(binary))
    log_path = Path(f"/tmp/rpc_network_{port}.log")
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(argv, stdout=log_file, stderr=subprocess.STDOUT, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the engine exited {proc.returncode}: {log_path.read_text()[-1500:]}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:  # noqa: S310
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.3)
        _post(url + "/completion", {"prompt": PROMPT, "n_predict": 8, "temperature": 0, "cache_prompt": False})
        best: dict = {}
        for _ in range(rounds):
            t = _post(url + "/completion", {"prompt": PROMPT, "n_predict": tokens, "temperature": 0,
                                            "ignore_eos": True, "cache_prompt": False})["timings"]
            if t.get("predicted_per_second", 0) > best.get("predicted_per_second", 0):
                best = t
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = log_path.read_text(errors="replace")
    log_path.unlink(missing_ok=True)
    matches = list(_SPLITS.finditer(text))
    m = matches[-1] if matches else None  # the last reserve: the graph the tokens run
    splits = m["splits"].split("/")[-1].strip() if m else "?"
    return {"timings": best, "splits": int(splits) if splits.isdigit() else None, "argv": argv}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="", help="profiles whose name contains this (e.g. 20)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--quiet-wait", type=float, default=120.0, help="seconds to wait for a quiet processor")
    args = ap.parse_args()
    if netlab.available() is not None:
        print(netlab.available())
        return 2
    binary = engine_binary()
    model = realmodels.gemma3_270m()
    rpc_binary = share.worker_binary(binary)
    work = split_speed.split_work(model)
    # The worker keeps its tensor cache (as `draftwise share` runs it) in a folder of the
    # bench's own: after the first profile the 170 MiB token table is not sent again, so
    # the 20 Mbit profile loads in about half a minute instead of nearly two.
    worker_env = {**share.worker_env(rpc_binary), "LLAMA_CACHE": tempfile.mkdtemp(prefix="rpc-network-cache-")}
    atexit.register(shutil.rmtree, worker_env["LLAMA_CACHE"], True)  # however the bench ends
    alone_argv = [*plan_argv(model, None), "-nr"]
    rows = []
    for profile in netlab.PROFILES:
        if args.only and args.only not in profile.name:
            continue
        ns = netlab.Namespace(profile)
        relay = None
        try:
            port = launch_spec.any_free_port()
            # As many threads as this computer's engine uses (its default is half the logical
            # CPUs: 1 here against llama-server's 2), so the worker decodes at this computer's rate.
            ns.start([str(rpc_binary), "-H", ns.ns_ip, "-p", str(port), "--cache", "-t", str(speed.cores())],
                     env=worker_env,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
            netlab.wait_for_port(ns.ns_ip, port)
            relay = netlab.Relay((ns.ns_ip, port), profile.delay_ms)
            lk = link.measure(relay.endpoint, max_bytes=4 << 20)
            # Other programs share this 2-core machine: this computer's rate is probed again
            # right before each profile's pair, and the pair runs back to back.
            split_argv = plan_argv(model, relay.endpoint)
            # The engine alone was hit hardest by other work on the shared 2-core machine
            # (1-16 tokens/s from one request to the next): the pair waits for a quiet
            # moment, and the others' share during the alone runs is printed.
            quiet = speed_estimate.wait_quiet(args.quiet_wait)
            tp = speed_probe.probe_engine(binary) or speed_probe.throughput(binary)
            alone, share_before = speed_estimate.others_share(
                lambda: run_engine(alone_argv, binary, args.tokens, args.rounds))
            split = run_engine(split_argv, binary, args.tokens, args.rounds)
            after, share_after = speed_estimate.others_share(
                lambda: run_engine(alone_argv, binary, args.tokens, args.rounds))
        finally:
            if relay is not None:
                relay.close()
            ns.close()
        print(f"  measured with the worker: {split['timings'].get('predicted_per_second')} t/s, splits "
              f"{split['splits']}, link {lk}", flush=True)
        layout = split_speed.layout_from_argv(split_argv, work)
        m_alone = math.sqrt(alone["timings"]["predicted_per_second"] * after["timings"]["predicted_per_second"])
        # Two predictions: from the engine probe's rate (what the app has), and from the rate
        # that gives the model's own speed alone, measured around the pair ("calibrated"):
        # the second judges the split's own terms (hops, bytes, the worker's share) apart from
        # the single-machine estimate, which bench/speed_estimate.py judges.
        pred_alone = split_speed.predict(work, (), tp).tokens_per_s
        pred_probe = split_speed.predict(work, layout, tp, links={relay.endpoint: lk})
        cal = calibrated(work, m_alone)
        pred = split_speed.predict(work, layout, cal, links={relay.endpoint: lk})
        engine_hops = split_speed.hops_from_splits(split["splits"]) if split["splits"] else None
        m_split = split["timings"]["predicted_per_second"]
        shares = [round(x, 2) for x in (share_before, share_after) if x is not None]
        row = {"profile": profile.name, "quiet_start": quiet, "others_share": shares,
               "link": lk.to_json(), "rate_gb_s": tp.cpu / 1e9,
               "calibrated_rate_gb_s": cal.cpu / 1e9, "alone": m_alone,
               "alone_runs": [alone["timings"]["predicted_per_second"], after["timings"]["predicted_per_second"]],
               "alone_predicted": pred_alone, "predicted_from_probe": pred_probe.tokens_per_s,
               "probe_ratio": m_split / pred_probe.tokens_per_s,
               "with_worker": m_split, "predicted": pred.tokens_per_s, "ratio": m_split / pred.tokens_per_s,
               "link_s": pred.link_s, "workers_s": pred.workers_s, "here_s": pred.here_s, "hops": pred.hops, "engine_hops": engine_hops, "splits": split["splits"], "layout": [(w.endpoint, w.layers, w.output)
                                                                        for w in layout],
               # What `--use-workers auto` would choose here: the app's figures (the probe's rate).
               "auto": "worker" if pred_probe.tokens_per_s > pred_alone * (1 + split_speed.NOISE) else "alone"}
        rows.append(row)
        print(f"  others used {shares} of the CPU during the alone runs (quiet start: {quiet})", flush=True)
        print(f"{profile.name:<16} link {lk.rtt_ms:6.2f} ms {lk.mbit_s:7.1f} Mbit/s | alone {m_alone:6.1f} t/s "
              f"(probe's {pred_alone:6.1f}, {tp.cpu / 1e9:.1f} GB/s) | with worker {m_split:6.1f} t/s predicted "
              f"{pred.tokens_per_s:6.1f} (probe's {pred_probe.tokens_per_s:6.1f}) "
              f"ratio {row['ratio']:.2f} | splits {split['splits']}: hops {engine_hops} (counted {pred.hops}) | "
              f"auto: {row['auto']}",
              flush=True)
    # The link's own terms, apart from the compute: a profile's seconds a token less the
    # fastest profile's, measured against predicted (the compute is the same layout in each,
    # so it cancels, however other work on the machine slowed it).
    if len(rows) > 1:
        base = rows[0]
        for r in rows[1:]:
            measured = 1 / r["with_worker"] - 1 / base["with_worker"]
            predicted = r["link_s"] - base["link_s"]
            r["link_delta"] = {"measured_ms": measured * 1000, "predicted_ms": predicted * 1000,
                               "ratio": measured / predicted if predicted else None}
            print(f"link terms, {r['profile']} less {base['profile']}: measured {measured * 1000:.1f} ms a token, "
                  f"predicted {predicted * 1000:.1f} ms (ratio {measured / predicted:.2f})", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    bad = [r for r in rows if not LOW <= r["ratio"] <= HIGH]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
