"""Tensor-table pieces most decoder architectures share, with the shapes `src/models/*.cpp`
`load_arch_tensors` creates them in (ggml order: the input width first).

The names are gguf-py's (`gguf-py/gguf/constants.py` TENSOR_NAMES): what the converter
writes and the loader looks up.
"""

from __future__ import annotations

from draftwise.testing.corpus.spec import Table


def embeddings(t: Table, n_embd: int, n_vocab: int) -> None:
    t.add("token_embd.weight", n_embd, n_vocab)


def head(t: Table, n_embd: int, n_vocab: int, *, tied: bool, norm_bias: bool = False) -> None:
    """The final norm and the output matrix (none when the checkpoint ties it to token_embd:
    the converter writes no `output.weight`, the loader duplicates the embedding)."""
    t.add("output_norm.weight", n_embd)
    if norm_bias:
        t.add("output_norm.bias", n_embd)
    if not tied:
        t.add("output.weight", n_embd, n_vocab)


def attention(t: Table, i: int, n_embd: int, n_head: int, n_head_kv: int, head_dim: int, *,
              head_dim_v: int | None = None, qkv_bias: bool = False, o_bias: bool = False,
              qk_norm: bool = False, norm: str = "attn_norm", post_norm: str | None = None,
              q_gate: bool = False) -> None:  # fmt: skip
    """Pre-norm, Q/K/V/O (GQA), optional biases, per-head Q/K norms, a post-attention norm.
    `q_gate`: Q carries a gate of the same width (Qwen3-Next/3.5 gated attention)."""
    dv = head_dim_v or head_dim
    t.blk(i, f"{norm}.weight", n_embd)
    t.blk(i, "attn_q.weight", n_embd, head_dim * n_head * (2 if q_gate else 1))
    t.blk(i, "attn_k.weight", n_embd, head_dim * n_head_kv)
    t.blk(i, "attn_v.weight", n_embd, dv * n_head_kv)
    if qkv_bias:
        t.blk(i, "attn_q.bias", head_dim * n_head * (2 if q_gate else 1))
        t.blk(i, "attn_k.bias", head_dim * n_head_kv)
        t.blk(i, "attn_v.bias", dv * n_head_kv)
    if qk_norm:
        t.blk(i, "attn_q_norm.weight", head_dim)
        t.blk(i, "attn_k_norm.weight", head_dim)
    t.blk(i, "attn_output.weight", dv * n_head, n_embd)
    if o_bias:
        t.blk(i, "attn_output.bias", n_embd)
    if post_norm:
        t.blk(i, f"{post_norm}.weight", n_embd)


def ffn(t: Table, i: int, n_embd: int, n_ff: int, *, norm: str | None = "ffn_norm",
        post_norm: str | None = None, bias: bool = False, gate: bool = True) -> None:  # fmt: skip
    """A (gated) feed-forward block."""
    if norm:
        t.blk(i, f"{norm}.weight", n_embd)
    if gate:
        t.blk(i, "ffn_gate.weight", n_embd, n_ff)
    t.blk(i, "ffn_up.weight", n_embd, n_ff)
    t.blk(i, "ffn_down.weight", n_ff, n_embd)
    if bias:
        if gate:
            t.blk(i, "ffn_gate.bias", n_ff)
        t.blk(i, "ffn_up.bias", n_ff)
        t.blk(i, "ffn_down.bias", n_embd)
    if post_norm:
        t.blk(i, f"{post_norm}.weight", n_embd)


def moe(t: Table, i: int, n_embd: int, n_ff_exp: int, n_expert: int, *, norm: str | None = "ffn_norm",
        n_ff_shexp: int = 0, shexp_gate: bool = False, probs_bias: bool = False) -> None:  # fmt: skip
    """Routed experts stacked per block (`*_exps`, n_expert last), the router, and an
    optional shared expert (`*_shexp`, with its own sigmoid gate for Qwen2-MoE/Qwen3-Next)."""
    if norm:
        t.blk(i, f"{norm}.weight", n_embd)
    t.blk(i, "ffn_gate_inp.weight", n_embd, n_expert)
    if probs_bias:
        t.blk(i, "exp_probs_b.bias", n_expert)
    t.blk(i, "ffn_gate_exps.weight", n_embd, n_ff_exp, n_expert)
    t.blk(i, "ffn_up_exps.weight", n_embd, n_ff_exp, n_expert)
    t.blk(i, "ffn_down_exps.weight", n_ff_exp, n_embd, n_expert)
    if n_ff_shexp:
        if shexp_gate:
            t.blk(i, "ffn_gate_inp_shexp.weight", n_embd)
        t.blk(i, "ffn_gate_shexp.weight", n_embd, n_ff_shexp)
        t.blk(i, "ffn_up_shexp.weight", n_embd, n_ff_shexp)
        t.blk(i, "ffn_down_shexp.weight", n_ff_shexp, n_embd)
