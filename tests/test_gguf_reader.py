"""draftwise.core.gguf.reader: the header reader against gguf-py, the summary, and damaged files."""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFValueType as V

from draftwise.core.gguf import reader as g
from draftwise.core.gguf.ggml_types import GGML_TYPES
from draftwise.testing.tinymodels import TinyModel, write_tiny_model

# --- writing fixtures -----------------------------------------------------------------------


def write_gguf(
    path: Path,
    arch: str = "llama",
    kv: Iterable[tuple[str, Any, V | None]] = (),
    tensors: Iterable[tuple[str, np.ndarray, Q | None]] = (),
    *,
    split_max_tensors: int = 0,
    endianess: gguf.GGUFEndian = gguf.GGUFEndian.LITTLE,
    alignment: int | None = None,
) -> list[Path]:
    """A GGUF written by gguf-py: `kv` as (key, value, type or None for an array)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(path, arch, split_max_tensors=split_max_tensors, endianess=endianess)
    if alignment:
        w.add_custom_alignment(alignment)
    for key, value, vtype in kv:
        if vtype is None:
            w.add_array(key, value)
        else:
            w.add_key_value(key, value, vtype)
    for name, data, raw in tensors:
        w.add_tensor(name, data, raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    if split_max_tensors:
        return sorted(path.parent.glob(f"{path.stem}-*-of-*.gguf"))
    return [path]


def f32(*shape: int) -> np.ndarray:
    return np.zeros(shape, dtype=np.float32)


def quant(rows: int, ne0: int, qtype: Q) -> np.ndarray:
    """Raw bytes of a quantized [rows, ne0] tensor (contents do not matter to a header)."""
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    return np.arange(rows * ne0 // block * size, dtype=np.uint8).reshape(rows, -1)


def token_list(n: int, seed: str = "v") -> list[str]:
    return [f"{seed}{i}" for i in range(n)]


def tokenizer_kv(tokens: list[str]) -> list[tuple[str, Any, V | None]]:
    return [
        ("tokenizer.ggml.model", "gpt2", V.STRING),
        ("tokenizer.ggml.pre", "qwen2", V.STRING),
        ("tokenizer.ggml.tokens", tokens, None),
        ("tokenizer.ggml.token_type", [1] * len(tokens), None),
        ("tokenizer.ggml.scores", [0.5] * len(tokens), None),
        ("tokenizer.ggml.merges", [f"{a} {a}" for a in tokens[: len(tokens) // 2]], None),
        ("tokenizer.ggml.bos_token_id", 1, V.UINT32),
        ("tokenizer.ggml.eos_token_id", 2, V.UINT32),
        ("tokenizer.chat_template", "{{ messages }}", V.STRING),
    ]


def model_kv(arch: str, n_layer: int = 2, **extra: Any) -> list[tuple[str, Any, V | None]]:
    kv: list[tuple[str, Any, V | None]] = [
        ("general.name", f"tiny-{arch}", V.STRING),
        (f"{arch}.block_count", n_layer, V.UINT32),
        (f"{arch}.context_length", 2048, V.UINT32),
        (f"{arch}.embedding_length", 64, V.UINT32),
        (f"{arch}.feed_forward_length", 128, V.UINT32),
        (f"{arch}.attention.head_count", 4, V.UINT32),
        (f"{arch}.attention.head_count_kv", 2, V.UINT32),
    ]
    for key, value in extra.items():
        vtype = None if isinstance(value, list) else V.get_type(value)
        if vtype == V.INT32:
            vtype = V.UINT32
        kv.append((f"{arch}.{key.replace('__', '.')}", value, vtype))
    return kv + tokenizer_kv(token_list(40))


def trunk_tensors(n_layer: int, *, first: int = 0) -> list[tuple[str, np.ndarray, Q | None]]:
    t: list[tuple[str, np.ndarray, Q | None]] = [("token_embd.weight", f32(40, 64), None)]
    for i in range(first, n_layer):
        t += [
            (f"blk.{i}.attn_norm.weight", f32(64), None),
            (f"blk.{i}.attn_q.weight", f32(64, 64), None),
            (f"blk.{i}.ffn_up.weight", f32(128, 64), None),
        ]
    return t + [("output_norm.weight", f32(64), None)]


def nextn_tensors(layer: int) -> list[tuple[str, np.ndarray, Q | None]]:
    return [
        (f"blk.{layer}.nextn.eh_proj.weight", f32(64, 128), None),
        (f"blk.{layer}.nextn.enorm.weight", f32(64), None),
        (f"blk.{layer}.nextn.hnorm.weight", f32(64), None),
    ]


ALL_TYPES_KV: list[tuple[str, Any, V | None]] = [
    ("t.u8", 200, V.UINT8),
    ("t.i8", -100, V.INT8),
    ("t.u16", 60000, V.UINT16),
    ("t.i16", -30000, V.INT16),
    ("t.u32", 4_000_000_000, V.UINT32),
    ("t.i32", -2_000_000_000, V.INT32),
    ("t.f32", 0.1, V.FLOAT32),
    ("t.bool", True, V.BOOL),
    ("t.bool_false", False, V.BOOL),
    ("t.string", "héllo wörld ✓", V.STRING),
    ("t.empty_string", "", V.STRING),
    ("t.u64", 2**64 - 1, V.UINT64),
    ("t.i64", -(2**63), V.INT64),
    ("t.f64", 3.141592653589793, V.FLOAT64),
    ("t.arr_i32", [1, -2, 3], None),
    ("t.arr_f32", [0.5, 1.5], None),
    ("t.arr_bool", [True, False, True], None),
    ("t.arr_str", ["a", "bb", "", "ccc"], None),
    ("t.arr_nested", [[1, 2], [3, 4, 5]], None),
    ("t.arr_nested_str", [["x"], ["y", "z"]], None),
    ("t.arr_long_i32", list(range(5000)), None),
    ("t.arr_long_str", [f"s{i}" for i in range(3000)], None),
    ("t.arr_long_nested", [[i] for i in range(1500)], None),
]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One file per kind of model the app meets, written once for the module."""
    d = tmp_path_factory.mktemp("gguf")
    f: dict[str, Path] = {}
    f["llama_f32"] = write_tiny_model(d / "llama-F32.gguf", TinyModel())[0]
    f["llama_f16"] = write_tiny_model(d / "f16" / "llama-F16.gguf", TinyModel(dtype="F16"))[0]
    f["llama_q8"] = write_tiny_model(d / "q8" / "llama-Q8_0.gguf", TinyModel(dtype="Q8_0"))[0]
    f["moe"] = write_tiny_model(
        d / "moe" / "moe.gguf", TinyModel(name="tiny-moe", n_expert=4, n_expert_used=2)
    )[0]
    f["big_vocab"] = write_gguf(
        d / "bigvocab" / "bv.gguf", "llama", model_kv("llama")[:-9] + tokenizer_kv(token_list(1800)),
        trunk_tensors(2),
    )[0]  # fmt: skip
    f["all_types"] = write_gguf(
        d / "types.gguf", "llama", ALL_TYPES_KV + tokenizer_kv(token_list(2000)),
        [("a.weight", f32(3, 32), None), ("b", np.zeros((2, 3, 4, 5), np.int32), None)],
    )[0]  # fmt: skip
    f["swa"] = write_gguf(
        d / "swa" / "gemma3.gguf",
        "gemma3",
        model_kv(
            "gemma3", n_layer=4, attention__sliding_window=512,
            attention__sliding_window_pattern=[True, True, True, False],
            attention__head_count_kv=[2, 2, 2, 1], feed_forward_length=[128, 128, 256, 256],
            attention__shared_kv_layers=2, attention__key_length=32, attention__value_length=16,
            rope__scaling__type="yarn", rope__scaling__factor=4.0,
            rope__scaling__original_context_length=8192,
        ),
        trunk_tensors(4),
    )[0]  # fmt: skip
    f["hybrid"] = write_gguf(
        d / "hybrid" / "qwen3next.gguf",
        "qwen3next",
        model_kv(
            "qwen3next", n_layer=4, full_attention_interval=4, ssm__conv_kernel=4,
            ssm__inner_size=128, ssm__state_size=16, ssm__time_step_rank=8, ssm__group_count=2,
            expert_count=8, expert_used_count=2, expert_shared_count=1,
        ),
        trunk_tensors(4),
    )[0]  # fmt: skip
    # MTP: 3 blocks, the last one (blk.2) is the MTP head.
    mtp_kv = model_kv("glm4moe", n_layer=3, nextn_predict_layers=1)
    f["mtp_full"] = write_gguf(
        d / "mtp" / "glm-full.gguf", "glm4moe", mtp_kv, trunk_tensors(2) + nextn_tensors(2)
    )[0]
    f["trunk_only"] = write_gguf(
        d / "trunk" / "glm-trunk.gguf", "glm4moe", mtp_kv, trunk_tensors(2)
    )[0]
    f["mtp_only"] = write_gguf(
        d / "mtponly" / "glm-mtp.gguf",
        "glm4moe",
        mtp_kv,
        [("token_embd.weight", f32(40, 64), None), *nextn_tensors(2)],
    )[0]
    f["dflash"] = write_gguf(
        d / "dflash" / "dflash.gguf", "dflash", model_kv("dflash", n_layer=1),
        [("fc.weight", f32(64, 192), None), *trunk_tensors(1)],
    )[0]  # fmt: skip
    f["dspark"] = write_gguf(
        d / "dspark" / "dspark.gguf", "dflash", model_kv("dflash", n_layer=1),
        [("fc.weight", f32(64, 192), None), ("markov_w1.weight", f32(40, 8), None),
         *trunk_tensors(1)],
    )[0]  # fmt: skip
    f["eagle3"] = write_gguf(
        d / "eagle3" / "eagle3.gguf", "eagle3", model_kv("eagle3", n_layer=1),
        [("fc.weight", f32(64, 192), None), ("d2t", np.zeros(40, np.int64), None),
         *trunk_tensors(1)],
    )[0]  # fmt: skip
    f["kquants"] = write_gguf(
        d / "kq" / "kq.gguf", "llama",
        [("llama.block_count", 1, V.UINT32)],  # no general.file_type: derived from tensors
        [("blk.0.attn_q.weight", quant(2, 256, Q.Q4_K), Q.Q4_K),
         ("blk.0.attn_k.weight", quant(2, 256, Q.Q4_K), Q.Q4_K),
         ("blk.0.ffn_down.weight", quant(2, 256, Q.Q6_K), Q.Q6_K),
         ("blk.0.attn_v.weight", quant(4, 64, Q.Q8_0), Q.Q8_0),
         ("blk.0.attn_norm.weight", f32(64), None),
         ("blk.0.x.weight", quant(1, 256, Q.IQ4_XS), Q.IQ4_XS),
         ("blk.0.y.weight", quant(1, 64, Q.MXFP4), Q.MXFP4),
         ("blk.0.z.weight", np.zeros((2, 16), np.float16).view(np.uint8), Q.BF16)],
    )[0]  # fmt: skip
    f["aligned64"] = write_gguf(
        d / "a64" / "a64.gguf", "llama", [("a.b", 1, V.UINT8)],
        [("x.weight", f32(3), None), ("y.weight", f32(5, 7), None)], alignment=64,
    )[0]  # fmt: skip
    f["no_tensors"] = write_gguf(d / "empty" / "meta.gguf", "llama", [("a.b", 1, V.UINT8)])[0]
    f["projector"] = write_gguf(
        d / "vision" / "mmproj-tiny-F16.gguf", "clip",
        [("clip.has_vision_encoder", True, V.BOOL), ("clip.vision.image_size", 224, V.UINT32)],
        [("v.patch_embd.weight", f32(16, 3), None)],
    )[0]  # fmt: skip
    f["with_projector"] = write_tiny_model(d / "vision" / "tiny-vl.gguf", TinyModel())[0]
    shards = write_tiny_model(d / "split" / "tiny-split.gguf", TinyModel(), split_max_tensors=6)
    f["shard1"], f["shard2"] = shards[0], shards[1]
    f["v2"] = d / "v2" / "llama-v2.gguf"
    f["v2"].parent.mkdir()
    data = bytearray(f["llama_f32"].read_bytes())
    data[4:8] = struct.pack("<I", 2)  # v2 and v3 share the layout (64-bit lengths)
    f["v2"].write_bytes(data)
    return f


