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
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines import provision
from draftwise.core.kinds import GPU_BACKENDS, Backend
from draftwise.core.messages import Text, msg

MiB = 1 << 20
GB = 1 << 30  # "GB" for people is GiB here: it is how GPUs and RAM are sold and shown

PROBE_TIMEOUT = 5.0
# The engine loads every backend (Vulkan compiles nothing yet, but enumerates devices) before
# it lists them: seconds on a busy 2-core machine.
ENGINE_PROBE_TIMEOUT = 20.0
NO_ENGINE_GPU = "the engine sees no GPU (a CPU build, or no usable GPU driver)"
CACHE_SECONDS = 5.0

# The backend names are core/kinds.py's; these aliases keep this module's vocabulary short.
CUDA, ROCM, VULKAN, METAL, CPU = Backend.CUDA, Backend.ROCM, Backend.VULKAN, Backend.METAL, Backend.CPU
RPC = Backend.RPC  # another computer's device, lent by its ggml-rpc-server (core/machine/workers.py)
BACKENDS = GPU_BACKENDS
# Device name prefixes of `--list-devices` (ggml backend names) -> backend.
_DEVICE_PREFIX = {"CUDA": CUDA, "ROCm": ROCM, "HIP": ROCM, "Vulkan": VULKAN, "MTL": METAL,
                  "Metal": METAL}  # fmt: skip
