"""How many bytes llama-server allocates for a model, per layer and per buffer.

Pure arithmetic on the GGUF header, written against the pinned engine's source (11434):
- weights: the tensor table, exact (`load_tensors: <BUF> model buffer size`);
- KV cache: `llama_kv_cache` (src/llama-kv-cache.cpp): one K and one V tensor per layer
  with KV, `kv_size` cells x `n_stream` streams, row = heads x head length in the KV type;
  sliding-window layers get `llama_kv_cache_iswa`'s smaller cache; layers that share KV
  (gemma3n/gemma4) and recurrent layers have none;
- recurrent state: `llama_memory_recurrent` (R = conv state, S = SSM state per layer, f32,
  one row per sequence, times 1 + n_rs_seq rollback snapshots);
- output buffer: `llama_context::output_reserve` (logits of n_outputs rows, f32);
- compute buffer: not derivable from the header (it is ggml-alloc's high-water mark of the
  worst-case graph), so it is a fit to measurements of the engine on the CPU
  (bench/plan_accuracy.py, docs/planner.md): ubatch x a per-layer activation width, plus
  the attention mask of each KV cache.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines import spec_types
from draftwise.core.gguf import reader as gguf
from draftwise.core.gguf.ggml_types import GGML_TYPES
from draftwise.core.messages import Message, msg
from draftwise.core.planning import gemma3n_graph

MiB = 1 << 20
GiB = 1 << 30

# ggml type -> (elements per block, bytes per block), for the KV types llama-server accepts.
KV_TYPES: dict[str, tuple[int, int]] = {
    "f32": (1, 4), "f16": (1, 2), "bf16": (1, 2), "q8_0": (32, 34), "q4_0": (32, 18),
    "q4_1": (32, 20), "q5_0": (32, 22), "q5_1": (32, 24), "iq4_nl": (32, 18),
}  # fmt: skip

# llama_context pads the context to 256 cells (GGML_PAD(n_ctx, 256)); the SWA cache too.
CTX_PAD = 256
# Engine defaults the planner does not change: -b 2048, -ub 512, --spec-draft-n-max 3.
N_BATCH = 2048
N_UBATCH = 512
SPEC_DRAFT_N_MAX = 3

# Architectures whose every layer is recurrent (llm_arch_is_recurrent).
RECURRENT_ARCHS = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})
# Hybrids where a layer with 0 KV heads is recurrent (their load_arch_hparams).
HYBRID_BY_KV_HEADS = frozenset({
    "jamba", "plamo2", "granitehybrid", "lfm2", "lfm2moe", "nemotron_h", "nemotron_h_moe",
    "kimi-linear", "bailingmoe3", "kimi-k3", "glm5-next",
})  # fmt: skip
# Hybrids where every `full_attention_interval`-th layer is attention, the rest recurrent.
HYBRID_BY_INTERVAL = frozenset({"qwen3next", "qwen35", "qwen35moe", "qwen4exp", "minimax-01"})
# Archs that keep rollback snapshots of the recurrent state while drafting
# (llm_arch_supports_rs_rollback): n_rs_seq = --spec-draft-n-max with draft-mtp/eagle3/dflash.
RS_ROLLBACK_ARCHS = frozenset({
    "kimi-k3", "qwen35", "qwen35moe", "qwen4exp", "deepseek4", "glm5-next", "nemotron_h",
    "nemotron_h_moe", "lfm2", "lfm2moe", "bailingmoe3",
})  # fmt: skip
ROLLBACK_SPEC_TYPES = spec_types.ROLLBACK

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

# Compute-buffer fit (floats per ubatch token), from the CPU engine; docs/planner.md.
# attention + FFN block: 3 x FFN width + 5 x n_embd (+10), never below 6 x n_embd.
# MTP head (one block, own context): the larger of 3 x FFN width + 2 x n_embd and the
# attention mask + 4 x n_embd.
# Mamba-2 style mixer: 7 x d_inner + 7 x (n_group x d_state) + 280; in hybrids the FFN
# phase is 4 x FFN width + 4 x n_embd.
_W_CONST = 10
_W_MAMBA_CONST = 280


def kv_row_bytes(kv_type: str, n: int) -> int:
    """Bytes of one cache row of `n` elements in `kv_type` (ggml_row_size)."""
    try:
        block, size = KV_TYPES[kv_type]
    except KeyError:
        raise ValueError(f"unknown KV cache type {kv_type!r} (known: {', '.join(KV_TYPES)})") from None
    return n // block * size if n % block == 0 else math.ceil(n / block) * size


def pad(n: int, to: int = CTX_PAD) -> int:
    return -(-n // to) * to


# ------------------------------------------------------------------------------ weights
@dataclass(frozen=True)
class WeightTable:
    """Resident weight bytes, grouped the way the engine places them on devices.

    `layers[i]` is block i without routed experts, `experts[i]` its routed experts (what
    --n-cpu-moe keeps in RAM). `input` is token_embd (always on the CPU), `output` the head:
    output.weight and output_norm (see `tied`). `nextn` are the blocks of an MTP head
    (loaded only with --spec-type draft-mtp).
    """

    layers: tuple[int, ...]
    experts: tuple[int, ...]
    input: int
    output: int
    other: int = 0  # tensors outside blocks that are not input/output (rope freqs, ...)
    nextn: tuple[int, ...] = ()  # bytes per MTP block, included in layers' tail
    # The head is token_embd itself (no output.weight). Measured with a GPU device (Vulkan,
    # Gemma 3): the head stays on the CPU with the input, a second copy only where a CPU extra
    # buffer (AMX) takes it; the planner does so when it has the tensor table. `head(on_gpu=
    # True)` keeps the older, larger estimate (a copy on the GPU) for tables estimated from
    # the file size.
    tied: bool = False
    exact: bool = True  # False: estimated from the file size (no tensor table)
    # The tensor table (per file: (file index, TensorInfo)), for the CPU's extra buffers.
    tensors: tuple[tuple[int, gguf.TensorInfo], ...] = field(default=(), repr=False, compare=False)
    alignment: int = 32

    @property
    def n_layer(self) -> int:
        return len(self.layers)

    def layer_total(self, il: int) -> int:
        return self.layers[il] + self.experts[il]

    def head(self, on_gpu: bool) -> int:
        """Bytes of the output head on its device."""
        return self.output + (self.input if self.tied and on_gpu else 0)

    def total(self, with_nextn: bool = True) -> int:
        """Every resident byte on one device (a tied head counted once, as the mmap does)."""
        n = len(self.layers) - (0 if with_nextn else len(self.nextn))
        return sum(self.layers[:n]) + sum(self.experts[:n]) + self.input + self.output + self.other

    def scaled(self, factor: float) -> WeightTable:
        """The same layout with every size times `factor` (tests describe big models so)."""
        def s(x: int) -> int:
            return int(x * factor)
        return replace(
            self, layers=tuple(map(s, self.layers)), experts=tuple(map(s, self.experts)),
            input=s(self.input), output=s(self.output), other=s(self.other),
            nextn=tuple(map(s, self.nextn)),
        )


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def weight_table(
    tensors: Iterable[gguf.TensorInfo], n_layer_all: int, n_nextn: int = 0, alignment: int = 32
) -> WeightTable:
    """Group a tensor table by block. Sizes are padded to the file's alignment, as the
    mapped buffer spans them."""
    layers = [0] * n_layer_all
    experts = [0] * n_layer_all
    inp = out = other = 0
    names = set()
    tied = True
    for t in tensors:
        names.add(t.name)
        size = _align(t.nbytes, alignment)
        if t.name.startswith("blk."):
            try:
                il = int(t.name.split(".", 2)[1])
            except ValueError:
                other += size
                continue
            if il >= n_layer_all:
                other += size
            elif "_exps." in t.name or t.name.endswith("_exps"):
                experts[il] += size
            else:
                layers[il] += size
        elif t.name == "token_embd.weight":
            inp += size
        elif t.name.startswith("output"):
            out += size
            if t.name == "output.weight":
                tied = False
        else:
            other += size
    nextn = tuple(layers[i] + experts[i] for i in range(n_layer_all - n_nextn, n_layer_all))
    return WeightTable(tuple(layers), tuple(experts), inp, out, other, nextn,
                       tied=tied and "token_embd.weight" in names)


# ------------------------------------------------------------------------------ CPU buffers
# A weight that stays on the CPU of an engine with no GPU device goes to the first CPU
# "extra" buffer type that takes it (src/llama-model.cpp make_cpu_buft_list, with mmap):
# AMX (ggml-cpu/amx, variants built with AMX_INT8), then CPU_REPACK (ggml-cpu/repack.cpp),
# else it stays in the mapped file (CPU_Mapped). With a GPU device, the GPU's host buffer
# type comes first and takes every CPU weight, which mmap then turns back into CPU_Mapped:
# no extra buffers at all. `-nr`/`--no-repack` turns the extra buffers off.
NO_REPACK_FLAGS = ("-nr", "--no-repack")
_AVX2 = frozenset({"haswell", "skylakex", "cannonlake", "cascadelake", "icelake", "cooperlake",
                   "zen4", "alderlake", "sapphirerapids"})  # fmt: skip
_AVX512 = frozenset({"skylakex", "cannonlake", "cascadelake", "icelake", "cooperlake", "zen4",
                     "sapphirerapids"})  # fmt: skip
AMX_VARIANTS = _AMX = frozenset({"sapphirerapids"})
_ARM_DOTPROD = ("armv8.2", "armv8.6", "armv9")
# repack.cpp ggml_repack_get_optimal_repack_type: type -> rows (ne[1]) must divide by this.
_REPACK_AVX2 = {"Q4_0": 8, "Q4_K": 8, "IQ4_NL": 8, "MXFP4": 8}
_REPACK_AVX512 = {"Q2_K": 8}
_REPACK_ARM = {"Q4_0": 4, "Q4_K": 8, "Q5_K": 8, "Q6_K": 8, "IQ4_NL": 4, "MXFP4": 4, "Q8_0": 4, "Q1_0": 4}
# amx/amx.cpp supports_op: row length (ne[0]) alignment per type; rows (ne[1]) % 32.
_AMX_ALIGN = {"Q4_0": 32, "Q4_1": 32, "Q8_0": 32, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256,
              "IQ4_XS": 256, "F16": 16}  # fmt: skip
# amx/mmq.cpp get_row_size: bytes per block once packed (Q8_0 adds a compensation int32,
# Q4_K/Q5_K 4 bytes, IQ4_XS 2); the others keep their size.
_AMX_EXTRA_PER_BLOCK = {"Q8_0": 4, "Q4_K": 4, "Q5_K": 4, "IQ4_XS": 2}
# 2-D weights that are not matrix products (GET_ROWS, convolutions, per-channel vectors).
_NOT_MATMUL = ("token_embd", "pos_embd", "token_types", "ssm_conv1d", "ssm_a", "ssm_d", "rope_")


@dataclass(frozen=True)
class CpuWeights:
    """What the engine allocates for the weights that stay on the CPU."""

    mapped: int  # CPU_Mapped: each file's range over the tensors that stay in it
    extra: dict[str, int]  # buffer name (AMX, CPU_REPACK) -> bytes
    summed: int  # the same tensors' padded sizes added up (what the weight table counts)
    kept: int = 0  # the padded sizes of those that stay in the mapping (the rest of it: holes)

    @property
    def total(self) -> int:
        return self.mapped + sum(self.extra.values())


def matmul_weight(t: gguf.TensorInfo) -> bool:
    """A block or head weight that is a matrix product's (not a lookup, norm or convolution)."""
    if len(t.shape) not in (2, 3) or not t.name.endswith(".weight"):
        return False
    base = t.name.split(".")[-2] if t.name.startswith("blk.") else t.name.split(".")[0]
    return not any(base.startswith(p) for p in _NOT_MATMUL) and "norm" not in base


