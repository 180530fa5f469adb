"""IBM Granite 4.0 hybrids (architecture `granitehybrid`: Mamba-2 layers, four attention
layers, MoE with a shared expert in every layer).

Converter: `conversion/granite.py` GraniteHybridModel: GraniteMoeModel's keys (Llama's, the
four multipliers, expert_shared_feed_forward_length), then the Mamba-2 keys (inner size =
mamba_expand x hidden_size, time-step rank = mamba_n_heads), head_count_kv per layer (0 for
a Mamba layer, an int32 array), no RoPE (`rope.scaling.finetuned` false) and
context_length overwritten to 2**20. The MoE `input_linear` is split into gate and up.
Tensors: `src/models/granite-hybrid.cpp`.

Tokenizer: Granite 4.0's 100,352-id list is not at hand: synthesized from the Llama 3
list's byte-level pieces (100,256 normal ids) with its specials (`<|pad|>` 100256,
`<|end_of_text|>` 100257, `<|start_of_role|>` 100264, `<|end_of_role|>` 100265, ...,
CONTROL).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, i32s, kv_list, u32

ARCH = "granitehybrid"
CONTROL = 3
_NAMED = {100256: "<|pad|>", 100257: "<|end_of_text|>", 100258: "<|fim_prefix|>", 100259: "<|fim_middle|>",
          100260: "<|fim_suffix|>", 100261: "<|fim_pad|>", 100262: "<|filename|>", 100263: "<|reponame|>",
          100264: "<|start_of_role|>", 100265: "<|end_of_role|>", 100266: "<|tool_call|>"}  # fmt: skip
GRANITE4_VOCAB = Vocab(
    "synth:llama-bpe", 100352, synth={"n_normal": 100256},
    specials=tuple((i, _NAMED.get(i, f"<|unused_{i - 100256}|>"), CONTROL) for i in range(100256, 100352)),
    overrides=(("tokenizer.ggml.pre", "gpt-4o"), ("tokenizer.ggml.bos_token_id", u32(100257)),
               ("tokenizer.ggml.eos_token_id", u32(100257)), ("tokenizer.ggml.padding_token_id", u32(100256))),
)  # fmt: skip
ATTN_LAYERS = (5, 15, 25, 35)  # layer_types: "attention" at these of the 40


@dataclass(frozen=True)
class GraniteHybridConfig:
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int  # each routed expert
    shared_intermediate_size: int
    num_local_experts: int
    num_experts_per_tok: int
    mamba_n_heads: int
    attention_multiplier: float
    embedding_multiplier: float
    residual_multiplier: float
    logits_scaling: float
    num_hidden_layers: int = 40
    mamba_d_state: int = 128
    mamba_n_groups: int = 1
    mamba_d_conv: int = 4
    mamba_expand: int = 2
    vocab_size: int = 100352

    @property
    def d_inner(self) -> int:
        return self.mamba_expand * self.hidden_size


def granite_kv(c: GraniteHybridConfig) -> list[tuple[str, object]]:
    return [
        ("block_count", u32(c.num_hidden_layers)),
        ("context_length", u32(2**20)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", i32s([c.num_key_value_heads if i in ATTN_LAYERS else 0
                                          for i in range(c.num_hidden_layers)])),
        ("rope.freq_base", f32(10000.0)),
        ("attention.layer_norm_rms_epsilon", f32(1e-5)),
        ("expert_count", u32(c.num_local_experts)),
        ("expert_used_count", u32(c.num_experts_per_tok)),
        ("vocab_size", u32(c.vocab_size)),
        ("rope.dimension_count", u32(c.hidden_size // c.num_attention_heads)),
        ("attention.scale", f32(c.attention_multiplier)),
        ("embedding_scale", f32(c.embedding_multiplier)),
        ("residual_scale", f32(c.residual_multiplier)),
        ("logit_scale", f32(c.logits_scaling)),
        ("expert_shared_feed_forward_length", u32(c.shared_intermediate_size)),
        ("ssm.conv_kernel", u32(c.mamba_d_conv)),
        ("ssm.state_size", u32(c.mamba_d_state)),
        ("ssm.group_count", u32(c.mamba_n_groups)),
        ("ssm.inner_size", u32(c.d_inner)),
        ("ssm.time_step_rank", u32(c.mamba_n_heads)),
        ("rope.scaling.finetuned", False),
    ]  # fmt: skip


def granite_tensors(c: GraniteHybridConfig) -> Table:
    t = Table()
    e, hd = c.hidden_size, c.hidden_size // c.num_attention_heads
    conv = c.d_inner + 2 * c.mamba_n_groups * c.mamba_d_state
    t.add("token_embd.weight", e, c.vocab_size)
    for i in range(c.num_hidden_layers):
        t.blk(i, "attn_norm.weight", e)
        if i in ATTN_LAYERS:
            t.blk(i, "attn_q.weight", e, hd * c.num_attention_heads)
            t.blk(i, "attn_k.weight", e, hd * c.num_key_value_heads)
            t.blk(i, "attn_v.weight", e, hd * c.num_key_value_heads)
            t.blk(i, "attn_output.weight", hd * c.num_attention_heads, e)
        else:
            t.blk(i, "ssm_in.weight", e, 2 * c.d_inner + 2 * c.mamba_n_groups * c.mamba_d_state + c.mamba_n_heads)
            t.blk(i, "ssm_conv1d.weight", c.mamba_d_conv, conv)
            t.blk(i, "ssm_conv1d.bias", conv)
            t.blk(i, "ssm_dt.bias", c.mamba_n_heads)
            t.blk(i, "ssm_a", 1, c.mamba_n_heads)
            t.blk(i, "ssm_d", 1, c.mamba_n_heads)
            t.blk(i, "ssm_norm.weight", c.d_inner // c.mamba_n_groups, c.mamba_n_groups)
            t.blk(i, "ssm_out.weight", c.d_inner, e)
        t.blk(i, "ffn_norm.weight", e)
        f, n = c.intermediate_size, c.num_local_experts
        t.blk(i, "ffn_gate_inp.weight", e, n)
        t.blk(i, "ffn_gate_exps.weight", e, f, n)
        t.blk(i, "ffn_up_exps.weight", e, f, n)
        t.blk(i, "ffn_down_exps.weight", f, e, n)
        fs = c.shared_intermediate_size
        t.blk(i, "ffn_gate_shexp.weight", e, fs)
        t.blk(i, "ffn_up_shexp.weight", e, fs)
        t.blk(i, "ffn_down_shexp.weight", fs, e)
    t.add("output_norm.weight", e)
    return t


# ibm-granite/granite-4.0-h-tiny config.json
H_TINY = GraniteHybridConfig(1536, 12, 4, 512, 1024, 64, 6, 48, 0.0078125, 12.0, 0.22, 6.0)
# ibm-granite/granite-4.0-h-small config.json
H_SMALL = GraniteHybridConfig(4096, 32, 8, 768, 1024, 72, 10, 128, 0.0078125, 12.0, 0.246, 8.0)


def _spec(name: str, c: GraniteHybridConfig, size_label: str) -> ModelSpec:
    return ModelSpec(
        name=name, repo=f"ibm-granite/{name}", arch=ARCH, family="granite",
        kv=kv_list(ARCH, general(name.replace("-", " ").title(), size_label, basename="granite-4.0",
                                 license="apache-2.0"), granite_kv(c)),
        tensors=granite_tensors(c).freeze(), vocab=GRANITE4_VOCAB, tags=frozenset({"moe", "hybrid", "recurrent", "tied"}),
        notes="token list synthesized (Granite 4.0's is not at hand): right size, types and special ids",
    )  # fmt: skip


def models() -> list[ModelSpec]:
    return [_spec("granite-4.0-h-tiny", H_TINY, "7B-A1B"), _spec("granite-4.0-h-small", H_SMALL, "32B-A9B")]
