"""Engine lines that tests read beside the corpus rows, kept in tests/data/engine-lines/.

A corpus row is one start at its spec's own geometry (record.py). Some tests hold a part of
the planner against the engine at other geometries or on another file:

- Gemma 3n's replayed compute graph (tests/test_ggml_sim.py), at other contexts,
  micro-batches and slot counts than the corpus row's;
- the qwen3moe compute grid and DeepSeek-V3.2's indexer cache, on sparse geometries
  (draftwise/testing/geometries.py) rather than corpus specs;
- gpt-oss-20b's sliding-window cache and Qwen3-30B-A3B's compute buffer at a second context
  (tests/test_planner_real.py), beside the corpus rows' 4096 cells;
- the Vulkan compute buffer with every block on Vulkan0 (tests/test_vulkan_compute.py), on
  lavapipe: published geometries that are not Vulkan corpus rows (too large for lavapipe's
  reported 2048 MiB, so the device is described larger: `vulkan_capacity`) and a grid of
  small qwen3, llama and gemma3 files (`VULKAN_GRID`, geometries.dense);
- the AMX copy of the real Gemma 3 270M Q4_K_M (tests/test_planner_real.py): the real file
  (realmodels.gemma3_270m, checked against its SHA256SUMS), not the corpus's sparse one,
  started without `-nr` on an engine whose CPU module is AMX (sapphirerapids).

`CASES` names each start: a corpus spec (or its real file), the mode, the context per slot,
the slots and `-ub`. `bench/real_models.py --record-extra` plans and starts each as the
corpus judge does (`judge.judge_run` with those preferences: `--no-warmup`, `-nr` in the
mapped modes, the nopopulate preload) and writes its relevant lines (`judge.relevant_lines`)
as `<case>.log`, with record.write's header (spec, mode, build, CPU and its features, the
described machine, the argv) and lines more: `case` (the geometry and the file), `read-by`
(the test) and a case's `note`. An AMX case runs only where the engine loads an AMX module, a
Vulkan case only when a Vulkan engine is given; elsewhere its recorded log is kept as it is.

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
_VK = "tests/test_vulkan_compute.py::test_the_replayed_vulkan_split_is_the_engines"
_VK_WIDE = "tests/test_vulkan_compute.py::test_without_a_traced_order_a_query_as_wide_as_n_embd_leaves_out_the_embeddings_input"
_VK_OTHER = "tests/test_vulkan_compute.py::test_without_a_traced_order_another_query_width_keeps_the_cpu_figure"
# The Vulkan device described for a published geometry: room for its Q4_K_M weights, cache
# and compute, so the plan puts every block on Vulkan0 (`-ngl all --fit off`) as the test
# assumes; lavapipe reports 2048 MiB but allocates host RAM past it.
VK_ROOM = 8 << 30


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
    vulkan_capacity: int | None = None  # vulkan: the device's described size (judge.described_vulkan)

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


def _vulkan(spec: str, read_by: str = _VK) -> Case:
    """A published corpus geometry with every block on Vulkan0 (the device described with
    VK_ROOM)."""
    return Case(spec, 4096, mode=judge.VULKAN, vulkan_capacity=VK_ROOM, read_by=read_by,
                note=f"the Vulkan device described with {VK_ROOM >> 20} MiB in place of lavapipe's reported 2048 "
                     "(host RAM behind it), so every block is planned on it")  # fmt: skip


def _vulkan_grid(arch: str, n_embd: int, q: int, kv: int, ff: int, n_layer: int) -> Case:
    g = geo.dense(arch, n_embd=n_embd, q=q, kv=kv, ff=ff, n_layer=n_layer)
    return Case(g.name, 4096, mode=judge.VULKAN, geometry=lambda: g, read_by=_VK)


def _vulkan_moe() -> Geometry:
    """A qwen3moe whose query is as wide as n_embd (8 heads x 128 of 1024; 4 KV heads, 3
    blocks, 16 experts of 768, 8 used, a vocabulary of 32000)."""
    return geo.qwen3moe("qwen3moe-e1024-ff768-u8-3L", n_embd=1024, n_layer=3, n_head=8, n_head_kv=4, head_dim=128,
                        n_expert=16, n_expert_used=8, n_ff_exp=768, n_vocab=32000,
                        source="a query as wide as n_embd, not a published model")  # fmt: skip


# (arch, n_embd, query, K and V each, FFN, blocks): the widths the Vulkan replay is held to;
# qwen3 moves the query 0.5-3 x n_embd and K/V 0.25-2 x n_embd, llama has no Q/K norms,
# gemma3 adds the 512-token sliding window.
VULKAN_GRID = (
    ("qwen3", 1024, 2048, 1024, 3072, 4), ("qwen3", 1024, 2048, 1024, 4096, 4),
    *(("qwen3", 1024, q, kv, 4096, 2) for q, kv in (
        (512, 256), (768, 256), (1024, 256), (1280, 256), (1536, 256), (1792, 256), (2048, 256), (2304, 256),
        (2560, 256), (3072, 256), (2048, 512), (2048, 2048), (1536, 512), (1536, 768), (1536, 1536), (1024, 512),
        (1024, 1024), (2560, 1280), (3072, 1024), (768, 768), (512, 512))),
    *(("llama", 1024, q, kv, ff, 3) for q, kv, ff in (
        (768, 256, 4096), (2048, 1024, 4096), (1536, 768, 4096), (2048, 1024, 3072), (512, 256, 4096))),
    *(("gemma3", 1024, q, kv, ff, 7) for q, kv, ff in (
        (512, 256, 4096), (768, 256, 4096), (1024, 512, 4096), (1536, 256, 4096), (2048, 1024, 4096),
        (2048, 1024, 3072))),
)  # fmt: skip


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
    *(_vulkan(s) for s in ("Llama-3.2-3B-Instruct", "Qwen2.5-3B-Instruct", "Qwen3-4B", "gemma-3-4b-it")),
    *(_vulkan_grid(*cell) for cell in VULKAN_GRID),
    _vulkan("Phi-3-mini-4k-instruct", _VK_WIDE), _vulkan("SmolLM3-3B", _VK_WIDE),
    Case(_vulkan_moe().name, 4096, mode=judge.VULKAN, geometry=_vulkan_moe, read_by=_VK_WIDE),
    _vulkan("gemma-2-2b-it", _VK_OTHER),
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
                 pinned: Path | None = None, vulkan_engine: Path | None = None,
                 on_run: Callable[[Case, judge.Run | None, str], None] | None = None,
                 ) -> list[tuple[Case, judge.Run | None, Path | None]]:  # fmt: skip
    """Each case started on `cpu_engine` (a Vulkan case on `vulkan_engine`) and its lines
    written into `folder`; an AMX case is left as recorded where the engine loads no AMX
    module, a Vulkan case without a Vulkan engine. `on_run(case, run, note)`."""
    amx = judge.cpu_variant(cpu_engine) in cpu_buffers.AMX_VARIANTS
    out: list[tuple[Case, judge.Run | None, Path | None]] = []
    with tempfile.TemporaryDirectory(prefix="draftwise-engine-lines-") as tmp:
        for case in cases:
            skip = (f"kept as recorded: the engine loads {judge.cpu_variant(cpu_engine)}, not an AMX module"
                    if case.mode == judge.AMX and not amx else
                    "kept as recorded: no Vulkan engine" if case.mode == judge.VULKAN and vulkan_engine is None
                    else "")  # fmt: skip
            if skip:
                note = skip
                out.append((case, None, None))
                if on_run:
                    on_run(case, None, note)
                continue
            run = judge.judge_run(spec_of(case), model_file(case, pinned, Path(tmp)), case.mode,  # type: ignore[arg-type]
                                  cpu_engine=cpu_engine, vulkan_engine=vulkan_engine, work=Path(tmp) / case.name,
                                  prefs=case.prefs(), vulkan_capacity=case.vulkan_capacity)  # fmt: skip
            path = None
            engine = vulkan_engine if case.mode == judge.VULKAN and vulkan_engine else cpu_engine
            if run.ready:
                extra = {"case": case.describe(), "read-by": case.read_by, **({"note": case.note} if case.note else {})}
                path = record.write(folder, case.spec, run, engine, name=case.name, title=TITLE, extra=extra)
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
