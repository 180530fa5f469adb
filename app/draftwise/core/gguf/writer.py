"""A small GGUF v3 writer in the standard library (no numpy, no gguf-py).

Enough to write the tiny random-weight models the self-test and "Check this machine" launch
from the frozen app, which ships without numpy and gguf-py: typed metadata and F32 tensors
filled with ones, zeros or small random values, Q4_0 tensors of random blocks (a quantized
model: the CPU's re-laid and AMX kernels run on those), or Q4_K tensors of zero blocks (the
speed probe's: the kernels do the same work whatever the values), the data aligned to 32
bytes.

Metadata value types are inferred from Python types (bool -> bool, int -> u32, or i32 when
negative, float -> f32, str -> str, a list of str / float / int -> an array of str / f32 /
i32, as gguf-py does); `Typed(value, "u64")` states the type where that guess is wrong (for
an array, the type of its items: `Typed([1, 2], "u32")`).
"""

from __future__ import annotations

import os
import random
import struct
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALIGNMENT = 32
VERSION = 3
_ARRAY = 9
_STR = 8
# value type name -> (GGUF id, struct code; "" for str)
_TYPES: dict[str, tuple[int, str]] = {
    "u8": (0, "B"), "i8": (1, "b"), "u16": (2, "H"), "i16": (3, "h"), "u32": (4, "I"),
    "i32": (5, "i"), "f32": (6, "f"), "bool": (7, "?"), "str": (_STR, ""), "u64": (10, "Q"),
    "i64": (11, "q"), "f64": (12, "d"),
}  # fmt: skip
_FILLS = ("ones", "zeros", "random")
# Random weights: uniform int16 noise scaled to a standard deviation of 0.02.
_RANDOM_SCALE = 0.02 / (65536 / 12**0.5)
# Tensor types: GGUF id, elements per block, bytes per block (ggml/include/ggml.h, ggml-common.h).
DTYPES: dict[str, tuple[int, int, int]] = {"F32": (0, 1, 4), "Q4_0": (2, 32, 18), "Q4_K": (12, 256, 144)}
# The fills a quantized type can be written with (F32 takes every fill).
_QUANT_FILLS = {"Q4_0": "random", "Q4_K": "zeros"}
# Q4_0 block: an f16 scale, then 32 4-bit values (q - 8) * scale. Uniform random nibbles have a
# standard deviation of sqrt((16**2 - 1) / 12) steps; this scale makes it 0.02, as for F32.
_Q4_0_SCALE = struct.pack("<e", 0.02 / ((16**2 - 1) / 12) ** 0.5)
_BIG_ENDIAN = sys.byteorder == "big"


@dataclass(frozen=True)
class Typed:
    """A metadata value with its GGUF type named: "u32", "i64", "f32", "str", ...

    For a list, `type` is the type of the items."""

    value: Any
    type: str

    def __post_init__(self) -> None:
        if self.type not in _TYPES:
            raise ValueError(f"unknown GGUF value type {self.type!r} (known: {', '.join(_TYPES)})")


