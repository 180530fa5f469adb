"""Engine lines that tests read beside the corpus rows, kept in tests/data/engine-lines/.

A corpus row is one start at its spec's own geometry (record.py). Some tests hold a part of
the planner against the engine at other geometries or on another file:

- Gemma 3n's replayed compute graph (tests/test_ggml_sim.py), at other contexts,
  micro-batches and slot counts than the corpus row's;
- the qwen3moe compute grid and DeepSeek-V3.2's indexer cache, on sparse geometries
  (draftwise/testing/geometries.py) rather than corpus specs;
- gpt-oss-20b's sliding-window cache and Qwen3-30B-A3B's compute buffer at a second context
  (tests/test_planner_real.py), beside the corpus rows' 4096 cells;
- the AMX copy of the real Gemma 3 270M Q4_K_M (tests/test_planner_real.py): the real file
  (realmodels.gemma3_270m, checked against its SHA256SUMS), not the corpus's sparse one,
  started without `-nr` on an engine whose CPU module is AMX (sapphirerapids).

`CASES` names each start: a corpus spec (or its real file), the mode, the context per slot,
the slots and `-ub`. `bench/real_models.py --record-extra` plans and starts each as the
corpus judge does (`judge.judge_run` with those preferences: `--no-warmup`, `-nr` in the
mapped modes, the nopopulate preload) and writes its relevant lines (`judge.relevant_lines`)
as `<case>.log`, with record.write's header (spec, mode, build, CPU and its features, the
described machine, the argv) and lines more: `case` (the geometry and the file), `read-by`
(the test) and a case's `note`. An AMX case runs only where the engine loads an AMX module; elsewhere
its recorded log is kept as it is.

The MoE MTP heads' contexts (tests/test_planner.py) are read from the corpus rows
themselves (tests/data/corpus-engine/GLM-4.5-Air-cpu.log, Qwen3.5-35B-A3B-cpu.log): those
rows are started with `--spec-type draft-mtp` at 4096 cells already.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from draftwise.core.planning import cpu_buffers, plan_types
from draftwise.testing import geometries as geo
from draftwise.testing.corpus import build, judge, record, registry
from draftwise.testing.geometries import Geometry

LINES_DIR = record.RECORD_DIR.parent / "engine-lines"
TITLE = "draftwise engine-lines log: the engine's own lines for one start a test reads (bench/real_models.py --record-extra)"
_GGML_SIM = "tests/test_ggml_sim.py::test_gemma3n_compute_is_the_engines"
_AMX = "tests/test_planner_real.py::test_amx_copies_the_tied_head_beside_the_mapped_file"
_SWA = "tests/test_planner_real.py::test_gpt_oss_sliding_window_by_the_files_architecture_name"
_MOE = "tests/test_planner_real.py::test_qwen3_30b_a3b_compute"
_MOE_GRID = "tests/test_planner_real.py::test_moe_compute_over_geometries"
_DSA = "tests/test_planner_real.py::test_deepseek32_indexer_cache"


@dataclass(frozen=True)
class Case:
    spec: str  # the corpus spec (registry name)
    ctx: int  # context per slot
    slots: int = 1
    ubatch: int | None = None  # -ub; None: not passed (the engine's 512)
    mode: str = judge.CPU
    real: bool = False  # the real file (REAL_FILES), not the corpus's sparse one
    read_by: str = ""
    note: str = ""  # a header line more: where else the figure was seen, what re-recording needs
    # A sparse geometry (draftwise/testing/geometries.py) started in place of a corpus spec:
    # `spec` is then its name; the file is written with the tensor data left as a hole.
    geometry: Callable[[], Geometry] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        ub = f"-ub{self.ubatch}" if self.ubatch else ""
        return f"{self.spec}{'-real' if self.real else ''}-{self.mode}-c{self.ctx}-np{self.slots}{ub}"

    def prefs(self) -> plan_types.PlanPrefs:
        return plan_types.PlanPrefs(ctx=self.ctx, slots=self.slots, ubatch=self.ubatch)

    def describe(self) -> str:
        what = ("the real file (realmodels)" if self.real else
                "a sparse geometry (testing/geometries.py)" if self.geometry else
                "the corpus sparse file (corpus/build.py)")  # fmt: skip
        ub = f"-ub {self.ubatch}" if self.ubatch else "-ub not passed (512)"
        return (f"{self.spec}, {what}, mode {self.mode}: {self.ctx} cells a slot, {self.slots} "
                f"slot{'s' if self.slots > 1 else ''}, {ub}")  # fmt: skip


def _e2b(ctx: int, slots: int = 1, ubatch: int = 512) -> Case:
    return Case("gemma-3n-E2B-it", ctx, slots, ubatch, read_by=_GGML_SIM)


def _moe_grid(n_embd: int, ff: int, used: int) -> Case:
    """One cell of the qwen3moe compute grid: 2 blocks, 16 heads x 128 (4 KV heads), 16
    experts of width `ff`, `used` of them, a vocabulary of 4096."""
    g = geo.moe_grid(n_embd, ff, used)
    return Case(g.name, 4096, geometry=lambda: g, read_by=_MOE_GRID)


# (n_embd, expert width, experts used): where the compute buffer's fit was checked.
MOE_GRID = ((1024, 256, 2), (1024, 256, 8), (1024, 768, 8), (1024, 1536, 8), (2048, 256, 8), (2048, 768, 2),
            (2048, 768, 8), (2048, 1536, 8), (4096, 256, 8), (4096, 768, 8), (4096, 1536, 2), (4096, 1536, 8))


CASES: tuple[Case, ...] = (
    _e2b(4096), _e2b(2048), _e2b(8192), _e2b(32768), _e2b(4096, ubatch=256), _e2b(4096, ubatch=1024),
    _e2b(4096, slots=2),
    Case("gemma-3n-E4B-it", 4096, 1, 512, read_by=_GGML_SIM),
    # The corpus rows give these at 4096 cells (corpus-engine/gpt-oss-20b-cpu.log,
    # Qwen3-30B-A3B-cpu.log); the planner is held to them at one more context each.
    Case("gpt-oss-20b", 8192, read_by=_SWA),
    Case("Qwen3-30B-A3B", 32768, read_by=_MOE),
    *(_moe_grid(*cell) for cell in MOE_GRID),
    Case(geo.deepseek32_small().name, 4096, geometry=geo.deepseek32_small, read_by=_DSA),
    Case("gemma-3-270m-it", 4096, mode=judge.AMX, real=True, read_by=_AMX,
         note="re-recorded only where the engine loads an AMX CPU module (cpu_buffers.AMX_VARIANTS); issue 18's "
              "filer saw this start on a sapphirerapids CPU (-lv 4) and reported 213.9 MiB of AMX, 449.1 MiB of "
              "weights in all"),
)  # fmt: skip


def _real_gemma3_270m() -> Path:
    from draftwise.testing import realmodels

    return realmodels.gemma3_270m()


REAL_FILES: dict[str, Callable[[], Path]] = {"gemma-3-270m-it": _real_gemma3_270m}


def path_of(name: str, folder: Path = LINES_DIR) -> Path:
    return folder / f"{name}.log"


def read(name: str, folder: Path = LINES_DIR) -> record.Recorded:
    """The recorded lines of case `name` (Case.name), with its header."""
    return record.read(path_of(name, folder))


def model_file(case: Case, pinned: Path | None = None, folder: Path | None = None) -> Path:
    if case.geometry is not None:
        return geo.write_sparse(Path(folder or tempfile.mkdtemp()) / f"{case.spec}.gguf", case.geometry())
    return REAL_FILES[case.spec]() if case.real else build.generate(registry.get(case.spec), pinned=pinned)


@dataclass(frozen=True)
class _GeometrySpec:
    """What the judge reads of a corpus spec, for a geometry started in its place."""

    name: str
    ctx: int
    spec_type: str | None = None


def spec_of(case: Case):
    return _GeometrySpec(case.spec, case.ctx) if case.geometry is not None else registry.get(case.spec)


def record_cases(cpu_engine: Path, folder: Path = LINES_DIR, *, cases: tuple[Case, ...] | list[Case] = CASES,
                 pinned: Path | None = None,
                 on_run: Callable[[Case, judge.Run | None, str], None] | None = None,
                 ) -> list[tuple[Case, judge.Run | None, Path | None]]:  # fmt: skip
    """Each case started on `cpu_engine` and its lines written into `folder`; an AMX case is
    left as recorded where the engine loads no AMX module. `on_run(case, run, note)`."""
    amx = judge.cpu_variant(cpu_engine) in cpu_buffers.AMX_VARIANTS
    out: list[tuple[Case, judge.Run | None, Path | None]] = []
    with tempfile.TemporaryDirectory(prefix="draftwise-engine-lines-") as tmp:
        for case in cases:
            if case.mode == judge.AMX and not amx:
                note = f"kept as recorded: the engine loads {judge.cpu_variant(cpu_engine)}, not an AMX module"
                out.append((case, None, None))
                if on_run:
                    on_run(case, None, note)
                continue
            run = judge.judge_run(spec_of(case), model_file(case, pinned, Path(tmp)), case.mode,  # type: ignore[arg-type]
                                  cpu_engine=cpu_engine, work=Path(tmp) / case.name, prefs=case.prefs())  # fmt: skip
            path = None
            if run.ready:
                extra = {"case": case.describe(), "read-by": case.read_by, **({"note": case.note} if case.note else {})}
                path = record.write(folder, case.spec, run, cpu_engine, name=case.name, title=TITLE, extra=extra)
            out.append((case, run, path))
            if on_run:
                on_run(case, run, str(path) if path else f"not written: {run.problem or 'not ready'}")
    return out


def prune(folder: Path = LINES_DIR) -> list[Path]:
    """Logs in `folder` that no case writes any more, removed."""
    names = {c.name for c in CASES}
    gone = [p for p in sorted(folder.glob("*.log")) if p.stem not in names]
    for p in gone:
        p.unlink()
    return gone
