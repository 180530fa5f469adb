"""The plan's data: what the planner is asked (`PlanPrefs`) and what it answers (`Plan`, its
bytes as `PlanBytes`, one device's share as `DeviceUse`), the fit states, the margins and
the context defaults, and the planner's sizes in words.

No decision is made here: core/planning/planner.py's `plan()` fills these in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core import readable
from draftwise.core.engines import args as engine_args
from draftwise.core.engines.args import Option
from draftwise.core.kinds import DeviceKind, Switch
from draftwise.core.machine.hardware import GB
from draftwise.core.messages import Message
from draftwise.core.planning import ffn_offload

# The context a desktop user gets unless they ask for more (and the trained context allows).
DEFAULT_CTX = 32768
CTX_FLOOR = 2048
# Left free on each device: the GPU runtime's own context (CUDA/ROCm take 300-500 MiB) and
# the rest of the desktop. Matches llama.cpp's --fit-target default of 1024 MiB.
GPU_MARGIN = 1 * GB
RAM_MARGIN = 1 * GB

FITS, PARTIAL, NO_FIT = "fits", "partial", "no"


@dataclass(frozen=True)
class PlanPrefs:
    ctx: int | None = None  # context per slot the user wants (0: the trained context); None: DEFAULT_CTX (<= trained)
    kv_type: str | None = None  # a KV type the user chose; None: f16, q8_0 as a concession
    slots: int | None = None  # parallel sequences; None: 1 (a desktop user)
    swa_full: bool = False  # full-size cache for sliding-window layers (--swa-full)
    margin_bytes: int | None = None  # left free per device; None: GPU_MARGIN / RAM_MARGIN
    ctx_floor: int = CTX_FLOOR
    cpu_only: bool = False  # ignore the GPUs
    # Partial offload: leave the exact split to the engine's --fit (it measures) with our
    # margin as --fit-target, or write -ngl/--n-cpu-moe ourselves.
    engine_fit: bool = True
    projector: Path | None = None  # an mmproj file that will be loaded with the model
    # Engine settings the user gave as extra arguments (core/launch/owned_args.py): planned
    # with, and emitted once by `_args`. None: the planner (or the engine's default) decides.
    flash_attn: Switch | None = None  # -fa on|off|auto
    gpu_layers: int | None = None  # -ngl N (a number above the model's layers: all)
    n_cpu_moe: int | None = None  # --n-cpu-moe N (--cpu-moe: ALL_LAYERS)
    n_cpu_ffn: int | None = None  # --n-cpu-ffn N: the FFN weights of the first N blocks in RAM
    batch: int | None = None  # -b
    ubatch: int | None = None  # -ub
    no_repack: bool = False  # -nr: the CPU keeps every weight in the mapped file
    # Engine settings read from the user's extra arguments that stay in them (`with_engine_args`):
    ctx_train: int | None = None  # the slot cap after the user's YaRN scaling; None: the file's
    draft_n_max: int | None = None  # --spec-draft-n-max; None: the measured one (spec argv) or 3
    ngram_n_max: int | None = None  # --spec-ngram-mod-n-max; None: measured or 64
    cache_ram_mib: int | None = None  # --cache-ram; None: the planner sets it from the RAM left
    ctx_checkpoints: int | None = None  # --ctx-checkpoints; None: the planner's (at most 32)
    projector_offload: bool = True  # False: --no-mmproj-offload (the projector stays in RAM)
    op_offload: bool = True  # False: --no-op-offload (the CPU runs its own blocks' prompt batch)
    load_mode: str | None = None  # --load-mode; None: the engine's auto (mapped)
    # Bytes a second the engine decodes Q4_K weights on this CPU (speed_probe.throughput), for the
    # dense offload's cost model (core/planning/ffn_offload.py); None: its default.
    cpu_rate: float | None = None


ALL_LAYERS = 1 << 30  # "every layer" for PlanPrefs.gpu_layers / n_cpu_moe


@dataclass
class DeviceUse:
    """One device's share of the plan."""

    name: str  # "CUDA0 (RTX 4060)", "RAM", "MTL0 (Apple M3)", "RPC0 (192.168.1.20:50052)"
    kind: DeviceKind  # gpu | cpu | unified
    capacity: int  # usable bytes (free memory minus the margin)
    # The engine's name for this device's buffers ("CUDA0", "RPC0[host:port]", "CPU"): what
    # `compare_devices` matches the buffer lines with.
    buffer: str = ""
    worker: str | None = None  # an RPC worker's host:port
    weights: int = 0
    kv: int = 0  # KV cache and recurrent state
    drafter: int = 0  # drafter weights, its KV, compute and output
    compute: int = 0
    output: int = 0
    projector: int = 0
    layers: int = 0  # blocks placed here
    device: str = ""  # the engine's name for it: Vulkan0, CUDA0; "CPU" for RAM
    # Host memory the server fills while it runs: context checkpoints and the prompt cache
    # (--ctx-checkpoints, --cache-ram), sized from what the plan leaves free (`_host_cache`),
    # so not part of `total` (what the start allocates).
    host_cache: int = 0
    # Mapped bytes of `weights` no token reads (core/planning/residency.py): clean file pages
    # the kernel drops and reads again, so outside the working set the RAM fit counts.
    lazy: int = 0

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.drafter + self.compute + self.output + self.projector

    @property
    def working_set(self) -> int:
        return self.total - self.lazy

    @property
    def fits(self) -> bool:
        return self.working_set <= self.capacity

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "kind": self.kind, "capacity": self.capacity,
            "weights": self.weights, "kv": self.kv, "drafter": self.drafter,
            "compute": self.compute, "output": self.output, "projector": self.projector,
            "host_cache": self.host_cache, "total": self.total, "layers": self.layers, "buffer": self.buffer,
            "worker": self.worker, "device": self.device, "lazy": self.lazy, "working_set": self.working_set,
        }  # fmt: skip


