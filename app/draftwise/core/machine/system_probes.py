"""What the operating system and the vendors' tools say: RAM (psutil), NVIDIA GPUs
(`nvidia-smi`), AMD GPUs (sysfs and the kfd topology), Apple's memory (`sysctl hw.memsize`)
and the physical Vulkan devices (`vulkaninfo --summary`).

Each probe has a timeout and turns a failure into a sentence ("no NVIDIA driver found")
instead of raising, because a missing driver is a fact about the machine, not an error. The
probes only run commands and read files; probe_parsers.py reads their text.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from draftwise.core.machine.machine_types import Gpu
from draftwise.core.machine.probe_parsers import (
    VulkanDevice,
    parse_amd_sysfs,
    parse_nvidia_smi,
    parse_sysctl_memsize,
    parse_vulkaninfo,
)

PROBE_TIMEOUT = 5.0

Runner = Callable[[Sequence[str], float], str]


def _run(argv: Sequence[str], timeout: float) -> str:
    """stdout+stderr of a command; OSError/TimeoutExpired/CalledProcessError propagate."""
    out = subprocess.run(
        list(argv), capture_output=True, text=True, errors="replace", timeout=timeout, check=True,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    return out.stdout + out.stderr


def probe_vulkaninfo(run: Runner | None = None, timeout: float = PROBE_TIMEOUT) -> list[VulkanDevice]:
    """Physical Vulkan devices from `vulkaninfo --summary`; [] when it is missing or fails."""
    if run is None:
        if shutil.which("vulkaninfo") is None:
            return []
        run = _run
    try:
        return parse_vulkaninfo(run(["vulkaninfo", "--summary"], timeout))
    except (OSError, subprocess.SubprocessError):
        return []


def probe_nvidia(run: Runner = _run, timeout: float = PROBE_TIMEOUT) -> tuple[list[Gpu], str | None]:
    if shutil.which("nvidia-smi") is None and run is _run:
        return [], "no NVIDIA driver found"
    try:
        text = run(["nvidia-smi", "--query-gpu=index,uuid,name,memory.total,memory.free",
                    "--format=csv,noheader,nounits"], timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        return [], f"nvidia-smi did not answer within {timeout:.0f} s"
    except (OSError, subprocess.CalledProcessError) as exc:
        return [], f"nvidia-smi failed ({_short(exc)}): the NVIDIA driver may not be loaded"
    gpus = parse_nvidia_smi(text)
    return gpus, None if gpus else "nvidia-smi lists no GPU"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def probe_amd(root: Path = Path("/")) -> tuple[list[Gpu], str | None]:
    drm = root / "sys/class/drm"
    if not drm.is_dir():
        return [], "no AMD GPU found (no /sys/class/drm)"
    cards = []
    for card in sorted(drm.glob("card[0-9]*")):
        if "-" in card.name:
            continue  # connectors: card0-DP-1
        dev = card / "device"
        if _read(dev / "vendor").strip() != "0x1002":
            continue
        cards.append({
            "mem_info_vram_total": _read(dev / "mem_info_vram_total"),
            "mem_info_vram_used": _read(dev / "mem_info_vram_used"),
            "product_name": _read(dev / "product_name"),
        })  # fmt: skip
    nodes_dir = root / "sys/class/kfd/kfd/topology/nodes"
    nodes = [_read(n / "properties") for n in sorted(nodes_dir.glob("*"), key=_node_key)] if nodes_dir.is_dir() else []
    gpus = parse_amd_sysfs(cards, nodes)
    if not gpus:
        return [], "no AMD GPU found"
    if not nodes:
        return gpus, "the AMD kernel driver's compute interface (kfd) is missing: ROCm cannot run"
    return gpus, None


def _node_key(p: Path) -> int:
    return int(p.name) if p.name.isdigit() else 1 << 30


def probe_ram() -> tuple[int, int, str | None]:
    try:
        import psutil

        vm = psutil.virtual_memory()
        return int(vm.total), int(vm.available), None
    except (ImportError, OSError) as exc:
        return 0, 0, f"RAM could not be measured ({_short(exc)})"


def probe_apple(run: Runner = _run, timeout: float = PROBE_TIMEOUT) -> tuple[int, str | None]:
    try:
        return parse_sysctl_memsize(run(["sysctl", "-n", "hw.memsize"], timeout)), None
    except (OSError, subprocess.SubprocessError) as exc:
        return 0, f"sysctl hw.memsize failed ({_short(exc)})"


def _short(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
