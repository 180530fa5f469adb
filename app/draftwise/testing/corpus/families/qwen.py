"""Qwen2.5 (`qwen2`), Qwen3 dense (`qwen3`) and Qwen3 MoE (`qwen3moe`).

Converter: `conversion/qwen.py` Qwen2Model / Qwen3Model (TextModel.set_gguf_parameters;
`head_dim` in Qwen3's config.json adds key/value_length) and Qwen2MoeModel for Qwen3 MoE
(`expert_feed_forward_length` from moe_intermediate_size; the per-expert matrices stacked
into `*_exps`). Tensors: `src/models/qwen2.cpp` (Q/K/V biases), `qwen3.cpp` (per-head Q/K
norms), `qwen3moe.cpp`.

Tokenizer: models/ggml-vocab-qwen2.gguf, the Qwen BPE list (151,643 pieces and the three
Qwen1.5 specials), with the later added tokens at their published ids (Qwen2.5's
tokenizer_config.json added_tokens_decoder: `<|object_ref_start|>`..`<|file_sep|>`, special
or `<|...|>`-looking -> CONTROL, `<tool_call>`/`</tool_call>` USER_DEFINED; Qwen3 adds
`<tool_response>`, `</tool_response>`, `<think>`, `</think>` as USER_DEFINED), padded with the
converter's `[PAD{id}]` UNUSED entries to config.json's vocab_size: 151,936 for Qwen2.5
0.5B-3B and every Qwen3, 152,064 for Qwen2.5 7B and up. No chat template (the vocabulary
file has Qwen1.5's; the published ones are not copied here).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus import blocks
from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

CONTROL, USER_DEFINED = 3, 4
QWEN25_SPECIALS = (
    (151643, "<|endoftext|>", CONTROL), (151644, "<|im_start|>", CONTROL), (151645, "<|im_end|>", CONTROL),
    (151646, "<|object_ref_start|>", CONTROL), (151647, "<|object_ref_end|>", CONTROL),
    (151648, "<|box_start|>", CONTROL), (151649, "<|box_end|>", CONTROL), (151650, "<|quad_start|>", CONTROL),
    (151651, "<|quad_end|>", CONTROL), (151652, "<|vision_start|>", CONTROL), (151653, "<|vision_end|>", CONTROL),
    (151654, "<|vision_pad|>", CONTROL), (151655, "<|image_pad|>", CONTROL), (151656, "<|video_pad|>", CONTROL),
    (151657, "<tool_call>", USER_DEFINED), (151658, "</tool_call>", USER_DEFINED),
    (151659, "<|fim_prefix|>", CONTROL), (151660, "<|fim_middle|>", CONTROL), (151661, "<|fim_suffix|>", CONTROL),
    (151662, "<|fim_pad|>", CONTROL), (151663, "<|repo_name|>", CONTROL), (151664, "<|file_sep|>", CONTROL),
)  # fmt: skip
QWEN3_SPECIALS = (*QWEN25_SPECIALS, (151665, "<tool_response>", USER_DEFINED),
                  (151666, "</tool_response>", USER_DEFINED), (151667, "<think>", USER_DEFINED),
                  (151668, "</think>", USER_DEFINED))  # fmt: skip
_IDS = (("tokenizer.ggml.eos_token_id", u32(151645)), ("tokenizer.ggml.padding_token_id", u32(151643)),
        ("tokenizer.ggml.bos_token_id", u32(151643)), ("tokenizer.ggml.add_bos_token", False),
        ("tokenizer.chat_template", None))  # fmt: skip


def qwen25_vocab(size: int) -> Vocab:
    return Vocab("vocab:qwen2", size, overrides=_IDS, specials=QWEN25_SPECIALS)


QWEN3_VOCAB = Vocab("vocab:qwen2", 151936, overrides=_IDS, specials=QWEN3_SPECIALS)


@dataclass(frozen=True)
class QwenConfig:
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_hidden_layers: int
    num_key_value_heads: int
    vocab_size: int
    max_position_embeddings: int = 32768
    rope_theta: float = 1000000.0
    rms_norm_eps: float = 1e-6
    tie_word_embeddings: bool = False
    head_dim: int | None = None  # Qwen3's config.json has it
    num_experts: int = 0
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0

    @property
    def hd(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads


def qwen_kv(c: QwenConfig) -> list[tuple[str, object]]:
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
    if c.num_experts:
        kv += [("expert_count", u32(c.num_experts)), ("expert_used_count", u32(c.num_experts_per_tok))]
    if c.head_dim is not None:
        kv += [("attention.key_length", u32(c.head_dim)), ("attention.value_length", u32(c.head_dim))]
    if c.moe_intermediate_size:
        kv.append(("expert_feed_forward_length", u32(c.moe_intermediate_size)))
    return kv


def qwen_tensors(c: QwenConfig, *, qwen3: bool) -> Table:
    t = Table()
    blocks.embeddings(t, c.hidden_size, c.vocab_size)
    for i in range(c.num_hidden_layers):
        blocks.attention(t, i, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.hd,
                         qkv_bias=not qwen3, qk_norm=qwen3)  # fmt: skip
        if c.num_experts:
            blocks.moe(t, i, c.hidden_size, c.moe_intermediate_size, c.num_experts)
        else:
            blocks.ffn(t, i, c.hidden_size, c.intermediate_size)
    blocks.head(t, c.hidden_size, c.vocab_size, tied=c.tie_word_embeddings)
    return t


def _spec(name: str, c: QwenConfig, arch: str, size_label: str, tags: set[str], basename: str) -> ModelSpec:
    qwen3 = arch != "qwen2"
    vocab = QWEN3_VOCAB if qwen3 else qwen25_vocab(c.vocab_size)
    if c.vocab_size > 151936:
        tags = tags | {"padded-vocab"}
    finetune = "Instruct" if name.endswith("Instruct") else None
    return ModelSpec(
        name=name, repo=f"Qwen/{name}", arch=arch, family="qwen",
        kv=kv_list(arch, general(name.replace("-", " "), size_label, basename=basename, finetune=finetune),
                   qwen_kv(c)),
        tensors=qwen_tensors(c, qwen3=qwen3).freeze(), vocab=vocab, tags=frozenset(tags),
    )  # fmt: skip


# Qwen/Qwen2.5-*-Instruct config.json (Qwen2ForCausalLM; no head_dim, no rope_scaling).
QWEN25 = {
    "0.5B": QwenConfig(896, 4864, 14, 24, 2, 151936, tie_word_embeddings=True),
    "1.5B": QwenConfig(1536, 8960, 12, 28, 2, 151936, tie_word_embeddings=True),
    "3B": QwenConfig(2048, 11008, 16, 36, 2, 151936, tie_word_embeddings=True),
    "7B": QwenConfig(3584, 18944, 28, 28, 4, 152064),
    "14B": QwenConfig(5120, 13824, 40, 48, 8, 152064, rms_norm_eps=1e-5),
    "32B": QwenConfig(5120, 27648, 40, 64, 8, 152064, rms_norm_eps=1e-5),
    "72B": QwenConfig(8192, 29568, 64, 80, 8, 152064),
}
# Qwen/Qwen3-* config.json (Qwen3ForCausalLM / Qwen3MoeForCausalLM; head_dim 128,
# max_position_embeddings 40960, rope_theta 1e6).
QWEN3 = {
    "0.6B": QwenConfig(1024, 3072, 16, 28, 8, 151936, 40960, tie_word_embeddings=True, head_dim=128),
    "4B": QwenConfig(2560, 9728, 32, 36, 8, 151936, 40960, tie_word_embeddings=True, head_dim=128),
    "8B": QwenConfig(4096, 12288, 32, 36, 8, 151936, 40960, head_dim=128),
    "32B": QwenConfig(5120, 25600, 64, 64, 8, 151936, 40960, head_dim=128),
}
QWEN3_MOE = {
    # Qwen/Qwen3-30B-A3B config.json
    "30B-A3B": QwenConfig(2048, 6144, 32, 48, 4, 151936, 40960, head_dim=128, num_experts=128,
                          num_experts_per_tok=8, moe_intermediate_size=768),
    # Qwen/Qwen3-235B-A22B config.json
    "235B-A22B": QwenConfig(4096, 12288, 64, 94, 4, 151936, 40960, head_dim=128, num_experts=128,
                            num_experts_per_tok=8, moe_intermediate_size=1536),
}  # fmt: skip


def models() -> list[ModelSpec]:
    out = [_spec(f"Qwen2.5-{size}-Instruct", c, "qwen2", size, {"dense"} | ({"tied"} if c.tie_word_embeddings else set()),
                 "Qwen2.5") for size, c in QWEN25.items()]  # fmt: skip
    out += [_spec(f"Qwen3-{size}", c, "qwen3", size, {"dense"} | ({"tied"} if c.tie_word_embeddings else set()),
                  "Qwen3") for size, c in QWEN3.items()]  # fmt: skip
    out += [_spec(f"Qwen3-{size}", c, "qwen3moe", size, {"moe"}, "Qwen3") for size, c in QWEN3_MOE.items()]
    return out
