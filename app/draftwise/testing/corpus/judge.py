"""The engine judges the plan of one corpus model.

For one sparse corpus file and one *mode*, `judge_run`:

1. describes a machine with plenty of RAM (`BIG_RAM`; the CPU module the engine really
   loads, probed from it) or, for `vulkan`, the engine's own Vulkan device (lavapipe here);
2. plans and builds the launch the way the app does (`prepare.prepare` with MTP `auto` for
   a model with a head and `off` otherwise, `Prepared.launch`), the model alone in a folder
   of its own so no companion is picked up, the context at `spec.ctx`;
3. starts the real engine with `--no-warmup` (and `-nr` in the mapped modes), preloaded
   with `nopopulate` so the hole is never faulted in, waits for `/health`, stops it;
4. reads the engine's buffer lines (`logparse`) and compares them with the plan per device
   and component.

Targets (issue 18): weights, KV and recurrent state within 1 % (at least 16 KiB: the lines
have two decimals of MiB), compute (compute + output buffers) within 5 % or 8 MiB, the CPU's
re-laid copies (AMX, CPU_REPACK) within 1 %, an MTP drafter's own context (its KV and
compute) within 5 % or 8 MiB.

Modes: `cpu` (the engine's own CPU module, `-nr`: every weight in the mapped file), `amx`
(the own module without `-nr`, on a CPU whose module is sapphirerapids: the AMX buffer),
`repack` (a copy of the engine whose only CPU module is haswell, without `-nr`:
CPU_REPACK), `vulkan` (the Vulkan engine on Vulkan0, every layer on the device). The
re-laying modes read the weights they copy (the hole reads as zeros) and allocate that much
RAM, so the corpus runs them on small models only.
"""

from __future__ import annotations

import platform
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines import capabilities
from draftwise.core.kinds import Backend, DeviceKind
from draftwise.core.launch import headless, launch_spec, prepare
from draftwise.core.machine import hardware
from draftwise.core.machine.hardware import GB, Machine
from draftwise.core.planning import logparse, memory, planner
from draftwise.core.speculation import resolver
from draftwise.testing import gpu_launch
from draftwise.testing.corpus import build, nopopulate
from draftwise.testing.corpus.spec import ModelSpec

MiB = 1 << 20
BIG_RAM = 4096 * GB  # "plenty": the largest corpus file is ~380 GiB, mapped, never read
TOL_EXACT = 0.01
FLOOR_EXACT = 16 << 10
TOL_COMPUTE = 0.05
FLOOR_COMPUTE = 8 * MiB
CPU, AMX, REPACK, VULKAN = "cpu", "amx", "repack", "vulkan"
MODES = (CPU, AMX, REPACK, VULKAN)
READY_TIMEOUT = 600.0
RELAY_CAP = 1536 * MiB  # the re-laying modes copy the weights into RAM: small files only
_SPEC_IMPL = re.compile(r"adding speculative implementation '([\w-]+)'")
_BUFFER_LINE = re.compile(r"(model|output|KV|RS|compute) buffer size|llama_kv_cache: size|error|failed|exception")


@dataclass
class Row:
    device: str  # the engine's device name: CPU, Vulkan0; "draft" for the MTP context
    component: str  # weights | kv | rs | compute | AMX | CPU_REPACK | drafter
    planned: int
    actual: int
    ok: bool
    lines: list[str] = field(default_factory=list)  # the engine's lines behind `actual`

    @property
    def error(self) -> float | None:
        return (self.planned - self.actual) / self.actual if self.actual else None

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "component": self.component, "planned": self.planned,
                "actual": self.actual, "error": self.error, "ok": self.ok, "lines": self.lines}  # fmt: skip


