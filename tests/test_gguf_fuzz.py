"""Damaged GGUF files: whatever the bytes, the reader answers a header or a GGUFError, fast.

Deterministic mutations of small real files (every truncation, byte flips, huge numbers
written over fields) plus hypothesis-generated headers: over 10,000 cases in all, each
checked for the exception type, for a sane result and for time. Each test counts its own
cases and fails when it ran fewer than it promises, whatever else runs and in what order.
"""

from __future__ import annotations

import io
import random
import struct
import time
from dataclasses import replace
from pathlib import Path

import gguf
import numpy as np
import pytest
from gguf import GGUFValueType as V
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draftwise.core.gguf import reader as g
from draftwise.core.gguf.header import _MAX_NESTING

CASE_SECONDS = 1.0  # one parse of a few-KB file takes well under a millisecond
HUGE = [2**64 - 1, 2**63, 2**63 - 1, 2**62, 2**40, 2**32, 2**32 - 1, 2**31, 10**9, 65536]
_stats = {"cases": 0}


@pytest.fixture(autouse=True)
def _count_cases() -> None:
    _stats["cases"] = 0


def ran_at_least(n: int) -> None:
    """The test really parsed `n` inputs (a loop that ran zero times tests nothing)."""
    assert _stats["cases"] >= n, f"{_stats['cases']} cases, promised {n}"


def check(data: bytes, name: str = "fuzz.gguf") -> g.GGUFHeader | None:
    """Parse; only GGUFError may escape, a result must describe bytes the file has."""
    t0 = time.perf_counter()
    try:
        h = g.read_header_bytes(bytes(data), name)
    except g.GGUFError as e:
        assert e.path == name and str(e).startswith(name + ":")
        assert e.offset is None or 0 <= e.offset <= len(data), str(e)
        assert e.reason
        h = None
    elapsed = time.perf_counter() - t0
    _stats["cases"] += 1
    assert elapsed < CASE_SECONDS, f"{elapsed:.2f}s for one case"
    if h is not None:
        assert h.file_size == len(data)
        assert h.data_offset % h.alignment == 0
        if h.tensors:
            assert h.data_offset <= len(data)
        else:
            # No tensor data: only the padding after the header may be missing.
            assert h.data_offset - len(data) < h.alignment
        for t in h.tensors:
            assert h.data_offset + t.offset + t.nbytes <= len(data)
            assert len(t.shape) <= 4 and t.nbytes >= 0
        for a in h.arrays.values():
            assert a.length > g.SMALL_ARRAY_MAX
    return h


