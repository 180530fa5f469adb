"""Where one setup's buffers go: the devices the plan uses (discrete GPUs, RPC workers, the
host RAM, a unified-memory pool; their capacities after the margins), and `_Planner`, which
places blocks, experts, the head, KV, compute, output, the drafter and the projector on
them the way llama.cpp's loader does (`evaluate`: bytes per device for one `_Setup`), and
says whether that fits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import DeviceKind, Switch
from draftwise.core.machine.hardware import CUDA, METAL, ROCM, VULKAN, Gpu, Machine
from draftwise.core.messages import Message, msg
from draftwise.core.planning import (
    compute_buffer,
    context_bytes,
    cpu_buffers,
    ffn_offload,
    gemma4_assistant_graph,
    kv_cache,
    model_shape,
    mtp_head,
    residency,
    vulkan_compute,
    weight_table,
)
from draftwise.core.planning.plan_types import (
    GPU_MARGIN,
    RAM_MARGIN,
    DeviceUse,
    PlanBytes,
    PlanPrefs,
    human_bytes,
)

# The share of RAM Metal lets the GPU use on Apple silicon (recommendedMaxWorkingSetSize).
METAL_SHARE = 0.75


# ------------------------------------------------------------------ inputs
@dataclass(frozen=True)
class _Drafter:
    kind: str  # "mtp" | "model"
    label: Message  # words for the user
    shape: model_shape.Shape | None = None  # the draft model's (kind "model")
    weights: weight_table.WeightTable | None = None
    # The drafter attends over the model's own KV cache and allocates none (Gemma 4's MTP
    # assistant: `is_mem_shared`, its layers sharing the target's last two).
    shares_kv: bool = False
    # Gemma 4's MTP assistant's graph: its context's compute is replayed (gemma4_assistant_graph).
    assistant: gemma4_assistant_graph.AssistantDims | None = None


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
    # The backend runs a host tensor's operation itself for a large batch (compute_buffer.OffloadCopies).
    offloads_ops: bool = False
    vulkan: bool = False  # ggml-vulkan: its compute buffer when it runs the whole graph (vulkan_compute)


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
                            offloads_ops=g.backend in OP_OFFLOAD_BACKENDS, vulkan=g.backend == VULKAN))
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



# ------------------------------------------------------------------ placement
class _Planner:
    def __init__(self, model: gguf.ModelInfo, shape: model_shape.Shape, wt: weight_table.WeightTable,
                 drafter: _Drafter | None, gpus: list[_Device], ram: _Device, prefs: PlanPrefs,
                 spec_type: str | None, projector: int) -> None:  # fmt: skip
        self.model, self.shape, self.wt = model, shape, wt
        self.drafter, self.gpus, self.ram, self.prefs = drafter, gpus, ram, prefs
        self.spec_type = spec_type if drafter is not None or (spec_type or "").startswith("ngram") else None
        self.projector = projector
        self.lengths = context_bytes.DraftLength()
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
        # The planner turned the extra buffers off (`-nr`) so the model fits: its argv says so.
        self.no_repack_arg = False
        # Per block, the FFN weights `-ot` can move to the CPU (a dense model with a tensor
        # table on discrete GPUs of this machine); None: no FFN layout to compare.
        self.ffn = (ffn_offload.ffn_bytes(wt) if gpus and not self.unified and not self.workers else None)
        self.rates = ffn_offload.Rates(ffn_offload.DEFAULT_CPU_RATE, tuple(ffn_offload.DEFAULT_CPU_RATE for _ in gpus))
        self.page = residency.PAGE
        # The layouts compared per (slots, KV type, context), for Plan.layouts.
        self.layouts: dict[tuple[int, str, int], list[ffn_offload.Layout]] = {}
        # cpu_weights per placement: the search evaluates the same placement at several
        # contexts and KV types, and each pass walks the whole tensor table.
        self._cpu_weights: dict[tuple[tuple[int, ...], int, bool, int, str | None], cpu_buffers.CpuWeights | None] = {}

    def _cpu_weights_of(self, where: list[int], n_cpu_moe: int, head_on_cpu: bool,
                        n_cpu_ffn: int = 0) -> cpu_buffers.CpuWeights | None:
        """cpu_buffers.cpu_weights for this placement, computed once per placement."""
        key = (tuple(where), n_cpu_moe, head_on_cpu, n_cpu_ffn, self.cpu_variant)
        if key not in self._cpu_weights:
            # Across plans too, for the same table (cpu_buffers.cpu_weights_for): the placement and
            # what `_on_cpu` reads besides it (the block count, whether the MTP blocks load).
            self._cpu_weights[key] = cpu_buffers.cpu_weights_for(self.wt, (*key, self.n_all, self.mtp), lambda: cpu_buffers.cpu_weights(
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
        c = kv_cache.cells(s.ctx, s.slots, shape.n_swa, self.prefs.swa_full,
                    batch=self.prefs.batch, ubatch=self.prefs.ubatch)
        tctx = context_bytes.target_context(shape, c, s.kv_type, spec_type=self.spec_type, lengths=self.lengths,
                                            flash_attn_off=self.prefs.flash_attn == Switch.OFF)
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
        moved = cpu_buffers.tied_head_extra(wt, head_variant) if wt.tied else None
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
        # keeps a host buffer (`<GPU>_Host compute buffer`, compute_buffer.host_compute): the scheduler
        # places the graph's inputs and the embedding lookup on the CPU backend.
        # With blocks or experts in RAM, a GPU whose backend offloads ops runs their prompt
        # batch (copying the weights in): the host keeps only the inputs' buffer.
        used = {id(dev(i)) for i in where[: self.n_loaded]} | {id(head_dev)}
        if s.n_cpu_ffn:
            used.add(id(ram))  # the CPU holds the moved FFNs' weights
        on_cpu = self._on_cpu(where, s.n_cpu_moe, head_dev is ram, s.n_cpu_ffn)
        offload = self._op_offload_target(where, s, c, gpu_uses)
        # One Vulkan GPU running every block holds its own split of the graph (vulkan_compute).
        whole = id(ram) not in used and sum(id(g) in used for g in gpu_uses) == 1
        vulkan = {id(u) for u, g in zip(gpu_uses, self.gpus, strict=True) if g.vulkan}
        for d in [*gpu_uses, ram]:
            if d is offload:
                d.compute += compute_buffer.offloaded_compute(shape, c, tctx.compute, self._offload_copies(where, tctx, on_cpu))
            elif whole and id(d) in used and id(d) in vulkan:
                outs = tctx.output // (4 * shape.n_vocab) if shape.n_vocab else 1
                d.compute += vulkan_compute.vulkan_compute(shape, c, tctx.compute, max(outs, 1))
            elif id(d) in used and not (d is ram and offload is not None):
                d.compute += tctx.compute
            elif d is ram:
                d.compute += compute_buffer.host_compute(shape, c)
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

    def _op_offload_target(self, where: list[int], s: _Setup, c: kv_cache.Cells,
                           gpu_uses: list[DeviceUse]) -> DeviceUse | None:  # fmt: skip
        """The GPU that runs the prompt batch of the blocks (or experts) kept in RAM: the
        first of this machine's GPUs whose backend offloads ops (ggml_backend_sched asks the
        backends in order), when something stays in RAM and the batch is large enough."""
        if self.unified or not self.prefs.op_offload or c.ubatch < compute_buffer.OP_OFFLOAD_MIN_BATCH:
            return None
        if not (any(d < 0 for d in where[: self.n_loaded]) or s.n_cpu_moe or s.n_cpu_ffn) or s.ngl <= 0:
            return None
        first = next((i for i in self.local if self.gpus[i].offloads_ops), None)
        return gpu_uses[first] if first is not None else None

    def _offload_copies(self, where: list[int], tctx: context_bytes.ContextBytes, on_cpu) -> compute_buffer.OffloadCopies:
        """The largest copies the offloading GPU makes of what stays in RAM (compute_buffer.OffloadCopies)."""
        ffn = attn = 0
        for _fi, t in self.wt.tensors:
            if not t.name.startswith("blk.") or not on_cpu(t) or not cpu_buffers.matmul_weight(t):
                continue
            il = t.name.split(".", 2)[1]
            if il.isdigit() and int(il) >= self.n_loaded:
                continue  # an MTP block that is not loaded
            if compute_buffer.ffn_input_weight(t.name):
                ffn = max(ffn, t.nbytes)
            elif ".attn_" in t.name:
                attn = max(attn, t.nbytes)
        # A table estimated from the file size has no tensors: the weight copies stay unplanned
        # there (the engine's --fit, which the plan leaves a partial split to, measures them).
        kv = max((tctx.kv_layers[il] for il in range(self.shape.n_layer) if where[il] < 0), default=0)
        return compute_buffer.OffloadCopies(ffn, attn, kv)

    def _drafter_bytes(self, c: kv_cache.Cells, kv_type: str) -> tuple[int, int]:
        """(on the drafter's device, in RAM): weights of a draft model, its KV, compute;
        its output buffer is host memory."""
        d = self.drafter
        assert d is not None
        if d.kind == "mtp":
            ctx = mtp_head.mtp_context(self.shape, c, kv_type)
            return ctx.kv + ctx.compute, ctx.output
        assert d.shape is not None and d.weights is not None
        if d.shape.n_nextn and self.spec_type == "draft-mtp":
            # An MTP-only sidecar: an MTP context over its nextn blocks.
            ctx = mtp_head.mtp_context(d.shape, c, kv_type)
            if d.shares_kv:
                ctx = replace(ctx, kv_layers=[0] * len(ctx.kv_layers))
            if d.assistant is not None:  # its own graph, replayed
                ctx = replace(ctx, compute=gemma4_assistant_graph.compute_bytes(
                    d.assistant, c.ubatch, c.per_stream, c.swa_per_stream, c.n_seq, (kv_type, kv_type)))
        else:
            ctx = context_bytes.draft_context(d.shape, c, kv_type, flash_attn_off=self.prefs.flash_attn == Switch.OFF)
        return d.weights.total() + self._drafter_relaid(d.weights) + ctx.kv + ctx.rs + ctx.compute, ctx.output

    def _drafter_relaid(self, wt: weight_table.WeightTable) -> int:
        """The CPU's re-laid copies of a draft model's weights (AMX, CPU_REPACK): its loader
        offers its matrices, and its duplicated tied head, to the CPU's extra buffers as the
        model's does (the Gemma 4 assistant on an AMX host: 16.0 MiB beside the mapping)."""
        if self.cpu_variant is None:
            return 0
        # Kept per table and variant (cpu_weights_for), as the model's are: the search
        # evaluates the drafter at every setup it tries, and each pass walks its table.
        variant = self.cpu_variant
        cw = cpu_buffers.cpu_weights_for(wt, ("drafter, every tensor", variant),
                                         lambda: cpu_buffers.cpu_weights(wt, variant))
        head = cpu_buffers.tied_head_extra(wt, self.cpu_variant) if wt.tied else None
        return (sum(cw.extra.values()) if cw is not None else 0) + (head[1] if head else 0)

    def fits(self, s: _Setup) -> bool:
        devices, _ = self.evaluate(s)
        return all(d.fits for d in devices)

    def gpus_fit(self, s: _Setup) -> bool:
        devices, _ = self.evaluate(s)
        return all(d.fits for d in devices if d.kind != DeviceKind.CPU)