@dataclass
class Run:
    model: str
    mode: str
    ready: bool
    rows: list[Row] = field(default_factory=list)
    problem: str = ""  # why the run could not be judged (the engine's error line)
    load_s: float = 0.0  # start to /health 200
    wall_s: float = 0.0  # plan, start, ready, stop
    argv: tuple[str, ...] = ()
    cpu_variant: str | None = None
    # The speculative implementations the engine says it added ("adding speculative
    # implementation 'draft-mtp'", common/speculative.cpp): what it really runs.
    engine_spec: tuple[str, ...] = ()
    plan: planner.Plan | None = None  # what the engine was judged against

    @property
    def misses(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    @property
    def ok(self) -> bool:
        return self.ready and not self.problem and not self.misses

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "mode": self.mode, "ready": self.ready, "problem": self.problem,
                "load_s": round(self.load_s, 2), "wall_s": round(self.wall_s, 2), "argv": list(self.argv),
                "cpu_variant": self.cpu_variant, "engine_spec": list(self.engine_spec),
                "rows": [r.to_json() for r in self.rows]}  # fmt: skip


def _close(planned: int, actual: int, tol: float, floor: int) -> bool:
    return abs(planned - actual) <= max(tol * actual, floor)


_variants: dict[Path, str | None] = {}


def cpu_variant(binary: Path) -> str | None:
    """The CPU module this engine loads (its `--list-devices` at -lv 4)."""
    if binary not in _variants:
        _variants[binary] = hardware.probe_engine_devices(binary, timeout=60).cpu_variant
    return _variants[binary]


def described_cpu(binary: Path) -> Machine:
    return Machine(ram_total=BIG_RAM, ram_available=BIG_RAM, gpus=[], os=platform.system(),
                   notes=["the corpus judge's described machine"], described=True,
                   cpu_variant=cpu_variant(binary))  # fmt: skip


def described_vulkan(binary: Path, limits: dict[str, hardware.DeviceLimit] | None = None) -> Machine:
    """This machine's Vulkan device as the engine lists it (lavapipe here), chosen by name,
    with plenty of RAM beside it; `limits`: the user's memory limit per device key (how the
    GPU tier makes a model overflow lavapipe)."""
    probed = hardware.inventory(binary, max_age=0)
    machine = replace(probed, ram_total=BIG_RAM, ram_available=BIG_RAM, described=True)
    return hardware.select(machine, ["Vulkan0"], limits)


def _solo(model: Path, folder: Path) -> Path:
    """The model alone in a folder (a link), so the resolver finds no companion beside it."""
    d = folder / model.stem
    d.mkdir(parents=True, exist_ok=True)
    link = d / model.name
    if not link.exists():
        link.symlink_to(model)
    return link


