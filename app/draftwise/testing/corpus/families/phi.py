"""Microsoft Phi-3-mini and Phi-4 (architecture `phi3`).

Converter: `conversion/phi.py` Phi3MiniModel (its own keys: context and original context
length, a sliding window of 0 when config.json has none, which tells Phi-4 apart; no
`rope_factors` tensors without long/short factors). The checkpoint's fused `qkv_proj` and
`gate_up_proj` stay fused: `attn_qkv` and a double-width `ffn_up`. Tensors:
`src/models/phi3.cpp`.

Tokenizer: Phi-3 has the real models/ggml-vocab-phi-3.gguf (32,064 ids, SentencePiece).
Phi-4's tiktoken-style list (100,352 ids, GPT2Tokenizer) is not at hand: synthesized from the
Llama 3 list's byte-level pieces (100,256 normal ids), its special tokens at the published
ids (`<|endoftext|>` 100257 ... `<|im_end|>` 100265, `<|dummy_N|>` for the rest, CONTROL).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

ARCH = "phi3"
CONTROL = 3
PHI3_VOCAB = Vocab("vocab:phi-3", 32064)
_PHI4_NAMED = {100257: "<|endoftext|>", 100258: "<|fim_prefix|>", 100259: "<|fim_middle|>",
               100260: "<|fim_suffix|>", 100264: "<|im_start|>", 100265: "<|im_end|>", 100266: "<|im_sep|>",
               100276: "<|endofprompt|>"}  # fmt: skip
PHI4_VOCAB = Vocab(
    "synth:llama-bpe", 100352, synth={"n_normal": 100256},
    specials=tuple((i, _PHI4_NAMED.get(i, f"<|dummy_{i - 100256}|>"), CONTROL) for i in range(100256, 100352)),
    overrides=(("tokenizer.ggml.pre", "dbrx"), ("tokenizer.ggml.bos_token_id", u32(100257)),
               ("tokenizer.ggml.eos_token_id", u32(100265)), ("tokenizer.ggml.padding_token_id", u32(100349))),
)  # fmt: skip


@dataclass(frozen=True)
class Phi3Config:
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    num_hidden_layers: int
    max_position_embeddings: int
    original_max_position_embeddings: int
    rope_theta: float
    vocab_size: int
    sliding_window: int | None
    rms_norm_eps: float = 1e-5


def phi3_kv(c: Phi3Config) -> list[tuple[str, object]]:
    return [
        ("context_length", u32(c.max_position_embeddings)),
        ("rope.scaling.original_context_length", u32(c.original_max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("block_count", u32(c.num_hidden_layers)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(c.num_key_value_heads)),
        ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps)),
        ("rope.dimension_count", u32(c.hidden_size // c.num_attention_heads)),
        ("rope.freq_base", f32(c.rope_theta)),
        ("attention.sliding_window", u32(c.sliding_window or 0)),
    ]


def phi3_tensors(c: Phi3Config) -> Table:
    t = Table()
    e, hd = c.hidden_size, c.hidden_size // c.num_attention_heads
    t.add("token_embd.weight", e, c.vocab_size)
    for i in range(c.num_hidden_layers):
        t.blk(i, "attn_norm.weight", e)
        t.blk(i, "attn_qkv.weight", e, e + 2 * hd * c.num_key_value_heads)
        t.blk(i, "attn_output.weight", e, e)
        t.blk(i, "ffn_norm.weight", e)
        t.blk(i, "ffn_up.weight", e, 2 * c.intermediate_size)
        t.blk(i, "ffn_down.weight", c.intermediate_size, e)
    t.add("output_norm.weight", e)
    t.add("output.weight", e, c.vocab_size)
    return t


# microsoft/Phi-3-mini-4k-instruct config.json
PHI3_MINI = Phi3Config(3072, 8192, 32, 32, 32, 4096, 4096, 10000.0, 32064, sliding_window=2047)
# microsoft/phi-4 config.json
PHI4 = Phi3Config(5120, 17920, 40, 10, 40, 16384, 16384, 250000.0, 100352, sliding_window=None)


def models() -> list[ModelSpec]:
    return [
        ModelSpec(name="Phi-3-mini-4k-instruct", repo="microsoft/Phi-3-mini-4k-instruct", arch=ARCH, family="phi",
                  kv=kv_list(ARCH, general("Phi 3 Mini 4k Instruct", "3.8B", basename="Phi-3", finetune="instruct",
                                           license="mit"), phi3_kv(PHI3_MINI)),
                  tensors=phi3_tensors(PHI3_MINI).freeze(), vocab=PHI3_VOCAB, tags=frozenset({"dense", "swa"})),
        ModelSpec(name="phi-4", repo="microsoft/phi-4", arch=ARCH, family="phi",
                  kv=kv_list(ARCH, general("Phi 4", "15B", basename="phi", license="mit"), phi3_kv(PHI4)),
                  tensors=phi3_tensors(PHI4).freeze(), vocab=PHI4_VOCAB, tags=frozenset({"dense"}),
                  notes="token list synthesized (Phi-4's is not at hand): right size, types and special ids"),
    ]  # fmt: skip
