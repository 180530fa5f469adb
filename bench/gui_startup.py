"""How fast the window appears, and whether a library scan ever stalls it.

1. Cold start: `draftwise-gui --first-paint-exit` in a fresh subprocess, offscreen; the time
   from just before the process is spawned to its first paint event (the child prints the
   wall clock at that moment). Target <= 1.0 s.
2. Library scan: 200 GGUF files (tiny real models, several architectures, one split set)
   scanned by LibraryViewModel with the fit badge computed, while a 5 ms QTimer ticks on
   the GUI thread; prints the scan time and the largest gap between ticks. Targets: scan
   <= 2 s, largest gap <= 50 ms. With --big N, also N Qwen-size headers (152k-token
   vocabulary) to show the stall a heavy header costs.

    .venv/bin/python bench/gui_startup.py [--runs 5] [--files 200] [--big 0]

Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_START_MAX_S = 1.0
SCAN_MAX_S = 2.0
GAP_MAX_S = 0.050
sys.path.insert(0, str(ROOT / "app"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def cold_start(runs: int) -> list[float]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DRAFTWISE_CONFIG_DIR": tmp}
        for _ in range(runs):
            t0 = time.time()
            r = subprocess.run([sys.executable, "-m", "draftwise.gui", "--first-paint-exit"],
                               capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
            line = next((x for x in r.stdout.splitlines() if x.startswith("first-paint ")), None)
            if line is None:
                raise SystemExit(f"no first paint reported:\n{r.stdout}\n{r.stderr}")
            out.append(float(line.split()[1]) - t0)
    return out


def make_library(folder: Path, n: int, big: int) -> int:
    from draftwise.testing.tinymodels import TinyModel, draft_model, mtp_model, write_tiny_model

    seeds = [
        write_tiny_model(folder / "seed" / "llama-F32.gguf", TinyModel())[0],
        write_tiny_model(folder / "seed" / "glm4moe-mtp-F32.gguf", mtp_model())[0],
        write_tiny_model(folder / "seed" / "llama-draft-F32.gguf", draft_model())[0],
        write_tiny_model(folder / "seed" / "llama-Q8_0.gguf", TinyModel(dtype="Q8_0", n_layer=4))[0],
    ]
    split = write_tiny_model(folder / "split" / "split-F32.gguf", TinyModel(), split_max_tensors=4)
    count = 4 + 1  # the seeds and the split set, each one model
    i = 0
    while count < n:
        src = seeds[i % len(seeds)]
        sub = folder / f"publisher-{i % 10}" / f"model-{i}"
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, sub / f"model-{i}-{src.name}")
        count += 1
        i += 1
    if big:
        sys.path.insert(0, str(ROOT / "bench"))
        from gguf_inspect import write_qwen_like

        first = folder / "big" / "qwen-like-0.gguf"
        first.parent.mkdir(parents=True, exist_ok=True)
        write_qwen_like(first)
        for k in range(1, big):
            shutil.copyfile(first, first.with_name(f"qwen-like-{k}.gguf"))
    del split
    return count + big


def scan(folder: Path) -> tuple[int, float, float, int]:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from draftwise.services.library_scan import TaskRunner
    from draftwise.viewmodels.library import LibraryViewModel
    from draftwise.viewmodels.plan import probe_machine

    app = QApplication.instance() or QApplication([])  # noqa: F841 — Qt needs one
    lib = LibraryViewModel(TaskRunner())
    lib.machine = probe_machine()
    lib.set_sources([str(folder)], [])
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    loop = QEventLoop()
    lib.scan_finished.connect(lambda n: loop.quit())
    timer.start()
    last[0] = time.perf_counter()
    start = time.perf_counter()
    lib.rescan()
    loop.exec()
    seconds = time.perf_counter() - start
    timer.stop()
    rows = lib.model.rowCount()
    fits = sum(1 for r in lib.model.rows if r.fit)
    return rows, seconds, max(gaps) if gaps else 0.0, fits


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--files", type=int, default=200)
    p.add_argument("--big", type=int, default=0)
    args = p.parse_args()

    times = cold_start(args.runs)
    cold_ok = statistics.median(times) <= COLD_START_MAX_S
    print(f"cold start to first paint: median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s, max {max(times):.3f} s over {len(times)} runs "
          f"(first {times[0]:.3f} s)  target <= {COLD_START_MAX_S} s  {'OK' if cold_ok else 'OVER'}")

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "library"
        made = make_library(folder, args.files, args.big)
        rows, seconds, gap, fits = scan(folder)
        scan_ok = seconds <= SCAN_MAX_S and gap <= GAP_MAX_S and rows > 0
        print(f"library scan: {rows} models ({made} files, fit badge on {fits}) in {seconds:.3f} s, "
              f"largest GUI gap {gap * 1000:.1f} ms  targets <= {SCAN_MAX_S:.0f} s, "
              f"<= {GAP_MAX_S * 1000:.0f} ms  {'OK' if scan_ok else 'OVER'}")
    if not (cold_ok and scan_ok):
        print("MISSED: " + ", ".join(n for n, ok in (("cold start", cold_ok), ("library scan", scan_ok)) if not ok))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