def compare(spec: ModelSpec, plan: planner.Plan, actual: logparse.ActualMemory, log: Sequence[str]) -> list[Row]:
    """Planned vs actual per device and component."""
    rows: list[Row] = []
    seen = actual.by_device(logparse.TARGET)
    held = actual._held(logparse.TARGET)

    def lines_for(component: str, device: str) -> list[str]:
        pat = {"weights": "model buffer", "kv": "KV buffer", "rs": "RS buffer",
               "compute": "(compute|output) buffer"}[component]  # fmt: skip
        out = [ln.strip() for ln in log
               if re.search(pat + r" size", ln) and logparse.device_of(_buffer_of(ln)) == device]
        # The compute buffers first: they are what a compute miss is about.
        return sorted(out, key=lambda ln: "sched_reserve" not in ln)[:6]

    head = plan.bytes.embedded_head
    for d in plan.per_device:
        dev = d.device or ("CPU" if d.kind == DeviceKind.CPU else d.name)
        got = seen.get(dev, {})
        weights = d.weights + (head if dev == _head_device(plan) else 0)
        checks = [("weights", weights, got.get("weights", 0), TOL_EXACT, FLOOR_EXACT),
                  ("kv", d.kv, got.get("kv", 0), TOL_EXACT, FLOOR_EXACT),
                  ("compute", d.compute + d.output, got.get("compute", 0) + got.get("output", 0),
                   TOL_COMPUTE, FLOOR_COMPUTE)]  # fmt: skip
        for comp, p, a, tol, floor in checks:
            if not p and not a:
                continue
            rows.append(Row(dev, comp, p, a, _close(p, a, tol, floor), lines_for(comp, dev)))
    # KV and recurrent state apart (the per-device rows add them up).
    t = actual.by_component(logparse.TARGET)
    if plan.bytes.recurrent or t["rs"]:
        p_kv, p_rs = plan.bytes.kv - plan.bytes.recurrent, plan.bytes.recurrent
        rows.append(Row("all", "kv only", p_kv, t["kv"], _close(p_kv, t["kv"], TOL_EXACT, FLOOR_EXACT),
                        [ln for dev in seen for ln in lines_for("kv", dev)]))  # fmt: skip
        rows.append(Row("all", "rs", p_rs, t["rs"], _close(p_rs, t["rs"], TOL_EXACT, FLOOR_EXACT),
                        [ln for dev in seen for ln in lines_for("rs", dev)]))  # fmt: skip
    # The CPU's re-laid copies, by buffer.
    by_buffer: dict[str, int] = {}
    for ln in held:
        if ln.component == "weights" and ln.buffer in ("AMX", "CPU_REPACK"):
            by_buffer[ln.buffer] = by_buffer.get(ln.buffer, 0) + ln.bytes
    for buf in sorted(set(by_buffer) | set(plan.bytes.cpu_extra)):
        p, a = plan.bytes.cpu_extra.get(buf, 0), by_buffer.get(buf, 0)
        rows.append(Row("CPU", buf, p, a, _close(p, a, TOL_EXACT, FLOOR_EXACT),
                        [ln.strip() for ln in log if f" {buf} model buffer" in ln][:3]))  # fmt: skip
    # An MTP drafter's own context: its KV, compute and output (its weights are the target's).
    if plan.bytes.drafter or actual.has_draft:
        p = plan.bytes.drafter - head
        a = sum(actual.by_component(logparse.DRAFT).values())
        rows.append(Row("draft", "drafter", p, a, _close(p, a, TOL_COMPUTE, FLOOR_COMPUTE), []))
    return rows


def _buffer_of(line: str) -> str:
    m = re.search(r":\s*([\w.\-]+(?:\[[^\]\s]+\])?)\s+(?:model|output|KV|RS|compute) buffer", line)
    return m.group(1) if m else ""


def _head_device(plan: planner.Plan) -> str:
    """Where the engine keeps an embedded MTP head's block: the last block's device."""
    gpus = [d for d in plan.per_device if d.kind != DeviceKind.CPU and d.layers]
    if gpus and plan.gpu_layers >= plan.n_layers:
        return gpus[-1].device or gpus[-1].name
    return "CPU"