@dataclass
class PlanBytes:
    weights: int = 0
    kv: int = 0  # KV + recurrent state of the target
    recurrent: int = 0  # the recurrent-state part of kv
    drafter: int = 0
    compute: int = 0
    output: int = 0
    projector: int = 0
    # The part of `drafter` that is an embedded MTP head's blocks: the engine loads them
    # with the model, so its own lines count them as model weights.
    embedded_head: int = 0
    # CPU extra buffers inside `weights` (AMX, CPU_REPACK: weights re-laid for the CPU).
    cpu_extra: dict[str, int] = field(default_factory=dict)
    # Host RAM the server fills while it runs, sized from what the rest leaves free (so not
    # in `total`, what the start allocates): every slot's context checkpoints at their most,
    # and the prompt cache's limit (--cache-ram).
    checkpoints: int = 0
    prompt_cache: int = 0
    lazy: int = 0  # mapped weight bytes in RAM outside the working set (DeviceUse.lazy)

    @property
    def host_cache(self) -> int:
        return self.checkpoints + self.prompt_cache

    @property
    def total(self) -> int:
        return self.weights + self.kv + self.drafter + self.compute + self.output + self.projector

    def to_json(self) -> dict[str, Any]:
        return {
            "weights": self.weights, "kv": self.kv, "recurrent": self.recurrent,
            "drafter": self.drafter, "compute": self.compute, "output": self.output,
            "projector": self.projector, "checkpoints": self.checkpoints, "prompt_cache": self.prompt_cache,
            "total": self.total, "cpu_extra": dict(self.cpu_extra), "lazy": self.lazy,
        }  # fmt: skip


