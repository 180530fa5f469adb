"""Mistral AI: Mistral 7B v0.3, Mistral Nemo, Mistral Small 3 (24B), Mixtral 8x7B (all
architecture `llama`: `MistralForCausalLM` / `MixtralForCausalLM` convert with
`conversion/llama.py` LlamaModel; Mixtral's per-expert w1/w2/w3 are stacked into
`ffn_gate/down/up_exps`, its router is `ffn_gate_inp`).

Tokenizers (none of Mistral's lists is among the pinned vocabularies):
- v0.1 (Mixtral, 32,000 SentencePiece ids): models/ggml-vocab-llama-spm.gguf (Llama 2's list)
  stands in: the same size, special ids (unk 0, bos 1, eos 2) and byte tokens, not Mistral's
  pieces;
- v0.3 (32,768 ids): the same stand-in with the v0.3 layout: unk/bos/eos, the 768 control
  tokens at ids 3-770 (`[INST]`, `[/INST]`, `[TOOL_CALLS]`, `[AVAILABLE_TOOLS]`,
  `[/AVAILABLE_TOOLS]`, `[TOOL_RESULTS]`, `[/TOOL_RESULTS]`, then `[control_N]`), then the byte
  tokens and pieces;
- tekken (Nemo, Small 3: 131,072 byte-level BPE ids): synthesized: ids 0-999 control tokens
  (`<unk>`, `<s>`, `</s>`, `[INST]`, ... `<SPECIAL_N>`), then byte-level pieces (the Llama 3
  list's, then made-up ones).
"""

from __future__ import annotations

from draftwise.testing.corpus.families.llama import LlamaConfig, spec
from draftwise.testing.corpus.spec import ModelSpec, Vocab, u32

CONTROL = 3
_V03_NAMED = ["[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
              "[/TOOL_RESULTS]"]  # fmt: skip
V01_VOCAB = Vocab("vocab:llama-spm", 32000)
V03_VOCAB = Vocab(
    "synth:llama-spm", 32768, synth={"keep_head": 3, "first_normal": 771},
    specials=tuple((3 + k, _V03_NAMED[k] if k < len(_V03_NAMED) else f"[control_{k + 1}]", CONTROL)
                   for k in range(768)),
)  # fmt: skip
_TEKKEN_NAMED = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
                 "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
                 "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"]  # fmt: skip
TEKKEN_VOCAB = Vocab(
    "synth:llama-bpe", 131072, synth={"first_normal": 1000},
    specials=tuple((k, _TEKKEN_NAMED[k] if k < len(_TEKKEN_NAMED) else f"<SPECIAL_{k}>", CONTROL) for k in range(1000)),
    overrides=(("tokenizer.ggml.pre", "tekken"), ("tokenizer.ggml.bos_token_id", u32(1)),
               ("tokenizer.ggml.eos_token_id", u32(2)), ("tokenizer.ggml.unknown_token_id", u32(0)),
               ("tokenizer.ggml.padding_token_id", u32(11))),
)  # fmt: skip

# mistralai/Mistral-7B-Instruct-v0.3 config.json
MISTRAL_7B = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_hidden_layers=32,
                         num_key_value_heads=8, max_position_embeddings=32768, rope_theta=1000000.0,
                         rms_norm_eps=1e-5, vocab_size=32768)  # fmt: skip
# mistralai/Mistral-Nemo-Instruct-2407 config.json
NEMO = LlamaConfig(hidden_size=5120, intermediate_size=14336, num_attention_heads=32, num_hidden_layers=40,
                   num_key_value_heads=8, max_position_embeddings=1024000, rope_theta=1000000.0, rms_norm_eps=1e-5,
                   vocab_size=131072, head_dim=128)  # fmt: skip
# mistralai/Mistral-Small-24B-Instruct-2501 config.json
SMALL_24B = LlamaConfig(hidden_size=5120, intermediate_size=32768, num_attention_heads=32, num_hidden_layers=40,
                        num_key_value_heads=8, max_position_embeddings=32768, rope_theta=100000000.0,
                        rms_norm_eps=1e-5, vocab_size=131072, head_dim=128)  # fmt: skip
# mistralai/Mixtral-8x7B-Instruct-v0.1 config.json
MIXTRAL = LlamaConfig(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_hidden_layers=32,
                      num_key_value_heads=8, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-5,
                      vocab_size=32000, num_local_experts=8, num_experts_per_tok=2)  # fmt: skip

_SPM_NOTE = "token list: Llama 2's SentencePiece list stands in for Mistral's (same size, types and special ids)"
_TEKKEN_NOTE = "token list synthesized (tekken is not at hand): right size, types and special ids"


def models() -> list[ModelSpec]:
    f = "mistral"
    return [
        spec("Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-Instruct-v0.3", MISTRAL_7B, V03_VOCAB, "7B",
             basename="Mistral", tags=frozenset({"dense"}), notes=_SPM_NOTE, family=f),
        spec("Mistral-Nemo-Instruct-2407", "mistralai/Mistral-Nemo-Instruct-2407", NEMO, TEKKEN_VOCAB, "12B",
             basename="Mistral-Nemo", tags=frozenset({"dense"}), notes=_TEKKEN_NOTE, family=f),
        spec("Mistral-Small-24B-Instruct-2501", "mistralai/Mistral-Small-24B-Instruct-2501", SMALL_24B, TEKKEN_VOCAB,
             "24B", basename="Mistral-Small", tags=frozenset({"dense"}), notes=_TEKKEN_NOTE, family=f),
        spec("Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1", MIXTRAL, V01_VOCAB, "8x7B",
             basename="Mixtral", tags=frozenset({"moe"}), notes=_SPM_NOTE, family=f),
    ]
