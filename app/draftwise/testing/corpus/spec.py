"""A corpus model as data: its metadata, its tensor table before quantization, its tokenizer.

A `ModelSpec` describes what the pinned `convert_hf_to_gguf.py` writes for one published
config.json (the `{arch}.*` keys and the tensors with their shapes), plus the quantization
`llama-quantize` applies to it. The tensor types after quantization are never written here:
`corpus.quantize` asks the real `llama-quantize --dry-run` for them.

Shapes are in ggml order (`ne0`, the row length, first), as `src/llama-model.cpp`
`create_tensor` states them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from draftwise.core.gguf.writer import Typed

# The converter's output types (`--outtype`): published checkpoints in bfloat16 convert to
# BF16 with the default `--outtype auto`, float16 ones to F16.
BF16, F16, F32 = "BF16", "F16", "F32"


@dataclass(frozen=True)
class Tensor:
    name: str
    ne: tuple[int, ...]
    # A type the converter writes whatever the output type (MXFP4 experts from the published
    # checkpoint, a tensor a model class forces): None follows the converter's rule (`base.py`
    # prepare_tensors: 1-D, norms, non-`.weight`, routers, convolutions -> F32; else outtype).
    dtype: str | None = None


@dataclass(frozen=True)
class Vocab:
    """Where the tokenizer keys come from, and what the converter does on top.

    `source`: "vocab:NAME" (the pinned source's models/ggml-vocab-NAME.gguf),
    "gemma3-270m" (the real Gemma 3 270M file), or "synth:KIND" (no real list at hand:
    tokens of the right count and types are made up; the spec says so).
    """

    source: str
    size: int  # ids in the converted file (token_embd's second dimension)
    # Keys to set or replace after copying (bos/eos ids, add_bos, pre, chat template...).
    overrides: tuple[tuple[str, Any], ...] = ()
    # (id, text, token type) entries that replace ids of the source list or extend it
    # before padding: a family's own special tokens over a shared base list.
    specials: tuple[tuple[int, str, int], ...] = ()
    # How ids past the list are padded to `size`: "[PAD{i}]" UNUSED (the converter's BPE and
    # SPM vocabularies), or a callable(i) -> (text, type).
    pad: str = "bpe"
    synth: dict[str, Any] | None = None  # what a synthesized list looks like (counts, ids)

    def identity(self) -> dict[str, Any]:
        return {"source": self.source, "size": self.size, "overrides": _plain(self.overrides),
                "specials": _plain(self.specials), "pad": self.pad, "synth": _plain(self.synth)}  # fmt: skip


@dataclass(frozen=True)
class ModelSpec:
    name: str  # the published model: "Llama-3.1-8B-Instruct"
    repo: str  # the Hugging Face repository whose config.json the values come from
    arch: str  # general.architecture
    family: str  # the families/ module that wrote it
    kv: tuple[tuple[str, Any], ...]  # general.* and {arch}.* keys in the converter's order
    tensors: tuple[Tensor, ...]
    vocab: Vocab
    quant: str | None = "Q4_K_M"  # llama-quantize's type; None: the converter's output as published
    outtype: str = BF16
    tags: frozenset[str] = frozenset()  # dense, moe, swa, mla, hybrid, mtp, padded-vocab, ...
    notes: str = ""  # what is not the published file (a synthesized vocabulary, ...)
    # Plan and launch: the context to judge at (small, so the KV of 70B models fits the RAM).
    ctx: int = 4096
    spec_type: str | None = None  # "draft-mtp": judged with the MTP head loaded
    # The companion file (a Gemma 4 assistant): judged as its own model, named here.
    companion_of: str | None = None
    # The published GGUF of this quantization: its size in bytes, the precision of that
    # figure (0: byte-exact; a listing in GB to two decimals: 5e6) and where it comes from.
    # None: not sourced (published.py says why); the registry fills these in.
    published_size: int | None = None
    published_precision: int = 0
    published_source: str = ""

    @property
    def file_stem(self) -> str:
        return f"{self.name}-{self.quant or 'published'}"

    def digest(self) -> str:
        """A content hash of everything the file is made from: a changed spec regenerates."""
        data = {
            "name": self.name, "arch": self.arch, "kv": _plain(self.kv), "quant": self.quant,
            "outtype": self.outtype, "vocab": self.vocab.identity(),
            "tensors": [[t.name, list(t.ne), t.dtype] for t in self.tensors],
        }  # fmt: skip
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    def param_count(self) -> int:
        return sum(_prod(t.ne) for t in self.tensors)


def _prod(ne: Iterable[int]) -> int:
    n = 1
    for d in ne:
        n *= d
    return n


def _plain(v: Any) -> Any:
    if isinstance(v, Typed):
        return {"typed": v.type, "value": _plain(v.value)}
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if callable(v):
        return getattr(v, "__qualname__", repr(v))
    return v


# ------------------------------------------------------------------ building tables
@dataclass
class Table:
    """A tensor table in the making: families add tensors in the converter's order."""

    tensors: list[Tensor] = field(default_factory=list)

    def add(self, name: str, *ne: int, dtype: str | None = None) -> Table:
        if any(t.name == name for t in self.tensors):
            raise ValueError(f"tensor {name} added twice")
        if not ne or any(d < 1 for d in ne):
            raise ValueError(f"{name}: bad shape {ne}")
        self.tensors.append(Tensor(name, tuple(ne), dtype))
        return self

    def blk(self, i: int, name: str, *ne: int, dtype: str | None = None) -> Table:
        return self.add(f"blk.{i}.{name}", *ne, dtype=dtype)

    def freeze(self) -> tuple[Tensor, ...]:
        return tuple(self.tensors)


def kv_list(arch: str, general: Sequence[tuple[str, Any]], arch_keys: Sequence[tuple[str, Any]]) -> tuple[tuple[str, Any], ...]:
    """general.architecture, the other general.* keys, then `{arch}.KEY` for each KEY."""
    out: list[tuple[str, Any]] = [("general.architecture", arch), *general]
    out += [(f"{arch}.{k}", v) for k, v in arch_keys]
    keys = [k for k, _ in out]
    if len(set(keys)) != len(keys):
        raise ValueError(f"a key is set twice: {sorted(k for k in keys if keys.count(k) > 1)}")
    return tuple(out)


def u32(v: int) -> Typed:
    return Typed(v, "u32")


def i32(v: int) -> Typed:
    return Typed(v, "i32")


def f32(v: float) -> Typed:
    return Typed(float(v), "f32")


def i32s(vs: Sequence[int]) -> Typed:
    return Typed(list(vs), "i32")


def u32s(vs: Sequence[int]) -> Typed:
    return Typed(list(vs), "u32")


def bools(vs: Sequence[bool]) -> Typed:
    return Typed([bool(v) for v in vs], "bool")


def general(name: str, size_label: str, *, basename: str | None = None, finetune: str | None = None,
            license: str | None = None) -> list[tuple[str, Any]]:  # noqa: A002
    """The general.* keys the converter writes from the repository's name and model card
    (general.type, name, finetune, basename, size_label, license); `file_type` and
    `quantization_version` are added by the writer."""
    out: list[tuple[str, Any]] = [("general.type", "model"), ("general.name", name)]
    if finetune:
        out.append(("general.finetune", finetune))
    if basename:
        out.append(("general.basename", basename))
    out.append(("general.size_label", size_label))
    if license:
        out.append(("general.license", license))
    return out


SpecFactory = Callable[[], ModelSpec]