def extra_buffer(t: gguf.TensorInfo, variant: str | None) -> tuple[str, int] | None:
    """(buffer, bytes) when the CPU variant `variant` moves this weight to an extra buffer."""
    if variant is None or not matmul_weight(t):
        return None
    ne0 = t.shape[0]
    ne1 = t.shape[1] if len(t.shape) > 1 else 1
    matmul = len(t.shape) == 2  # 3-D expert tensors are MUL_MAT_ID: repack only
    if variant in _AMX and matmul and t.type_name in _AMX_ALIGN and ne1 % 32 == 0 \
            and ne0 % _AMX_ALIGN[t.type_name] == 0:
        blocks = t.nbytes // max(gguf_block_bytes(t.type_name), 1)
        return "AMX", t.nbytes + blocks * _AMX_EXTRA_PER_BLOCK.get(t.type_name, 0)
    rows = None
    if variant in _AVX2:
        rows = _REPACK_AVX2.get(t.type_name)
    if rows is None and variant in _AVX512:
        rows = _REPACK_AVX512.get(t.type_name)
    if rows is None and variant.startswith(_ARM_DOTPROD):
        rows = _REPACK_ARM.get(t.type_name)
    if rows is not None and ne1 % rows == 0:
        return "CPU_REPACK", t.nbytes
    return None


