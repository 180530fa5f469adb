"""OpenAI gpt-oss 20b / 120b (architecture `gpt-oss`; the engine's `openai-moe` model).

Converter: `conversion/gpt_oss.py` GptOssModel (TextModel's keys with the YaRN rope_scaling,
head_dim as key/value_length, then `attention.sliding_window` and
`expert_feed_forward_length`); the published checkpoint's experts are MXFP4 and are
repacked as MXFP4 (`repack_mxfp4`, gate_up split into gate and up), the rest converts to
the output type. The common download is the MXFP4 file (ggml-org/gpt-oss-*-GGUF): that is
`llama-quantize ... MXFP4_MOE` of the conversion (`llama_tensor_get_type`: 3-D experts
MXFP4, every other matrix Q8_0), which the dry run computes here. Tensors:
`src/models/openai-moe.cpp` (attention sinks, biases everywhere, post-attention norm).

Tokenizer: o200k_harmony is not among the pinned vocabularies. Synthesized: 201,088 ids, the
first 199,998 normal byte-level BPE pieces (the Llama 3 list's, then made-up ones), the
harmony specials at their published ids (`<|startoftext|>` 199998 ... `<|call|>` 200012,
`<|endofprompt|>` 200018, `<|reserved_N|>` elsewhere up to 201087), all CONTROL as added
special tokens convert; bos 199998, eos 200002 (`<|return|>`), pad 199999 as in the
published tokenizer_config.json / config.json.
"""

from __future__ import annotations

from draftwise.testing.corpus import blocks
from draftwise.testing.corpus.spec import ModelSpec, Table, Vocab, f32, general, kv_list, u32

ARCH = "gpt-oss"
CONTROL = 3
N_VOCAB = 201088
_NAMED = {199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200003: "<|constrain|>",
          200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>",
          200012: "<|call|>", 200018: "<|endofprompt|>"}  # fmt: skip
HARMONY_SPECIALS = tuple((i, _NAMED.get(i, f"<|reserved_{i}|>"), CONTROL) for i in range(199998, N_VOCAB))
HARMONY_VOCAB = Vocab(
    "synth:llama-bpe", N_VOCAB, specials=HARMONY_SPECIALS, synth={"n_normal": 199998},
    overrides=(("tokenizer.ggml.pre", "gpt-4o"), ("tokenizer.ggml.bos_token_id", u32(199998)),
               ("tokenizer.ggml.eos_token_id", u32(200002)), ("tokenizer.ggml.padding_token_id", u32(199999))),
)  # fmt: skip

N_EMBD, N_HEAD, N_HEAD_KV, HEAD_DIM, N_FF = 2880, 64, 8, 64, 2880


def gpt_oss_kv(n_layer: int, n_expert: int) -> list[tuple[str, object]]:
    # openai/gpt-oss-20b and -120b config.json: rope_scaling {"rope_type": "yarn", "factor": 32.0,
    # "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096}.
    return [
        ("block_count", u32(n_layer)),
        ("context_length", u32(131072)),
        ("embedding_length", u32(N_EMBD)),
        ("feed_forward_length", u32(N_FF)),
        ("attention.head_count", u32(N_HEAD)),
        ("attention.head_count_kv", u32(N_HEAD_KV)),
        ("rope.scaling.type", "yarn"),
        ("rope.scaling.factor", f32(32.0)),
        ("rope.scaling.original_context_length", u32(4096)),
        ("rope.scaling.yarn_beta_fast", f32(32.0)),
        ("rope.scaling.yarn_beta_slow", f32(1.0)),
        ("rope.freq_base", f32(150000.0)),
        ("attention.layer_norm_rms_epsilon", f32(1e-5)),
        ("expert_count", u32(n_expert)),
        ("expert_used_count", u32(4)),
        ("attention.key_length", u32(HEAD_DIM)),
        ("attention.value_length", u32(HEAD_DIM)),
        ("attention.sliding_window", u32(128)),
        ("expert_feed_forward_length", u32(N_FF)),
    ]


def gpt_oss_tensors(n_layer: int, n_expert: int) -> Table:
    t = Table()
    blocks.embeddings(t, N_EMBD, N_VOCAB)
    for i in range(n_layer):
        blocks.attention(t, i, N_EMBD, N_HEAD, N_HEAD_KV, HEAD_DIM, qkv_bias=True, o_bias=True,
                         post_norm="post_attention_norm")  # fmt: skip
        t.blk(i, "attn_sinks.weight", N_HEAD)
        t.blk(i, "ffn_gate_inp.weight", N_EMBD, n_expert)
        t.blk(i, "ffn_gate_inp.bias", n_expert)
        for w, ne in (("gate", (N_EMBD, N_FF)), ("up", (N_EMBD, N_FF)), ("down", (N_FF, N_EMBD))):
            t.blk(i, f"ffn_{w}_exps.weight", *ne, n_expert, dtype="MXFP4")
            t.blk(i, f"ffn_{w}_exps.bias", ne[1], n_expert)
    blocks.head(t, N_EMBD, N_VOCAB, tied=False)
    return t


def _spec(size: str, n_layer: int, n_expert: int) -> ModelSpec:
    name = f"gpt-oss-{size}"
    return ModelSpec(
        name=name, repo=f"openai/{name}", arch=ARCH, family="gpt_oss",
        kv=kv_list(ARCH, general(f"Gpt Oss {size}", size.upper(), basename="gpt-oss", license="apache-2.0"),
                   gpt_oss_kv(n_layer, n_expert)),
        tensors=gpt_oss_tensors(n_layer, n_expert).freeze(), vocab=HARMONY_VOCAB, quant="MXFP4_MOE",
        tags=frozenset({"moe", "swa", "gpt-oss"}),
        notes="token list synthesized (o200k_harmony not at hand): right size, types and special ids",
    )  # fmt: skip


def models() -> list[ModelSpec]:
    return [_spec("20b", 24, 32), _spec("120b", 36, 128)]
