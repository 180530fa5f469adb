"""The engine judges the plan of one corpus model.

For one sparse corpus file and one *mode*, `judge_run`:

1. describes a machine with plenty of RAM (`BIG_RAM`; the CPU module the engine really
   loads, probed from it) or, for `vulkan`, the engine's own Vulkan device (lavapipe here);
2. plans and builds the launch the way the app does (`session.plan_launch` with MTP `auto`
   for a model with a head and `off` otherwise, `PlannedLaunch.spec`), the model alone in a folder
   of its own so no companion is picked up, the context at `spec.ctx`;
3. starts the real engine with `--no-warmup` (and `-nr` in the mapped modes), preloaded
   with `nopopulate` so the hole is never faulted in, waits for `/health`, stops it;
4. reads the engine's buffer lines (`logparse`) and compares them with the plan per device
   and component.

Targets (issue 28): weights, KV and recurrent state within 1 % (at least 16 KiB: the lines
have two decimals of MiB); compute (compute + output buffers) and an MTP drafter's own
context within 5 %, with an absolute floor of 1 MiB only where the engine's figure is below
20 MiB; the CPU's re-laid copies (AMX, CPU_REPACK) within 1 %; no component the fit depends
on planned more than 2 % below the engine's (16 KiB at least); and each device in total,
every buffer the engine put there (both contexts, re-laid copies, buffers the plan does not
list) against the plan's total for it, within 5 % and not more than 2 % under. A device the
engine used that the plan does not list is planned at 0 and misses. The target's output
buffer is judged at the size the engine's own lines say it reaches (`output_growth`: the
start allocates n_seq_max rows, the first verification batch n_outputs_max).

The engine's lines behind each judgement (`relevant_lines`) are recorded in
tests/data/corpus-engine/ (`bench/real_models.py --record`) and judged again without the
engine (`replan`, tests/test_corpus_recorded.py).

Modes: `cpu` (the engine's own CPU module, `-nr`: every weight in the mapped file), `amx`
(the own module without `-nr`, on a CPU whose module is sapphirerapids: the AMX buffer),
`repack` (a copy of the engine whose only CPU module is haswell, without `-nr`:
CPU_REPACK), `vulkan` (the Vulkan engine on Vulkan0, every layer on the device), `cuda` (the
CUDA engine on CUDA0, bench/cuda_check.py on a machine with an NVIDIA GPU). The
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
from draftwise.core.launch import headless, launch_spec, prepare, session
from draftwise.core.machine import device_choice, engine_devices, hardware
from draftwise.core.machine.hardware import GB, Machine
from draftwise.core.planning import cpu_buffers, logparse, plan_types, planner
from draftwise.core.speculation import resolver
from draftwise.testing import gpu_launch
from draftwise.testing.corpus import build, nopopulate
from draftwise.testing.corpus.spec import ModelSpec

MiB = 1 << 20
BIG_RAM = 4096 * GB  # "plenty": the largest corpus file is ~380 GiB, mapped, never read
TOL_EXACT = 0.01
FLOOR_EXACT = 16 << 10
TOL_COMPUTE = 0.05
FLOOR_COMPUTE = 1 * MiB  # only where the engine's figure is below SMALL_COMPUTE
SMALL_COMPUTE = 20 * MiB
TOL_UNDER = 0.02  # no component the fit depends on planned more than 2 % below the engine's
CPU, AMX, REPACK, VULKAN, CUDA = "cpu", "amx", "repack", "vulkan", "cuda"
MODES = (CPU, AMX, REPACK, VULKAN, CUDA)
# The GPU modes: the engine's backend and the device every block is planned on. `cuda` is
# not a corpus row of its own (default_modes); bench/cuda_check.py starts it on a CUDA GPU
# and records it in tests/data/engine-lines/cuda-<gpu>/ (corpus/gpu_rows.py).
GPU_MODES: dict[str, tuple[Backend, str]] = {VULKAN: (Backend.VULKAN, "Vulkan0"), CUDA: (Backend.CUDA, "CUDA0")}
READY_TIMEOUT = 600.0
RELAY_CAP = 1536 * MiB  # the re-laying modes copy the weights into RAM: small files only
_SPEC_IMPL = re.compile(r"adding speculative implementation '([\w-]+)'")
_BUFFER_LINE = re.compile(r"(model|output|KV|RS|compute) buffer size|llama_kv_cache: size|error|failed|exception")
# What logparse and the judge read: the buffer lines, the KV cache's shape, where a draft
# context starts, the speculative implementations added, the fit step's bounds and
# projection, the devices used, the projector's lines; the engine's build and the CPU
# features it runs with (`system_info`).
_RELEVANT = re.compile(
    r"buffer size|llama_kv_cache\w*: size|creating MTP draft context|loading draft model '|"
    r"adding speculative implementation|fitting params to|common_fit_params: |projected to use|"
    r"using device|failed to initialize|No devices found|CLIP using|load_hparams:\s+model size|"
    r"state buffer size|print_info: build |system_info:|llama_context: n_seq_max |llama_context: n_outputs_max ")
_STAMP = re.compile(r"^\d+\.\d+\.\d+\.\d+ ")  # the engine's time stamp (0.00.813.345): not kept


def relevant_lines(text: str) -> list[str]:
    """The lines of an engine log the judgement reads (what tests/data/corpus-engine keeps)."""
    return [_STAMP.sub("", ln.rstrip()) for ln in text.splitlines() if _RELEVANT.search(ln)]


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
    engine_lines: list[str] = field(default_factory=list)  # relevant_lines of its log
    machine: Machine | None = None  # the described machine it was planned for
    # Set when the engine allocated and printed every buffer, then stopped on this CPU before
    # it was ready (`allocated_then_faulted`): its buffers are judged all the same.
    faulted: str = ""

    @property
    def judged(self) -> bool:
        """Its buffers were all allocated, so they were judged: ready, or faulted after."""
        return self.ready or bool(self.faulted)

    @property
    def misses(self) -> list[Row]:
        return [r for r in self.rows if not r.ok]

    @property
    def ok(self) -> bool:
        return self.judged and not self.problem and not self.misses

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "mode": self.mode, "ready": self.ready, "problem": self.problem,
                "load_s": round(self.load_s, 2), "wall_s": round(self.wall_s, 2), "argv": list(self.argv),
                "cpu_variant": self.cpu_variant, "engine_spec": list(self.engine_spec),
                "rows": [r.to_json() for r in self.rows]}  # fmt: skip


def _close(planned: int, actual: int, tol: float, floor: int) -> bool:
    """Within `tol` (at least `floor`) either way, and not more than TOL_UNDER under."""
    if actual - planned > max(TOL_UNDER * actual, FLOOR_EXACT):
        return False
    return abs(planned - actual) <= max(tol * actual, floor)


def _close_compute(planned: int, actual: int) -> bool:
    """Compute and a drafter's context: 5 %, a 1 MiB floor only below 20 MiB."""
    return _close(planned, actual, TOL_COMPUTE, FLOOR_COMPUTE if actual < SMALL_COMPUTE else FLOOR_EXACT)


