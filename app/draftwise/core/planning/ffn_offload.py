"""Dense FFN offload: when a dense model does not fit the GPU, its attention and KV cache stay
on the GPU for every layer and the feed-forward weights of some layers go to the CPU.

Two layouts of the same model on the same GPU are compared (`fit_search._offload`):

- **layers**: `-ngl N`, whole blocks (attention, feed-forward and their KV) of the first
  layers on the CPU (llama.cpp's own split, what the planner always did);
- **ffn**: `-ngl all` and the FFN weights of the first k blocks on the CPU with the engine's
  tensor override, `-ot 'blk\\.(0|1|…)\\.ffn_(up|down|gate)\\.=CPU'` (`override_args`). The
  pattern is the engine's own dense FFN pattern (common/common.h `LLM_FFN_DENSE_REGEX`, what
  its `--n-cpu-ffn N` writes per block): `ffn_up`, `ffn_gate` and `ffn_down` move, the FFN's
  norm stays with the block's attention on the GPU. The first blocks, as `--n-cpu-ffn` takes
  them, and not the last: the file keeps tensors outside the blocks (token_embd) first and
  then the blocks in order, and the CPU's mapped buffer spans from its first tensor to its
  last (`cpu_buffers.cpu_weights`), so FFN tensors at the end of the file would make that buffer
  the whole file; at the front it ends after block k-1.

**The cost model.** Writing one token reads every weight it passes through once, and its KV
cache. Per layout, the bytes a token reads on each device (weights and KV there; the CPU's
token embedding is a lookup of one row, not read whole, unless it is also the output head)
over that device's rate:

    seconds per token = bytes read on the CPU / CPU rate + sum over GPUs of bytes read there / GPU rate

The CPU rate is what the engine decodes here (`speed_probe.throughput`, measured once per computer
and engine build, passed as `PlanPrefs.cpu_rate`; `DEFAULT_CPU_RATE` otherwise) times the
quantization's efficiency (`speed.quant_efficiency`); a GPU's is its memory bandwidth
(`gpu_speed.gpu_bandwidth`) times `gpu_speed.GPU_EFFICIENCY`, and a software Vulkan device's
(lavapipe, which runs on the CPU) is the CPU's. Both layouts place the same bytes, so their
totals are equal and the layout that leaves fewer bytes on the slower device wins: the FFN
layout's step is one block's FFN where the layer layout's is a whole block and its KV, so it
fills the GPU closer to its capacity. The FFN layout is chosen when it is faster by more than
`MIN_GAIN`; on a tie (a software device, whose memory is the CPU's) the layer layout stays.
Not in the model: the activations that cross to the CPU and back (2 x n_embd floats per moved
block and token, microseconds), and the prompt's attention, which the FFN layout keeps on the
GPU (it helps the FFN layout; the model does not count it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from draftwise.core.engines import args as engine_args
from draftwise.core.kinds import DeviceKind
from draftwise.core.machine import gpu_speed, speed
from draftwise.core.machine.hardware import Machine
from draftwise.core.planning.weight_table import WeightTable

if TYPE_CHECKING:
    from draftwise.core.planning.plan_types import DeviceUse

LAYERS, FFN = "layers", "ffn"
# The engine's dense FFN pattern (common/common.h LLM_FFN_DENSE_REGEX) after a block number.
FFN_TENSORS = r"\.ffn_(up|down|gate)\."
_BLOCK_FFN = re.compile(r"^blk\.(\d+)" + FFN_TENSORS)
# The buffer type the override names (the engine's CPU buffer type; with a GPU device the
# loader then maps the weights from the file, CPU_Mapped, as for a block on the CPU).
CPU_BUFFER = "CPU"
# What the engine decodes from RAM when no measurement was passed (bytes a second of Q4_K, as
# speed_probe.throughput measures): a desktop's two DDR4/DDR5 channels as llama.cpp reads them
# (20 GB/s; this project's 2-core VM decoded Q4_K at 13-20 GB/s, bench/speed_estimate.py).
DEFAULT_CPU_RATE = 20e9
# Below this share of the layer layout's time the estimate cannot tell the two apart.
MIN_GAIN = 0.01


def ffn_bytes(wt: WeightTable) -> tuple[int, ...] | None:
    """Bytes per block of the tensors the override moves (padded to the file's alignment, as
    the weight table counts them); None without a tensor table or for a model with routed
    experts (those go with --n-cpu-moe) or without such tensors."""
    if not wt.tensors or any(wt.experts):
        return None
    out = [0] * wt.n_layer
    for _fi, t in wt.tensors:
        m = _BLOCK_FFN.match(t.name)
        if m and int(m.group(1)) < wt.n_layer:
            out[int(m.group(1))] += -(-t.nbytes // wt.alignment) * wt.alignment
    return tuple(out) if any(out) else None


def moves(name: str, n_cpu_ffn: int) -> bool:
    """Whether the override for `n_cpu_ffn` blocks puts this tensor on the CPU."""
    m = _BLOCK_FFN.match(name)
    return m is not None and int(m.group(1)) < n_cpu_ffn


def override_options(n_cpu_ffn: int) -> tuple[engine_args.Option, ...]:
    """`-ot` for the FFN weights of blocks 0..n_cpu_ffn-1 (one pattern: the engine splits the
    value at commas, so the blocks are an alternation)."""
    if n_cpu_ffn <= 0:
        return ()
    blocks = "|".join(str(i) for i in range(n_cpu_ffn))
    return (engine_args.option("-ot", rf"blk\.({blocks}){FFN_TENSORS}={CPU_BUFFER}"),)


def override_args(n_cpu_ffn: int) -> tuple[str, ...]:
    """`override_options` as the engine reads them."""
    return engine_args.render(override_options(n_cpu_ffn))


def smallest_k(gpus_fit: Any, n: int) -> int | None:
    """The fewest blocks whose FFN must leave for the GPUs to fit (`gpus_fit(k)` only gets
    truer as k grows); None when even all n do not make them fit."""
    if n <= 0 or not gpus_fit(n):
        return None
    lo, hi = 1, n
    while lo < hi:
        m = (lo + hi) // 2
        if gpus_fit(m):
            hi = m
        else:
            lo = m + 1
    return lo


# ------------------------------------------------------------------ the cost model
@dataclass(frozen=True)
class Rates:
    """Bytes a second each device streams weights at: the CPU, and each planned GPU (the
    planner's order)."""

    cpu: float
    gpus: tuple[float, ...]


def rates(machine: Machine, gpu_names: Sequence[str], cpu_rate: float | None, quant: str | None) -> Rates:
    """The rates of the devices the planner uses (`gpu_names`: their labels, as `_devices`
    names them)."""
    cpu = (cpu_rate or DEFAULT_CPU_RATE) * speed.quant_efficiency(quant)
    by_label = {g.label: g for g in [*machine.workers, *machine.gpus]}
    out = []
    for name in gpu_names:
        g = by_label.get(name)
        if g is None or g.software:
            out.append(cpu)  # a device that runs on the CPU reads the CPU's memory
        else:
            out.append(gpu_speed.gpu_bandwidth(g) * gpu_speed.GPU_EFFICIENCY)
    return Rates(cpu, tuple(out))


@dataclass
class Layout:
    """One way to place the model: its placement, its planned bytes per device and what a
    token reads where."""

    name: str  # LAYERS | FFN
    gpu_layers: int  # -ngl
    n_cpu_ffn: int  # blocks whose FFN is on the CPU
    per_device: list[DeviceUse]
    cpu_read: int  # bytes a token reads from RAM
    gpu_read: tuple[int, ...]  # ... from each GPU
    seconds: float  # per token, by the cost model
    chosen: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float:
        return 1.0 / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"layout": self.name, "gpu_layers": self.gpu_layers, "n_cpu_ffn": self.n_cpu_ffn,
                "chosen": self.chosen, "cpu_read": self.cpu_read, "gpu_read": list(self.gpu_read),
                "tokens_per_s": round(self.tokens_per_s, 2),
                "per_device": [d.to_json() for d in self.per_device]}  # fmt: skip


def token_reads(devices: Sequence[DeviceUse], total_read: int) -> tuple[int, tuple[int, ...]]:
    """(bytes a token reads from RAM, from each GPU) of a dense placement. A GPU holds only
    what a token reads (its blocks, their KV, the head); RAM holds more that no token reads
    (the embedding table, the mapped file's holes), so its share is what the GPUs leave of
    `total_read`: every block's weights, every KV byte and the head."""
    gpus = tuple(d.weights + d.kv for d in devices if d.kind != DeviceKind.CPU)
    return max(total_read - sum(gpus), 0), gpus


def seconds(cpu_read: int, gpu_read: Sequence[int], r: Rates) -> float:
    s = cpu_read / r.cpu if r.cpu > 0 else 0.0
    for n, rate in zip(gpu_read, r.gpus, strict=False):
        s += n / rate if rate > 0 else 0.0
    return s


def faster(ffn: Layout, layers: Layout) -> bool:
    """The FFN layout wins only beyond the estimate's resolution (`MIN_GAIN`)."""
    return ffn.seconds < layers.seconds * (1 - MIN_GAIN)