def judge_run(spec: ModelSpec, path: Path, mode: str, *, cpu_engine: Path, vulkan_engine: Path | None = None,
              work: Path | None = None, ready_timeout: float = READY_TIMEOUT,
              companion: Path | None = None, limits: dict[str, hardware.DeviceLimit] | None = None,
              prefs: planner.PlanPrefs | None = None) -> Run:  # fmt: skip
    """One launch of `path` (the corpus file of `spec`) in `mode`, judged.

    `companion`: a drafter file to launch beside it (a Gemma 4 assistant) as the app's
    Draft model. When the app refuses it, the target is planned alone and started with the
    drafter anyway (`--spec-type draft-mtp --spec-draft-model`), so the drafter's own
    buffers are measured against a plan that has none for them. `limits` (vulkan): a memory
    limit on the device; `prefs`: the plan's preferences (default: the spec's context)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    started = time.monotonic()
    work = work or Path(tempfile.mkdtemp(prefix="draftwise-judge-"))
    backend = Backend.CPU
    extra: tuple[str, ...] = ("--no-warmup",)
    if mode == VULKAN:
        if vulkan_engine is None:
            return Run(spec.name, mode, False, problem="no Vulkan engine")
        binary, backend = vulkan_engine, Backend.VULKAN
        machine = described_vulkan(binary, limits)
        extra += ("-nr",)
    else:
        binary = cpu_engine
        if mode == REPACK:
            binary = gpu_launch.engine_with_cpu_variant(cpu_engine, work / "engine-haswell", "haswell")
        machine = described_cpu(binary)
        if mode == CPU:
            extra += ("-nr",)
        elif mode == AMX and machine.cpu_variant not in memory.AMX_VARIANTS:
            return Run(spec.name, mode, False, problem=f"the engine loads {machine.cpu_variant}, not an AMX module")
    model = _solo(path, work / "models")
    mtp = resolver.MtpMode.AUTO if spec.spec_type == "draft-mtp" else resolver.MtpMode.OFF
    caps = capabilities.capabilities(binary)
    run = Run(spec.name, mode, False, cpu_variant=machine.cpu_variant)
    draft_argv: tuple[str, ...] = ()
    request = prepare.Request(model=model, mtp=mtp, extra_args=extra, prefs=prefs or planner.PlanPrefs(ctx=spec.ctx))
    if companion is not None:
        try:
            prepared = prepare.prepare(replace(request, draft=companion, mtp=resolver.MtpMode.AUTO), caps, machine)
        except prepare.PrepareError as exc:
            run.problem = f"the app refuses {companion.name} as the drafter: {exc.message}"
            prepared = prepare.prepare(request, caps, machine)
            draft_argv = ("--spec-type", "draft-mtp", "--spec-draft-model", str(companion))
    else:
        prepared = prepare.prepare(request, caps, machine)
    plan = run.plan = prepared.plan
    if not plan.fits:
        run.problem = "the plan does not fit: " + "; ".join(str(r) for r in plan.reasons)
        return run
    if spec.spec_type and prepared.spec.spec_type != spec.spec_type:
        run.problem = f"the app did not choose {spec.spec_type}: {[str(n) for n in prepared.spec.notes]}"
    ls = prepared.launch(binary, port=launch_spec.any_free_port(), engine_backend=backend, gpus=machine.gpus,
                         chosen_gpus=hardware.visible_for(machine, backend), requested=machine.requested)  # fmt: skip
    shim = nopopulate.library(build.corpus_dir())
    if shim is not None:
        ls = replace(ls, env={**ls.env, "LD_PRELOAD": str(shim)})
    if draft_argv:
        ls = replace(ls, argv=(*ls.argv, *draft_argv))
    run.argv = ls.argv
    server = headless.serve(ls, log_dir=work)
    t0 = time.monotonic()
    try:
        server.wait_ready(ready_timeout)
        run.ready = True
        run.load_s = time.monotonic() - t0
    except headless.EngineError as exc:
        text = server.log_text()
        errs = [ln.strip() for ln in text.splitlines() if re.search(r"error|failed|exception|abort", ln, re.I)]
        run.problem = "; ".join(p for p in (run.problem, (errs[-1] if errs else str(exc))[-400:]) if p)
    finally:
        server.stop()
    text = server.log_text()
    lines = text.splitlines()
    run.engine_spec = tuple(_SPEC_IMPL.findall(text))
    chosen = prepared.spec.spec_type if not draft_argv else None
    if run.ready and chosen and not set(chosen.split(",")) <= set(run.engine_spec):
        run.problem = "; ".join(p for p in (run.problem, f"the app passed {chosen}, the engine runs "
                                            f"{', '.join(run.engine_spec) or 'no speculation'}") if p)
    if run.ready:
        actual = logparse.parse_lines(lines)
        run.rows = compare(spec, plan, actual, [ln for ln in lines if _BUFFER_LINE.search(ln)])
        if mode == VULKAN and "Vulkan0" not in actual.by_device():
            run.problem = "the engine put nothing on Vulkan0"
    run.wall_s = time.monotonic() - started
    return run


def default_modes(spec: ModelSpec, path: Path, vulkan_capacity: int | None = None) -> list[str]:
    """What the corpus runs for a model: always `cpu`; the re-laying modes for files up to
    RELAY_CAP (they read and copy the weights); `vulkan` when the file and some room for its
    cache fit the device (a model with an MTP head is judged on the CPU only)."""
    size = path.stat().st_size
    modes = [CPU]
    if size <= RELAY_CAP:
        modes += [AMX, REPACK]
    if vulkan_capacity is not None and size + 256 * MiB <= vulkan_capacity and spec.spec_type is None:
        modes.append(VULKAN)
    return modes