_variants: dict[Path, str | None] = {}


def cpu_variant(binary: Path) -> str | None:
    """The CPU module this engine loads (its `--list-devices` at -lv 4)."""
    if binary not in _variants:
        _variants[binary] = engine_devices.probe_engine_devices(binary, timeout=60).cpu_variant
    return _variants[binary]


def described_cpu(binary: Path) -> Machine:
    return Machine(ram_total=BIG_RAM, ram_available=BIG_RAM, gpus=[], os=platform.system(),
                   notes=["the corpus judge's described machine"], described=True,
                   cpu_variant=cpu_variant(binary))  # fmt: skip


def described_vulkan(binary: Path, limits: dict[str, hardware.DeviceLimit] | None = None,
                     capacity: int | None = None) -> Machine:  # fmt: skip
    """This machine's Vulkan device as the engine lists it (lavapipe here), chosen by name,
    with plenty of RAM beside it; `limits`: the user's memory limit per device key (how the
    GPU tier makes a model overflow lavapipe). `capacity`: the device described with that
    many bytes instead of what it reports. lavapipe reports a 2048 MiB heap, but its memory
    is host RAM and the engine allocates past that figure without complaint, so a model
    larger than 2 GiB can still be planned and started with every block on it."""
    return described_gpu(binary, "Vulkan0", limits, capacity)


def described_gpu(binary: Path, device: str, limits: dict[str, hardware.DeviceLimit] | None = None,
                  capacity: int | None = None) -> Machine:  # fmt: skip
    """This machine's GPU `device` (Vulkan0, CUDA0) as the engine lists it, chosen by name,
    with plenty of RAM beside it (described_vulkan says what `limits` and `capacity` do)."""
    probed = hardware.inventory(binary, max_age=0)
    if capacity is not None:
        probed = replace(probed, gpus=[replace(g, total_bytes=capacity, free_bytes=capacity) for g in probed.gpus])
    machine = replace(probed, ram_total=BIG_RAM, ram_available=BIG_RAM, described=True)
    return device_choice.select(machine, [device], limits)


