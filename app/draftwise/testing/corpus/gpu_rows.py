"""Corpus rows started on a real GPU, kept in tests/data/engine-lines/<mode>-<gpu>/ (issue 39).

The corpus rows (gate.py) run on the CPU and on lavapipe; no CI machine has an NVIDIA card.
`bench/cuda_check.py`, run once on a machine that has one, starts each `Case` (a corpus spec
at one context, in mode `cuda`: every block planned on CUDA0) with `judge.judge_run`, the
same judge as the corpus gate, and writes each start's relevant lines into a folder named for
the mode and the GPU (`cuda-h100-80gb-hbm3`) with record.write's header plus `ctx` and `gpu`,
and the engine's capabilities beside them (`engine.json`, record.write_engine).

tests/test_corpus_recorded.py plans every row of every `cuda-*` folder again on each run,
without the engine (`rejudge_folder`: `judge.replan` for the recorded machine at the recorded
context), and judges it under judge.py's targets: the CUDA rows are held to the planner like
the AMX and Vulkan rows. The same script on a computer without CUDA (`--backend cpu`) writes
a `cpu-<processor>` folder the same way; only folders recorded on a real GPU are committed.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.planning import plan_types
from draftwise.testing.corpus import build, judge, record, registry
from draftwise.testing.corpus.spec import ModelSpec

LINES_DIR = record.RECORD_DIR.parent / "engine-lines"
GPU_GLOB = "cuda-*"  # the folders tests/test_corpus_recorded.py judges again
TITLE = "draftwise gpu-rows log: the engine's own lines for one corpus row on a real GPU (bench/cuda_check.py)"
READ_BY = "tests/test_corpus_recorded.py::test_the_rows_recorded_on_a_real_gpu"


@dataclass(frozen=True)
class Case:
    spec: str  # the corpus spec (an assistant's name: its target launched with it as the drafter)
    ctx: int  # context per slot
    mode: str = judge.CUDA

    @property
    def name(self) -> str:
        return f"{self.spec}-{self.mode}-c{self.ctx}-np1"

    def prefs(self) -> plan_types.PlanPrefs:
        return plan_types.PlanPrefs(ctx=self.ctx)

    def describe(self) -> str:
        return f"{self.spec}, the corpus sparse file (corpus/build.py), mode {self.mode}: {self.ctx} cells, 1 slot"


def cases(specs: Iterable[str], contexts: Iterable[int], mode: str = judge.CUDA) -> list[Case]:
    return [Case(s, c, mode) for s in specs for c in contexts]


def folder_name(mode: str, device: str) -> str:
    """`cuda-h100-80gb-hbm3` for mode cuda on an "NVIDIA H100 80GB HBM3"."""
    words = re.sub(r"\((r|tm)\)", "", device.lower())
    slug = re.sub(r"^(nvidia|amd|intel)-", "", re.sub(r"[^a-z0-9]+", "-", words).strip("-")) or "unknown"
    return f"{mode}-{slug}"


def files(case_spec: str, pinned: Path | None = None) -> tuple[ModelSpec, Path, Path | None]:
    """(the launched spec, its file, the drafter's file beside it) for a row's spec."""
    spec = registry.get(case_spec)
    if spec.companion_of:
        target = registry.get(spec.companion_of)
        return target, build.generate(target, pinned=pinned), build.generate(spec, pinned=pinned)
    return spec, build.generate(spec, pinned=pinned), None


def judge_case(case: Case, *, cpu_engine: Path, gpu_engine: Path | None, work: Path,
               pinned: Path | None = None) -> judge.Run:  # fmt: skip
    """One row started on the engine and judged (judge.judge_run at the case's context)."""
    target, path, companion = files(case.spec, pinned)
    run = judge.judge_run(target, path, case.mode, cpu_engine=cpu_engine,
                          vulkan_engine=gpu_engine if case.mode == judge.VULKAN else None,
                          cuda_engine=gpu_engine if case.mode == judge.CUDA else None,
                          work=work, companion=companion, prefs=case.prefs())  # fmt: skip
    if companion is not None:
        run.model = f"{target.name} + assistant"
    return run


def write(folder: Path, case: Case, run: judge.Run, engine: Path) -> Path:
    gpus = run.machine.gpus if run.machine is not None else []
    gpu = "; ".join(f"{g.device} {g.name}, {g.total_bytes >> 20} MiB" for g in gpus) or "none (the CPU engine)"
    extra = {"ctx": str(case.ctx), "gpu": gpu, "case": case.describe(), "read-by": READ_BY}
    return record.write(folder, case.spec, run, engine, name=case.name, title=TITLE, extra=extra)


def folders(root: Path = LINES_DIR) -> list[Path]:
    """The folders of rows recorded on a real GPU (with their engine.json)."""
    return sorted(p for p in root.glob(GPU_GLOB) if (p / record.ENGINE_FILE).is_file())


def rejudge_folder(folder: Path, *, pinned: Path | None = None) -> list[tuple[record.Recorded, judge.Run]]:
    """Every row of `folder` planned again now, without the engine, for the machine it was
    recorded on at its context (`ctx`, else the spec's), against its recorded lines."""
    caps = record.engine_caps(folder)
    out = []
    with tempfile.TemporaryDirectory(prefix="draftwise-gpu-rows-") as tmp:
        for rec in record.read_all(folder):
            target, path, companion = files(rec.spec, pinned)
            ctx = int(rec.header.get("ctx") or registry.get(rec.spec).ctx)
            run = judge.replan(target, path, rec.mode, caps=caps[rec.mode], machine=rec.machine, lines=rec.lines,
                               work=Path(tmp) / rec.path.stem, companion=companion,
                               prefs=plan_types.PlanPrefs(ctx=ctx))  # fmt: skip
            run.model = rec.model
            out.append((rec, run))
    return out
