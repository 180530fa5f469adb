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

from draftwise.core.gguf.writer import Typed
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
        _gemma3n("gemma-3n-E2B-it", GEMMA3N_E2B, "E2B"),
        _gemma3n("gemma-3n-E4B-it", GEMMA3N_E4B, "E4B"),
        _gemma4(),
        _gemma4_assistant(),
    ]


# ------------------------------------------------------------------ Gemma 3n
# conversion/gemma.py Gemma3NModel: Gemma 3's keys (intermediate_size is a per-layer list,
# written as an int32 array), then altup.active_idx / num_inputs, the per-layer input width,
# shared_kv_layers, activation_sparsity_scale (the normal quantile of each layer's sparsity:
# 1.6449 for 0.95, -inf for 0) and the sliding-window pattern from layer_types. The token and
# per-layer embeddings are padded to vocab_size (262,400: vision/audio ids). Tensors:
# src/models/gemma3n.cpp (AltUp, LAuReL, per-layer inputs; altup/laurel/per_layer_model_proj
# stay in the output type, llama-quantize leaves them alone).
@dataclass(frozen=True)
class Gemma3nConfig:
    num_hidden_layers: int
    intermediate_size: int
    num_kv_shared_layers: int
    hidden_size: int = 2048
    num_attention_heads: int = 8
    num_key_value_heads: int = 2
    head_dim: int = 256
    hidden_size_per_layer_input: int = 256
    laurel_rank: int = 64
    vocab_size: int = 262400
    sliding_window: int = 512


def _sparsity(n_layer: int) -> list[float]:
    return [1.6448536 if i < 10 else float("-inf") for i in range(n_layer)]


def gemma3n_kv(c: Gemma3nConfig) -> list[tuple[str, object]]:
    from draftwise.testing.corpus.spec import bools, i32s

    n = c.num_hidden_layers
    return [
        ("block_count", u32(n)),
        ("context_length", u32(32768)),
        ("embedding_length", u32(c.hidden_size)),
        ("feed_forward_length", i32s([c.intermediate_size] * n)),
        ("attention.head_count", u32(c.num_attention_heads)),
        ("attention.head_count_kv", u32(c.num_key_value_heads)),
        ("rope.freq_base", f32(1000000.0)),
        ("rope.freq_base_swa", f32(10000.0)),
        ("attention.layer_norm_rms_epsilon", f32(1e-6)),
        ("attention.key_length", u32(c.head_dim)),
        ("attention.value_length", u32(c.head_dim)),
        ("final_logit_softcapping", f32(30.0)),
        ("attention.sliding_window", u32(c.sliding_window)),
        ("altup.active_idx", u32(0)),
        ("altup.num_inputs", u32(4)),
        ("embedding_length_per_layer_input", u32(c.hidden_size_per_layer_input)),
        ("attention.shared_kv_layers", u32(c.num_kv_shared_layers)),
        ("activation_sparsity_scale", Typed(_sparsity(n), "f32")),
        ("attention.sliding_window_pattern", bools([i % 5 != 4 for i in range(n)])),
    ]


def gemma3n_tensors(c: Gemma3nConfig) -> Table:
    t = Table()
    e, n, pl, hd = c.hidden_size, c.num_hidden_layers, c.hidden_size_per_layer_input, c.head_dim
    t.add("token_embd.weight", e, c.vocab_size)
    t.add("altup_proj.weight", e, e, 3)
    t.add("altup_unembd_proj.weight", e, e, 3)
    t.add("per_layer_token_embd.weight", pl * n, c.vocab_size)
    t.add("per_layer_model_proj.weight", e, pl * n)
    t.add("per_layer_proj_norm.weight", pl)
    for i in range(n):
        blocks.attention(t, i, e, c.num_attention_heads, c.num_key_value_heads, hd, qk_norm=True,
                         post_norm="post_attention_norm")  # fmt: skip
        blocks.ffn(t, i, e, c.intermediate_size, post_norm="post_ffw_norm")
        t.blk(i, "inp_gate.weight", e, pl)
        t.blk(i, "proj.weight", pl, e)
        t.blk(i, "post_norm.weight", e)
        t.blk(i, "altup_correct_coef.weight", 4, 4)
        t.blk(i, "altup_correct_scale.weight", e)
        t.blk(i, "altup_predict_coef.weight", 4, 16)
        t.blk(i, "altup_router.weight", e, 4)
        t.blk(i, "altup_router_norm.weight", e)
        t.blk(i, "laurel_l.weight", e, c.laurel_rank)
        t.blk(i, "laurel_r.weight", c.laurel_rank, e)
        t.blk(i, "laurel_post_norm.weight", e)
    t.add("output_norm.weight", e)
    return t


