"""What a GGUF header must be, checked as llama.cpp's `gguf_init_from_file` checks it.

The magic and version (v2, v3; not big-endian, not v1), counts that fit in the file, each
key once, `general.alignment` a power of two, the tensor table (names, dimensions, known
ggml types, rows a whole number of blocks) packed in order with the data present: what we
accept, the engine can open. Opening a file says in words why it cannot be read. The entry
points here parse without the cache: `read_header_stream` (a file read over HTTP ranges),
`read_header_bytes` (a file in memory), `_read_header_file` (reader.read_header's parse).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, BinaryIO

from draftwise.core.gguf.byte_reader import _Reader
from draftwise.core.gguf.ggml_types import GGML_TYPES
from draftwise.core.gguf.header import (
    _HEADER,
    _INT64_MAX,
    _MAX_DIMS,
    _MAX_TENSOR_NAME,
    _MAX_TENSOR_RECORD,
    _MIN_KV_BYTES,
    _MIN_TENSOR_BYTES,
    _TENSOR_TAIL,
    _U32,
    _U64,
    _WINDOW,
    DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    SUPPORTED_VERSIONS,
    T_UINT32,
    ArrayInfo,
    GGUFError,
    GGUFHeader,
    TensorInfo,
    Vocab,
    VocabPlace,
)
from draftwise.core.messages import msg


def _open(path: Path) -> BinaryIO:
    try:
        if path.is_dir():
            raise GGUFError(path, None, msg("is a folder, not a GGUF file"), hint=None)
        return open(path, "rb", buffering=0)  # closed by read_header
    except FileNotFoundError:
        raise GGUFError(path, None, msg("no such file"), hint=None) from None
    except PermissionError:
        raise GGUFError(
            path, None, msg("permission denied: the file cannot be read"), hint=None
        ) from None
    except OSError as e:
        raise GGUFError(
            path, None, msg("cannot open the file ({error})", error=e.strerror or str(e)), hint=None
        ) from None



def _read_header_file(path: Path, keep_vocab: bool) -> GGUFHeader:
    f = _open(path)
    try:
        try:
            size = f.seek(0, 2)
        except OSError as e:
            raise GGUFError(
                path, None, msg("cannot read the file ({error})", error=e.strerror or str(e)), hint=None
            ) from None
        return _parse(_Reader(f, path, size, keep_vocab))
    finally:
        f.close()


def read_header_stream(f: BinaryIO, size: int, path: str | Path, *, window: int = _WINDOW) -> GGUFHeader:
    """Parse the header of a file of `size` bytes read through `f` (seek and readinto), which
    need not be on disk: the hub's files are read this way over HTTP ranges
    (core/hub/remote.py), `window` bytes ahead at a time, so only the header's bytes travel.
    `path` names the file in errors. Nothing is cached here."""
    return _parse(_Reader(f, Path(path), size, window=window))


def read_header_bytes(data: bytes, path: str | Path = "<memory>") -> GGUFHeader:
    """Parse a whole GGUF file held in memory (tests and fuzzing); `path` names it in errors."""
    return _parse(_Reader(io.BytesIO(data), Path(path), len(data)))


def _parse(r: _Reader) -> GGUFHeader:
    size = r.size
    if size < 4:
        r.fail(0, f"the file is {size} bytes long, too short to be a GGUF model")
    r.load(0, min(size, 24))
    if r.mv[:4] != GGUF_MAGIC:
        r.fail(
            0,
            f"the file does not start with 'GGUF' (it starts with {bytes(r.mv[:4])!r})",
            hint=msg("It is not a GGUF model, or it is damaged."),
        )
    if size < 24:
        r.past_end(0, "the 24-byte GGUF header")
    _, version, n_tensors, n_kv = _HEADER.unpack_from(r.buf, 0)
    if version and version & 0xFFFF == 0:
        # What llama.cpp checks too: a small version number read with the wrong byte order.
        r.fail(
            4,
            "big-endian GGUF files are not supported",
            hint=msg("Use the little-endian version of this model."),
        )
    if version == 1:
        r.fail(
            4,
            "GGUF version 1 files are not supported (the format changed in 2023)",
            hint=msg("Download a current conversion of this model."),
        )
    if version not in SUPPORTED_VERSIONS:
        r.fail(4, f"unknown GGUF version {version} (this app reads versions 2 and 3)")
    r.pos = 24
    left = size - 24
    if n_tensors > _INT64_MAX or n_tensors * _MIN_TENSOR_BYTES > left:
        r.fail(8, f"tensor count {n_tensors} cannot fit in the file (size {size})")
    if n_kv > _INT64_MAX or n_kv * _MIN_KV_BYTES + n_tensors * _MIN_TENSOR_BYTES > left:
        r.fail(16, f"key-value count {n_kv} cannot fit in the file (size {size})")

    kv: dict[str, Any] = {}
    arrays: dict[str, ArrayInfo] = {}
    kv_types: dict[str, int] = {}
    align_pos = 0
    for idx in range(n_kv):
        kpos = r.pos
        key = r.string(f"key {idx}", limit=1 << 16).decode("utf-8", "replace")
        if not key:
            r.fail(kpos, f"key {idx} is empty")
        if key in kv_types:
            r.fail(kpos, f"duplicate key '{key}'")
        vtype = r.u32(f"value type of '{key}'")
        value = r.value(key, vtype)
        kv_types[key] = vtype
        if key == "general.alignment":
            align_pos = kpos
        if isinstance(value, ArrayInfo):
            arrays[key] = value
        else:
            kv[key] = value

    alignment = DEFAULT_ALIGNMENT
    if "general.alignment" in kv_types:
        value = kv.get("general.alignment")
        if kv_types["general.alignment"] != T_UINT32 or value <= 0 or value & (value - 1):
            r.fail(align_pos, f"general.alignment is {value!r}; it must be a uint32 power of two")
        alignment = value

    tensors, offset_fields = _parse_tensors(r, n_tensors)
    header_end = r.pos
    data_offset = header_end + (-header_end % alignment)
    expected = 0
    # The engine wants the tensors packed in order, each padded to the alignment.
    for t, where in zip(tensors, offset_fields, strict=True):
        if t.offset != expected:
            r.fail(where, f"tensor '{t.name}' has data offset {t.offset}, expected {expected}")
        expected += t.nbytes + (-t.nbytes % alignment)
    if tensors:
        last = tensors[-1]
        end = data_offset + last.offset + last.nbytes
        if end > size:
            r.fail(
                size,
                f"the file is incomplete: its tensors need {end} bytes but it has "
                f"{size} (the download may have been interrupted)",
            )
    place = vocab = None
    if r.tokens_at is not None:
        t_start, t_end, t_count = r.tokens_at
        place = VocabPlace((t_start, t_end), t_count, r.types_at)
        if r.keep_vocab:
            # From the file still open and just walked (in the page cache): two reads of
            # the ranges cost less than keeping every window's bytes during the walk.
            try:
                vocab = Vocab(_read_range(r.f, place.tokens), t_count,
                              _read_range(r.f, place.types) if place.types else None)
            except OSError as e:
                r.fail(t_start, f"could not read the token list ({e.strerror or e})", hint=None)
    return GGUFHeader(
        path=r.path, version=version, kv=kv, arrays=arrays, tensors=tensors,
        alignment=alignment, data_offset=data_offset, file_size=size,
        tokens_sha256=r.token_digest, kv_types=kv_types, vocab_place=place, vocab=vocab,
    )  # fmt: skip


def _parse_tensors(r: _Reader, n_tensors: int) -> tuple[list[TensorInfo], list[int]]:
    """The tensor table, and where each tensor's offset field is (for error messages)."""
    tensors: list[TensorInfo] = []
    offset_fields: list[int] = []
    seen: set[str] = set()
    u64, u32 = _U64.unpack_from, _U32.unpack_from
    for idx in range(n_tensors):
        tpos = r.pos
        rel = tpos - r.base
        if rel < 0 or rel + _MAX_TENSOR_RECORD > r.have:
            if r.size - tpos >= _MAX_TENSOR_RECORD:
                r.load(tpos, _MAX_TENSOR_RECORD)
                rel = 0
            else:
                rel = -1  # near the end of the file: the careful path below
        buf = r.buf
        if rel >= 0 and (nlen := u64(buf, rel)[0]) <= _MAX_TENSOR_NAME:
            # Fast path: the whole record, whatever it holds, is inside the window.
            name = buf[rel + 8 : rel + 8 + nlen].decode("utf-8", "replace")
            dpos = tpos + 8 + nlen
            n_dims = u32(buf, rel + 8 + nlen)[0]
            if n_dims > _MAX_DIMS:
                r.fail(dpos, f"tensor '{name}' has {n_dims} dimensions (at most {_MAX_DIMS})")
            tail = _TENSOR_TAIL[n_dims]
            *shape, gtype, offset = tail.unpack_from(buf, rel + 12 + nlen)
            r.pos = dpos + 4 + tail.size
        else:
            what = f"name of tensor {idx}"
            name = r.string(what, limit=_MAX_TENSOR_NAME).decode("utf-8", "replace")
            dpos = r.pos
            n_dims = r.u32(f"dimension count of tensor '{name}'")
            if n_dims > _MAX_DIMS:
                r.fail(dpos, f"tensor '{name}' has {n_dims} dimensions (at most {_MAX_DIMS})")
            tail = _TENSOR_TAIL[n_dims]
            i = r.view(tail.size, f"shape of tensor '{name}'")
            *shape, gtype, offset = tail.unpack_from(r.buf, i)
            r.pos += tail.size
        if name in seen:
            r.fail(tpos, f"duplicate tensor name '{name}'")
        seen.add(name)
        count = 1
        for d in shape:
            if d < 0:
                r.fail(dpos, f"tensor '{name}' has a negative dimension {d}")
            count *= d
        if count > _INT64_MAX:
            r.fail(dpos, f"tensor '{name}' shape {tuple(shape)} has too many elements")
        entry = GGML_TYPES.get(gtype)
        if entry is None:
            r.fail(dpos + 4 + 8 * n_dims, f"tensor '{name}' has unknown ggml type {gtype}")
        type_name, block, type_size = entry
        ne0 = shape[0] if shape else 1
        if ne0 % block:
            r.fail(
                dpos,
                f"tensor '{name}' of type {type_name} has rows of {ne0} elements, "
                f"not a multiple of its block size {block}",
            )
        tensors.append(TensorInfo(name, tuple(shape), gtype, type_name, offset,
                                  count // block * type_size))  # fmt: skip
        offset_fields.append(r.pos - 8)
    return tensors, offset_fields


def _read_range(f: BinaryIO, where: tuple[int, int]) -> bytes:
    start, end = where
    f.seek(start)
    data = f.read(end - start)
    if len(data) != end - start:
        raise OSError("the file got shorter")
    return data