# --- differential test against gguf-py ------------------------------------------------------


def _flatten(v: Any) -> list[Any]:
    if isinstance(v, list):
        return [x for item in v for x in _flatten(item)]
    return [v]


def assert_same_as_gguf_reader(path: Path) -> g.GGUFHeader:
    ours = g.read_header(path)
    ref = gguf.GGUFReader(path)
    fields = {k: f for k, f in ref.fields.items() if not k.startswith("GGUF.")}
    assert list(fields) == list(ours.kv_types), "same keys in the same order"
    assert ours.version == int(ref.fields["GGUF.version"].parts[0][0])
    for key, field in fields.items():
        vtype = int(field.types[0])
        assert ours.kv_types[key] == vtype, key
        value = ours.get(key)
        if vtype == V.ARRAY:
            length = int(field.parts[4][0])
            if isinstance(value, g.ArrayInfo):
                assert value.length == length, key
                assert value.type == int(field.types[1]), key
                assert length > g.SMALL_ARRAY_MAX
            else:
                assert len(value) == length, key
                assert _flatten(value) == field.contents(), key
        else:
            assert value == field.contents(), key
            assert type(value) is type(field.contents()), key
    assert [t.name for t in ours.tensors] == [t.name for t in ref.tensors]
    for t, rt in zip(ours.tensors, ref.tensors, strict=True):
        assert t.shape == tuple(int(x) for x in rt.shape), t.name
        assert t.ggml_type == int(rt.tensor_type), t.name
        assert t.type_name == rt.tensor_type.name, t.name
        assert t.nbytes == int(rt.n_bytes), t.name
        assert t.n_elements == int(rt.n_elements), t.name
        assert ours.data_offset + t.offset == int(rt.data_offset), t.name
    assert ours.alignment == int(ref.alignment)
    assert ours.data_offset == ref.data_offset  # tensorless files too: where data would start
    assert ours.file_size == path.stat().st_size
    return ours


