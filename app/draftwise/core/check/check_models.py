"""The tiny models the self-test and "Check this machine" launch, in pure Python.

The frozen app carries neither numpy nor gguf-py, so these layouts are spelled out here and
written with `gguf_write`. They are copies of what `draftwise.testing.tinymodels` writes,
which stays the layouts' single source of truth: tests/test_check_models.py binds them to
it (same metadata, token list, tensor names, shapes and types; only the random weights
differ) and loads both files in the real engine.

- `write_llama`: `tinymodels.TinyModel(name=...)`, a 2-block llama; with `dtype="Q4_0"`,
  `TinyModel(name=..., dtype="Q4_0")`: every matrix quantized (the CPU's re-laid and AMX
  kernels run on those, so the machine check meets their faults before a user's model does).
- `write_mtp`: `tinymodels.mtp_model(name=...)`, glm4moe with an embedded MTP head
  (block 0 dense, block 1 MoE, block 2 the nextn block); `--spec-type draft-mtp` runs it.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from draftwise.core.gguf.writer import TensorSpec, write_gguf

# TinyModel's defaults.
N_EMBD, N_HEAD, N_HEAD_KV, N_FF, N_CTX_TRAIN = 64, 4, 2, 128, 4096
HEAD_DIM = N_EMBD // N_HEAD
VOCAB, N_PIECES = "base", 64
N_VOCAB = 3 + 256 + N_PIECES
# mtp_model's MoE geometry.
MTP_N_LAYER, MTP_NEXTN, MTP_DENSE_LEAD = 3, 1, 1
MTP_N_EXPERT, MTP_N_EXPERT_USED, MTP_N_SHARED, MTP_N_FF_EXP = 4, 2, 1, 32

_NORMAL, _UNKNOWN, _CONTROL, _BYTE = 1, 2, 3, 6  # llama_token_attr


def vocabulary(vocab: str = VOCAB, n_pieces: int = N_PIECES) -> tuple[list[str], list[float], list[int]]:
    """tinyspec.vocabulary: SPM with byte fallback; pieces from an alphabet shuffled by name."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [_UNKNOWN, _CONTROL, _CONTROL] + [_BYTE] * 256
    letters = list("abcdefghijklmnopqrstuvwxyz")
    random.Random(hashlib.sha256(vocab.encode()).hexdigest()).shuffle(letters)
    for i in range(n_pieces):
        word, n = "", i + 26
        while n:
            n, r = divmod(n, 26)
            word = letters[r] + word
        tokens.append("\u2581" + word)
    types += [_NORMAL] * n_pieces
    scores = [0.0] * 259 + [-float(k) for k in range(n_pieces)]
    return tokens, scores, types


_FILE_TYPE = {"F32": 0, "Q4_0": 2}  # general.file_type (llama_ftype), as tinymodels writes it


def _kv(arch: str, name: str, n_layer: int, extra: list[tuple[str, Any]], dtype: str = "F32") -> list[tuple[str, Any]]:
    tokens, scores, types = vocabulary()
    return [
        ("general.architecture", arch),
        ("general.name", name),
        ("general.file_type", _FILE_TYPE[dtype]),
        (f"{arch}.context_length", N_CTX_TRAIN),
        (f"{arch}.embedding_length", N_EMBD),
        (f"{arch}.block_count", n_layer),
        (f"{arch}.feed_forward_length", N_FF),
        (f"{arch}.attention.head_count", N_HEAD),
        (f"{arch}.attention.head_count_kv", N_HEAD_KV),
        (f"{arch}.attention.layer_norm_rms_epsilon", 1e-5),
        (f"{arch}.rope.dimension_count", HEAD_DIM),
        (f"{arch}.rope.freq_base", 10000.0),
        *extra,
        ("tokenizer.ggml.model", "llama"),
        ("tokenizer.ggml.pre", "default"),
        ("tokenizer.ggml.tokens", tokens),
        ("tokenizer.ggml.scores", scores),
        ("tokenizer.ggml.token_type", types),
        ("tokenizer.ggml.bos_token_id", 1),
        ("tokenizer.ggml.eos_token_id", 2),
        ("tokenizer.ggml.unknown_token_id", 0),
        ("tokenizer.ggml.add_bos_token", True),
    ]


def _w(name: str, *dims: int) -> TensorSpec:
    return TensorSpec(name, dims)


