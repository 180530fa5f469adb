"""DeepSeek-V2-Lite and DeepSeek-V3 (architecture `deepseek2`, multi-head latent attention).

Converter: `conversion/deepseek.py` DeepseekV2Model. The tensors are converted before the
keys (TextModel.write: prepare_tensors, then prepare_metadata), so `kv_b_proj` is split with
the config's KV head count into `attn_k_b` (transposed) and `attn_v_b`; then the keys are
written with num_key_value_heads forced to 1 (MLA as MQA), key/value_length of the latent
(kv_lora_rank + rope dims / kv_lora_rank) and the `_mla` lengths of the decompressed heads.
The MTP layer of V3 is skipped (`skip_mtp = True`: "remove this when we support MTP for
deepseek models"), so the file has 61 blocks and no nextn tensors. Tensors:
`src/models/deepseek2.cpp` (V2-Lite has no q_lora_rank: a plain `attn_q`).

Tokenizers: V2-Lite uses DeepSeek LLM's (models/ggml-vocab-deepseek-llm.gguf, 102,400 ids).
V3's 129,280-id list is not at hand: synthesized from the Llama 3 list's byte-level pieces
with V3's specials (`<｜begin▁of▁sentence｜>` 0, `<｜end▁of▁sentence｜>` 1, `<｜▁pad▁｜>` 2,
place holders and chat tokens 128000-128814, CONTROL), padding after.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

ARCH = "deepseek2"
CONTROL = 3
SIGMOID, SOFTMAX = 2, 1  # gguf.ExpertGatingFuncType

V2_VOCAB = Vocab("vocab:deepseek-llm", 102400)
_V3_NAMED = {0: "<｜begin▁of▁sentence｜>", 1: "<｜end▁of▁sentence｜>", 2: "<｜▁pad▁｜>"}
V3_VOCAB = Vocab(
    "synth:llama-bpe", 129280, synth={"first_normal": 3, "n_normal": 128000 - 3},
    specials=(*((i, t, CONTROL) for i, t in _V3_NAMED.items()),
              *((i, f"<｜place▁holder▁no▁{i - 128000}｜>", CONTROL) for i in range(128000, 128815))),
    overrides=(("tokenizer.ggml.pre", "deepseek-v3"), ("tokenizer.ggml.bos_token_id", u32(0)),
               ("tokenizer.ggml.eos_token_id", u32(1)), ("tokenizer.ggml.padding_token_id", u32(1)),
               ("tokenizer.ggml.add_bos_token", True)),
)  # fmt: skip


@dataclass(frozen=True)
class DeepseekConfig:
    hidden_size: int
    intermediate_size: int
    moe_intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    q_lora_rank: int | None
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    n_routed_experts: int
    n_shared_experts: int
    num_experts_per_tok: int
    first_k_dense_replace: int
    n_group: int
    topk_group: int
    routed_scaling_factor: float
    norm_topk_prob: bool
    scoring_func: int
    vocab_size: int
    mscale_all_dim: float
    probs_bias: bool  # e_score_correction_bias (noaux_tc routing) -> exp_probs_b
    max_position_embeddings: int = 163840
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-6


def deepseek_kv(c: DeepseekConfig) -> list[tuple[str, object]]:
    kv: list[tuple[str, object]] = [
        ("block_count", u32(c.num_hidden_layers)),
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(1)),
        # rope_scaling {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
        # "beta_fast": 32, "beta_slow": 1, "mscale": ..., "mscale_all_dim": ...}
        ("rope.scaling.type", "yarn"),
        ("rope.scaling.factor", f32(40.0)),
        ("rope.scaling.original_context_length", u32(4096)),
        ("rope.scaling.yarn_beta_fast", f32(32.0)),
        ("rope.scaling.yarn_beta_slow", f32(1.0)),
        ("rope.freq_base", f32(c.rope_theta)),
        ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps)),
        ("expert_count", u32(c.n_routed_experts)),
        ("expert_used_count", u32(c.num_experts_per_tok)),
        ("expert_group_count", u32(c.n_group)),
        ("expert_group_used_count", u32(c.topk_group)),
        ("expert_gating_func", u32(c.scoring_func)),
        ("leading_dense_block_count", u32(c.first_k_dense_replace)),
        ("vocab_size", u32(c.vocab_size)),
    ]
    if c.q_lora_rank:
        kv.append(("attention.q_lora_rank", u32(c.q_lora_rank)))
    kv += [
        ("attention.kv_lora_rank", u32(c.kv_lora_rank)),
        ("attention.key_length", u32(c.kv_lora_rank + c.qk_rope_head_dim)),
        ("attention.value_length", u32(c.kv_lora_rank)),
        ("attention.key_length_mla", u32(c.qk_nope_head_dim + c.qk_rope_head_dim)),
        ("attention.value_length_mla", u32(c.v_head_dim)),
        ("expert_feed_forward_length", u32(c.moe_intermediate_size)),
        ("expert_shared_count", u32(c.n_shared_experts)),
        ("expert_weights_scale", f32(c.routed_scaling_factor)),
    ]
    if c.norm_topk_prob:
        kv.append(("expert_weights_norm", True))
    kv += [("rope.dimension_count", u32(c.qk_rope_head_dim)),
           ("rope.scaling.yarn_log_multiplier", f32(0.1 * c.mscale_all_dim))]
    return kv


def deepseek_tensors(c: DeepseekConfig) -> Table:
    t = Table()
    e, nh = c.hidden_size, c.num_attention_heads
    hk = c.qk_nope_head_dim + c.qk_rope_head_dim
    t.add("token_embd.weight", e, c.vocab_size)
    for i in range(c.num_hidden_layers):
        t.blk(i, "attn_norm.weight", e)
        if c.q_lora_rank:
            t.blk(i, "attn_q_a_norm.weight", c.q_lora_rank)
            t.blk(i, "attn_q_a.weight", e, c.q_lora_rank)
            t.blk(i, "attn_q_b.weight", c.q_lora_rank, nh * hk)
        else:
            t.blk(i, "attn_q.weight", e, nh * hk)
        t.blk(i, "attn_kv_a_norm.weight", c.kv_lora_rank)
        t.blk(i, "attn_kv_a_mqa.weight", e, c.kv_lora_rank + c.qk_rope_head_dim)
        t.blk(i, "attn_k_b.weight", c.qk_nope_head_dim, c.kv_lora_rank, nh)
        t.blk(i, "attn_v_b.weight", c.kv_lora_rank, c.v_head_dim, nh)
        t.blk(i, "attn_output.weight", nh * c.v_head_dim, e)
        t.blk(i, "ffn_norm.weight", e)
        if i < c.first_k_dense_replace:
            t.blk(i, "ffn_gate.weight", e, c.intermediate_size)
            t.blk(i, "ffn_up.weight", e, c.intermediate_size)
            t.blk(i, "ffn_down.weight", c.intermediate_size, e)
            continue
        f, n = c.moe_intermediate_size, c.n_routed_experts
        t.blk(i, "ffn_gate_inp.weight", e, n)
        if c.probs_bias:
            t.blk(i, "exp_probs_b.bias", n)
        t.blk(i, "ffn_gate_exps.weight", e, f, n)
        t.blk(i, "ffn_up_exps.weight", e, f, n)
        t.blk(i, "ffn_down_exps.weight", f, e, n)
        fs = f * c.n_shared_experts
        t.blk(i, "ffn_gate_shexp.weight", e, fs)
        t.blk(i, "ffn_up_shexp.weight", e, fs)
        t.blk(i, "ffn_down_shexp.weight", fs, e)
    t.add("output_norm.weight", e)
    t.add("output.weight", e, c.vocab_size)
    return t


# deepseek-ai/DeepSeek-V2-Lite-Chat config.json
V2_LITE = DeepseekConfig(2048, 10944, 1408, 27, 16, None, 512, 128, 64, 128, 64, 2, 6, 1, 1, 1, 1.0, False,
                         SOFTMAX, 102400, 0.707, probs_bias=False)  # fmt: skip
# deepseek-ai/DeepSeek-V3 config.json (V3-0324 and R1 share it)
V3 = DeepseekConfig(7168, 18432, 2048, 61, 128, 1536, 512, 128, 64, 128, 256, 1, 8, 3, 8, 4, 2.5, True,
                    SIGMOID, 129280, 1.0, probs_bias=True)  # fmt: skip


def models() -> list[ModelSpec]:
    return [
        ModelSpec(name="DeepSeek-V2-Lite-Chat", repo="deepseek-ai/DeepSeek-V2-Lite-Chat", arch=ARCH, family="deepseek",
                  kv=kv_list(ARCH, general("DeepSeek V2 Lite Chat", "16B", basename="DeepSeek-V2-Lite",
                                           finetune="Chat"), deepseek_kv(V2_LITE)),
                  tensors=deepseek_tensors(V2_LITE).freeze(), vocab=V2_VOCAB, tags=frozenset({"moe", "mla"})),
        ModelSpec(name="DeepSeek-V3", repo="deepseek-ai/DeepSeek-V3", arch=ARCH, family="deepseek",
                  kv=kv_list(ARCH, general("DeepSeek V3", "671B", basename="DeepSeek-V3"), deepseek_kv(V3)),
                  tensors=deepseek_tensors(V3).freeze(), vocab=V3_VOCAB, tags=frozenset({"moe", "mla", "large"}),
                  notes="token list synthesized (DeepSeek-V3's is not at hand): right size, types and special ids; "
                        "the MTP layer is not converted (conversion/deepseek.py skip_mtp)"),
    ]  # fmt: skip
