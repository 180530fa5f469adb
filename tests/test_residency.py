"""Lazy embeddings (core/planning/residency.py, issue 21 item 6): a mapped row table on the CPU
is read one row per token, so the RAM fit counts the rows the contexts can touch, not the
table, unless the CPU's output head reads the whole table. On the corpus Gemma 3 geometries
(the 270M's table is the real file's; 27B: 262,208 x 5376, 1.4B parameters). The real
engine under a memory limit is bench/lazy_embeddings.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.machine.hardware import GB, Gpu, Machine, cpu_only
from draftwise.core.planning import extra_args, plan_types, planner, residency
from draftwise.core.speculation.resolver import NONE, SpecDecision
from draftwise.testing.corpus import build, registry

MiB = 1 << 20
PAGE = residency.PAGE
NO_SPEC = SpecDecision(None, None, NONE, False)


def test_the_bound_is_rows_times_their_pages():
    # Gemma 3 270M: 262,144 rows of 640 Q8_0 values, 680 bytes: a row lies on at most 2 pages.
    table = 262144 * 680
    assert residency.table_working_set(table, 262144, 1024) == 1024 * 2 * PAGE == 8 * MiB
    # 27B: rows of 5376 values; at Q6_K (210 B per 256) 4410 bytes, on at most 3 pages.
    row = 5376 // 256 * 210
    assert residency.table_working_set(262208 * row, 262208, 32768) == 32768 * 3 * PAGE
    # More cells than rows: every row once, never more than the table.
    assert residency.table_working_set(100 * 680, 100, 4096) == 100 * 680
    assert residency.table_working_set(table, 262144, 0) == 0
    assert residency.page_size("Darwin") == 4 * PAGE and residency.page_size("Linux") == PAGE


def test_the_head_reading_the_table_keeps_it_whole():
    tables = [residency.RowTable("token_embd.weight", 262144 * 680, 262144),
              residency.RowTable("per_layer_token_embd.weight", 262144 * 8000, 262144)]  # fmt: skip
    ple = 262144 * 8000 - residency.table_working_set(262144 * 8000, 262144, 4096)
    embd = 262144 * 680 - residency.table_working_set(262144 * 680, 262144, 4096)
    assert residency.lazy_bytes(tables, 4096, head_reads_embedding=True) == ple
    assert residency.lazy_bytes(tables, 4096, head_reads_embedding=False) == ple + embd


@pytest.fixture(scope="module")
def gemma(pinned_source: Path) -> dict[str, gguf.ModelInfo]:
    try:
        return {n: gguf.read_model(build.generate(registry.get(n), pinned=pinned_source))
                for n in ("gemma-3-270m-it", "gemma-3-27b-it")}  # fmt: skip
    except RuntimeError as exc:  # the real Gemma 3 270M (its token list) or llama-quantize is missing
        pytest.skip(f"the corpus files could not be written: {exc}")


def embedding(info: gguf.ModelInfo) -> gguf.TensorInfo:
    return next(t for t in gguf.read_header(info.path).tensors if t.name == "token_embd.weight")


def cuda(vram_gb: float, ram_gb: float, ram_available_gb: float | None = None) -> Machine:
    gpu = Gpu(0, "cuda", "RTX 4090", "GPU-0", int(vram_gb * GB), int(vram_gb * GB), device="CUDA0")
    return Machine(int(ram_gb * GB), int((ram_available_gb or ram_gb) * GB), [gpu], "Linux")


def ram_of(p: planner.Plan) -> plan_types.DeviceUse:
    return next(d for d in p.per_device if d.kind == "cpu")


def test_270m_with_its_head_on_the_gpu_keeps_the_rows_it_reads(gemma):
    info = gemma["gemma-3-270m-it"]
    t = embedding(info)
    p = planner.plan(info, NO_SPEC, cuda(8, 16), planner.PlanPrefs(ctx=4096))
    ram = ram_of(p)
    # The engine's CPU_Mapped line is still the whole table (the plan's weights there) ...
    assert ram.weights == t.nbytes  # output_norm goes with the head to the GPU
    # ... but 4096 cells touch at most 4096 rows of two pages: 32 MiB of its 170.
    bound = 4096 * 2 * PAGE
    assert ram.lazy == t.nbytes - bound and p.bytes.lazy == ram.lazy
    assert ram.working_set == ram.total - (t.nbytes - bound)
    assert ram.to_json()["working_set"] == ram.working_set


def test_270m_on_a_cpu_whose_head_reads_the_table_counts_it_whole(gemma):
    """No GPU and no AMX (zen4 here): the tied head's logits read every row each token."""
    info = gemma["gemma-3-270m-it"]
    t = embedding(info)
    zen4 = replace(cpu_only(16 * GB), cpu_variant="zen4")
    p = planner.plan(info, NO_SPEC, zen4, planner.PlanPrefs(ctx=4096))
    ram = ram_of(p)
    assert ram.working_set >= t.nbytes + sum(p.bytes.cpu_extra.values())
    # What is lazy is the mapped range's holes: the blocks' Q4_K weights re-laid into
    # CPU_REPACK leave their pages in the file, never read again.
    assert 0 < ram.lazy <= p.bytes.cpu_extra.get("CPU_REPACK", 0)
    # With AMX the head is re-laid into the AMX buffer, and the table is read by rows.
    amx = planner.plan(info, NO_SPEC, replace(zen4, cpu_variant="sapphirerapids"), planner.PlanPrefs(ctx=4096))
    assert ram_of(amx).lazy >= t.nbytes - 4096 * 2 * PAGE
    # Weights the engine does not map (--load-mode mlock) are all resident.
    locked = planner.plan(info, NO_SPEC, cuda(8, 16), planner.PlanPrefs(ctx=4096, load_mode="mlock"))
    assert ram_of(locked).lazy == 0
    prefs = extra_args.with_engine_args(planner.PlanPrefs(ctx=4096), info, ("--load-mode", "mmap+mlock"))
    assert prefs.load_mode == "mmap+mlock" and ram_of(planner.plan(info, NO_SPEC, cuda(8, 16), prefs)).lazy == 0


def test_27b_fits_a_ram_its_table_would_not(gemma):
    """Gemma 3 27B wholly on a 48 GB GPU: RAM keeps the 1.4B-parameter table mapped, of which
    32k cells read at most 32,768 rows."""
    info = gemma["gemma-3-27b-it"]
    t = embedding(info)
    assert t.shape == (5376, 262208) and t.nbytes > GB
    roomy = planner.plan(info, NO_SPEC, cuda(48, 64), planner.PlanPrefs(ctx=32768))
    ram = ram_of(roomy)
    row = -(-t.nbytes // 262208)
    bound = 32768 * (-(-row // PAGE) + 1) * PAGE
    assert roomy.fits and roomy.gpu_layers == roomy.n_layers
    assert ram.lazy == t.nbytes - bound and ram.lazy > 700 * MiB
    # RAM just above the working set (and the 1 GiB margin): it fits; the table counted whole
    # would not have.
    need = ram.working_set + plan_types.RAM_MARGIN + 16 * MiB
    tight = planner.plan(info, NO_SPEC, cuda(48, 64, need / GB), planner.PlanPrefs(ctx=32768))
    tram = ram_of(tight)
    assert tight.fits and tight.ctx == 32768 and tram.total > tram.capacity >= tram.working_set
    locked = planner.plan(info, NO_SPEC, cuda(48, 64, need / GB), planner.PlanPrefs(ctx=32768, load_mode="mlock"))
    assert ram_of(locked).lazy == 0 and not locked.fits
