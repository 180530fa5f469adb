"""More tiny architectures for the planner's tests and accuracy bench.

`tinymodels` writes llama and the speculative-decoding cases; this module adds the memory
shapes the planner must get right, each a file the pinned llama-server loads:

- `qwen3_model()`: dense attention with per-head q/k norms (`qwen2_tensors`: q/k/v biases).
- `gemma3_model()`: sliding-window attention (5 of every 6 layers windowed), tied output.
- `qwen3moe_model()`: routed experts in every layer (what `--n-cpu-moe` moves to the CPU).
- `granitehybrid_model()`: a hybrid of Mamba-2 layers (fixed recurrent state: conv + SSM)
  and attention layers (KV per token), told apart by a per-layer `head_count_kv` of 0.

Tensor shapes follow each architecture's `load_arch_tensors` in the pinned source
(`src/models/<arch>.cpp`); only what the loader requires is written. Write with
`write_arch(path, model)`, which passes the tensors to `tinymodels.write_tiny_model`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from draftwise.testing.tinymodels import TinyModel, mtp_model, write_tiny_model
from draftwise.testing.tinytensors import glm4moe_tensors, llama_tensors

Tensors = dict[str, np.ndarray]

# Big enough that compute and output buffers are more than rounding (n_embd 256, ~1000
# tokens), small enough that a bench of dozens of launches stays in seconds.
BENCH_GEOMETRY: dict[str, Any] = dict(n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_pieces=800)


def _w(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=np.float32)


def _qk_norms(t: Tensors, model: TinyModel) -> Tensors:
    for i in range(model.n_layer):
        t[f"blk.{i}.attn_q_norm.weight"] = _ones(model.head_dim)
        t[f"blk.{i}.attn_k_norm.weight"] = _ones(model.head_dim)
    return t


def qwen3_tensors(model: TinyModel) -> Tensors:
    """llama's layout plus per-head RMS norms on q and k (`llama_model_qwen3`)."""
    return _qk_norms(llama_tensors(model), model)


def qwen2_tensors(model: TinyModel) -> Tensors:
    """llama's layout plus q/k/v biases (`llama_model_qwen2`, Qwen2 and Qwen2.5)."""
    t = llama_tensors(model)
    for i in range(model.n_layer):
        t[f"blk.{i}.attn_q.bias"] = np.zeros(model.n_head * model.head_dim, dtype=np.float32)
        t[f"blk.{i}.attn_k.bias"] = np.zeros(model.n_head_kv * model.head_dim, dtype=np.float32)
        t[f"blk.{i}.attn_v.bias"] = np.zeros(model.n_head_kv * model.head_dim, dtype=np.float32)
    return t


def qwen3moe_tensors(model: TinyModel) -> Tensors:
    """qwen3 with routed experts only (`llama_model_qwen3moe`); expert width is n_ff_exp."""
    if not model.n_expert or not model.n_expert_used:
        raise ValueError("qwen3moe needs n_expert and n_expert_used > 0")
    t = llama_tensors(replace(model, n_ff=model.n_ff_exp or model.n_ff))
    return _qk_norms(t, model)


def gemma3_tensors(model: TinyModel) -> Tensors:
    """`llama_model_gemma3`: post-attention and post-FFN norms, q/k norms, and (as the
    real checkpoints) no output.weight: the loader duplicates token_embd as the head."""
    t = qwen3_tensors(replace(model, tie_embeddings=True))
    for i in range(model.n_layer):
        t[f"blk.{i}.post_attention_norm.weight"] = _ones(model.n_embd)
        t[f"blk.{i}.post_ffw_norm.weight"] = _ones(model.n_embd)
    return t


