"""Gemma 4's MTP assistant's compute (core/planning/gemma4_assistant_graph.py): its graph
replayed through ggml-alloc (ggml_sim) against the pinned engine's own line for the
assistant's context.

The engine's figure is read from the recorded corpus log
tests/data/corpus-engine/gemma-4-26B-A4B-it-assistant-cpu.log (engine 11434, the corpus pair
gemma-4-26B-A4B-it + its assistant, CPU, `--no-warmup -nr`, f16 KV, flash attention auto),
the `sched_reserve: CPU compute buffer size` line after `loading draft model`, with the
context, ubatch and KV type of that log's own arguments. The engine test at the end starts the
same pair at other contexts, ubatch sizes and KV types and compares the same line live.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from draftwise.core.gguf import reader as gguf
from draftwise.core.planning import gemma4_assistant_graph as ag
from draftwise.core.planning import kv_cache, logparse, planner
from draftwise.testing.corpus import build, judge, record, registry, sparse
from draftwise.testing.corpus.families import gemma

MiB = 1 << 20
TARGET, ASSISTANT = "gemma-4-26B-A4B-it", "gemma-4-26B-A4B-it-assistant"
LOG = record.RECORD_DIR / record.file_name(ASSISTANT, judge.CPU)
# The engine prints MiB to two decimals: a replay within half a hundredth is the same line.
LINE = 0.005 * MiB


@pytest.fixture(scope="module")
def dims(pinned_source: Path, tmp_path_factory) -> ag.AssistantDims:
    """The corpus assistant's dimensions read from its header as the converter writes it (the
    tensor data left a hole)."""
    spec = registry.get(ASSISTANT)
    kv = build.converted_kv(spec, pinned_source)
    path = tmp_path_factory.mktemp("assistant") / f"{spec.name}.gguf"
    sparse.write_sparse(path, kv, [(t.name, t.ne, build.converter_type(t, spec.outtype)) for t in spec.tensors])
    d = ag.read_dims(gguf.read_model(path))
    assert d is not None
    return d


@functools.cache
def _target_kv() -> dict:
    """The corpus Gemma 4 26B-A4B's keys (the assistant's backbone, its window)."""
    return dict(gemma._gemma4_source_kv())


def _target_swa() -> int:
    return int(_target_kv()["attention.sliding_window"].value)


def _arg(argv: list[str], flag: str, default: str) -> str:
    return argv[argv.index(flag) + 1] if flag in argv else default


def _planned_for(d: ag.AssistantDims, argv: list[str]) -> int:
    """The replay at the engine's arguments: -c (all slots), -np, -ub, -ctk/-ctv."""
    slots = int(_arg(argv, "-np", "1"))
    ub = _arg(argv, "-ub", "")
    c = kv_cache.cells(int(_arg(argv, "-c", "4096")) // slots, slots, _target_swa(), ubatch=int(ub) if ub else None)
    kv = (_arg(argv, "-ctk", "f16"), _arg(argv, "-ctv", "f16"))
    return ag.compute_bytes(d, c.ubatch, c.per_stream, c.swa_per_stream, c.n_seq, kv)


def _recorded() -> tuple[list[str], int]:
    """(the engine's arguments, the draft context's compute bytes) of the recorded corpus row."""
    r = record.read(LOG)
    actual = logparse.parse_lines(r.lines)
    assert actual.has_draft
    return r.header["argv"].split(), actual.component("compute", logparse.DRAFT)


def test_the_dims_are_read_from_the_assistants_header(dims):
    d = dims
    src = _target_kv()
    hd, hd_swa = (int(src[k].value) for k in ("attention.key_length", "attention.key_length_swa"))
    assert d.n_embd == gemma.ASSISTANT_EMBD and d.ff == (gemma.ASSISTANT_FF,) * gemma.ASSISTANT_LAYERS
    assert d.n_embd_backbone == int(src["embedding_length"].value) and d.n_vocab == gemma.GEMMA4_VOCAB.size
    assert d.swa == tuple(i < gemma.ASSISTANT_LAYERS - 1 for i in range(gemma.ASSISTANT_LAYERS))
    assert d.head_dim == tuple(hd_swa if s else hd for s in d.swa) and set(d.n_head) == {gemma.ASSISTANT_HEADS}


def test_the_replay_is_the_engines_line_on_the_corpus_row(dims):
    argv, engine = _recorded()
    got = _planned_for(dims, argv)
    assert abs(got - engine) <= LINE, (got / MiB, engine / MiB)


def test_the_peak_is_block_0s_ffn_past_the_masks(dims):
    """Why the generic MTP phases fell short: the live tensors at the peak (the residual,
    both masks, gate, up and GEGLU) leave a hole where `inp_h` was."""
    d = dims
    c = kv_cache.cells(4096, 1, _target_swa())
    got = ag.compute_bytes(d, c.ubatch, c.per_stream, c.swa_per_stream, 1)
    row = c.ubatch * 4
    masks = (c.per_stream + c.swa_per_stream) * c.ubatch * 2
    live = masks + row * (d.n_embd + 3 * d.ff[0])
    hole = row * d.n_embd_backbone - row * d.n_embd  # inp_h's place less the residual in it
    assert got - live - hole < 0.01 * MiB and got > live


def test_a_quantized_cache_adds_the_rotated_queries(dims):
    """A quantized cache of the target rotates (llama_mul_mat_hadamard): the queries and the
    attention output get a rotated copy, at most one query-wide row per token more at the
    peak; the unquantized types do not rotate."""
    d = dims
    c = kv_cache.cells(4096, 1, _target_swa())
    f16 = ag.compute_bytes(d, c.ubatch, c.per_stream, c.swa_per_stream, 1)
    q8 = ag.compute_bytes(d, c.ubatch, c.per_stream, c.swa_per_stream, 1, ("q8_0", "q8_0"))
    query = max(h * n for h, n in zip(d.head_dim, d.n_head, strict=True))
    assert f16 < q8 <= f16 + c.ubatch * 4 * query
    assert ag.compute_bytes(d, c.ubatch, c.per_stream, c.swa_per_stream, 1, ("bf16", "f32")) == f16


# ------------------------------------------------------------------ on the engine
# Points beside the recorded row: (context, slots, ubatch, KV type). One slot: the app runs
# MTP with one (planner.py).
LIVE = [(8192, 1, None, None), (32768, 1, None, None), (65536, 1, None, None), (4096, 1, 256, None),
        (4096, 1, 1024, None), (4096, 1, 2048, None), (4096, 1, None, "q8_0"), (32768, 1, None, "q4_0")]  # fmt: skip


@pytest.mark.engine
@pytest.mark.real_machine
@pytest.mark.timeout(1800)
def test_the_replay_is_the_engines_line_at_other_points(engine, pinned_source, tmp_path):
    """The corpus pair started on the engine at each LIVE point (the judge, the assistant as
    the Draft model): the assistant context's compute line equals the plan's."""
    target, assistant = registry.get(TARGET), registry.get(ASSISTANT)
    try:
        t_path, a_path = build.generate(target, pinned=pinned_source), build.generate(assistant, pinned=pinned_source)
    except RuntimeError as exc:
        pytest.skip(f"the corpus files could not be written: {exc}")
    d = ag.read_dims(gguf.read_model(a_path))
    assert d is not None
    seen = []
    for i, (ctx, slots, ubatch, kv_type) in enumerate(LIVE):
        prefs = planner.PlanPrefs(ctx=ctx, slots=slots, ubatch=ubatch, kv_type=kv_type)
        run = judge.judge_run(target, t_path, judge.CPU, cpu_engine=engine.binary, work=tmp_path / str(i),
                              companion=a_path, prefs=prefs)  # fmt: skip
        assert run.ready and not run.problem, run.problem
        argv = list(run.argv)
        engine_line = logparse.parse_lines(run.engine_lines).component("compute", logparse.DRAFT)
        got = _planned_for(d, argv)
        seen.append((LIVE[i], round(got / MiB, 2), round(engine_line / MiB, 2)))
        print(seen[-1])
        assert engine_line > 0
    assert all(abs(p - e) <= 0.005 for _, p, e in seen), seen