FIXTURE_NAMES = [
    "llama_f32", "llama_f16", "llama_q8", "moe", "big_vocab", "all_types", "swa", "hybrid",
    "mtp_full", "trunk_only", "mtp_only", "dflash", "dspark", "eagle3", "kquants", "aligned64",
    "no_tensors", "projector", "shard1", "shard2", "v2",
]  # fmt: skip


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_matches_gguf_reader(fixtures: dict[str, Path], name: str) -> None:
    assert_same_as_gguf_reader(fixtures[name])


def test_ggml_type_table_matches_gguf_py() -> None:
    for qtype, (block, size) in gguf.GGML_QUANT_SIZES.items():
        assert GGML_TYPES[int(qtype)] == (qtype.name, block, size)


# --- values ---------------------------------------------------------------------------------


def test_all_value_types(fixtures: dict[str, Path]) -> None:
    h = g.read_header(fixtures["all_types"])
    kv = h.kv
    assert kv["t.u8"] == 200 and kv["t.i8"] == -100
    assert kv["t.u16"] == 60000 and kv["t.i16"] == -30000
    assert kv["t.u32"] == 4_000_000_000 and kv["t.i32"] == -2_000_000_000
    assert kv["t.f32"] == pytest.approx(0.1) and kv["t.f64"] == 3.141592653589793
    assert kv["t.bool"] is True and kv["t.bool_false"] is False
    assert kv["t.string"] == "héllo wörld ✓" and kv["t.empty_string"] == ""
    assert kv["t.u64"] == 2**64 - 1 and kv["t.i64"] == -(2**63)
    assert kv["t.arr_i32"] == [1, -2, 3]
    assert kv["t.arr_bool"] == [True, False, True]
    assert kv["t.arr_str"] == ["a", "bb", "", "ccc"]
    assert kv["t.arr_nested"] == [[1, 2], [3, 4, 5]]
    assert kv["t.arr_nested_str"] == [["x"], ["y", "z"]]
    assert h.arrays["t.arr_long_i32"] == g.ArrayInfo(
        g.T_INT32, 5000, h.arrays["t.arr_long_i32"].offset
    )
    assert h.arrays["t.arr_long_str"].length == 3000
    assert h.arrays["t.arr_long_str"].type_name == "string"
    assert h.arrays["t.arr_long_nested"].length == 1500
    assert h.arrays["tokenizer.ggml.tokens"].length == 2000
    assert "t.arr_long_i32" not in h.kv
    assert h.tensors[1].shape == (5, 4, 3, 2) and h.tensors[1].type_name == "I32"


