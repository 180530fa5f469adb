"""The memory-relevant geometry of a model (target or drafter), read from its GGUF header:
per block the K and V widths, sliding window or not, recurrent or not, the FFN width the
compute graph holds, a sparse-attention indexer's own cache; the recurrent state sizes;
DeepSeek-V4's compressed caches; Gemma 3n's graph dimensions.

Written against the pinned engine's source (11434): which layers are recurrent, sliding or
share KV follows each architecture's loader (src/llama-model.cpp, src/models/<arch>.cpp);
what those bytes come to is kv_cache.py's and context_bytes.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Message, msg
from draftwise.core.planning import gemma3n_graph

# Architectures whose every layer is recurrent (llm_arch_is_recurrent).
RECURRENT_ARCHS = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})
# Hybrids where a layer with 0 KV heads is recurrent (their load_arch_hparams).
HYBRID_BY_KV_HEADS = frozenset({
    "jamba", "plamo2", "granitehybrid", "lfm2", "lfm2moe", "nemotron_h", "nemotron_h_moe",
    "kimi-linear", "bailingmoe3", "kimi-k3", "glm5-next",
})  # fmt: skip
# Hybrids where every `full_attention_interval`-th layer is attention, the rest recurrent.
HYBRID_BY_INTERVAL = frozenset({"qwen3next", "qwen35", "qwen35moe", "qwen4exp", "minimax-01"})

# Default sliding-window pattern per architecture when the file has no pattern key:
# (n_pattern, dense_first) as passed to load_swa_pattern / set_swa_pattern in
# src/models/<arch>.cpp, keyed by the name a file gives its architecture
# (`general.architecture`, llama-arch.cpp LLM_ARCH_NAMES): LLM_ARCH_OPENAI_MOE is "gpt-oss".
# tests/test_planner.py checks the table against the pinned source.
SWA_PATTERNS: dict[str, tuple[int, bool]] = {
    "gemma2": (2, False), "gemma3": (6, False), "gemma3n": (5, False), "cohere2": (4, False),
    "cohere2moe": (4, True), "afmoe": (4, False), "exaone4": (4, False),
    "exaone-moe": (4, False), "gemma-embedding": (6, False), "llama4": (4, False),
    "mellum": (4, False), "modern-bert": (3, True), "muse-glimmer": (4, False),
    "olmo2": (4, False), "gpt-oss": (2, False), "phi3": (1, False), "plamo3": (8, False),
    "smallthinker": (4, True), "laguna": (4, True), "deepseek4": (0, False),
}  # fmt: skip


@dataclass(frozen=True)
class Layer:
    """What one block costs besides its weights."""

    k: int = 0  # K elements per token (heads x key length); 0 = no KV in this layer
    v: int = 0  # V elements per token (0 for MLA: K only)
    swa: bool = False
    recurrent: bool = False
    ff: int = 0  # FFN width the compute graph holds (dense n_ff, or experts used x n_ff_exp)
    # A sparse-attention indexer's own cache in this layer (K and V elements per token, in
    # the KV types, at the full cache's cells): DeepSeek-V3.2 / GLM-5 DSA, MiniMax-M3 MSA,
    # Hunyuan-V4, Qwen4-exp QSA, GLM-5-next (`indexer_cache`).
    idx_k: int = 0
    idx_v: int = 0
    n_used: int = 0  # routed experts per token (MoE blocks): the down projection's rows
    q: int = 0  # query width (heads x key length) of an attention block
    heads: int = 0  # its query heads: without flash attention each holds KQ scores (compute_buffer.scores_bytes)
    mla_w: int = 0  # an MLA block's attention in the latent space: heads x 2 x (K row + V head)
    idx_q: int = 0  # the indexer's query width (indexer heads x head length)


@dataclass(frozen=True)
class Dsv4Cache:
    """llama_kv_cache_dsv4 (src/llama-kv-cache-dsv4.cpp): every block keeps a K-only raw
    cache in a sliding window; blocks with compress ratio 4 (CSA) add a compressed K cache
    of ceil(cells / 4) rows, a lightning-indexer K cache of as many rows and two compressor
    states; ratio 128 (HCA) a compressed cache of ceil(cells / 128) rows and its state. The
    compressed caches and states are per sequence, the states f32 with 1 + n_rs_seq planes."""

    ratios: tuple[int, ...]  # attention.compress_ratios, per block (MTP blocks included)
    k: int  # raw and compressed K elements per token (head length x KV heads)
    head_k: int  # n_embd_head_k (the compressor states' width)
    idx_k: int  # indexer head length


@dataclass(frozen=True)
class Shape:
    """The memory-relevant geometry of a model (target or drafter)."""

    arch: str
    n_embd: int
    n_vocab: int
    n_ctx_train: int
    layers: tuple[Layer, ...]  # all blocks, MTP blocks last
    n_nextn: int = 0
    n_swa: int = 0
    r_state: int = 0  # recurrent conv state per layer per sequence, f32 elements
    s_state: int = 0  # recurrent SSM state per layer per sequence, f32 elements
    ssm_inner: int = 0
    ssm_groups_state: int = 0  # n_group x d_state
    notes: tuple[Message, ...] = ()
    dsv4: Dsv4Cache | None = None  # DeepSeek-V4's compressed caches (llama-kv-cache-dsv4.cpp)
    # Share added to the KV of an architecture whose own cache is modelled from the source
    # but not yet compared with the engine's buffer lines (0: checked, or nothing unusual).
    kv_margin: float = 0.0
    # Gemma 3n's graph dimensions: its compute buffer is replayed from the engine's graph.
    gemma3n: gemma3n_graph.Gemma3nDims | None = None

    @property
    def n_layer(self) -> int:
        """Trunk blocks (without the MTP head)."""
        return len(self.layers) - self.n_nextn

    @property
    def trunk(self) -> tuple[Layer, ...]:
        return self.layers[: self.n_layer]

    @property
    def head(self) -> tuple[Layer, ...]:
        return self.layers[self.n_layer :]

    @property
    def hybrid(self) -> bool:
        return any(ly.recurrent for ly in self.trunk) and any(ly.k for ly in self.trunk)


def _per_layer(v: gguf.PerLayer, n: int, default: int) -> list[int]:
    if isinstance(v, list):
        return [int(x) for x in v[:n]] + [int(v[-1]) if v else default] * max(0, n - len(v))
    return [default if v is None else int(v)] * n


def _swa_flags(info: gguf.ModelInfo, kv: Mapping[str, Any], n_layer: int, n_all: int,
               recurrent: list[bool]) -> list[bool]:
    arch = info.architecture or ""
    if not info.sliding_window:
        return [False] * n_all
    pattern = info.sliding_window_pattern
    if isinstance(pattern, list):
        flags = [bool(x) for x in pattern[:n_all]]
        return flags + [False] * (n_all - len(flags))
    if arch in ("lfm2", "lfm2moe"):
        return [not r for r in recurrent[:n_layer]] + [False] * (n_all - n_layer)
    if isinstance(pattern, int):
        n_pattern, dense_first = pattern, SWA_PATTERNS.get(arch, (0, False))[1]
    elif arch in SWA_PATTERNS:
        n_pattern, dense_first = SWA_PATTERNS[arch]
    else:
        # An architecture whose loader ignores the window: a full cache (the safe side).
        return [False] * n_all
    flags = []
    for il in range(n_layer):
        if dense_first:
            flags.append(n_pattern == 0 or il % n_pattern != 0)
        else:
            flags.append(n_pattern == 0 or il % n_pattern < n_pattern - 1)
    return flags + [False] * (n_all - n_layer)


def shape_of(info: gguf.ModelInfo, kv: Mapping[str, Any] | None = None) -> Shape:
    """The geometry of `info`; `kv` is the header metadata for keys ModelInfo does not keep
    (per-SWA head lengths, MLA, short-conv and RWKV state sizes, recurrent layer lists)."""
    kv = kv or {}
    arch = info.architecture or ""

    def k(key: str, default: Any = None) -> Any:
        return kv.get(f"{arch}.{key}", default)

    n_all = info.block_count or 0
    n_nextn = info.nextn_predict_layers or 0
    n_layer = n_all - n_nextn
    e = info.embedding_length or 0
    heads = _per_layer(info.head_count, n_all, 0)
    heads_kv = _per_layer(info.head_count_kv, n_all, 0) if info.head_count_kv is not None else heads
    hk = info.key_length or 0
    hv = info.value_length or 0
    hk_swa = k("attention.key_length_swa") or hk
    hv_swa = k("attention.value_length_swa") or hv
    mla = bool(k("attention.key_length_mla"))
    notes: list[Message] = []

    # Which layers are recurrent (their loaders' is_recr_impl).
    rec_list = k("attention.recurrent_layers")
    if arch in RECURRENT_ARCHS:
        recurrent = [True] * n_layer + [False] * n_nextn
    elif isinstance(rec_list, list) and arch in HYBRID_BY_INTERVAL:
        recurrent = [bool(x) for x in rec_list[:n_all]] + [False] * max(0, n_all - len(rec_list))
    elif arch in HYBRID_BY_INTERVAL:
        interval = info.full_attention_interval or 4
        recurrent = [il < n_layer and (il + 1) % interval != 0 for il in range(n_all)]
    elif arch == "falcon-h1":
        recurrent = [True] * n_layer + [False] * n_nextn
    elif arch in HYBRID_BY_KV_HEADS:
        ff = _per_layer(info.feed_forward_length, n_all, 0)
        recurrent = [il < n_layer and heads_kv[il] == 0
                     and (arch not in ("nemotron_h", "nemotron_h_moe") or ff[il] == 0)
                     for il in range(n_all)]  # fmt: skip
    else:
        recurrent = [False] * n_all

    swa = _swa_flags(info, kv, n_layer, n_all, recurrent)
    shared = info.shared_kv_layers or 0
    kv_from = n_layer - shared if shared else n_all

    # FFN width per layer as the compute graph holds it.
    ff_dense = _per_layer(info.feed_forward_length, n_all, 0)
    n_exp_used = info.expert_used_count or 0
    ff_exp = k("expert_feed_forward_length")
    ff_shexp = k("expert_shared_feed_forward_length")
    n_dense_lead = k("leading_dense_block_count", 0) or 0
    layers: list[Layer] = []
    for il in range(n_all):
        has_kv = arch not in RECURRENT_ARCHS and il < kv_from and not (recurrent[il] and arch != "falcon-h1")
        n_kv = heads_kv[il] if has_kv else 0
        lk = hk_swa if swa[il] else hk
        lv = hv_swa if swa[il] else hv
        used = 0
        if info.expert_count and n_exp_used and il >= n_dense_lead:
            width = n_exp_used * (ff_exp if isinstance(ff_exp, int) and ff_exp else
                                  (ff_dense[il] // max(n_exp_used, 1) if arch == "qwen3moe" else ff_dense[il]))
            used = n_exp_used
            if isinstance(ff_shexp, int):
                width = max(width, ff_shexp)
        else:
            width = ff_dense[il]
        layers.append(Layer(k=n_kv * lk, v=0 if mla else n_kv * lv, swa=swa[il] and n_kv > 0,
                            recurrent=recurrent[il], ff=width, n_used=used,
                            q=heads[il] * lk if n_kv and not mla else 0, heads=heads[il] if n_kv and not mla else 0,
                            mla_w=heads[il] * 2 * (n_kv * lk + (k("attention.value_length_mla") or 0))
                            if n_kv and mla else 0))
    layers, dsv4, margin, cache_notes = indexer_cache(info, kv, layers, n_layer, recurrent)
    notes += cache_notes

    # Recurrent state per layer per sequence (llama_hparams::n_embd_r / n_embd_s).
    d_conv = info.ssm_conv_kernel or 0
    d_inner = info.ssm_inner_size or 0
    d_state = info.ssm_state_size or 0
    n_group = info.ssm_group_count or 0
    wkv = k("wkv.head_size")
    l_cache = k("shortconv.l_cache")
    if wkv:
        r_state = (k("token_shift_count", 2) or 2) * e
        s_state = e * wkv
    elif l_cache:
        r_state, s_state = e * (l_cache - 1), 0
    else:
        r_state = (d_conv - 1 if d_conv > 0 else 0) * (d_inner + 2 * n_group * d_state)
        s_state = d_state * d_inner
    if any(recurrent) and not (r_state or s_state):
        notes.append(msg("The recurrent state size is not in this file's metadata."))

    return Shape(
        arch=arch, n_embd=e, n_vocab=info.tokenizer.vocab_size or 0,
        n_ctx_train=info.context_length or 0, layers=tuple(layers), n_nextn=n_nextn,
        n_swa=info.sliding_window or 0, r_state=r_state, s_state=s_state,
        ssm_inner=d_inner, ssm_groups_state=n_group * d_state, notes=tuple(notes),
        dsv4=dsv4, kv_margin=margin,
        gemma3n=gemma3n_graph.Gemma3nDims(e, heads[0], heads_kv[0], hk, tuple(ff_dense[:n_layer]),
                                          tuple(swa[:n_layer]), info.tokenizer.vocab_size or 0)
        if arch == "gemma3n" else None,
    )


# GLM-5.2's indexer layers when the file has no `attention.indexer.types` (glm-dsa.cpp
# GLM_5_2_DEFAULT_INDEXER_TYPES): blocks 0 and 1, then every fourth from block 2, 78 blocks.
def _glm52_indexer(il: int) -> bool:
    return il < 78 and (il < 2 or (il - 2) % 4 == 0)


# Caches modelled from the engine's source but not yet compared with its buffer lines: the
# planned KV gets this share on top, and the plan says the estimate is rough.
UNCHECKED_CACHE_MARGIN = 0.10
_UNCHECKED_CACHES = frozenset({"minimax-m3", "hy_v4", "qwen4exp", "deepseek4", "glm5-next"})


def indexer_cache(info: gguf.ModelInfo, kv: Mapping[str, Any], layers: list[Layer], n_layer: int,
                  recurrent: list[bool]) -> tuple[list[Layer], Dsv4Cache | None, float, list[Message]]:  # fmt: skip
    """The architectures whose memory keeps a sparse-attention indexer cache beside the KV
    cache (src/llama-model.cpp create_memory): (layers with `idx_k`/`idx_v` set, the
    DeepSeek-V4 caches, the KV margin, notes)."""
    arch = info.architecture or ""

    def k(key: str, default: Any = None) -> Any:
        return kv.get(f"{arch}.{key}", default)

    idx_head = k("attention.indexer.key_length") or 0
    types = k("attention.indexer.types")

    def typed(il: int, default: bool) -> bool:
        if isinstance(types, list):
            return bool(types[il]) if il < len(types) else False
        return default

    n_all = len(layers)
    out = list(layers)
    dsv4 = None
    if arch == "deepseek4":
        # Every block's memory is the DSV4 cache; none of the plain K/V rows exist.
        ratios = k("attention.compress_ratios")
        heads_kv = info.head_count_kv if isinstance(info.head_count_kv, int) else max(info.head_count_kv or [1])
        hk = info.key_length or 0
        dsv4 = Dsv4Cache(tuple(int(r) for r in ratios) if isinstance(ratios, list) else (), hk * (heads_kv or 1),
                         hk, idx_head)  # fmt: skip
        out = [replace(ly, k=0, v=0, swa=False) for ly in out]
    elif idx_head:
        for il in range(min(n_layer, n_all)):
            ly = out[il]
            if arch == "deepseek32":
                has = bool(ly.k)  # every trunk block (llama_kv_cache_dsa, filter_lid)
            elif arch == "glm-dsa":
                pre_52 = (info.context_length or 0) < 1048576
                has = bool(ly.k) and typed(il, True if pre_52 else _glm52_indexer(il))
            elif arch == "hy_v4":
                has = bool(ly.k) and bool(k("attention.indexer.top_k")) and typed(il, False)
            elif arch == "minimax-m3":
                # llama_kv_cache_msa: blocks after the leading dense ones; a single key head
                # of the indexer's length and a V row of the model's value length.
                has = bool(ly.k) and il >= (k("leading_dense_block_count", 0) or 0)
                if has:
                    out[il] = replace(ly, idx_k=idx_head, idx_v=info.value_length or 0)
                continue
            elif arch == "qwen4exp":
                # QSA on the attention blocks; a pooled key beside the raw one (kpool_row 2)
                # when any block has a compress ratio.
                ratios = k("attention.compress_ratios")
                row = 2 if isinstance(ratios, list) and any(ratios) else 1
                if bool(ly.k) and not recurrent[il]:
                    out[il] = replace(ly, idx_k=idx_head * row)
                continue
            elif arch == "glm5-next":
                # key | gate | pooled (indexer_kpool_row 3) on the DSA blocks with an indexer.
                if bool(ly.k) and not recurrent[il] and typed(il, True):
                    out[il] = replace(ly, idx_k=idx_head * 3)
                continue
            else:
                has = False
            if has:
                out[il] = replace(ly, idx_k=idx_head, idx_q=idx_head * (k("attention.indexer.head_count") or 0))
    notes: list[Message] = []
    margin = 0.0
    if arch in _UNCHECKED_CACHES:
        margin = UNCHECKED_CACHE_MARGIN
        notes.append(msg("The memory of a {arch} model is computed from the engine's source but not yet checked "
                         "against the engine: {margin} is added to its cache, and the estimate is rough.",
                         arch=arch, margin=f"{round(margin * 100)} %"))
    return out, dsv4, margin, notes


def read_shape(info: gguf.ModelInfo) -> Shape:
    """`shape_of` with the header metadata read from the model's first file."""
    try:
        kv = gguf.read_header(info.path).kv
    except (OSError, gguf.GGUFError):
        kv = {}
    return shape_of(info, kv)

