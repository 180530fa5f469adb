"""The replayed ggml-alloc (core/planning/ggml_sim.py) and Gemma 3n's graph on it
(core/planning/gemma3n_graph.py): no engine, the engine's own numbers recorded.

The Gemma 3n figures are the pinned engine's `sched_reserve: CPU compute buffer size` lines
for the corpus files of google/gemma-3n-E2B-it and -E4B-it, CPU, f16 KV, flash attention
auto (on), one slot unless said, read from the logs in tests/data/engine-lines/ (one start
each, recorded by `bench/real_models.py --record-extra`: corpus/engine_lines.py)."""

from __future__ import annotations

import pytest

from draftwise.core.planning import gemma3n_graph, kv_cache, logparse
from draftwise.core.planning.ggml_sim import F32, Graph, peak_bytes
from draftwise.testing.corpus import engine_lines

MiB = 1 << 20


def _graph_of(*steps):
    g = Graph()
    for t in steps:
        g.expand(t)
    return g


def _kept_input(g: Graph):
    """A 1 KiB input kept to the end (an input is freed after its last consumer otherwise)."""
    x = g.new(F32, 256)
    x.output = True
    return x


def test_a_freed_block_is_reused_and_the_buffer_grows_only_at_its_end():
    g = Graph()
    x = _kept_input(g)  # allocated first, at 0
    a = g.same("CONT", x)  # 1 KiB
    b = g.same("CONT", a)  # 1 KiB; a is freed after b
    c = g.concat(b, b, 0)  # 2 KiB: a's 1 KiB hole is too small, so it goes to the end
    d = g.same("CONT", c)  # 2 KiB: a's and b's holes, merged once b is freed, take it
    assert peak_bytes(_graph_of(d)) == 1024 * 5  # x, a, b, c; d in the merged hole


def test_an_inplace_op_takes_its_sources_memory_unless_the_source_is_still_needed():
    g = Graph()
    x = _kept_input(g)
    y = g.same("CONT", x)
    z = g.same("SCALE", y)  # y's last consumer, same layout: in place
    assert peak_bytes(_graph_of(z)) == 1024 * 2
    g = Graph()
    x = _kept_input(g)
    y = g.same("CONT", x)
    z = g.same("SCALE", y)
    w = g.same("ADD", z, y)  # y is read again: z needs its own block
    assert peak_bytes(_graph_of(w)) == 1024 * 3


def test_a_view_keeps_what_it_views_and_outputs_are_never_freed():
    g = Graph()
    x = _kept_input(g)
    y = g.same("CONT", x)
    v = g.view(y, (128,), ())
    z = g.same("CONT", v)  # a new 512 B block; y lives until the view's consumer ran
    u = g.same("CONT", z)  # y is free by now: u takes its place
    assert peak_bytes(_graph_of(u)) == 1024 * 2 + 512
    g = Graph()
    x = _kept_input(g)
    y = g.same("CONT", x)
    y.output = True
    u = g.same("CONT", g.same("CONT", y))  # y is kept: both copies go past it
    assert peak_bytes(_graph_of(u)) == 1024 * 4  # (3 KiB were y not an output)


# google/gemma-3n-E2B-it / -E4B-it text_config: 2048 wide, 8 heads, 2 KV heads of 256, the
# sliding window on four blocks of five, 262,400 ids.
def _gemma3n(n_layer: int, ff: int) -> gemma3n_graph.Gemma3nDims:
    return gemma3n_graph.Gemma3nDims(2048, 8, 2, 256, (ff,) * n_layer, tuple(i % 5 != 4 for i in range(n_layer)), 262400)


E2B, E4B = _gemma3n(30, 8192), _gemma3n(35, 16384)


@pytest.mark.parametrize("dims, ctx, slots, ubatch, log", [
    (E2B, 4096, 1, 512, "gemma-3n-E2B-it-cpu-c4096-np1-ub512"),
    (E2B, 2048, 1, 512, "gemma-3n-E2B-it-cpu-c2048-np1-ub512"),
    (E2B, 8192, 1, 512, "gemma-3n-E2B-it-cpu-c8192-np1-ub512"),
    (E2B, 32768, 1, 512, "gemma-3n-E2B-it-cpu-c32768-np1-ub512"),
    (E2B, 4096, 1, 256, "gemma-3n-E2B-it-cpu-c4096-np1-ub256"),
    (E2B, 4096, 1, 1024, "gemma-3n-E2B-it-cpu-c4096-np1-ub1024"),
    (E2B, 4096, 2, 512, "gemma-3n-E2B-it-cpu-c4096-np2-ub512"),
    (E4B, 4096, 1, 512, "gemma-3n-E4B-it-cpu-c4096-np1-ub512"),
])  # fmt: skip
def test_gemma3n_compute_is_the_engines(dims, ctx, slots, ubatch, log):
    """The replayed graph lands where the engine's allocator puts it: the same peak to the
    line's two decimals, though it is not monotonic in the block count and 19 MiB of E2B's
    119 are holes between live tensors (a sum of live widths gave 75 MiB). The engine's
    figure: the compute buffer line of tests/data/engine-lines/<log>.log."""
    rec = engine_lines.read(log)
    assert f"-c {ctx * slots} -np {slots} " in rec.header["argv"] and f" -ub {ubatch} " in rec.header["argv"]
    engine_mib = logparse.parse_lines(rec.lines).component("compute", logparse.TARGET) / MiB
    c = kv_cache.cells(ctx, slots, 512, ubatch=ubatch)
    got = gemma3n_graph.compute_bytes(dims, c.ubatch, c.per_stream, c.swa_per_stream, slots)
    assert abs(got / MiB - engine_mib) < 0.006, got / MiB
