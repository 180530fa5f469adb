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

MiB = 1 << 20
GB = 1 << 30  # "GB" for people is GiB here: it is how GPUs and RAM are sold and shown

PROBE_TIMEOUT = 5.0
NO_ENGINE_GPU = "the engine sees no GPU (a CPU build, or no usable GPU driver)"
CACHE_SECONDS = 5.0

CUDA, ROCM, VULKAN, METAL, CPU = "cuda", "rocm", "vulkan", "metal", "cpu"
RPC = "rpc"  # another computer's device, lent by its ggml-rpc-server (core/machine/workers.py)
BACKENDS = (CUDA, ROCM, VULKAN, METAL)
# Device name prefixes of `--list-devices` (ggml backend names) -> backend.
_DEVICE_PREFIX = {"CUDA": CUDA, "ROCm": ROCM, "HIP": ROCM, "Vulkan": VULKAN, "MTL": METAL,
                  "Metal": METAL}  # fmt: skip
# Words that mark an integrated GPU in a device description.
_INTEGRATED = re.compile(
    r"\b(Radeon\(TM\) Graphics|Radeon Graphics|Vega \d+ Graphics|780M|760M|740M|680M|660M|"
    r"890M|880M|8060S|Intel\(R\) (UHD|Iris|Arc\(TM\) Graphics)|UHD Graphics|Iris|Apple)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Gpu:
    index: int
    backend: str  # cuda | rocm | vulkan | metal
    name: str
    uuid: str | None = None
    total_bytes: int = 0
    free_bytes: int = 0
    integrated: bool = False
    gfx_target: str | None = None  # AMD: "gfx1100"
    device: str | None = None  # the engine's name for it: CUDA0, ROCm1, Vulkan0, MTL0, RPC0
    endpoint: str | None = None  # an RPC worker's host:port
    remote_index: int = 0  # an RPC device's number on its own worker (its buffers: RPC<i>[host:port])

    @property
    def label(self) -> str:
        return f"{self.device or f'{self.backend.upper()}{self.index}'} ({self.name})"


@dataclass(frozen=True)
class Machine:
    ram_total: int
    ram_available: int
    gpus: list[Gpu] = field(default_factory=list)
    os: str = ""
    unified_memory: bool = False
    notes: list[str] = field(default_factory=list)
    described: bool = False  # from a --machine file, not probed
    # Other computers' devices (RPC workers, probed with the engine), in the engine's order:
    # it puts them before this machine's GPUs.
    workers: list[Gpu] = field(default_factory=list)

    @property
    def discrete_gpus(self) -> list[Gpu]:
        return [g for g in self.gpus if not g.integrated]

    def to_json(self) -> dict[str, Any]:
        return {
            "ram_total": self.ram_total,
            "ram_available": self.ram_available,
            "gpus": [asdict(g) for g in self.gpus],
            "os": self.os,
            "unified_memory": self.unified_memory,
            "notes": list(self.notes),
            "workers": [asdict(g) for g in self.workers],
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
            backend = str(g.get("backend", CUDA)).lower()
            if backend not in BACKENDS:
                raise ValueError(f"GPU backend {backend!r} is not one of {', '.join(BACKENDS)}")
            total = size(g, "memory_gb", "total_bytes")
            if total <= 0:
                raise ValueError(f"GPU {i} needs memory_gb (its memory in GB)")
            gpus.append(Gpu(
                index=int(g.get("index", i)), backend=backend, name=str(g.get("name", f"GPU {i}")),
                uuid=g.get("uuid"), total_bytes=total, free_bytes=size(g, "free_gb", "free_bytes", total),
                integrated=bool(g.get("integrated", backend == METAL)),
                gfx_target=g.get("gfx_target"), device=g.get("device"),
            ))  # fmt: skip
        workers = []
        for i, w in enumerate(data.get("workers") or []):
            endpoint = str(w.get("endpoint") or "")
            if ":" not in endpoint:
                raise ValueError(f"worker {i} needs endpoint (host:port)")
            total = size(w, "memory_gb", "total_bytes")
            if total <= 0:
                raise ValueError(f"worker {endpoint} needs memory_gb (its memory in GB)")
            workers.append(Gpu(index=i, backend=RPC, name=endpoint, total_bytes=total,
                               free_bytes=size(w, "free_gb", "free_bytes", total), device=f"RPC{i}",
                               endpoint=endpoint, remote_index=int(w.get("remote_index", 0))))  # fmt: skip
        return cls(ram_total, ram_available, gpus, str(data.get("os", "")), unified,
                   list(data.get("notes") or []), described=True, workers=workers)  # fmt: skip


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


def probe_engine_devices(binary: Path, timeout: float = PROBE_TIMEOUT) -> tuple[list[Gpu], str | None]:
    try:
        out = provision.ask_engine(binary, "--list-devices", timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], f"the engine did not list its devices within {timeout:.0f} s"
    except OSError as exc:
        return [], f"the engine could not be asked for its devices ({exc.strerror or exc})"
    text = out.stdout + out.stderr
    if "Available devices" not in text:
        return [], "the engine did not list its devices"
    gpus = parse_list_devices(text)
    if not gpus:
        return [], NO_ENGINE_GPU
    return gpus, None


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
    notes: list[str] = []
    ram_total, ram_available, note = probe_ram()
    if note:
        notes.append(note)
    system = platform.system()
    engine_gpus: list[Gpu] = []
    engine_sees_none = False
    if engine_binary is not None:
        engine_gpus, note = probe_engine_devices(engine_binary)
        if note:
            notes.append(note)
        engine_sees_none = note == NO_ENGINE_GPU
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
    if gpus and all(g.integrated for g in gpus) and system != "Darwin":
        notes.append("only an integrated GPU was found; it shares the system RAM")
    return Machine(ram_total, ram_available, gpus, system, unified, notes)


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
