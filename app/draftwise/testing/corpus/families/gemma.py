"""Google Gemma 2 (`gemma2`) and Gemma 3 (`gemma3`).

Converter: `conversion/gemma.py` Gemma2Model (its own set_gguf_parameters: no RoPE keys,
both softcaps, sliding_window) and Gemma3Model (TextModel's keys, then context/head/eps/
key_length/freq_base again, which overwrite in place, the sliding window; `rope_scaling`
linear for 4B and up; `rope_local_base_freq` becomes rope.freq_base_swa). Tied embeddings
(no `output.weight`). Tensors: `src/models/gemma2.cpp`, `gemma3.cpp` (post-attention and
post-FFN norms; Gemma 3 per-head Q/K norms).

Tokenizer: the real Gemma 3 270M's (SentencePiece, 262,144 pieces). Gemma 3 4B/12B/27B
convert to 262,208 ids: the converter's list is vocab_size long, `<image_soft_token>`
(added_tokens.json, special) at 262144 as CONTROL, then `[PAD262145]`..`[PAD262207]` UNUSED
(`_create_vocab_sentencepiece`). Gemma 2's own 256,000-piece list is not at hand: the Gemma 3
list cut to 256,000 stands in (the same special ids 0-3 and SentencePiece types; not
Gemma 2's pieces).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.testing.corpus import blocks
from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

CONTROL = 3
GEMMA3_VOCAB = Vocab("gemma3-270m", 262144)
GEMMA3_MM_VOCAB = Vocab("gemma3-270m", 262208, specials=((262144, "<image_soft_token>", CONTROL),))
GEMMA2_VOCAB = Vocab("gemma3-270m", 256000)


@dataclass(frozen=True)
class GemmaConfig:
    hidden_size: int
    intermediate_size: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    num_hidden_layers: int
    sliding_window: int
    vocab_size: int
    max_position_embeddings: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 1000000.0
    rope_local_base_freq: float | None = 10000.0
    linear_rope_factor: float | None = None
    attn_logit_softcapping: float | None = None
    final_logit_softcapping: float | None = None


def gemma2_kv(c: GemmaConfig) -> list[tuple[str, object]]:
    return [
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("block_count", u32(c.num_hidden_layers)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(c.num_key_value_heads)),
        ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps)),
        ("attention.key_length", u32(c.head_dim)),
        ("attention.value_length", u32(c.head_dim)),
        ("attn_logit_softcapping", f32(c.attn_logit_softcapping or 0.0)),
        ("final_logit_softcapping", f32(c.final_logit_softcapping or 0.0)),
        ("attention.sliding_window", u32(c.sliding_window)),
    ]


def gemma3_kv(c: GemmaConfig) -> list[tuple[str, object]]:
    kv: list[tuple[str, object]] = [
        ("block_count", u32(c.num_hidden_layers)),
        ("context_length", u32(c.max_position_embeddings)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", u32(c.intermediate_size)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(c.num_key_value_heads)),
    ]
    if c.linear_rope_factor:
        kv += [("rope.scaling.type", "linear"), ("rope.scaling.factor", f32(c.linear_rope_factor))]
    kv.append(("rope.freq_base", f32(c.rope_theta)))
    if c.rope_local_base_freq is not None:
        kv.append(("rope.freq_base_swa", f32(c.rope_local_base_freq)))
    kv += [
        ("attention.layer_norm_rms_epsilon", f32(c.rms_norm_eps)),
        ("attention.key_length", u32(c.head_dim)),
        ("attention.value_length", u32(c.head_dim)),
        ("attention.sliding_window", u32(c.sliding_window)),
    ]
    return kv


def gemma_tensors(c: GemmaConfig, *, qk_norm: bool) -> Table:
    t = Table()
    blocks.embeddings(t, c.hidden_size, c.vocab_size)
    for i in range(c.num_hidden_layers):
        blocks.attention(t, i, c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                         qk_norm=qk_norm, post_norm="post_attention_norm")  # fmt: skip
        blocks.ffn(t, i, c.hidden_size, c.intermediate_size, post_norm="post_ffw_norm")
    blocks.head(t, c.hidden_size, c.vocab_size, tied=True)
    return t


def _spec(name: str, c: GemmaConfig, arch: str, size_label: str, vocab: Vocab, *, notes: str = "") -> ModelSpec:
    kv = gemma2_kv(c) if arch == "gemma2" else gemma3_kv(c)
    return ModelSpec(
        name=name, repo=f"google/{name}", arch=arch, family="gemma",
        kv=kv_list(arch, general(name.replace("-", " ").title(), size_label, basename=name.rsplit("-", 2)[0],
                                 finetune="it", license="gemma"), kv),
        tensors=gemma_tensors(c, qk_norm=arch == "gemma3").freeze(), vocab=vocab,
        tags=frozenset({"dense", "swa", "tied"} | ({"padded-vocab"} if c.vocab_size == 262208 else set())),
        notes=notes,
    )  # fmt: skip


_GEMMA2_NOTE = "token list: the Gemma 3 list cut to Gemma 2's 256,000 ids stands in for Gemma 2's own"
# google/gemma-2-2b-it config.json
GEMMA2_2B = GemmaConfig(2304, 9216, 8, 4, 256, 26, 4096, 256000, 8192, rope_local_base_freq=None,
                        attn_logit_softcapping=50.0, final_logit_softcapping=30.0)  # fmt: skip
# google/gemma-2-9b-it config.json
GEMMA2_9B = GemmaConfig(3584, 14336, 16, 8, 256, 42, 4096, 256000, 8192, rope_local_base_freq=None,
                        attn_logit_softcapping=50.0, final_logit_softcapping=30.0)  # fmt: skip
# google/gemma-3-270m-it config.json
GEMMA3_270M = GemmaConfig(640, 2048, 4, 1, 256, 18, 512, 262144, 32768)
# google/gemma-3-1b-it config.json
GEMMA3_1B = GemmaConfig(1152, 6912, 4, 1, 256, 26, 512, 262144, 32768)
# google/gemma-3-4b-it config.json (text_config)
GEMMA3_4B = GemmaConfig(2560, 10240, 8, 4, 256, 34, 1024, 262208, 131072, linear_rope_factor=8.0)
# google/gemma-3-12b-it config.json (text_config)
GEMMA3_12B = GemmaConfig(3840, 15360, 16, 8, 256, 48, 1024, 262208, 131072, linear_rope_factor=8.0)
# google/gemma-3-27b-it config.json (text_config; query_pre_attn_scalar 168 is not written)
GEMMA3_27B = GemmaConfig(5376, 21504, 32, 16, 128, 62, 1024, 262208, 131072, linear_rope_factor=8.0)


def models() -> list[ModelSpec]:
    return [
        _spec("gemma-2-2b-it", GEMMA2_2B, "gemma2", "2B", GEMMA2_VOCAB, notes=_GEMMA2_NOTE),
        _spec("gemma-2-9b-it", GEMMA2_9B, "gemma2", "9B", GEMMA2_VOCAB, notes=_GEMMA2_NOTE),
        _spec("gemma-3-270m-it", GEMMA3_270M, "gemma3", "270M", GEMMA3_VOCAB),
        _spec("gemma-3-1b-it", GEMMA3_1B, "gemma3", "1B", GEMMA3_VOCAB),
        _spec("gemma-3-4b-it", GEMMA3_4B, "gemma3", "4B", GEMMA3_MM_VOCAB),
        _spec("gemma-3-12b-it", GEMMA3_12B, "gemma3", "12B", GEMMA3_MM_VOCAB),
        _spec("gemma-3-27b-it", GEMMA3_27B, "gemma3", "27B", GEMMA3_MM_VOCAB),
    ]