def _solo(model: Path, folder: Path) -> Path:
    """The model alone in a folder (a link), so the resolver finds no companion beside it."""
    d = folder / model.stem
    d.mkdir(parents=True, exist_ok=True)
    link = d / model.name
    if not link.exists():
        link.symlink_to(model)
    return link


_N_SEQ_MAX = re.compile(r"llama_context: n_seq_max\s*=\s*(\d+)")
_N_OUTPUTS_MAX = re.compile(r"llama_context: n_outputs_max\s*=\s*(\d+)")


def output_growth(lines: Sequence[str], actual: logparse.ActualMemory) -> tuple[str, int, list[str]]:
    """What the target's output buffer grows by after the start, from the engine's own lines:
    it is allocated for n_seq_max rows (`llama_context::output_reserve` at construction) and
    reallocated for a batch's outputs at the first decode that has more
    (`llama_context::decode` -> `output_reserve(n_outputs_all)`), up to the context's printed
    `n_outputs_max` (the server's `common_speculative_get_output_limits`: 1 + the drafted
    tokens per slot with a drafter). Returns (the buffer's device, the bytes it grows by,
    the lines it is read from)."""
    seqs = outs = None
    used: list[str] = []
    for ln in lines:
        if logparse._DRAFT_START.search(ln):
            break  # the target's context only
        m = _N_SEQ_MAX.search(ln)
        if m and seqs is None:
            seqs = int(m[1])
            used.append(ln.strip())
        m = _N_OUTPUTS_MAX.search(ln)
        if m and outs is None:
            outs = int(m[1])
            used.append(ln.strip())
    out = [ln for ln in actual.lines if ln.component == "output" and ln.context == logparse.TARGET]
    if not out or not seqs or not outs or outs <= seqs:
        return "", 0, used
    return logparse.device_of(out[0].buffer), out[0].bytes * (outs - seqs) // seqs, used


