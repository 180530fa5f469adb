"""The GGUF format as data: its constants and limits, the one error, a parsed header.

The limits are the engine's (ggml/src/gguf.cpp, ggml.h: a file beyond them does not load
anyway) and our own (so a forged header cannot make us hold or walk gigabytes). `GGUFError`
is the only exception the reader raises: it names the file, the byte offset and what was
wrong. `GGUFHeader` is what a parse returns (metadata, long arrays as `ArrayInfo`, the
tensor table as `TensorInfo`, where the token list lies as `VocabPlace`, the list itself as
`Vocab` when asked for). The walk that fills them is byte_reader.py and parse.py.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core.messages import Message, Text, msg

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
# Arrays up to this many elements are kept as lists; longer ones become an ArrayInfo.
SMALL_ARRAY_MAX = 1024
TOKENS_KEY = "tokenizer.ggml.tokens"
TOKEN_TYPES_KEY = "tokenizer.ggml.token_type"

# Limits of the engine (ggml/src/gguf.cpp, ggml.h): a file beyond them does not load anyway.
_MAX_DIMS = 4
_MAX_TENSOR_NAME = 63  # GGML_MAX_NAME (64) including the terminating NUL
_MAX_STRING = 1 << 30  # GGUF_MAX_STRING_LENGTH
_MAX_ARRAY = 1 << 30  # GGUF_MAX_ARRAY_ELEMENTS
_INT64_MAX = (1 << 63) - 1
# Our own limits, so a forged header cannot make us hold or walk gigabytes: the largest real
# headers (262k-token vocabularies with merges) are ~20 MB and a few million strings, and no
# single metadata value comes near _MAX_BUFFER.
_MAX_NESTING = 4
_MAX_BUFFER = 256 << 20
_MAX_ELEMENTS_WALKED = 1 << 25
_WINDOW = 1 << 20  # bytes of the file held at once, normally
# Smallest possible encodings, to reject counts that cannot fit before looping over them:
# a key-value is key length (8) + 1 key byte + type (4) + 1 value byte; a tensor info is name
# length (8) + dims count (4) + type (4) + offset (8).
_MIN_KV_BYTES = 14
_MIN_TENSOR_BYTES = 24
_DAMAGED = msg("The file is damaged or not a GGUF model; download it again.")

# GGUF metadata value types.
T_UINT8, T_INT8, T_UINT16, T_INT16, T_UINT32, T_INT32, T_FLOAT32, T_BOOL = range(8)
T_STRING, T_ARRAY, T_UINT64, T_INT64, T_FLOAT64 = range(8, 13)
VALUE_TYPE_NAMES = {
    T_UINT8: "uint8", T_INT8: "int8", T_UINT16: "uint16", T_INT16: "int16",
    T_UINT32: "uint32", T_INT32: "int32", T_FLOAT32: "float32", T_BOOL: "bool",
    T_STRING: "string", T_ARRAY: "array", T_UINT64: "uint64", T_INT64: "int64",
    T_FLOAT64: "float64",
}  # fmt: skip
# value type -> (struct code, size)
_SCALARS: dict[int, tuple[str, int]] = {
    T_UINT8: ("B", 1), T_INT8: ("b", 1), T_UINT16: ("H", 2), T_INT16: ("h", 2),
    T_UINT32: ("I", 4), T_INT32: ("i", 4), T_FLOAT32: ("f", 4), T_BOOL: ("?", 1),
    T_UINT64: ("Q", 8), T_INT64: ("q", 8), T_FLOAT64: ("d", 8),
}  # fmt: skip
_SCALAR_STRUCTS = {t: struct.Struct("<" + code) for t, (code, _) in _SCALARS.items()}
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_HEADER = struct.Struct("<4sIQQ")
# dims (signed like ggml's int64 ne), ggml type, data offset; one struct per dims count.
_TENSOR_TAIL = [struct.Struct(f"<{n}qIQ") for n in range(_MAX_DIMS + 1)]
# The longest tensor record: name length, name, dims count, 4 dims, type, offset.
_MAX_TENSOR_RECORD = 8 + _MAX_TENSOR_NAME + 4 + 8 * _MAX_DIMS + 4 + 8


class GGUFError(ValueError):
    """A file that cannot be read as a GGUF model, with where and why."""

    def __init__(
        self, path: str | Path, offset: int | None, reason: Text, hint: Message | None = _DAMAGED
    ):
        self.path = str(path)
        self.offset = offset
        self.reason = reason  # technical (a key, a tensor, a byte count): shown as it is
        # The sentence as data, for the window to translate its frame and the hint.
        if offset is not None and hint is not None:
            self.message = msg("{path}: at byte {offset}: {reason}. {hint}", path=self.path, offset=offset,
                               reason=reason, hint=hint)
        elif offset is not None:
            self.message = msg("{path}: at byte {offset}: {reason}.", path=self.path, offset=offset, reason=reason)
        elif hint is not None:
            self.message = msg("{path}: {reason}. {hint}", path=self.path, reason=reason, hint=hint)
        else:
            self.message = msg("{path}: {reason}.", path=self.path, reason=reason)
        super().__init__(str(self.message))


@dataclass(frozen=True)
class ArrayInfo:
    """A metadata array too long to keep: its element type, length and where it starts."""

    type: int
    length: int
    offset: int

    @property
    def type_name(self) -> str:
        return VALUE_TYPE_NAMES.get(self.type, str(self.type))


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # ggml order: ne0 (the row length) first
    ggml_type: int
    type_name: str
    offset: int  # relative to GGUFHeader.data_offset
    nbytes: int

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class VocabPlace:
    """Byte ranges of a header's token list (each string with its 8-byte length, as
    stored) and of its int32 token types (None when the file has none)."""

    tokens: tuple[int, int]
    count: int
    types: tuple[int, int] | None = None


@dataclass(frozen=True)
class Vocab:
    """A token list as stored (length-prefixed strings) and its int32 token types."""

    tokens: bytes
    count: int
    types: bytes | None = None

    def type_of(self, token_id: int) -> int | None:
        """The token's type (llama_token_type), None when the file has no types."""
        if self.types is None or not 0 <= token_id < len(self.types) // 4:
            return None
        return _I32.unpack_from(self.types, 4 * token_id)[0]


@dataclass
class GGUFHeader:
    path: Path
    version: int
    kv: dict[str, Any]
    arrays: dict[str, ArrayInfo]
    tensors: list[TensorInfo]
    alignment: int
    data_offset: int  # absolute file offset of the tensor data
    file_size: int
    tokens_sha256: str | None
    kv_types: dict[str, int] = field(default_factory=dict)  # key -> GGUF value type
    # Where the token list and the token types are in the file (recorded for free while
    # stepping over them), so a pairing check can read them later without a second parse.
    vocab_place: VocabPlace | None = None
    # The token list and types themselves, only when asked for (`keep_vocab`).
    vocab: Vocab | None = None

    def get(self, key: str, default: Any = None) -> Any:
        """A metadata value: scalar, list, or ArrayInfo for a skipped long array."""
        if key in self.kv:
            return self.kv[key]
        return self.arrays.get(key, default)