def _ones(name: str, n: int = N_EMBD) -> TensorSpec:
    return TensorSpec(name, (n,), "ones")


def _attention(p: str) -> list[TensorSpec]:
    e, q, kv = N_EMBD, N_HEAD * HEAD_DIM, N_HEAD_KV * HEAD_DIM
    return [
        _ones(p + "attn_norm.weight"), _w(p + "attn_q.weight", e, q), _w(p + "attn_k.weight", e, kv),
        _w(p + "attn_v.weight", e, kv), _w(p + "attn_output.weight", q, e),
    ]


def _dense_ffn(p: str) -> list[TensorSpec]:
    return [_w(p + "ffn_gate.weight", N_EMBD, N_FF), _w(p + "ffn_up.weight", N_EMBD, N_FF),
            _w(p + "ffn_down.weight", N_FF, N_EMBD)]


def _head() -> list[TensorSpec]:
    return [_w("token_embd.weight", N_EMBD, N_VOCAB), _ones("output_norm.weight"),
            _w("output.weight", N_EMBD, N_VOCAB)]


def write_llama(path: str | Path, *, name: str = "tiny-llama", seed: int = 0, dtype: str = "F32") -> Path:
    """A 2-block random-weight llama: F32 (about 460 KB), tinymodels.TinyModel(name=name), or
    Q4_0 matrices (about 80 KB), TinyModel(name=name, dtype="Q4_0")."""
    n_layer = 2
    tensors = _head()
    for i in range(n_layer):
        p = f"blk.{i}."
        tensors += [*_attention(p), _ones(p + "ffn_norm.weight"), *_dense_ffn(p)]
    if dtype != "F32":
        tensors = [replace(t, dtype=dtype) if len(t.dims) > 1 else t for t in tensors]
    return write_gguf(path, _kv("llama", name, n_layer, [], dtype), tensors, seed=seed)


def write_mtp(path: str | Path, *, name: str = "tiny-glm4moe-mtp", seed: int = 0) -> Path:
    """glm4moe with an embedded MTP head (about 770 KB): tinymodels.mtp_model(name=name)."""
    arch, e, n, ff_exp = "glm4moe", N_EMBD, MTP_N_EXPERT, MTP_N_FF_EXP
    ff_sh = ff_exp * MTP_N_SHARED
    extra: list[tuple[str, Any]] = [
        (f"{arch}.expert_count", n),
        (f"{arch}.expert_used_count", MTP_N_EXPERT_USED),
        (f"{arch}.nextn_predict_layers", MTP_NEXTN),
        (f"{arch}.expert_feed_forward_length", ff_exp),
        (f"{arch}.expert_shared_count", MTP_N_SHARED),
        (f"{arch}.leading_dense_block_count", MTP_DENSE_LEAD),
        (f"{arch}.expert_weights_scale", 1.0),
        (f"{arch}.expert_weights_norm", True),
        (f"{arch}.expert_gating_func", 2),  # sigmoid, as GLM-4.5
    ]
    tensors = _head()
    for i in range(MTP_N_LAYER):
        p = f"blk.{i}."
        tensors += [*_attention(p), _ones(p + "post_attention_norm.weight")]
        if i < MTP_DENSE_LEAD:
            tensors += _dense_ffn(p)
        else:
            tensors += [
                _w(p + "ffn_gate_inp.weight", e, n),
                TensorSpec(p + "exp_probs_b.bias", (n,), "zeros"),
                _w(p + "ffn_gate_exps.weight", e, ff_exp, n),
                _w(p + "ffn_up_exps.weight", e, ff_exp, n),
                _w(p + "ffn_down_exps.weight", ff_exp, e, n),
                _w(p + "ffn_gate_shexp.weight", e, ff_sh),
                _w(p + "ffn_up_shexp.weight", e, ff_sh),
                _w(p + "ffn_down_shexp.weight", ff_sh, e),
            ]
        if i >= MTP_N_LAYER - MTP_NEXTN:
            tensors += [
                _w(p + "nextn.eh_proj.weight", 2 * e, e),
                _ones(p + "nextn.enorm.weight"),
                _ones(p + "nextn.hnorm.weight"),
                _w(p + "nextn.shared_head_head.weight", e, N_VOCAB),
                _ones(p + "nextn.shared_head_norm.weight"),
            ]
    return write_gguf(path, _kv(arch, name, MTP_N_LAYER, extra), tensors, seed=seed)
