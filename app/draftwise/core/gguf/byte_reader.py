"""The window over a GGUF file and every checked read from it (`_Reader`).

One reused 1 MiB window slid along the file, a cursor, and the bounds checks: every length
and count is checked against the bytes the file really has before anything is read or
allocated. It reads scalars, strings and metadata values; long arrays are skipped (numeric
ones by arithmetic, strings stepped over in C by a regex, a tight `struct.unpack_from` loop
for what it cannot take), the token list hashed a window at a time and its place recorded.
`skip_strings` is the same regex walk over a token list held in memory. What a header must
hold (magic, version, keys, the tensor table) is parse.py's.
"""

from __future__ import annotations

import hashlib
import re
import struct
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from draftwise.core.gguf.header import (
    _DAMAGED,
    _MAX_ARRAY,
    _MAX_BUFFER,
    _MAX_ELEMENTS_WALKED,
    _MAX_NESTING,
    _MAX_STRING,
    _SCALAR_STRUCTS,
    _SCALARS,
    _U32,
    _U64,
    _WINDOW,
    SMALL_ARRAY_MAX,
    T_ARRAY,
    T_INT32,
    T_STRING,
    TOKEN_TYPES_KEY,
    TOKENS_KEY,
    VALUE_TYPE_NAMES,
    ArrayInfo,
    GGUFError,
)
from draftwise.core.messages import Message

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