def test_empty_array_and_empty_file_parts(tmp_path: Path) -> None:
    # gguf-py refuses to write empty arrays; llama.cpp files can hold them.
    kv = _kv_raw("e.arr", g.T_ARRAY, struct.pack("<IQ", g.T_UINT32, 0))
    kv += _kv_raw("e.sarr", g.T_ARRAY, struct.pack("<IQ", g.T_STRING, 0))
    p = tmp_path / "e.gguf"
    p.write_bytes(struct.pack("<4sIQQ", b"GGUF", 3, 0, 2) + kv)
    h = g.read_header(p)
    assert h.kv == {"e.arr": [], "e.sarr": []} and h.tensors == [] and h.tokens_sha256 is None


def test_array_of_100k_strings_is_skipped(tmp_path: Path) -> None:
    tokens = [f"tok{i}" * (1 + i % 40) for i in range(100_000)]  # 4 to 320 bytes
    tokens[50_000] = "x" * 300  # longer than the fast path handles
    p = write_gguf(tmp_path / "v.gguf", "llama", tokenizer_kv(tokens))[0]
    h = g.read_header(p)
    assert h.arrays["tokenizer.ggml.tokens"].length == 100_000
    assert h.arrays["tokenizer.ggml.merges"].length == 50_000
    assert h.tokens_sha256 == _tokens_digest(tokens)
    assert h.kv["tokenizer.ggml.bos_token_id"] == 1  # the keys after the arrays were found


@pytest.mark.parametrize("window", [8, 97, 4096])
def test_small_windows_read_the_same(
    fixtures: dict[str, Path], window: int
) -> None:
    """The file window slides through long arrays; its size must not change the result."""
    names = ["all_types", "big_vocab", "swa", "llama_q8", "kquants", "mtp_full"]
    expected = {n: g.read_header(fixtures[n]) for n in names}
    for n in names:
        with fixtures[n].open("rb") as f:
            read = g.read_header_stream(f, fixtures[n].stat().st_size, fixtures[n], window=window)
        assert read == expected[n], n


def _tokens_digest(tokens: list[str]) -> str:
    raw = b"".join(struct.pack("<Q", len(t.encode())) + t.encode() for t in tokens)
    return hashlib.sha256(raw).hexdigest()


def test_tokens_sha256_identity(tmp_path: Path) -> None:
    base = token_list(3000)
    other = list(base)
    other[1234] = "v1234x"
    a = write_gguf(tmp_path / "a.gguf", "llama", tokenizer_kv(base))[0]
    b = write_gguf(tmp_path / "b.gguf", "qwen2", [("x", 1, V.UINT8), *tokenizer_kv(base)])[0]
    c = write_gguf(tmp_path / "c.gguf", "llama", tokenizer_kv(other))[0]
    ha, hb, hc = (g.read_header(p) for p in (a, b, c))
    assert ha.tokens_sha256 == hb.tokens_sha256 == _tokens_digest(base)
    assert hc.tokens_sha256 != ha.tokens_sha256
    # Same texts split differently are different vocabularies: lengths are part of the hash.
    d = write_gguf(tmp_path / "d.gguf", "llama", tokenizer_kv(["ab", "c"]))[0]
    e = write_gguf(tmp_path / "e.gguf", "llama", tokenizer_kv(["a", "bc"]))[0]
    assert g.read_header(d).tokens_sha256 != g.read_header(e).tokens_sha256
    # Small vocabularies are kept as lists and hashed all the same.
    assert g.read_header(d).kv["tokenizer.ggml.tokens"] == ["ab", "c"]


def test_tokens_sha256_same_vocab_across_tiny_models(fixtures: dict[str, Path]) -> None:
    infos = [g.read_model(fixtures[n]) for n in ("llama_f32", "llama_f16", "llama_q8", "moe")]
    assert len({i.tokenizer for i in infos}) == 1
    other = g.read_model(fixtures["big_vocab"])
    assert other.tokenizer.tokens_sha256 != infos[0].tokenizer.tokens_sha256


# --- summary --------------------------------------------------------------------------------


def test_summary_llama(fixtures: dict[str, Path]) -> None:
    info = g.read_model(fixtures["llama_q8"])
    m = TinyModel()
    assert info.architecture == "llama" and info.name == "tiny-llama"
    assert info.file_type == 7 and info.quant == "Q8_0"
    assert info.block_count == 2 and info.context_length == 4096
    assert info.embedding_length == 64 and info.feed_forward_length == 128
    assert info.head_count == 4 and info.head_count_kv == 2
    assert info.key_length == info.value_length == 16
    assert info.tokenizer == g.TokenizerId(
        "llama", "default", m.n_vocab, 1, 2, g.read_header(fixtures["llama_q8"]).tokens_sha256, add_bos=True
    )
    assert info.tokenizer.tokens_sha256 and len(info.tokenizer.tokens_sha256) == 64
    ref = gguf.GGUFReader(fixtures["llama_q8"])
    assert info.parameters == sum(int(t.n_elements) for t in ref.tensors)
    assert info.tensor_bytes == sum(int(t.n_bytes) for t in ref.tensors)
    assert info.tensor_count == len(ref.tensors)
    assert info.size_bytes == fixtures["llama_q8"].stat().st_size
    assert info.shards == 1 and info.missing_shards == [] and info.files == [fixtures["llama_q8"]]
    assert info.sidecar_kind is None and not info.mtp_head_present and info.mtp_layout is None
    assert not info.is_projector and info.projectors == [] and not info.has_chat_template
    assert g.read_model(fixtures["llama_f16"]).quant == "F16"
    assert g.read_model(fixtures["v2"]).version == 2


