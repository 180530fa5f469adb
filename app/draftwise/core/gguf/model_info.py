"""The model a header describes: `ModelInfo` and how it is derived (`summarize`).

Geometry (blocks, widths, heads, sliding window, SSM, experts, RoPE scaling) read from the
architecture's keys; the quant (the file type, else the type most matrices have); the
tokenizer's identity (`TokenizerId`, with the token-list hash and the ids that end a reply);
the MTP head and layout and the drafter sidecars, decided like the engine's loaders;
projectors beside the file; shards' sizes and tensors summed. Also the summary as JSON
(`model_info_json`) and a projector's facts (`ProjectorInfo`). Reading the files is
reader.py's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core.gguf.ggml_types import GGML_TYPES, ftype_name
from draftwise.core.gguf.header import (
    TOKENS_KEY,
    ArrayInfo,
    GGUFHeader,
    TensorInfo,
    Vocab,
    VocabPlace,
)


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
