"""What the chosen engine build says about the devices it can use: its own
`--list-devices`, started the way a launch starts it, with its own free-memory numbers
(the best source for each GPU: it is what the engine will really use), and the CPU backend
variant it loads.

A Vulkan build is asked twice, the second time with every physical device visible, so that
software devices (and an integrated GPU beside a discrete one) are still there for a person
to choose; vulkaninfo (system_probes.py) tells which of them run on the CPU.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.engines import provision
from draftwise.core.machine.machine_types import VULKAN, Gpu
from draftwise.core.machine.probe_parsers import (
    VulkanDevice,
    mark_software,
    parse_cpu_variant,
    parse_list_devices,
)
from draftwise.core.machine.system_probes import probe_vulkaninfo

# The engine loads every backend (Vulkan compiles nothing yet, but enumerates devices) before
# it lists them: seconds on a busy 2-core machine.
ENGINE_PROBE_TIMEOUT = 20.0
VARIANT_RETRIES = 5  # asks again when the CPU module's line was lost (below)
NO_ENGINE_GPU = "the engine sees no GPU (a CPU build, or no usable GPU driver)"

VK_VISIBLE = "GGML_VK_VISIBLE_DEVICES"
_VISIBLE_VARS = (VK_VISIBLE, "CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")


@dataclass(frozen=True)
class EngineDevices:
    """What one engine build reports about the devices it can use."""

    gpus: list[Gpu]
    note: str | None = None
    cpu_variant: str | None = None
    vulkan_build: bool = False


def _list_devices(binary: Path, timeout: float, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    try:
        # At -lv 4 the engine also says which CPU variant it loaded.
        out = provision.ask_engine(binary, "-lv", "4", "--list-devices", timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"the engine did not list its devices within {timeout:.0f} s"
    except OSError as exc:
        return None, f"the engine could not be asked for its devices ({exc.strerror or exc})"
    return out.stdout + out.stderr, None


def vulkan_build(binary: Path) -> bool:
    """Whether the engine beside `binary` carries the Vulkan backend (module or library)."""
    folder = binary.parent
    return folder.is_dir() and any("ggml-vulkan" in p.name for p in folder.iterdir())


def probe_engine_devices(binary: Path, timeout: float = ENGINE_PROBE_TIMEOUT,
                         vulkan: Sequence[VulkanDevice] | None = None) -> EngineDevices:  # fmt: skip
    """The engine's own `--list-devices`, started the way a launch starts it (no inherited
    visible-devices variable). A Vulkan build is asked a second time with every physical
    device visible: started plainly it hides software devices (and an integrated GPU
    beside a discrete one), which a person may still choose."""
    plain = {v: "" for v in _VISIBLE_VARS}  # an inherited filter would hide devices from us
    text, note = _list_devices(binary, timeout, plain)
    if text is None:
        return EngineDevices([], note)
    variant = parse_cpu_variant(text)
    modules = binary.parent.is_dir() and any(p.name.startswith(("libggml-cpu-", "ggml-cpu-"))
                                             for p in binary.parent.iterdir())  # fmt: skip
    for _ in range(VARIANT_RETRIES if modules and variant is None else 0):
        # The engine logs from a worker thread and --list-devices exits at once: the load
        # lines are sometimes lost, more often on a busy machine (all three tries once, in a
        # test run with a busy loop on both cores). Asking again costs 0.05-0.1 s.
        again, _note = _list_devices(binary, timeout, plain)
        variant = parse_cpu_variant(again or "")
        if variant is not None:
            break
    if "Available devices" not in text:
        return EngineDevices([], "the engine did not list its devices", variant)
    gpus = parse_list_devices(text)
    is_vulkan = vulkan_build(binary)
    if is_vulkan:
        if vulkan is None:
            vulkan = probe_vulkaninfo()
        count = len(vulkan) or 1  # without vulkaninfo: at least the first device
        every = ",".join(str(i) for i in range(count))
        all_text, _ = _list_devices(binary, timeout, {**plain, VK_VISIBLE: every})
        every_gpu = parse_list_devices(all_text or "")
        vk = [g for g in every_gpu if g.backend == VULKAN]
        if vk:
            gpus = [g for g in gpus if g.backend != VULKAN] + mark_software(vk, vulkan)
    if not gpus:
        return EngineDevices([], NO_ENGINE_GPU, variant, is_vulkan)
    return EngineDevices(gpus, None, variant, is_vulkan)
