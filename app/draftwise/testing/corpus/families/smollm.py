"""Hugging Face SmolLM2 (architecture `llama`) and SmolLM3 (`smollm3`: the Llama keys; the
engine leaves RoPE out of every fourth layer itself).

Converter: `conversion/llama.py` LlamaModel / SmolLM3Model (a 49,152-id vocabulary gets
`add_bos_token = false`, LlamaModel.set_vocab). Tensors: `src/models/llama.cpp`,
`smollm3.cpp`; both tie the output to token_embd.

Tokenizers: SmolLM2's 49,152-id list is not at hand: the StarCoder list
(models/ggml-vocab-starcoder.gguf, the same size and byte-level BPE) stands in, with
SmolLM2's 17 special tokens at ids 0-16 (`<|endoftext|>`, `<|im_start|>`, `<|im_end|>`, ...).
SmolLM3 uses the Llama 3 tokenizer (models/ggml-vocab-llama-bpe.gguf, 128,256 ids), eos
`<|im_end|>` (128012) as its tokenizer_config.json sets it.
"""

from __future__ import annotations

from draftwise.testing.corpus.families.llama import LlamaConfig, spec
from draftwise.testing.corpus.spec import ModelSpec, Vocab, u32

CONTROL = 3
_SMOL_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>", "<reponame>", "<file_sep>",
                  "<filename>", "<gh_stars>", "<issue_start>", "<issue_comment>", "<issue_closed>", "<jupyter_start>",
                  "<jupyter_text>", "<jupyter_code>", "<jupyter_output>", "<jupyter_script>", "<empty_output>"]  # fmt: skip
SMOLLM2_VOCAB = Vocab(
    "synth:starcoder", 49152, synth={"first_normal": 17},
    specials=tuple((i, t, CONTROL) for i, t in enumerate(_SMOL_SPECIALS)),
    overrides=(("tokenizer.ggml.pre", "smollm"), ("tokenizer.ggml.bos_token_id", u32(1)),
               ("tokenizer.ggml.eos_token_id", u32(2)), ("tokenizer.ggml.unknown_token_id", u32(0)),
               ("tokenizer.ggml.padding_token_id", u32(2)), ("tokenizer.ggml.add_bos_token", False)),
)  # fmt: skip
SMOLLM3_VOCAB = Vocab("vocab:llama-bpe", 128256, overrides=(("tokenizer.ggml.eos_token_id", u32(128012)),))

# HuggingFaceTB/SmolLM2-135M-Instruct config.json
SMOLLM2_135M = LlamaConfig(hidden_size=576, intermediate_size=1536, num_attention_heads=9, num_hidden_layers=30,
                           num_key_value_heads=3, max_position_embeddings=8192, rope_theta=100000.0,
                           rms_norm_eps=1e-5, vocab_size=49152, tie_word_embeddings=True)  # fmt: skip
# HuggingFaceTB/SmolLM2-360M-Instruct config.json
SMOLLM2_360M = LlamaConfig(hidden_size=960, intermediate_size=2560, num_attention_heads=15, num_hidden_layers=32,
                           num_key_value_heads=5, max_position_embeddings=8192, rope_theta=100000.0,
                           rms_norm_eps=1e-5, vocab_size=49152, tie_word_embeddings=True)  # fmt: skip
# HuggingFaceTB/SmolLM2-1.7B-Instruct config.json
SMOLLM2_17B = LlamaConfig(hidden_size=2048, intermediate_size=8192, num_attention_heads=32, num_hidden_layers=24,
                          num_key_value_heads=32, max_position_embeddings=8192, rope_theta=130000.0,
                          rms_norm_eps=1e-5, vocab_size=49152, tie_word_embeddings=True)  # fmt: skip
# HuggingFaceTB/SmolLM3-3B config.json
SMOLLM3_3B = LlamaConfig(hidden_size=2048, intermediate_size=11008, num_attention_heads=16, num_hidden_layers=36,
                         num_key_value_heads=4, max_position_embeddings=65536, rope_theta=5000000.0,
                         rms_norm_eps=1e-6, vocab_size=128256, tie_word_embeddings=True)  # fmt: skip

_NOTE = "token list: the StarCoder list stands in for SmolLM2's (same size and type, SmolLM2's special ids)"


def models() -> list[ModelSpec]:
    tags = frozenset({"dense", "tied"})
    return [
        spec("SmolLM2-135M-Instruct", "HuggingFaceTB/SmolLM2-135M-Instruct", SMOLLM2_135M, SMOLLM2_VOCAB, "135M",
             basename="SmolLM2", tags=tags, notes=_NOTE, family="smollm"),
        spec("SmolLM2-360M-Instruct", "HuggingFaceTB/SmolLM2-360M-Instruct", SMOLLM2_360M, SMOLLM2_VOCAB, "360M",
             basename="SmolLM2", tags=tags, notes=_NOTE, family="smollm"),
        spec("SmolLM2-1.7B-Instruct", "HuggingFaceTB/SmolLM2-1.7B-Instruct", SMOLLM2_17B, SMOLLM2_VOCAB, "1.7B",
             basename="SmolLM2", tags=tags, notes=_NOTE, family="smollm"),
        spec("SmolLM3-3B", "HuggingFaceTB/SmolLM3-3B", SMOLLM3_3B, SMOLLM3_VOCAB, "3B", basename="SmolLM3",
             finetune=None, tags=tags, arch="smollm3", family="smollm"),
    ]
