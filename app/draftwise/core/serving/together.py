"""How many models stay loaded at once, so that any set the router may hold fits.

The router keeps up to `--models-max` instances and unloads the least recently used one to
load another (server-models.cpp `unload_lru`), so any `models_max` of the served models may
be loaded side by side. Each model is therefore planned on its share of this machine: with
`k` loaded together, a `1/k` share of the free RAM and of each GPU's free memory
(`share`). The planner then picks its context, offload and host caches within that share,
so any `k` of them fit the whole (`Budget.check` adds up the `k` largest per device).
`k` is the largest count, up to `MAX_TOGETHER`, at which every model fits its share; a model
that only fits with the whole machine makes it 1, and the plan says which and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from draftwise.core.kinds import DeviceKind
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, msg
from draftwise.core.readable import human_bytes

# The engine's own default for --models-max (common/common.h), and our upper bound: each
# instance is a process with its own compute buffers and threads.
MAX_TOGETHER = 4


def share(machine: Machine, k: int) -> Machine:
    """`machine` as one of `k` models loaded together sees it: its RAM and each GPU's free
    memory divided by `k`."""
    if k <= 1:
        return machine
    return replace(machine, ram_available=machine.ram_available // k,
                   gpus=[replace(g, free_bytes=g.free_bytes // k) for g in machine.gpus])


@dataclass(frozen=True)
class DeviceBudget:
    """One device: what it can give, and the most that `models_max` planned models take on it."""

    device: str  # the plan's name for it ("RAM", "Vulkan0 (…)")
    capacity: int  # the whole machine's (free memory less the margin), as planned alone
    worst: int  # the sum of the `models_max` largest plans on it

    @property
    def fits(self) -> bool:
        return self.worst <= self.capacity

    def to_json(self) -> dict[str, object]:
        return {"device": self.device, "capacity": self.capacity, "largest_together": self.worst,
                "fits": self.fits}


@dataclass(frozen=True)
class Budget:
    models_max: int
    devices: tuple[DeviceBudget, ...]
    words: tuple[Message, ...] = ()
    alone: tuple[str, ...] = ()  # the models that only fit with the machine to themselves

    @property
    def fits(self) -> bool:
        return all(d.fits for d in self.devices)

    def to_json(self) -> dict[str, object]:
        return {"models_max": self.models_max, "devices": [d.to_json() for d in self.devices],
                "run_alone": list(self.alone), "why": [str(w) for w in self.words]}


def device_bytes(per_device: Sequence) -> dict[str, int]:
    """The planned bytes of each device a plan uses (`DeviceUse.total`, what the start
    allocates: what its buffer lines say), by the device's name; devices with nothing on
    them left out."""
    return {d.name: int(d.total) for d in per_device if d.total or d.kind != DeviceKind.CPU}


def held_bytes(per_device: Sequence) -> dict[str, int]:
    """What a loaded instance may hold on each device while it serves: what it allocates at
    start, and the host caches it fills later (`DeviceUse.host_cache`: context checkpoints,
    the prompt cache), which the plan sized from its share."""
    return {d.name: int(d.total + d.host_cache) for d in per_device if d.total or d.kind != DeviceKind.CPU}


def check(models_max: int, planned: Mapping[str, Sequence], capacities: Mapping[str, int],
          words: Sequence[Message] = (), alone: Sequence[str] = ()) -> Budget:
    """The budget of `planned` (model id → its plan's per-device uses): on each device the
    `models_max` largest added up (what each holds while it serves: `held_bytes`), against
    the whole machine's capacity."""
    per: dict[str, list[int]] = {}
    for uses in planned.values():
        for name, used in held_bytes(uses).items():
            per.setdefault(name, []).append(used)
    devices = tuple(
        DeviceBudget(name, int(capacities.get(name, 0)), sum(sorted(sizes, reverse=True)[:models_max]))
        for name, sizes in sorted(per.items()))
    return Budget(models_max, devices, tuple(words), tuple(alone))


def alone_words(ident: str, needs: int, capacity: int, k: int) -> Message:
    return msg("{id} needs {needs} of this computer's {capacity}, more than a 1-in-{k} share, so models are "
               "loaded one at a time: a request for another model unloads the one loaded first.",
               id=ident, needs=human_bytes(needs), capacity=human_bytes(capacity), k=k)


def together_words(k: int, n: int) -> Message:
    return msg("Up to {k} of the {n} models stay loaded together; each is planned on a 1-in-{k} share of this "
               "computer's memory, so any {k} of them fit. A request for another unloads the one used longest ago.",
               k=k, n=n)
