"""A corpus geometry that drafts: a copy of a sparse MTP model whose few written tensors make
the model and its MTP head agree on one word.

A corpus file's weights are a hole (zeros): the engine loads it, plans it and creates the MTP
draft context exactly as for the published file, but its head never drafts. A zero head's
probabilities are flat over the vocabulary, below any p-min (the field's 0.75 for Qwen3.5).
Real weights cost gigabytes. This writes a copy of the published header, holes included, and
fills five small tensors and the token embeddings so that the engine's own graph gives:

- every token's embedding a constant row, so after blocks whose weights are all zero (their
  residuals add nothing), the last hidden state is that constant row; the final norm (ones)
  turns it into a row of ones;
- the embedding row of `word` ten times the others: the tied output head (llama.cpp reuses
  the embeddings when the file has no `output.weight`) then scores `word` ten times the rest
  (at 1024 wide, 92 logits above them), so the model writes `word` for ever, probability 1;
- the MTP block's norms (ones) and `eh_proj` (constant) turn any input into a constant row,
  which its own head norm turns into ones again: the head predicts `word` too, with
  probability 1, so every drafted token is accepted.

Its words mean nothing ("word word word..."); its drafting is the engine's own, end to end
(the window's drafting figures, the engine's acceptance lines). Only for tests and the docs'
screenshots: it is not a model anyone downloads. The block encodings follow ggml-common.h
(`block_q4_K`, `block_q6_K`).
"""

from __future__ import annotations

import struct
from pathlib import Path

from draftwise.core.gguf import reader

_QK_K = 256
_ROWS_PER_WRITE = 4096


def _f16(x: float) -> bytes:
    return struct.pack("<e", x)


def q6_k_constant(value: float) -> bytes:
    """One block_q6_K whose 256 values are all `value`: q = 33 (-32 -> 1), every scale 1, d."""
    # 33 = 0b10_0001: the low nibble 1 in each half of ql, the high bits 0b10 in each quarter of qh.
    return b"\x11" * (_QK_K // 2) + b"\xaa" * (_QK_K // 4) + b"\x01" * (_QK_K // 16) + _f16(value)


def q4_k_constant(value: float) -> bytes:
    """One block_q4_K whose 256 values are all `value`: every q 1, every sub-block scale 1 and
    min 0 (the 6-bit packing of get_scale_min_k4), d = value, dmin = 0."""
    scales = bytes([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1])
    return _f16(value) + _f16(0.0) + scales + b"\x11" * (_QK_K // 2)


def _constant_row(type_name: str, n: int, value: float) -> bytes:
    if n % _QK_K:
        raise ValueError(f"a row of {n} is not a whole number of {type_name} blocks")
    if type_name == "F32":
        return struct.pack("<f", value) * n
    if type_name == "Q6_K":
        return q6_k_constant(value) * (n // _QK_K)
    if type_name == "Q4_K":
        return q4_k_constant(value) * (n // _QK_K)
    raise ValueError(f"no constant encoding of {type_name} here")


def token_id(header: reader.GGUFHeader, text: str) -> int:
    """The id of the token spelt `text` exactly (the file's own token list)."""
    vocab = header.vocab
    if vocab is None:
        raise ValueError(f"{header.path}: no token list")
    want = text.encode("utf-8")
    pos = 0
    for i in range(vocab.count):
        (n,) = struct.unpack_from("<Q", vocab.tokens, pos)
        if vocab.tokens[pos + 8: pos + 8 + n] == want:
            return i
        pos += 8 + n
    raise ValueError(f"{header.path}: no token {text!r}")


def write_agreeing(source: Path, target: Path, word: str = "Ġfaster") -> Path:
    """A copy of the sparse MTP model `source` at `target` that writes `word` and drafts it
    (module doc). `word` is spelt as the file's token list spells it (GPT-2 bytes: Ġ a space)."""
    header = reader.read_header(source, keep_vocab=True)
    tensors = {t.name: t for t in header.tensors}
    heads = sorted({n.split(".nextn.")[0] for n in tensors if ".nextn." in n})
    if len(heads) != 1:
        raise ValueError(f"{source}: not one MTP block ({heads or 'none'})")
    if "output.weight" in tensors:
        raise ValueError(f"{source}: an output head of its own; this copy needs the tied one")
    block = heads[0]
    word_id = token_id(header, word)
    tmp = target.with_name(target.name + ".part")
    with source.open("rb") as src, tmp.open("wb") as out:
        out.write(src.read(header.data_offset))
        out.truncate(header.file_size)

        def put(name: str, rows: list[tuple[int, int, bytes]]) -> None:
            t = tensors[name]
            for first, count, row in rows:
                out.seek(header.data_offset + t.offset + first * len(row))
                for done in range(0, count, _ROWS_PER_WRITE):
                    out.write(row * min(_ROWS_PER_WRITE, count - done))

        def ones(name: str) -> None:
            t = tensors[name]
            put(name, [(0, 1, _constant_row(t.type_name, t.shape[0], 1.0))])

        embd = tensors["token_embd.weight"]
        n_embd, n_vocab = embd.shape[0], embd.shape[1]
        low = _constant_row(embd.type_name, n_embd, 0.01)
        high = _constant_row(embd.type_name, n_embd, 0.1)
        put("token_embd.weight", [(0, word_id, low), (word_id, 1, high), (word_id + 1, n_vocab - word_id - 1, low)])
        for name in ("output_norm.weight", f"{block}.nextn.enorm.weight", f"{block}.nextn.hnorm.weight",
                     f"{block}.nextn.shared_head_norm.weight"):
            ones(name)
        proj = tensors[f"{block}.nextn.eh_proj.weight"]
        put(proj.name, [(0, proj.shape[1], _constant_row(proj.type_name, proj.shape[0], 1.0 / proj.shape[0]))])
    tmp.replace(target)
    return target