def tied_head_extra(wt: WeightTable, variant: str | None) -> tuple[str, int] | None:
    """(buffer, bytes) of the copy a CPU extra buffer makes of a tied head (token_embd
    duplicated as output.weight, a MUL_MAT weight of n_embd x n_vocab), or None."""
    if variant is None or not wt.tensors:
        return None
    embd = next((t for _fi, t in wt.tensors if t.name == "token_embd.weight"), None)
    return extra_buffer(replace(embd, name="output.weight"), variant) if embd is not None else None


def gguf_block_bytes(type_name: str) -> int:
    return next((size for name, _block, size in GGML_TYPES.values() if name == type_name), 0)


def cpu_weights(wt: WeightTable, variant: str | None, *, skip_nextn: bool = False,
                on_cpu: Callable[[gguf.TensorInfo], bool] | None = None) -> CpuWeights | None:  # fmt: skip
    """The CPU weight buffers for the tensors `on_cpu` keeps there (default: all): each
    file's mapped range over the ones that stay in the mapping (the range spans the holes
    of tensors placed elsewhere: experts in RAM between blocks on a GPU, re-laid copies),
    plus the extra buffers of CPU variant `variant` (None: no extra buffers, as with a GPU
    device). None without a tensor table."""
    if not wt.tensors:
        return None
    first_nextn = wt.n_layer - len(wt.nextn)
    spans: dict[int, tuple[int, int]] = {}
    extra: dict[str, int] = {}
    summed = kept = 0
    for fi, t in wt.tensors:
        if skip_nextn and t.name.startswith("blk."):
            try:
                if int(t.name.split(".", 2)[1]) >= first_nextn:
                    continue  # not loaded (TENSOR_SKIP)
            except ValueError:
                pass
        if on_cpu is not None and not on_cpu(t):
            continue
        summed += _align(t.nbytes, wt.alignment)
        moved = extra_buffer(t, variant)
        if moved is not None:
            extra[moved[0]] = extra.get(moved[0], 0) + moved[1]
            continue
        kept += _align(t.nbytes, wt.alignment)
        lo, hi = spans.get(fi, (t.offset, t.offset + t.nbytes))
        spans[fi] = (min(lo, t.offset), max(hi, t.offset + t.nbytes))
    return CpuWeights(sum(hi - lo for lo, hi in spans.values()), extra, summed, kept)


def estimated_weight_table(info: gguf.ModelInfo) -> WeightTable:
    """A table from the file size alone, for a model whose tensor table cannot be read:
    an embedding and a head of n_vocab x n_embd each at the model's average bits per
    weight, the rest spread evenly over the blocks."""
    n = info.block_count or 1
    total = info.tensor_bytes or info.size_bytes
    per_param = total / info.parameters if info.parameters else 0.0
    vocab = info.tokenizer.vocab_size or 0
    embd = int(vocab * (info.embedding_length or 0) * per_param)
    body = max(total - 2 * embd, 0)
    per_layer = body // n
    experts = (0,) * n
    layers = (per_layer,) * n
    if info.expert_count:
        # Routed experts are most of a MoE block (about 95% in Qwen3-30B-A3B, Mixtral).
        experts = (int(per_layer * 0.95),) * n
        layers = (per_layer - experts[0],) * n
    nextn = layers[n - (info.nextn_predict_layers or 0):] if info.nextn_predict_layers else ()
    return WeightTable(layers, experts, embd, embd, 0, nextn, tied=False, exact=False)


