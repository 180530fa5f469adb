"""Every corpus row judged: live against the engine (`judge_all`, CI's gate in
tests/test_real_geometry_engine.py and `bench/real_models.py`) or again from the recorded
lines (`rejudge_recorded`, tests/test_corpus_recorded.py, no engine).

A row is one spec in one mode (`judge.default_modes`); the Gemma 4 assistant's row is its
target launched with the assistant beside it. `KNOWN_MISSES` names, per row, the
"device:component" judgements the planner still misses, with the engine's figures: a run
must miss exactly those (a new miss fails, and so does a listed one that starts to pass),
and no judgement's error may grow by more than DRIFT past the accepted one (errors.json,
written by `bench/real_models.py --accept`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.planning import cpu_buffers
from draftwise.testing.corpus import build, judge, record, registry
from draftwise.testing.corpus.spec import ModelSpec

MiB = 1 << 20

# The rows a planner constant was fitted or traced on (the constant's docstring in
# core/planning/compute_buffer.py or mtp_head.py names them): they are judged too, but they
# are not evidence that the constant holds. Every other row is held out: no constant was
# fitted on it. (The dense, MoE, Mamba-2 and MLA widths were fitted on tiny and synthetic
# geometries, none of them a corpus row; docs/planner.md.)
FIT_ROWS: dict[tuple[str, str], str] = {
    ("Qwen3.5-0.8B", "cpu"): "the gated delta net width (_width_gdn); the gated MTP head (GATED_MTP)",
    ("Qwen3.5-0.8B", "repack"): "the gated delta net width (_width_gdn); the gated MTP head (GATED_MTP)",
    ("Qwen3.5-27B", "cpu"): "the GDN hybrids' FFN phase (compute_width); the gated MTP head's FFN (GATED_MTP)",
    ("LFM2-700M", "cpu"): "the short-conv hybrids' FFN phase (compute_width)",
    ("LFM2-1.2B", "cpu"): "the short-conv hybrids' FFN phase (compute_width)",
    ("GLM-4.5-Air", "cpu"): "the MoE MTP head's phase (mtp_moe_phase)",
    ("Qwen3.5-35B-A3B", "cpu"): "the MoE MTP head's phase (mtp_moe_phase); the gated MTP attention (GATED_MTP, 64k)",
    ("Llama-3.2-1B-Instruct", "vulkan"): "the Vulkan host compute (host_compute); the Vulkan block order, traced (vulkan_compute)",
    ("Qwen3-0.6B", "vulkan"): "the Vulkan host compute (host_compute); the Vulkan block order, traced (vulkan_compute)",
    ("gemma-3-1b-it", "vulkan"): "the Vulkan host compute (host_compute); the Vulkan block order, traced (vulkan_compute)",
    ("gemma-3-270m-it", "vulkan"): "the Vulkan block order, traced (vulkan_compute)",
    ("Qwen2.5-0.5B-Instruct", "vulkan"): "the Vulkan block order, traced (vulkan_compute)",
    ("SmolLM2-135M-Instruct", "vulkan"): "the Vulkan GPU's missing inp_embd, traced (vulkan_compute)",
    ("LFM2-350M", "vulkan"): "the Vulkan GPU's missing inp_embd, traced (vulkan_compute)",
    ("gemma-2-2b-it", "vulkan"): "the Vulkan host compute and the offloaded compute (offloaded_compute, traced)",
    ("SmolLM2-1.7B-Instruct", "vulkan"): "the offloaded compute (offloaded_compute, traced)",
}

# (spec, mode) -> the rows the planner misses under judge's targets, planned / engine MiB on
# the pinned engine 11434 (tests/data/corpus-engine/<spec>-<mode>.log has the engine's lines).
# (The gated MTP heads' contexts, 1.1-5.4 MiB under before, are mtp_head.GATED_MTP's; the Gemma 4
# assistant's, 6.0 MiB under before, is its graph replayed: gemma4_assistant_graph; the 8 Vulkan0
# compute misses, 1.1-6.0 MiB over, vulkan_compute's: the GPU holds no inp_embd and runs its own
# block order.)
KNOWN_MISSES: dict[tuple[str, str], set[str]] = {
}


@dataclass
class Row:
    spec: ModelSpec  # the spec the row belongs to (the assistant for its pair)
    target: ModelSpec  # what is launched (the assistant's target for its pair)
    mode: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.spec.name, self.mode)


def rows(specs: tuple[ModelSpec, ...] | list[ModelSpec], vulkan_capacity: int | None, *,
         amx: bool = False, pinned: Path | None = None) -> Iterator[tuple[Row, Path, Path | None]]:  # fmt: skip
    """(row, the launched file, the companion file) for every corpus row; `amx`: the CPU has
    an AMX module (the amx mode runs)."""
    for spec in specs:
        path = build.generate(spec, pinned=pinned)
        if spec.companion_of:
            target = registry.get(spec.companion_of)
            yield Row(spec, target, judge.CPU), build.generate(target, pinned=pinned), path
            continue
        for mode in judge.default_modes(spec, path, vulkan_capacity):
            if mode == judge.AMX and not amx:
                continue
            yield Row(spec, spec, mode), path, None


# A judgement's error may not grow past the accepted one (errors.json beside the recorded
# lines) by more than this: a +3 % slip within the 5 % target still fails the gate.
DRIFT = 0.01
ERRORS_FILE = "errors.json"


def accepted_errors(folder: Path = record.RECORD_DIR) -> dict[str, float]:
    import json

    path = folder / ERRORS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def write_errors(done: list[tuple[Row, judge.Run]], folder: Path = record.RECORD_DIR) -> Path:
    """Accept the current errors (bench/real_models.py --accept): what DRIFT is measured from."""
    import json

    data = {_error_key(row.key, r): round(r.error, 4) for row, run in done for r in run.rows if r.error is not None}
    path = folder / ERRORS_FILE
    path.write_text(json.dumps(dict(sorted(data.items())), indent=0) + "\n", encoding="utf-8")
    return path


def _error_key(row_key: tuple[str, str], r: judge.Row) -> str:
    return f"{row_key[0]} {row_key[1]} {r.device}:{r.component}"


def surprises(row_key: tuple[str, str], run: judge.Run, errors: dict[str, float] | None = None) -> list[str]:
    """What differs from KNOWN_MISSES for this row: new misses and listed rows that pass; with
    `errors` (accepted_errors), every judgement whose error grew by more than DRIFT."""
    out_drift = []
    for r in run.rows if errors else ():
        was = errors.get(_error_key(row_key, r))
        if was is not None and r.error is not None and abs(r.error) > abs(was) + DRIFT:
            out_drift.append(f"{row_key[0]} ({row_key[1]}): {r.device}:{r.component} {r.error:+.1%}, accepted "
                             f"{was:+.1%} (planned {r.planned / MiB:.2f}, engine {r.actual / MiB:.2f} MiB)")  # fmt: skip
    missed = {f"{r.device}:{r.component}" for r in run.misses}
    known = KNOWN_MISSES.get(row_key, set())
    out = [f"{row_key[0]} ({row_key[1]}): new miss {m}" for m in sorted(missed - known)]
    out += [f"{row_key[0]} ({row_key[1]}): {m} is listed in KNOWN_MISSES but now passes" for m in sorted(known - missed)]
    if not run.judged or run.problem:
        out.append(f"{row_key[0]} ({row_key[1]}): {run.problem or 'not ready'}")
    return out + out_drift


def judge_all(cpu_engine: Path, vulkan_engine: Path | None, *, specs: list[ModelSpec] | None = None,
              wanted: set[str] | None = None, record_dir: Path | None = None,
              on_run: Callable[[Row, judge.Run], None] | None = None,
              pinned: Path | None = None) -> list[tuple[Row, judge.Run]]:  # fmt: skip
    """Every row started on the engine, one at a time; `record_dir`: write each row's lines
    there (record.write) and the engines' capabilities (record.write_engine)."""
    from draftwise.core.engines import capabilities

    specs = list(registry.all_models()) if specs is None else specs
    wanted = wanted or set(judge.MODES)
    vk = vulkan_engine if vulkan_engine is not None and vulkan_engine.is_file() and judge.VULKAN in wanted else None
    capacity = vulkan_capacity(vk)
    amx = judge.cpu_variant(cpu_engine) in cpu_buffers.AMX_VARIANTS
    out: list[tuple[Row, judge.Run]] = []
    with tempfile.TemporaryDirectory(prefix="draftwise-corpus-") as tmp:
        for row, path, companion in rows(specs, capacity, amx=amx, pinned=pinned):
            if row.mode not in wanted:
                continue
            work = Path(tmp) / f"{row.spec.name}-{row.mode}"
            run = judge.judge_run(row.target, path, row.mode, cpu_engine=cpu_engine, vulkan_engine=vk, work=work,
                                  companion=companion)  # fmt: skip
            if companion is not None:
                run.model = f"{row.target.name} + assistant"
            out.append((row, run))
            if record_dir is not None and run.judged:
                record.write(record_dir, row.spec.name, run, vk if row.mode == judge.VULKAN else cpu_engine)
            if on_run:
                on_run(row, run)
        if record_dir is not None:
            engines = {judge.CPU: cpu_engine}
            if vk is not None:
                engines[judge.VULKAN] = vk
            if any(r.mode == judge.REPACK for r, _ in out):
                engines[judge.REPACK] = cpu_engine  # the haswell-only copy answers --help alike
            if any(r.mode == judge.AMX for r, _ in out):
                engines[judge.AMX] = cpu_engine
            record.write_engine(record_dir, {m: capabilities.capabilities(b) for m, b in engines.items()}, engines)
    return out


