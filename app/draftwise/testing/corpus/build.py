"""A corpus model's sparse GGUF file, generated into the cache once per spec.

For a spec with a quantization (`Q4_K_M`, `MXFP4_MOE`):

1. the converter's output is written sparse: the spec's keys, `general.file_type` of the
   output type and `general.quantization_version`, the tokenizer keys, and every tensor in
   the type `convert_hf_to_gguf.py` gives it (`converter_type`);
2. the real `llama-quantize --dry-run` says what type each tensor gets (`quantize.py`);
3. the quantized file is written sparse as llama-quantize writes it: the same keys with
   `general.quantization_version` and `general.file_type` set last (`gguf_set_kv`, then
   `gguf_set_val_u32`, which moves a key to the end), the tensors in its order (the loader's
   `weights_map`: by block number, tensors outside blocks first, then by name) with the
   dry run's types, each aligned to 32 bytes.

The file lives at `cache_dir()/corpus/<name>-<quant>-<hash>.gguf`, the hash over the spec,
the vocabulary's source and the dry run's tool: a changed spec gets a new file (and the old
one is removed).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from draftwise.core.gguf.ggml_types import LLAMA_FTYPES
from draftwise.core.gguf.writer import Typed
from draftwise.testing.corpus import quantize, sparse, vocab
from draftwise.testing.corpus.spec import BF16, F16, F32, ModelSpec, Tensor

QUANTIZATION_VERSION = 2  # GGML_QNT_VERSION
_FTYPE_IDS = {name: i for i, name in LLAMA_FTYPES.items()}
_OUTTYPE_FTYPE = {F32: 0, F16: 1, BF16: 32}

# conversion/base.py prepare_tensors: tensor kinds the converter always writes in F32.
_F32_KINDS = ("ffn_gate_inp", "ffn_gate_inp_shexp", "position_embd", "token_types", "ssm_conv1d",
              "shortconv.conv", "time_mix_first", "time_mix_w1", "time_mix_w2", "time_mix_decay_w1",
              "time_mix_decay_w2", "time_mix_lerp_fused", "posnet_norm1", "posnet_norm2",
              "altup_correct_coef", "altup_predict_coef", "ssm_conv1d_q", "ssm_conv1d_k", "ssm_conv1d_v",
              "indexer.proj")  # fmt: skip
_BLK = re.compile(r"^blk\.(\d+)\.(.+)\.weight$")


def corpus_dir() -> Path:
    from draftwise.testing import realmodels

    return realmodels.cache_dir() / "corpus"


def converter_type(t: Tensor, outtype: str) -> str:
    """The type convert_hf_to_gguf.py writes a tensor in (prepare_tensors)."""
    if t.dtype is not None:
        return t.dtype
    if len(t.ne) <= 1 or t.name.endswith("_norm.weight"):
        return F32
    m = _BLK.match(t.name)
    kind = m.group(2) if m else t.name.removesuffix(".weight")
    if kind in _F32_KINDS or t.name[-7:] not in (".weight", ".lora_a", ".lora_b"):
        return F32
    return outtype


def weights_map_order(names: list[str]) -> list[str]:
    """llama_model_loader::weight_name_comparer: block number (-1 outside blocks), then name."""
    def key(n: str) -> tuple[int, bytes]:
        m = re.match(r"blk\.(\d+)\.", n)
        return (int(m.group(1)) if m else -1, n.encode())

    return sorted(names, key=key)


def converted_kv(spec: ModelSpec, pinned: Path) -> list[tuple[str, Any]]:
    kv: list[tuple[str, Any]] = list(spec.kv)
    kv.append(("general.file_type", Typed(_OUTTYPE_FTYPE[spec.outtype], "u32")))
    kv.append(("general.quantization_version", Typed(QUANTIZATION_VERSION, "u32")))
    kv += vocab.tokenizer_kv(spec.vocab, pinned)
    return kv


def quantized_kv(kv: list[tuple[str, Any]], quant: str) -> list[tuple[str, Any]]:
    """What llama-quantize copies and adds (gguf_set_kv, then two gguf_set_val_u32)."""
    if quant not in _FTYPE_IDS:
        raise ValueError(f"unknown llama file type {quant!r}")
    drop = ("general.quantization_version", "general.file_type")
    out = [(k, v) for k, v in kv if k not in drop]
    out.append(("general.quantization_version", Typed(QUANTIZATION_VERSION, "u32")))
    out.append(("general.file_type", Typed(_FTYPE_IDS[quant], "u32")))
    return out


def path_for(spec: ModelSpec, pinned: Path, folder: Path | None = None) -> Path:
    """Where the file of `spec` lives: its name, quantization and a hash of the spec and of
    the vocabulary's source."""
    digest = spec.digest() + json.dumps(vocab.identity(spec.vocab, pinned), sort_keys=True)
    tag = hashlib.sha256(digest.encode()).hexdigest()[:12]
    return (folder or corpus_dir()) / f"{spec.file_stem}-{tag}.gguf"


def generate(spec: ModelSpec, *, pinned: Path | None = None, work: Path | None = None,
             folder: Path | None = None) -> Path:  # fmt: skip
    """The sparse file for `spec` (generated when missing); its tensor types, when
    quantized, as the pinned llama-quantize's dry run gives them."""
    pinned = pinned or quantize.pinned_source(work)
    folder = folder or corpus_dir()
    target = path_for(spec, pinned, folder)
    if target.exists():
        return target
    kv = converted_kv(spec, pinned)
    in_types = [(t.name, t.ne, converter_type(t, spec.outtype)) for t in spec.tensors]
    if spec.quant is None:
        sparse.write_sparse(target, kv, in_types)
    else:
        binary = quantize.quantize_binary(work)
        with tempfile.TemporaryDirectory(prefix="draftwise-corpus-") as tmp:
            src = sparse.write_sparse(Path(tmp) / f"{spec.name}-{spec.outtype}.gguf", kv, in_types)
            types = quantize.dry_run(binary, src, spec.quant)
        missing = [n for n, _, _ in in_types if n not in types]
        if missing:
            raise quantize.QuantizeError(f"{spec.name}: the dry run named no type for {missing[:5]}")
        shapes = {n: ne for n, ne, _ in in_types}
        out = [(n, shapes[n], types[n]) for n in weights_map_order(list(shapes))]
        sparse.write_sparse(target, quantized_kv(kv, spec.quant), out)
    for old in folder.glob(f"{spec.file_stem}-*.gguf"):
        if old != target and re.fullmatch(re.escape(spec.file_stem) + r"-[0-9a-f]{12}\.gguf", old.name):
            old.unlink(missing_ok=True)
    return target


def clear(folder: Path | None = None) -> None:
    shutil.rmtree(folder or corpus_dir(), ignore_errors=True)
