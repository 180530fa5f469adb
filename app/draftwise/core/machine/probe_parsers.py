"""What the probes' text says: pure parsers of each source's output into GPUs.

Each is a pure function of a command's or file's text (tests feed them recorded outputs):
the engine's `--list-devices`, `vulkaninfo --summary`, `nvidia-smi`, AMD's sysfs and kfd
topology, `sysctl hw.memsize`, and the CPU variant the engine loaded. They also decide what
the text alone tells about a device: integrated (by its description, or an AMD card's small
VRAM), software (a Vulkan device that runs on the CPU), and how the engine's list and the
vendor tools' lists merge (`merge_gpus`). The probes that run the commands are
engine_devices.py and system_probes.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from draftwise.core.machine.machine_types import (
    _DEVICE_PREFIX,
    CUDA,
    GB,
    METAL,
    ROCM,
    VULKAN,
    Gpu,
    MiB,
)

# Vulkan drivers that run on the CPU, for when no vulkaninfo tells the device type.
_SOFTWARE_NAMES = re.compile(r"\b(llvmpipe|lavapipe|SwiftShader)\b", re.IGNORECASE)
# Words that mark an integrated GPU in a device description.
_INTEGRATED = re.compile(
    r"\b(Radeon\(TM\) Graphics|Radeon Graphics|Vega \d+ Graphics|780M|760M|740M|680M|660M|"
    r"890M|880M|8060S|Intel\(R\) (UHD|Iris|Arc\(TM\) Graphics)|UHD Graphics|Iris|Apple)\b",
    re.IGNORECASE,
)


_LIST_DEVICE = re.compile(
    r"^\s+(?P<dev>[A-Za-z]+)(?P<idx>\d+):\s*(?P<desc>.*?)\s*\((?P<total>\d+) MiB,\s*(?P<free>\d+) MiB free\)\s*$"
)


def parse_list_devices(text: str) -> list[Gpu]:
    """`llama-server --list-devices`: `Available devices:` then `  CUDA0: NVIDIA ... (8187 MiB,
    7890 MiB free)` per device, or `  (none)` on a CPU-only build."""
    gpus = []
    for line in text.splitlines():
        m = _LIST_DEVICE.match(line)
        if not m:
            continue
        prefix = m["dev"]
        backend = _DEVICE_PREFIX.get(prefix)
        if backend is None:
            continue  # BLAS, RPC and other non-GPU devices
        desc = m["desc"]
        gpus.append(Gpu(
            index=int(m["idx"]), backend=backend, name=desc, total_bytes=int(m["total"]) * MiB,
            free_bytes=int(m["free"]) * MiB, device=f"{prefix}{m['idx']}",
            integrated=backend == METAL or bool(_INTEGRATED.search(desc)),
        ))  # fmt: skip
    return gpus


@dataclass(frozen=True)
class VulkanDevice:
    """One physical device from `vulkaninfo --summary` (its index is the one
    GGML_VK_VISIBLE_DEVICES takes)."""

    index: int
    name: str
    device_type: str  # PHYSICAL_DEVICE_TYPE_CPU | ..._DISCRETE_GPU | ..._INTEGRATED_GPU | ...

    @property
    def software(self) -> bool:
        return self.device_type.endswith("_CPU")


_VK_GPU = re.compile(r"^GPU(?P<idx>\d+):\s*$")
_VK_FIELD = re.compile(r"^\s+(?P<key>deviceType|deviceName)\s*=\s*(?P<value>.*?)\s*$")


def parse_vulkaninfo(text: str) -> list[VulkanDevice]:
    """The `Devices:` section of `vulkaninfo --summary`: `GPU0:` then indented
    `deviceType = PHYSICAL_DEVICE_TYPE_CPU`, `deviceName = llvmpipe (...)`."""
    found: dict[int, dict[str, str]] = {}
    current: int | None = None
    for line in text.splitlines():
        m = _VK_GPU.match(line)
        if m:
            current = int(m["idx"])
            found[current] = {}
            continue
        m = _VK_FIELD.match(line)
        if m and current is not None:
            found[current][m["key"]] = m["value"]
    return [VulkanDevice(i, d.get("deviceName", ""), d.get("deviceType", "")) for i, d in sorted(found.items())]


# `load_backend: loaded CPU backend from /path/libggml-cpu-haswell.so` (ggml-backend-reg.cpp),
# printed by a build whose CPU backend is one module per CPU level.
_CPU_VARIANT = re.compile(r"loaded CPU backend from \S*?ggml-cpu-(?P<variant>[\w.]+?)\.(?:so|dll|dylib)\b")


def parse_cpu_variant(text: str) -> str | None:
    """The CPU variant an engine loaded ("haswell", "sapphirerapids"), or None."""
    m = _CPU_VARIANT.search(text)
    return m["variant"] if m else None


def mark_software(gpus: Sequence[Gpu], vulkan: Sequence[VulkanDevice]) -> list[Gpu]:
    """Vulkan GPUs marked as software devices: by vulkaninfo's deviceType (matched on the
    physical index, which is the engine's when every device is visible), else by the
    driver's name."""
    by_index = {d.index: d for d in vulkan}
    out = []
    for g in gpus:
        if g.backend != VULKAN:
            out.append(g)
            continue
        d = by_index.get(g.index)
        software = d.software if d is not None else bool(_SOFTWARE_NAMES.search(g.name))
        out.append(replace(g, software=software, integrated=g.integrated and not software))
    return out


