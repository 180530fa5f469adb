"""What a machine is, as data: `Machine` (RAM and GPUs), `Gpu`, and `DeviceLimit`, the
user's memory limit for one GPU; read back from JSON (`Machine.from_json`, `load_machine`
for `--machine FILE.json`), so a described machine plans the way a probed one does.

The sizes (`MiB`, `GB`) and the backend names live here too: every part of core/machine
speaks them. The engine's device-name prefixes (`CUDA0`, `Vulkan0`, `MTL0`) map to backends
both ways here, because a GPU's engine name (`Gpu.engine_name`), the parsers of the
engine's device list (probe_parsers.py) and the user's device choice (device_choice.py)
must name devices the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core.kinds import GPU_BACKENDS, Backend
from draftwise.core.messages import Text

MiB = 1 << 20
GB = 1 << 30  # "GB" for people is GiB here: it is how GPUs and RAM are sold and shown

# The backend names are core/kinds.py's; these aliases keep core/machine's vocabulary short.
CUDA, ROCM, VULKAN, METAL, CPU = Backend.CUDA, Backend.ROCM, Backend.VULKAN, Backend.METAL, Backend.CPU
RPC = Backend.RPC  # another computer's device, lent by its ggml-rpc-server (core/rpc/workers.py)
BACKENDS = GPU_BACKENDS
# Device name prefixes of `--list-devices` (ggml backend names) -> backend.
_DEVICE_PREFIX = {"CUDA": CUDA, "ROCm": ROCM, "HIP": ROCM, "Vulkan": VULKAN, "MTL": METAL,
                  "Metal": METAL}  # fmt: skip
_PREFIX = {CUDA: "CUDA", ROCM: "ROCm", VULKAN: "Vulkan", METAL: "MTL"}


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


def load_machine(path: str | Path) -> Machine:
    """Read a `--machine FILE.json` description; ValueError says what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"could not read {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from exc
    return Machine.from_json(data)