# Gemma 3n's 262,400 ids: the Gemma 3 pieces, then the vision/audio ids (only the boundary
# and soft tokens named, as the published config.json numbers them: boa 256000 (Gemma 3's
# <end_of_image> id), eoi 262144, image 262145, eoa 262272, audio 262273; the others are
# padding here).
GEMMA3N_VOCAB = Vocab("gemma3-270m", 262400, specials=(
    (256000, "<start_of_audio>", CONTROL), (262144, "<end_of_image>", CONTROL), (262145, "<image_soft_token>", CONTROL),
    (262272, "<end_of_audio>", CONTROL), (262273, "<audio_soft_token>", CONTROL)))
# google/gemma-3n-E2B-it and -E4B-it config.json (text_config)
GEMMA3N_E2B = Gemma3nConfig(num_hidden_layers=30, intermediate_size=8192, num_kv_shared_layers=10)
GEMMA3N_E4B = Gemma3nConfig(num_hidden_layers=35, intermediate_size=16384, num_kv_shared_layers=15)


def _gemma3n(name: str, c: Gemma3nConfig, size_label: str) -> ModelSpec:
    return ModelSpec(
        name=name, repo=f"google/{name}", arch="gemma3n", family="gemma",
        kv=kv_list("gemma3n", general(name.replace("-", " ").title(), size_label, basename="gemma-3n", finetune="it",
                                      license="gemma"), gemma3n_kv(c)),
        tensors=gemma3n_tensors(c).freeze(), vocab=GEMMA3N_VOCAB, tags=frozenset({"dense", "swa", "shared-kv", "tied"}),
        notes="token list: the Gemma 3 pieces; of the 256 vision/audio ids only four are named",
    )  # fmt: skip


# ------------------------------------------------------------------ Gemma 4
# conversion/gemma.py Gemma4Model. For google/gemma-4-26B-A4B-it the pinned source holds the
# converter's own output: models/ggml-vocab-gemma-4.gguf is that conversion without tensors,
# so its gemma4.* keys are copied as they are (key/value lengths 512 global / 256 sliding, KV
# heads per layer 8 / 2, 128 experts of 704, a dense FFN of 2112 beside them). Tensors:
# src/models/gemma4.cpp: full-attention layers share K as V (attention_k_eq_v: no attn_v),
# the experts' gate and up stay fused (`ffn_gate_up_exps`), the router's and the experts'
# scales are `ffn_gate_inp.scale` / `ffn_down_exps.scale`, one `rope_freqs` for the
# proportional RoPE of the full layers, a `layer_output_scale` per layer.
def _gemma4_source_kv(pinned: object = None) -> list[tuple[str, object]]:
    from draftwise.testing.corpus import quantize, sparse

    path = quantize.pinned_source() / "models" / "ggml-vocab-gemma-4.gguf"
    return [(k.removeprefix("gemma4."), v) for k, v in sparse.read_kv(path) if k.startswith("gemma4.")]


