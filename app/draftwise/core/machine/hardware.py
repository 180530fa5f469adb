"""The machine as data: RAM and GPUs, from probes that never raise.

Each probe has a timeout and turns a failure into a sentence in `Machine.notes` ("no
NVIDIA driver found"), because a missing driver is a fact about the machine, not an error.
Parsers are pure functions of the probe's text (tests feed them recorded outputs); the
probes only run commands and read files. `inventory()` caches its answer for a few seconds:
the window re-plans on every click.

Sources, best first for each GPU: the chosen engine's `--list-devices` (what the engine will
really use, with its own free-memory numbers), `nvidia-smi`, AMD's sysfs (VRAM size and
the kfd topology's gfx target) or `rocm-smi`/`amd-smi`, and on macOS `sysctl hw.memsize`
(unified memory).

This module decides how the sources combine into one `Machine` (`probe`, `inventory`,
`cpu_only`). The parts live beside it:

- machine_types.py: what a machine is (`Machine`, `Gpu`, `DeviceLimit`, the sizes and
  backend names), read back from JSON (`load_machine`);
- device_choice.py: which GPUs one launch uses and shows the engine (`select`,
  `visible_for`, `limits_from`, `DeviceChoiceError`);
- engine_devices.py: what the engine build says about its devices (`probe_engine_devices`);
- system_probes.py: what the OS and the vendors' tools say (RAM, `nvidia-smi`, AMD sysfs,
  `sysctl`, `vulkaninfo`);
- probe_parsers.py: the pure parsers of those outputs, and `merge_gpus`.

`Machine`, `Gpu`, `DeviceLimit`, the sizes (`MiB`, `GB`) and the backend names are used in
very many places and stay importable from here (re-exported, `__all__`); everything else is
imported from the module that holds it.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from draftwise.core.machine.engine_devices import NO_ENGINE_GPU, probe_engine_devices
from draftwise.core.machine.machine_types import (
    BACKENDS,
    CPU,
    CUDA,
    GB,
    METAL,
    ROCM,
    RPC,
    VULKAN,
    DeviceLimit,
    Gpu,
    Machine,
    MiB,
)
from draftwise.core.machine.probe_parsers import merge_gpus
from draftwise.core.machine.system_probes import probe_amd, probe_apple, probe_nvidia, probe_ram
from draftwise.core.messages import Text, msg

__all__ = [
    "BACKENDS", "CACHE_SECONDS", "CPU", "CUDA", "GB", "METAL", "ROCM", "RPC", "VULKAN",
    "DeviceLimit", "Gpu", "Machine", "MiB", "cpu_only", "inventory", "probe",
]  # fmt: skip

CACHE_SECONDS = 5.0


def probe(engine_binary: Path | None = None) -> Machine:
    """Ask everything once (no cache): RAM, the engine's devices, vendor tools."""
    notes: list[Text] = []
    ram_total, ram_available, note = probe_ram()
    if note:
        notes.append(note)
    system = platform.system()
    engine_gpus: list[Gpu] = []
    engine_sees_none = False
    cpu_variant = None
    if engine_binary is not None:
        found = probe_engine_devices(engine_binary)
        engine_gpus, note, cpu_variant = found.gpus, found.note, found.cpu_variant
        if note:
            notes.append(note)
        engine_sees_none = note == NO_ENGINE_GPU
        software = [g for g in engine_gpus if g.software]
        if software and len(software) == len(engine_gpus):
            notes.append(msg("Only a software Vulkan device was found ({name}); it runs on the CPU "
                             "and is slower than the CPU engine, so it is used only when you choose it.",
                             name=software[0].name))
    vendor: list[Gpu] = []
    unified = False
    if system == "Darwin":
        memsize, note = probe_apple()
        if note:
            notes.append(note)
        ram_total = memsize or ram_total
        unified = platform.machine() == "arm64"
        if unified and not engine_gpus:
            # Metal may use about 3/4 of RAM (recommendedMaxWorkingSetSize) on Apple silicon.
            vendor.append(Gpu(0, METAL, "Apple GPU", total_bytes=ram_total * 3 // 4,
                              free_bytes=ram_available * 3 // 4, integrated=True, device="MTL0"))  # fmt: skip
    else:
        nv, note = probe_nvidia()
        if note:
            notes.append(note)
        vendor += nv
        if system == "Linux":
            amd, note = probe_amd()
            if note:
                notes.append(note)
            vendor += amd
    gpus = merge_gpus(engine_gpus, vendor)
    if engine_sees_none and gpus:
        # The engine answered and lists none: it cannot use them (a CPU build, or a build
        # for another GPU vendor). Plan for what it will really run on.
        notes.append("this engine build cannot use " + ", ".join(g.name for g in gpus)
                     + "; install a GPU build of the engine to use it")  # fmt: skip
        gpus = []
    hardware_gpus = [g for g in gpus if not g.software]
    if hardware_gpus and all(g.integrated for g in hardware_gpus) and system != "Darwin":
        notes.append("only an integrated GPU was found; it shares the system RAM")
    return Machine(ram_total, ram_available, gpus, system, unified, notes, cpu_variant=cpu_variant)


_cache: dict[str | None, tuple[float, Machine]] = {}


def inventory(engine_binary: Path | None = None, max_age: float = CACHE_SECONDS) -> Machine:
    """The machine, probed at most once every `max_age` seconds per engine."""
    key = str(engine_binary) if engine_binary else None
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and now - hit[0] < max_age:
        return hit[1]
    machine = probe(engine_binary)
    _cache[key] = (now, machine)
    return machine


def cpu_only(ram_total: int, ram_available: int | None = None) -> Machine:
    """A machine without GPUs (tests and the CPU fallback)."""
    return Machine(ram_total, ram_total if ram_available is None else ram_available, [], platform.system())
