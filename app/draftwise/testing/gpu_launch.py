"""One launch the way `draftwise launch` does it, with what came of it, for the GPU tier and
bench/gpu_path.py: the machine probed from the engine, the devices chosen, the request
prepared and planned, the engine started by the headless driver, one request answered, and
the engine's own lines read back (buffers per device, the GPU verdict).
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core.engines import capabilities
from draftwise.core.kinds import Backend, MtpMode
from draftwise.core.launch import headless, launch_flow, launch_spec, prepare, session
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.gpu_check import GpuVerdict
from draftwise.core.machine import device_choice, hardware
from draftwise.core.measurements.measured import MeasuredRecords
from draftwise.core.planning import logparse, planned_vs_actual, planner


@dataclass
class Outcome:
    prepared: prepare.Prepared
    spec: launch_spec.LaunchSpec
    machine: hardware.Machine
    ready: bool
    verdict: GpuVerdict | None
    actual: logparse.ActualMemory
    rows: list[dict[str, Any]]  # planned_vs_actual.compare_device_components
    completion: dict[str, Any] | None
    tokens_per_second: float | None
    actions: list[launch_flow.Action] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    @property
    def argv(self) -> tuple[str, ...]:
        return self.spec.argv

    def row(self, device: str, component: str) -> dict[str, Any] | None:
        return next((r for r in self.rows if r["device"] == device and r["component"] == component), None)


def _complete(spec: launch_spec.LaunchSpec, prompt: str, n_predict: int) -> dict[str, Any] | None:
    try:
        return headless.complete(spec.url, spec.api_key, prompt, n_predict=n_predict, timeout=120)
    except (headless.EngineError, OSError, http.client.HTTPException):
        return None


def run(binary: Path, backend: str, model: Path, *, log_dir: Path, devices: Sequence[str] | None = None,
        limits: Mapping[str, hardware.DeviceLimit] | None = None,
        prefs: planner.PlanPrefs | None = None, extra_args: Sequence[str] = (),
        fixes: EngineFixes | None = None, prompt: str = "Hello", n_predict: int = 8,
        ready_timeout: float = 180.0, measured: MeasuredRecords | None = None) -> Outcome:  # fmt: skip
    machine = device_choice.select(hardware.inventory(binary, max_age=0), devices, limits)
    fixes = fixes.for_machine(machine) if fixes is not None else None
    request = prepare.Request(model=model, mtp=MtpMode.OFF, extra_args=tuple(extra_args),
                              prefs=prefs or planner.PlanPrefs(ctx=512))  # fmt: skip
    # The launch session, as every launch: the remembered fixes applied there, the chosen
    # devices' environment built there.
    engine = session.Engine(binary, capabilities.capabilities(binary), Backend(backend))
    planned = session.plan_launch(request, engine, machine, session.Records(fixes=fixes, measured=measured))
    prepared = planned.prepared
    spec = planned.spec(launch_spec.any_free_port())
    actions: list[launch_flow.Action] = []
    log_path = log_dir / f"engine-{spec.port}.log"
    run_ = headless.HeadlessLaunch(spec, fixes=fixes, on_action=actions.append, log_path=log_path,
                                   record_run=False)  # fmt: skip
    completion = None
    speed = None
    try:
        run_.start()
        ready = run_.wait_ready(ready_timeout)
        if ready:
            t0 = time.monotonic()
            completion = _complete(spec, prompt, n_predict)
            if completion is None:
                # A crash on the first request (a driver fault): the flow may relaunch once.
                deadline = time.monotonic() + 10.0
                while time.monotonic() < deadline and not run_.flow.ended and run_.flow.is_ready:
                    run_.pump(0.1)
                if run_.flow.fix is not None and run_.wait_ready(ready_timeout):
                    t0 = time.monotonic()
                    completion = _complete(spec, prompt, n_predict)
            if completion is not None:
                speed = (completion.get("timings") or {}).get("predicted_per_second") or (
                    n_predict / max(time.monotonic() - t0, 1e-6))
            run_.pump(0.1)
            ready = run_.flow.is_ready
    finally:
        run_.stop()
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines() if log_path.exists() else list(run_.log)
    if run_.flow.attempt:
        # Only the last start's lines describe what is running now.
        cut = max((i for i, x in enumerate(lines) if "llama_server: initializing" in x), default=0)
        lines = lines[cut:]
    actual = logparse.parse_lines(lines)
    return Outcome(prepared, spec, machine, ready, run_.flow.gpu_verdict, actual,
                   planned_vs_actual.compare_device_components(prepared.plan, actual), completion, speed, actions, lines)


def engine_with_cpu_variant(binary: Path, folder: Path, variant: str) -> Path:
    """A copy of the engine at `binary` whose only CPU module is `variant`
    (libggml-cpu-<variant>.so): the engine loads the best module beside its executable, so
    this is how a test sees what another CPU would load (CPU_REPACK on an AVX2 CPU without
    AMX). The executable is copied, the libraries linked."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    for lib in binary.parent.iterdir():
        if lib.name.startswith("libggml-cpu-") and not lib.name.startswith(f"libggml-cpu-{variant}."):
            continue
        target = folder / lib.name
        if target.exists() or target.is_symlink():
            continue
        if lib == binary:
            shutil.copy2(lib, target)
        else:
            target.symlink_to(lib)
    return folder / binary.name