def compare(spec: ModelSpec, plan: planner.Plan, actual: logparse.ActualMemory, log: Sequence[str],
            growth: tuple[str, int, list[str]] = ("", 0, [])) -> list[Row]:  # fmt: skip
    """Planned vs actual per device and component; `growth`: the target's output buffer's
    growth after the start (`output_growth`), added to its device's compute and total."""
    rows: list[Row] = []
    seen = actual.by_device(logparse.TARGET)
    grow_dev, grow, grow_lines = growth
    if grow:
        seen.setdefault(grow_dev, {})["output"] = seen.get(grow_dev, {}).get("output", 0) + grow
    held = actual._held(logparse.TARGET)

    def lines_for(component: str, device: str) -> list[str]:
        pat = {"weights": "model buffer", "kv": "KV buffer", "rs": "RS buffer",
               "compute": "(compute|output) buffer"}[component]  # fmt: skip
        out = [ln.strip() for ln in log
               if re.search(pat + r" size", ln) and logparse.device_of(_buffer_of(ln)) == device]
        # The compute buffers first: they are what a compute miss is about.
        if component == "compute" and device == grow_dev and grow:
            out += grow_lines
        return sorted(out, key=lambda ln: "sched_reserve" not in ln)[:8]

    head = plan.bytes.embedded_head
    planned_devices: dict[str, plan_types.DeviceUse] = {}
    for d in plan.per_device:
        planned_devices[d.device or ("CPU" if d.kind == DeviceKind.CPU else d.name)] = d
    every = actual.by_device(None)  # both contexts: what the device holds in total
    for dev in [*planned_devices, *sorted(set(every) - set(planned_devices))]:
        d = planned_devices.get(dev)
        got = seen.get(dev, {})
        p_w = (d.weights if d else 0) + (head if dev == _head_device(plan) else 0)
        p_kv = d.kv if d else 0
        p_c = (d.compute + d.output) if d else 0
        for comp, p, a in (("weights", p_w, got.get("weights", 0)), ("kv", p_kv, got.get("kv", 0)),
                           ("compute", p_c, got.get("compute", 0) + got.get("output", 0))):  # fmt: skip
            if not p and not a:
                continue  # nothing planned, nothing allocated
            ok = _close_compute(p, a) if comp == "compute" else _close(p, a, TOL_EXACT, FLOOR_EXACT)
            rows.append(Row(dev, comp, p, a, ok, lines_for(comp, dev)))
        p_total = d.total if d else 0
        a_total = sum(every.get(dev, {}).values()) + (grow if dev == grow_dev else 0)
        if p_total or a_total:
            rows.append(Row(dev, "total", p_total, a_total, _close_compute(p_total, a_total),
                            [ln.strip() for ln in log if "buffer size" in ln
                             and logparse.device_of(_buffer_of(ln)) == dev][:12]))  # fmt: skip
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
        rows.append(Row("draft", "drafter", p, a, _close_compute(p, a),
                        [ln.strip() for ln in log if "buffer size" in ln][-4:]))  # fmt: skip
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
              prefs: planner.PlanPrefs | None = None, vulkan_capacity: int | None = None,
              cuda_engine: Path | None = None) -> Run:  # fmt: skip
    """One launch of `path` (the corpus file of `spec`) in `mode`, judged.

    `companion`: a drafter file to launch beside it (a Gemma 4 assistant) as the app's
    Draft model. When the app refuses it, the target is planned alone and started with the
    drafter anyway (`--spec-type draft-mtp --spec-draft-model`), so the drafter's own
    buffers are measured against a plan that has none for them. `limits` (vulkan): a memory
    limit on the device, `vulkan_capacity` (vulkan): its described size (`described_vulkan`);
    `prefs`: the plan's preferences (default: the spec's context). `cuda`: every block on
    CUDA0 of `cuda_engine` (limits apply there too)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    started = time.monotonic()
    work = work or Path(tempfile.mkdtemp(prefix="draftwise-judge-"))
    backend = Backend.CPU
    if mode == VULKAN:
        if vulkan_engine is None:
            return Run(spec.name, mode, False, problem="no Vulkan engine")
        binary, backend = vulkan_engine, Backend.VULKAN
        machine = described_vulkan(binary, limits, vulkan_capacity)
    elif mode == CUDA:
        if cuda_engine is None:
            return Run(spec.name, mode, False, problem="no CUDA engine")
        binary, backend = cuda_engine, Backend.CUDA
        machine = described_gpu(binary, GPU_MODES[CUDA][1], limits)
    else:
        binary = cpu_engine
        if mode == REPACK:
            binary = gpu_launch.engine_with_cpu_variant(cpu_engine, work / "engine-haswell", "haswell")
        machine = described_cpu(binary)
        if mode == AMX and machine.cpu_variant not in cpu_buffers.AMX_VARIANTS:
            return Run(spec.name, mode, False, problem=f"the engine loads {machine.cpu_variant}, not an AMX module")
    engine = session.Engine(binary, capabilities.capabilities(binary), backend)
    run = Run(spec.name, mode, False, cpu_variant=machine.cpu_variant, machine=machine)
    planned, draft_argv = _prepare(run, spec, path, mode, engine, machine, work, companion, prefs)
    prepared = planned.prepared
    plan = run.plan = prepared.plan
    if not plan.fits:
        run.problem = "the plan does not fit: " + "; ".join(str(r) for r in plan.reasons)
        return run
    ls = planned.spec(launch_spec.any_free_port())
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
        run.faulted = allocated_then_faulted(mode, server.process.returncode if server.process else None, text)
        if not run.faulted:
            errs = [ln.strip() for ln in text.splitlines() if re.search(r"error|failed|exception|abort", ln, re.I)]
            run.problem = "; ".join(p for p in (run.problem, (errs[-1] if errs else str(exc))[-400:]) if p)
    finally:
        server.stop()
    text = server.log_text()
    run.engine_lines = relevant_lines(text)
    if run.judged:
        judge_lines(run, spec, prepared, text.splitlines(), draft_argv)
    run.wall_s = time.monotonic() - started
    return run


# SIGILL as Popen and a shell report it.
_ILLEGAL_INSTRUCTION = (-4, 128 + 4)


def allocated_then_faulted(mode: str, returncode: int | None, text: str) -> str:
    """Why an `amx` start that died is judged all the same, or "": a CPU that reports AMX
    while its virtual machine does not run it (this project's CI machine, a Xeon VM) stops
    with an illegal instruction at the first AMX kernel, after every buffer was allocated
    and printed (the compute buffer's line comes last). The app relaunches such a start
    with -nr and remembers it (crash.feature_fix); what the plan sized was allocated."""
    if mode != AMX or returncode not in _ILLEGAL_INSTRUCTION or "compute buffer size" not in text:
        return ""
    return "the engine allocated its buffers, then stopped with an illegal instruction (this CPU's AMX kernels)"


def mode_args(mode: str) -> tuple[str, ...]:
    """The engine arguments the judge adds in `mode`: no warm-up, and `-nr` where mapped."""
    return ("--no-warmup", "-nr") if mode in (CPU, *GPU_MODES) else ("--no-warmup",)


def _prepare(run: Run, spec: ModelSpec, path: Path, mode: str, engine: session.Engine, machine: Machine,
             work: Path, companion: Path | None, prefs: planner.PlanPrefs | None,
             ) -> tuple[session.PlannedLaunch, tuple[str, ...]]:  # fmt: skip
    """The app's plan and launch for `path` on `machine` (the model alone in a folder), by
    the launch session as every launch, with none of a user's records."""
    model = _solo(path, work / "models")
    mtp = resolver.MtpMode.AUTO if spec.spec_type == "draft-mtp" else resolver.MtpMode.OFF
    draft_argv: tuple[str, ...] = ()
    request = prepare.Request(model=model, mtp=mtp, extra_args=mode_args(mode),
                              prefs=prefs or planner.PlanPrefs(ctx=spec.ctx))  # fmt: skip

    def plan(r: prepare.Request) -> session.PlannedLaunch:
        return session.plan_launch(r, engine, machine, session.Records.none())

    if companion is not None:
        try:
            planned = plan(replace(request, draft=companion, mtp=resolver.MtpMode.AUTO))
        except prepare.PrepareError as exc:
            run.problem = f"the app refuses {companion.name} as the drafter: {exc.message}"
            planned = plan(request)
            draft_argv = ("--spec-type", "draft-mtp", "--spec-draft-model", str(companion))
    else:
        planned = plan(request)
    if spec.spec_type and planned.prepared.spec.spec_type != spec.spec_type:
        run.problem = f"the app did not choose {spec.spec_type}: {[str(n) for n in planned.prepared.spec.notes]}"
    return planned, draft_argv


def judge_lines(run: Run, spec: ModelSpec, prepared: prepare.Prepared, lines: Sequence[str],
                draft_argv: tuple[str, ...] = ()) -> Run:  # fmt: skip
    """The engine's lines of a ready start against the plan: the speculation it added, its
    buffers per device and component (`compare`)."""
    text = "\n".join(lines)
    run.engine_spec = tuple(_SPEC_IMPL.findall(text))
    chosen = prepared.spec.spec_type if not draft_argv else None
    if chosen and not set(chosen.split(",")) <= set(run.engine_spec):
        run.problem = "; ".join(p for p in (run.problem, f"the app passed {chosen}, the engine runs "
                                            f"{', '.join(run.engine_spec) or 'no speculation'}") if p)
    actual = logparse.parse_lines(lines)
    run.rows = compare(spec, prepared.plan, actual, [ln for ln in lines if _BUFFER_LINE.search(ln)],
                       output_growth(lines, actual))  # fmt: skip
    device = GPU_MODES[run.mode][1] if run.mode in GPU_MODES else None
    if device is not None and device not in actual.by_device():
        run.problem = f"the engine put nothing on {device}"
    return run


def replan(spec: ModelSpec, path: Path, mode: str, *, caps: capabilities.EngineCaps, machine: Machine,
           lines: Sequence[str], work: Path, companion: Path | None = None,
           prefs: planner.PlanPrefs | None = None) -> Run:  # fmt: skip
    """A recorded start judged again without the engine: the plan made now for the machine
    it was recorded on, against the engine's recorded lines; `prefs` as the start had them
    (default: the spec's context)."""
    run = Run(spec.name, mode, True, cpu_variant=machine.cpu_variant, machine=machine, engine_lines=list(lines))
    # No engine here: the session plans for a binary that is not there (no record names it).
    backend = GPU_MODES[mode][0] if mode in GPU_MODES else Backend.CPU
    engine = session.Engine(work / "recorded" / "llama-server", caps, backend)
    planned, draft_argv = _prepare(run, spec, path, mode, engine, machine, work, companion, prefs)
    prepared = planned.prepared
    run.plan = prepared.plan
    if not prepared.plan.fits:
        run.problem = "the plan does not fit: " + "; ".join(str(r) for r in prepared.plan.reasons)
        return run
    return judge_lines(run, spec, prepared, lines, draft_argv)


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