@dataclass(frozen=True)
class TensorSpec:
    """A tensor: its name, its dims in ggml order (ne0, the row length, first), fill and type
    (F32, Q4_0 with random blocks: rows a multiple of 32, or Q4_K of zeros: rows a multiple
    of 256)."""

    name: str
    dims: tuple[int, ...]
    fill: str = "random"  # "ones" | "zeros" | "random"
    dtype: str = "F32"  # "F32" | "Q4_0" | "Q4_K"

    def __post_init__(self) -> None:
        if self.fill not in _FILLS:
            raise ValueError(f"fill must be one of {_FILLS}, not {self.fill!r}")
        if not 1 <= len(self.dims) <= 4 or any(d < 1 for d in self.dims):
            raise ValueError(f"{self.name}: dims must be 1 to 4 positive numbers, not {self.dims}")
        if self.dtype not in DTYPES:
            raise ValueError(f"{self.name}: dtype must be one of {', '.join(DTYPES)}, not {self.dtype!r}")
        block = DTYPES[self.dtype][1]
        fill = _QUANT_FILLS.get(self.dtype)
        if self.dims[0] % block or (fill is not None and self.fill != fill):
            raise ValueError(f"{self.name}: a {self.dtype} tensor needs {fill} rows of a multiple of {block}")

    @property
    def nbytes(self) -> int:
        _, per_block, block_bytes = DTYPES[self.dtype]
        return self.n_elements // per_block * block_bytes

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _infer(key: str, value: Any) -> tuple[str, bool]:
    """(type name, is an array) of a plain Python value."""
    if isinstance(value, bool):
        return "bool", False
    if isinstance(value, int):
        return ("u32" if value >= 0 else "i32"), False
    if isinstance(value, float):
        return "f32", False
    if isinstance(value, str):
        return "str", False
    if isinstance(value, list | tuple):
        if not value:
            raise TypeError(f"{key}: an empty array needs Typed([], item_type)")
        if all(isinstance(v, str) for v in value):
            return "str", True
        if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return "i32", True
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return "f32", True
        if all(isinstance(v, bool) for v in value):
            return "bool", True
    raise TypeError(f"cannot write {key}={value!r} to GGUF; wrap it in Typed(value, type)")


def _values(tname: str, values: Sequence[Any]) -> bytes:
    if tname == "str":
        return b"".join(_str(v) for v in values)
    return struct.pack(f"<{len(values)}{_TYPES[tname][1]}", *values)


def encode_kv(key: str, value: Any) -> bytes:
    """One metadata entry: key, value type, value."""
    if isinstance(value, Typed):
        tname, value = value.type, value.value
        is_array = isinstance(value, list | tuple)
    else:
        tname, is_array = _infer(key, value)
    out = _str(key)
    if is_array:
        return out + struct.pack("<IIQ", _ARRAY, _TYPES[tname][0], len(value)) + _values(tname, value)
    return out + struct.pack("<I", _TYPES[tname][0]) + _values(tname, [value])


def _pad(n: int) -> int:
    return -n % ALIGNMENT


def tensor_data(spec: TensorSpec, rng: random.Random) -> bytes:
    """The little-endian bytes of one tensor (random ones draw from `rng`)."""
    n = spec.n_elements
    if spec.dtype == "Q4_0":
        return b"".join(_Q4_0_SCALE + rng.randbytes(16) for _ in range(n // 32))
    if spec.fill == "zeros":
        return bytes(spec.nbytes)
    if spec.fill == "ones":
        data = array("f", [1.0]) * n
    else:
        noise = array("h", rng.randbytes(2 * n))
        if _BIG_ENDIAN:
            noise.byteswap()
        data = array("f", map(_RANDOM_SCALE.__mul__, noise))
    if _BIG_ENDIAN:
        data.byteswap()
    return data.tobytes()


def write_gguf(
    path: str | Path,
    kv: Sequence[tuple[str, Any]],
    tensors: Sequence[TensorSpec],
    seed: int = 0,
) -> Path:
    """Write a GGUF v3 file (metadata in the given order, then the tensors) and return its path.

    The file appears whole or not at all (written beside it, then renamed)."""
    path = Path(path)
    names = [t.name for t in tensors]
    if len(set(names)) != len(names):
        raise ValueError("tensor names must be unique")
    head = [b"GGUF", struct.pack("<IQQ", VERSION, len(tensors), len(kv))]
    head += [encode_kv(key, value) for key, value in kv]
    offset = 0
    for t in tensors:
        head.append(_str(t.name) + struct.pack(f"<I{len(t.dims)}QIQ", len(t.dims), *t.dims, DTYPES[t.dtype][0],
                                               offset))
        nbytes = t.nbytes
        offset += nbytes + _pad(nbytes)
    header = b"".join(head)
    header += bytes(_pad(len(header)))

    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with tmp.open("wb") as f:
            f.write(header)
            for t in tensors:
                data = tensor_data(t, rng)
                f.write(data)
                f.write(bytes(_pad(len(data))))
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