def test_summary_swa_per_layer_rope(fixtures: dict[str, Path]) -> None:
    info = g.read_model(fixtures["swa"])
    assert info.sliding_window == 512
    assert info.sliding_window_pattern == [True, True, True, False]
    assert info.head_count_kv == [2, 2, 2, 1] and info.feed_forward_length == [128, 128, 256, 256]
    assert info.shared_kv_layers == 2
    assert info.key_length == 32 and info.value_length == 16
    assert (info.rope_scaling_type, info.rope_scaling_factor) == ("yarn", 4.0)
    assert info.rope_scaling_original_context == 8192
    assert info.has_chat_template and info.tokenizer.vocab_size == 40
    assert info.tokenizer.model == "gpt2" and info.tokenizer.pre == "qwen2"


def test_summary_hybrid_and_moe(fixtures: dict[str, Path]) -> None:
    info = g.read_model(fixtures["hybrid"])
    assert info.full_attention_interval == 4
    assert (info.ssm_conv_kernel, info.ssm_inner_size, info.ssm_state_size) == (4, 128, 16)
    assert (info.ssm_time_step_rank, info.ssm_group_count) == (8, 2)
    assert (info.expert_count, info.expert_used_count, info.expert_shared_count) == (8, 2, 1)
    moe = g.read_model(fixtures["moe"])
    assert (moe.expert_count, moe.expert_used_count) == (4, 2)
    exps = [t for t in g.read_header(fixtures["moe"]).tensors if "_exps" in t.name]
    assert exps and all(t.shape[2] == 4 for t in exps)  # ne2 = experts


@pytest.mark.parametrize(
    ("name", "sidecar", "layout", "head"),
    [
        ("mtp_full", None, "full", True),
        ("trunk_only", None, "trunk-only", False),
        ("mtp_only", "mtp-only", "mtp-only", True),
        ("dflash", "dflash", None, False),
        ("dspark", "dspark", None, False),
        ("eagle3", "eagle3", None, False),
        ("llama_f32", None, None, False),
    ],
)
def test_sidecars_and_mtp(
    fixtures: dict[str, Path], name: str, sidecar: str | None, layout: str | None, head: bool
) -> None:
    info = g.read_model(fixtures[name])
    assert (info.sidecar_kind, info.mtp_layout, info.mtp_head_present) == (sidecar, layout, head)
    if name.startswith(("mtp", "trunk")):
        assert info.nextn_predict_layers == 1


def test_quant_derived_without_file_type(fixtures: dict[str, Path]) -> None:
    info = g.read_model(fixtures["kquants"])
    assert info.file_type is None and info.quant == "Q4_K"
    types = {t.name: t.type_name for t in g.read_header(fixtures["kquants"]).tensors}
    assert types["blk.0.ffn_down.weight"] == "Q6_K" and types["blk.0.y.weight"] == "MXFP4"
    assert types["blk.0.z.weight"] == "BF16"


def test_projector_and_projectors_beside(fixtures: dict[str, Path]) -> None:
    proj = g.read_model(fixtures["projector"])
    assert proj.is_projector and proj.architecture == "clip"
    model = g.read_model(fixtures["with_projector"])
    assert not model.is_projector and model.projectors == [fixtures["projector"]]
    assert g.model_info_json(model)["projectors"] == [str(fixtures["projector"])]


def test_shards_grouped(fixtures: dict[str, Path]) -> None:
    shards = g.shard_siblings(fixtures["shard2"])
    assert len(shards) > 2 and shards[0] == fixtures["shard1"]
    assert g.shard_stem(fixtures["shard2"]) == "tiny-split"
    assert g.shard_stem("/x/model-Q4_K_M.gguf") == "model-Q4_K_M"
    assert g.shard_siblings("/x/model.gguf") == [Path("/x/model.gguf")]
    single = g.read_model(fixtures["llama_f32"])
    for start in (fixtures["shard1"], shards[-1]):
        info = g.read_model(start)
        assert info.files == shards and info.shards == len(shards) and not info.missing_shards
        assert info.size_bytes == sum(p.stat().st_size for p in shards)
        assert info.tensor_count == single.tensor_count
        assert info.parameters == single.parameters
        assert info.architecture == "llama" and info.block_count == 2
        assert info.tokenizer == single.tokenizer
        assert info.path == fixtures["shard1"]


def test_missing_shard_reported(tmp_path: Path) -> None:
    shards = write_tiny_model(tmp_path / "m.gguf", TinyModel(), split_max_tensors=8)
    assert len(shards) == 3
    shards[1].unlink()
    info = g.read_model(shards[2])
    assert info.missing_shards == [shards[1].name]
    assert info.files == [shards[0], shards[2]] and info.shards == 3
    assert info.architecture == "llama"
    assert g.shard_siblings(shards[0]) == [shards[0], shards[2]]
    shards[0].unlink()  # without the first shard there is no metadata, but still an answer
    assert g.read_model(shards[2]).missing_shards == [shards[0].name, shards[1].name]


