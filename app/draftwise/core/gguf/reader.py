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

This module reads files from disk through those caches (`read_header`, `read_model` with the
shards a split model has, `read_vocab`, `read_projector`) and is the package's one import:
every public name below is importable from here. The rest lives beside it:

- header.py: the format's constants and limits, `GGUFError`, what a parsed header is
  (`GGUFHeader`, `TensorInfo`, `ArrayInfo`, `VocabPlace`, `Vocab`);
- byte_reader.py: the window over the file and every checked read (`_Reader`: values,
  arrays, the string walk, the token list's hash and place), `skip_strings`;
- parse.py: what a header must be (magic, version, keys, alignment, the tensor table), the
  uncached parses `read_header_stream` (over HTTP ranges) and `read_header_bytes`;
- file_cache.py: `_FileCache`, what was read lately from files while they stay the same;
- model_info.py: `ModelInfo`, `TokenizerId` and `summarize` (geometry, quant, tokenizer
  identity, MTP head and layout, sidecars), `model_info_json`, `ProjectorInfo`.
"""

from __future__ import annotations

import hashlib
import re
import time
from pathlib import Path

from draftwise.core.gguf.byte_reader import skip_strings
from draftwise.core.gguf.file_cache import FileKey, _FileCache
from draftwise.core.gguf.header import (
    DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    SMALL_ARRAY_MAX,
    SUPPORTED_VERSIONS,
    T_ARRAY,
    T_BOOL,
    T_FLOAT32,
    T_FLOAT64,
    T_INT8,
    T_INT16,
    T_INT32,
    T_INT64,
    T_STRING,
    T_UINT8,
    T_UINT16,
    T_UINT32,
    T_UINT64,
    TOKEN_TYPES_KEY,
    TOKENS_KEY,
    VALUE_TYPE_NAMES,
    ArrayInfo,
    GGUFError,
    GGUFHeader,
    TensorInfo,
    Vocab,
    VocabPlace,
)
from draftwise.core.gguf.model_info import (
    ModelInfo,
    PerLayer,
    ProjectorInfo,
    TokenizerId,
    _int,
    model_info_json,
    summarize,
)

# read_header calls `_read_header_file` by this module's name (a test that counts the
# parses replaces it here, as it does `_read_vocab_file` below).
from draftwise.core.gguf.parse import (
    _open,
    _read_header_file,
    _read_range,
    read_header_bytes,
    read_header_stream,
)

__all__ = [
    "ArrayInfo",
    "DEFAULT_ALIGNMENT",
    "FileKey",
    "GGUFError",
    "GGUFHeader",
    "GGUF_MAGIC",
    "ModelInfo",
    "PerLayer",
    "ProjectorInfo",
    "SMALL_ARRAY_MAX",
    "SUPPORTED_VERSIONS",
    "TOKENS_KEY",
    "TOKEN_TYPES_KEY",
    "T_ARRAY",
    "T_BOOL",
    "T_FLOAT32",
    "T_FLOAT64",
    "T_INT16",
    "T_INT32",
    "T_INT64",
    "T_INT8",
    "T_STRING",
    "T_UINT16",
    "T_UINT32",
    "T_UINT64",
    "T_UINT8",
    "TensorInfo",
    "TokenizerId",
    "VALUE_TYPE_NAMES",
    "Vocab",
    "VocabPlace",
    "model_info_json",
    "clear_header_cache",
    "read_header",
    "read_header_bytes",
    "read_header_stream",
    "read_model",
    "read_projector",
    "read_vocab",
    "shard_siblings",
    "shard_stem",
    "skip_strings",
    "summarize",
]

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
