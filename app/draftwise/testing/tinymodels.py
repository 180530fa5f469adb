"""Tiny random-weight GGUF models of real architectures, written with gguf-py.

These are what the tests, the benchmarks and "Check this machine" launch: files the real
llama-server loads and generates tokens from (the tokens are nonsense, the code paths are
real). Nothing here is committed as a file; every model is written on demand.

This module needs the `gguf` package (a dev dependency), so nothing in the shipped app
imports it at module level.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# SentencePiece token types as llama.cpp reads them (llama_token_attr in llama-vocab.cpp).
_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6


@dataclass(frozen=True)
class TinyModel:
    """Geometry and identity of a tiny model. Defaults give a loadable 2-layer llama."""

    arch: str = "llama"
    name: str = "tiny-llama"
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx_train: int = 4096
    # The vocabulary's identity: models with the same `vocab` string share a token list.
    vocab: str = "base"
    n_pieces: int = 64  # word pieces on top of the 3 specials and 256 byte tokens
    dtype: str = "F32"  # F32, F16 or Q8_0 for the 2-D weights
    sliding_window: int | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    nextn_predict_layers: int = 0
    seed: int = 0
    tie_embeddings: bool = False
    extra_kv: dict[str, Any] = field(default_factory=dict)

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_vocab(self) -> int:
        return 3 + 256 + self.n_pieces


def vocabulary(model: TinyModel) -> tuple[list[str], list[float], list[int]]:
    """An SPM vocabulary with byte fallback, so any text tokenizes."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [_BYTE] * 256
    # Pieces differ by vocabulary name, so two vocabularies really have other token lists.
    digest = hashlib.sha256(model.vocab.encode()).hexdigest()
    letters = "abcdefghijklmnopqrstuvwxyz"
    pieces: list[str] = []
    i = 0
    while len(pieces) < model.n_pieces:
        a = letters[int(digest[i % 64], 16) % 26]
        b = letters[(i * 7 + int(digest[(i + 1) % 64], 16)) % 26]
        piece = "\u2581" + a + b + (letters[i % 26] if i >= 26 else "")
        if piece not in pieces:
            pieces.append(piece)
        i += 1
    tokens += pieces
    types += [_NORMAL] * len(pieces)
    scores = [0.0] * 259 + [-float(k) for k in range(len(pieces))]
    return tokens, scores, types


def _tensor(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _store(writer: Any, name: str, data: np.ndarray, dtype: str) -> None:
    import gguf

    if data.ndim == 1 or dtype == "F32":
        writer.add_tensor(name, data)
    elif dtype == "F16":
        writer.add_tensor(name, data.astype(np.float16))
    elif dtype == "Q8_0":
        q = gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)
        writer.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    else:
        raise ValueError(f"unsupported dtype {dtype!r}")


_FILE_TYPE = {"F32": 0, "F16": 1, "Q8_0": 7}


def llama_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """Tensors of a llama-architecture model, numpy shapes (row-major, ne1 first)."""
    rng = np.random.default_rng(model.seed)
    e, ff, hd = model.n_embd, model.n_ff, model.head_dim
    t: dict[str, np.ndarray] = {
        "token_embd.weight": _tensor(rng, model.n_vocab, e),
        "output_norm.weight": np.ones(e, dtype=np.float32),
    }
    if not model.tie_embeddings:
        t["output.weight"] = _tensor(rng, model.n_vocab, e)
    for i in range(model.n_layer):
        p = f"blk.{i}."
        t[p + "attn_norm.weight"] = np.ones(e, dtype=np.float32)
        t[p + "attn_q.weight"] = _tensor(rng, model.n_head * hd, e)
        t[p + "attn_k.weight"] = _tensor(rng, model.n_head_kv * hd, e)
        t[p + "attn_v.weight"] = _tensor(rng, model.n_head_kv * hd, e)
        t[p + "attn_output.weight"] = _tensor(rng, e, model.n_head * hd)
        t[p + "ffn_norm.weight"] = np.ones(e, dtype=np.float32)
        if model.n_expert:
            n = model.n_expert
            t[p + "ffn_gate_inp.weight"] = _tensor(rng, n, e)
            t[p + "ffn_gate_exps.weight"] = _tensor(rng, n, ff, e)
            t[p + "ffn_up_exps.weight"] = _tensor(rng, n, ff, e)
            t[p + "ffn_down_exps.weight"] = _tensor(rng, n, e, ff)
        else:
            t[p + "ffn_gate.weight"] = _tensor(rng, ff, e)
            t[p + "ffn_up.weight"] = _tensor(rng, ff, e)
            t[p + "ffn_down.weight"] = _tensor(rng, e, ff)
    return t


def write_tiny_model(
    path: str | Path,
    model: TinyModel | None = None,
    *,
    split_max_tensors: int = 0,
    tensors: dict[str, np.ndarray] | None = None,
) -> list[Path]:
    """Write `model` to `path` and return the files written (several when split).

    `tensors` replaces the default llama tensor set, for architectures and partial files
    (MTP sidecars, stripped heads) that tests build by hand.
    """
    import gguf

    model = model or TinyModel()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arch = model.arch
    writer = gguf.GGUFWriter(path, arch, split_max_tensors=split_max_tensors)
    writer.add_name(model.name)
    writer.add_file_type(_FILE_TYPE.get(model.dtype, 0))
    writer.add_context_length(model.n_ctx_train)
    writer.add_embedding_length(model.n_embd)
    writer.add_block_count(model.n_layer)
    writer.add_feed_forward_length(model.n_ff)
    writer.add_head_count(model.n_head)
    writer.add_head_count_kv(model.n_head_kv)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(model.head_dim)
    writer.add_rope_freq_base(10000.0)
    if model.sliding_window:
        writer.add_sliding_window(model.sliding_window)
    if model.n_expert:
        writer.add_expert_count(model.n_expert)
        writer.add_expert_used_count(model.n_expert_used or 1)
    if model.nextn_predict_layers:
        writer.add_uint32(f"{arch}.nextn_predict_layers", model.nextn_predict_layers)

    tokens, scores, types = vocabulary(model)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(True)
    for key, value in model.extra_kv.items():
        _add_value(writer, key, value)

    for name, data in (tensors if tensors is not None else llama_tensors(model)).items():
        _store(writer, name, data, model.dtype)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if split_max_tensors:
        return sorted(path.parent.glob(f"{path.stem}-*-of-*.gguf"))
    return [path]


def _add_value(writer: Any, key: str, value: Any) -> None:
    if isinstance(value, bool):
        writer.add_bool(key, value)
    elif isinstance(value, int):
        writer.add_uint32(key, value) if value >= 0 else writer.add_int32(key, value)
    elif isinstance(value, float):
        writer.add_float32(key, value)
    elif isinstance(value, str):
        writer.add_string(key, value)
    elif isinstance(value, list | tuple):
        writer.add_array(key, list(value))
    else:
        raise TypeError(f"cannot write {key}={value!r} to GGUF")
