"""What llama-server really allocated, read from its log at `-lv 4`.

The engine prints one line per buffer it allocates (verified on the pinned 11434 CPU build;
formats in docs/engine-facts.md, "Log lines parsed"):

    load_tensors:   CPU_Mapped model buffer size =    11.08 MiB
    llama_context:        CPU  output buffer size =     0.02 MiB
    llama_kv_cache:        CPU KV buffer size =     8.00 MiB
    llama_kv_cache: size =    8.00 MiB (  4096 cells,   4 layers,  4/1 seqs), K (f16): ...
    llama_memory_recurrent:        CPU RS buffer size =     0.53 MiB
    sched_reserve:        CPU compute buffer size =     9.52 MiB
    common_params_fit_impl: projected to use 28 MiB of host memory vs. 24105 MiB of ...

The target's context comes first; a draft context follows the line
`common_speculative_init_result: creating MTP draft context ...` (MTP, same weights) or
`... loading draft model '...'` (its own weights), so every line after it is the drafter's.
The server re-reserves the draft context's compute graph when it attaches its sampler
(after `adding speculative implementation`); a compute buffer only grows, so the largest
value per context and buffer is what is held.

Sizes are printed in MiB with two decimals: each line is exact to +-5 KiB.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

MiB = 1 << 20

TARGET, DRAFT = "target", "draft"
COMPONENTS = ("weights", "kv", "rs", "compute", "output")

# A buffer type: CPU, CUDA0, CUDA_Host, or an RPC worker's `RPC0[192.168.1.20:50052]`.
_BUF = r"\s*(?P<buf>[\w.\-]+(?:\[[^\]\s]+\])?)\s+"
_SIZE = r"=\s*(?P<mib>[\d.]+) MiB"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("weights", re.compile(r"load_tensors:" + _BUF + r"model buffer size\s*" + _SIZE)),
    ("output", re.compile(r"llama_context:" + _BUF + r"output buffer size\s*" + _SIZE)),
    ("kv", re.compile(r"llama_kv_cache\w*:" + _BUF + r"KV buffer size\s*" + _SIZE)),
    ("rs", re.compile(r"llama_memory_recurrent\w*:" + _BUF + r"RS buffer size\s*" + _SIZE)),
    ("compute", re.compile(r"sched_reserve:" + _BUF + r"compute buffer size\s*" + _SIZE)),
]
_KV_SIZE = re.compile(
    r"llama_kv_cache\w*: size =\s*[\d.]+ MiB \(\s*(?P<cells>\d+) cells,\s*(?P<layers>\d+) layers,"
    r"\s*(?P<seqs>\d+)/(?P<streams>\d+) seqs\), K \((?P<k>\w+)\)"
)
# The vision/audio projector (--mmproj, tools/mtmd/clip.cpp): its backend, then its weights
# (the tensors' sum, printed by load_hparams) and its compute buffer (reserve_compute_meta).
_CLIP_BACKEND = re.compile(r"clip_ctx: CLIP using (?P<buf>[\w.\-]+) backend")
_CLIP_WEIGHTS = re.compile(r"load_hparams:\s+model size:\s+(?P<mib>[\d.]+) MiB")
_CLIP_COMPUTE = re.compile(r"reserve_compute_meta:" + _BUF + r"compute buffer size\s*" + _SIZE)
# DeepSeek-V4's compressor states (llama-kv-cache-dsv4.cpp): recurrent-like state per layer.
_DSV4_STATE = re.compile(r"llama_dsv4_comp_state\w*:" + _BUF + r"DSV4 \w+ state buffer size\s*" + _SIZE)
_PROJECTED = re.compile(r"projected to use (?P<mib>\d+) MiB of (?P<what>host|device) memory")
_DRAFT_START = re.compile(r"creating MTP draft context|loading draft model '")
_SPEC_ADDED = re.compile(r"adding speculative implementation")
_FIT_START = re.compile(r"fitting params to device memory")
_FIT_END = re.compile(r"fitting params to free memory took|common_fit_params: (successfully|failed)")
_USING_DEVICE = re.compile(r"using device (?P<dev>\w+)")
_GPU_FAILED = re.compile(
    r"ggml_cuda_init: failed to initialize (?P<what>CUDA|ROCm)[^\n]*|ggml_vulkan: No devices found"
)


@dataclass(frozen=True)
class BufferLine:
    component: str  # weights | kv | rs | compute | output | projector | projector_compute
    buffer: str  # the buffer type: CPU, CPU_Mapped, CUDA0, CUDA_Host, Vulkan0, MTL0, RPC0[host:port], ...
    bytes: int
    context: str  # target | draft


@dataclass(frozen=True)
class KVCache:
    cells: int
    layers: int
    seqs: int
    streams: int
    type_k: str
    context: str


@dataclass
class ActualMemory:
    """The buffers one launch allocated, by context, component and buffer type."""

    lines: list[BufferLine] = field(default_factory=list)
    caches: list[KVCache] = field(default_factory=list)
    projected_host: int | None = None  # the fit step's projection, when it ran
    projected_device: int | None = None
    devices_used: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def _held(self, context: str | None = None) -> list[BufferLine]:
        """Lines that are held at once: every allocation, but only the largest compute
        buffer per (context, buffer) because a re-reserve replaces the previous one."""
        best: dict[tuple[str, str], BufferLine] = {}
        out = []
        for ln in self.lines:
            if context is not None and ln.context != context:
                continue
            if ln.component in ("compute", "projector_compute"):
                key = (ln.context, ln.buffer + "/" + ln.component)
                if key not in best or ln.bytes > best[key].bytes:
                    best[key] = ln
            else:
                out.append(ln)
        return out + list(best.values())

    def component(self, name: str, context: str | None = None) -> int:
        return sum(ln.bytes for ln in self._held(context) if ln.component == name)

    def by_component(self, context: str | None = None) -> dict[str, int]:
        return {c: self.component(c, context) for c in COMPONENTS}

    def by_device(self, context: str | None = TARGET) -> dict[str, dict[str, int]]:
        """Bytes per device and component: `Vulkan0`/`CUDA0` buffers are that device's;
        host buffers (CPU, CPU_Mapped, CPU_REPACK, AMX, `<GPU>_Host`) are the CPU's."""
        out: dict[str, dict[str, int]] = {}
        for ln in self._held(context):
            dev = device_of(ln.buffer)
            comp = "kv" if ln.component == "rs" else ln.component
            d = out.setdefault(dev, {})
            d[comp] = d.get(comp, 0) + ln.bytes
        return out

    def by_buffer(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for ln in self._held():
            out[ln.buffer] = out.get(ln.buffer, 0) + ln.bytes
        return out

    def by_buffer_component(self) -> dict[str, dict[str, int]]:
        """Held bytes per buffer type and component (both contexts)."""
        out: dict[str, dict[str, int]] = {}
        for ln in self._held():
            per = out.setdefault(ln.buffer, {})
            per[ln.component] = per.get(ln.component, 0) + ln.bytes
        return out

    def workers_used(self) -> list[str]:
        """The workers (host:port) the engine put buffers on."""
        out: list[str] = []
        for ln in self.lines:
            m = re.match(r"RPC\d+\[(?P<ep>[^\]]+)\]$", ln.buffer)
            if m and m["ep"] not in out:
                out.append(m["ep"])
        return out

    @property
    def has_draft(self) -> bool:
        return any(ln.context == DRAFT for ln in self.lines)

    @property
    def total(self) -> int:
        return sum(ln.bytes for ln in self._held())

    def summary(self) -> dict[str, int]:
        """The planner's components: the drafter's own lines (its weights, KV, compute,
        output) under "drafter", the target's under their names, the projector's weights
        under "projector" (its compute buffer counts in the total only)."""
        t = self.by_component(TARGET)
        return {
            "weights": t["weights"],
            "kv": t["kv"] + t["rs"],
            "drafter": sum(self.by_component(DRAFT).values()),
            "compute": t["compute"],
            "output": t["output"],
            "projector": self.component("projector"),
            "total": self.total,
        }

    def to_json(self) -> dict[str, object]:
        return {
            "bytes": self.summary(),
            "by_buffer": self.by_buffer(),
            "target": self.by_component(TARGET),
            "draft": self.by_component(DRAFT) if self.has_draft else None,
            "projected": {"host": self.projected_host, "device": self.projected_device},
            "devices_used": list(self.devices_used),
            "warnings": list(self.warnings),
        }


_GPU_BUFFER = re.compile(r"^(?P<dev>(?:CUDA|ROCm|Vulkan|MTL|RPC)\d+)(?:\[.*\])?$")


def device_of(buffer: str) -> str:
    """The device a buffer type lives on: "Vulkan0" for Vulkan0, "CPU" for host memory."""
    m = _GPU_BUFFER.match(buffer)
    return m["dev"] if m else "CPU"


def _mib(text: str) -> int:
    return round(float(text) * MiB)


def parse_lines(lines: Iterable[str]) -> ActualMemory:
    """Read the memory lines out of a log (any iterable of lines, e.g. a file)."""
    mem = ActualMemory()
    context = TARGET
    in_fit = False
    spec_added = False
    clip_buf = "CPU"
    for line in lines:
        if _FIT_START.search(line):
            in_fit = True
            continue
        if in_fit:
            # The fit step measures with dry runs; at -lv 5 their buffer lines show too.
            m = _PROJECTED.search(line)
            if m:
                mib = int(m.group("mib")) * MiB
                if m.group("what") == "host":
                    mem.projected_host = mib
                else:
                    mem.projected_device = mib
            if _FIT_END.search(line):
                in_fit = False
            continue
        if _DRAFT_START.search(line):
            context = DRAFT
            continue
        if _SPEC_ADDED.search(line):
            spec_added = True
            continue
        m = _USING_DEVICE.search(line)
        if m and m.group("dev") not in mem.devices_used:
            mem.devices_used.append(m.group("dev"))
            continue
        m = _GPU_FAILED.search(line)
        if m:
            mem.warnings.append(
                "The GPU could not be used (" + m.group(0).strip() + "); the engine runs on "
                "the CPU, which is much slower. Check the GPU driver."
            )
            continue
        m = _CLIP_BACKEND.search(line)
        if m:
            clip_buf = m["buf"]
            continue
        m = _CLIP_WEIGHTS.search(line)
        if m:
            mem.lines.append(BufferLine("projector", clip_buf, _mib(m["mib"]), TARGET))
            continue
        m = _CLIP_COMPUTE.search(line)
        if m:
            mem.lines.append(BufferLine("projector_compute", m["buf"], _mib(m["mib"]), TARGET))
            continue
        m = _DSV4_STATE.search(line)
        if m:
            mem.lines.append(BufferLine("rs", m["buf"], _mib(m["mib"]), context))
            continue
        m = _KV_SIZE.search(line)
        if m:
            mem.caches.append(KVCache(int(m["cells"]), int(m["layers"]), int(m["seqs"]),
                                      int(m["streams"]), m["k"], context))  # fmt: skip
            continue
        for name, pattern in _PATTERNS:
            m = pattern.search(line)
            if m:
                # A compute re-reserve after the speculative setup is the draft context's
                # (the server attaches its sampler to ctx_dft).
                ctx = DRAFT if (name == "compute" and spec_added and context == DRAFT) else context
                mem.lines.append(BufferLine(name, m.group("buf"), _mib(m.group("mib")), ctx))
                break
    return mem


def parse_log(text: str) -> ActualMemory:
    return parse_lines(text.splitlines())
