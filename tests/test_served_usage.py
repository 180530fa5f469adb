"""Each served model's requests, read from the router's output (core/serving/served_usage.py),
on a recorded router log: `draftwise serve --verbose` of the real Gemma 3 270M and a tiny
model on the pinned engine, two chat requests each of 24 tokens
(tests/data/learn/serve-router-two-models.log: the router's own first lines and each
instance's load, timing and release lines, as forwarded: `[ PORT] line`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from draftwise.core.engines.spec_types import NGRAM_SIMPLE
from draftwise.core.measurements import usage
from draftwise.core.serving.served_usage import ServedUsage, same_file
from draftwise.core.speculation.setup import NONE, Setup

LOG = Path(__file__).parent / "data" / "learn" / "serve-router-two-models.log"
GEMMA, TINY = "/tmp/rec/lib/gemma-3-270m-q4_k_m.gguf", "/tmp/rec/lib/tiny-F32.gguf"  # as the log names them


def _served(tmp_path: Path, *models: str) -> tuple[ServedUsage, usage.UsageRecords, dict[str, usage.Key]]:
    store = usage.UsageRecords(tmp_path / "usage.json")
    keys = {m: usage.Key(Path(m).name, "engine", "machine", NONE) for m in models}
    return ServedUsage({same_file(m): usage.Keeper(keys[m], store) for m in models}), store, keys


def test_each_instances_requests_are_kept_under_its_own_model(tmp_path: Path):
    served, store, keys = _served(tmp_path, GEMMA, TINY)
    lines = LOG.read_text(encoding="utf-8").splitlines()
    # In batches that end anywhere, as the router's output comes.
    for i in range(0, len(lines), 4):
        served.lines(lines[i:i + 4])
    assert served.save(final=True) is None
    # The log's `eval time = X ms / N tokens` lines, per instance port.
    gemma, tiny = store.usage(keys[GEMMA]), store.usage(keys[TINY])
    assert [(r.tokens, r.ms) for r in gemma.requests] == [(24, 303.42), (24, 288.02)]
    assert [(r.tokens, r.ms) for r in tiny.requests] == [(24, 2.21), (24, 3.0)]
    assert gemma.count == tiny.count == 2


def test_an_instance_of_a_model_not_kept_for_is_left_alone(tmp_path: Path):
    served, store, keys = _served(tmp_path, TINY)
    served.lines(LOG.read_text(encoding="utf-8").splitlines())
    served.save(final=True)
    assert [u.key for u in store.record_file.read()] == [keys[TINY]]


def test_a_port_given_to_another_model_is_read_as_that_ones(tmp_path: Path):
    """The router reuses a port after unloading a model: the new instance's own load line
    moves the port to its model."""
    served, store, keys = _served(tmp_path, GEMMA, TINY)
    lines = LOG.read_text(encoding="utf-8").splitlines()
    gemma_port = lines[3].split("]")[0] + "]"
    tiny_lines = [line for line in lines if line.startswith("[35393]")]
    served.lines([line for line in lines if line.startswith(gemma_port)])
    served.lines([gemma_port + line.split("]", 1)[1] for line in tiny_lines])
    served.save(final=True)
    assert store.usage(keys[GEMMA]).count == 2 and store.usage(keys[TINY]).count == 2


def test_a_model_loaded_again_without_speculation_keeps_its_later_requests_under_none(tmp_path: Path):
    """serve_flow's fallback (its drafter made it stop): the requests served before are the
    planned setup's, the ones after are none's, so the planned setup's figures stay its own."""
    store = usage.UsageRecords(tmp_path / "usage.json")
    planned = usage.Key("gemma", "engine", "machine", Setup(ngram=NGRAM_SIMPLE, ngram_len=32))
    keeper = usage.Keeper(planned, store)
    served = ServedUsage({same_file(GEMMA): keeper}, {"gemma": keeper})
    gemma = [line for line in LOG.read_text(encoding="utf-8").splitlines() if line.startswith("[37753]")]
    first = next(i for i, line in enumerate(gemma) if "release:" in line) + 1  # the first request's last line
    served.lines(gemma[:first])
    assert served.fell_back("gemma") is None and served.fell_back("not served") is None
    served.lines(gemma[first:])
    served.save(final=True)
    assert [(r.tokens, r.ms) for r in store.usage(planned).requests] == [(24, 303.42)]
    assert [(r.tokens, r.ms) for r in store.usage(replace(planned, setup=NONE)).requests] == [(24, 288.02)]
