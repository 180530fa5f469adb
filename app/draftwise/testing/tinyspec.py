"""What a tiny test model is: its geometry and identity (`TinyModel`) and its token list.

The token list is the model's vocabulary identity, which the pairing rule compares
(core/speculation/pairing.py): models with the same `vocab` string share one, and the
variants (padding, other tokenizer models, renamed tokens, extra specials) are fields of
`TinyModel`. `vocabulary(model)` builds the list the writer (tinymodels.py) stores; the tensor
sets (tinytensors.py) and the ready-made cases (tinydrafts.py) size themselves from the same
`TinyModel`. Numbers and lists only: nothing here writes a file or needs the `gguf` package.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

# SentencePiece token types as llama.cpp reads them (llama_token_attr in llama-vocab.cpp).
_NORMAL, _UNKNOWN, CONTROL, UNUSED, _BYTE = 1, 2, 3, 5, 6
_CONTROL = CONTROL


@dataclass(frozen=True)
class TinyModel:
    """Geometry and identity of a tiny model. Defaults give a loadable 2-layer llama."""

    arch: str = "llama"
    name: str = "tiny-llama"
    n_embd: int = 64
    n_layer: int = 2
    n_head: int = 4
    n_head_kv: int = 2
    n_ff: int = 128
    n_ctx_train: int = 4096
    # The vocabulary's identity: models with the same `vocab` string share a token list.
    vocab: str = "base"
    n_pieces: int = 64  # word pieces on top of the 3 specials and 256 byte tokens
    dtype: str = "F32"  # F32, F16, Q8_0 or Q4_0 for the 2-D weights
    sliding_window: int | None = None
    n_expert: int = 0
    n_expert_used: int = 0
    # MTP head: the last `nextn_predict_layers` of the `n_layer` blocks (GGUF block_count
    # counts them) hold the `blk.N.nextn.*` tensors.
    nextn_predict_layers: int = 0
    # MoE geometry of glm4moe-style models (ignored by llama).
    n_expert_shared: int = 0
    n_ff_exp: int = 0  # expert feed-forward length; 0 means n_ff
    n_layer_dense_lead: int = 0
    # Feature-reading drafts (eagle3, dflash): target layers whose hidden states they read,
    # and the target's hidden size (0 means n_embd).
    target_layers: tuple[int, ...] = ()
    target_hidden_size: int = 0
    seed: int = 0
    tie_embeddings: bool = False
    # Speed fixtures (`paying_target`): every block's output projections (attn_output,
    # ffn_down) are zero, so each block adds exactly nothing to the residual stream and the
    # next token depends on the current one alone, whatever the depth; the special tokens'
    # output rows are zero too, so generation never ends on them.
    zero_output: bool = False
    # Shift the output head's word rows by this many places (specials untouched): a draft
    # whose every guess is the target's guess moved along, so none is ever accepted.
    shift_head: int = 0
    extra_kv: dict[str, Any] = field(default_factory=dict)
    # Vocabulary variants. `n_pad` entries `[PAD<id>]` of type `pad_type` (UNUSED, as
    # conversion pads a vocabulary to a round size) follow the pieces, with zero embedding
    # and output rows, so greedy decoding never picks them.
    n_pad: int = 0
    pad_type: int = UNUSED
    # "llama" (SPM, byte tokens <0xXX>) or "gpt2" (BPE, GPT-2's byte-level characters).
    tokenizer_model: str = "llama"
    tokenizer_pre: str | None = "default"
    add_bos: bool | None = True  # None: the key is not written (the engine's default)
    add_eos: bool | None = None
    bos_id: int | None = 1
    eos_id: int | None = 2
    # (id, text) pairs: these tokens get another text (and the NORMAL type).
    renamed: tuple[tuple[int, str], ...] = ()
    # (text, type) tokens appended after the pieces and before the padding, with zero
    # embedding and output rows like the padding: a model's own specials (Gemma 3 4B's
    # `<image_soft_token>` CONTROL before its `[PADn]`, Phi-3's `<|end|>`).
    extra_tokens: tuple[tuple[str, int], ...] = ()
    # Output rows of those tokens and the padding: 0 writes zero rows (never sampled); a
    # scale writes random rows that strong, so the model writes them at temperature 1.0.
    extra_rows: float = 0.0

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def n_trunk(self) -> int:
        """Blocks of the main model, without the MTP (nextn) blocks."""
        return self.n_layer - self.nextn_predict_layers

    @property
    def n_vocab(self) -> int:
        return 3 + 256 + self.n_pieces + len(self.extra_tokens) + self.n_pad


def gpt2_byte_chars() -> list[str]:
    """GPT-2's bytes_to_unicode: the character a byte-level BPE vocabulary stores per byte."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("\xa1"), ord("\xac") + 1), *range(ord("\xae"), 256)]
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


def vocabulary(model: TinyModel) -> tuple[list[str], list[float], list[int]]:
    """An SPM vocabulary with byte fallback (so any text tokenizes), or a byte-level BPE one."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [_UNKNOWN, _CONTROL, _CONTROL]
    if model.tokenizer_model == "gpt2":
        tokens += gpt2_byte_chars()
        types += [_NORMAL] * 256
    else:
        tokens += [f"<0x{b:02X}>" for b in range(256)]
        types += [_BYTE] * 256
    # Pieces differ by vocabulary name (a permuted alphabet seeded by the name), so two
    # vocabularies really have other token lists; index i spelled in base 26 keeps them
    # unique for any size.
    letters = list("abcdefghijklmnopqrstuvwxyz")
    random.Random(hashlib.sha256(model.vocab.encode()).hexdigest()).shuffle(letters)
    pieces: list[str] = []
    for i in range(model.n_pieces):
        word, n = "", i + 26  # from 2 letters up
        while n:
            n, r = divmod(n, 26)
            word = letters[r] + word
        pieces.append("\u2581" + word)
    tokens += pieces
    types += [_NORMAL] * len(pieces)
    scores = [0.0] * 259 + [-float(k) for k in range(len(pieces))]
    for text, kind in model.extra_tokens:
        tokens.append(text)
        types.append(kind)
        scores.append(-1e4)
    if model.n_pad:
        first = len(tokens)
        tokens += [f"[PAD{i}]" for i in range(first, first + model.n_pad)]
        types += [model.pad_type] * model.n_pad
        scores += [-1e4] * model.n_pad
    for token_id, text in model.renamed:
        tokens[token_id] = text
        types[token_id] = _NORMAL
    return tokens, scores, types
