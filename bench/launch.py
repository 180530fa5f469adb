"""Launcher benchmarks on the real engine (ratios measured in one run; not tests).

1. request-to-ready through Draftwise — read the model, the engine's capabilities, resolve
   speculation, plan memory, build the LaunchSpec (core/launch/prepare.py, as `draftwise
   launch` and the window do), then start and supervise it (HeadlessLaunch, and the Qt
   EngineProcess) — vs bare llama-server running the same argv, /health polled tightly —
   target ratio <= 1.05;
2. crash exit to fallback start — target <= 0.5 s;
3. 300k log lines read through the Qt service — largest UI-thread stall <= 50 ms, memory
   bounded;
4. 100 launch/stop cycles — 0 leftover processes.

Run: .venv/bin/python bench/launch.py [--cycles 100] [--repeat 15]
Exits 1 when a target is missed (each line says OK or MISSED).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


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
from draftwise.core.launch import headless, launch_spec, prepare, process_group  # noqa: E402
from draftwise.core.machine import hardware  # noqa: E402
from draftwise.core.planning import planner  # noqa: E402
from draftwise.core.speculation.broken import BrokenDrafters  # noqa: E402
from draftwise.testing import tinymodels as tm  # noqa: E402

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# The targets; main() exits 1 when one is missed.
READY_RATIO_MAX = 1.05
FALLBACK_MAX_S = 0.5
STALL_MAX_MS = 50.0
FLOOD_RSS_MAX_MIB = 64.0  # "bounded": 300k lines must not be kept
FLOOD_TAIL_MAX = 10_000
CTX = 512


def decide(model_path: Path, **options) -> launch_spec.LaunchSpec:
    """Request -> LaunchSpec through the real path: model header, capabilities (the cached
    --help, as every launch after the first), the machine (probed once, as the window does
    at start), resolver, planner, argv and environment."""
    request = prepare.Request(model=model_path, prefs=planner.PlanPrefs(ctx=CTX), **options)
    caps = capabilities.capabilities(BINARY)
    prepared = prepare.prepare(request, caps, hardware.inventory(BINARY),
                               broken=BrokenDrafters().broken_for(BINARY))
    return prepared.launch(BINARY, port=launch_spec.any_free_port())


def bare_ready(model_path: Path) -> float:
    """llama-server alone running the argv Draftwise plans (decided before the clock),
    /health polled every 2 ms: the floor."""
    spec = decide(model_path, mtp="off")
    port = spec.port
    argv = list(spec.argv)
    env = spec.environment()  # exactly what Draftwise starts it with
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)
    try:
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/health",
                                             headers={"Authorization": f"Bearer {spec.api_key}"})
                with _NO_PROXY.open(req, timeout=1) as r:
                    if r.status == 200:
                        return time.perf_counter() - start
            except OSError:
                pass  # not listening yet
            time.sleep(0.002)
    finally:
        process_group.stop_popen(proc)


def draftwise_ready(model_path: Path) -> float:
    start = time.perf_counter()
    spec = decide(model_path, mtp="off")
    run = headless.HeadlessLaunch(spec, record_run=True)
    run.start()
    ok = run.wait_ready(60)
    took = time.perf_counter() - start
    run.stop()
    if not ok:
        raise RuntimeError(run.log_text())
    return took


def qt_ready(app, model_path: Path) -> float:
    from PySide6.QtCore import QEventLoop

    from draftwise.services.engine_process import EngineProcess

    start = time.perf_counter()
    spec = decide(model_path, mtp="off")
    proc = EngineProcess(spec)
    loop = QEventLoop()
    proc.ready.connect(loop.quit)
    proc.crashed.connect(loop.quit)
    proc.start()
    loop.exec()
    took = time.perf_counter() - start
    stop_loop = QEventLoop()
    proc.stopped.connect(stop_loop.quit)
    proc.stop()
    if not proc.flow.ended:
        stop_loop.exec()
    proc.deleteLater()
    return took


def fallback_latency(folder: Path) -> tuple[float, float]:
    """(exit noticed -> fallback spawned, last line of the crashed engine -> fallback spawned)."""
    target = tm.TinyModel(name="fam")
    model = tm.write_tiny_model(folder / "fam-F32.gguf", target)[0]
    tm.broken_draft(folder / "fam-draft.gguf", target)
    BrokenDrafters().forget()
    spec = decide(model)
    last_line = [0.0]

    def on_lines(_lines):
        if len(run.spawned_at) == 1:
            last_line[0] = time.monotonic()

    run = headless.HeadlessLaunch(spec, broken=BrokenDrafters(), on_lines=on_lines)
    run.start()
    run.wait_ready(60)
    run.stop()
    if len(run.spawned_at) != 2:
        raise RuntimeError("no fallback happened:\n" + run.log_text())
    return run.spawned_at[1] - run.exited_at[0], run.spawned_at[1] - last_line[0]


def log_flood(app, lines: int = 300_000) -> dict[str, float]:
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer

    from draftwise.core.speculation.resolver import NONE, SpecDecision
    from draftwise.services.engine_process import EngineProcess

    script = ("import sys\nw = sys.stdout.write\n"
              f"for i in range({lines}): w(f'0.00.{{i:06d}} I srv  flood: line {{i}} ' + 'x' * 60 + '\\n')\n"
              "sys.stdout.flush()\nprint('done', flush=True)\nimport time; time.sleep(60)\n")
    spec = launch_spec.LaunchSpec(
        kind="llama.cpp", binary=Path(sys.executable), model_path=SCRATCH, argv=(sys.executable, "-c", script),
        env={}, host="127.0.0.1", port=launch_spec.any_free_port(), api_key="k",
        spec=SpecDecision(None, None, NONE, False, ()),
    )
    me = psutil.Process()
    rss_before = me.memory_info().rss
    proc = EngineProcess(spec, record_run=False)
    shown = [0]
    batches = [0]
    done = QEventLoop()

    def on_batch(batch: list[str]) -> None:
        batches[0] += 1
        shown[0] += len(batch)
        if batch and batch[-1] == "done":
            done.quit()

    proc.log_batch.connect(on_batch)
    # A 5 ms heartbeat on the UI thread: the longest gap between beats is the worst stall.
    beat = QTimer()
    beat.setInterval(5)
    clock = QElapsedTimer()
    worst = [0.0]
    last = [0.0]

    def on_beat() -> None:
        now = clock.nsecsElapsed() / 1e9
        worst[0] = max(worst[0], now - last[0])
        last[0] = now

    beat.timeout.connect(on_beat)
    clock.start()
    beat.start()
    start = time.perf_counter()
    proc.start()
    done.exec()
    took = time.perf_counter() - start
    beat.stop()
    rss_peak = me.memory_info().rss
    stop_loop = QEventLoop()
    proc.stopped.connect(stop_loop.quit)
    proc.stop()
    if not proc.flow.ended:
        stop_loop.exec()
    return {
        "seconds": took, "lines_read": proc.lines_read, "batches": batches[0], "lines_shown": shown[0],
        "worst_stall_ms": max(0.0, worst[0] * 1000 - 5), "rss_growth_mib": (rss_peak - rss_before) / 2**20,
        "tail_kept": len(proc.log_lines()),
    }


def cycles(model_path: Path, n: int) -> dict[str, float]:
    from draftwise.core.launch import orphans

    pids: list[int] = []
    start = time.perf_counter()
    for _ in range(n):
        run = headless.HeadlessLaunch(decide(model_path, mtp="off"))
        run.start()
        if not run.wait_ready(60):
            raise RuntimeError(run.log_text())
        run.stop()
        pids += run.pids
    took = time.perf_counter() - start
    left = [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    return {"cycles": n, "seconds": took, "leftover": len(left),
            "run_files": len(list(orphans.run_dir().glob("engine-*.json")))}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    from PySide6.QtCore import QCoreApplication

    app = QCoreApplication.instance() or QCoreApplication([])
    model = tm.write_tiny_model(SCRATCH / "alone" / "tiny-F32.gguf", tm.TinyModel())[0]
    capabilities.capabilities(BINARY)  # cache --help once, as the app does
    hardware.inventory(BINARY)  # the machine, probed once, as the window does at start
    print(f"engine {BINARY}\nscratch {SCRATCH}")
    missed: list[str] = []

    def verdict(name: str, ok: bool) -> str:
        if not ok:
            missed.append(name)
        return "OK" if ok else "MISSED"

    bare, ours, qt = [], [], []
    for _ in range(args.repeat):  # interleaved, so drift hits all three alike
        bare.append(bare_ready(model))
        ours.append(draftwise_ready(model))
        qt.append(qt_ready(app, model))
    b, o, q = statistics.median(bare), statistics.median(ours), statistics.median(qt)
    print(f"request-to-ready (median of {args.repeat}): bare {b * 1000:.1f} ms, headless {o * 1000:.1f} ms "
          f"(ratio {o / b:.3f}), Qt {q * 1000:.1f} ms (ratio {q / b:.3f})  target <= {READY_RATIO_MAX}  "
          + verdict("ready ratio", max(o, q) / b <= READY_RATIO_MAX))
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        decide(model, mtp="off")
    print(f"  of which deciding (read, caps, resolve, plan, spec): "
          f"{(time.perf_counter() - t0) / args.repeat * 1000:.2f} ms a launch")

    exit_to_spawn, line_to_spawn = fallback_latency(SCRATCH / "fam")
    print(f"crash exit -> fallback start: {exit_to_spawn * 1000:.1f} ms after the exit was seen, "
          f"{line_to_spawn * 1000:.1f} ms after the crashed engine's last line  target <= {FALLBACK_MAX_S * 1000:.0f} ms  "
          + verdict("fallback latency", exit_to_spawn <= FALLBACK_MAX_S))

    flood = log_flood(app)
    print(f"300k log lines via Qt: {flood['seconds']:.2f} s, worst UI stall {flood['worst_stall_ms']:.1f} ms "
          f"(target <= {STALL_MAX_MS:.0f}), {flood['batches']} batches, {flood['lines_shown']} lines shown, "
          f"tail kept {flood['tail_kept']} (<= {FLOOD_TAIL_MAX}), RSS growth {flood['rss_growth_mib']:.1f} MiB "
          f"(<= {FLOOD_RSS_MAX_MIB:.0f})  "
          + verdict("log flood", flood["worst_stall_ms"] <= STALL_MAX_MS and flood["tail_kept"] <= FLOOD_TAIL_MAX
                    and flood["rss_growth_mib"] <= FLOOD_RSS_MAX_MIB and flood["lines_read"] >= 300_000))

    c = cycles(model, args.cycles)
    print(f"{c['cycles']} launch/stop cycles in {c['seconds']:.1f} s: {c['leftover']} leftover engine processes, "
          f"{c['run_files']} run files left  target 0  "
          + verdict("cycles", c["leftover"] == 0 and c["run_files"] == 0))
    if missed:
        print("MISSED: " + ", ".join(missed))
        return 1
    print("all targets met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