_PREFIX = {CUDA: "CUDA", ROCM: "ROCm", VULKAN: "Vulkan", METAL: "MTL"}
# Vulkan drivers that run on the CPU, for when no vulkaninfo tells the device type.
_SOFTWARE_NAMES = re.compile(r"\b(llvmpipe|lavapipe|SwiftShader)\b", re.IGNORECASE)
# Words that mark an integrated GPU in a device description.
_INTEGRATED = re.compile(
    r"\b(Radeon\(TM\) Graphics|Radeon Graphics|Vega \d+ Graphics|780M|760M|740M|680M|660M|"
    r"890M|880M|8060S|Intel\(R\) (UHD|Iris|Arc\(TM\) Graphics)|UHD Graphics|Iris|Apple)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class DeviceLimit:
    """How much of one GPU the user lets Draftwise use: keep `keep_free` bytes free on it,
    or use at most `at_most` bytes of it (one of the two)."""

    keep_free: int | None = None
    at_most: int | None = None

    def __post_init__(self) -> None:
        if (self.keep_free is None) == (self.at_most is None):
            raise ValueError("a device limit is either 'keep N GB free' or 'use at most N GB'")
        if (self.keep_free or 0) < 0 or (self.at_most is not None and self.at_most <= 0):
            raise ValueError("a device limit must be a positive size")

    def capacity(self, free: int, default_margin: int) -> int:
        """The bytes the plan may place on a device with `free` bytes free."""
        if self.keep_free is not None:
            return max(free - self.keep_free, 0)
        assert self.at_most is not None
        return max(min(self.at_most, free - default_margin if free > default_margin else free), 0)

    def margin(self, free: int) -> int:
        """What the engine's --fit leaves free on the device (its --fit-target)."""
        if self.keep_free is not None:
            return self.keep_free
        assert self.at_most is not None
        return max(free - self.at_most, 0)

    def to_json(self) -> dict[str, float]:
        if self.keep_free is not None:
            return {"keep_free_gb": round(self.keep_free / GB, 3)}
        assert self.at_most is not None
        return {"max_gb": round(self.at_most / GB, 3)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DeviceLimit | None:
        """`{"keep_free_gb": 2}` or `{"max_gb": 6}`; None when neither is there.
        ValueError names the field that is wrong. `Machine.to_json()`'s bytes
        (`{"keep_free": …}` / `{"at_most": …}`) read back too."""
        if data.get("keep_free") is not None or data.get("at_most") is not None:
            return cls(keep_free=data.get("keep_free"), at_most=data.get("at_most"))
        keep, most = data.get("keep_free_gb"), data.get("max_gb")
        if keep is None and most is None:
            return None
        if keep is not None and most is not None:
            raise ValueError("give keep_free_gb or max_gb, not both")
        for key, v in (("keep_free_gb", keep), ("max_gb", most)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                raise ValueError(f"{key} must be a number of GB (got {v!r})")
        if most is not None and most <= 0:
            raise ValueError("max_gb must be more than 0")
        return cls(keep_free=None if keep is None else int(float(keep) * GB),
                   at_most=None if most is None else int(float(most) * GB))


@dataclass(frozen=True)
class Gpu:
    index: int
    backend: Backend  # cuda | rocm | vulkan | metal (rpc: a worker's)
    name: str
    uuid: str | None = None
    total_bytes: int = 0
    free_bytes: int = 0
    integrated: bool = False
    gfx_target: str | None = None  # AMD: "gfx1100"
    device: str | None = None  # the engine's name for it: CUDA0, ROCm1, Vulkan0, MTL0, RPC0
    endpoint: str | None = None  # an RPC worker's host:port
    remote_index: int = 0  # an RPC device's number on its own worker (its buffers: RPC<i>[host:port])
    # A device that runs on the CPU (Vulkan deviceType CPU: lavapipe/llvmpipe, SwiftShader):
    # slower than the engine's own CPU backend, so only an explicit choice takes it.
    software: bool = False
    limit: DeviceLimit | None = None  # the user's memory limit for it

    @property
    def key(self) -> str:
        """A stable name for settings: the UUID, else backend, index and description."""
        return self.uuid or f"{self.backend}:{self.index}:{self.name}"

    @property
    def label(self) -> str:
        return f"{self.device or f'{self.backend.upper()}{self.index}'} ({self.name})"

    @property
    def engine_name(self) -> str:
        """The name the engine gives it (`--list-devices`, buffer lines): Vulkan0."""
        return self.device or f"{_PREFIX.get(self.backend, self.backend.upper())}{self.index}"


@dataclass(frozen=True)
class Machine:
    ram_total: int
    ram_available: int
    gpus: list[Gpu] = field(default_factory=list)
    os: str = ""
    unified_memory: bool = False
    notes: list[Text] = field(default_factory=list)
    described: bool = False  # from a --machine file, not probed
    # Other computers' devices (RPC workers, probed with the engine), in the engine's order:
    # it puts them before this machine's GPUs.
    workers: list[Gpu] = field(default_factory=list)
    # The user chose these GPUs (`--device`, the window's picker): plan on exactly them,
    # software devices included. False: Draftwise chooses (never a software device).
    pinned: bool = False
    # The CPU backend variant the engine loads (`libggml-cpu-haswell.so` -> "haswell"),
    # when its build has one per CPU level; None when unknown or a single build.
    cpu_variant: str | None = None
    # Physical indexes the launch must make visible (GGML_VK_VISIBLE_DEVICES, ...), so the
    # engine sees exactly the GPUs planned on; None: leave the engine's own choice alone.
    visible: tuple[int, ...] | None = None
    requested: tuple[str, ...] = ()  # the device names the user asked for (`--device`)

    @property
    def discrete_gpus(self) -> list[Gpu]:
        return [g for g in self.gpus if not g.integrated and not g.software]

    @property
    def automatic_gpus(self) -> list[Gpu]:
        """What an automatic choice may use: the discrete GPUs, else the integrated ones;
        never a software device."""
        if self.pinned:
            return list(self.gpus)
        hardware_gpus = [g for g in self.gpus if not g.software]
        return [g for g in hardware_gpus if not g.integrated] or hardware_gpus

    def to_json(self) -> dict[str, Any]:
        return {
            "ram_total": self.ram_total,
            "ram_available": self.ram_available,
            "gpus": [asdict(g) for g in self.gpus],
            "os": self.os,
            "unified_memory": self.unified_memory,
            "notes": [str(n) for n in self.notes],
            "workers": [asdict(g) for g in self.workers],
            "pinned": self.pinned,
            "cpu_variant": self.cpu_variant,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Machine:
        """A described machine. People write GB (`ram_gb`, `memory_gb`, `free_gb`);
        `to_json()` output (bytes) reads back as well."""
        def size(d: Mapping[str, Any], gb_key: str, bytes_key: str, default: int = 0) -> int:
            if d.get(bytes_key) is not None:
                return int(d[bytes_key])
            if d.get(gb_key) is not None:
                return int(float(d[gb_key]) * GB)
            return default

        if not isinstance(data, Mapping):
            raise ValueError("a machine description is a JSON object")
        ram_total = size(data, "ram_gb", "ram_total")
        if ram_total <= 0:
            raise ValueError("the machine description needs ram_gb (the RAM in GB)")
        ram_available = size(data, "ram_available_gb", "ram_available", ram_total)
        unified = bool(data.get("unified_memory", False))
        gpus = []
        for i, g in enumerate(data.get("gpus") or []):
            named = str(g.get("backend", CUDA)).lower()
            if named not in BACKENDS:
                raise ValueError(f"GPU backend {named!r} is not one of {', '.join(BACKENDS)}")
            backend = Backend(named)
            total = size(g, "memory_gb", "total_bytes")
            if total <= 0:
                raise ValueError(f"GPU {i} needs memory_gb (its memory in GB)")
            gpus.append(Gpu(
                index=int(g.get("index", i)), backend=backend, name=str(g.get("name", f"GPU {i}")),
                uuid=g.get("uuid"), total_bytes=total, free_bytes=size(g, "free_gb", "free_bytes", total),
                integrated=bool(g.get("integrated", backend == METAL)),
                gfx_target=g.get("gfx_target"), device=g.get("device"),
                software=bool(g.get("software", False)),
                # People write keep_free_gb / max_gb; to_json() writes the limit in bytes.
                limit=_limit_of(g.get("limit") or g, i),
            ))  # fmt: skip
        workers = []
        for i, w in enumerate(data.get("workers") or []):
            endpoint = str(w.get("endpoint") or "")
            if ":" not in endpoint:
                raise ValueError(f"worker {i} needs endpoint (host:port)")
            total = size(w, "memory_gb", "total_bytes")
            if total <= 0:
                raise ValueError(f"worker {endpoint} needs memory_gb (its memory in GB)")
            workers.append(Gpu(index=i, backend=RPC, name=str(w.get("name") or endpoint), total_bytes=total,
                               free_bytes=size(w, "free_gb", "free_bytes", total), device=f"RPC{i}",
                               endpoint=endpoint, remote_index=int(w.get("remote_index", 0))))  # fmt: skip
        return cls(ram_total, ram_available, gpus, str(data.get("os", "")), unified,
                   list(data.get("notes") or []), described=True, workers=workers,
                   pinned=bool(data.get("pinned", False)), cpu_variant=data.get("cpu_variant"))  # fmt: skip


def _limit_of(g: Mapping[str, Any], i: int) -> DeviceLimit | None:
    try:
        return DeviceLimit.from_json(g)
    except ValueError as exc:
        raise ValueError(f"GPU {i}: {exc}") from exc


class DeviceChoiceError(ValueError):
    """A device name that matches no device of this machine."""


def _matches(g: Gpu, name: str) -> bool:
    n = name.strip().lower()
    return n in (g.engine_name.lower(), g.key.lower(), g.name.lower())


def select(machine: Machine, devices: Sequence[str] | None = None,
           limits: Mapping[str, DeviceLimit] | None = None) -> Machine:  # fmt: skip
    """The machine as one launch will see it.

    `devices`: engine device names the user chose (`Vulkan0`; also a GPU's key or its
    description); None or empty lets Draftwise choose (never a software device).
    `limits`: the user's memory limits by `Gpu.key`. GPUs the engine will not see are
    dropped, and the rest renamed the way the engine numbers what it is shown (CUDA0,
    Vulkan0, ... in physical order), so the plan's device names are the engine's.

    A name that matches nothing raises DeviceChoiceError, unless the machine has no GPU of
    that kind at all (a CPU build asked for Vulkan0): then the launch runs without it and
    the GPU verdict says why.
    """
    gpus = [replace(g, limit=limits[g.key]) if limits and g.key in limits else g for g in machine.gpus]
    requested = tuple(d for d in (devices or ()) if d.strip())
    notes = list(machine.notes)
    if requested:
        chosen: list[Gpu] = []
        for name in requested:
            hit = next((g for g in gpus if _matches(g, name)), None)
            if hit is None:
                prefix = re.match(r"[A-Za-z]+", name.strip())
                backend = _DEVICE_PREFIX.get(prefix.group(0) if prefix else "", None)
                if backend is not None and not any(g.backend == backend for g in gpus):
                    continue  # this build has no such backend: the verdict reports it
                known = ", ".join(g.engine_name for g in gpus) or "none"
                raise DeviceChoiceError(f"there is no device {name!r} (devices: {known})")
            if hit not in chosen:
                chosen.append(hit)
        pinned = True
    else:
        chosen = Machine(0, 0, gpus).automatic_gpus
        pinned = False
    dropped = len(chosen) != len(gpus)
    chosen.sort(key=lambda g: (g.backend, g.index))
    visible = tuple(g.index for g in chosen) if (pinned or dropped) else None
    if visible is not None:
        counts: dict[str, int] = {}
        renamed = []
        for g in chosen:
            k = counts.get(g.backend, 0)
            counts[g.backend] = k + 1
            renamed.append(replace(g, device=f"{_PREFIX.get(g.backend, g.backend.upper())}{k}"))
        chosen = renamed
    return replace(machine, gpus=chosen, notes=notes, pinned=pinned, visible=visible, requested=requested)


def limits_from(stored: Mapping[str, Mapping[str, Any]]) -> dict[str, DeviceLimit]:
    """The user's limits as settings store them (`{key: {"keep_free_gb": 2}}`); entries that
    do not read as a limit are left out."""
    out = {}
    for k, v in stored.items():
        try:
            limit = DeviceLimit.from_json(v)
        except ValueError:
            continue
        if limit is not None:
            out[k] = limit
    return out


def visible_for(machine: Machine, backend: Backend | str) -> list[int] | None:
    """The physical indexes of `backend`'s GPUs a launch shows the engine, or None to
    leave its own choice alone."""
    if machine.visible is None:
        return None
    return [g.index for g in machine.gpus if g.backend == backend]


def load_machine(path: str | Path) -> Machine:
    """Read a `--machine FILE.json` description; ValueError says what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"could not read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    return Machine.from_json(data)


# ------------------------------------------------------------------ parsers (pure)
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


# ------------------------------------------------------------------ probes (I/O)
Runner = Callable[[Sequence[str], float], str]


def _run(argv: Sequence[str], timeout: float) -> str:
    """stdout+stderr of a command; OSError/TimeoutExpired/CalledProcessError propagate."""
    out = subprocess.run(
        list(argv), capture_output=True, text=True, errors="replace", timeout=timeout, check=True,
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )
    return out.stdout + out.stderr


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
    for _ in range(2 if modules and variant is None else 0):
        # The engine logs from a worker thread and --list-devices exits at once: the load
        # lines are sometimes lost. Asking again costs a fraction of a second.
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
