"""One launch session: the records, the engine and the machine in; one planned launch out.

Every caller that starts (or shows, or measures) a launch — the window's re-plan and Launch,
`draftwise plan`, `launch` and `measure`, the window's measurement, the self-test and the
machine check — comes here, so what was remembered is applied the same way everywhere
(docs/launch-path.md):

1. the engine fixes remembered for this model on these devices, or for this machine
   (core/launch/fixes.py), unless the user set that option;
2. the ladder rung remembered after running out of memory (core/launch/ladder_record.py);
3. the drafters that made this engine fail (core/speculation/broken.py);
4. the speed measurements of this combination (core/measuring/records/measured.py).

`prepare.prepare` is this module's helper: nothing else in the app calls it (the
out-of-memory ladder re-plans through it with the inputs this session gave it,
`PlannedLaunch.ladder`), nor do the corpus judge, the GPU tier's launch and the benches
(`tests/test_architecture.py` checks); only tests of prepare itself do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from draftwise.core import identity
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import Backend
from draftwise.core.launch import ladder as ladder_mod
from draftwise.core.launch import prepare
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Concessions, Ladder
from draftwise.core.launch.ladder_record import LadderRecord, remember
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.machine import device_choice, hardware, speed
from draftwise.core.measuring.records.measured import MeasuredRecords, Measurement
from draftwise.core.messages import Message, Text
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters


@dataclass
class Records:
    """The four stores a launch consults. A store left None is not consulted (the self-test
    plans a generated model; the machine check only applies the engine fixes)."""

    broken: BrokenDrafters | None = None
    measured: MeasuredRecords | None = None
    ladder: LadderRecord | None = None
    fixes: EngineFixes | None = None

    @classmethod
    def load(cls, machine: hardware.Machine | None = None) -> Records:
        """The user's records (paths.data_dir()); `machine` files the machine-wide fixes."""
        machine = machine if isinstance(machine, hardware.Machine) else None
        return cls(BrokenDrafters(), MeasuredRecords(), LadderRecord(), EngineFixes(machine=machine))

    @classmethod
    def none(cls) -> Records:
        return cls()

    def problems(self) -> list[Text]:
        """What could not be read (a store set aside, a file unreadable), each once, to show."""
        out: list[Text] = []
        for store in (self.broken, self.measured, self.ladder, self.fixes):
            problem = getattr(store, "problem", None)
            if problem and problem not in out:
                out.append(problem)
        return out


@dataclass(frozen=True)
class Engine:
    """The engine a launch runs: its binary, its build's GPU backend, its capabilities."""

    binary: Path
    caps: EngineCaps
    backend: Backend = Backend.CPU  # the build's: cpu, cuda, rocm, vulkan, metal


@dataclass(frozen=True)
class PlannedLaunch:
    """One launch, planned with everything remembered applied."""

    prepared: prepare.Prepared  # what runs (the rung applied)
    request: prepare.Request  # the user's request with the remembered fixes, before the rung
    engine: Engine
    machine: hardware.Machine
    records: Records
    start: Concessions = field(default_factory=Concessions)  # the remembered rung it starts at
    fixes: tuple[str, ...] = ()  # the remembered engine fixes it added to the arguments
    measured: bool = False  # the speed measurements had their say (the ladder's re-plans keep that)

    @property
    def measurement(self) -> Measurement | None:
        return self.prepared.measurement

    @property
    def problems(self) -> list[Text]:
        return self.records.problems()

    def spec(self, port: int | None = None, api_key: str | None = None,
             notes: Sequence[Text] = ()) -> LaunchSpec:
        """The LaunchSpec (argv, environment, key, fallback argv) for this port and key."""
        machine = self.machine if isinstance(self.machine, hardware.Machine) else None
        backend = self.engine.backend
        return self.prepared.launch(
            self.engine.binary, engine_backend=backend, gpus=getattr(self.machine, "gpus", ()), port=port,
            api_key=api_key, notes=tuple(notes),
            chosen_gpus=device_choice.visible_for(machine, backend) if machine is not None else None,
            requested=machine.requested if machine is not None else (),
        )

    def ladder(self, launch: LaunchSpec,
               on_success: Callable[[Concessions, Message], list[Message]] | None = None) -> Ladder | None:
        """The out-of-memory ladder for `launch` (built by `spec`): it re-plans with this
        session's records; on success the rung is remembered (default: in the ladder record)."""
        records = self.records
        if on_success is None and records.ladder is not None and self.machine is not None:
            on_success = remember(records.ladder, self.request.model, self.machine, Path(self.engine.binary))
        return ladder_mod.for_launch(
            self.request, self.prepared, launch, caps=self.engine.caps, machine=self.machine,
            broken=_broken(records, self.engine, self.request), start=self.start, on_success=on_success,
            measured=records.measured if self.measured else None,
            engine=Path(self.engine.binary) if self.measured else None,
        )


def plan_launch(
    request: prepare.Request,
    engine: Engine,
    machine: hardware.Machine,
    records: Records,
    *,
    model: gguf.ModelInfo | None = None,
    full: bool = False,
    ignore_measurements: bool = False,
) -> PlannedLaunch:
    """Plan `request` with the remembered fixes, rung, broken drafters and measurements.

    `full`: forget the remembered rung first (`launch --full`, "Try full settings again").
    `ignore_measurements`: a measurement measures the drafter even where an old record of a
    slower run left it out (`measure`). PrepareError for a user error."""
    binary = Path(engine.binary)
    # Records are llama.cpp's (other engines plan their own memory), filed under the build.
    applies = request.backend == resolver.LLAMA_CPP and machine is not None
    fixes: tuple[str, ...] = ()
    if applies and records.fixes is not None and isinstance(machine, hardware.Machine):
        store = records.fixes
        fixes = store.applicable(store.args_for(binary, request.model, devices_of(machine)), request.extra_args)
        request = replace(request, extra_args=(*request.extra_args, *fixes))
    start = Concessions()
    if applies and records.ladder is not None:
        if full:
            records.ladder.forget(request.model, machine, binary)
        start = records.ladder.lookup(request.model, machine, binary)
    measured = records.measured if applies and not ignore_measurements else None
    if applies and request.prefs.cpu_rate is None:
        # The processor's measured rate (never measured here: a probe runs the engine) for the
        # dense offload's cost model (core/planning/ffn_offload.py).
        tp = speed.recorded(binary) or speed.recorded(None)
        if tp is not None:
            request = replace(request, prefs=replace(request.prefs, cpu_rate=tp.cpu))
    prepared = prepare.prepare(
        ladder_mod.apply(request, start), engine.caps, machine, broken=_broken(records, engine, request),
        model=model, measured=measured, engine=binary if measured is not None else None,
    )
    return PlannedLaunch(prepared, request, engine, machine, records, start, fixes, measured is not None)


def devices_of(machine: hardware.Machine) -> tuple[str, ...]:
    """The device names a per-model engine fix is filed under (identity.launch_devices: the
    machine's selected GPUs, or the ones asked for), the same that `PlannedLaunch.spec` gives
    the launch to write a fix under; a machine-wide one (the CPU's) is found without them."""
    return identity.launch_devices(machine.gpus, machine.requested)


def _broken(records: Records, engine: Engine, request: prepare.Request) -> frozenset[str]:
    if records.broken is None or request.backend != resolver.LLAMA_CPP:
        return frozenset()
    return frozenset(records.broken.broken_for(Path(engine.binary)))