def parse_nvidia_smi(text: str) -> list[Gpu]:
    """`nvidia-smi --query-gpu=index,uuid,name,memory.total,memory.free
    --format=csv,noheader,nounits` (MiB)."""
    gpus = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 5 or not parts[0].isdigit():
            continue
        try:
            total, free = int(float(parts[3])) * MiB, int(float(parts[4])) * MiB
        except ValueError:
            continue  # "[N/A]" on some boards
        gpus.append(Gpu(index=int(parts[0]), backend=CUDA, name=parts[2], uuid=parts[1],
                        total_bytes=total, free_bytes=free, device=f"CUDA{parts[0]}"))  # fmt: skip
    return gpus


def gfx_name(version: int) -> str | None:
    """kfd's `gfx_target_version` (major*10000 + minor*100 + step) as a gfx target name:
    110003 -> gfx1103, 90010 -> gfx90a."""
    if version <= 0:
        return None
    major, minor, step = version // 10000, version // 100 % 100, version % 100
    return f"gfx{major}{minor:x}{step:x}"


def parse_kfd_properties(text: str) -> dict[str, int]:
    """One kfd topology node's `properties` file: `name value` per line."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out


def parse_amd_sysfs(cards: Sequence[Mapping[str, str]], kfd_nodes: Sequence[str]) -> list[Gpu]:
    """AMD GPUs from sysfs: each card's `mem_info_vram_total`/`_used` (bytes) and
    `product_name` when present, and the kfd nodes' gfx targets (CPU nodes have 0).

    A card with little VRAM (<= 2 GiB, the BIOS carve-out) is an APU's integrated GPU.
    """
    targets = []
    for node in kfd_nodes:
        props = parse_kfd_properties(node)
        if props.get("simd_count", 0) > 0 and props.get("gfx_target_version", 0) > 0:
            targets.append((props.get("drm_render_minor", -1), gfx_name(props["gfx_target_version"])))
    gpus = []
    for i, card in enumerate(cards):
        try:
            total = int(card.get("mem_info_vram_total", "0").strip() or 0)
            used = int(card.get("mem_info_vram_used", "0").strip() or 0)
        except ValueError:
            continue
        if total <= 0:
            continue
        target = targets[i][1] if i < len(targets) else None
        name = (card.get("product_name") or "").strip() or f"AMD GPU ({target or 'unknown'})"
        integrated = total <= 2 * GB or bool(_INTEGRATED.search(name))
        gpus.append(Gpu(index=i, backend=ROCM, name=name, total_bytes=total,
                        free_bytes=max(total - used, 0), integrated=integrated,
                        gfx_target=target, device=f"ROCm{i}"))  # fmt: skip
    return gpus


def parse_sysctl_memsize(text: str) -> int:
    """`sysctl -n hw.memsize` (bytes)."""
    try:
        return int(text.strip().split()[-1])
    except (ValueError, IndexError):
        return 0


def merge_gpus(engine: Sequence[Gpu], vendor: Sequence[Gpu]) -> list[Gpu]:
    """The engine's list is what will be used; vendor tools add what it lacks (UUIDs, gfx
    targets). Without an engine list, the vendor tools' GPUs stand."""
    if not engine:
        return list(vendor)
    out = []
    for g in engine:
        match = next((v for v in vendor if v.backend == g.backend and v.index == g.index), None)
        if match is not None:
            g = replace(g, uuid=g.uuid or match.uuid, gfx_target=g.gfx_target or match.gfx_target,
                        integrated=g.integrated or match.integrated)  # fmt: skip
        out.append(g)
    return out
