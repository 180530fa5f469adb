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
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

# SentencePiece token types as llama.cpp reads them (llama_token_attr in llama-vocab.cpp).
_NORMAL, _UNKNOWN, CONTROL, UNUSED, _BYTE = 1, 2, 3, 5, 6
_CONTROL = CONTROL


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
    dtype: str = "F32"  # F32, F16, Q8_0 or Q4_0 for the 2-D weights
    sliding_window: int | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    # MTP head: the last `nextn_predict_layers` of the `n_layer` blocks (GGUF block_count
    # counts them) hold the `blk.N.nextn.*` tensors.
    nextn_predict_layers: int = 0
    # MoE geometry of glm4moe-style models (ignored by llama).
    n_expert_shared: int = 0
    n_ff_exp: int = 0  # expert feed-forward length; 0 means n_ff
    n_layer_dense_lead: int = 0
    # Feature-reading drafts (eagle3, dflash): target layers whose hidden states they read,
    # and the target's hidden size (0 means n_embd).
    target_layers: tuple[int, ...] = ()
    target_hidden_size: int = 0
    seed: int = 0
    tie_embeddings: bool = False
    # Speed fixtures (`paying_target`): every block's output projections (attn_output,
    # ffn_down) are zero, so each block adds exactly nothing to the residual stream and the
    # next token depends on the current one alone, whatever the depth; the special tokens'
    # output rows are zero too, so generation never ends on them.
    zero_output: bool = False
    # Shift the output head's word rows by this many places (specials untouched): a draft
    # whose every guess is the target's guess moved along, so none is ever accepted.
    shift_head: int = 0
    extra_kv: dict[str, Any] = field(default_factory=dict)
    # Vocabulary variants. `n_pad` entries `[PAD<id>]` of type `pad_type` (UNUSED, as
    # conversion pads a vocabulary to a round size) follow the pieces, with zero embedding
    # and output rows, so greedy decoding never picks them.
    n_pad: int = 0
    pad_type: int = UNUSED
    # "llama" (SPM, byte tokens <0xXX>) or "gpt2" (BPE, GPT-2's byte-level characters).
    tokenizer_model: str = "llama"
    tokenizer_pre: str | None = "default"
    add_bos: bool | None = True  # None: the key is not written (the engine's default)
    add_eos: bool | None = None
    bos_id: int | None = 1
    eos_id: int | None = 2
    # (id, text) pairs: these tokens get another text (and the NORMAL type).
    renamed: tuple[tuple[int, str], ...] = ()
    # (text, type) tokens appended after the pieces and before the padding, with zero
    # embedding and output rows like the padding: a model's own specials (Gemma 3 4B's
    # `<image_soft_token>` CONTROL before its `[PADn]`, Phi-3's `<|end|>`).
    extra_tokens: tuple[tuple[str, int], ...] = ()
    # Output rows of those tokens and the padding: 0 writes zero rows (never sampled); a
    # scale writes random rows that strong, so the model writes them at temperature 1.0.
    extra_rows: float = 0.0

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_trunk(self) -> int:
        """Blocks of the main model, without the MTP (nextn) blocks."""
        return self.n_layer - self.nextn_predict_layers

    @property
    def n_vocab(self) -> int:
        return 3 + 256 + self.n_pieces + len(self.extra_tokens) + self.n_pad


def _gpt2_byte_chars() -> list[str]:
    """GPT-2's bytes_to_unicode: the character a byte-level BPE vocabulary stores per byte."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1), *range(ord("\xae"), 256)]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def vocabulary(model: TinyModel) -> tuple[list[str], list[float], list[int]]:
    """An SPM vocabulary with byte fallback (so any text tokenizes), or a byte-level BPE one."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL]
    if model.tokenizer_model == "gpt2":
        tokens += _gpt2_byte_chars()
        types += [_NORMAL] * 256
    else:
        tokens += [f"<0x{b:02X}>" for b in range(256)]
        types += [_BYTE] * 256
    # Pieces differ by vocabulary name (a permuted alphabet seeded by the name), so two
    # vocabularies really have other token lists; index i spelled in base 26 keeps them
    # unique for any size.
    letters = list("abcdefghijklmnopqrstuvwxyz")
    random.Random(hashlib.sha256(model.vocab.encode()).hexdigest()).shuffle(letters)
    pieces: list[str] = []
    for i in range(model.n_pieces):
        word, n = "", i + 26  # from 2 letters up
        while n:
            n, r = divmod(n, 26)
            word = letters[r] + word
        pieces.append("\u2581" + word)
    tokens += pieces
    types += [_NORMAL] * len(pieces)
    scores = [0.0] * 259 + [-float(k) for k in range(len(pieces))]
    for text, kind in model.extra_tokens:
        tokens.append(text)
        types.append(kind)
        scores.append(-1e4)
    if model.n_pad:
        first = len(tokens)
        tokens += [f"[PAD{i}]" for i in range(first, first + model.n_pad)]
        types += [model.pad_type] * model.n_pad
        scores += [-1e4] * model.n_pad
    for token_id, text in model.renamed:
        tokens[token_id] = text
        types[token_id] = _NORMAL
    return tokens, scores, types


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