def test_model_info_json(fixtures: dict[str, Path]) -> None:
    import json

    j = g.model_info_json(g.read_model(fixtures["mtp_full"]))
    json.dumps(j)
    for key in (
        "architecture", "file_type", "parameters", "block_count", "context_length",
        "embedding_length", "head_count", "head_count_kv", "nextn_predict_layers",
        "sliding_window", "expert_count", "tokenizer", "size_bytes", "tensor_bytes",
        "tensor_count", "shards", "name", "quant", "mtp_head_present", "sidecar_kind",
        "missing_shards", "projectors",
    ):  # fmt: skip
        assert key in j, key
    assert set(j["tokenizer"]) == {
        "model",
        "pre",
        "vocab_size",
        "bos_id",
        "eos_id",
        "tokens_sha256",
        "add_bos",
        "add_eos",
    }
    assert j["sliding_window"] is None and j["expert_count"] is None
    assert j["nextn_predict_layers"] == 1 and j["mtp_head_present"] is True


# --- bad input ------------------------------------------------------------------------------


def _kv_raw(key: str, vtype: int, payload: bytes) -> bytes:
    k = key.encode()
    return struct.pack("<Q", len(k)) + k + struct.pack("<I", vtype) + payload


def _raw_file(
    tmp_path: Path, kv: bytes, n_kv: int, tensors: bytes = b"", n_tensors: int = 0
) -> Path:
    p = tmp_path / "raw.gguf"
    p.write_bytes(struct.pack("<4sIQQ", b"GGUF", 3, n_tensors, n_kv) + kv + tensors)
    return p


def _field_offset(path: Path, key: str) -> int:
    """Offset of a key-value pair (its key length) as gguf-py sees it."""
    return gguf.GGUFReader(path).fields[key].offset


def _tensor_info_offset(path: Path, name: str) -> int:
    r = gguf.GGUFReader(path)
    return next(t.field.offset for t in r.tensors if t.name == name)


def _patched(
    tmp_path: Path, src: Path, edits: Callable[[bytearray], None], name: str = "bad.gguf"
) -> Path:
    data = bytearray(src.read_bytes())
    edits(data)
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _expect(path: Path, *fragments: str, offset: int | None = None) -> g.GGUFError:
    with pytest.raises(g.GGUFError) as ei:
        g.read_header(path)
    err = ei.value
    assert err.path == str(path)
    assert str(path) in str(err)
    for fragment in fragments:
        assert fragment in str(err), (fragment, str(err))
    if offset is not None:
        assert err.offset == offset, str(err)
        assert f"at byte {offset}:" in str(err)
    return err


def _put(data: bytearray, at: int, fmt: str, value: int) -> None:
    struct.pack_into(fmt, data, at, value)


def _poked(tmp_path: Path, src: Path, at: int, fmt: str, value: int) -> Path:
    """A copy of src with one number overwritten."""
    data = bytearray(src.read_bytes())
    struct.pack_into(fmt, data, at, value)
    p = tmp_path / "bad.gguf"
    p.write_bytes(data)
    return p


def test_not_gguf(tmp_path: Path) -> None:
    p = tmp_path / "notes.gguf"
    p.write_text("hello, this is not a model\n" * 10)
    _expect(p, "does not start with 'GGUF'", offset=0)
    p.write_bytes(b"")
    _expect(p, "0 bytes long", offset=0)
    p.write_bytes(b"GGU")
    _expect(p, "too short", offset=0)
    p.write_bytes(b"GGUF\x03\x00\x00\x00\x00")
    _expect(p, "24-byte GGUF header", "runs past the end of the file (size 9)", offset=0)


@pytest.mark.parametrize(
    ("version", "fragment"),
    [
        (0, "unknown GGUF version 0"),
        (1, "version 1 files are not supported"),
        (4, "unknown GGUF version 4"),
        (0x03000000, "big-endian GGUF files are not supported"),
        (0x00020000, "big-endian"),
    ],
)
def test_bad_versions(
    fixtures: dict[str, Path], tmp_path: Path, version: int, fragment: str
) -> None:
    p = _poked(tmp_path, fixtures["llama_f32"], 4, "<I", version)
    _expect(p, fragment, offset=4)


def test_big_endian_file(tmp_path: Path) -> None:
    p = write_gguf(
        tmp_path / "be.gguf", "llama", [("a.b", 1, V.UINT32)], [("x", f32(4), None)],
        endianess=gguf.GGUFEndian.BIG,
    )[0]  # fmt: skip
    err = _expect(p, "big-endian GGUF files are not supported", offset=4)
    assert "damaged" not in str(err)


