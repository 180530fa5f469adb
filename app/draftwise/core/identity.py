"""What a remembered fact is filed under: one key for each thing that can make it stale.

Every record in the data folder (core/records.py) and every caller that looks one up builds
its keys here and nowhere else, so `draftwise measure` records a measurement under the key
`launch` and the window look it up with, and an engine fix is read under the devices it was
written under (issue 19, "Records are looked up under different keys").

- `file_key(path)`: a file as its contents go: resolved path, size and mtime. Replacing,
  re-downloading or rebuilding the file makes a new key (models, drafters).
- `engine_build_key(binary)`: the engine binary the same way: a new build gets a fresh start
  (broken drafters, engine fixes, ladder rungs, measurements, the speed probe, the
  capability cache).
- `machine_key(machine)`: the computer a launch plans on, as installed: total RAM, each GPU
  the launch may use (its engine name, description and total memory, in MiB) and unified
  memory. Free memory is left out (it changes from minute to minute). Always built from the
  machine *as selected* (`device_choice.select`): an automatic choice leaves a software device
  out and renames the rest the way the engine numbers them, so the window, `launch` and
  `measure` give the same key on a machine with lavapipe or an integrated GPU beside it.
- `host_key(machine)`: the machine key without GPUs: what the processor runs whatever GPUs a
  launch uses (a CPU fault such as the AMX illegal instruction).
- `processor_key()`: this computer's processor as probed (OS, architecture, CPU model,
  threads, RAM), known before any `Machine`: what a measured processor speed holds for.
- `launch_devices(gpus, requested)` and `device_key(devices)`: the devices a per-model engine
  fix is filed under, read before the plan and written after the start from the same
  inputs: the launch's selected GPUs (any backend) by engine name, else the ones asked for;
  `CPU` when there are none.
- `path_key(path)`: the resolved path alone: the user's per-model settings, which a
  re-download keeps.

Keys an earlier Draftwise wrote in another form are still recognised (`legacy_*`), so a
record the user had is found again; a new write files it under today's key.

Pure: reads file metadata and (for `processor_key`) /proc/cpuinfo; imports no subpackage
(the stores live in several of them), so a machine is anything shaped like `hardware.Machine`.
"""

from __future__ import annotations

import functools
import os
import platform
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

_MiB = 1 << 20
NO_DEVICES = "CPU"  # the device key of a launch that uses no GPU


class GpuLike(Protocol):
    backend: str
    name: str
    total_bytes: int
    device: str | None

    @property
    def engine_name(self) -> str: ...


class MachineLike(Protocol):
    ram_total: int
    os: str
    unified_memory: bool

    @property
    def gpus(self) -> Sequence[GpuLike]: ...


# ------------------------------------------------------------------ files and builds
def file_key(path: Path | str) -> str:
    """`resolved path|size|mtime_ns`; the path as given when the file cannot be read."""
    resolved, size, mtime_ns = file_stamp(path)
    return resolved if size is None else f"{resolved}|{size}|{mtime_ns}"


# Resolved paths by (path as given, device, inode): a launch asks for the same few files'
# keys a dozen times, and resolving walks every component of the path (an lstat each). The
# stat, which follows links, is taken every time: a link pointed at another file, or a file
# replaced, has another inode and is resolved again.
_RESOLVED: dict[tuple[str, int, int], str] = {}
_RESOLVED_MAX = 256


def file_stamp(path: Path | str) -> tuple[str, int | None, int | None]:
    """(resolved path, size, mtime_ns) of `file_key`, apart, for keys that add their own
    parts (the drafter key adds how the drafter is used); (path, None, None) when unreadable."""
    p = Path(path)
    try:
        st = p.stat()
        where = (str(p) if p.is_absolute() else os.path.join(os.getcwd(), p), st.st_dev, st.st_ino)
        resolved = _RESOLVED.get(where)
        if resolved is None:
            if len(_RESOLVED) >= _RESOLVED_MAX:
                _RESOLVED.clear()
            resolved = _RESOLVED[where] = str(p.resolve())
        return resolved, st.st_size, st.st_mtime_ns
    except OSError:
        return str(p), None, None


def engine_build_key(binary: Path | str) -> str:
    """The engine build: its binary's `file_key` (a rebuild or update changes size or mtime)."""
    return file_key(binary)


def path_key(path: Path | str) -> str:
    """The resolved path alone (user-expanded): what per-model settings follow."""
    try:
        return str(Path(path).expanduser().resolve())
    except OSError:
        return str(path)


def same_file(key: str, path: Path | str) -> bool:
    """Whether a stored `file_key` names `path` (whatever its size and mtime were then)."""
    return key.split("|", 1)[0] == path_key(path)


# ------------------------------------------------------------------ machines
def machine_key(machine: MachineLike) -> str:
    """`ram=MiB|gpus=Vulkan0:name:MiB,...|unified=0` of the machine as selected."""
    gpus = ",".join(f"{g.device or g.backend}:{g.name}:{g.total_bytes // _MiB}" for g in machine.gpus)
    return f"ram={machine.ram_total // _MiB}|gpus={gpus}|unified={int(machine.unified_memory)}"


def host_key(machine: MachineLike) -> str:
    """`machine_key` without the GPUs (the same string for every device choice)."""
    return f"ram={machine.ram_total // _MiB}|gpus=|unified={int(machine.unified_memory)}"


@functools.cache
def processor_key() -> str:
    """This processor and memory, probed once per process (neither changes while it runs):
    `OS|arch|CPU model|threads|RAM MiB`."""
    info = Path("/proc/cpuinfo")  # Linux names the model there; elsewhere platform.processor()
    try:
        text = info.read_text(encoding="utf-8", errors="replace") if info.is_file() else ""
    except OSError:
        text = ""
    m = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    cpu = m.group(1).strip() if m else platform.processor() or ""
    try:
        import psutil

        ram = int(psutil.virtual_memory().total) // _MiB
    except (ImportError, OSError):
        ram = 0
    return f"{platform.system()}|{platform.machine()}|{cpu}|{os.cpu_count()}|{ram}"


# ------------------------------------------------------------------ devices
def launch_devices(gpus: Sequence[GpuLike], requested: Sequence[str] = ()) -> tuple[str, ...]:
    """The devices a launch is filed under: its selected GPUs by engine name (`Vulkan0`),
    else the ones the user asked for (a build without that backend still names them)."""
    return tuple(g.engine_name for g in gpus) or tuple(requested)


def device_key(devices: Sequence[str]) -> str:
    return ",".join(devices) or NO_DEVICES


# ------------------------------------------------------------------ earlier forms
def legacy_measurement_machine_key(machine: MachineLike) -> str:
    """The machine key speed measurements were filed under before this module (launch/prepare.py):
    OS, RAM and each GPU's backend, name and memory in bytes."""
    gpus = ",".join(f"{g.backend}:{g.name}:{g.total_bytes}" for g in machine.gpus)
    return f"{machine.os}|{machine.ram_total}|{gpus}"


def legacy_fix_file_key(path: Path | str) -> str:
    """The model key engine fixes were filed under before this module: path and size, no mtime."""
    p = Path(path)
    try:
        return f"{p.resolve()}|{p.stat().st_size}"
    except OSError:
        return str(p)
