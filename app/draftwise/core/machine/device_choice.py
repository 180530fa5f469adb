"""Which GPUs one launch uses, and which of them the engine is shown.

`select` turns the probed machine into the machine one launch sees: the devices the user
chose (`--device`, the window's picker) or Draftwise's automatic choice (never a software
device), with the user's memory limits, renamed the way the engine numbers what it is
shown. `visible_for` gives the physical indexes a launch makes visible per backend
(GGML_VK_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, ...; core/launch sets the variable), so the
engine sees exactly the GPUs planned on. `limits_from` reads the user's limits as settings
store them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from draftwise.core.kinds import Backend
from draftwise.core.machine.machine_types import _DEVICE_PREFIX, _PREFIX, DeviceLimit, Gpu, Machine


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
