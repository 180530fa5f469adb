"""core.check_models / core.gguf_write: the pure-Python test models equal tinymodels' layouts.

tinymodels (gguf-py) is the layouts' single source of truth; these tests bind the copies in
check_models to it, header for header, and load both files in the real engine.
"""

from __future__ import annotations

import struct

import pytest

from draftwise.core.check import check_models
from draftwise.core.gguf import reader as gguf
from draftwise.core.gguf import writer as gguf_write
from draftwise.core.gguf.writer import TensorSpec, Typed

CASES = ["llama", "mtp", "q4_0"]


def _ours(kind: str, path):
    name = "draftwise-check-" + kind
    if kind == "mtp":
        return check_models.write_mtp(path, name=name)
    return check_models.write_llama(path, name=name, dtype="Q4_0" if kind == "q4_0" else "F32")


def _reference(kind: str, path):
    tm = pytest.importorskip("draftwise.testing.tinymodels")
    name = "draftwise-check-" + kind
    if kind == "mtp":
        model = tm.mtp_model(name=name)
    else:
        model = tm.TinyModel(name=name, dtype="Q4_0" if kind == "q4_0" else "F32")
    return tm.write_tiny_model(path, model)[0]


def _tensors(header: gguf.GGUFHeader):
    return [(t.name, t.shape, t.ggml_type, t.offset, t.nbytes) for t in header.tensors]


@pytest.mark.parametrize("kind", CASES)
def test_header_equals_tinymodels(kind, tmp_path):
    ours = gguf.read_header(_ours(kind, tmp_path / "ours.gguf"))
    ref = gguf.read_header(_reference(kind, tmp_path / "ref.gguf"))
    assert list(ours.kv) == list(ref.kv)  # same keys, same order
    for key, value in ref.kv.items():
        assert ours.kv[key] == value, key
    assert ours.kv_types == ref.kv_types
    assert ours.arrays == ref.arrays
    assert {k: len(v) for k, v in ours.kv.items() if isinstance(v, list)} == \
        {k: len(v) for k, v in ref.kv.items() if isinstance(v, list)}
    assert ours.tokens_sha256 == ref.tokens_sha256 is not None
    assert _tensors(ours) == _tensors(ref)
    assert (ours.version, ours.alignment, ours.data_offset, ours.file_size) == \
        (ref.version, ref.alignment, ref.data_offset, ref.file_size)


@pytest.mark.parametrize("kind", CASES)
def test_gguf_py_reads_the_stdlib_file(kind, tmp_path):
    gguf_py = pytest.importorskip("gguf")
    np = pytest.importorskip("numpy")
    ours = gguf_py.GGUFReader(_ours(kind, tmp_path / "ours.gguf"))
    ref = gguf_py.GGUFReader(_reference(kind, tmp_path / "ref.gguf"))
    assert list(ours.fields) == list(ref.fields)
    for key, field in ref.fields.items():
        assert ours.fields[key].types == field.types, key  # array item types included
    by_name = {t.name: t for t in ours.tensors}
    assert list(by_name) == [t.name for t in ref.tensors]
    for t in ref.tensors:
        mine = by_name[t.name]
        assert (mine.data.shape, mine.tensor_type) == (t.data.shape, t.tensor_type), t.name
        values = gguf_py.quants.dequantize(mine.data, mine.tensor_type)  # F32 as it is
        if t.name.endswith("norm.weight"):
            assert np.all(values == 1.0), t.name
        elif t.name.endswith(".bias"):
            assert np.all(values == 0.0), t.name
        else:
            assert 0.015 < float(values.std()) < 0.025, t.name
            assert abs(float(values.mean())) < 0.005, t.name


def test_vocabulary_is_tinymodels(tmp_path):
    ts = pytest.importorskip("draftwise.testing.tinyspec")
    for vocab in ("base", "other"):
        assert check_models.vocabulary(vocab) == ts.vocabulary(ts.TinyModel(vocab=vocab))
    assert check_models.vocabulary("base", 700) == ts.vocabulary(ts.TinyModel(n_pieces=700))


def test_random_weights_are_seeded(tmp_path):
    a = check_models.write_llama(tmp_path / "a.gguf", seed=1).read_bytes()
    b = check_models.write_llama(tmp_path / "b.gguf", seed=1).read_bytes()
    c = check_models.write_llama(tmp_path / "c.gguf", seed=2).read_bytes()
    assert a == b and a != c and len(a) == len(c)
    assert not list(tmp_path.glob("*.partial"))