def _write(
    path: Path, kv: list[tuple[str, object, V | None]], tensors: dict[str, np.ndarray]
) -> bytes:
    w = gguf.GGUFWriter(path, "llama")
    for key, value, vtype in kv:
        if vtype is None:
            w.add_array(key, value)
        else:
            w.add_key_value(key, value, vtype)
    for name, data in tensors.items():
        w.add_tensor(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path.read_bytes()


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """~3 KB: every value type, short arrays, a small vocabulary, tiny tensors."""
    tokens = [f"t{i}" for i in range(60)]
    kv: list[tuple[str, object, V | None]] = [
        ("general.name", "fuzz", V.STRING),
        ("llama.block_count", 2, V.UINT32),
        ("a.u8", 1, V.UINT8), ("a.i8", -1, V.INT8), ("a.u16", 2, V.UINT16),
        ("a.i16", -2, V.INT16), ("a.i32", -3, V.INT32), ("a.f32", 0.5, V.FLOAT32),
        ("a.bool", True, V.BOOL), ("a.u64", 2**40, V.UINT64), ("a.i64", -(2**40), V.INT64),
        ("a.f64", 0.25, V.FLOAT64),
        ("a.arr", [1, 2, 3, 4], None), ("a.nested", [[1, 2], [3]], None),
        ("a.strs", ["x", "yy", "zzz"], None),
        ("tokenizer.ggml.tokens", tokens, None),
        ("tokenizer.ggml.scores", [0.0] * 60, None),
    ]  # fmt: skip
    tensors = {
        "token_embd.weight": np.zeros((2, 8), np.float32),
        "blk.0.attn_norm.weight": np.zeros(8, np.float32),
        "blk.0.x.weight": np.zeros((2, 2, 4), np.float16),
        "blk.1.y": np.zeros(3, np.int32),
    }
    return _write(tmp_path_factory.mktemp("fz") / "small.gguf", kv, tensors)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A vocabulary over SMALL_ARRAY_MAX strings, so the fast (regex) walk runs."""
    tokens = [f"tok{i}" * (1 + i % 3) for i in range(1100)]
    tokens[1050] = "L" * 300  # one string the fast path hands to the slow loop
    kv: list[tuple[str, object, V | None]] = [
        ("tokenizer.ggml.tokens", tokens, None),
        ("tokenizer.ggml.merges", [f"{t} {t}" for t in tokens[:1030]], None),
        ("tokenizer.ggml.token_type", [1] * 1100, None),
        ("general.name", "vocab", V.STRING),
    ]
    return _write(
        tmp_path_factory.mktemp("fz") / "vocab.gguf", kv, {"w.weight": np.zeros(8, np.float32)}
    )


def test_fixtures_parse(small: bytes, vocab: bytes) -> None:
    hs, hv = check(small), check(vocab)
    assert hs is not None and hv is not None
    assert hs.kv["a.nested"] == [[1, 2], [3]] and len(hs.tensors) == 4
    assert hv.arrays["tokenizer.ggml.tokens"].length == 1100 and hv.kv["general.name"] == "vocab"


def test_a_result_past_the_end_is_caught(small: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """check() itself can fail: a header whose data starts past the end of a file without
    tensors is refused (the precedence slip `A and B or C` let any tensorless one pass)."""
    full = check(small)
    assert full is not None
    tensorless = replace(full, tensors=[], data_offset=len(small) + full.alignment, file_size=len(small))
    monkeypatch.setattr(g, "read_header_bytes", lambda data, name: tensorless)
    with pytest.raises(AssertionError):
        check(small)
    monkeypatch.setattr(g, "read_header_bytes", lambda data, name: replace(full, file_size=len(small) + 1))
    with pytest.raises(AssertionError):
        check(small)


def test_every_truncation_small(small: bytes) -> None:
    full = check(small)
    assert full is not None
    last = full.tensors[-1]
    needed = full.data_offset + last.offset + last.nbytes
    for n in range(len(small)):
        h = check(small[:n])
        assert (h is None) == (n < needed), n  # only the trailing padding may go
    ran_at_least(len(small) + 1)


def test_truncations_vocab(vocab: bytes) -> None:
    for n in range(0, len(vocab), 7):
        check(vocab[:n])
    ran_at_least(len(vocab) // 7)


def test_truncations_on_disk(small: bytes, tmp_path: Path) -> None:
    p = tmp_path / "cut.gguf"
    for n in range(0, len(small), 61):
        p.write_bytes(small[:n])
        try:
            g.read_header(p)
        except g.GGUFError as e:
            assert e.path == str(p)
        _stats["cases"] += 1
    ran_at_least(len(small) // 61)


@pytest.mark.parametrize("which", ["small", "vocab"])
def test_byte_flips(small: bytes, vocab: bytes, which: str) -> None:
    data = small if which == "small" else vocab
    rng = random.Random(f"flips-{which}")
    header_end = check(data).data_offset  # type: ignore[union-attr]
    n = 2500 if which == "small" else 1500
    for _ in range(n):
        d = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 4, 16))):
            d[rng.randrange(header_end)] = rng.randrange(256)
        check(d)
    ran_at_least(n)


@pytest.mark.parametrize("which", ["small", "vocab"])
def test_huge_numbers_over_fields(small: bytes, vocab: bytes, which: str) -> None:
    data = small if which == "small" else vocab
    rng = random.Random(f"u64-{which}")
    header_end = check(data).data_offset  # type: ignore[union-attr]
    n = 1500 if which == "small" else 1000
    for _ in range(n):
        d = bytearray(data)
        at = rng.randrange(header_end - 8)
        fmt = rng.choice(("<Q", "<Q", "<I", "<q"))
        value = rng.choice(HUGE)
        if fmt == "<I":
            value &= 0xFFFFFFFF
        elif fmt == "<q":
            value = -(value & (2**63 - 1)) or -1
        struct.pack_into(fmt, d, at, value)
        check(d)
    ran_at_least(n)


def test_every_u64_field_of_small(small: bytes) -> None:
    """Every 8-byte window of the header overwritten by each huge number."""
    header_end = check(small).data_offset  # type: ignore[union-attr]
    for at in range(0, header_end - 8):
        for value in (2**64 - 1, 2**63, 2**32 + 7):
            d = bytearray(small)
            struct.pack_into("<Q", d, at, value)
            check(d)
    ran_at_least(3 * (header_end - 8))


def test_mutations_with_a_tiny_window(vocab: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same damage seen through a 64-byte window, so every array crosses window edges."""
    full = check(vocab)
    monkeypatch.setattr(g, "read_header_bytes",
                        lambda data, name: g.read_header_stream(io.BytesIO(data), len(data), name, window=64))
    assert check(vocab) == full
    rng = random.Random("window")
    for n in range(0, len(vocab), 97):
        check(vocab[:n])
    for _ in range(600):
        d = bytearray(vocab)
        struct.pack_into("<Q", d, rng.randrange(full.data_offset - 8), rng.choice(HUGE))  # type: ignore[union-attr]
        check(d)
    ran_at_least(600 + len(vocab) // 97)


EXAMPLES = 600
_HYP = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_hypothesis_random_body() -> None:
    @_HYP
    @given(body=st.binary(max_size=400), n_tensors=st.integers(0, 2**64 - 1), n_kv=st.integers(0, 40))
    def one(body: bytes, n_tensors: int, n_kv: int) -> None:
        check(
            struct.pack("<4sIQQ", b"GGUF", 3, n_tensors % 8 if n_tensors % 3 else n_tensors, n_kv)
            + body
        )

    one()
    ran_at_least(EXAMPLES // 2)  # hypothesis may stop early once the examples repeat


# A value: (type, encoded bytes, how many arrays deep it nests; 0 for a scalar).
_scalar = st.one_of(
    st.tuples(st.just(V.UINT8), st.integers(0, 255).map(lambda v: struct.pack("<B", v)), st.just(0)),
    st.tuples(
        st.just(V.INT64), st.integers(-(2**63), 2**63 - 1).map(lambda v: struct.pack("<q", v)),
        st.just(0),
    ),
    st.tuples(st.just(V.FLOAT32), st.floats(width=32).map(lambda v: struct.pack("<f", v)), st.just(0)),
    st.tuples(st.just(V.BOOL), st.booleans().map(lambda v: struct.pack("<?", v)), st.just(0)),
    st.tuples(
        st.just(V.STRING),
        st.binary(max_size=20).map(lambda b: struct.pack("<Q", len(b)) + b),
        st.just(0),
    ),
)


def _array(inner: st.SearchStrategy) -> st.SearchStrategy:
    def build(items: list[tuple[int, bytes, int]]) -> tuple[int, bytes, int]:
        itype = items[0][0] if items else V.UINT8
        same = [(p, depth) for t, p, depth in items if t == itype]
        nesting = 1 + max((depth for _, depth in same), default=0)
        return V.ARRAY, struct.pack("<IQ", itype, len(same)) + b"".join(p for p, _ in same), nesting

    return st.lists(inner, max_size=5).map(build)


_value = st.recursive(_scalar, _array, max_leaves=12)


def _header(kvs: list) -> bytes:
    body = b""
    for key, (vtype, payload, _depth) in kvs:
        k = key.encode()
        body += struct.pack("<Q", len(k)) + k + struct.pack("<I", vtype) + payload
    return struct.pack("<4sIQQ", b"GGUF", 3, 0, len(kvs)) + body


def _must_parse(kvs: list) -> bool:
    """Undamaged input parses unless a key repeats or arrays nest deeper than the reader
    allows (it refuses both, by design)."""
    keys_unique = len({k for k, _ in kvs}) == len(kvs)
    too_deep = any(depth > _MAX_NESTING for _, (_, _, depth) in kvs)
    return keys_unique and not too_deep


def test_hypothesis_structured() -> None:
    """Well-formed-ish key-values (nested arrays included), then a few damaged bytes."""
    undamaged = {"parsed": 0}

    @_HYP
    @given(
        kvs=st.lists(st.tuples(st.text(min_size=1, max_size=8), _value), max_size=6),
        mutations=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3),
        cut=st.integers(0, 10_000),
    )
    def one(kvs: list, mutations: list, cut: int) -> None:
        data = bytearray(_header(kvs))
        if not mutations:
            h = check(data)
            assert (h is not None) == _must_parse(kvs), kvs
            if h is not None:
                assert list(h.kv_types) == [k for k, _ in kvs]
                undamaged["parsed"] += 1
            return
        for at, byte in mutations:
            data[at % len(data)] = byte
        check(data[: cut % (len(data) + 1)])

    one()
    ran_at_least(EXAMPLES // 2)
    assert undamaged["parsed"] > 0, "no undamaged header was ever checked"


def test_the_nesting_limit_is_what_the_structured_test_assumes() -> None:
    """Arrays nested exactly as deep as the reader allows parse; one more level is refused."""
    def nested(levels: int) -> tuple[int, bytes, int]:
        value = (V.UINT8, b"\x07", 0)
        for _ in range(levels):
            value = (V.ARRAY, struct.pack("<IQ", value[0], 1) + value[1], value[2] + 1)
        return value

    ok = [("deep", nested(_MAX_NESTING))]
    assert _must_parse(ok) and check(_header(ok)) is not None
    too_deep = [("deeper", nested(_MAX_NESTING + 1))]
    assert not _must_parse(too_deep) and check(_header(too_deep)) is None
    twice = [("k", nested(1)), ("k", nested(1))]
    assert not _must_parse(twice) and check(_header(twice)) is None
