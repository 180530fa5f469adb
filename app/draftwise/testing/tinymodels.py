"""Tiny random-weight GGUF models of real architectures, written with gguf-py.

These are what the tests, the benchmarks and "Check this machine" launch: files the real
llama-server loads and generates tokens from (the tokens are nonsense, the code paths are
real). Nothing here is committed as a file; every model is written on demand.

Ready-made cases for speculative decoding (what the engine does with each is measured in
docs/engine-observations.md):
- `TinyModel()`: a 2-block llama. `draft_model(t)`: a smaller llama with t's vocabulary
  (`vocab="other"` for an incompatible one); `twin_draft(t)`: t's own weights (always
  accepted); `broken_draft(path, t)`: same vocabulary, but the engine refuses to load it.
- `mtp_model()`: glm4moe with an embedded MTP head (`--spec-type draft-mtp` runs it).
  `write_tiny_model(path, m, part="trunk")` writes it with the head stripped,
  `part="mtp"` the MTP-only sidecar (`-md sidecar.gguf` on the trunk).
- `eagle3_draft(t)`, `dflash_draft(t)`: feature-reading drafts for t.
- Vocabulary variants for the pairing rule (core/speculation/pairing.py): `n_pad` UNUSED
  `[PADn]` entries appended as conversion writes them (zero embedding and output rows),
  `tokenizer_model`/`tokenizer_pre`, `add_bos`/`add_eos`, `bos_id`/`eos_id`, and
  `renamed` token texts; `padded_pair(...)` writes a target padded past its draft.

This module needs the `gguf` package (a dev dependency), so nothing in the shipped app
imports it at module level.

The parts live beside this module: what a tiny model is and its token list (tinyspec.py),
its tensors per architecture (tinytensors.py), and the ready-made models for the cases
above (tinydrafts.py); this module writes them to GGUF files. `TinyModel`, `mtp_model` and
`draft_model` are used in very many places and stay importable from here (re-exported,
`__all__`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from draftwise.testing.tinydrafts import draft_model, mtp_model
from draftwise.testing.tinyspec import TinyModel, gpt2_byte_chars, vocabulary
from draftwise.testing.tinytensors import (
    ARCHITECTURES,
    llama_tensors,
    model_tensors,
    mtp_only_tensors,
    trunk_only_tensors,
)

__all__ = ["TinyModel", "broken_draft", "draft_model", "mtp_model", "write_tiny_model"]


def _zero_padding_rows(model: TinyModel, tensors: dict[str, np.ndarray]) -> None:
    """Padding ids get zero embedding and output rows, as in a converted padded model."""
    if not model.n_pad and not model.extra_tokens:
        return
    first = model.n_vocab - model.n_pad - len(model.extra_tokens)
    for name in ("token_embd.weight", "output.weight"):
        if name in tensors and tensors[name].shape[0] == model.n_vocab:
            tensors[name][first:] = 0.0
            if name == "output.weight" and model.extra_rows:
                rng = np.random.default_rng(model.seed + 7)
                rows = tensors[name][first:]
                rows[:] = (rng.standard_normal(rows.shape) * model.extra_rows).astype(np.float32)


def _store(writer: Any, name: str, data: np.ndarray, dtype: str) -> None:
    import gguf

    if data.ndim == 1 or dtype == "F32":
        writer.add_tensor(name, data)
    elif dtype == "F16":
        writer.add_tensor(name, data.astype(np.float16))
    elif dtype in ("Q8_0", "Q4_0"):
        qtype = getattr(gguf.GGMLQuantizationType, dtype)
        q = gguf.quants.quantize(data, qtype)
        writer.add_tensor(name, q, raw_dtype=qtype)
    else:
        raise ValueError(f"unsupported dtype {dtype!r}")


_FILE_TYPE = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 7}


_PARTS = {"full", "trunk", "mtp"}


def write_tiny_model(
    path: str | Path,
    model: TinyModel | None = None,
    *,
    split_max_tensors: int = 0,
    tensors: dict[str, np.ndarray] | None = None,
    part: str = "full",
    tokenizer: Any = None,
) -> list[Path]:
    """Write `model` to `path` and return the files written (several when split).

    The tensor set comes from the architecture (`ARCHITECTURES`); `tensors` replaces it,
    for files tests build by hand. `part` cuts an MTP model: "trunk" drops the nextn blocks
    (trunk-only file, metadata unchanged), "mtp" keeps only the head (MTP-only sidecar).
    `tokenizer(writer)` writes the tokenizer instead of the tiny vocabulary (a real token
    list: testing/realvocab.py).
    """
    import gguf

    if part not in _PARTS:
        raise ValueError(f"part must be one of {sorted(_PARTS)}, not {part!r}")
    model = model or TinyModel()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arch = model.arch
    if tensors is None:
        tensors = model_tensors(model)
    _zero_padding_rows(model, tensors)
    if part == "trunk":
        tensors = trunk_only_tensors(model, tensors)
    elif part == "mtp":
        tensors = mtp_only_tensors(model, tensors)
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
    arch_kv = ARCHITECTURES.get(arch, (None, None))[1]
    if arch_kv is not None:
        arch_kv(writer, model)

    if tokenizer is not None:
        tokenizer(writer)
    else:
        _write_vocabulary(writer, model)
    for key, value in model.extra_kv.items():
        _add_value(writer, key, value)

    for name, data in tensors.items():
        _store(writer, name, data, model.dtype)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    if split_max_tensors:
        return sorted(path.parent.glob(f"{path.stem}-*-of-*.gguf"))
    return [path]


def _write_vocabulary(writer: Any, model: TinyModel) -> None:
    tokens, scores, types = vocabulary(model)
    writer.add_tokenizer_model(model.tokenizer_model)
    if model.tokenizer_pre is not None:
        writer.add_tokenizer_pre(model.tokenizer_pre)
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    if model.tokenizer_model == "gpt2":
        chars = gpt2_byte_chars()
        writer.add_token_merges([f"{chars[ord('a')]} {chars[ord('b')]}"])
    if model.bos_id is not None:
        writer.add_bos_token_id(model.bos_id)
    if model.eos_id is not None:
        writer.add_eos_token_id(model.eos_id)
    writer.add_unk_token_id(0)
    if model.add_bos is not None:
        writer.add_add_bos_token(model.add_bos)
    if model.add_eos is not None:
        writer.add_add_eos_token(model.add_eos)


def broken_draft(
    path: str | Path, target: TinyModel | None = None, *, how: str = "missing", **overrides: Any
) -> Path:
    """Write a draft that looks valid (GGUF, llama metadata, the target's vocabulary) but
    that llama-server cannot load, and return its path.

    how="missing": `blk.0.ffn_down.weight` is absent (loader: missing tensor);
    how="shape": `blk.0.attn_q.weight` has the wrong shape (loader: wrong shape).
    """
    model = draft_model(target, **{"name": "tiny-broken-draft", **overrides})
    tensors = llama_tensors(model)
    if how == "missing":
        del tensors["blk.0.ffn_down.weight"]
    elif how == "shape":
        tensors["blk.0.attn_q.weight"] = tensors["blk.0.attn_q.weight"][:, : model.n_embd // 2].copy()
    else:
        raise ValueError(f"how must be 'missing' or 'shape', not {how!r}")
    return write_tiny_model(path, model, tensors=tensors)[0]


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