# ------------------------------------------------------------------ the writer itself
def test_writer_types_and_layout(tmp_path):
    path = gguf_write.write_gguf(tmp_path / "x.gguf", [
        ("general.architecture", "llama"),
        ("a.u32", 7), ("a.i32", -7), ("a.f32", 0.5), ("a.bool", False), ("a.u64", Typed(1 << 40, "u64")),
        ("a.strs", ["x", "\u00e9"]), ("a.f32s", [1.0, 2]), ("a.i32s", [1, -2]),
        ("a.u32s", Typed([1, 2], "u32")), ("a.empty", Typed([], "str")),
    ], [TensorSpec("t.w", (33, 3)), TensorSpec("t.n", (5,), "ones"), TensorSpec("t.z", (2, 2, 2), "zeros")])
    h = gguf.read_header(path)
    assert h.kv["a.u32"] == 7 and h.kv["a.i32"] == -7 and h.kv["a.f32"] == 0.5 and h.kv["a.bool"] is False
    assert h.kv["a.u64"] == 1 << 40 and h.kv["a.strs"] == ["x", "\u00e9"] and h.kv["a.f32s"] == [1.0, 2.0]
    assert h.kv["a.i32s"] == [1, -2] and h.kv["a.u32s"] == [1, 2] and h.kv["a.empty"] == []
    types = {k: h.kv_types[k] for k in ("a.u32", "a.i32", "a.f32", "a.bool", "a.u64")}
    assert types == {"a.u32": 4, "a.i32": 5, "a.f32": 6, "a.bool": 7, "a.u64": 10}
    assert [(t.name, t.shape, t.offset) for t in h.tensors] == \
        [("t.w", (33, 3), 0), ("t.n", (5,), 416), ("t.z", (2, 2, 2), 448)]
    assert h.data_offset % 32 == 0
    raw = path.read_bytes()
    ones = struct.unpack("<5f", raw[h.data_offset + 416:h.data_offset + 436])
    assert ones == (1.0,) * 5
    assert raw[h.data_offset + 448:h.data_offset + 480] == bytes(32)


def test_writer_refuses_what_it_cannot_type(tmp_path):
    with pytest.raises(TypeError):
        gguf_write.write_gguf(tmp_path / "x.gguf", [("k", [])], [])
    with pytest.raises(TypeError):
        gguf_write.write_gguf(tmp_path / "x.gguf", [("k", {"a": 1})], [])
    with pytest.raises(ValueError):
        Typed(1, "u128")
    with pytest.raises(ValueError):
        TensorSpec("t", (4,), "twos")
    with pytest.raises(ValueError, match="multiple of 32"):
        TensorSpec("t", (48, 2), dtype="Q4_0")
    with pytest.raises(ValueError, match="dtype"):
        TensorSpec("t", (32, 2), dtype="Q8_0")
    assert not (tmp_path / "x.gguf").exists()


# ------------------------------------------------------------------ the real engine
def _serve(engine, path, tmp_path, *args):
    from draftwise.core.launch import headless

    server = headless.start_server(engine.binary, path, extra_args=list(args), log_dir=tmp_path)
    try:
        server.wait_ready(60)
        result = server.complete("Hello", n_predict=8)
    finally:
        server.stop()
    return result, server.log_text()


@pytest.mark.engine
def test_engine_runs_the_llama(engine, tmp_path):
    result, log = _serve(engine, check_models.write_llama(tmp_path / "l.gguf"), tmp_path)
    assert result["tokens_predicted"] == 8, log[-2000:]


@pytest.mark.engine
def test_engine_runs_the_quantized_llama(engine, tmp_path):
    """The machine check's quantized model: the CPU's own kernels for Q4_0 run on it (the
    re-laid CPU_REPACK ones, or AMX where the engine loads the sapphirerapids module)."""
    path = check_models.write_llama(tmp_path / "q.gguf", dtype="Q4_0")
    result, log = _serve(engine, path, tmp_path, "-nr")  # -nr: whatever this CPU's fault
    assert result["tokens_predicted"] == 8, log[-2000:]
    assert "type q4_0:   16 tensors" in log, log[-3000:]


@pytest.mark.engine
def test_engine_drafts_with_the_mtp_head(engine, tmp_path):
    path = check_models.write_mtp(tmp_path / "m.gguf")
    result, log = _serve(engine, path, tmp_path, "--spec-type", "draft-mtp")
    assert result["tokens_predicted"] == 8, log[-2000:]
    assert (result.get("timings") or {}).get("draft_n", 0) > 0, log[-2000:]