def _tensor(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


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


def _attention(t: dict[str, np.ndarray], rng: np.random.Generator, model: TinyModel, p: str) -> None:
    """The attention tensors of one block (norm, q, k, v, output), in the loader's order."""
    e, hd = model.n_embd, model.head_dim
    t[p + "attn_norm.weight"] = np.ones(e, dtype=np.float32)
    t[p + "attn_q.weight"] = _tensor(rng, model.n_head * hd, e)
    t[p + "attn_k.weight"] = _tensor(rng, model.n_head_kv * hd, e)
    t[p + "attn_v.weight"] = _tensor(rng, model.n_head_kv * hd, e)
    t[p + "attn_output.weight"] = _tensor(rng, e, model.n_head * hd)


def llama_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """Tensors of a llama-architecture model, numpy shapes (row-major, ne1 first)."""
    rng = np.random.default_rng(model.seed)
    e, ff = model.n_embd, model.n_ff
    t: dict[str, np.ndarray] = {
        "token_embd.weight": _tensor(rng, model.n_vocab, e),
        "output_norm.weight": np.ones(e, dtype=np.float32),
    }
    if not model.tie_embeddings:
        t["output.weight"] = _tensor(rng, model.n_vocab, e)
    for i in range(model.n_layer):
        p = f"blk.{i}."
        _attention(t, rng, model, p)
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
        if model.zero_output:
            t[p + "attn_output.weight"][:] = 0.0
            for name in ("ffn_down.weight", "ffn_down_exps.weight"):
                if p + name in t:
                    t[p + name][:] = 0.0
    head = "output.weight" if "output.weight" in t else None
    if head is not None and model.zero_output:
        t[head][:_N_SPECIAL] = 0.0
    if head is not None and model.shift_head:
        t[head][_N_SPECIAL:] = np.roll(t[head][_N_SPECIAL:], model.shift_head, axis=0)
    return t


_N_SPECIAL = 3  # <unk>, <s>, </s>


def glm4moe_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """Tensors of a glm4moe model (GLM-4.5 layout), MTP blocks included.

    Mirrors `llama_model_glm4_moe::load_arch_tensors` in the pinned llama.cpp: the first
    `n_layer_dense_lead` blocks have a dense FFN, the others routed experts with a
    sigmoid-gate bias (`exp_probs_b`) and shared experts; every block has a post-attention
    norm; the last `nextn_predict_layers` blocks add `nextn.eh_proj/enorm/hnorm` (plus the
    optional `shared_head_head/norm`). The MTP graph runs on such a block.
    """
    if not model.n_expert or not model.n_expert_used or not model.n_expert_shared:
        raise ValueError("glm4moe needs n_expert, n_expert_used and n_expert_shared > 0")
    rng = np.random.default_rng(model.seed)
    e, ff, v = model.n_embd, model.n_ff, model.n_vocab
    ff_exp = model.n_ff_exp or ff
    ff_sh = ff_exp * model.n_expert_shared
    n = model.n_expert
    t: dict[str, np.ndarray] = {
        "token_embd.weight": _tensor(rng, v, e),
        "output_norm.weight": np.ones(e, dtype=np.float32),
    }
    if not model.tie_embeddings:
        t["output.weight"] = _tensor(rng, v, e)
    for i in range(model.n_layer):
        p = f"blk.{i}."
        _attention(t, rng, model, p)
        t[p + "post_attention_norm.weight"] = np.ones(e, dtype=np.float32)
        if i < model.n_layer_dense_lead:
            t[p + "ffn_gate.weight"] = _tensor(rng, ff, e)
            t[p + "ffn_up.weight"] = _tensor(rng, ff, e)
            t[p + "ffn_down.weight"] = _tensor(rng, e, ff)
        else:
            t[p + "ffn_gate_inp.weight"] = _tensor(rng, n, e)
            t[p + "exp_probs_b.bias"] = np.zeros(n, dtype=np.float32)
            t[p + "ffn_gate_exps.weight"] = _tensor(rng, n, ff_exp, e)
            t[p + "ffn_up_exps.weight"] = _tensor(rng, n, ff_exp, e)
            t[p + "ffn_down_exps.weight"] = _tensor(rng, n, e, ff_exp)
            t[p + "ffn_gate_shexp.weight"] = _tensor(rng, ff_sh, e)
            t[p + "ffn_up_shexp.weight"] = _tensor(rng, ff_sh, e)
            t[p + "ffn_down_shexp.weight"] = _tensor(rng, e, ff_sh)
        if i >= model.n_trunk:
            t[p + "nextn.eh_proj.weight"] = _tensor(rng, e, 2 * e)
            t[p + "nextn.enorm.weight"] = np.ones(e, dtype=np.float32)
            t[p + "nextn.hnorm.weight"] = np.ones(e, dtype=np.float32)
            t[p + "nextn.shared_head_head.weight"] = _tensor(rng, v, e)
            t[p + "nextn.shared_head_norm.weight"] = np.ones(e, dtype=np.float32)
    return t


def _glm4moe_kv(writer: Any, model: TinyModel) -> None:
    arch = model.arch
    writer.add_uint32(f"{arch}.expert_feed_forward_length", model.n_ff_exp or model.n_ff)
    writer.add_uint32(f"{arch}.expert_shared_count", model.n_expert_shared)
    writer.add_uint32(f"{arch}.leading_dense_block_count", model.n_layer_dense_lead)
    writer.add_float32(f"{arch}.expert_weights_scale", 1.0)
    writer.add_bool(f"{arch}.expert_weights_norm", True)
    writer.add_uint32(f"{arch}.expert_gating_func", 2)  # sigmoid, as GLM-4.5


def _feature_draft_layer(t: dict[str, np.ndarray], rng: np.random.Generator, model: TinyModel,
                         i: int, attn_in: int) -> None:
    e, ff, hd = model.n_embd, model.n_ff, model.head_dim
    p = f"blk.{i}."
    t[p + "attn_norm.weight"] = np.ones(e, dtype=np.float32)
    t[p + "attn_q.weight"] = _tensor(rng, model.n_head * hd, attn_in)
    t[p + "attn_k.weight"] = _tensor(rng, model.n_head_kv * hd, attn_in)
    t[p + "attn_v.weight"] = _tensor(rng, model.n_head_kv * hd, attn_in)
    t[p + "attn_output.weight"] = _tensor(rng, e, model.n_head * hd)
    t[p + "ffn_norm.weight"] = np.ones(e, dtype=np.float32)
    t[p + "ffn_gate.weight"] = _tensor(rng, ff, e)
    t[p + "ffn_up.weight"] = _tensor(rng, ff, e)
    t[p + "ffn_down.weight"] = _tensor(rng, e, ff)


def eagle3_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """An EAGLE3 draft (`llama_model_eagle3::load_arch_tensors`): one decoder block whose
    attention reads [embeddings, fused target features] (2*n_embd wide), `fc` fusing the
    3 target layers, `blk.0.attn_norm_2` (hidden norm). No token_embd: it borrows the
    target's; its own `output` head over the full vocabulary (no d2t)."""
    rng = np.random.default_rng(model.seed)
    e = model.n_embd
    n_inp = len(model.target_layers) * (model.target_hidden_size or e)
    t: dict[str, np.ndarray] = {
        "fc.weight": _tensor(rng, e, n_inp),
        "output_norm.weight": np.ones(e, dtype=np.float32),
        "output.weight": _tensor(rng, model.n_vocab, e),
    }
    for i in range(model.n_layer):
        _feature_draft_layer(t, rng, model, i, 2 * e)
        t[f"blk.{i}.attn_norm_2.weight"] = np.ones(e, dtype=np.float32)
    return t


def _eagle3_kv(writer: Any, model: TinyModel) -> None:
    writer.add_array(f"{model.arch}.target_layers", list(model.target_layers))
    writer.add_uint32(f"{model.arch}.target_hidden_size", model.target_hidden_size or model.n_embd)


def dflash_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """A DFlash block-diffusion draft (`llama_model_dflash::load_arch_tensors`, plain
    variant: no selector, no DSpark Markov head): `fc` over the target layers' features,
    `enc.output_norm`, q/k norms per block; token_embd and output are borrowed from the
    target (full vocabulary)."""
    rng = np.random.default_rng(model.seed)
    e = model.n_embd
    t: dict[str, np.ndarray] = {
        "fc.weight": _tensor(rng, e, len(model.target_layers) * e),
        "enc.output_norm.weight": np.ones(e, dtype=np.float32),
        "output_norm.weight": np.ones(e, dtype=np.float32),
    }
    for i in range(model.n_layer):
        _feature_draft_layer(t, rng, model, i, e)
        t[f"blk.{i}.attn_q_norm.weight"] = np.ones(model.head_dim, dtype=np.float32)
        t[f"blk.{i}.attn_k_norm.weight"] = np.ones(model.head_dim, dtype=np.float32)
    return t


def _dflash_kv(writer: Any, model: TinyModel) -> None:
    writer.add_array(f"{model.arch}.target_layers", list(model.target_layers))
    writer.add_uint32(f"{model.arch}.block_size", 4)
    # The noise token of the draft block; without it the engine aborts at the first draft
    # (`get_sub_batch: failed to add embedding`). <unk> keeps the target's token list.
    writer.add_mask_token_id(0)


# arch -> (tensor set, extra metadata writer or None)
ARCHITECTURES: dict[str, tuple[Any, Any]] = {
    "llama": (llama_tensors, None),
    "glm4moe": (glm4moe_tensors, _glm4moe_kv),
    "eagle3": (eagle3_tensors, _eagle3_kv),
    "dflash": (dflash_tensors, _dflash_kv),
}


def model_tensors(model: TinyModel) -> dict[str, np.ndarray]:
    """The full tensor set of `model`'s architecture (MTP blocks included)."""
    try:
        return ARCHITECTURES[model.arch][0](model)
    except KeyError:
        raise ValueError(
            f"no tensor set for architecture {model.arch!r}; pass tensors= "
            f"(known: {', '.join(ARCHITECTURES)})"
        ) from None


def _block(name: str) -> int | None:
    if not name.startswith("blk."):
        return None
    return int(name.split(".", 2)[1])


def trunk_only_tensors(model: TinyModel, tensors: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """`tensors` without the MTP blocks: what a file whose head was stripped holds."""
    tensors = tensors if tensors is not None else model_tensors(model)
    return {k: a for k, a in tensors.items() if (b := _block(k)) is None or b < model.n_trunk}


def mtp_only_tensors(model: TinyModel, tensors: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Only the MTP head: the nextn blocks plus the embeddings and output the loader requires.

    This is the MTP-only sidecar the glm4moe loader recognises (no `blk.0.attn_norm.weight`).
    """
    tensors = tensors if tensors is not None else model_tensors(model)
    keep = {"token_embd.weight", "output_norm.weight", "output.weight"}
    return {
        k: a for k, a in tensors.items()
        if k in keep or ((b := _block(k)) is not None and b >= model.n_trunk)
    }


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
        chars = _gpt2_byte_chars()
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


# ---------------------------------------------------------------------------------------
# Ready-made models for the speculative-decoding cases


def mtp_model(**overrides: Any) -> TinyModel:
    """A glm4moe model with an embedded MTP head whose MTP graph runs in the pinned engine.

    3 blocks: block 0 dense, block 1 MoE, block 2 the nextn (MTP) block. Loads with and
    without `--spec-type draft-mtp`.
    """
    base: dict[str, Any] = dict(
        arch="glm4moe", name="tiny-glm4moe-mtp", n_layer=3, nextn_predict_layers=1,
        n_layer_dense_lead=1, n_expert=4, n_expert_used=2, n_expert_shared=1, n_ff_exp=32,
    )
    base.update(overrides)
    return TinyModel(**base)


def draft_model(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A smaller llama with the target's vocabulary: a companion draft for draft-simple.

    Pass `vocab="other"` for a draft the engine will find incompatible.
    """
    target = target or TinyModel()
    base: dict[str, Any] = dict(
        arch="llama", name=f"{target.name}-draft", n_embd=32, n_layer=1, n_head=2,
        n_head_kv=1, n_ff=64, vocab=target.vocab, n_pieces=target.n_pieces,
        dtype=target.dtype, seed=target.seed + 1,
    )
    base.update(overrides)
    return TinyModel(**base)


def padded_pair(draft_vocab: int = 800, target_vocab: int = 900, **target_overrides: Any) -> tuple[TinyModel, TinyModel]:
    """A target whose vocabulary is the draft's padded with UNUSED `[PADn]` entries to
    `target_vocab` tokens (as Qwen2.5 7B+ pads 151,936 to 152,064), and its draft."""
    pieces = draft_vocab - 3 - 256
    target = TinyModel(name="tiny-padded", n_pieces=pieces, n_pad=target_vocab - draft_vocab, **target_overrides)
    return target, draft_model(target, n_pad=0)


def twin_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A draft with the target's very weights: every drafted token is accepted
    (`draft acceptance = 1.00000`), for tests that need speculation to pay off."""
    target = target or TinyModel()
    return replace(target, **{"name": f"{target.name}-twin", **overrides})


def paying_target(**overrides: Any) -> TinyModel:
    """A target on which a draft model must pay off on a CPU (bench/speculation.py).

    Wide and deep enough that each token costs real work (12 blocks of 512, F16, ~75 MB),
    with `zero_output`: the blocks are computed but add nothing, so the next token is a
    function of the current one. `exact_draft()` computes that function with one block.
    """
    base: dict[str, Any] = dict(
        name="tiny-paying-target", n_embd=512, n_layer=12, n_head=8, n_head_kv=4, n_ff=1536,
        dtype="F16", zero_output=True, seed=11,
    )
    base.update(overrides)
    return TinyModel(**base)


def exact_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """One block of `target` with the same embeddings and head (same seed and shapes draw the
    same numbers): it predicts the zero-output target exactly at a fraction of the cost, so
    every drafted token is accepted."""
    target = target or paying_target()
    return replace(target, **{"name": f"{target.name}-draft", "n_layer": 1, **overrides})


def never_accepted_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A draft of `target` that costs a good part of it (5 of 12 blocks: still under half
    its size, so auto picks it as a companion) and whose every guess is wrong: its head is
    the target's shifted by one word, so drafting can never pay."""
    target = target or paying_target()
    layers = max(1, (target.n_layer * 5) // 12)
    return replace(target, **{"name": f"{target.name}-slow-draft", "n_layer": layers, "shift_head": 1,
                              **overrides})


def eagle3_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """An EAGLE3 draft for `target` (reads 3 of its layers' hidden states)."""
    target = target or TinyModel()
    last = target.n_layer - 1
    base: dict[str, Any] = dict(
        arch="eagle3", name=f"{target.name}-eagle3", n_embd=target.n_embd, n_layer=1,
        n_head=target.n_head, n_head_kv=target.n_head_kv, n_ff=target.n_ff,
        vocab=target.vocab, n_pieces=target.n_pieces, seed=target.seed + 2,
        target_layers=(0, last // 2, last), target_hidden_size=target.n_embd,
    )
    base.update(overrides)
    return TinyModel(**base)


def dflash_draft(target: TinyModel | None = None, **overrides: Any) -> TinyModel:
    """A DFlash draft for `target` (reads its hidden states; same hidden size)."""
    target = target or TinyModel()
    base: dict[str, Any] = dict(
        arch="dflash", name=f"{target.name}-dflash", n_embd=target.n_embd, n_layer=1,
        n_head=target.n_head, n_head_kv=target.n_head_kv, n_ff=target.n_ff,
        vocab=target.vocab, n_pieces=target.n_pieces, seed=target.seed + 3,
        target_layers=tuple(sorted({0, target.n_layer - 1})),
    )
    base.update(overrides)
    return TinyModel(**base)


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
