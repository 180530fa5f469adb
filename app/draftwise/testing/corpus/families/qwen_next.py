"""Qwen3-Next (`qwen3next`) and Qwen3.5 / Qwen3.6 (`qwen35` dense, `qwen35moe`): Gated
DeltaNet layers with a full-attention layer every fourth, and an MTP block.

Converter: `conversion/qwen.py` Qwen3NextModel / Qwen3_5TextModel / Qwen3_5MoeTextModel.
`_QwenMtpMixin` appends the checkpoint's `mtp.*` block as block num_hidden_layers
(`mtp.fc` -> `nextn.eh_proj`, `pre_fc_norm_embedding/hidden` -> `enorm/hnorm`, `mtp.norm`
-> `nextn.shared_head_norm`; the embedding and head are shared) and writes
`nextn_predict_layers`; Qwen3NextModel writes the `ssm.*` keys (state size = linear key
head dim, group count = linear key heads, time-step rank = linear value heads, inner size
= value heads x value head dim), `attention.recurrent_layers` from layer_types (the MTP block
not recurrent), `full_attention_interval` and rope.dimension_count = head_dim x
partial_rotary_factor. Qwen3-Next fuses `in_proj_qkvz` into `attn_qkv` + `attn_gate` and
`in_proj_ba` into `ssm_ba`; Qwen3.5 keeps `in_proj_qkv`, `in_proj_z`, `in_proj_b`,
`in_proj_a` apart (`attn_qkv`, `attn_gate`, `ssm_beta`, `ssm_alpha`) and always writes
`rope.dimension_sections` (MRoPE [11, 11, 10, 0]). Full-attention layers carry a gate in Q
(`attn_q` twice the width). Tensors: `src/models/qwen3next.cpp`, `qwen35.cpp`,
`qwen35moe.cpp`.

Tokenizers: Qwen3-Next uses Qwen3's (models/ggml-vocab-qwen2.gguf with Qwen3's specials,
151,936 ids). Qwen3.5/3.6 have a new 248,320-id list that is not at hand (the pinned
models/ggml-vocab-qwen35.gguf is a 151,936-id list): synthesized from that file's pieces
(pre `qwen35`) extended with made-up pieces to 248,044 normal ids, Qwen3's special tokens
in Qwen3's order from 248044 (`<|endoftext|>` 248044, `<|im_end|>` 248046,
`<|image_pad|>` 248056, `<|video_pad|>` 248057 as the published configs number them), then
`[PADn]`.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus.families.qwen import QWEN3_SPECIALS, QWEN3_VOCAB
from draftwise.testing.corpus.spec import (
    ModelSpec,
    Table,
    Vocab,
    bools,
    f32,
    general,
    i32s,
    kv_list,
    u32,
)

_SHIFT = 248044 - 151643
QWEN35_VOCAB = Vocab(
    "synth:qwen35", 248320, synth={"n_normal": 248044},
    specials=tuple((i + _SHIFT, t, ty) for i, t, ty in QWEN3_SPECIALS),
    overrides=(("tokenizer.ggml.eos_token_id", u32(248046)), ("tokenizer.ggml.padding_token_id", u32(248044)),
               ("tokenizer.ggml.bos_token_id", u32(248044)), ("tokenizer.ggml.add_bos_token", False),
               ("tokenizer.chat_template", None)),
)  # fmt: skip


@dataclass(frozen=True)
class NextConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    linear_num_key_heads: int
    linear_num_value_heads: int
    vocab_size: int
    intermediate_size: int = 0  # dense FFN (Qwen3.5 dense); 0 for MoE
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    shared_expert_intermediate_size: int = 0
    head_dim: int = 256
    linear_key_head_dim: int = 128
    linear_value_head_dim: int = 128
    linear_conv_kernel_dim: int = 4
    max_position_embeddings: int = 262144
    rope_theta: float = 10000000.0
    rms_norm_eps: float = 1e-6
    tie_word_embeddings: bool = False
    mtp_layers: int = 1
    layer_types: bool = True  # config.json lists layer_types (Qwen3.5); Qwen3-Next has only the interval

    @property
    def n_all(self) -> int:
        return self.num_hidden_layers + self.mtp_layers

    def recurrent(self, i: int) -> bool:
        return i < self.num_hidden_layers and (i + 1) % 4 != 0


def next_kv(c: NextConfig, *, qwen35: bool) -> list[tuple[str, object]]:
    kv: list[tuple[str, object]] = [
        ("block_count", u32(c.n_all)),
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
    ]
    if c.intermediate_size:
        kv.append(("feed_forward_length", u32(c.intermediate_size)))
    kv += [("attention.head_count", u32(c.num_attention_heads)),
           ("attention.head_count_kv", u32(c.num_key_value_heads))]
    if qwen35:
        kv.append(("rope.dimension_sections", i32s([11, 11, 10, 0])))
    kv += [("rope.freq_base", f32(c.rope_theta)), ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps))]
    if c.num_experts:
        kv += [("expert_count", u32(c.num_experts)), ("expert_used_count", u32(c.num_experts_per_tok))]
    kv += [("attention.key_length", u32(c.head_dim)), ("attention.value_length", u32(c.head_dim))]
    if c.moe_intermediate_size:
        kv += [("expert_feed_forward_length", u32(c.moe_intermediate_size)),
               ("expert_shared_feed_forward_length", u32(c.shared_expert_intermediate_size))]
    kv += [
        ("nextn_predict_layers", u32(c.mtp_layers)),
        ("ssm.conv_kernel", u32(c.linear_conv_kernel_dim)),
        ("ssm.state_size", u32(c.linear_key_head_dim)),
        ("ssm.group_count", u32(c.linear_num_key_heads)),
        ("ssm.time_step_rank", u32(c.linear_num_value_heads)),
        ("ssm.inner_size", u32(c.linear_value_head_dim * c.linear_num_value_heads)),
    ]
    if c.layer_types:
        kv.append(("attention.recurrent_layers", bools([c.recurrent(i) for i in range(c.n_all)])))
    kv += [("full_attention_interval", u32(4)), ("rope.dimension_count", u32(c.head_dim // 4))]
    return kv


def next_tensors(c: NextConfig, *, qwen35: bool) -> Table:
    t = Table()
    e = c.hidden_size
    key_dim = c.linear_key_head_dim * c.linear_num_key_heads
    value_dim = c.linear_value_head_dim * c.linear_num_value_heads
    nv = c.linear_num_value_heads
    t.add("token_embd.weight", e, c.vocab_size)
    for i in range(c.n_all):
        t.blk(i, "attn_norm.weight", e)
        t.blk(i, "post_attention_norm.weight", e)
        if c.recurrent(i):
            t.blk(i, "attn_qkv.weight", e, 2 * key_dim + value_dim)
            t.blk(i, "attn_gate.weight", e, value_dim)
            t.blk(i, "ssm_conv1d.weight", c.linear_conv_kernel_dim, 2 * key_dim + value_dim)
            t.blk(i, "ssm_dt.bias", nv)
            t.blk(i, "ssm_a", nv)
            if qwen35:
                t.blk(i, "ssm_beta.weight", e, nv)
                t.blk(i, "ssm_alpha.weight", e, nv)
            else:
                t.blk(i, "ssm_ba.weight", e, 2 * nv)
            t.blk(i, "ssm_norm.weight", c.linear_value_head_dim)
            t.blk(i, "ssm_out.weight", value_dim, e)
        else:
            hd, nh, nkv = c.head_dim, c.num_attention_heads, c.num_key_value_heads
            t.blk(i, "attn_q.weight", e, hd * nh * 2)
            t.blk(i, "attn_k.weight", e, hd * nkv)
            t.blk(i, "attn_v.weight", e, hd * nkv)
            t.blk(i, "attn_q_norm.weight", hd)
            t.blk(i, "attn_k_norm.weight", hd)
            t.blk(i, "attn_output.weight", hd * nh, e)
        if c.num_experts:
            f, n, fs = c.moe_intermediate_size, c.num_experts, c.shared_expert_intermediate_size
            t.blk(i, "ffn_gate_inp.weight", e, n)
            t.blk(i, "ffn_gate_exps.weight", e, f, n)
            t.blk(i, "ffn_up_exps.weight", e, f, n)
            t.blk(i, "ffn_down_exps.weight", f, e, n)
            t.blk(i, "ffn_gate_inp_shexp.weight", e)
            t.blk(i, "ffn_gate_shexp.weight", e, fs)
            t.blk(i, "ffn_up_shexp.weight", e, fs)
            t.blk(i, "ffn_down_shexp.weight", fs, e)
        else:
            t.blk(i, "ffn_gate.weight", e, c.intermediate_size)
            t.blk(i, "ffn_up.weight", e, c.intermediate_size)
            t.blk(i, "ffn_down.weight", c.intermediate_size, e)
        if i >= c.num_hidden_layers:
            t.blk(i, "nextn.eh_proj.weight", 2 * e, e)
            t.blk(i, "nextn.enorm.weight", e)
            t.blk(i, "nextn.hnorm.weight", e)
            t.blk(i, "nextn.shared_head_norm.weight", e)
    t.add("output_norm.weight", e)
    if not c.tie_word_embeddings:
        t.add("output.weight", e, c.vocab_size)
    return t


# Qwen/Qwen3-Next-80B-A3B-Instruct config.json (no layer_types; the MTP block counted from
# the checkpoint's mtp.* tensors)
QWEN3_NEXT = NextConfig(2048, 48, 16, 2, 16, 32, 151936, num_experts=512, num_experts_per_tok=10,
                        moe_intermediate_size=512, shared_expert_intermediate_size=512, layer_types=False)  # fmt: skip
# Qwen/Qwen3.5-0.8B config.json (text_config)
QWEN35_08B = NextConfig(1024, 24, 8, 2, 16, 16, 248320, intermediate_size=3584, tie_word_embeddings=True)
# Qwen/Qwen3.5-27B config.json (text_config)
QWEN35_27B = NextConfig(5120, 64, 24, 4, 16, 48, 248320, intermediate_size=17408)
# Qwen/Qwen3.5-35B-A3B and Qwen/Qwen3.6-35B-A3B config.json (text_config; the same geometry)
QWEN35_35B_A3B = NextConfig(2048, 40, 16, 2, 16, 32, 248320, num_experts=256, num_experts_per_tok=8,
                            moe_intermediate_size=512, shared_expert_intermediate_size=512)  # fmt: skip

_NOTE35 = "token list synthesized (Qwen3.5's 248,320-id list is not at hand): right size, types and special ids"


def _spec(name: str, arch: str, c: NextConfig, size_label: str, vocab: Vocab, notes: str = "") -> ModelSpec:
    qwen35 = arch != "qwen3next"
    tags = {"hybrid", "recurrent", "mtp"} | ({"moe"} if c.num_experts else {"dense"})
    return ModelSpec(
        name=name, repo=f"Qwen/{name}", arch=arch, family="qwen_next",
        kv=kv_list(arch, general(name.replace("-", " "), size_label, basename=name.split("-")[0], license="apache-2.0"),
                   next_kv(c, qwen35=qwen35)),
        tensors=next_tensors(c, qwen35=qwen35).freeze(), vocab=vocab, tags=frozenset(tags), spec_type="draft-mtp",
        notes=notes,
    )  # fmt: skip


def models() -> list[ModelSpec]:
    return [
        _spec("Qwen3-Next-80B-A3B-Instruct", "qwen3next", QWEN3_NEXT, "80B-A3B", QWEN3_VOCAB),
        _spec("Qwen3.5-0.8B", "qwen35", QWEN35_08B, "0.8B", QWEN35_VOCAB, _NOTE35),
        _spec("Qwen3.5-27B", "qwen35", QWEN35_27B, "27B", QWEN35_VOCAB, _NOTE35),
        _spec("Qwen3.5-35B-A3B", "qwen35moe", QWEN35_35B_A3B, "35B-A3B", QWEN35_VOCAB, _NOTE35),
        _spec("Qwen3.6-35B-A3B", "qwen35moe", QWEN35_35B_A3B, "35B-A3B", QWEN35_VOCAB, _NOTE35),
    ]