def vulkan_capacity(binary: Path | None) -> int | None:
    if binary is None or not binary.is_file():
        return None
    machine = judge.described_vulkan(binary)
    gpus = [g for g in machine.gpus if g.device == "Vulkan0"]
    return gpus[0].total_bytes if gpus else None


def recorded_capacity(recorded: list[record.Recorded]) -> int | None:
    """The Vulkan device's size in the recorded vulkan rows (which rows the corpus has)."""
    for r in recorded:
        for g in r.machine.gpus:
            if g.device == "Vulkan0":
                return g.total_bytes
    return None


def rejudge_recorded(folder: Path = record.RECORD_DIR, *, pinned: Path | None = None,
                     specs: list[ModelSpec] | None = None) -> list[tuple[Row, judge.Run]]:  # fmt: skip
    """Every recorded row planned again now, without the engine, against its recorded lines."""
    recorded = {(r.spec, r.mode): r for r in record.read_all(folder)}
    caps = record.engine_caps(folder)
    out: list[tuple[Row, judge.Run]] = []
    wanted = {s.name for s in specs} if specs is not None else None
    with tempfile.TemporaryDirectory(prefix="draftwise-rejudge-") as tmp:
        for key, rec in sorted(recorded.items()):
            if wanted is not None and key[0] not in wanted:
                continue
            spec = registry.get(rec.spec)
            target = registry.get(spec.companion_of) if spec.companion_of else spec
            companion = build.generate(spec, pinned=pinned) if spec.companion_of else None
            path = build.generate(target, pinned=pinned)
            run = judge.replan(target, path, rec.mode, caps=caps[rec.mode], machine=rec.machine, lines=rec.lines,
                               work=Path(tmp) / f"{rec.spec}-{rec.mode}", companion=companion)  # fmt: skip
            run.model = rec.model
            out.append((Row(spec, target, rec.mode), run))
    return out


def describe(run: judge.Run) -> str:
    lines = [f"{run.model} ({run.mode}): {' '.join(run.argv[1:])}"]
    if run.problem:
        lines.append(f"  problem: {run.problem}")
    for r in run.rows:
        e = "   -  " if r.error is None else f"{r.error:+.1%}"
        lines.append(f"  {'MISS' if not r.ok else 'ok  '} {r.device}:{r.component} planned {r.planned / MiB:.2f} "
                     f"MiB, actual {r.actual / MiB:.2f} MiB ({e})" + "".join(f"\n        {ln}" for ln in r.lines))
    return "\n".join(lines)
