"""Is the GPU used? Decided from what the engine did, not from what we asked for.

The plan expects layers on some devices (`Vulkan0`, `CUDA0`); the engine says, at `-lv 4`,
which devices it opened (`llama_model_load_from_file_impl: using device Vulkan0 (llvmpipe
(LLVM 15.0.6, 256 bits)) (unknown id) - 2048 MiB free`), how many layers it offloaded
(`load_tensors: offloaded 3/3 layers to GPU`) and where each buffer went
(`load_tensors: Vulkan0 model buffer size = 65.16 MiB`), or why it found no GPU
(`ggml_vulkan: No devices found.`, `ggml_cuda_init: failed to initialize CUDA: ...`).
`check()` compares the two and returns one verdict sentence. Pure: lines in, verdict out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from draftwise.core.kinds import Backend
from draftwise.core.messages import Message, msg

# Lines the verdict reads (a cheap filter for the log reader).
MARKERS = ("using device", "offloaded", "model buffer size", "No devices found", "failed to initialize",
           "no CUDA-capable device", "no ROCm-capable device", "Invalid device index")

_USING = re.compile(r"using device (?P<dev>\w+) \((?P<rest>.*)\) - \d+ MiB free")
_OFFLOADED = re.compile(r"offloaded (?P<n>\d+)/(?P<m>\d+) layers to GPU")
_MODEL_BUF = re.compile(r"load_tensors:\s*(?P<buf>[\w.\-]+) model buffer size\s*=\s*(?P<mib>[\d.]+) MiB")
_FAILURES = ("ggml_vulkan: No devices found", "failed to initialize CUDA", "failed to initialize ROCm",
             "no CUDA-capable device", "no ROCm-capable device", "Invalid device index")
_BACKEND_OF = {"Vulkan": Backend.VULKAN, "CUDA": Backend.CUDA, "ROCm": Backend.ROCM, "MTL": Backend.METAL,
               "HIP": Backend.ROCM}
_BACKEND_WORD = {Backend.VULKAN: "Vulkan", Backend.CUDA: "CUDA", Backend.ROCM: "ROCm", Backend.METAL: "Metal"}

USED, NOT_USED, CPU_ONLY = "used", "not-used", "cpu"


@dataclass(frozen=True)
class Seen:
    """What the engine's log says about devices."""

    devices: dict[str, str]  # device -> description, in the order opened
    offloaded: tuple[int, int] | None  # (n, m) layers
    model_buffers: dict[str, int]  # buffer -> bytes
    failure: str | None  # the line that says why no GPU was found


def read(lines: Iterable[str]) -> Seen:
    devices: dict[str, str] = {}
    offloaded = None
    buffers: dict[str, int] = {}
    failure = None
    for line in lines:
        m = _USING.search(line)
        if m:
            # "DESCRIPTION) (ID": the description may hold parentheses itself.
            devices.setdefault(m["dev"], m["rest"].rsplit(") (", 1)[0])
            continue
        m = _OFFLOADED.search(line)
        if m:
            offloaded = (int(m["n"]), int(m["m"]))
            continue
        m = _MODEL_BUF.search(line)
        if m:
            buffers[m["buf"]] = buffers.get(m["buf"], 0) + round(float(m["mib"]) * (1 << 20))
            continue
        if failure is None:
            hit = next((f for f in _FAILURES if f in line), None)
            if hit is not None:
                failure = line[line.index(hit):].strip()
    return Seen(devices, offloaded, buffers, failure)


@dataclass(frozen=True)
class GpuVerdict:
    state: str  # used | not-used | cpu
    message: Message
    seen: Seen

    @property
    def used(self) -> bool:
        return self.state == USED

    def __str__(self) -> str:
        return str(self.message)


def _backend_of(device: str) -> str | None:
    prefix = re.match(r"[A-Za-z]+", device)
    return _BACKEND_OF.get(prefix.group(0)) if prefix else None


