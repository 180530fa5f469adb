"""Z.ai GLM-4.5-Air (architecture `glm4moe`) with its MTP (nextn) layer.

Converter: `conversion/glm.py` Glm4MoeModel: block_count is num_hidden_layers plus
num_nextn_predict_layers (the MTP layer is converted as block 46: a whole decoder block, MoE
included, with `nextn.eh_proj`, `enorm`, `hnorm` and `shared_head_norm`; the checkpoint
keeps no embedding or head of its own there, both are shared); rope.dimension_count is
head_dim x partial_rotary_factor; sigmoid gating always. Tensors: `src/models/glm4-moe.cpp`
(the pre-FFN norm is `post_attention_norm`; Q/K/V biases; no Q/K norms when use_qk_norm is
false; the nextn block loads only with `--spec-type draft-mtp`).

Tokenizer: GLM-4.5's 151,552-id list is not at hand (`_set_vocab_glm`, byte-level BPE, pre
`glm4`): synthesized from the Qwen list's pieces (151,329 normal ids), the GLM specials at
151329-151364 (`<|endoftext|>`, `[MASK]`, `[gMASK]`, ... `<|observation|>`, CONTROL), padding
after; bos `[gMASK]`, eos/pad `<|endoftext|>`, eot `<|user|>` as `_set_vocab_glm` sets them.
"""

from __future__ import annotations

from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

ARCH = "glm4moe"
CONTROL = 3
_GLM_NAMED = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
              "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
              "<|end_of_video|>", "<|begin_of_audio|>", "<|end_of_audio|>", "<|begin_of_transcription|>",
              "<|end_of_transcription|>", "<|code_prefix|>", "<|code_middle|>", "<|code_suffix|>"]  # fmt: skip
GLM_VOCAB = Vocab(
    "synth:qwen2", 151552, synth={"n_normal": 151329},
    specials=tuple((151329 + k, _GLM_NAMED[k] if k < len(_GLM_NAMED) else f"<|glm_special_{k}|>", CONTROL)
                   for k in range(36)),
    overrides=(("tokenizer.ggml.pre", "glm4"), ("tokenizer.ggml.bos_token_id", u32(151331)),
               ("tokenizer.ggml.eos_token_id", u32(151329)), ("tokenizer.ggml.padding_token_id", u32(151329)),
               ("tokenizer.ggml.eot_token_id", u32(151336)), ("tokenizer.chat_template", None)),
)  # fmt: skip

# zai-org/GLM-4.5-Air config.json
N_EMBD, N_FF, N_FF_EXP, N_LAYER, N_NEXTN = 4096, 10944, 1408, 46, 1
N_HEAD, N_HEAD_KV, HEAD_DIM, N_EXPERT, N_USED, N_DENSE, N_VOCAB = 96, 8, 128, 128, 8, 1, 151552


def glm_kv() -> list[tuple[str, object]]:
    return [
        ("block_count", u32(N_LAYER + N_NEXTN)),
        ("context_length", u32(131072)),
        ("embedding_length", u32(N_EMBD)),
        ("feed_forward_length", u32(N_FF)),
        ("attention.head_count", u32(N_HEAD)),
        ("attention.head_count_kv", u32(N_HEAD_KV)),
        ("rope.freq_base", f32(1000000.0)),
        ("attention.layer_norm_rms_epsilon", f32(1e-5)),
        ("expert_count", u32(N_EXPERT)),
        ("expert_used_count", u32(N_USED)),
        ("expert_group_count", u32(1)),
        ("expert_group_used_count", u32(1)),
        ("attention.key_length", u32(HEAD_DIM)),
        ("attention.value_length", u32(HEAD_DIM)),
        ("rope.dimension_count", u32(HEAD_DIM // 2)),
        ("expert_feed_forward_length", u32(N_FF_EXP)),
        ("expert_shared_count", u32(1)),
        ("leading_dense_block_count", u32(N_DENSE)),
        ("expert_gating_func", u32(2)),
        ("expert_weights_scale", f32(1.0)),
        ("expert_weights_norm", True),
        ("nextn_predict_layers", u32(N_NEXTN)),
    ]


def glm_tensors() -> Table:
    t = Table()
    t.add("token_embd.weight", N_EMBD, N_VOCAB)
    q, kv = N_HEAD * HEAD_DIM, N_HEAD_KV * HEAD_DIM
    for i in range(N_LAYER + N_NEXTN):
        t.blk(i, "attn_norm.weight", N_EMBD)
        t.blk(i, "attn_q.weight", N_EMBD, q)
        t.blk(i, "attn_k.weight", N_EMBD, kv)
        t.blk(i, "attn_v.weight", N_EMBD, kv)
        t.blk(i, "attn_q.bias", q)
        t.blk(i, "attn_k.bias", kv)
        t.blk(i, "attn_v.bias", kv)
        t.blk(i, "attn_output.weight", q, N_EMBD)
        t.blk(i, "post_attention_norm.weight", N_EMBD)
        if i < N_DENSE:
            t.blk(i, "ffn_gate.weight", N_EMBD, N_FF)
            t.blk(i, "ffn_up.weight", N_EMBD, N_FF)
            t.blk(i, "ffn_down.weight", N_FF, N_EMBD)
        else:
            t.blk(i, "ffn_gate_inp.weight", N_EMBD, N_EXPERT)
            t.blk(i, "exp_probs_b.bias", N_EXPERT)
            t.blk(i, "ffn_gate_exps.weight", N_EMBD, N_FF_EXP, N_EXPERT)
            t.blk(i, "ffn_up_exps.weight", N_EMBD, N_FF_EXP, N_EXPERT)
            t.blk(i, "ffn_down_exps.weight", N_FF_EXP, N_EMBD, N_EXPERT)
            t.blk(i, "ffn_gate_shexp.weight", N_EMBD, N_FF_EXP)
            t.blk(i, "ffn_up_shexp.weight", N_EMBD, N_FF_EXP)
            t.blk(i, "ffn_down_shexp.weight", N_FF_EXP, N_EMBD)
        if i >= N_LAYER:
            t.blk(i, "nextn.eh_proj.weight", 2 * N_EMBD, N_EMBD)
            t.blk(i, "nextn.enorm.weight", N_EMBD)
            t.blk(i, "nextn.hnorm.weight", N_EMBD)
            t.blk(i, "nextn.shared_head_norm.weight", N_EMBD)
    t.add("output_norm.weight", N_EMBD)
    t.add("output.weight", N_EMBD, N_VOCAB)
    return t


def models() -> list[ModelSpec]:
    return [ModelSpec(
        name="GLM-4.5-Air", repo="zai-org/GLM-4.5-Air", arch=ARCH, family="glm",
        kv=kv_list(ARCH, general("GLM 4.5 Air", "106B-A12B", basename="GLM-4.5-Air", license="mit"), glm_kv()),
        tensors=glm_tensors().freeze(), vocab=GLM_VOCAB, tags=frozenset({"moe", "mtp"}), spec_type="draft-mtp",
        notes="token list synthesized (GLM-4.5's is not at hand): right size, types and special ids",
    )]  # fmt: skip
