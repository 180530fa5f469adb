"""The memory plan: context, KV type, slots, offload and the drafter, for one machine.

`plan()` sizes every buffer llama-server will allocate (core/planning/memory.py, checked against
the engine's own buffer lines by bench/plan_accuracy.py), places them on devices the way
the engine does, and picks the largest setup that fits. When something has to give, the
concessions come in the order of docs/rules.md ("Planner"):

1. fewer slots (parallel sequences);
2. q8_0 KV cache (not for families known to degrade);
3. a smaller context, never below the floor;
4. part of the model off the GPU (experts first for MoE, then whole blocks);
5. refuse, saying what would make it fit.

A drafter the product chose (`spec.source in AUTO_SOURCES`) is left out when keeping it
would cost the target any of that (context, KV precision, GPU layers); one the user chose
stays. Every concession is a sentence in `Plan.reasons`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core import readable
from draftwise.core.engines import args as engine_args
from draftwise.core.engines import spec_types
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import AUTO_SOURCES, DeviceKind, Switch
from draftwise.core.machine.hardware import CUDA, GB, METAL, ROCM, VULKAN, Gpu, Machine
from draftwise.core.messages import Message, msg
from draftwise.core.planning import ffn_offload, residency
from draftwise.core.planning import memory as mem
from draftwise.core.planning.logparse import ActualMemory
from draftwise.core.readable import human_ctx
from draftwise.core.speculation.resolver import SpecDecision

MiB = mem.MiB

# The context a desktop user gets unless they ask for more (and the trained context allows).
DEFAULT_CTX = 32768
CTX_FLOOR = 2048
# Left free on each device: the GPU runtime's own context (CUDA/ROCm take 300-500 MiB) and
# the rest of the desktop. Matches llama.cpp's --fit-target default of 1024 MiB.
GPU_MARGIN = 1 * GB
RAM_MARGIN = 1 * GB
# The share of RAM Metal lets the GPU use on Apple silicon (recommendedMaxWorkingSetSize).
METAL_SHARE = 0.75
# Families where users report visible quality loss with a quantized (q8_0) KV cache: the
# planner shrinks the context instead. Small and conservative; a user's explicit --kv wins.
KV_QUANT_AVOID = frozenset({"qwen2", "qwen2moe", "qwen2vl", "gemma2", "gemma3", "gemma3n"})
# KV types from most to least precise, for "did the precision drop?".
_KV_RANK = {"f32": 0, "f16": 1, "bf16": 1, "q8_0": 2, "q5_1": 3, "q5_0": 3, "q4_1": 4,
            "iq4_nl": 4, "q4_0": 4}  # fmt: skip

FITS, PARTIAL, NO_FIT = "fits", "partial", "no"
_UNQUANTIZED_KV = ("f32", "f16", "bf16")


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
    # Bytes a second the engine decodes Q4_K weights on this CPU (speed.throughput), for the
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
    plan_args: tuple[str, ...]
    # The plan without the drafter (for the launcher's startup fallback).
    fallback_plan_args: tuple[str, ...] = ()
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


# ------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class _Drafter:
    kind: str  # "mtp" | "model"
    label: Message  # words for the user
    shape: mem.Shape | None = None  # the draft model's (kind "model")
    weights: mem.WeightTable | None = None
    # The drafter attends over the model's own KV cache and allocates none (Gemma 4's MTP
    # assistant: `is_mem_shared`, its layers sharing the target's last two).
    shares_kv: bool = False


@dataclass(frozen=True)
class _Device:
    name: str
    kind: DeviceKind  # gpu | cpu | unified
    capacity: int
    share: float = 1.0  # layer split weight among GPUs (their free memory)
    margin: int = GPU_MARGIN  # what the engine's --fit leaves free here (--fit-target)
    engine_name: str = ""  # Vulkan0, CUDA0: the engine's name for it
    buffer: str = ""  # the engine's buffer name (DeviceUse.buffer)
    worker: str | None = None  # an RPC worker's host:port
    # The largest weight the device's backend takes (None: any size). A tied head larger
    # than this stays on the CPU (`_max_weight`).
    max_weight: int | None = None
    # The backend runs a host tensor's operation itself for a large batch (memory.OffloadCopies).
    offloads_ops: bool = False


# GPU backends with an `offload_op` (ggml-vulkan, ggml-cuda for CUDA and ROCm); Metal is one
# memory pool here, RPC devices have none.
OP_OFFLOAD_BACKENDS = frozenset({VULKAN, CUDA, ROCM})


@dataclass(frozen=True)
class _Setup:
    slots: int
    kv_type: str
    ctx: int
    ngl: int  # llama -ngl (0 = CPU only)
    n_cpu_moe: int = 0
    n_cpu_ffn: int = 0  # the first blocks whose FFN weights stay in RAM (-ot)


def _devices(machine: Machine, prefs: PlanPrefs) -> tuple[list[_Device], _Device, list[Message]]:
    """The GPUs to plan on (discrete ones; an integrated one only when it is all there is),
    the host RAM, and notes. A unified-memory machine is one device holding everything."""
    margin_gpu = GPU_MARGIN if prefs.margin_bytes is None else prefs.margin_bytes
    margin_ram = RAM_MARGIN if prefs.margin_bytes is None else prefs.margin_bytes
    ram = _Device("RAM", DeviceKind.CPU, max(machine.ram_available - margin_ram, 0), buffer="CPU")
    if prefs.cpu_only:
        return [], ram, []
    gpus: list[Gpu] = machine.automatic_gpus
    if machine.unified_memory or any(g.backend == METAL for g in gpus):
        g = gpus[0] if gpus else None
        cap = g.free_bytes or g.total_bytes if g else int(machine.ram_total * METAL_SHARE)
        cap = min(cap, int(machine.ram_total * METAL_SHARE)) if machine.ram_total else cap
        name = g.label if g else "GPU (unified memory)"
        notes = [msg("Other computers are not used with unified memory: the model is planned for this computer "
                     "alone.")] if machine.workers else []
        return [_Device(name, DeviceKind.UNIFIED, max(cap - margin_gpu, 0), buffer=(g.device or "") if g else "")], ram, notes
    devs: list[_Device] = []
    notes: list[Message] = []
    # The engine puts RPC devices first (llama.cpp `llama_model_load_from_file_impl`) and splits
    # the layers in proportion to every device's free memory, workers included.
    for g in machine.workers:
        if g.free_bytes > margin_gpu:
            devs.append(_Device(g.label, DeviceKind.GPU, max(g.free_bytes - margin_gpu, 0), max(g.free_bytes, 1),
                                margin_gpu, g.engine_name, buffer=_buffer_name(g), worker=g.endpoint))
    for g in gpus:
        if g.limit is not None:
            # The user's limit replaces the default margin on this device.
            cap, margin = g.limit.capacity(g.free_bytes, margin_gpu), g.limit.margin(g.free_bytes)
        else:
            cap, margin = max(g.free_bytes - margin_gpu, 0), margin_gpu
        if cap <= 0:
            notes.append(msg("{gpu} is left out: only {free} of it is free.", gpu=g.label,
                             free=human_bytes(g.free_bytes))
                         if g.limit is None else
                         msg("{gpu} is left out: your limit leaves nothing of it to use.", gpu=g.label))
            continue
        devs.append(_Device(g.label, DeviceKind.GPU, cap, max(g.free_bytes, 1), margin, g.engine_name,
                            buffer=_buffer_name(g), max_weight=_max_weight(g),
                            offloads_ops=g.backend in OP_OFFLOAD_BACKENDS))
    return devs, ram, notes


# Vulkan's maxStorageBufferRange: ggml-vulkan's supports_op refuses an op with a tensor larger
# than it (ggml_backend_vk_device_supports_op, tensor_size_supported: the sources and the
# result), so llama-model's buffer choice leaves such a weight on the CPU. The limit is a uint32 (at most 4 GiB - 1,
# what discrete drivers report); Mesa's lavapipe reports 2^27 (measured: the tied heads of
# SmolLM2 and LFM2, 49,152 and 65,536 ids, go to Vulkan0; Qwen3-0.6B's (151,936 ids, a 297 MiB
# test output), Llama-3.2-1B's and gemma-3-1b's stay on the CPU).
VULKAN_MAX_STORAGE_RANGE = (1 << 32) - 1
VULKAN_SOFTWARE_MAX_STORAGE_RANGE = 1 << 27


def _max_weight(g: Gpu) -> int | None:
    if g.backend != VULKAN:
        return None  # CUDA, ROCm, Metal, RPC take a weight of any size
    return VULKAN_SOFTWARE_MAX_STORAGE_RANGE if g.software else VULKAN_MAX_STORAGE_RANGE


def _buffer_name(g: Gpu) -> str:
    """The engine's buffer name for a device: `CUDA0`, or `RPC<i>[host:port]` for a worker's."""
    if g.endpoint:
        return f"RPC{g.remote_index}[{g.endpoint}]"
    return g.device or f"{g.backend.upper()}{g.index}"


def _head_sizes(model: gguf.ModelInfo) -> set[int]:
    sizes = {model.key_length, model.value_length}
    if not any(sizes):
        heads = model.head_count if isinstance(model.head_count, int) else max(model.head_count or [0])
        if heads and model.embedding_length:
            sizes = {model.embedding_length // heads}
    return {n for n in sizes if n}


def kv_types_for(model: gguf.ModelInfo) -> list[str]:
    """KV cache types the engine accepts for this model: a quantized cache needs every head
    size to be a multiple of its block (32), or the context fails to start
    ("K cache type q8_0 with block size 32 does not divide n_embd_head_k")."""
    sizes = _head_sizes(model)
    return [t for t, (block, _size) in mem.KV_TYPES.items() if all(n % block == 0 for n in sizes)]


def _kv_choices(model: gguf.ModelInfo, prefs: PlanPrefs) -> list[str]:
    valid = kv_types_for(model)
    if prefs.flash_attn == Switch.OFF:
        # llama_init_from_model refuses a quantized V cache with flash attention disabled.
        valid = [t for t in valid if t in _UNQUANTIZED_KV]
    if prefs.kv_type:
        if prefs.kv_type not in mem.KV_TYPES:
            raise ValueError(f"unknown KV type {prefs.kv_type!r} (known: {', '.join(mem.KV_TYPES)})")
        if prefs.flash_attn == Switch.OFF and prefs.kv_type not in _UNQUANTIZED_KV:
            raise FieldError("kv_type", msg(
                "KV cache {kv} needs flash attention, and -fa off turns it off. "
                "Remove -fa off or set the KV cache to Auto or f16.", kv=prefs.kv_type,
            ))
        if prefs.kv_type not in valid:
            raise FieldError("kv_type", msg(
                "KV cache {kv} does not work with this model: its attention heads hold {sizes} values, "
                "not a multiple of 32. Set the KV cache to Auto or f16.",
                kv=prefs.kv_type, sizes=", ".join(map(str, sorted(_head_sizes(model)))),
            ))
        return [prefs.kv_type]
    if (model.architecture or "") in KV_QUANT_AVOID or "q8_0" not in valid:
        return ["f16"]
    return ["f16", "q8_0"]


def _drafter(spec: SpecDecision, model: gguf.ModelInfo, draft: gguf.ModelInfo | None,
             draft_shape: mem.Shape | None, draft_weights: mem.WeightTable | None) -> _Drafter | None:
    # One model drafter at most, alone or beside an n-gram type ("ngram-mod,draft-mtp").
    types = spec_types.split_types(spec.spec_type)
    st = next((t for t in types if t.startswith("draft-")), "")
    if st == "draft-mtp" and spec.draft is None:
        if not model.has_mtp_head:
            return None
        return _Drafter("mtp", msg("MTP head"))
    if st or spec.draft is not None:
        if draft is None and spec.draft is not None:
            try:
                draft = gguf.read_model(spec.draft)
            except (OSError, gguf.GGUFError):
                draft = None
        if draft is None:
            return None
        shape = draft_shape or mem.read_shape(draft)
        wt = draft_weights or mem.read_weight_table(draft)
        label = msg("MTP head") if st == "draft-mtp" else msg("draft model")
        return _Drafter("model", label, shape, wt, shares_kv=draft.sidecar_kind == "assistant")
    return None  # ngram types and no speculation cost no memory worth planning


# ------------------------------------------------------------------ placement
class _Planner:
    def __init__(self, model: gguf.ModelInfo, shape: mem.Shape, wt: mem.WeightTable,
                 drafter: _Drafter | None, gpus: list[_Device], ram: _Device, prefs: PlanPrefs,
                 spec_type: str | None, projector: int) -> None:  # fmt: skip
        self.model, self.shape, self.wt = model, shape, wt
        self.drafter, self.gpus, self.ram, self.prefs = drafter, gpus, ram, prefs
        self.spec_type = spec_type if drafter is not None or (spec_type or "").startswith("ngram") else None
        self.projector = projector
        self.lengths = mem.DraftLength()
        self.mtp = drafter is not None and drafter.kind == "mtp"
        self.n_all = len(shape.layers)
        # MTP blocks are loaded only when the MTP head runs (TENSOR_SKIP otherwise).
        self.n_loaded = self.n_all if self.mtp else shape.n_layer
        self.unified = bool(gpus) and gpus[0].kind == DeviceKind.UNIFIED
        # This machine's own GPUs (index into self.gpus): a draft model stays on them.
        self.local = [i for i, d in enumerate(gpus) if d.worker is None]
        self.workers = [d.worker for d in gpus if d.worker is not None]
        # The CPU variant whose extra buffers apply (None: none, as with any GPU device).
        self.cpu_variant: str | None = None
        # The CPU variant whose extra buffers may take a tied head kept on the CPU.
        self.head_variant: str | None = None
        # Per block, the FFN weights `-ot` can move to the CPU (a dense model with a tensor
        # table on discrete GPUs of this machine); None: no FFN layout to compare.
        self.ffn = (ffn_offload.ffn_bytes(wt) if gpus and not self.unified and not self.workers else None)
        self.rates = ffn_offload.Rates(ffn_offload.DEFAULT_CPU_RATE, tuple(ffn_offload.DEFAULT_CPU_RATE for _ in gpus))
        self.page = residency.PAGE
        # The layouts compared per (slots, KV type, context), for Plan.layouts.
        self.layouts: dict[tuple[int, str, int], list[ffn_offload.Layout]] = {}
        # cpu_weights per placement: the search evaluates the same placement at several
        # contexts and KV types, and each pass walks the whole tensor table.
        self._cpu_weights: dict[tuple[tuple[int, ...], int, bool, int, str | None], mem.CpuWeights | None] = {}

    def _cpu_weights_of(self, where: list[int], n_cpu_moe: int, head_on_cpu: bool,
                        n_cpu_ffn: int = 0) -> mem.CpuWeights | None:
        """mem.cpu_weights for this placement, computed once per placement."""
        key = (tuple(where), n_cpu_moe, head_on_cpu, n_cpu_ffn, self.cpu_variant)
        if key not in self._cpu_weights:
            # Across plans too, for the same table (memory.cpu_weights_for): the placement and
            # what `_on_cpu` reads besides it (the block count, whether the MTP blocks load).
            self._cpu_weights[key] = mem.cpu_weights_for(self.wt, (*key, self.n_all, self.mtp), lambda: mem.cpu_weights(
                self.wt, self.cpu_variant, skip_nextn=not self.mtp,
                on_cpu=self._on_cpu(where, n_cpu_moe, head_on_cpu, n_cpu_ffn)))
        return self._cpu_weights[key]

    def _on_cpu(self, where: list[int], n_cpu_moe: int, head_on_cpu: bool, n_cpu_ffn: int = 0):
        """Which tensors stay in RAM for this placement (the loader's rules)."""
        n_all = self.n_all

        def on_cpu(t: gguf.TensorInfo) -> bool:
            name = t.name
            if name.startswith("blk."):
                try:
                    il = int(name.split(".", 2)[1])
                except ValueError:
                    return True
                if il >= n_all:
                    return True
                if ("_exps." in name or name.endswith("_exps")) and il < n_cpu_moe:
                    return True
                if il < n_cpu_ffn and ffn_offload.moves(name, n_cpu_ffn):
                    return True
                return where[il] < 0
            if name.startswith("output"):
                return head_on_cpu
            return True  # token_embd and the rest stay on the host

        return on_cpu
    @property
    def full_ngl(self) -> int:
        return self.n_all + 1

    def _mapped(self) -> bool:
        """The CPU's weights stay mapped from the file (the engine's default load mode)."""
        return self.prefs.load_mode is None or self.prefs.load_mode in residency.MAPPED_LOAD_MODES

    def layer_devices(self, ngl: int) -> list[int]:
        """Device index per block (-1 = CPU; else index into self.gpus), as
        llama_model::load_tensors assigns them; the head is index n_all."""
        if not self.gpus:
            return [-1] * (self.n_all + 1)
        i_gpu_start = max(self.n_all + 1 - ngl, 0)
        act = min(ngl, self.n_all + 1)
        total = sum(d.share for d in self.gpus)
        splits, acc = [], 0.0
        for d in self.gpus:
            acc += d.share / total
            splits.append(acc)
        out = []
        for il in range(self.n_all + 1):
            if il < i_gpu_start or il - i_gpu_start >= act:
                out.append(-1)
                continue
            frac = (il - i_gpu_start) / act
            out.append(next((i for i, s in enumerate(splits) if frac < s), len(splits) - 1))
        return out

    def evaluate(self, s: _Setup) -> tuple[list[DeviceUse], PlanBytes]:
        shape, wt = self.shape, self.wt
        c = mem.cells(s.ctx, s.slots, shape.n_swa, self.prefs.swa_full,
                    batch=self.prefs.batch, ubatch=self.prefs.ubatch)
        tctx = mem.target_context(shape, c, s.kv_type, spec_type=self.spec_type, lengths=self.lengths)
        gpu_uses = [DeviceUse(d.name, d.kind, d.capacity, buffer=d.buffer, worker=d.worker, device=d.engine_name)
                    for d in self.gpus]
        ram = DeviceUse(self.ram.name, DeviceKind.CPU, self.ram.capacity, buffer=self.ram.buffer, device="CPU")
        if self.unified:
            ram = gpu_uses[0]  # one pool: "RAM" lines land in the same device

        def dev(i: int) -> DeviceUse:
            return ram if i < 0 else gpu_uses[i]

        where = self.layer_devices(s.ngl)
        b = PlanBytes()
        for il in range(self.n_loaded):
            d = dev(where[il])
            d.layers += 1
            body = wt.layers[il] if il < len(wt.layers) else 0
            experts = wt.experts[il] if il < len(wt.experts) else 0
            nextn = il >= shape.n_layer
            target = "drafter" if nextn else "weights"
            setattr(d, target, getattr(d, target) + body)
            if il < s.n_cpu_ffn and self.ffn is not None and not nextn:
                # The block's FFN weights in RAM (-ot), its attention and KV where it runs.
                d.weights -= self.ffn[il]
                ram.weights += self.ffn[il]
            e_dev = ram if il < s.n_cpu_moe else d
            setattr(e_dev, target, getattr(e_dev, target) + experts)
            if nextn:
                b.drafter += body + experts
                b.embedded_head += body + experts
            else:
                b.weights += body + experts
            d.kv += tctx.kv_layers[il] + tctx.rs_layers[il]
        b.kv, b.recurrent = tctx.kv + tctx.rs, tctx.rs
        # Input embeddings stay on the CPU; the head goes with the "layer" after the last.
        head_dev = dev(where[self.n_all])
        ram.weights += wt.input + wt.other
        head = wt.head(on_gpu=head_dev is not ram)
        # A head that is token_embd itself (TENSOR_DUPLICATED) is copied to its GPU, unless
        # the GPU's backend refuses a matrix that large (Vulkan's storage range, `_max_weight`).
        head_gpu = self.gpus[where[self.n_all]] if head_dev is not ram else None
        # The backend is asked with the loader's test op (llama-model-loader.cpp
        # weight_buft_supported: the matrix times 512 f32 columns), so its f32 output of
        # n_vocab x 512 must fit as well as the matrix.
        probe = max(wt.input, shape.n_vocab * 512 * 4)
        too_big = head_gpu is not None and head_gpu.max_weight is not None and probe > head_gpu.max_weight
        tied_on_cpu = wt.tied and too_big and wt.tensors
        if tied_on_cpu:
            # Measured on Vulkan (Gemma 3 on lavapipe): such a head stays with the input on
            # the CPU, as a second copy only where a CPU extra buffer takes it (below); the
            # mapped file already holds the first. Its norm goes to the GPU.
            head = wt.output
        head_dev.weights += head
        b.weights += wt.input + wt.other + head
        # A tied head is token_embd loaded a second time as the output matrix
        # (TENSOR_DUPLICATED): the output layer's buffer list offers it to the CPU's extra
        # buffers, which copy it beside the mapped file (the input keeps the mapped one,
        # GET_ROWS). Without a GPU that is the CPU variant's list (AMX on sapphirerapids:
        # 190 MiB of the real Gemma 3 270M); with one, the head variant's (Vulkan, above).
        head_variant = self.head_variant if tied_on_cpu else self.cpu_variant if head_dev is ram else None
        moved = mem.tied_head_extra(wt, head_variant) if wt.tied else None
        if moved is not None:
            ram.weights += moved[1]
            b.weights += moved[1]
            b.cpu_extra = {**b.cpu_extra, moved[0]: b.cpu_extra.get(moved[0], 0) + moved[1]}
        if wt.tensors and not self.unified:
            # What the CPU really holds: the mapped range over its tensors (holes included)
            # and, without a GPU device, the re-laid copies in the CPU's extra buffers.
            cw = self._cpu_weights_of(where, s.n_cpu_moe, head_dev is ram, s.n_cpu_ffn)
            if cw is not None:
                delta = cw.total - cw.summed
                ram.weights += delta
                b.weights += delta
                for buf, n in cw.extra.items():
                    b.cpu_extra[buf] = b.cpu_extra.get(buf, 0) + n
                if self._mapped():
                    # The holes of the mapped span: pages read once at load, never again.
                    ram.lazy += max(cw.mapped - cw.kept, 0)
        if wt.tensors and not self.unified and self._mapped():
            # The row tables' untouched rows (residency.py); a tied head the CPU reads from
            # the mapped table (no copy on a GPU or in a CPU extra buffer) reads every row.
            head_reads = wt.tied and (head_dev is ram or bool(tied_on_cpu)) and moved is None
            ram.lazy += residency.lazy_bytes(residency.row_tables(wt.tensors), c.n_ctx,
                                             head_reads_embedding=head_reads, page=self.page)
        b.lazy = ram.lazy
        # Compute: every device running blocks reserves the graph; a GPU-only model still
        # keeps a host buffer (`<GPU>_Host compute buffer`, mem.host_compute): the scheduler
        # places the graph's inputs and the embedding lookup on the CPU backend.
        # With blocks or experts in RAM, a GPU whose backend offloads ops runs their prompt
        # batch (copying the weights in): the host keeps only the inputs' buffer.
        used = {id(dev(i)) for i in where[: self.n_loaded]} | {id(head_dev)}
        if s.n_cpu_ffn:
            used.add(id(ram))  # the CPU holds the moved FFNs' weights
        on_cpu = self._on_cpu(where, s.n_cpu_moe, head_dev is ram, s.n_cpu_ffn)
        offload = self._op_offload_target(where, s, c, gpu_uses)
        for d in [*gpu_uses, ram]:
            if d is offload:
                d.compute += mem.offloaded_compute(shape, c, tctx.compute, self._offload_copies(where, tctx, on_cpu))
            elif id(d) in used and not (d is ram and offload is not None):
                d.compute += tctx.compute
            elif d is ram:
                d.compute += mem.host_compute(shape, c)
        b.compute = sum(d.compute for d in {id(x): x for x in [*gpu_uses, ram]}.values())
        ram.output += tctx.output
        b.output = tctx.output
        # The drafter's context (and a separate draft model's weights).
        if self.drafter is not None:
            dd = self._drafter_bytes(c, s.kv_type)
            # MTP runs where its blocks are; a draft model on this machine's first GPU when the
            # target is wholly on the GPUs, else in RAM (never on a worker: --spec-draft-device).
            if self.mtp:
                ddev = dev(where[self.n_all - 1])
            else:
                ddev = gpu_uses[self.local[0]] if self.local and s.ngl >= self.full_ngl else ram
            ddev.drafter += dd[0]
            ram.drafter += dd[1]
            b.drafter += dd[0] + dd[1]
        if self.projector:
            # The clip loader puts the projector on the first GPU unless --no-mmproj-offload.
            pdev = gpu_uses[self.local[0]] if self.local and self.prefs.projector_offload else ram
            pdev.projector += self.projector
            b.projector = self.projector
        devices = gpu_uses + ([] if self.unified else [ram])
        return devices, b

    def _op_offload_target(self, where: list[int], s: _Setup, c: mem.Cells,
                           gpu_uses: list[DeviceUse]) -> DeviceUse | None:  # fmt: skip
        """The GPU that runs the prompt batch of the blocks (or experts) kept in RAM: the
        first of this machine's GPUs whose backend offloads ops (ggml_backend_sched asks the
        backends in order), when something stays in RAM and the batch is large enough."""
        if self.unified or not self.prefs.op_offload or c.ubatch < mem.OP_OFFLOAD_MIN_BATCH:
            return None
        if not (any(d < 0 for d in where[: self.n_loaded]) or s.n_cpu_moe or s.n_cpu_ffn) or s.ngl <= 0:
            return None
        first = next((i for i in self.local if self.gpus[i].offloads_ops), None)
        return gpu_uses[first] if first is not None else None

    def _offload_copies(self, where: list[int], tctx: mem.ContextBytes, on_cpu) -> mem.OffloadCopies:
        """The largest copies the offloading GPU makes of what stays in RAM (memory.OffloadCopies)."""
        ffn = attn = 0
        for _fi, t in self.wt.tensors:
            if not t.name.startswith("blk.") or not on_cpu(t) or not mem.matmul_weight(t):
                continue
            il = t.name.split(".", 2)[1]
            if il.isdigit() and int(il) >= self.n_loaded:
                continue  # an MTP block that is not loaded
            if mem.ffn_input_weight(t.name):
                ffn = max(ffn, t.nbytes)
            elif ".attn_" in t.name:
                attn = max(attn, t.nbytes)
        # A table estimated from the file size has no tensors: the weight copies stay unplanned
        # there (the engine's --fit, which the plan leaves a partial split to, measures them).
        kv = max((tctx.kv_layers[il] for il in range(self.shape.n_layer) if where[il] < 0), default=0)
        return mem.OffloadCopies(ffn, attn, kv)

    def _drafter_bytes(self, c: mem.Cells, kv_type: str) -> tuple[int, int]:
        """(on the drafter's device, in RAM): weights of a draft model, its KV, compute;
        its output buffer is host memory."""
        d = self.drafter
        assert d is not None
        if d.kind == "mtp":
            ctx = mem.mtp_context(self.shape, c, kv_type)
            return ctx.kv + ctx.compute, ctx.output
        assert d.shape is not None and d.weights is not None
        if d.shape.n_nextn and self.spec_type == "draft-mtp":
            # An MTP-only sidecar: an MTP context over its nextn blocks.
            ctx = mem.mtp_context(d.shape, c, kv_type)
            if d.shares_kv:
                ctx = replace(ctx, kv_layers=[0] * len(ctx.kv_layers))
        else:
            ctx = mem.draft_context(d.shape, c, kv_type)
        return d.weights.total() + ctx.kv + ctx.rs + ctx.compute, ctx.output

    def fits(self, s: _Setup) -> bool:
        devices, _ = self.evaluate(s)
        return all(d.fits for d in devices)

    def gpus_fit(self, s: _Setup) -> bool:
        devices, _ = self.evaluate(s)
        return all(d.fits for d in devices if d.kind != DeviceKind.CPU)


# ------------------------------------------------------------------ engine arguments the plan reads
_DRAFT_N_MAX = ("--spec-draft-n-max",)
_NGRAM_N_MAX = ("--spec-ngram-mod-n-max",)
# The m-gram lengths of ngram-simple and ngram-map-k (a measured setup passes them).
_NGRAM_SIZE_M = ("--spec-ngram-simple-size-m", "--spec-ngram-map-k-size-m")
_CACHE_RAM = ("--cache-ram", "-cram")
_CHECKPOINTS = ("--ctx-checkpoints", "-ctxcp", "--swa-checkpoints")
_NO_MMPROJ_OFFLOAD = ("--no-mmproj-offload",)
_NO_OP_OFFLOAD = ("--no-op-offload",)
_LOAD_MODE = ("--load-mode", "-lm")


def _int_arg(args: Sequence[str], names: tuple[str, ...]) -> int | None:
    v = engine_args.value_of(args, *names)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None  # the engine refuses it at start, with its own message


def draft_lengths(spec: SpecDecision, prefs: PlanPrefs) -> mem.DraftLength:
    """The draft lengths the engine will run: the user's (PlanPrefs), else the tuned one the
    speed measurement put into the speculation argv (core/speculation/measured.py), else the
    engine's default."""
    draft = prefs.draft_n_max or _int_arg(spec.argv, _DRAFT_N_MAX) or mem.SPEC_DRAFT_N_MAX
    ngram = prefs.ngram_n_max or _int_arg(spec.argv, _NGRAM_N_MAX) or mem.NGRAM_MOD_N_MAX
    size_m = max((_int_arg(spec.argv, (flag,)) or 0 for flag in _NGRAM_SIZE_M), default=0) or mem.NGRAM_MAP_SIZE_M
    return mem.DraftLength(draft=max(draft, 0), ngram_mod=max(ngram, 0), ngram_map=size_m)


def trained_context(model: gguf.ModelInfo, args: Sequence[str]) -> int | None:
    """The slot cap after the user's RoPE options, as llama_init_from_model recomputes it:
    YaRN with a frequency scale other than the file's raises `n_ctx_train` to the original
    context / scale; any other setting keeps the file's (None)."""
    scaling = engine_args.value_of(args, "--rope-scaling") or (model.rope_scaling_type or "")
    scale = None
    for i, token in enumerate(args):  # the last of --rope-scale / --rope-freq-scale wins
        name = engine_args.flag_name(token)
        value = engine_args.value_of(args[i:], name) if name in ("--rope-scale", "--rope-freq-scale") else None
        try:
            if name == "--rope-scale" and value:
                scale = 1.0 / float(value)
            elif name == "--rope-freq-scale" and value:
                scale = float(value)
        except (ValueError, ZeroDivisionError):
            return None
    if scaling != "yarn" or not scale:
        return None
    train_scale = 1.0 / model.rope_scaling_factor if model.rope_scaling_factor else 1.0
    if abs(scale - train_scale) < 1e-9:
        return None
    orig = (_int_arg(args, ("--yarn-orig-ctx",)) or model.rope_scaling_original_context
            or model.context_length or 0)  # fmt: skip
    return int(orig / scale) or None


_MMPROJ = ("--mmproj", "-mm")
_NO_MMPROJ = ("--no-mmproj",)


def projector_for(model: gguf.ModelInfo) -> Path | None:
    """The projector (mmproj) that belongs to `model`: a file beside it (ModelInfo.projectors)
    whose projection width is the model's embedding length, the one mtmd accepts."""
    for path in model.projectors:
        try:
            info = gguf.read_projector(path)
        except (OSError, gguf.GGUFError):
            continue
        if info.projection_dim and info.projection_dim == model.embedding_length:
            return path
    return None


def engine_inputs(prefs: PlanPrefs, model: gguf.ModelInfo, args: Sequence[str]) -> tuple[PlanPrefs, tuple[str, ...]]:
    """The plan's inputs from the user's remaining extra arguments (after owned_args):
    `with_engine_args`, and the projector: the user's `--mmproj FILE` is taken out (the plan
    places and passes it), `--no-mmproj` keeps the model text-only, and otherwise the
    projector that belongs to the model is found and planned. Returns (prefs, the rest)."""
    prefs = with_engine_args(prefs, model, args)
    rest: list[str] = []
    given: str | None = None
    for start, end, _name, value in engine_args.options(list(args)):
        if engine_args.flag_name(args[start]) in _MMPROJ:
            given = value or ""
            continue
        rest += args[start:end]
    if given:
        prefs = replace(prefs, projector=Path(given))
    elif prefs.projector is None and not engine_args.sets(args, *_NO_MMPROJ):
        found = projector_for(model)
        if found is not None:
            prefs = replace(prefs, projector=found)
    return prefs, tuple(rest)


def with_engine_args(prefs: PlanPrefs, model: gguf.ModelInfo, args: Sequence[str]) -> PlanPrefs:
    """`prefs` with what the user's remaining extra arguments change in the plan without
    being the planner's to set: RoPE scaling (the slot cap), draft lengths, the prompt cache,
    context checkpoints, projector placement, the load mode (what of the mapped weights is
    resident). The arguments stay in the argv as written."""
    changes: dict[str, Any] = {}
    if (cap := trained_context(model, args)) is not None:
        changes["ctx_train"] = cap
    for field_name, names in (("draft_n_max", _DRAFT_N_MAX), ("ngram_n_max", _NGRAM_N_MAX),
                              ("cache_ram_mib", _CACHE_RAM), ("ctx_checkpoints", _CHECKPOINTS)):
        if (n := _int_arg(args, names)) is not None:
            changes[field_name] = n
    if engine_args.sets(args, *_NO_MMPROJ_OFFLOAD):
        changes["projector_offload"] = False
    if engine_args.sets(args, *_NO_OP_OFFLOAD):
        changes["op_offload"] = False
    if (mode := engine_args.value_of(args, *_LOAD_MODE)) is not None:
        changes["load_mode"] = mode.strip().lower()  # mlock, none, dio: the RAM holds every weight
    return replace(prefs, **changes) if changes else prefs


# ------------------------------------------------------------------ search
def slot_cap(model: gguf.ModelInfo, prefs: PlanPrefs) -> int:
    """The most context one slot can use (server-context.cpp `n_ctx_slot`): the trained
    length, or what the user's YaRN scaling makes it (`trained_context`); 0: unknown."""
    return prefs.ctx_train or model.context_length or 0


def _ctx_target(model: gguf.ModelInfo, prefs: PlanPrefs) -> tuple[int, int, list[Message]]:
    """(wanted context, floor, notes)."""
    notes = []
    trained = slot_cap(model, prefs)
    if prefs.ctx == 0 and trained:
        # `-c 0` is the trained context (llama_context: n_ctx 0 -> n_ctx_train), chosen by the user.
        prefs = replace(prefs, ctx=trained)
    if prefs.ctx:
        want = prefs.ctx
        if trained and want > trained:
            # The engine would allocate the larger cache but cap every slot at the trained
            # length: planning it would buy memory no reply can use.
            notes.append(msg("The context is {trained} instead of {want}: the engine stops each conversation at the "
                             "{trained} this model was trained for (RoPE scaling, e.g. --rope-scaling yarn "
                             "--rope-scale 2, raises that).", want=human_ctx(want), trained=human_ctx(trained)))
            want = trained
    else:
        want = min(DEFAULT_CTX, trained) if trained else DEFAULT_CTX
    floor = min(prefs.ctx_floor, want, trained or want)
    return max(want, 256), max(floor, 256), notes


def _ctx_step(ctx: int) -> int:
    return 1024 if ctx >= 4096 else 256


def _largest_ctx(fits: Any, lo: int, hi: int) -> int | None:
    """Largest context in [lo, hi] (on the 256/1024 grid) for which fits(ctx) holds."""
    if not fits(lo):
        return None
    if fits(hi):
        return hi
    grid = sorted({lo, hi} | {x for x in range(_round_up(lo, 256), hi, 256)
                              if x % _ctx_step(x) == 0})  # fmt: skip
    a, b = 0, len(grid) - 1  # grid[a] fits, grid[b] does not
    while b - a > 1:
        m = (a + b) // 2
        if fits(grid[m]):
            a = m
        else:
            b = m
    return grid[a]


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass
class _Result:
    setup: _Setup | None
    reasons: list[Message]


def _search(p: _Planner, kv_choices: list[str], want: int, floor: int, slots: int) -> _Result:
    """The first setup that fits, in the order of concessions."""
    reasons: list[Message] = []
    kv0 = kv_choices[0]
    full = p.full_ngl if p.gpus else 0
    # Placement the user fixed (-ngl, --n-cpu-moe, --cpu-moe, --n-cpu-ffn): planned as given, never moved.
    fixed = p.prefs.gpu_layers is not None or p.prefs.n_cpu_moe is not None or p.prefs.n_cpu_ffn is not None
    if p.prefs.gpu_layers is not None:
        full = min(max(p.prefs.gpu_layers, 0), p.full_ngl) if p.gpus else 0
    moe0 = min(max(p.prefs.n_cpu_moe, 0), p.n_loaded) if p.prefs.n_cpu_moe is not None else 0
    ffn0 = min(max(p.prefs.n_cpu_ffn, 0), p.shape.n_layer) if p.prefs.n_cpu_ffn is not None and p.gpus else 0
    where = msg("the GPU") if p.gpus else msg("memory")
    if p.unified:
        where = msg("the GPU's share of memory")

    def s(slots_: int, kv: str, ctx: int, ngl: int = full, moe: int = moe0) -> _Setup:
        return _Setup(slots_, kv, ctx, ngl, moe, ffn0)

    # 1-3: everything on the GPU (or in RAM without one): slots, KV type, context.
    if p.fits(s(slots, kv0, want)):
        return _Result(s(slots, kv0, want), reasons)
    slot_options = [slots] if slots == 1 else [slots, 1]
    for sl in slot_options[1:]:
        if p.fits(s(sl, kv0, want)):
            reasons.append(msg("One slot instead of {slots}: {slots} parallel conversations would not fit in {where}.",
                               slots=slots, where=where))
            return _Result(s(sl, kv0, want), reasons)
    sl = 1
    slot_reason = ([msg("One slot instead of {slots}: more would not fit in {where}.", slots=slots, where=where)]
                   if slots > 1 else [])
    for kv in kv_choices[1:]:
        if p.fits(s(sl, kv, want)):
            return _Result(s(sl, kv, want), slot_reason + [
                msg("The KV cache is stored as {kv} instead of {kv0} so the {ctx} context fits in {where}.",
                    kv=kv, kv0=kv0, ctx=human_ctx(want), where=where)])  # fmt: skip
    kv_last = kv_choices[-1]
    best = _largest_ctx(lambda x: p.fits(s(sl, kv_last, x)), floor, want)
    if best is not None:
        if kv_last != kv0:
            why = msg("The context is {ctx} instead of {want} with a {kv} KV cache: that is what fits in {where}.",
                      ctx=human_ctx(best), want=human_ctx(want), kv=kv_last, where=where)
        else:
            why = msg("The context is {ctx} instead of {want}: that is what fits in {where}.",
                      ctx=human_ctx(best), want=human_ctx(want), where=where)
        return _Result(s(sl, kv_last, best), [*slot_reason, why])

    if not p.gpus or p.unified or fixed:
        return _Result(None, slot_reason)

    # 4: part of the model off the GPU. The context no longer buys a full offload, so the
    # setup goes back to what the user wanted, conceding again only if RAM runs out.
    for sl2 in slot_options:
        for kv in kv_choices:
            r = _offload(p, s(sl2, kv, want))
            if r is not None:
                return _Result(r, _offload_reasons(p, r, slots, kv0, want))
    best = _largest_ctx(lambda x: _offload(p, s(1, kv_last, x)) is not None, floor, want)
    if best is not None:
        r = _offload(p, s(1, kv_last, best))
        assert r is not None
        return _Result(r, _offload_reasons(p, r, slots, kv0, want))
    return _Result(None, slot_reason)


def _offload(p: _Planner, s: _Setup) -> _Setup | None:
    """The partial offload for this slots/KV/context: whole layers on the CPU, or for a dense
    model the faster of that and its FFN weights on the CPU (ffn_offload.py's cost model);
    both layouts are kept for Plan.layouts."""
    layers = _offload_layers(p, s)
    if p.ffn is None:
        return layers
    k = ffn_offload.smallest_k(lambda n: p.gpus_fit(replace(s, ngl=p.full_ngl, n_cpu_ffn=n)), p.shape.n_layer)
    ffn = replace(s, ngl=p.full_ngl, n_cpu_ffn=k) if k is not None else None
    if ffn is not None and not p.fits(ffn):
        ffn = None
    found = [_layout(p, r, name) for r, name in ((layers, ffn_offload.LAYERS), (ffn, ffn_offload.FFN))
             if r is not None]  # fmt: skip
    if not found:
        return None
    best = found[0]
    if len(found) == 2 and ffn_offload.faster(found[1], found[0]):
        best = found[1]
    best.chosen = True
    p.layouts[(s.slots, s.kv_type, s.ctx)] = found
    return layers if best.name == ffn_offload.LAYERS else ffn


def _layout(p: _Planner, r: _Setup, name: str) -> ffn_offload.Layout:
    """One layout's bytes per device and what a token reads where (dense blocks: all their
    weights, every KV byte, the head; a tied head is the whole table)."""
    devices, b = p.evaluate(r)
    trunk = sum(p.wt.layers[: p.shape.n_layer])
    total_read = trunk + sum(d.kv for d in devices) + p.wt.output + (p.wt.input if p.wt.tied else 0)
    cpu_read, gpu_read = ffn_offload.token_reads(devices, total_read)
    return ffn_offload.Layout(name, min(r.ngl, p.full_ngl), r.n_cpu_ffn, devices, cpu_read, gpu_read,
                              ffn_offload.seconds(cpu_read, gpu_read, p.rates))


def _offload_layers(p: _Planner, s: _Setup) -> _Setup | None:
    """The most GPU use that fits for this slots/KV/context: MoE experts go to RAM first
    (they are the bulk and the least used per token), then whole blocks, last first.

    GPU use only grows with -ngl (and shrinks with --n-cpu-moe) while RAM use does the
    opposite, so the search finds the most the GPUs hold, then checks RAM there."""
    n = p.n_loaded
    if any(p.wt.experts[:n]):
        if p.gpus_fit(replace(s, n_cpu_moe=n)):
            lo, hi = 0, n  # smallest n_cpu_moe whose GPU share fits
            while lo < hi:
                m = (lo + hi) // 2
                if p.gpus_fit(replace(s, n_cpu_moe=m)):
                    hi = m
                else:
                    lo = m + 1
            r = replace(s, n_cpu_moe=hi)
            return r if p.fits(r) else None
        s = replace(s, n_cpu_moe=n)
    lo, hi = 0, p.full_ngl  # largest -ngl whose GPU share fits (0 always does)
    while lo < hi:
        m = (lo + hi + 1) // 2
        if p.gpus_fit(replace(s, ngl=m)):
            lo = m
        else:
            hi = m - 1
    r = replace(s, ngl=lo)
    return r if p.fits(r) else None


def _offload_reasons(p: _Planner, r: _Setup, slots: int, kv0: str, want: int) -> list[Message]:
    out = []
    if r.slots < slots:
        out.append(msg("One slot instead of {slots}: more would not fit.", slots=slots))
    if r.kv_type != kv0:
        out.append(msg("The KV cache is stored as {kv} instead of {kv0} to fit in memory.", kv=r.kv_type, kv0=kv0))
    if r.ctx < want:
        out.append(msg("The context is {ctx} instead of {want}: that is what fits in {where}.",
                       ctx=human_ctx(r.ctx), want=human_ctx(want), where=msg("memory")))
    blocks = p.n_loaded
    if r.ngl >= p.full_ngl and r.n_cpu_ffn:
        out.append(_ffn_reason(p, r))
    elif r.ngl >= p.full_ngl and r.n_cpu_moe:
        out.append(msg("The experts of {n} of {blocks} layers stay in RAM (the model does not fit on the GPU even "
                       "with the smallest context); the rest runs on the GPU.", n=r.n_cpu_moe, blocks=blocks))
    elif r.ngl == 0:
        out.append(msg("The model runs on the CPU: not even one layer fits on the GPU next to the context."))
    else:
        on_gpu = sum(1 for i in p.layer_devices(r.ngl)[:blocks] if i >= 0)
        out.append(msg("{on_gpu} of {blocks} layers run on the GPU and the rest on the CPU (slower): the model does "
                       "not fit on the GPU even with the smallest context.", on_gpu=on_gpu, blocks=blocks))
        if r.n_cpu_moe:
            out.append(msg("The experts of {n} layers stay in RAM.", n=r.n_cpu_moe))
    return out


def _ffn_reason(p: _Planner, r: _Setup) -> Message:
    blocks = p.shape.n_layer
    lays = p.layouts.get((r.slots, r.kv_type, r.ctx), [])
    other = next((lay for lay in lays if lay.name == ffn_offload.LAYERS), None)
    chosen = next((lay for lay in lays if lay.name == ffn_offload.FFN), None)
    if other is None or chosen is None:
        return msg("Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of "
                   "{blocks} layers on the CPU (slower): the model does not fit on the GPU even with the smallest "
                   "context.", n=r.n_cpu_ffn, blocks=blocks)
    return msg("Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of {blocks} "
               "layers on the CPU (slower): the model does not fit on the GPU even with the smallest context. Each "
               "token reads {ffn} from RAM this way, against {layers} with whole layers on the CPU.",
               n=r.n_cpu_ffn, blocks=blocks, ffn=human_bytes(chosen.cpu_read), layers=human_bytes(other.cpu_read))


# ------------------------------------------------------------------ argv
def _args(p: _Planner, r: _Setup, prefs: PlanPrefs, with_drafter: bool) -> tuple[str, ...]:
    c = mem.cells(r.ctx, r.slots, p.shape.n_swa, prefs.swa_full, batch=prefs.batch, ubatch=prefs.ubatch)
    # The workers first: the engine connects to them while it reads its command line.
    args = ["--rpc", ",".join(p.workers)] if p.workers else []
    args += ["-c", str(c.n_ctx), "-np", str(r.slots), "-ctk", r.kv_type, "-ctv", r.kv_type]
    if prefs.swa_full:
        args.append("--swa-full")
    if prefs.flash_attn:
        args += ["-fa", prefs.flash_attn]
    if prefs.batch:
        args += ["-b", str(prefs.batch)]
    if prefs.ubatch:
        args += ["-ub", str(prefs.ubatch)]
    args += _host_cache(p, r, prefs).args
    if prefs.projector is not None:
        args += ["--mmproj", str(prefs.projector)]
    partial = p.gpus and not p.unified and (0 < r.ngl < p.full_ngl or r.n_cpu_moe)
    fixed = prefs.gpu_layers is not None or prefs.n_cpu_moe is not None or prefs.n_cpu_ffn is not None
    if partial and prefs.engine_fit and not fixed:
        # The engine measures exactly and splits layers/experts itself; our margin is its
        # target. -c is set, so it will not touch the context.
        targets = ",".join(str(d.margin // MiB) for d in p.gpus)
        args += ["--fit", Switch.ON, "--fit-target", targets]
    else:
        args += ["-ngl", "all" if r.ngl >= p.full_ngl else str(r.ngl)]
        if r.n_cpu_moe:
            args += ["--n-cpu-moe", str(r.n_cpu_moe)]
        args += ffn_offload.override_args(r.n_cpu_ffn)
        args += ["--fit", Switch.OFF]
    if with_drafter and p.drafter is not None:
        if r.kv_type != "f16":
            args += ["--spec-draft-type-k", r.kv_type, "--spec-draft-type-v", r.kv_type]
        if p.drafter.kind == "model":
            on_gpu = bool(p.local) and r.ngl >= p.full_ngl
            args += ["--spec-draft-ngl", "all" if on_gpu else "0"]
            if p.workers:
                # The draft model runs every token: over the network it would cost more than it
                # saves. It follows --device by default, which includes the workers.
                local = [p.gpus[i].buffer for i in p.local]
                args += ["--spec-draft-device", ",".join(local) if on_gpu and local else "none"]
    return tuple(args)


@dataclass(frozen=True)
class _HostCache:
    checkpoints: int  # per slot
    checkpoint_bytes: int  # one checkpoint of one slot (target and drafter)
    checkpoints_total: int  # every slot's at their most
    prompt_cache: int  # bytes (--cache-ram)
    args: tuple[str, ...]
    reason: Message | None = None


def _host_cache(p: _Planner, r: _Setup, prefs: PlanPrefs) -> _HostCache:
    """Context checkpoints and the prompt cache, from the RAM the plan leaves free.

    Both live in host memory and grow while the server runs (server-context.cpp
    create_checkpoint, server-task.cpp server_prompt_cache): up to --ctx-checkpoints (32)
    checkpoints per slot, each the slot's partial state (`mem.partial_state_bytes`), one
    more for a recurrent model's speculative rollback, and up to --cache-ram (8 GiB) of
    saved prompts. Checkpoints come first (they spare re-reading a long prompt on each turn
    of a chat with a sliding-window or recurrent model); the prompt cache gets the rest."""
    devices, _b = p.evaluate(r)
    pool = devices[0] if p.unified else next(d for d in devices if d.kind == DeviceKind.CPU)
    headroom = max(pool.capacity - pool.working_set - pool.host_cache, 0)
    shape = p.shape
    c = mem.cells(r.ctx, r.slots, shape.n_swa, prefs.swa_full, batch=prefs.batch, ubatch=prefs.ubatch)
    size = 0
    if mem.makes_checkpoints(shape, prefs.swa_full):
        size = mem.partial_state_bytes(shape, c, r.kv_type)
        d = p.drafter
        if d is not None and d.kind == "mtp":
            size += mem.partial_state_bytes(shape, c, r.kv_type, shape.head)
        elif d is not None and d.shape is not None:
            size += mem.partial_state_bytes(d.shape, mem.cells(c.per_stream, c.n_stream, d.shape.n_swa), r.kv_type)
    speculative = p.drafter is not None and any(ly.recurrent for ly in shape.trunk)
    per_slot = size * r.slots
    reason = None
    if not size:
        n = 0
    elif prefs.ctx_checkpoints is not None:
        n = max(prefs.ctx_checkpoints, 0)
    else:
        n = min(mem.CTX_CHECKPOINTS, max(headroom // per_slot - int(speculative), 0))
        if n < mem.CTX_CHECKPOINTS:
            reason = msg("Each conversation keeps {n} context checkpoints instead of 32 (each {size}), so they "
                         "fit in RAM; a long chat may then re-read more of its prompt.",
                         n=n, size=human_bytes(size))
    total = per_slot * (n + int(speculative)) if size else 0
    if prefs.cache_ram_mib is not None:
        cache = headroom if prefs.cache_ram_mib < 0 else prefs.cache_ram_mib * MiB
        args: tuple[str, ...] = ()
    else:
        cache = min(mem.CACHE_RAM_MIB * MiB, max(headroom - total, 0)) // MiB * MiB
        args = ("--cache-ram", str(cache // MiB))
    if reason is not None:
        args += ("--ctx-checkpoints", str(n))
    return _HostCache(n, size, total, cache, args, reason)


# ------------------------------------------------------------------ entry points
def plan(
    model: gguf.ModelInfo,
    spec: SpecDecision,
    machine: Machine,
    prefs: PlanPrefs | None = None,
    draft: gguf.ModelInfo | None = None,
    *,
    shape: mem.Shape | None = None,
    weights: mem.WeightTable | None = None,
    draft_shape: mem.Shape | None = None,
    draft_weights: mem.WeightTable | None = None,
) -> Plan:
    """Plan one launch. `shape`/`weights` (and the draft's) default to the files' headers;
    tests pass them to describe models that are not on disk."""
    prefs = prefs or PlanPrefs()
    shape = shape or mem.read_shape(model)
    wt = weights or mem.read_weight_table(model)
    drafter = _drafter(spec, model, draft, draft_shape, draft_weights)
    gpus, ram, device_notes = _devices(machine, prefs)
    projector = 0
    if prefs.projector is not None:
        try:
            projector = gguf.read_projector(prefs.projector).tensor_bytes
        except (OSError, gguf.GGUFError):
            projector = prefs.projector.stat().st_size if prefs.projector.exists() else 0
    want, floor, ctx_notes = _ctx_target(model, prefs)
    kv_choices = _kv_choices(model, prefs)
    slots = max(prefs.slots or 1, 1)
    notes = device_notes + ctx_notes
    if spec.spec_type == "draft-mtp" and slots > 1:
        notes.append(msg("MTP runs with one slot: more were unreliable in this engine."))
        slots = 1

    # The CPU's extra buffers exist only when the engine sees no GPU at all (mmap on).
    cpu_variant = None
    if not machine.gpus and not machine.workers and not machine.unified_memory and not prefs.no_repack:
        cpu_variant = machine.cpu_variant

    lengths = draft_lengths(spec, prefs)

    def run(d: _Drafter | None) -> tuple[_Planner, _Result]:
        pl = _Planner(model, shape, wt, d, gpus, ram, prefs, spec.spec_type, projector)
        pl.lengths = lengths
        pl.cpu_variant = cpu_variant
        pl.head_variant = None if prefs.no_repack else machine.cpu_variant
        pl.rates = ffn_offload.rates(machine, [g.name for g in gpus], prefs.cpu_rate, model.quant)
        pl.page = residency.page_size(machine.os)
        return pl, _search(pl, kv_choices, want, floor, slots)

    p_with, r_with = run(drafter)
    if drafter is None:
        return _finish(p_with, r_with, prefs, machine, want, floor, notes, None, None)
    p_without, r_without = run(None)
    fallback = _args(p_without, r_without.setup, prefs, False) if r_without.setup else ()
    cost = _drafter_cost(p_with, r_with, r_without, drafter.label)
    if cost and spec.source in AUTO_SOURCES:
        result = _finish(p_without, r_without, prefs, machine, want, floor, notes, None, fallback)
        result.drop_drafter = True
        result.drop_reason = cost[0]
        result.reasons.insert(0, cost[0])
        return result
    if cost:
        notes.append(cost[1])
    return _finish(p_with, r_with, prefs, machine, want, floor, notes, drafter.label, fallback)


def _drafter_cost(p: _Planner, with_d: _Result, without: _Result, label: Message) -> tuple[Message, Message] | None:
    """What keeping the drafter would cost the target, as the sentences the UI shows:
    (the drafter dropped, the drafter kept because the user chose it)."""
    w, wo = with_d.setup, without.setup
    if wo is None:
        return None
    if w is None:
        return (msg("The {drafter} was left out: with it, the model would not fit at all.", drafter=label),
                msg("The {drafter} stays because you chose it, although the model would not fit at all.",
                    drafter=label))
    if w.ctx < wo.ctx:
        ctx0, ctx = human_ctx(wo.ctx), human_ctx(w.ctx)
        return (msg("The {drafter} was left out: with it, the context would shrink from {ctx0} to {ctx}.",
                    drafter=label, ctx0=ctx0, ctx=ctx),
                msg("The {drafter} stays because you chose it, although the context would shrink from {ctx0} "
                    "to {ctx}.", drafter=label, ctx0=ctx0, ctx=ctx))
    if _KV_RANK.get(w.kv_type, 9) > _KV_RANK.get(wo.kv_type, 9):
        return (msg("The {drafter} was left out: with it, the KV cache would drop from {kv0} to {kv}.",
                    drafter=label, kv0=wo.kv_type, kv=w.kv_type),
                msg("The {drafter} stays because you chose it, although the KV cache would drop from {kv0} "
                    "to {kv}.", drafter=label, kv0=wo.kv_type, kv=w.kv_type))
    if w.slots < wo.slots:
        return (msg("The {drafter} was left out: with it, only {slots} slot instead of {slots0} would fit.",
                    drafter=label, slots=w.slots, slots0=wo.slots),
                msg("The {drafter} stays because you chose it, although only {slots} slot instead of "
                    "{slots0} would fit.", drafter=label, slots=w.slots, slots0=wo.slots))
    if p.gpus and (min(w.ngl, p.n_loaded) < min(wo.ngl, p.n_loaded) or w.n_cpu_moe > wo.n_cpu_moe
                   or w.n_cpu_ffn > wo.n_cpu_ffn):
        return (msg("The {drafter} was left out: with it, part of the model would have to leave the GPU.",
                    drafter=label),
                msg("The {drafter} stays because you chose it, although part of the model would have to "
                    "leave the GPU.", drafter=label))
    return None


def _finish(p: _Planner, r: _Result, prefs: PlanPrefs, machine: Machine, want: int, floor: int,
            notes: list[Message], drafter: Message | None, fallback: tuple[str, ...] | None) -> Plan:  # fmt: skip
    setup = r.setup
    fits = setup is not None
    if setup is None:
        # Report the smallest setup, to say by how much it misses.
        kv = _kv_choices(p.model, prefs)[-1]
        setup = _Setup(1, kv, floor, 0 if not p.unified else p.full_ngl)
    devices, b = p.evaluate(setup)
    reasons = list(r.reasons)
    if not fits:
        reasons.append(_refusal(p, devices, setup, machine))
    reasons += notes
    host = _host_cache(p, setup, prefs)
    if fits:
        pool = devices[0] if p.unified else next(d for d in devices if d.kind == DeviceKind.CPU)
        pool.host_cache = host.checkpoints_total + host.prompt_cache
        b.checkpoints, b.prompt_cache = host.checkpoints_total, host.prompt_cache
        if host.reason is not None:
            reasons.append(host.reason)
    args = _args(p, setup, prefs, drafter is not None) if fits else ()
    c = mem.cells(setup.ctx, setup.slots, p.shape.n_swa, prefs.swa_full, batch=prefs.batch,
                  ubatch=prefs.ubatch)
    warnings = list(p.shape.notes)
    if not p.wt.exact:
        warnings.append(msg("The weights are estimated from the file size: the tensor table could not be read."))
    return Plan(
        ctx=setup.ctx, n_ctx=c.n_ctx, kv_type=setup.kv_type, slots=setup.slots,
        gpu_layers=min(setup.ngl, p.full_ngl) if p.gpus else 0, n_layers=p.full_ngl,
        n_cpu_moe=setup.n_cpu_moe, n_cpu_ffn=setup.n_cpu_ffn if p.gpus else 0,
        layouts=p.layouts.get((setup.slots, setup.kv_type, setup.ctx), []) if fits else [],
        drop_drafter=False, fits=fits, bytes=b, per_device=devices,
        reasons=reasons, plan_args=args,
        fallback_plan_args=fallback if fallback is not None else args,
        max_context=slot_cap(p.model, prefs) or max(prefs.ctx or 0, want),
        drafter=drafter, warnings=warnings, estimated_weights=not p.wt.exact,
        ctx_checkpoints=host.checkpoints, cache_ram_mib=host.prompt_cache // MiB if fits else 0,
    )  # fmt: skip


def _refusal(p: _Planner, devices: Sequence[DeviceUse], s: _Setup, machine: Machine) -> Message:
    need = sum(d.working_set for d in devices)
    have = sum(d.capacity for d in devices)
    short = max(need - have, 0)
    where = msg("RAM") if not p.gpus else msg("GPU memory and RAM together")
    if p.unified:
        where = msg("the memory the GPU may use")
    weights = p.wt.total(with_nextn=p.mtp)
    facts = {"ctx": human_ctx(s.ctx), "kv": s.kv_type, "need": human_bytes(need), "have": human_bytes(have),
             "where": where, "short": human_bytes(short)}
    if weights > short:
        return msg("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
                   "{have} of {where} is free. To run it, close other apps to free about {short} or pick a "
                   "smaller quantization of this model (one under about {weights}).",
                   **facts, weights=human_bytes(max(weights - short, 0)))
    return msg("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
               "{have} of {where} is free. To run it, close other apps to free about {short}.", **facts)


def plan_json(
    model: gguf.ModelInfo,
    spec: SpecDecision,
    machine: Machine,
    prefs: PlanPrefs | None = None,
    draft: gguf.ModelInfo | None = None,
) -> dict[str, Any]:
    """`draftwise plan --json`'s "plan" object."""
    return plan(model, spec, machine, prefs, draft).to_json()


def prefs_from_options(ctx: int | None = None, kv: str | None = None, slots: int | None = None,
                       swa_full: bool = False, cpu_only: bool = False) -> PlanPrefs:  # fmt: skip
    """PlanPrefs from CLI options (`--ctx N`, `--kv TYPE`); ValueError for bad values."""
    if ctx is not None and ctx < 256:
        raise ValueError("--ctx must be at least 256 tokens")
    if kv is not None and kv not in mem.KV_TYPES:
        raise ValueError(f"--kv must be one of {', '.join(mem.KV_TYPES)}")
    if slots is not None and slots < 1:
        raise ValueError("slots must be at least 1")
    return PlanPrefs(ctx=ctx, kv_type=kv, slots=slots, swa_full=swa_full, cpu_only=cpu_only)


def fit_state(model: gguf.ModelInfo, machine: Machine) -> str:
    """The library's badge: fits / partial / no, for the model alone at default settings."""
    from draftwise.core.speculation.resolver import NONE  # noqa: PLC0415 - a constant

    spec = SpecDecision(None, None, NONE, False, ())
    try:
        return plan(model, spec, machine).fit_state
    except (OSError, ValueError):
        return NO_FIT


# ------------------------------------------------------------------ planned vs actual
def compare(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Rows of planned and actual bytes per component, for the window after a launch.

    `error` is (planned - actual) / actual; None where the engine reported nothing."""
    a = actual.summary()
    rows = []
    planned = p.bytes.to_json()
    # Compare like with like: the engine reports an embedded MTP head in the model buffer.
    planned["weights"] += p.bytes.embedded_head
    planned["drafter"] -= p.bytes.embedded_head
    for key in ("weights", "kv", "drafter", "compute", "output", "total"):
        pv = planned[key] if key != "total" else p.bytes.total
        av = a.get(key, 0)
        err = (pv - av) / av if av else None
        rows.append({"component": key, "planned": pv, "actual": av,
                     "error": None if err is None else round(err, 4)})  # fmt: skip
    return rows


def compare_devices(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Planned and actual bytes per device (workers included), from the engine's buffer lines:
    a device's own buffers by name (`CUDA0`, `RPC0[host:port]`); RAM is every `CPU*` buffer
    and the GPUs' pinned host buffers (`CUDA_Host`). `error` is (planned - actual) / actual."""
    held = actual.by_buffer_component()
    rows = []
    for d in p.per_device:
        if d.kind == DeviceKind.CPU:
            keys = [b for b in held if b.startswith("CPU") or b.endswith("_Host")]
        else:
            keys = [b for b in held if b == d.buffer]
        got = {c: sum(held[b].get(c, 0) for b in keys) for c in ("weights", "kv", "rs", "compute", "output")}
        planned = {"weights": d.weights, "kv": d.kv, "compute": d.compute, "output": d.output,
                   "drafter": d.drafter, "total": d.total}  # fmt: skip
        real = {"weights": got["weights"], "kv": got["kv"] + got["rs"], "compute": got["compute"],
                "output": got["output"], "total": sum(got.values())}  # fmt: skip
        row: dict[str, Any] = {"device": d.name, "worker": d.worker, "layers": d.layers,
                               "planned": planned, "actual": real}  # fmt: skip
        row["error"] = {k: None if not real.get(k) else round((planned[k] - real[k]) / real[k], 4)
                        for k in ("weights", "kv", "compute", "total")}  # fmt: skip
        rows.append(row)
    return rows


def compare_device_components(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Planned and actual weights and KV per device (the engine's device names; RAM is
    "CPU"), for the GPU tier and bench/gpu_path.py. `error` is (planned - actual) / actual."""
    seen = actual.by_device()
    rows = []
    for d in p.per_device:
        name = d.device or ("CPU" if d.kind == DeviceKind.CPU else d.name)
        got = seen.get(name, {})
        for comp, planned in (("weights", d.weights), ("kv", d.kv)):
            real = got.get(comp, 0)
            if not planned and not real:
                continue
            err = (planned - real) / real if real else None
            rows.append({"device": name, "component": comp, "planned": planned, "actual": real,
                         "error": None if err is None else round(err, 4)})  # fmt: skip
    return rows
