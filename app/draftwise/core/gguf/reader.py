"""Read the header of a GGUF model (v2, v3): metadata, tensor table, a summary.

Pure standard library and header-only: tensor data is never read. The reader is built for
files from the internet, which may be truncated, damaged or hostile, so every length and
count is checked against the bytes the file really has before anything is read or
allocated, and every failure is one exception type, `GGUFError`, that names the file, the
byte offset and what was wrong. The checks mirror what llama.cpp's `gguf_init_from_file`
rejects (ggml/src/gguf.cpp in the pinned source): what we accept, the engine can open.

Speed matters because the app lists many models: big vocabularies (150k-260k token strings,
as many merges) are read through one reused 1 MiB window and stepped over in C by a regex
(with a tight `struct.unpack_from` loop for what it cannot take), never a read per string;
numeric arrays are skipped by arithmetic; the token list is hashed a window at a time. A
Qwen-size header reads in ~16 ms, a few hundred times faster than gguf-py's GGUFReader
(bench/gguf_inspect.py).

One launch asks for the same headers several times (the resolver, the planner's shape and
weight table, the draft's twice), so `read_header` keeps the last few it parsed, keyed by the
file's path, size, mtime and inode: each file is parsed once per re-plan, and not again while
it stays the same (`_FileCache`); so is a model's token list, which pairing compares.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import struct
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from draftwise.core.gguf.ggml_types import GGML_TYPES, ftype_name
from draftwise.core.messages import Message, Text, msg

__all__ = [
    "ArrayInfo",
    "GGUFError",
    "GGUFHeader",
    "ModelInfo",
    "TensorInfo",
    "TokenizerId",
    "Vocab",
    "VocabPlace",
    "model_info_json",
    "clear_header_cache",
    "read_header",
    "read_header_bytes",
    "read_header_stream",
    "read_model",
    "read_vocab",
    "shard_siblings",
    "shard_stem",
    "skip_strings",
    "summarize",
]

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


# Stepping over strings is the cost of reading a big vocabulary. Most tokens and merges are
# shorter than 256 bytes, so their 8-byte length is one known byte and seven zeros: a regex
# with one alternative per length steps over _RE_CHUNK such strings in C, and the Python loop
# takes over for a chunk holding a longer (or damaged) string.
_RE_CHUNK = 1024
# The regex tries alternatives in order: common token lengths first.
_LENGTH_ORDER = [*range(1, 33), 0, *range(33, 256)]
_strings_pattern: re.Pattern[bytes] | None = None


def _strings_re() -> re.Pattern[bytes]:
    global _strings_pattern
    if _strings_pattern is None:
        alts = b"|".join(
            re.escape(_U64.pack(n)) + (b".{%d}" % n if n else b"") for n in _LENGTH_ORDER
        )
        # Possessive: the alternatives exclude each other, so nothing to backtrack into.
        _strings_pattern = re.compile(b"(?s)(?:" + alts + b"){%d}+" % _RE_CHUNK)
    return _strings_pattern


class _Reader:
    """A window of the file in memory plus a cursor; all bounds checks live here.

    The window is one bytearray filled with readinto and slid along the file, so a header of
    many megabytes costs one buffer's worth of fresh memory: allocating and faulting in new
    pages for every read cost more than the walk itself.
    """

    __slots__ = ("f", "path", "size", "buf", "mv", "base", "have", "pos", "budget", "token_digest",
                 "keep_vocab", "tokens_at", "types_at", "window")

    def __init__(self, f: BinaryIO, path: Path, size: int, keep_vocab: bool = False, window: int = _WINDOW):
        self.f = f
        self.window = window  # bytes read ahead at once (smaller for a file read over the network)
        self.path = path
        self.size = size
        self.buf = bytearray()
        self.mv = memoryview(self.buf)  # the valid part of buf: buf[:have]
        self.base = 0  # file offset of buf[0]
        self.have = 0  # valid bytes in buf
        self.pos = 0  # absolute cursor
        self.budget = _MAX_ELEMENTS_WALKED
        self.token_digest: str | None = None  # set by array() when it meets the token list
        self.keep_vocab = keep_vocab
        self.tokens_at: tuple[int, int, int] | None = None  # start, end, count
        self.types_at: tuple[int, int] | None = None

    def fail(self, offset: int | None, reason: str, hint: Message | None = _DAMAGED) -> NoReturn:
        raise GGUFError(self.path, offset, reason, hint)

    def past_end(self, offset: int, what: str) -> NoReturn:
        self.fail(offset, f"{what} runs past the end of the file (size {self.size})")

    def load(self, pos: int, n: int) -> None:
        """Slide the window to start at pos with at least n bytes. Caller checked n fits."""
        if n > _MAX_BUFFER:
            self.fail(
                pos, f"{n} bytes of header data from here; no GGUF model header is this large"
            )
        cap = max(n, self.window)
        want = min(cap, self.size - pos)
        keep = 0
        if self.base <= pos < self.base + self.have:
            keep = min(self.base + self.have - pos, want)  # bytes already held: move, not read
        if len(self.buf) < cap:
            new = bytearray(cap)
            new[:keep] = self.mv[pos - self.base : pos - self.base + keep]
            self.buf = new
        elif keep:
            # Through a copy: the source overlaps the destination.
            self.buf[:keep] = bytes(self.mv[pos - self.base : pos - self.base + keep])
        mv = memoryview(self.buf)
        got = keep
        try:
            self.f.seek(pos + keep)
            while got < want:
                r = self.f.readinto(mv[got:want])
                if not r:
                    break
                got += r
        except OSError as e:
            self.fail(pos, f"could not read the file ({e.strerror or e})", hint=None)
        if got < n:
            self.fail(pos, "the file got shorter while it was being read", hint=None)
        self.base, self.have, self.mv = pos, got, mv[:got]

    def view(self, n: int, what: str) -> int:
        """Make n bytes at the cursor available; return their index in self.buf."""
        rel = self.pos - self.base
        if rel >= 0 and rel + n <= self.have:
            return rel
        if n > self.size - self.pos:
            self.past_end(self.pos, what)
        self.load(self.pos, n)
        return 0

    def u32(self, what: str) -> int:
        i = self.view(4, what)
        self.pos += 4
        return _U32.unpack_from(self.buf, i)[0]

    def u64(self, what: str) -> int:
        i = self.view(8, what)
        self.pos += 8
        return _U64.unpack_from(self.buf, i)[0]

    def string(self, what: str, limit: int = _MAX_STRING) -> bytes:
        start = self.pos
        n = self.u64(f"length of {what}")
        if n > self.size - self.pos:
            self.past_end(start, f"{what} length {n}")
        if n > limit:
            self.fail(start, f"{what} length {n} is over the limit of {limit}")
        i = self.view(n, what)
        self.pos += n
        return bytes(self.mv[i : i + n])

    def spend(self, n: int, offset: int) -> None:
        self.budget -= n
        if self.budget < 0:
            self.fail(offset, "the header holds more array elements than any GGUF model has")

    def walk_strings(self, key: str, n: int, digest: Any = None) -> None:
        """Step the cursor over n length-prefixed strings, feeding their bytes to digest.

        No bounds checks in the loop itself: a length that leads outside the window makes
        unpack_from raise (or the regex not match), then the window slides on, or the slow
        walk says what is wrong.
        """
        start = self.pos
        if n == 0:
            return
        self.spend(n, start)
        if n * 8 > self.size - start:
            self.bad_string_array(key, n)
        if not (self.base <= start and start + 8 <= self.base + self.have):
            self.load(start, 8)
        unpack = _U64.unpack_from
        match = _strings_re().match
        k = 0  # strings stepped over
        cur = start  # file offset of string k (of the end once k == n)
        done = start  # bytes before this went to the digest
        while True:
            buf, mv, base, have = self.buf, self.mv, self.base, self.have
            p = cur - base
            try:
                while k < n:
                    if n - k >= _RE_CHUNK:
                        m = match(buf, p, have)
                        if m is not None:
                            p = m.end()
                            k += _RE_CHUNK
                            continue
                        stop = k + _RE_CHUNK  # a long string, or the window ends: by hand
                    else:
                        stop = n
                    first = k
                    # After an exception k is the string whose length could not be read.
                    for k in range(first, stop):  # noqa: B007
                        p += 8 + unpack(mv, p)[0]
                    k = stop
            except (struct.error, OverflowError):
                pass  # string k's length lies outside the window
            cur = base + p
            if k == n and p <= have:
                if digest is not None:
                    digest.update(mv[done - base : p])
                self.pos = cur
                return
            if cur + (8 if k < n else 0) > self.size:
                self.bad_string_array(key, n)
            # Slide on: hash what the window holds, keep string k's length readable.
            if digest is not None:
                digest.update(mv[done - base :])
            done = base + have
            nxt = min(cur, done)
            self.load(nxt, min(self.window, self.size - nxt))

    def bad_string_array(self, key: str, n: int) -> NoReturn:
        """Walk a string array one checked string at a time to report what is wrong."""
        start = self.pos
        if n * 8 > self.size - start:
            self.past_end(start - 8, f"array '{key}' of {n} strings")
        pos = start
        for k in range(n):
            if pos + 8 > self.size:
                self.past_end(pos, f"string {k} of array '{key}'")
            self.pos = pos
            length = self.u64("string length")
            if length > self.size - pos - 8:
                self.past_end(pos, f"string {k} of array '{key}': string length {length}")
            pos += 8 + length
        self.fail(start, f"array '{key}' could not be read")  # unreachable in practice

    def value(self, key: str, vtype: int, depth: int = 0) -> Any:
        start = self.pos
        if vtype == T_STRING:
            return self.string(f"value of '{key}'").decode("utf-8", "replace")
        if vtype == T_ARRAY:
            return self.array(key, depth)
        st = _SCALAR_STRUCTS.get(vtype)
        if st is None:
            self.fail(start - 4, f"key '{key}' has unknown value type {vtype}")
        i = self.view(st.size, f"value of '{key}'")
        self.pos += st.size
        return st.unpack_from(self.buf, i)[0]

    def array(self, key: str, depth: int) -> Any:
        apos = self.pos
        if depth >= _MAX_NESTING:
            self.fail(apos, f"'{key}' has arrays nested more than {_MAX_NESTING} deep")
        itype = self.u32(f"element type of array '{key}'")
        n = self.u64(f"length of array '{key}'")
        start = self.pos
        left = self.size - start
        if n > _MAX_ARRAY:
            self.fail(
                apos + 4, f"array '{key}' claims {n} elements, over the limit of {_MAX_ARRAY}"
            )
        scalar = _SCALARS.get(itype)
        if scalar is not None:
            code, size = scalar
            if n * size > left:
                self.past_end(apos + 4, f"array '{key}' of {n} {VALUE_TYPE_NAMES[itype]} values")
            if key == TOKEN_TYPES_KEY and depth == 0 and itype == T_INT32:
                self.types_at = (start, start + n * size)
            if n > SMALL_ARRAY_MAX:
                self.pos += n * size  # skipped by arithmetic: never read
                return ArrayInfo(itype, n, start)
            i = self.view(n * size, f"array '{key}'")
            self.pos += n * size
            return list(struct.unpack_from(f"<{n}{code}", self.buf, i))
        if itype == T_STRING:
            # Identity of the vocabulary: every token's stored bytes with their lengths.
            is_tokens = key == TOKENS_KEY and depth == 0
            digest: Any = hashlib.sha256() if is_tokens else None
            if n > SMALL_ARRAY_MAX:
                self.walk_strings(key, n, digest)
                out: Any = ArrayInfo(itype, n, start)
            else:
                if n * 8 > left:
                    self.past_end(apos + 4, f"array '{key}' of {n} strings")
                out = []
                for k in range(n):
                    b = self.string(f"string {k} of array '{key}'")
                    if digest is not None:
                        digest.update(_U64.pack(len(b)))
                        digest.update(b)
                    out.append(b.decode("utf-8", "replace"))
            if digest is not None:
                self.token_digest = digest.hexdigest()
                self.tokens_at = (start, self.pos, n)
            return out
        if itype == T_ARRAY:
            # Each inner array costs at least its type and length (12 bytes).
            if n * 12 > left:
                self.past_end(apos + 4, f"array '{key}' of {n} arrays")
            self.spend(n, apos)
            if n > SMALL_ARRAY_MAX:
                for _ in range(n):
                    self.array(key, depth + 1)
                return ArrayInfo(itype, n, start)
            return [self.array(key, depth + 1) for _ in range(n)]
        self.fail(apos, f"array '{key}' has unknown element type {itype}")


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


FileKey = tuple[str, int, int, int, int]  # path as given, size, mtime (ns), inode, device


class _FileCache:
    """What was read lately from files, keyed by what changes when a file is written
    (`FileKey`). Shared by every thread (re-plans and library scans run on a pool), so guarded
    by a lock; what it hands out is shared too: callers read it, never change it.

    A file modified less than `RACY_NS` before it was read is not kept: written again in
    place at the same size within the file system's timestamp step (a few ms on ext4, 2 s on
    FAT), it would look unchanged (git's "racily clean" index entries, the same cure)."""

    RACY_NS = 2_000_000_000

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[FileKey, Any] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(path: Path) -> FileKey | None:
        try:
            st = os.stat(path)
        except OSError:
            return None  # the read says why
        return str(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev

    def get(self, key: FileKey, usable: Callable[[Any], bool] = lambda _v: True) -> Any:
        """The value kept for `key` if `usable` takes it, else None."""
        with self._lock:
            value = self._entries.get(key)
            if value is None or not usable(value):
                return None
            self._entries.move_to_end(key)
            return value

    def put(self, key: FileKey, value: Any, read_at_ns: int,
            keep_old: Callable[[Any, Any], bool] = lambda _old, _new: False) -> None:
        """Keep `value`, read from the file at `read_at_ns` (time.time_ns), unless the file
        was modified too shortly before, or `keep_old(old, value)` prefers the one kept."""
        if key[2] > read_at_ns - self.RACY_NS:
            return
        with self._lock:
            old = self._entries.get(key)
            if old is not None and keep_old(old, value):
                return
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


# A folder's model and drafters, a few re-plans' worth of headers; token lists are megabytes
# (a Qwen-size one is 2 MB): the few models being planned.
_headers = _FileCache(32)
_vocabs = _FileCache(4)


def clear_header_cache() -> None:
    """Forget the parsed headers and token lists (tests and benchmarks that time a first read)."""
    _headers.clear()
    _vocabs.clear()


def read_header(path: str | Path, *, keep_vocab: bool = False) -> GGUFHeader:
    """Read a GGUF file's metadata and tensor table. Raises GGUFError, nothing else.

    `keep_vocab` also keeps the token list and types (`GGUFHeader.vocab`) from the same
    read, for a draft whose vocabulary is compared with the model's. A file parsed before and
    unchanged since is not parsed again (`_FileCache`); the header returned is shared.
    """
    path = Path(path)
    key = _FileCache.key(path)
    if key is not None:
        # A read without the token list cannot answer one that needs it.
        cached = _headers.get(key, lambda h: not (keep_vocab and h.vocab is None and h.vocab_place is not None))
        if cached is not None:
            return cached
    parsed_at = time.time_ns()
    header = _read_header_file(path, keep_vocab)
    if key is not None and _FileCache.key(path) == key:  # not written while it was read
        # The read that holds the token list answers both kinds: it stays.
        _headers.put(key, header, parsed_at, lambda old, new: old.vocab is not None and new.vocab is None)
    return header


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


# --- shards ---------------------------------------------------------------------------------

_SHARD_RE = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)


def shard_stem(path: str | Path) -> str:
    """The file stem without a `-0000N-of-0000M` shard tag ("model" for model-00001-of-00003)."""
    p = Path(path)
    m = _SHARD_RE.match(p.name)
    return m.group("stem") if m else p.stem


def _expected_shards(path: Path) -> list[Path]:
    m = _SHARD_RE.match(path.name)
    if not m:
        return [path]
    count = int(m.group("count"))
    stem = m.group("stem")
    return [path.with_name(f"{stem}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]


def shard_siblings(path: str | Path) -> list[Path]:
    """The shards of the model `path` belongs to that exist, in order (`[path]` if unsplit)."""
    p = Path(path)
    expected = _expected_shards(p)
    if len(expected) == 1:
        return expected
    return [s for s in expected if s == p or s.is_file()]


# --- summary --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenizerId:
    """What decides whether two models share a vocabulary (target and draft must)."""

    model: str | None
    pre: str | None
    vocab_size: int | None
    bos_id: int | None
    eos_id: int | None
    tokens_sha256: str | None
    # tokenizer.ggml.add_bos_token / add_eos_token as written (None: absent, the engine's
    # default for the tokenizer applies: core/speculation/pairing.py).
    add_bos: bool | None = None
    add_eos: bool | None = None
    # Where the token list lies in the file, to compare two lists token by token.
    place: VocabPlace | None = field(default=None, compare=False)
    # Ids the header names that end a reply, before the engine's detection by text
    # (tokenizer.ggml.eot/eom/fim_pad/fim_rep/fim_sep_token_id): pairing must not ban them.
    end_ids: tuple[int, ...] = field(default=(), compare=False)


PerLayer = int | list[int] | None
# Architectures of MTP drafters that are models of their own (Gemma 4's assistant: the pinned
# src/models/gemma4-assistant.cpp); what they draft for is engine knowledge (core/engines).
_ASSISTANT_ARCHS = frozenset({"gemma4-assistant"})
# Header ids of tokens that end generation (src/llama-vocab.cpp puts them in special_eog_ids).
_END_ID_KEYS = tuple(f"tokenizer.ggml.{k}_token_id" for k in ("eot", "eom", "fim_pad", "fim_rep", "fim_sep"))


@dataclass
class ModelInfo:
    path: Path
    files: list[Path]
    architecture: str | None
    name: str | None
    file_type: int | None
    quant: str | None
    parameters: int
    block_count: int | None
    context_length: int | None
    embedding_length: int | None
    feed_forward_length: PerLayer
    head_count: PerLayer
    head_count_kv: PerLayer
    key_length: int | None
    value_length: int | None
    sliding_window: int | None
    sliding_window_pattern: int | list[bool] | list[int] | None
    shared_kv_layers: int | None
    full_attention_interval: int | None
    ssm_conv_kernel: int | None
    ssm_inner_size: int | None
    ssm_state_size: int | None
    ssm_time_step_rank: int | None
    ssm_group_count: int | None
    expert_count: int | None
    expert_used_count: int | None
    expert_shared_count: int | None
    nextn_predict_layers: int | None
    rope_scaling_type: str | None
    rope_scaling_factor: float | None
    rope_scaling_original_context: int | None
    tokenizer: TokenizerId
    has_chat_template: bool
    is_projector: bool
    projectors: list[Path]
    # "dflash", "dspark", "eagle3", "mtp-only", "assistant" (an MTP drafter model of its own
    # architecture, Gemma 4's), a file that only helps a target model, or None.
    sidecar_kind: str | None
    mtp_head_present: bool
    # "full" (trunk and MTP head), "trunk-only" (head declared, stripped), "mtp-only", or None.
    mtp_layout: str | None
    size_bytes: int
    tensor_bytes: int
    tensor_count: int
    shards: int
    missing_shards: list[str]
    version: int = 3
    # The token list itself, kept only by `read_model(..., keep_vocab=True)`.
    vocab: Vocab | None = field(default=None, compare=False, repr=False)
    # tokenizer.chat_template: pairing asks whether it writes a token only the model has.
    chat_template: str | None = field(default=None, compare=False, repr=False)
    # `<arch>.embedding_length_out`: an MTP assistant's target width (the engine asserts they match).
    embedding_length_out: int | None = None

    @property
    def has_mtp_head(self) -> bool:
        """The model declares an MTP head and this file holds its tensors (what MTP auto runs)."""
        return bool(self.nextn_predict_layers and self.mtp_head_present)


def _bool(v: Any) -> bool | None:
    return v if isinstance(v, bool) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _per_layer(v: Any) -> PerLayer:
    if isinstance(v, list) and all(_int(x) is not None for x in v):
        return v
    return _int(v)


def _first(v: PerLayer) -> int | None:
    if isinstance(v, list):
        return v[0] if v else None
    return v


def _guess_quant(tensors: Sequence[TensorInfo]) -> str | None:
    # The weight type used by most matrices; norms and biases (1-D) stay F32 in every quant.
    counts: Counter[int] = Counter()
    sizes: Counter[int] = Counter()
    for t in tensors:
        if len(t.shape) >= 2 and t.name.endswith(".weight"):
            counts[t.ggml_type] += 1
            sizes[t.ggml_type] += t.nbytes
    if not counts:
        return None
    best = max(counts, key=lambda g: (counts[g], sizes[g]))
    return GGML_TYPES[best][0]


def summarize(
    header: GGUFHeader,
    shards: Sequence[GGUFHeader] = (),
    missing_shards: Sequence[str] = (),
) -> ModelInfo:
    """Summarize a header; `shards` are the other shards' headers (metadata is `header`'s)."""
    kv = header.kv
    arch = kv.get("general.architecture")
    arch = arch if isinstance(arch, str) else None
    headers = [header, *[s for s in shards if s is not header]]
    tensors = [t for h in headers for t in h.tensors]
    names = {t.name for t in tensors}

    def a(key: str) -> Any:
        return header.get(f"{arch}.{key}") if arch else None

    block_count = _int(a("block_count"))
    embd = _int(a("embedding_length"))
    head_count = _per_layer(a("attention.head_count"))
    n_head0 = _first(head_count)
    default_head = embd // n_head0 if embd and n_head0 else None

    file_type = _int(kv.get("general.file_type"))
    quant = ftype_name(file_type) if file_type is not None else _guess_quant(tensors)

    tokens = header.get(TOKENS_KEY)
    if isinstance(tokens, ArrayInfo):
        vocab_size: int | None = tokens.length
    elif isinstance(tokens, list):
        vocab_size = len(tokens)
    else:
        vocab_size = _int(a("vocab_size"))
    tok_model, tok_pre = kv.get("tokenizer.ggml.model"), kv.get("tokenizer.ggml.pre")
    tokenizer = TokenizerId(
        model=tok_model if isinstance(tok_model, str) else None,
        pre=tok_pre if isinstance(tok_pre, str) else None,
        vocab_size=vocab_size,
        bos_id=_int(kv.get("tokenizer.ggml.bos_token_id")),
        eos_id=_int(kv.get("tokenizer.ggml.eos_token_id")),
        tokens_sha256=header.tokens_sha256,
        add_bos=_bool(kv.get("tokenizer.ggml.add_bos_token")),
        add_eos=_bool(kv.get("tokenizer.ggml.add_eos_token")),
        place=header.vocab_place,
        end_ids=tuple(i for k in _END_ID_KEYS if (i := _int(kv.get(k))) is not None),
    )

    # MTP and sidecars, decided like the engine's loaders (src/models/*.cpp, speculative.cpp).
    nextn = _int(a("nextn_predict_layers"))
    mtp_head_present = False
    mtp_layout = None
    if nextn and nextn > 0:
        probe = f"blk.{block_count - nextn}.nextn.eh_proj.weight" if block_count else None
        mtp_head_present = probe is not None and probe in names
        if "blk.0.attn_norm.weight" not in names and any(".nextn." in n for n in names):
            mtp_layout = "mtp-only"
        else:
            mtp_layout = "full" if mtp_head_present else "trunk-only"
    if arch in _ASSISTANT_ARCHS:
        # An MTP drafter of its own architecture: every block is a nextn block (block_count =
        # nextn_predict_layers), recognised by the projection the loader requires.
        mtp_head_present = "nextn.pre_projection.weight" in names
        mtp_layout = "mtp-only"
    sidecar = None
    if arch in _ASSISTANT_ARCHS:
        sidecar = "assistant"
    elif arch == "dflash":
        sidecar = "dspark" if "markov_w1.weight" in names else "dflash"
    elif arch == "eagle3":
        # The engine picks the EAGLE3 loader by architecture only; its tensors (fc, d2t) are
        # shared with dflash, so they prove nothing by themselves.
        sidecar = "eagle3"
    elif mtp_layout == "mtp-only":
        sidecar = "mtp-only"

    files = [h.path for h in headers]
    own = set(files)
    folder = header.path.parent
    try:
        projectors = sorted(p for p in folder.glob("*.gguf")
                            if "mmproj" in p.name.lower() and p not in own)  # fmt: skip
    except OSError:
        projectors = []
    template = kv.get("tokenizer.chat_template")
    swa_pattern = a("attention.sliding_window_pattern")
    rope_type, rope_factor = a("rope.scaling.type"), a("rope.scaling.factor")
    return ModelInfo(
        path=header.path,
        files=files,
        architecture=arch,
        name=kv.get("general.name") if isinstance(kv.get("general.name"), str) else None,
        file_type=file_type,
        quant=quant,
        parameters=sum(t.n_elements for t in tensors),
        block_count=block_count,
        context_length=_int(a("context_length")),
        embedding_length=embd,
        feed_forward_length=_per_layer(a("feed_forward_length")),
        head_count=head_count,
        head_count_kv=_per_layer(a("attention.head_count_kv")),
        key_length=_int(a("attention.key_length")) or default_head,
        value_length=_int(a("attention.value_length")) or default_head,
        sliding_window=_int(a("attention.sliding_window")),
        sliding_window_pattern=swa_pattern if isinstance(swa_pattern, int | list) else None,
        shared_kv_layers=_int(a("attention.shared_kv_layers")),
        full_attention_interval=_int(a("full_attention_interval")),
        ssm_conv_kernel=_int(a("ssm.conv_kernel")),
        ssm_inner_size=_int(a("ssm.inner_size")),
        ssm_state_size=_int(a("ssm.state_size")),
        ssm_time_step_rank=_int(a("ssm.time_step_rank")),
        ssm_group_count=_int(a("ssm.group_count")),
        expert_count=_int(a("expert_count")),
        expert_used_count=_int(a("expert_used_count")),
        expert_shared_count=_int(a("expert_shared_count")),
        nextn_predict_layers=nextn,
        rope_scaling_type=rope_type if isinstance(rope_type, str) else None,
        rope_scaling_factor=float(rope_factor) if isinstance(rope_factor, int | float) else None,
        rope_scaling_original_context=_int(a("rope.scaling.original_context_length")),
        tokenizer=tokenizer,
        has_chat_template=isinstance(template, str) and bool(template),
        is_projector=arch == "clip" or any(k.startswith("clip.") for k in header.kv_types),
        projectors=projectors,
        sidecar_kind=sidecar,
        mtp_head_present=mtp_head_present,
        mtp_layout=mtp_layout,
        size_bytes=sum(h.file_size for h in headers),
        tensor_bytes=sum(t.nbytes for t in tensors),
        tensor_count=len(tensors),
        shards=max(len(headers) + len(missing_shards), 1),
        missing_shards=list(missing_shards),
        version=header.version,
        vocab=header.vocab,
        chat_template=template if isinstance(template, str) and template else None,
        embedding_length_out=_int(a("embedding_length_out")),
    )


def read_model(path: str | Path, *, keep_vocab: bool = False) -> ModelInfo:
    """Summarize the model at `path`, reading every present shard when it is split.

    A missing shard is reported in `missing_shards`, not raised: the UI says what to download.
    `keep_vocab` keeps the token list in `ModelInfo.vocab` (a draft about to be compared).
    """
    p = Path(path)
    expected = _expected_shards(p)
    if len(expected) == 1:
        header = read_header(p, keep_vocab=keep_vocab)
        count = _int(header.kv.get("split.count")) or 1
        missing = []
        if count > 1:
            # A split file renamed without its tag: the others cannot be found by name.
            missing = [f"{p.stem}-{i:05d}-of-{count:05d}.gguf" for i in range(2, count + 1)]
        return summarize(header, (), missing)
    present = [s for s in expected if s == p or s.is_file()]
    # Only the first shard carries the tokenizer.
    headers = [read_header(s, keep_vocab=keep_vocab and s == expected[0]) for s in present]
    missing = [s.name for s in expected if s not in present]
    # Metadata lives in the first shard (split.no 0); later shards carry only split keys.
    first = next((h for h in headers if h.kv.get("split.no") == 0), headers[0])
    return summarize(first, headers, missing)


def read_vocab(info: ModelInfo) -> Vocab:
    """The token list and types of a model summarized without them (`info.vocab` is None),
    read from the byte ranges the header walk recorded. Raises GGUFError when the file has
    no token list or changed since it was summarized (its token digest no longer matches).
    """
    if info.vocab is not None:
        return info.vocab
    place = info.tokenizer.place
    if place is None:
        raise GGUFError(info.path, None, "the file has no token list", hint=None)
    key = _FileCache.key(info.path)
    # The same list of an unchanged file (every re-plan pairs the model with its drafter again).
    digest = info.tokenizer.tokens_sha256
    cached = _vocabs.get(key, lambda v: v[:2] == (place, digest)) if key is not None else None
    if cached is not None:
        return cached[2]
    read_at = time.time_ns()
    vocab = _read_vocab_file(info, place)  # checked against `digest`
    if key is not None and _FileCache.key(info.path) == key:
        _vocabs.put(key, (place, digest, vocab), read_at)
    return vocab


def _read_vocab_file(info: ModelInfo, place: VocabPlace) -> Vocab:
    f = _open(info.path)
    try:
        try:
            tokens = _read_range(f, place.tokens)
            types = _read_range(f, place.types) if place.types else None
        except OSError as e:
            raise GGUFError(info.path, place.tokens[0], f"could not read the token list ({e.strerror or e})",
                            hint=None) from None
    finally:
        f.close()
    if hashlib.sha256(tokens).hexdigest() != info.tokenizer.tokens_sha256:
        raise GGUFError(info.path, place.tokens[0], "the file changed since it was read",
                        hint="Choose the model again.")
    return Vocab(tokens, place.count, types)


def _read_range(f: BinaryIO, where: tuple[int, int]) -> bytes:
    start, end = where
    f.seek(start)
    data = f.read(end - start)
    if len(data) != end - start:
        raise OSError("the file got shorter")
    return data


def skip_strings(tokens: bytes | memoryview, start: int, n: int) -> int:
    """The offset in `tokens` (length-prefixed strings) after `n` strings from `start`.

    Bulk steps go through the reader's regex (1024 short strings at a time, in C); the rest
    by hand. Raises ValueError when the strings run past the end.
    """
    match = _strings_re().match
    have = len(tokens)
    p, k = start, 0
    while k < n:
        if n - k >= _RE_CHUNK:
            m = match(tokens, p, have)
            if m is not None:
                p, k = m.end(), k + _RE_CHUNK
                continue
        if p + 8 > have:
            raise ValueError("token list ends early")
        p += 8 + _U64.unpack_from(tokens, p)[0]
        k += 1
    if p > have:
        raise ValueError("token list ends early")
    return p


def model_info_json(info: ModelInfo) -> dict[str, Any]:
    """A JSON-ready dict of the summary (paths as strings, null where unknown)."""
    tok = info.tokenizer
    return {
        "path": str(info.path),
        "files": [str(f) for f in info.files],
        "architecture": info.architecture,
        "name": info.name,
        "file_type": info.file_type,
        "quant": info.quant,
        "parameters": info.parameters,
        "block_count": info.block_count,
        "context_length": info.context_length,
        "embedding_length": info.embedding_length,
        "feed_forward_length": info.feed_forward_length,
        "head_count": info.head_count,
        "head_count_kv": info.head_count_kv,
        "key_length": info.key_length,
        "value_length": info.value_length,
        "sliding_window": info.sliding_window,
        "sliding_window_pattern": info.sliding_window_pattern,
        "shared_kv_layers": info.shared_kv_layers,
        "full_attention_interval": info.full_attention_interval,
        "ssm": {
            "conv_kernel": info.ssm_conv_kernel,
            "inner_size": info.ssm_inner_size,
            "state_size": info.ssm_state_size,
            "time_step_rank": info.ssm_time_step_rank,
            "group_count": info.ssm_group_count,
        },
        "expert_count": info.expert_count,
        "expert_used_count": info.expert_used_count,
        "expert_shared_count": info.expert_shared_count,
        "nextn_predict_layers": info.nextn_predict_layers,
        "mtp_head_present": info.mtp_head_present,
        "mtp_layout": info.mtp_layout,
        "sidecar_kind": info.sidecar_kind,
        "rope_scaling": {
            "type": info.rope_scaling_type,
            "factor": info.rope_scaling_factor,
            "original_context": info.rope_scaling_original_context,
        },
        "tokenizer": {
            "model": tok.model,
            "pre": tok.pre,
            "vocab_size": tok.vocab_size,
            "bos_id": tok.bos_id,
            "eos_id": tok.eos_id,
            "tokens_sha256": tok.tokens_sha256,
            "add_bos": tok.add_bos,
            "add_eos": tok.add_eos,
        },
        "has_chat_template": info.has_chat_template,
        "is_projector": info.is_projector,
        "projectors": [str(p) for p in info.projectors],
        "size_bytes": info.size_bytes,
        "tensor_bytes": info.tensor_bytes,
        "tensor_count": info.tensor_count,
        "shards": info.shards,
        "missing_shards": list(info.missing_shards),
        "version": info.version,
    }


@dataclass(frozen=True)
class ProjectorInfo:
    """A multimodal projector file (mmproj, `general.architecture` "clip"), as the engine's
    clip loader reads it (tools/mtmd/clip.cpp load_hparams)."""

    path: Path
    projector_type: str | None  # clip.projector_type (or the vision/audio one)
    # The text model's embedding length it feeds (clip.vision/audio.projection_dim); mtmd
    # refuses a model whose n_embd differs.
    projection_dim: int | None
    tensor_bytes: int  # the weights it loads (the sum of its tensors, "model size")


def read_projector(path: str | Path) -> ProjectorInfo:
    """GGUFError for a file that is not a projector."""
    header = read_header(path)
    kv = header.kv
    if kv.get("general.architecture") != "clip" and not any(k.startswith("clip.") for k in kv):
        raise GGUFError(Path(path), None, "not a projector (mmproj): its architecture is not clip", hint=None)
    ptype = next((v for k in ("clip.projector_type", "clip.vision.projector_type", "clip.audio.projector_type")
                  if isinstance(v := kv.get(k), str)), None)  # fmt: skip
    dim = next((v for k in ("clip.vision.projection_dim", "clip.audio.projection_dim")
                if (v := _int(kv.get(k))) is not None), None)  # fmt: skip
    return ProjectorInfo(header.path, ptype, dim, sum(t.nbytes for t in header.tensors))
