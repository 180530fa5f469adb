"""A plan beside what the engine really allocated (its buffer lines, core/planning/logparse.py):
per component, per device (workers included), and weights and KV per engine device.
"""

from __future__ import annotations

from typing import Any

from draftwise.core.kinds import DeviceKind
from draftwise.core.planning.logparse import ActualMemory
from draftwise.core.planning.plan_types import Plan


# ------------------------------------------------------------------ planned vs actual
def compare(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Rows of planned and actual bytes per component, for the window after a launch.

    `error` is (planned - actual) / actual; None where the engine reported nothing."""
    a = actual.summary()
    rows = []
    planned = p.bytes.to_json()
    # Compare like with like: the engine reports an embedded MTP head in the model buffer.
    planned["weights"] += p.bytes.embedded_head
    planned["drafter"] -= p.bytes.embedded_head
    for key in ("weights", "kv", "drafter", "compute", "output", "total"):
        pv = planned[key] if key != "total" else p.bytes.total
        av = a.get(key, 0)
        err = (pv - av) / av if av else None
        rows.append({"component": key, "planned": pv, "actual": av,
                     "error": None if err is None else round(err, 4)})  # fmt: skip
    return rows


def compare_devices(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Planned and actual bytes per device (workers included), from the engine's buffer lines:
    a device's own buffers by name (`CUDA0`, `RPC0[host:port]`); RAM is every `CPU*` buffer
    and the GPUs' pinned host buffers (`CUDA_Host`). `error` is (planned - actual) / actual."""
    held = actual.by_buffer_component()
    rows = []
    for d in p.per_device:
        if d.kind == DeviceKind.CPU:
            keys = [b for b in held if b.startswith("CPU") or b.endswith("_Host")]
        else:
            keys = [b for b in held if b == d.buffer]
        got = {c: sum(held[b].get(c, 0) for b in keys) for c in ("weights", "kv", "rs", "compute", "output")}
        planned = {"weights": d.weights, "kv": d.kv, "compute": d.compute, "output": d.output,
                   "drafter": d.drafter, "total": d.total}  # fmt: skip
        real = {"weights": got["weights"], "kv": got["kv"] + got["rs"], "compute": got["compute"],
                "output": got["output"], "total": sum(got.values())}  # fmt: skip
        row: dict[str, Any] = {"device": d.name, "worker": d.worker, "layers": d.layers,
                               "planned": planned, "actual": real}  # fmt: skip
        row["error"] = {k: None if not real.get(k) else round((planned[k] - real[k]) / real[k], 4)
                        for k in ("weights", "kv", "compute", "total")}  # fmt: skip
        rows.append(row)
    return rows


def compare_device_components(p: Plan, actual: ActualMemory) -> list[dict[str, Any]]:
    """Planned and actual weights and KV per device (the engine's device names; RAM is
    "CPU"), for the GPU tier and bench/gpu_path.py. `error` is (planned - actual) / actual."""
    seen = actual.by_device()
    rows = []
    for d in p.per_device:
        name = d.device or ("CPU" if d.kind == DeviceKind.CPU else d.name)
        got = seen.get(name, {})
        for comp, planned in (("weights", d.weights), ("kv", d.kv)):
            real = got.get(comp, 0)
            if not planned and not real:
                continue
            err = (planned - real) / real if real else None
            rows.append({"device": name, "component": comp, "planned": planned, "actual": real,
                         "error": None if err is None else round(err, 4)})  # fmt: skip
    return rows