@dataclass
class Plan:
    ctx: int  # tokens per slot
    n_ctx: int  # -c (all slots, padded as the engine pads)
    kv_type: str
    slots: int
    gpu_layers: int  # llama's -ngl count: blocks + the output head on the GPU(s)
    n_layers: int  # -ngl that puts everything on the GPU (blocks + head)
    n_cpu_moe: int  # blocks whose routed experts stay in RAM
    drop_drafter: bool
    fits: bool
    bytes: PlanBytes
    per_device: list[DeviceUse]
    reasons: list[Message]
    # The plan's own engine options (context, slots, KV, offload, host cache, the drafter's
    # placement), as data: the launch renders them once (core/launch/llamacpp.py).
    plan_options: tuple[Option, ...]
    # The plan without the drafter (for the launcher's startup fallback).
    fallback_plan_options: tuple[Option, ...] = ()
    # This plan's options without the drafter's own (--spec-draft-*: its KV, offload,
    # device), the rest as planned: a measurement arm that runs no model drafter on the same
    # context, KV and offload. None: `plan_options` holds none.
    target_plan_options: tuple[Option, ...] | None = None
    drop_reason: Message | None = None
    max_context: int = 0  # the largest context the model allows (trained, or the user's)
    drafter: Message | None = None  # "MTP head" / "draft model" when one is planned
    warnings: list[Message] = field(default_factory=list)
    estimated_weights: bool = False  # no tensor table: weights from the file size
    ctx_checkpoints: int = 0  # per slot (--ctx-checkpoints), 0 where the model makes none
    cache_ram_mib: int = 0  # the prompt cache's limit (--cache-ram)
    n_cpu_ffn: int = 0  # blocks whose FFN weights stay in RAM (-ot, core/planning/ffn_offload.py)
    # A dense model's partial offload planned both ways (whole layers / FFN weights on the
    # CPU), the chosen one marked; empty where there was no such choice.
    layouts: list[ffn_offload.Layout] = field(default_factory=list)
    # The engine settings a measurement chose and why (core/measurements/tuned.py): beside
    # the reasons, not among them, so "why it fits this way" is never crowded out by them.
    settings_notes: list[Message] = field(default_factory=list)
    # The plan passes -nr itself (the CPU's re-laid copies did not fit): what runs, as data
    # (LaunchSpec.settings), so a crash's fix need not read the command (crash.feature_fix).
    no_repack: bool = False

    @property
    def plan_args(self) -> tuple[str, ...]:
        """`plan_options` as the engine reads them (shown by `plan`, never read back)."""
        return engine_args.render(self.plan_options)

    @property
    def fallback_plan_args(self) -> tuple[str, ...]:
        return engine_args.render(self.fallback_plan_options)

    @property
    def target_plan_args(self) -> tuple[str, ...] | None:
        return None if self.target_plan_options is None else engine_args.render(self.target_plan_options)

    @property
    def fit_state(self) -> str:
        if not self.fits:
            return NO_FIT
        return PARTIAL if 0 < self.gpu_layers < self.n_layers or self.n_cpu_moe or self.n_cpu_ffn else FITS

    def to_json(self) -> dict[str, Any]:
        return {
            "ctx": self.ctx, "n_ctx": self.n_ctx, "kv_type": self.kv_type, "slots": self.slots,
            "gpu_layers": self.gpu_layers, "n_layers": self.n_layers, "n_cpu_moe": self.n_cpu_moe,
            "drop_drafter": self.drop_drafter, "drop_reason": str(self.drop_reason or ""),
            "fits": self.fits, "fit": self.fit_state,
            "drafter": str(self.drafter) if self.drafter is not None else None,
            "bytes": self.bytes.to_json(),
            "per_device": [d.to_json() for d in self.per_device],
            "reasons": [str(r) for r in self.reasons], "warnings": [str(w) for w in self.warnings],
            "settings_notes": [str(n) for n in self.settings_notes],
            "plan_args": list(self.plan_args),
            "fallback_plan_args": list(self.fallback_plan_args),
            "max_context": self.max_context, "ctx_checkpoints": self.ctx_checkpoints,
            "cache_ram_mib": self.cache_ram_mib, "n_cpu_ffn": self.n_cpu_ffn,
            "layouts": [lay.to_json() for lay in self.layouts],
        }  # fmt: skip


# ------------------------------------------------------------------ words
def human_bytes(n: int) -> str:
    """The planner's sizes: whole MiB below a GiB (readable's units, one rule)."""
    return readable.human_bytes(max(n, 0), digits=1 if n >= GB else 0)
