"""What the weights that stay on the CPU allocate there: each file's mapped range over them,
and the copies the CPU's extra buffer types make of the matrices they take (AMX, CPU_REPACK)
on an engine with no GPU device; `-nr`/`--no-repack` turns those off.

Written against the pinned engine's source (11434): src/llama-model.cpp make_cpu_buft_list,
ggml-cpu/amx and ggml-cpu/repack.cpp. The buffers are cached per weight table and placement
(the planner's search tries a few placements per plan).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

from draftwise.core.gguf import reader as gguf
from draftwise.core.gguf.ggml_types import GGML_TYPES
from draftwise.core.planning.identity_cache import IdentityCache
from draftwise.core.planning.weight_table import WeightTable, _align

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
# 2-D weights that are not matrix products (GET_ROWS, convolutions, per-channel vectors), by
# the start of their name; `ssm_a` (Mamba's A) by its whole name: Qwen3.5's gated delta net
# `ssm_alpha` is a matrix product the CPU's extra buffers take (on the AMX module a 1024 x 16
# Q4_K one goes to CPU_REPACK: 0.32 MiB for Qwen3.5-0.8B, tests/data/corpus-engine).
_NOT_MATMUL = ("token_embd", "pos_embd", "token_types", "ssm_conv1d", "ssm_d", "rope_")
_NOT_MATMUL_NAMES = frozenset({"ssm_a"})


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
    return base not in _NOT_MATMUL_NAMES and not any(base.startswith(p) for p in _NOT_MATMUL) and "norm" not in base


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


# The CPU buffers of a few models' tables per placement (the planner's search tries a few
# placements per plan).
_cpu_buffers = IdentityCache(256)


def cpu_weights_for(wt: WeightTable, placement: Hashable, make: Callable[[], CpuWeights | None]) -> CpuWeights | None:
    """`make()` (a `cpu_weights` call) once per weight table and `placement`, which must name
    everything the call depends on besides the table (the planner's placement key)."""
    return _cpu_buffers.get((wt,), placement, make)