def check(build_backend: str, expected: Sequence[str], lines: Iterable[str]) -> GpuVerdict | None:
    """The verdict for one launch that became ready.

    `build_backend`: the engine build's GPU backend (cpu | vulkan | cuda | rocm | metal).
    `expected`: engine device names the plan placed layers on (or the user asked for).
    None when there is nothing to say: a CPU build asked for no GPU.
    """
    seen = read(lines)
    n, m = seen.offloaded or (0, 0)
    on_gpu = [d for d in seen.devices if any(b.startswith(d) for b in seen.model_buffers)] or list(seen.devices)
    if expected:
        wanted = _backend_of(expected[0]) or build_backend
        word = _BACKEND_WORD.get(wanted, wanted)
        if build_backend != wanted and not seen.devices:
            return GpuVerdict(NOT_USED, msg(
                "GPU not used: this engine build has no {backend} backend, so {device} is out of its reach; "
                "the model runs on the CPU. Install the {backend} engine (`draftwise engine install --backend "
                "{backend_id}`) and choose it with --engine or in the engine list.",
                backend=word, device=", ".join(expected), backend_id=wanted), seen)
        missing = [d for d in expected if d not in seen.devices]
        if seen.devices and n > 0 and not missing:
            names = ", ".join(f"{d} ({_short(seen.devices[d])})" for d in expected)
            return GpuVerdict(USED, msg("{n} of {m} layers on {devices}.", n=n, m=m, devices=names), seen)
        if seen.failure:
            return GpuVerdict(NOT_USED, msg(
                "GPU not used: the engine said \"{line}\", so the model runs on the CPU (much slower). "
                "Check the GPU driver, or choose the device explicitly.", line=seen.failure), seen)
        if seen.devices and n == 0:
            return GpuVerdict(NOT_USED, msg(
                "GPU not used: the engine opened {devices} but offloaded 0 of {m} layers to it.",
                devices=", ".join(seen.devices), m=m), seen)
        return GpuVerdict(NOT_USED, msg(
            "GPU not used: the engine did not open {devices}; the model runs on the CPU.",
            devices=", ".join(missing or expected)), seen)
    if build_backend in (Backend.CPU, Backend.UNKNOWN, ""):
        return None
    if seen.devices and n > 0:
        names = ", ".join(f"{d} ({_short(desc)})" for d, desc in seen.devices.items() if d in on_gpu)
        return GpuVerdict(USED, msg("{n} of {m} layers on {devices}.", n=n, m=m, devices=names), seen)
    word = _BACKEND_WORD.get(build_backend, build_backend)
    # The engine's own line, when it gave one, goes into the sentence.
    if build_backend == Backend.VULKAN:
        if seen.failure:
            return GpuVerdict(CPU_ONLY, msg(
                "This Vulkan engine runs on the CPU (the engine said \"{line}\"): it found no GPU it uses by "
                "itself. A software device (such as llvmpipe) is used only when you choose it (--device).",
                line=seen.failure), seen)
        return GpuVerdict(CPU_ONLY, msg(
            "This Vulkan engine runs on the CPU: it found no GPU it uses by itself. A software device "
            "(such as llvmpipe) is used only when you choose it (--device)."), seen)
    if seen.failure:
        return GpuVerdict(CPU_ONLY, msg(
            "This {backend} engine runs on the CPU (the engine said \"{line}\"), which is much slower. "
            "Check the GPU driver, or choose which GPUs to use.", backend=word, line=seen.failure), seen)
    return GpuVerdict(CPU_ONLY, msg(
        "This {backend} engine runs on the CPU, which is much slower. Check the GPU driver, or choose "
        "which GPUs to use.", backend=word), seen)


def _short(desc: str) -> str:
    """`llvmpipe (LLVM 15.0.6, 256 bits)` -> `llvmpipe`: the name people know."""
    return desc.split(" (", 1)[0].strip() or desc
