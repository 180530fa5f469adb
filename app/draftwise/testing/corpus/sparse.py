"""GGUF files whose tensor data is a hole: the header is written, the data never is.

`write_sparse` writes the metadata and the tensor table exactly as llama.cpp lays them out
(GGUF v3, each tensor's data at a 32-byte aligned offset from the 32-byte aligned data
start, every tensor padded, as `llama-quantize` writes the last one too), then extends the
file with `truncate` to its full size: on ext4 and most file systems the data is a hole that
takes no disk space and reads as zeros. The engine maps it and, with `-nr` and no warm-up,
never reads it (see corpus/judge.py for what still touches the pages).

`read_kv` reads the metadata of a GGUF file back as typed values, to copy a real tokenizer.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from draftwise.core.gguf.ggml_types import GGML_TYPES
from draftwise.core.gguf.writer import Typed

ALIGNMENT = 32
VERSION = 3
_ARRAY, _STR = 9, 8
_TYPES: dict[str, tuple[int, str]] = {
    "u8": (0, "B"), "i8": (1, "b"), "u16": (2, "H"), "i16": (3, "h"), "u32": (4, "I"),
    "i32": (5, "i"), "f32": (6, "f"), "bool": (7, "?"), "str": (_STR, ""), "u64": (10, "Q"),
    "i64": (11, "q"), "f64": (12, "d"),
}  # fmt: skip
_TYPE_BY_ID = {v[0]: k for k, v in _TYPES.items()}
TYPE_IDS = {name: tid for tid, (name, _, _) in GGML_TYPES.items()}


def type_id(name: str) -> int:
    try:
        return TYPE_IDS[name.upper()]
    except KeyError:
        raise ValueError(f"unknown ggml type {name!r}") from None


def nbytes(ne: Sequence[int], type_name: str) -> int:
    """ggml_nbytes of a contiguous tensor: rows of ne0 elements in blocks."""
    _, block, size = GGML_TYPES[type_id(type_name)]
    if ne[0] % block:
        raise ValueError(f"a row of {ne[0]} elements is not a whole number of {type_name} blocks ({block})")
    n = ne[0] // block * size
    for d in ne[1:]:
        n *= d
    return n


def _pad(n: int) -> int:
    return -n % ALIGNMENT


def _str(s: str | bytes) -> bytes:
    b = s if isinstance(s, bytes) else s.encode("utf-8", "surrogateescape")
    return struct.pack("<Q", len(b)) + b


def _infer(key: str, value: Any) -> tuple[str, Any]:
    if isinstance(value, Typed):
        return value.type, value.value
    if isinstance(value, bool):
        return "bool", value
    if isinstance(value, int):
        return ("u32" if value >= 0 else "i32"), value
    if isinstance(value, float):
        return "f32", value
    if isinstance(value, str | bytes):
        return "str", value
    raise TypeError(f"{key}: state the GGUF type of {type(value).__name__} values with Typed(value, type)")


def encode_kv(key: str, value: Any) -> bytes:
    tname, v = _infer(key, value)
    out = _str(key)
    if isinstance(v, list | tuple):
        tid = _TYPES[tname][0]
        if tname == "str":
            body = b"".join(map(_str, v))
        else:
            body = struct.pack(f"<{len(v)}{_TYPES[tname][1]}", *v)
        return out + struct.pack("<IIQ", _ARRAY, tid, len(v)) + body
    tid = _TYPES[tname][0]
    body = _str(v) if tname == "str" else struct.pack(f"<{_TYPES[tname][1]}", v)
    return out + struct.pack("<I", tid) + body


def layout(tensors: Sequence[tuple[str, tuple[int, ...], str]]) -> tuple[list[int], int]:
    """Each tensor's data offset (from the data start) and the data section's size."""
    offsets, at = [], 0
    for _, ne, tname in tensors:
        offsets.append(at)
        n = nbytes(ne, tname)
        at += n + _pad(n)
    return offsets, at


def write_sparse(path: Path, kv: Sequence[tuple[str, Any]], tensors: Sequence[tuple[str, tuple[int, ...], str]]) -> Path:
    """Write the header of a GGUF file and leave its tensor data as a hole.

    `tensors`: (name, ne in ggml order, ggml type name) in file order. The file appears
    whole or not at all."""
    names = [t[0] for t in tensors]
    if len(set(names)) != len(names):
        raise ValueError("tensor names must be unique")
    offsets, data_size = layout(tensors)
    parts = [b"GGUF", struct.pack("<IQQ", VERSION, len(tensors), len(kv))]
    parts += [encode_kv(k, v) for k, v in kv]
    for (name, ne, tname), off in zip(tensors, offsets, strict=True):
        parts.append(_str(name) + struct.pack(f"<I{len(ne)}QIQ", len(ne), *ne, type_id(tname), off))
    header = b"".join(parts)
    header += bytes(_pad(len(header)))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with tmp.open("wb") as f:
            f.write(header)
            f.truncate(len(header) + data_size)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


# ------------------------------------------------------------------ reading metadata back
class _Buf:
    def __init__(self, data: Any) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> Any:
        s = struct.Struct("<" + fmt)
        v = s.unpack_from(self.data, self.at)
        self.at += s.size
        return v if len(v) > 1 else v[0]

    def string(self) -> str:
        n = self.take("Q")
        b = bytes(self.data[self.at:self.at + n])
        self.at += n
        return b.decode("utf-8", "surrogateescape")


def read_kv(path: Path) -> list[tuple[str, Typed]]:
    """The metadata of a GGUF file, in order, each value Typed as stored (strings with
    bytes that are not UTF-8 survive a copy through `encode_kv`)."""
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _read_kv(path, data)


def _read_kv(path: Path, data: Any) -> list[tuple[str, Typed]]:
    b = _Buf(data)
    magic, version, _n_tensors, n_kv = b.take("4sIQQ")
    if magic != b"GGUF" or version != VERSION:
        raise ValueError(f"{path}: not a GGUF v3 file")
    out: list[tuple[str, Typed]] = []
    for _ in range(n_kv):
        key = b.string()
        tid = b.take("I")
        if tid == _ARRAY:
            item, n = b.take("IQ")
            tname = _TYPE_BY_ID[item]
            if tname == "str":
                value: Any = [b.string() for _ in range(n)]
            else:
                code = _TYPES[tname][1]
                value = list(struct.unpack_from(f"<{n}{code}", data, b.at))
                b.at += n * struct.calcsize(code)
            out.append((key, Typed(value, tname)))
        else:
            tname = _TYPE_BY_ID[tid]
            out.append((key, Typed(b.string() if tname == "str" else b.take(_TYPES[tname][1]), tname)))
    return out