def test_counts_that_cannot_fit(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["llama_f32"]
    for n in (2**64 - 1, 2**63, 10**12):
        _expect(_poked(tmp_path, src, 8, "<Q", n), "tensor count", offset=8)
        _expect(_poked(tmp_path, src, 16, "<Q", n), "key-value count", offset=16)


def test_forged_string_lengths(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["llama_f32"]
    size = src.stat().st_size
    at = _field_offset(src, "general.name")
    p = _poked(tmp_path, src, at, "<Q", 99_999_999)
    err = _expect(
        p, "key 1 length 99999999 runs past the end of the file", f"(size {size})", offset=at
    )
    assert str(err).endswith("The file is damaged or not a GGUF model; download it again.")
    # the value string: key "general.name" (8 + 12 bytes) then type (4)
    vat = at + 8 + len("general.name") + 4
    p = _poked(tmp_path, src, vat, "<Q", 2**63 + 5)
    _expect(p, "value of 'general.name' length", "runs past the end", offset=vat)


def test_unknown_value_type(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["llama_f32"]
    at = _field_offset(src, "general.name") + 8 + len("general.name")
    p = _poked(tmp_path, src, at, "<I", 13)
    _expect(p, "key 'general.name' has unknown value type 13", offset=at)


def test_forged_array_counts(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["big_vocab"]
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"):
        count_at = _field_offset(src, key) + 8 + len(key) + 4 + 4
        for n in (2**64 - 1, 2**40, 10_000_000):
            p = _poked(tmp_path, src, count_at, "<Q", n)
            _expect(p, f"'{key}'", offset=None)
    # Element type of an array unknown
    key = "tokenizer.ggml.scores"
    type_at = _field_offset(src, key) + 8 + len(key) + 4
    p = _poked(tmp_path, src, type_at, "<I", 77)
    _expect(p, "unknown element type 77", offset=type_at)


def test_forged_token_length_in_array(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["big_vocab"]
    key = "tokenizer.ggml.tokens"
    first = _field_offset(src, key) + 8 + len(key) + 4 + 4 + 8
    data = src.read_bytes()
    at = first
    for _ in range(700):  # step to string 700 (inside the regex-walked part)
        at += 8 + struct.unpack_from("<Q", data, at)[0]
    for n in (2**64 - 1, 2**62, 10**9, len(data)):
        p = _poked(tmp_path, src, at, "<Q", n)
        _expect(p, "string 700 of array 'tokenizer.ggml.tokens'", "runs past the end", offset=at)


def test_nesting_abuse(tmp_path: Path) -> None:
    depth = 50
    payload = b"".join(struct.pack("<IQ", g.T_ARRAY, 1) for _ in range(depth))
    payload += struct.pack("<IQ", g.T_UINT8, 1) + b"\x00"
    p = _raw_file(tmp_path, _kv_raw("deep", g.T_ARRAY, payload), 1)
    _expect(p, "nested more than 4 deep")
    ok = _kv_raw(
        "ok",
        g.T_ARRAY,
        struct.pack("<IQ", g.T_ARRAY, 1) + struct.pack("<IQ", g.T_UINT8, 2) + b"\x01\x02",
    )
    assert g.read_header(_raw_file(tmp_path, ok, 1)).kv["ok"] == [[1, 2]]


def test_duplicate_and_empty_keys(tmp_path: Path) -> None:
    kv = _kv_raw("a", g.T_UINT8, b"\x01") + _kv_raw("a", g.T_UINT8, b"\x02")
    _expect(_raw_file(tmp_path, kv, 2), "duplicate key 'a'", offset=24 + 8 + 1 + 4 + 1)
    _expect(
        _raw_file(tmp_path, _kv_raw("", g.T_UINT8, b"\x01" * 20), 1), "key 0 is empty", offset=24
    )


def _tensor_raw(name: str, dims: list[int], gtype: int = 0, offset: int = 0) -> bytes:
    n = name.encode()
    return (
        struct.pack("<Q", len(n)) + n + struct.pack("<I", len(dims))
        + b"".join(struct.pack("<q", d) for d in dims) + struct.pack("<IQ", gtype, offset)
    )  # fmt: skip


@pytest.mark.parametrize(
    ("dims", "gtype", "fragment"),
    [
        ([1, 1, 1, 1, 1], 0, "5 dimensions (at most 4)"),
        ([2**40, 2**40], 0, "too many elements"),
        ([-1, 4], 0, "negative dimension"),
        ([4], 99, "unknown ggml type 99"),
        ([4], 4, "unknown ggml type 4"),  # Q4_2: removed from the format
        ([4], 31, "unknown ggml type 31"),  # Q4_0_4_4: removed
        ([33], 8, "not a multiple of its block size 32"),
        ([100], 12, "rows of 100 elements"),
    ],
)
def test_bad_tensor_info(tmp_path: Path, dims: list[int], gtype: int, fragment: str) -> None:
    p = _raw_file(tmp_path, b"", 0, _tensor_raw("w", dims, gtype) + b"\x00" * 4096, 1)
    _expect(p, "tensor 'w'", fragment)


def test_bad_tensor_table_in_real_file(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["llama_f32"]
    name = "blk.0.attn_q.weight"
    at = _tensor_info_offset(src, name)
    dims_at = at + 8 + len(name)
    type_at = dims_at + 4 + 2 * 8
    off_at = type_at + 4
    _expect(_poked(tmp_path, src, dims_at, "<I", 9), "9 dimensions", offset=dims_at)
    _expect(_poked(tmp_path, src, type_at, "<I", 500), "unknown ggml type 500", offset=type_at)
    _expect(_poked(tmp_path, src, dims_at + 4, "<q", 2**62), "too many elements")
    _expect(_poked(tmp_path, src, off_at, "<Q", 2**64 - 1), "has data offset", offset=off_at)
    _expect(
        _poked(tmp_path, src, at, "<Q", 64), "name of tensor", "over the limit of 63", offset=at
    )

    def rename(d: bytearray) -> None:  # make two tensors share a name
        other = "blk.0.attn_k.weight"
        d[
            _tensor_info_offset(src, other) + 8 : _tensor_info_offset(src, other) + 8 + len(other)
        ] = name.encode()

    _expect(_patched(tmp_path, src, rename), f"duplicate tensor name '{name}'")


def test_truncated_tensor_data(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["llama_f32"]
    data = src.read_bytes()
    h = g.read_header(src)
    last = h.tensors[-1]
    end = h.data_offset + last.offset + last.nbytes
    p = tmp_path / "cut.gguf"
    p.write_bytes(data[: end - 1])
    _expect(p, "the file is incomplete", f"need {end} bytes", offset=end - 1)
    p.write_bytes(data[:end])  # the padding after the last tensor is not needed
    assert g.read_header(p).tensors == h.tensors
    p.write_bytes(data[: h.data_offset - 1])
    _expect(p, "incomplete")
    p.write_bytes(data[: h.data_offset // 2])
    _expect(p, "runs past the end of the file")


def test_alignment_checks(fixtures: dict[str, Path], tmp_path: Path) -> None:
    src = fixtures["aligned64"]
    h = assert_same_as_gguf_reader(src)
    assert h.alignment == 64 and h.data_offset % 64 == 0
    at = _field_offset(src, "general.alignment")
    vat = at + 8 + len("general.alignment") + 4
    for bad in (0, 3, 48):
        p = _poked(tmp_path, src, vat, "<I", bad)
        _expect(p, f"general.alignment is {bad}", "power of two", offset=at)
    p = _raw_file(tmp_path, _kv_raw("general.alignment", g.T_UINT64, struct.pack("<Q", 32)), 1)
    _expect(p, "must be a uint32")


def test_os_errors(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    err = _expect(missing, "no such file")
    assert err.offset is None and "damaged" not in str(err)
    _expect(tmp_path, "is a folder, not a GGUF file")
    with pytest.raises(g.GGUFError, match="no such file"):
        g.read_model(missing)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads anything")
def test_permission_denied(fixtures: dict[str, Path], tmp_path: Path) -> None:
    p = tmp_path / "locked.gguf"
    p.write_bytes(fixtures["llama_f32"].read_bytes())
    p.chmod(0)
    try:
        _expect(p, "permission denied")
    finally:
        p.chmod(0o644)


def test_error_is_value_error() -> None:
    err = g.GGUFError(
        "/m.gguf", 1234, "string length 99999999 runs past the end of the file (size 5000)"
    )
    assert isinstance(err, ValueError)
    assert str(err) == (
        "/m.gguf: at byte 1234: string length 99999999 runs past the end of the file (size 5000). "
        "The file is damaged or not a GGUF model; download it again."
    )


# --- the header cache -------------------------------------------------------------------------


def _age(*paths: Path) -> None:
    """Written long ago (the cache does not keep a file modified in the last moments)."""
    for p in paths:
        os.utime(p, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files really parsed (not answered from the cache), in order."""
    g.clear_header_cache()
    seen: list[str] = []
    real = g._read_header_file

    def counting(path: Path, keep_vocab: bool) -> g.GGUFHeader:
        seen.append(path.name)
        return real(path, keep_vocab)

    monkeypatch.setattr(g, "_read_header_file", counting)
    return seen


def test_a_header_is_parsed_once_until_its_file_changes(tmp_path: Path, parses: list[str]) -> None:
    path = write_tiny_model(tmp_path / "m.gguf", TinyModel())[0]
    _age(path)
    first = g.read_header(path)
    assert g.read_header(path) is first and g.read_model(path).path == path
    assert parses == ["m.gguf"]
    os.utime(path, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))  # written again
    assert g.read_header(path) is not first and parses == ["m.gguf", "m.gguf"]
    # Another spelling of the path is another entry: a header names the path it was read as.
    other = tmp_path / "." / "m.gguf"
    assert g.read_header(other).path == other


def test_a_read_without_the_token_list_does_not_answer_one_that_needs_it(tmp_path: Path,
                                                                       parses: list[str]) -> None:
    path = write_tiny_model(tmp_path / "m.gguf", TinyModel())[0]
    _age(path)
    assert g.read_header(path).vocab is None
    with_vocab = g.read_header(path, keep_vocab=True)
    assert with_vocab.vocab is not None and parses == ["m.gguf", "m.gguf"]
    # ... while the one that holds it answers both.
    assert g.read_header(path) is with_vocab and g.read_header(path, keep_vocab=True) is with_vocab
    assert len(parses) == 2


def test_a_file_written_a_moment_ago_is_parsed_every_time(tmp_path: Path, parses: list[str]) -> None:
    """Rewritten in place at the same size within one timestamp step, it would look the same:
    the cache keeps only files older than _FileCache.RACY_NS."""
    path = write_tiny_model(tmp_path / "m.gguf", TinyModel(name="tiny-before"))[0]
    st = path.stat()
    assert g.read_header(path).kv["general.name"] == "tiny-before"
    data = path.read_bytes()
    with path.open("r+b") as f:  # the same inode and size, and (below) the same mtime
        f.write(data.replace(b"tiny-before", b"tiny-after!", 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert g.read_header(path).kv["general.name"] == "tiny-after!" and len(parses) == 2


def test_the_cache_keeps_a_bounded_number_of_headers(tmp_path: Path, parses: list[str]) -> None:
    paths = [write_tiny_model(tmp_path / f"m{i}.gguf", TinyModel())[0] for i in range(3)]
    _age(*paths)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(g._headers, "size", 2)
        for p in paths:
            g.read_header(p)
        g.read_header(paths[2])
        g.read_header(paths[0])  # the oldest went out
    assert parses == ["m0.gguf", "m1.gguf", "m2.gguf", "m0.gguf"]


def test_a_models_token_list_is_read_once_until_its_file_changes(tmp_path: Path, monkeypatch) -> None:
    """Pairing reads the model's token list on every re-plan: an unchanged file's comes from
    memory, a changed file's is read (and checked against its digest) again."""
    g.clear_header_cache()
    path = write_tiny_model(tmp_path / "m.gguf", TinyModel())[0]
    _age(path)
    info = g.read_model(path)
    assert info.vocab is None
    reads: list[str] = []
    real = g._read_vocab_file
    monkeypatch.setattr(g, "_read_vocab_file", lambda i, place: reads.append(i.path.name) or real(i, place))
    first = g.read_vocab(info)
    assert g.read_vocab(info) is first and reads == ["m.gguf"]
    os.utime(path, ns=(2 * 10**18, 2 * 10**18))
    assert g.read_vocab(info).tokens == first.tokens and reads == ["m.gguf", "m.gguf"]
