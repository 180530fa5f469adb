"""Liquid AI LFM2 (architecture `lfm2`: short-convolution layers and GQA attention layers).

Converter: `conversion/lfm2.py` LFM2Model: num_key_value_heads per layer (0 for a `conv`
layer, an int32 array), vocab_size, `shortconv.l_cache`, and the feed-forward length
auto-adjusted as the checkpoint does it (int(2/3 x block_ff_dim) x multiplier, rounded up
to block_multiple_of). The final norm is `token_embd_norm` (the engine's name for it).
Tensors: `src/models/lfm2.cpp`; the output is tied.

Tokenizer: LFM2's 65,536-id byte-level BPE list is not at hand: synthesized from the Llama 3
list's pieces with its first specials (`<|pad|>` 0, `<|startoftext|>` 1, `<|endoftext|>` 2,
..., `<|im_start|>` 6, `<|im_end|>` 7, CONTROL).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, i32s, kv_list, u32

ARCH = "lfm2"
CONTROL = 3
_NAMED = ["<|pad|>", "<|startoftext|>", "<|endoftext|>", "<|fim_pre|>", "<|fim_mid|>", "<|fim_suf|>",
          "<|im_start|>", "<|im_end|>", "<|tool_list_start|>", "<|tool_list_end|>", "<|tool_call_start|>",
          "<|tool_call_end|>", "<|tool_response_start|>", "<|tool_response_end|>", "<|cot_start|>", "<|cot_end|>"]  # fmt: skip
LFM2_VOCAB = Vocab(
    "synth:llama-bpe", 65536, synth={"first_normal": len(_NAMED)},
    specials=tuple((i, t, CONTROL) for i, t in enumerate(_NAMED)),
    overrides=(("tokenizer.ggml.pre", "lfm2"), ("tokenizer.ggml.bos_token_id", u32(1)),
               ("tokenizer.ggml.eos_token_id", u32(7)), ("tokenizer.ggml.padding_token_id", u32(0))),
)  # fmt: skip
# layer_types of every LFM2 dense model: attention at these of the 16 layers.
ATTN_LAYERS = (2, 5, 8, 10, 12, 14)
N_LAYER, L_CACHE = 16, 3


@dataclass(frozen=True)
class Lfm2Config:
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    block_ff_dim: int
    vocab_size: int = 65536
    block_multiple_of: int = 256
    block_ffn_dim_multiplier: float = 1.0
    max_position_embeddings: int = 128000

    @property
    def n_ff(self) -> int:
        ff = int(self.block_ffn_dim_multiplier * int(2 * self.block_ff_dim / 3))
        m = self.block_multiple_of
        return m * ((ff + m - 1) // m)


def lfm2_kv(c: Lfm2Config) -> list[tuple[str, object]]:
    return [
        ("block_count", u32(N_LAYER)),
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.n_ff)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", i32s([c.num_key_value_heads if i in ATTN_LAYERS else 0 for i in range(N_LAYER)])),
        ("rope.freq_base", f32(1000000.0)),
        ("attention.layer_norm_rms_epsilon", f32(1e-5)),
        ("vocab_size", u32(c.vocab_size)),
        ("shortconv.l_cache", u32(L_CACHE)),
    ]


def lfm2_tensors(c: Lfm2Config) -> Table:
    t = Table()
    e, hd = c.hidden_size, c.hidden_size // c.num_attention_heads
    t.add("token_embd.weight", e, c.vocab_size)
    for i in range(N_LAYER):
        t.blk(i, "attn_norm.weight", e)
        if i in ATTN_LAYERS:
            t.blk(i, "attn_q.weight", e, e)
            t.blk(i, "attn_k.weight", e, hd * c.num_key_value_heads)
            t.blk(i, "attn_v.weight", e, hd * c.num_key_value_heads)
            t.blk(i, "attn_q_norm.weight", hd)
            t.blk(i, "attn_k_norm.weight", hd)
            t.blk(i, "attn_output.weight", e, e)
        else:
            t.blk(i, "shortconv.conv.weight", L_CACHE, e)
            t.blk(i, "shortconv.in_proj.weight", e, 3 * e)
            t.blk(i, "shortconv.out_proj.weight", e, e)
        t.blk(i, "ffn_norm.weight", e)
        t.blk(i, "ffn_gate.weight", e, c.n_ff)
        t.blk(i, "ffn_up.weight", e, c.n_ff)
        t.blk(i, "ffn_down.weight", c.n_ff, e)
    t.add("token_embd_norm.weight", e)
    return t


CONFIGS = {
    "350M": Lfm2Config(1024, 16, 8, 6656),  # LiquidAI/LFM2-350M config.json
    "700M": Lfm2Config(1536, 24, 8, 10240),  # LiquidAI/LFM2-700M config.json
    "1.2B": Lfm2Config(2048, 32, 8, 12288),  # LiquidAI/LFM2-1.2B config.json
}


def models() -> list[ModelSpec]:
    return [
        ModelSpec(name=f"LFM2-{size}", repo=f"LiquidAI/LFM2-{size}", arch=ARCH, family="lfm2",
                  kv=kv_list(ARCH, general(f"LFM2 {size}", size, basename="LFM2", license="other"), lfm2_kv(c)),
                  tensors=lfm2_tensors(c).freeze(), vocab=LFM2_VOCAB, tags=frozenset({"hybrid", "recurrent", "tied"}),
                  notes="token list synthesized (LFM2's is not at hand): right size, types and special ids")
        for size, c in CONFIGS.items()
    ]  # fmt: skip