def _gemma4_block(t: Tensors, rng: np.random.Generator, model: TinyModel, i: int, *, kv: bool) -> None:
    """One Gemma 4 block (`llama_model_gemma4` / `llama_model_gemma4_assistant`): q (and,
    in the target, k/v) with per-head norms, post-attention and post-FFN norms, a layer
    output scale; an assistant block has no k/v (it reads the target's cache)."""
    e, hd, ff = model.n_embd, model.head_dim, model.n_ff
    p = f"blk.{i}."
    t[p + "attn_norm.weight"] = _ones(e)
    t[p + "attn_q.weight"] = _w(rng, model.n_head * hd, e)
    if kv:
        t[p + "attn_k.weight"] = _w(rng, model.n_head_kv * hd, e)
        t[p + "attn_v.weight"] = _w(rng, model.n_head_kv * hd, e)
        t[p + "attn_k_norm.weight"] = _ones(hd)
    t[p + "attn_output.weight"] = _w(rng, e, model.n_head * hd)
    t[p + "attn_q_norm.weight"] = _ones(hd)
    t[p + "post_attention_norm.weight"] = _ones(e)
    t[p + "layer_output_scale.weight"] = _ones(1)
    t[p + "ffn_norm.weight"] = _ones(e)
    t[p + "ffn_gate.weight"] = _w(rng, ff, e)
    t[p + "ffn_up.weight"] = _w(rng, ff, e)
    t[p + "ffn_down.weight"] = _w(rng, e, ff)
    t[p + "post_ffw_norm.weight"] = _ones(e)