def gemma4_tensors(kv: dict[str, object]) -> Table:
    def val(key: str) -> object:
        v = kv[key]
        return v.value if isinstance(v, Typed) else v

    t = Table()
    e, n = int(val("embedding_length")), int(val("block_count"))
    n_head, n_ff, n_ff_exp, n_exp = int(val("attention.head_count")), int(val("feed_forward_length")), \
        int(val("expert_feed_forward_length")), int(val("expert_count"))  # fmt: skip
    kv_heads, swa = list(val("attention.head_count_kv")), list(val("attention.sliding_window_pattern"))
    hd_full, hd_swa = int(val("attention.key_length")), int(val("attention.key_length_swa"))
    t.add("rope_freqs.weight", hd_full // 2)
    t.add("token_embd.weight", e, GEMMA4_VOCAB.size)
    for i in range(n):
        hd = hd_swa if swa[i] else hd_full
        t.blk(i, "attn_norm.weight", e)
        t.blk(i, "attn_q.weight", e, hd * n_head)
        t.blk(i, "attn_k.weight", e, hd * kv_heads[i])
        if swa[i]:
            t.blk(i, "attn_v.weight", e, hd * kv_heads[i])
        t.blk(i, "attn_output.weight", hd * n_head, e)
        t.blk(i, "attn_q_norm.weight", hd)
        t.blk(i, "attn_k_norm.weight", hd)
        t.blk(i, "post_attention_norm.weight", e)
        t.blk(i, "layer_output_scale.weight", 1)
        blocks.ffn(t, i, e, n_ff, post_norm="post_ffw_norm")
        t.blk(i, "ffn_gate_inp.weight", e, n_exp)
        t.blk(i, "ffn_gate_inp.scale", e)
        t.blk(i, "pre_ffw_norm_2.weight", e)
        t.blk(i, "post_ffw_norm_1.weight", e)
        t.blk(i, "post_ffw_norm_2.weight", e)
        t.blk(i, "ffn_gate_up_exps.weight", e, 2 * n_ff_exp, n_exp)
        t.blk(i, "ffn_down_exps.weight", n_ff_exp, e, n_exp)
        t.blk(i, "ffn_down_exps.scale", n_exp)
    t.add("output_norm.weight", e)
    return t


GEMMA4_VOCAB = Vocab("vocab:gemma-4", 262144)


def _gemma4() -> ModelSpec:
    src = _gemma4_source_kv()
    name = "gemma-4-26B-A4B-it"
    return ModelSpec(
        name=name, repo=f"google/{name}", arch="gemma4", family="gemma",
        kv=kv_list("gemma4", general("Gemma 4 26B A4B It", "26B-A4B", basename="gemma-4", finetune="it",
                                     license="gemma"), [(k, v) for k, v in src if k != "file_type"]),
        tensors=gemma4_tensors(dict(src)).freeze(), vocab=GEMMA4_VOCAB,
        tags=frozenset({"moe", "swa", "tied"}),
    )  # fmt: skip


# The assistant (MTP drafter, architecture `gemma4-assistant`, Gemma4AssistantModel: Gemma 4's
# keys plus embedding_length_out = backbone_hidden_size and nextn_predict_layers = its block
# count; no K/V of its own: it reads the target's cache). Tensors:
# src/models/gemma4-assistant.cpp. Its config.json is not at hand: the geometry below is
# ASSUMED (4 blocks, the last one full attention, 1024 wide, 8 heads, FFN 4096), only the
# backbone width, the head sizes and the vocabulary are the 26B-A4B's.
ASSISTANT_EMBD, ASSISTANT_LAYERS, ASSISTANT_HEADS, ASSISTANT_FF = 1024, 4, 8, 4096


def _gemma4_assistant() -> ModelSpec:
    from draftwise.testing.corpus.spec import bools, i32s

    src = dict(_gemma4_source_kv())
    backbone = int(src["embedding_length"].value)  # type: ignore[union-attr]
    hd_full, hd_swa = int(src["attention.key_length"].value), int(src["attention.key_length_swa"].value)  # type: ignore[union-attr]
    swa = [i < ASSISTANT_LAYERS - 1 for i in range(ASSISTANT_LAYERS)]
    keep = ("context_length", "rope.freq_base", "rope.freq_base_swa", "attention.layer_norm_rms_epsilon",
            "attention.key_length", "attention.value_length", "final_logit_softcapping", "attention.sliding_window",
            "embedding_length_per_layer_input", "attention.key_length_swa", "attention.value_length_swa",
            "rope.dimension_count", "rope.dimension_count_swa")  # fmt: skip
    kv: list[tuple[str, object]] = [
        ("block_count", u32(ASSISTANT_LAYERS)), ("embedding_length", u32(ASSISTANT_EMBD)),
        ("feed_forward_length", u32(ASSISTANT_FF)), ("attention.head_count", u32(ASSISTANT_HEADS)),
        ("attention.head_count_kv", i32s([2] * ASSISTANT_LAYERS)),
        ("attention.shared_kv_layers", u32(ASSISTANT_LAYERS)),
        ("attention.sliding_window_pattern", bools(swa)),
        *((k, src[k]) for k in keep if k in src),
        ("embedding_length_out", u32(backbone)), ("nextn_predict_layers", u32(ASSISTANT_LAYERS)),
    ]  # fmt: skip
    t = Table()
    e = ASSISTANT_EMBD
    t.add("rope_freqs.weight", hd_full // 2)
    t.add("token_embd.weight", e, GEMMA4_VOCAB.size)
    t.add("nextn.pre_projection.weight", 2 * backbone, e)
    t.add("nextn.post_projection.weight", e, backbone)
    for i in range(ASSISTANT_LAYERS):
        hd = hd_swa if swa[i] else hd_full
        t.blk(i, "attn_norm.weight", e)
        t.blk(i, "attn_q.weight", e, hd * ASSISTANT_HEADS)
        t.blk(i, "attn_output.weight", hd * ASSISTANT_HEADS, e)
        t.blk(i, "attn_q_norm.weight", hd)
        t.blk(i, "post_attention_norm.weight", e)
        t.blk(i, "layer_output_scale.weight", 1)
        blocks.ffn(t, i, e, ASSISTANT_FF, post_norm="post_ffw_norm")
    t.add("output_norm.weight", e)
    name = "gemma-4-26B-A4B-it-assistant"
    return ModelSpec(
        name=name, repo=f"google/{name}", arch="gemma4-assistant", family="gemma",
        kv=kv_list("gemma4-assistant", general("Gemma 4 26B A4B It Assistant", "26B-A4B", basename="gemma-4",
                                               finetune="it-assistant", license="gemma"), kv),
        tensors=t.freeze(), vocab=GEMMA4_VOCAB, tags=frozenset({"mtp", "assistant"}),
        companion_of="gemma-4-26B-A4B-it",
        notes="geometry ASSUMED (the assistant's config.json is not at hand): 4 blocks x 1024, FFN 4096",
    )  # fmt: skip
