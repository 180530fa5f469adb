"""Meta Llama 3.1 / 3.2 (architecture `llama`).

Converter: `conversion/llama.py` LlamaModel (TextModel.set_gguf_parameters, then
`vocab_size` and `rope.dimension_count`; the `llama3` RoPE type writes no scaling keys but
a `rope_freqs.weight` tensor of head_dim/2 factors, generate_extra_tensors). Tensors:
`src/models/llama.cpp` load_arch_tensors. Tokenizer: models/ggml-vocab-llama-bpe.gguf (the
Llama 3 tokenizer, 128,256 ids), eos set to `<|eot_id|>` as the instruct models'
tokenizer_config.json does.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus import blocks
from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

ARCH = "llama"
LLAMA3_VOCAB = Vocab("vocab:llama-bpe", 128256, overrides=(("tokenizer.ggml.eos_token_id", u32(128009)),))


@dataclass(frozen=True)
class LlamaConfig:
    """The config.json values the converter reads (names as in config.json)."""

    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_hidden_layers: int
    num_key_value_heads: int
    max_position_embeddings: int
    rope_theta: float
    rms_norm_eps: float
    vocab_size: int
    tie_word_embeddings: bool = False
    head_dim: int | None = None  # written as key/value_length only when config.json has it
    llama3_rope: bool = False  # rope_scaling.rope_type == "llama3": a rope_freqs tensor
    num_local_experts: int = 0
    num_experts_per_tok: int = 0

    @property
    def rope_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads


def llama_kv(c: LlamaConfig) -> list[tuple[str, object]]:
    """TextModel.set_gguf_parameters + LlamaModel.set_gguf_parameters, in that order."""
    kv: list[tuple[str, object]] = [
        ("block_count", u32(c.num_hidden_layers)),
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(c.num_key_value_heads)),
        ("rope.freq_base", f32(c.rope_theta)),
        ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps)),
    ]
    if c.num_local_experts:
        kv += [("expert_count", u32(c.num_local_experts)), ("expert_used_count", u32(c.num_experts_per_tok))]
    if c.head_dim is not None:
        kv += [("attention.key_length", u32(c.head_dim)), ("attention.value_length", u32(c.head_dim))]
    kv += [("vocab_size", u32(c.vocab_size)), ("rope.dimension_count", u32(c.rope_dim))]
    return kv


def llama_tensors(c: LlamaConfig) -> Table:
    t = Table()
    hd = c.rope_dim
    if c.llama3_rope:
        t.add("rope_freqs.weight", hd // 2)
    blocks.embeddings(t, c.hidden_size, c.vocab_size)
    for i in range(c.num_hidden_layers):
        blocks.attention(t, i, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, hd)
        if c.num_local_experts:
            blocks.moe(t, i, c.hidden_size, c.intermediate_size, c.num_local_experts)
        else:
            blocks.ffn(t, i, c.hidden_size, c.intermediate_size)
    blocks.head(t, c.hidden_size, c.vocab_size, tied=c.tie_word_embeddings)
    return t


def spec(name: str, repo: str, c: LlamaConfig, vocab: Vocab, size_label: str, *, tags: frozenset[str],
         basename: str, finetune: str | None = "Instruct", notes: str = "", arch: str = ARCH,
         family: str = "llama") -> ModelSpec:  # fmt: skip
    return ModelSpec(
        name=name, repo=repo, arch=arch, family=family,
        kv=kv_list(arch, general(name.replace("-", " "), size_label, basename=basename, finetune=finetune),
                   llama_kv(c)),
        tensors=llama_tensors(c).freeze(), vocab=vocab, tags=tags, notes=notes,
    )  # fmt: skip


# meta-llama/Llama-3.1-8B-Instruct config.json
LLAMA_31_8B = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_hidden_layers=32,
                          num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0,
                          rms_norm_eps=1e-5, vocab_size=128256, llama3_rope=True)  # fmt: skip
# meta-llama/Llama-3.1-70B-Instruct config.json
LLAMA_31_70B = LlamaConfig(hidden_size=8192, intermediate_size=28672, num_attention_heads=64, num_hidden_layers=80,
                           num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0,
                           rms_norm_eps=1e-5, vocab_size=128256, llama3_rope=True)  # fmt: skip
# meta-llama/Llama-3.2-1B-Instruct config.json
LLAMA_32_1B = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_attention_heads=32, num_hidden_layers=16,
                          num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0,
                          rms_norm_eps=1e-5, vocab_size=128256, tie_word_embeddings=True, head_dim=64,
                          llama3_rope=True)  # fmt: skip
# meta-llama/Llama-3.2-3B-Instruct config.json
LLAMA_32_3B = LlamaConfig(hidden_size=3072, intermediate_size=8192, num_attention_heads=24, num_hidden_layers=28,
                          num_key_value_heads=8, max_position_embeddings=131072, rope_theta=500000.0,
                          rms_norm_eps=1e-5, vocab_size=128256, tie_word_embeddings=True, head_dim=128,
                          llama3_rope=True)  # fmt: skip

_DENSE = frozenset({"dense"})


def models() -> list[ModelSpec]:
    return [
        spec("Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B-Instruct", LLAMA_32_1B, LLAMA3_VOCAB, "1B",
             basename="Llama-3.2", tags=_DENSE | {"tied"}),
        spec("Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B-Instruct", LLAMA_32_3B, LLAMA3_VOCAB, "3B",
             basename="Llama-3.2", tags=_DENSE | {"tied"}),
        spec("Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", LLAMA_31_8B, LLAMA3_VOCAB, "8B",
             basename="Llama-3.1", tags=_DENSE),
        spec("Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", LLAMA_31_70B, LLAMA3_VOCAB, "70B",
             basename="Llama-3.1", tags=_DENSE | {"large"}),
    ]  # fmt: skip