def gemma4_tensors(model: TinyModel) -> Tensors:
    """`llama_model_gemma4` without per-layer embeddings or experts: tied output, and one
    `rope_freqs` for the full-attention layers (proportional RoPE: all ones here)."""
    rng = np.random.default_rng(model.seed)
    t: Tensors = {"token_embd.weight": _w(rng, model.n_vocab, model.n_embd), "output_norm.weight": _ones(model.n_embd),
                  "rope_freqs.weight": _ones(model.head_dim // 2)}
    for i in range(model.n_layer):
        _gemma4_block(t, rng, model, i, kv=True)
    return t


def gemma4_assistant_tensors(model: TinyModel) -> Tensors:
    """`llama_model_gemma4_assistant` (src/models/gemma4-assistant.cpp): every block is an
    MTP block (nextn_predict_layers = block_count, as convert_hf_to_gguf writes it), no
    k/v of its own; `nextn.pre_projection` maps [target embedding, target hidden] (2x the
    target's width, `embedding_length_out`) to its width, `nextn.post_projection` back."""
    rng = np.random.default_rng(model.seed)
    e, backbone = model.n_embd, model.target_hidden_size
    t: Tensors = {"token_embd.weight": _w(rng, model.n_vocab, e), "output_norm.weight": _ones(e),
                  "nextn.post_projection.weight": _w(rng, backbone, e),
                  "nextn.pre_projection.weight": _w(rng, e, 2 * backbone),
                  "rope_freqs.weight": _ones(model.head_dim // 2)}
    for i in range(model.n_layer):
        _gemma4_block(t, rng, model, i, kv=False)
    return t


def _kv_heads(model: TinyModel) -> list[int]:
    h = model.n_head_kv
    return list(h) if isinstance(h, list | tuple) else [h] * model.n_layer


def granitehybrid_tensors(model: TinyModel) -> Tensors:
    """`llama_model_granite_hybrid`: a layer with 0 KV heads is a Mamba-2 mixer.

    SSM geometry comes from `model.extra_kv` (the same keys the loader reads): d_inner must
    be 2 * n_embd, heads = time_step_rank, groups = group_count.
    """
    kv = model.extra_kv
    a = model.arch
    d_conv, d_inner = kv[f"{a}.ssm.conv_kernel"], kv[f"{a}.ssm.inner_size"]
    d_state, n_ssm_head = kv[f"{a}.ssm.state_size"], kv[f"{a}.ssm.time_step_rank"]
    n_group = kv[f"{a}.ssm.group_count"]
    if d_inner != 2 * model.n_embd:
        raise ValueError("granitehybrid needs ssm.inner_size == 2 * n_embd")
    rng = np.random.default_rng(model.seed)
    e, ff, hd, v = model.n_embd, model.n_ff, model.head_dim, model.n_vocab
    t: Tensors = {
        "token_embd.weight": _w(rng, v, e),
        "output_norm.weight": _ones(e),
        "output.weight": _w(rng, v, e),
    }
    conv_ch = d_inner + 2 * n_group * d_state
    for i, n_kv in enumerate(_kv_heads(model)):
        p = f"blk.{i}."
        t[p + "attn_norm.weight"] = _ones(e)
        if n_kv == 0:
            t[p + "ssm_in.weight"] = _w(rng, 2 * d_inner + 2 * n_group * d_state + n_ssm_head, e)
            t[p + "ssm_conv1d.weight"] = _w(rng, conv_ch, d_conv)
            t[p + "ssm_conv1d.bias"] = np.zeros(conv_ch, dtype=np.float32)
            t[p + "ssm_dt.bias"] = np.zeros(n_ssm_head, dtype=np.float32)
            t[p + "ssm_a"] = -np.ones((n_ssm_head, 1), dtype=np.float32)
            t[p + "ssm_d"] = np.ones((n_ssm_head, 1), dtype=np.float32)
            t[p + "ssm_norm.weight"] = np.ones((n_group, d_inner // n_group), dtype=np.float32)
            t[p + "ssm_out.weight"] = _w(rng, e, d_inner)
        else:
            t[p + "attn_q.weight"] = _w(rng, model.n_head * hd, e)
            t[p + "attn_k.weight"] = _w(rng, n_kv * hd, e)
            t[p + "attn_v.weight"] = _w(rng, n_kv * hd, e)
            t[p + "attn_output.weight"] = _w(rng, e, model.n_head * hd)
        t[p + "ffn_norm.weight"] = _ones(e)
        t[p + "ffn_gate.weight"] = _w(rng, ff, e)
        t[p + "ffn_up.weight"] = _w(rng, ff, e)
        t[p + "ffn_down.weight"] = _w(rng, e, ff)
    return t


TENSOR_SETS: dict[str, Callable[[TinyModel], Tensors]] = {
    "llama": llama_tensors,
    "glm4moe": glm4moe_tensors,
    "qwen2": qwen2_tensors,
    "qwen3": qwen3_tensors,
    "qwen3moe": qwen3moe_tensors,
    "gemma3": gemma3_tensors,
    "granitehybrid": granitehybrid_tensors,
    "gemma4": gemma4_tensors,
    "gemma4-assistant": gemma4_assistant_tensors,
}


def qwen3_model(**overrides: Any) -> TinyModel:
    base: dict[str, Any] = dict(arch="qwen3", name="tiny-qwen3", n_layer=4, **BENCH_GEOMETRY)
    base.update(overrides)
    return TinyModel(**base)


def gemma3_model(**overrides: Any) -> TinyModel:
    """6 layers, window 256: layers 0-4 windowed, layer 5 global (the loader's default
    pattern of 6 for gemma3)."""
    base: dict[str, Any] = dict(
        arch="gemma3", name="tiny-gemma3", n_layer=6, sliding_window=256, tie_embeddings=True,
        n_ctx_train=8192, **BENCH_GEOMETRY,
    )
    base.update(overrides)
    return TinyModel(**base)


def qwen3moe_model(**overrides: Any) -> TinyModel:
    base: dict[str, Any] = dict(
        arch="qwen3moe", name="tiny-qwen3moe", n_layer=4, n_expert=8, n_expert_used=2,
        n_ff_exp=128, **BENCH_GEOMETRY,
    )
    base.update(overrides)
    base.setdefault("extra_kv", {})
    base["extra_kv"] = {"qwen3moe.expert_feed_forward_length": base["n_ff_exp"], **base["extra_kv"]}
    return TinyModel(**base)


def _gemma4_kv(arch: str, pattern: list[bool], head_dim: int) -> dict[str, Any]:
    return {f"{arch}.attention.sliding_window_pattern": pattern,
            f"{arch}.attention.key_length": head_dim, f"{arch}.attention.value_length": head_dim,
            f"{arch}.attention.key_length_swa": head_dim, f"{arch}.attention.value_length_swa": head_dim,
            f"{arch}.rope.dimension_count_swa": head_dim}


def gemma4_model(**overrides: Any) -> TinyModel:
    """A Gemma 4 target: 2 blocks, a sliding-window one then a global one (the last block is
    global and the one before it windowed, as in the published models: the assistant reads
    the KV cache of those two). Heads of 32, one KV head."""
    base: dict[str, Any] = dict(arch="gemma4", name="tiny-gemma4", n_embd=64, n_layer=2, n_head=2, n_head_kv=1,
                                n_ff=128, sliding_window=128, tie_embeddings=True, n_ctx_train=8192)
    base.update(overrides)
    pattern = [i % 2 == 0 for i in range(base["n_layer"])]
    pattern[-1] = False
    hd = base["n_embd"] // base["n_head"]
    base["extra_kv"] = {**_gemma4_kv("gemma4", pattern, hd),
                        "gemma4.embedding_length_per_layer_input": 0, **base.get("extra_kv", {})}
    return TinyModel(**base)


def gemma4_assistant(target: TinyModel | None = None, n_layer: int = 2, **overrides: Any) -> TinyModel:
    """The `gemma4-assistant` MTP drafter of `target`: narrower (its own width, with the
    target's as `embedding_length_out`), heads of the target's size and KV head count (it
    attends over the target's cache: llama-model.cpp `share`), its blocks alternating
    windowed and global, the last global."""
    target = target or gemma4_model()
    hd = target.head_dim
    e = hd  # one head of the target's size
    base: dict[str, Any] = dict(arch="gemma4-assistant", name=f"{target.name}-assistant", n_embd=e, n_layer=n_layer,
                                n_head=1, n_head_kv=target.n_head_kv, n_ff=64, sliding_window=target.sliding_window,
                                tie_embeddings=True, n_ctx_train=target.n_ctx_train, nextn_predict_layers=n_layer,
                                target_hidden_size=target.n_embd, vocab=target.vocab, n_pieces=target.n_pieces,
                                seed=target.seed + 5, dtype=target.dtype)
    base.update(overrides)
    pattern = [i % 2 == 0 for i in range(n_layer)]
    pattern[-1] = False
    base["extra_kv"] = {**_gemma4_kv("gemma4-assistant", pattern, hd),
                        "gemma4-assistant.embedding_length_out": target.n_embd, **base.get("extra_kv", {})}
    return TinyModel(**base)


def granitehybrid_model(**overrides: Any) -> TinyModel:
    """6 layers: Mamba-2 in 0, 1, 3, 4 and attention in 2 and 5 (KV heads 0 = recurrent)."""
    base: dict[str, Any] = dict(arch="granitehybrid", name="tiny-granitehybrid", n_layer=6,
                                **BENCH_GEOMETRY)
    base.update(overrides)
    n_layer, n_embd = base["n_layer"], base["n_embd"]
    heads = base.get("n_head_kv", 2)
    if isinstance(heads, int):
        base["n_head_kv"] = tuple(heads if i % 3 == 2 else 0 for i in range(n_layer))
    a = base["arch"]
    ssm = {
        f"{a}.ssm.conv_kernel": 4, f"{a}.ssm.inner_size": 2 * n_embd,
        f"{a}.ssm.state_size": 64, f"{a}.ssm.time_step_rank": 8, f"{a}.ssm.group_count": 1,
    }
    base["extra_kv"] = {**ssm, **base.get("extra_kv", {})}
    return TinyModel(**base)


def mtp_bench_model(**overrides: Any) -> TinyModel:
    """`tinymodels.mtp_model` (glm4moe + one nextn block) at the bench's geometry."""
    base: dict[str, Any] = dict(BENCH_GEOMETRY, n_ff_exp=128, name="tiny-glm4moe-mtp-bench")
    base.update(overrides)
    return mtp_model(**base)


def write_arch(path: str | Path, model: TinyModel, **kwargs: Any) -> list[Path]:
    """Write `model` with its architecture's tensor set (`TENSOR_SETS`)."""
    try:
        make = TENSOR_SETS[model.arch]
    except KeyError:
        raise ValueError(f"no tensor set for {model.arch!r} (known: {', '.join(TENSOR_SETS)})") from None
    return write_tiny_model(path, model, tensors=make(model), **kwargs)