class IdentityCache:
    """What was derived from objects that do not change once made — the reader's shared
    headers (gguf.read_header hands out the same object while the file is unchanged), a
    weight table made from them — keyed by those objects' identities, which it keeps alive
    so no identity is reused while its entry stands. Each plan (a re-plan on every setting
    change, every launch) walks a model's whole tensor table twice otherwise: on the real
    Gemma 3 270M 0.6 of its 1.4 ms (bench/launch.py). Thread-safe (re-plans run on a pool)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, tuple[tuple[object, ...], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, objects: tuple[object, ...], extra: Hashable, make: Callable[[], Any]) -> Any:
        key = (tuple(id(o) for o in objects), extra)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit[1]
        value = make()
        with self._lock:
            self._entries[key] = (objects, value)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value


# A few models' tables (a folder's model and drafters), and their CPU buffers per placement
# (the planner's search tries a few placements per plan).
_tables = IdentityCache(16)
_cpu_buffers = IdentityCache(256)


def read_weight_table(info: gguf.ModelInfo) -> WeightTable:
    """The model's weight table from its files' tensor tables (every shard); estimated
    from the file size when a header cannot be read."""
    n_all = info.block_count or 0
    try:
        headers = tuple(gguf.read_header(p) for p in info.files)
    except (OSError, gguf.GGUFError):
        return estimated_weight_table(info)
    if not any(h.tensors for h in headers):
        return estimated_weight_table(info)

    def make() -> WeightTable:
        tensors = [t for h in headers for t in h.tensors]
        table = weight_table(tensors, n_all, info.nextn_predict_layers or 0, headers[0].alignment)
        return replace(table, tensors=tuple((i, t) for i, h in enumerate(headers) for t in h.tensors),
                       alignment=headers[0].alignment)

    return _tables.get(headers, (n_all, info.nextn_predict_layers or 0), make)


def cpu_weights_for(wt: WeightTable, placement: Hashable, make: Callable[[], CpuWeights | None]) -> CpuWeights | None:
    """`make()` (a `cpu_weights` call) once per weight table and `placement`, which must name
    everything the call depends on besides the table (the planner's placement key)."""
    return _cpu_buffers.get((wt,), placement, make)


def tensor_bytes(path: Path) -> int:
    """Total tensor bytes of a file (a projector)."""
    h = gguf.read_header(path)
    return sum(_align(t.nbytes, h.alignment) for t in h.tensors)


# ------------------------------------------------------------------------------ geometry
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
                            q=heads[il] * lk if n_kv and not mla else 0,
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


# ------------------------------------------------------------------------------ contexts
@dataclass(frozen=True)
class Cells:
    """KV cache sizes of one context as llama_context/llama_kv_cache(_iswa) make them."""

    n_ctx: int  # total, padded (what `-c` becomes)
    per_stream: int  # cells per stream of the full cache
    swa_per_stream: int  # cells per stream of the SWA cache
    n_stream: int
    n_seq: int
    ubatch: int


def cells(ctx_per_slot: int, slots: int, n_swa: int, swa_full: bool = False, *,
          batch: int | None = None, ubatch: int | None = None) -> Cells:
    """Cells for `-c ctx_per_slot*slots -np slots` (non-unified KV: one stream per slot,
    llama-server's default when -np is given); `batch`/`ubatch`: -b/-ub when the user set them."""
    n_ctx = pad(ctx_per_slot * slots)
    per_stream = pad(n_ctx // slots) if slots > 1 else n_ctx
    n_batch = min(n_ctx, batch or N_BATCH)
    ubatch = min(n_batch, ubatch or N_UBATCH)
    if n_swa and not swa_full:
        swa = pad(min(per_stream, n_swa + ubatch))
    else:
        swa = per_stream
    return Cells(n_ctx, per_stream, swa, slots, slots, ubatch)


@dataclass
class ContextBytes:
    """What one llama_context allocates besides weights, split by layer where it matters."""

    kv_layers: list[int] = field(default_factory=list)  # per block (all blocks, 0 = none)
    rs_layers: list[int] = field(default_factory=list)  # recurrent state per block
    compute: int = 0
    output: int = 0

    @property
    def kv(self) -> int:
        return sum(self.kv_layers)

    @property
    def rs(self) -> int:
        return sum(self.rs_layers)


def kv_layer_bytes(layer: Layer, c: Cells, kv_type_k: str, kv_type_v: str) -> int:
    if not layer.k:
        return 0
    n = c.swa_per_stream if layer.swa else c.per_stream
    size = kv_row_bytes(kv_type_k, layer.k) * n * c.n_stream
    if layer.v:
        size += kv_row_bytes(kv_type_v, layer.v) * n * c.n_stream
    # The indexer's cache: a llama_kv_cache of its own over the same cells (one key head).
    if layer.idx_k:
        size += kv_row_bytes(kv_type_k, layer.idx_k) * c.per_stream * c.n_stream
    if layer.idx_v:
        size += kv_row_bytes(kv_type_v, layer.idx_v) * c.per_stream * c.n_stream
    return size


DSV4_CSA, DSV4_HCA = 4, 128  # llama-kv-cache-dsv4.cpp DSV4_CSA_RATIO / DSV4_HCA_RATIO


def dsv4_layer_bytes(d: Dsv4Cache, il: int, c: Cells, kv_type: str, n_rs_seq: int) -> tuple[int, int]:
    """(KV, state) bytes of block `il` in llama_kv_cache_dsv4."""
    streams = c.n_stream
    kv = kv_row_bytes(kv_type, d.k) * c.swa_per_stream * streams  # raw, all blocks sliding
    ratio = d.ratios[il] if il < len(d.ratios) else 0
    state = 0
    planes = streams * (1 + n_rs_seq)
    if ratio == DSV4_CSA:
        rows = pad(max(1, -(-c.per_stream // DSV4_CSA)))
        kv += (kv_row_bytes(kv_type, d.k) + kv_row_bytes(kv_type, d.idx_k)) * rows * streams
        # kv + score tensors: csa (2 x head, 8 rows) and the indexer's (2 x idx head, 8 rows)
        state += 2 * 4 * planes * 2 * DSV4_CSA * (2 * d.head_k + 2 * d.idx_k)
    elif ratio == DSV4_HCA:
        rows = pad(max(1, -(-c.per_stream // DSV4_HCA)))
        kv += kv_row_bytes(kv_type, d.k) * rows * streams
        state += 2 * 4 * planes * DSV4_HCA * d.head_k
    return kv, state


def _width_attn(shape: Shape, layer: Layer) -> int:
    e = shape.n_embd
    # A query wider than n_embd (Qwen3: 2 x n_embd) widens the attention phase by its
    # projection and the attention output: 2 x q + 5 x n_embd (sparse qwen3moe geometries,
    # q 2048-4096 over n_embd 1024-2048).
    wide_q = 2 * layer.q + 5 * e + _W_CONST if layer.q > e else 0
    # MLA (DeepSeek-V3.2's geometry, 64 and 128 heads): the absorbed query and the output
    # in the latent space, per head 2 x (the cached K row + the V head).
    mla = layer.mla_w + 5 * e + _W_CONST if layer.mla_w else 0
    return max(3 * layer.ff + 5 * e + _W_CONST, 6 * e + _W_CONST, _width_moe_down(shape, layer), wide_q, mla)


def indexer_phase(shape: Shape, c: Cells, layers: Iterable[Layer]) -> int:
    """The DSA indexer's phase of the graph: its query (3 x indexer heads x head length)
    beside the block's inputs, and f32 scores over every cell (8 B per cell and token).
    Fitted on the engine over sparse DeepSeek-V3.2 attention geometries (16-128 heads,
    2k-32k cells); 0 without an indexer."""
    q = max((ly.idx_q for ly in layers), default=0)
    if not q:
        return 0
    return c.ubatch * (4 * (5 * shape.n_embd + 3 * q) + 8 * c.per_stream)


def _width_moe_down(shape: Shape, layer: Layer) -> int:
    """A MoE block's down projection: its output holds n_embd per used expert and token
    before the experts are summed, beside the block's inputs. The gate/up/SwiGLU rows stay
    under it when they did not fit the attention phase's freed blocks (3 x rows > 4 x
    n_embd) and the output cannot take their place (n_embd > 2 x expert width). Fitted on
    the CPU engine over sparse qwen3moe geometries (n_embd 1024-4096, expert width
    256-1536, 2 and 8 used; docs/planner.md)."""
    if not layer.n_used:
        return 0
    e, u = shape.n_embd, layer.n_used
    ff_exp = layer.ff // u
    rows = 3 * ff_exp * u
    stacked = rows if rows > 4 * e and e > 2 * ff_exp else 0
    return u * e + 5 * e + stacked + _W_CONST


def _width_mamba(shape: Shape) -> int:
    if shape.arch in GDN_ARCHS:
        return _width_gdn(shape)
    return 7 * shape.ssm_inner + 7 * shape.ssm_groups_state + _W_MAMBA_CONST


# Hybrids whose recurrent blocks are a gated delta net (src/models/qwen35.cpp
# build_layer_attn_linear, delta-net-base.cpp), not a Mamba-2 scan.
GDN_ARCHS = frozenset({"qwen3next", "qwen35", "qwen35moe", "qwen4exp"})


def _width_gdn(shape: Shape) -> int:
    """A gated delta net mixer's phase: the fused qkv projection (2 x K + V, K = key heads
    x key head length, V = d_inner) and z (V) stay live while the convolution writes its
    output (2 x K + V), beside the block's inputs (5 x n_embd): 4 x K + 3 x V + 5 x n_embd.
    Fitted on the CPU engine over Qwen3.5-0.8B's geometry with n_embd 1024/2048, K
    1024-4096, V 2048/4096 (to 0.5 MiB); the fused CPU kernel keeps the heads unrepeated."""
    return 4 * shape.ssm_groups_state + 3 * shape.ssm_inner + 5 * shape.n_embd + _W_CONST


def compute_width(shape: Shape, layers: Iterable[Layer]) -> int:
    """Floats per ubatch token at the graph's peak (the fitted model, see module doc)."""
    e = shape.n_embd
    widths = [6 * e + _W_CONST]
    hybrid = shape.hybrid
    for ly in layers:
        if ly.recurrent and shape.ssm_inner:
            widths.append(_width_mamba(shape))
        if ly.k or not ly.recurrent:
            widths.append(_width_attn(shape, ly))
        if hybrid and ly.ff and shape.ssm_inner and shape.arch not in GDN_ARCHS:
            # A Mamba-2 hybrid's FFN phase (granite-hybrid, nemotron-h, falcon-h1...); the
            # gated delta net and short-conv (LFM2) hybrids' FFN is the attention block's
            # 3 x ffn + 5 x n_embd (Qwen3.5 0.8B/27B, LFM2 700M/1.2B on the engine).
            widths.append(4 * ly.ff + 4 * e)
    return max(widths)


def mask_bytes(c: Cells, shape: Shape, layers: Iterable[Layer]) -> int:
    """The f16 KQ mask of each KV cache: cells per stream x ubatch tokens."""
    layers = list(layers)
    size = 0
    if any(ly.k and not ly.swa for ly in layers):
        size += c.per_stream * c.ubatch * 2
    if any(ly.k and ly.swa for ly in layers):
        size += c.swa_per_stream * c.ubatch * 2
    if any(ly.idx_k for ly in layers):
        size += c.per_stream * c.ubatch * 2  # the indexer cache's own mask (measured, DSA)
    return size


def host_compute(shape: Shape, c: Cells) -> int:
    """The host compute buffer of a model wholly on GPUs (`Vulkan_Host compute buffer size`):
    the CPU backend holds the graph inputs (ggml_backend_sched assigns every
    GGML_TENSOR_FLAG_INPUT tensor to the last backend, the CPU) and the token embedding's
    lookup (token_embd stays in RAM). Measured on the Vulkan engine (Llama-3.2-1B, Qwen3-0.6B,
    gemma-3-1b, gemma-2-2b at 4k and 8k cells): 16 B per ubatch token and n_embd, plus the
    f16 masks of the caches (2 B per cell and token, `mask_bytes`), to 0.03 MiB."""
    return c.ubatch * shape.n_embd * 16 + mask_bytes(c, shape, shape.trunk)


# A GPU backend that runs a host tensor's operation itself for a large batch
# (`offload_op`: ggml-vulkan, ggml-cuda (ROCm too), ggml-sycl; at least 32 rows,
# GGML_OP_OFFLOAD_MIN_BATCH), unless the engine runs with --no-op-offload.
OP_OFFLOAD_MIN_BATCH = 32
# The CPU-held weights whose copy on the GPU is live under the FFN's peak: the inputs' matmuls
# (their copy is freed before the outputs are, and the next one takes its hole); the down
# projection's copy goes where gate and up were.
_FFN_IN = ("ffn_gate", "ffn_up")


@dataclass(frozen=True)
class OffloadCopies:
    """What the GPU copies in for one prompt batch when blocks (or experts) stay in RAM and
    its backend offloads their operations: ggml_backend_sched makes every CPU-held weight of
    an offloaded op, and the KV cache views of a CPU block, inputs of their own split, copied
    into the GPU's compute buffer before the op and freed after it (the engine's allocation
    trace: gemma-2-2b on Vulkan, 146 splits for the prompt graph, 3 for one token)."""

    ffn_weight: int = 0  # the largest CPU-held FFN input weight (gate, up; routed experts too)
    attn_weight: int = 0  # the largest CPU-held attention weight
    kv: int = 0  # the largest K + V of a block whose cache stays in RAM, at the cells in use


def offloaded_compute(shape: Shape, c: Cells, compute: int, copies: OffloadCopies) -> int:
    """The compute buffer of the GPU that runs the CPU blocks' prompt batch: the graph's own
    peak with the FFN weight's copy under it, or a CPU block's attention with its K and V
    copies beside the masks, the block's input and its mixed-batch copy (2 x n_embd), and the
    query and attention output (2 x q). gemma-2-2b on lavapipe (11 of 26 blocks in RAM, 4k):
    95.89 MiB, planned 96.9; SmolLM2-1.7B: 81.0, planned 81.2."""
    q = max((ly.q for ly in shape.trunk), default=0) or shape.n_embd
    attn = mask_bytes(c, shape, shape.trunk) + c.ubatch * 4 * (2 * shape.n_embd + 2 * q) + copies.kv \
        + copies.attn_weight
    return max(compute + copies.ffn_weight, attn)


def ffn_input_weight(name: str) -> bool:
    """A block's FFN input matmul (ffn_gate, ffn_up, their _exps/_shexp forms)."""
    kind = name.split(".")[2] if name.count(".") >= 2 else ""
    return kind.startswith(_FFN_IN)


# common/common.h defaults of the drafters' lengths (common_speculative_n_max): the n-gram
# drafters propose up to their m-gram size, ngram-mod up to --spec-ngram-mod-n-max.
NGRAM_MOD_N_MAX = 64
NGRAM_MAP_SIZE_M = 48  # ngram-simple, ngram-map-k, ngram-map-k4v (size_m)
NGRAM_CACHE_N_MAX = 8


@dataclass(frozen=True)
class DraftLength:
    """The draft lengths the engine will run with (passed or its defaults)."""

    draft: int = SPEC_DRAFT_N_MAX  # --spec-draft-n-max (draft-* types)
    ngram_mod: int = NGRAM_MOD_N_MAX  # --spec-ngram-mod-n-max
    ngram_map: int = NGRAM_MAP_SIZE_M  # --spec-ngram-simple-size-m / --spec-ngram-map-k-size-m

    def outputs(self, spec_type: str | None) -> int:
        """common_speculative_n_max: tokens drafted per step, the largest over the types."""
        n = 0
        for t in (spec_type or "").split(","):
            t = t.strip()
            if t.startswith("draft-"):
                n = max(n, self.draft)
            elif t == spec_types.NGRAM_MOD:
                n = max(n, self.ngram_mod)
            elif t in (spec_types.NGRAM_SIMPLE, spec_types.NGRAM_MAP_K):
                n = max(n, self.ngram_map)
            elif t == spec_types.NGRAM_MAP_K4V:
                n = max(n, NGRAM_MAP_SIZE_M)
            elif t == spec_types.NGRAM_CACHE:
                n = max(n, NGRAM_CACHE_N_MAX)
        return n

    def rollback(self, spec_type: str | None, arch: str) -> int:
        """n_rs_seq (common_params_speculative::need_n_rs_seq, clamped to 0 where the
        architecture cannot roll back its recurrent state)."""
        types = {t.strip() for t in (spec_type or "").split(",")}
        return self.draft if types & ROLLBACK_SPEC_TYPES and arch in RS_ROLLBACK_ARCHS else 0


def n_outputs(slots: int, speculative: bool, n_draft: int = SPEC_DRAFT_N_MAX) -> int:
    """llama-server's output rows (common_speculative_get_output_limits): one per slot,
    plus the drafted tokens it verifies."""
    return slots * (1 + (n_draft if speculative else 0))


def target_context(
    shape: Shape, c: Cells, kv_type: str, *, spec_type: str | None = None, mtp: bool = False,
    lengths: DraftLength = DraftLength(),
) -> ContextBytes:
    """The main context's KV/RS, compute and output bytes."""
    trunk = shape.trunk
    kv = [kv_layer_bytes(ly, c, kv_type, kv_type) for ly in trunk] + [0] * shape.n_nextn
    n_rs_seq = lengths.rollback(spec_type, shape.arch)
    rows = max(1, c.n_seq) * (1 + n_rs_seq)
    rs_one = (shape.r_state + shape.s_state) * 4 * rows
    rs = [rs_one if ly.recurrent else 0 for ly in trunk] + [0] * shape.n_nextn
    if shape.dsv4 is not None:
        # The raw cache covers the MTP blocks too; the compressor states only the trunk.
        for il in range(len(shape.layers)):
            k_bytes, state = dsv4_layer_bytes(shape.dsv4, il, c, kv_type, n_rs_seq)
            kv[il] += k_bytes
            rs[il] += state if il < shape.n_layer else 0
    if shape.kv_margin:
        kv = [int(x * (1 + shape.kv_margin)) for x in kv]
    speculative = spec_type is not None and spec_type != spec_types.NONE
    outs = min(n_outputs(c.n_seq, speculative, lengths.outputs(spec_type)), c.ubatch)
    compute = graph_compute(shape, c, outs)
    if compute is None:
        compute = c.ubatch * 4 * compute_width(shape, trunk) + mask_bytes(c, shape, trunk)
        compute = max(compute, indexer_phase(shape, c, trunk))
        # The reserved graph's logits come after the last block, when its activations are
        # freed: they take those holes and add to the peak only past them (the engine's
        # compute lines on the corpus: every CPU row was one logits row under the sum,
        # Qwen3.5/Gemma 4 with draft-mtp's 4 rows four; tests/data/corpus-engine/).
        compute = max(compute, outs * shape.n_vocab * 4 + c.ubatch * 4 * 2 * shape.n_embd)
    output = outs * shape.n_vocab * 4
    return ContextBytes(kv, rs, compute, output)


def graph_compute(shape: Shape, c: Cells, outs: int) -> int | None:
    """The compute buffer replayed from the engine's own graph (ggml_sim), for the
    architectures whose peak is decided by ggml-alloc's placement rather than one phase's
    width (Gemma 3n: gemma3n_graph); None for the rest, which use the fitted widths."""
    if shape.gemma3n is not None:
        return gemma3n_graph.compute_bytes(shape.gemma3n, c.ubatch, c.per_stream, c.swa_per_stream, outs)
    return None


# --ctx-checkpoints and --cache-ram defaults of the pinned server (common/common.h).
CTX_CHECKPOINTS = 32
CACHE_RAM_MIB = 8192


def makes_checkpoints(shape: Shape, swa_full: bool) -> bool:
    """llama-server keeps context checkpoints of a slot when its memory cannot drop the tail
    of a sequence (recurrent state: seq_rm type FULL, or RS with rollback) or has a sliding
    window (n_swa > 0 unless --swa-full), server-context.cpp `do_checkpoint`."""
    trunk = shape.trunk
    return any(ly.recurrent for ly in trunk) or (not swa_full and shape.n_swa > 0 and any(ly.swa for ly in trunk))


def partial_state_bytes(shape: Shape, c: Cells, kv_type: str, layers: Iterable[Layer] | None = None) -> int:
    """What one sequence's state costs with LLAMA_STATE_SEQ_FLAGS_PARTIAL_ONLY (a context
    checkpoint): a sliding-window cache writes only its SWA cells that the window still sees
    (n_swa + 1 of them, llama_kv_cache::state_write with is_masked_swa; the engine's
    "created context checkpoint ... size" agrees to 0.1 %), a hybrid only its
    recurrent rows (one per layer, llama_memory_hybrid::state_write); a plain cache ignores
    the flag and writes the whole sequence."""
    layers = list(shape.trunk if layers is None else layers)
    rec = sum((shape.r_state + shape.s_state) * 4 for ly in layers if ly.recurrent)
    swa_layers = [ly for ly in layers if ly.k and ly.swa]
    if rec or swa_layers:
        cells = min(shape.n_swa + 1 if shape.n_swa else c.swa_per_stream, c.swa_per_stream)
        return rec + sum(kv_row_bytes(kv_type, ly.k) + kv_row_bytes(kv_type, ly.v) for ly in swa_layers) * cells
    return sum(kv_row_bytes(kv_type, ly.k) + (kv_row_bytes(kv_type, ly.v) if ly.v else 0)
               for ly in layers if ly.k) * c.per_stream  # fmt: skip


def mtp_context(shape: Shape, c: Cells, kv_type: str) -> ContextBytes:
    """The MTP draft context: KV of the nextn blocks only, at the target's cells."""
    head = shape.head
    kv = [0] * shape.n_layer + [kv_layer_bytes(ly, c, kv_type, kv_type) for ly in head]
    e = shape.n_embd
    ff = max([ly.ff for ly in head] or [0])
    # Phases of the MTP graph: the FFN (mask already freed), attention with the mask, and a
    # MoE head's down projection.
    ffn_phase = c.ubatch * 4 * (3 * ff + 2 * e + 5)
    attention_phase = mask_bytes(c, shape, head) + c.ubatch * 4 * (4 * e + 5)
    if shape.arch in GATED_MTP:
        ffn_phase, attention_phase = _gated_mtp_phases(shape, c, head)
    compute = max(ffn_phase, attention_phase, mtp_moe_phase(shape, c, head))
    compute += c.n_seq * shape.n_vocab * 4
    output = c.n_seq * shape.n_vocab * 4
    return ContextBytes(kv, [0] * len(shape.layers), compute, output)


# MTP heads whose attention is gated (the query projection holds the query and its gate:
# src/models/qwen35.cpp, qwen35moe.cpp, qwen3next.cpp graph_mtp).
GATED_MTP = frozenset({"qwen35", "qwen35moe", "qwen3next"})
# Their phases in floats per ubatch token beyond the generic ones, fitted on the engine's
# "compute buffer size" of the MTP draft context (pinned 11434, CPU, ubatch 512): attention
# 4 x n_embd + the gated query (2 x query width) + 1572, one n_embd more with a MoE head
# (Qwen3.5-0.8B at 16k/32k/64k cells: 20.02 MiB beside the mask each time; Qwen3.5-27B at
# 64k; Qwen3.5-35B-A3B at 64k, MoE; all exact); a dense head's FFN 3 x FFN width + 2.25 x
# n_embd + 294 (Qwen3.5-0.8B and -27B at 4k cells: 27.02 and 126.02 MiB). The generic
# widths below them were 3 % under at 4k and 9.5 % under at the window's 32k (105.9 planned,
# 117.0 MiB the engine) on Qwen3.5-0.8B. Qwen3-Next (held out: MoE, its FFN on one row)
# comes within 0.8 % at 4k, 32k and 64k.
_GATED_MTP_ATTENTION = 1572
_GATED_MTP_FFN = 294


def _gated_mtp_phases(shape: Shape, c: Cells, head: Iterable[Layer]) -> tuple[int, int]:
    """(FFN phase, attention phase) bytes of a gated-attention MTP head (GATED_MTP)."""
    head = list(head)
    e = shape.n_embd
    attn = max(head, key=lambda ly: ly.q)
    moe = any(ly.n_used for ly in head)
    row_bytes = c.ubatch * 4
    attention = mask_bytes(c, shape, head) + row_bytes * (4 * e + 2 * attn.q + _GATED_MTP_ATTENTION + (e if moe else 0))
    if moe or shape.arch in MTP_ROWS_BEFORE_FFN:
        return 0, attention  # mtp_moe_phase is the MoE head's FFN
    ff = max(ly.ff for ly in head)
    return row_bytes * (3 * ff + 2 * e + e // 4 + _GATED_MTP_FFN), attention


# MTP graphs that keep only the output rows before their FFN (`ggml_get_rows(cur,
# inp_out_ids)` ahead of build_moe_ffn: src/models/qwen3next.cpp, nemotron-h-moe.cpp): their
# FFN runs on one row per sequence, not the whole batch.
MTP_ROWS_BEFORE_FFN = frozenset({"qwen3next", "nemotron_h_moe"})


def mtp_moe_phase(shape: Shape, c: Cells, head: Iterable[Layer]) -> int:
    """A MoE MTP head's down projection (build_moe_ffn in the graph_mtp of glm4-moe.cpp,
    qwen35moe.cpp, ...), as ggml-alloc lays it out over the whole batch: the block's input
    (n_embd) and its post-attention norm (n_embd) stay live; below them the attention mask's
    hole, unless the norm took it (a mask smaller than n_embd rows cannot); then the routed
    experts' gate, up and SwiGLU (3 x used x expert width), and the down projection's output
    (used x n_embd), which lands past them unless it fits where gate and up were freed
    (n_embd <= 2 x expert width). The engine's buffer lines on GLM-4.5-Air (150.01 MiB) and
    Qwen3.5-35B-A3B (65.02 MiB), 4096 cells: within 0.1 and 1.1 MiB (the router's rows)."""
    moe = [ly for ly in head if ly.n_used]
    if not moe or shape.arch in MTP_ROWS_BEFORE_FFN:
        return 0
    ly = max(moe, key=lambda x: x.ff)
    e, rows = shape.n_embd, ly.ff  # rows: used experts x expert width (Layer.ff)
    down = ly.n_used * e if ly.n_used * e > 2 * rows else 0
    row_bytes = c.ubatch * 4
    mask = mask_bytes(c, shape, head)
    return row_bytes * (2 * e + 3 * rows + down) + (mask if mask < row_bytes * e else 0)


def draft_context(shape: Shape, c: Cells, kv_type: str) -> ContextBytes:
    """A separate draft model's context: its own KV at the target's cells."""
    cd = cells(c.per_stream, c.n_stream, shape.n_swa)
    return target_context(shape, replace(cd, ubatch=c.ubatch), kv_type)
