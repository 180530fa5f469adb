"""The tensors of a tiny model, per architecture, as the pinned llama.cpp loads them.

Each tensor set mirrors its architecture's `load_arch_tensors` in the pinned source: llama
(dense or MoE), glm4moe with MTP (nextn) blocks, and the feature-reading drafts EAGLE-3 and
DFlash, with the extra metadata each needs (`ARCHITECTURES`: arch -> tensor set and metadata
writer). Random weights with a fixed seed, so the same `TinyModel` gives the same numbers;
`trunk_only_tensors` and `mtp_only_tensors` cut an MTP model into the trunk and its MTP-only
sidecar. The writer (tinymodels.py) stores them; tinyarchs.py adds the memory planner's
architectures on top of these.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from draftwise.testing.tinyspec import TinyModel


def _tensor(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


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
