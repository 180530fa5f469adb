"""One launch session: the records, the engine and the machine in; one planned launch out.

Every caller that starts (or shows, or measures) a launch — the window's re-plan and Launch,
`draftwise plan`, `launch` and `measure`, the window's measurement, the self-test and the
machine check — comes here, so what was remembered is applied the same way everywhere
(docs/launch-path.md):

1. the engine fixes remembered for this model on these devices, or for this machine
   (core/launch/fixes.py), unless the user set that option;
2. the ladder rung remembered after running out of memory (core/launch/ladder_record.py);
3. the drafters that made this engine fail (core/speculation/broken.py);
4. the speed measurements of this combination (core/measurements/measured.py), and the
   engine's speed settings measured for this model, engine build and machine
   (core/measurements/tuned.py), less what the user's own arguments or a remembered
   engine fix (1.) already set, which win; the plan reads them (no re-laid copies with -nr,
   the compute buffer of -ub) and says which and why;
5. the links to the workers listed (core/rpc/link.py) and each worker's compute rate
   against this computer's (core/rpc/worker_rate.py): with `--use-workers auto` a worker
   is used only when the model does not fit without it or it makes the model faster over
   its link (core/rpc/split_speed.py); the plan says which and why (`plan.speed`). This
   computer's speed, unknown, is measured first (core/launch/speed_probe.py); where the
   engine cannot measure it, a worker is used only where the model does not fit without it.

The fixes (1.) and settings (4.) join the request as data (`Request.engine`, EngineSettings),
never as argv to be parsed back: the plan takes them as inputs and `Prepared.launch` renders
the rest once, after the user's arguments (docs/launch-path.md "Draftwise's own options").

`prepare.prepare` is this module's helper: nothing else in the app calls it (the
out-of-memory ladder re-plans through it with the inputs this session gave it,
`PlannedLaunch.ladder`), nor do the corpus judge, the GPU tier's launch and the benches
(`tests/test_architecture.py` checks); only tests of prepare itself do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from draftwise.core import identity
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import Backend, WorkerUse
from draftwise.core.launch import fixes as fixes_mod
from draftwise.core.launch import ladder as ladder_mod
from draftwise.core.launch import ladder_record, prepare, speed_probe
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.ladder import Concessions, Ladder
from draftwise.core.launch.ladder_record import LadderRecord, remember
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.machine import device_choice, hardware, speed
from draftwise.core.measurements import measured as measured_mod
from draftwise.core.measurements import prompt_log as prompt_log_mod
from draftwise.core.measurements import tuned
from draftwise.core.measurements import usage as usage_mod
from draftwise.core.measurements.measured import MeasuredRecords, Measurement
from draftwise.core.measurements.usage import UsageRecords
from draftwise.core.messages import Message, Text, msg
from draftwise.core.rpc import link, split_speed, upload, worker_rate
from draftwise.core.speculation import broken as broken_mod
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters

log = logging.getLogger(__name__)

# The link to a worker for an engine build: kept a day, else measured (link.link_to); raises
# link.LinkError when it cannot be measured.
LinkSource = Callable[[str, Path], "link.Link | None"]


def measured_link(endpoint: str, binary: Path) -> link.Link | None:
    """The link with the worker's compute rate against this computer's figure for `binary`
    (worker_rate.here: kept per engine build, measured with its ggml-rpc-server once)."""
    return link.link_to(endpoint, identity.engine_build_key(binary), reference=lambda: worker_rate.here(binary))


@dataclass
class Records:
    """The stores a launch consults, and the one place they are made (`load`): the plan, the
    engine it starts (its fixes and broken drafters), the ladder it climbs and the measurement
    it runs all use the `Records` the plan was made from, so a record written by one is read
    by the next. A store left None is not consulted (the self-test plans a generated model;
    the machine check only applies the engine fixes).

    Write errors, the same for every store (core/records.py): a failed write raises OSError
    (`records.NotWritten` for a file that must not be written over), and the caller names it
    to the user with `records.write_error`; no store swallows one."""

    broken: BrokenDrafters | None = None
    measured: MeasuredRecords | None = None
    ladder: LadderRecord | None = None
    fixes: EngineFixes | None = None
    # Where the links to workers come from (None: not consulted, every worker listed is used).
    links: LinkSource | None = None
    # The user's own requests and prompts, measured as they run (learn from use); not a
    # launch input, so not among `problems`.
    usage: UsageRecords | None = None

    @classmethod
    def load(cls, machine: hardware.Machine | None = None, *, folder: Path | None = None) -> Records:
        """The user's records (paths.data_dir(), or `folder`); `machine` files the
        machine-wide fixes. Cheap: each store reads its file when asked."""
        machine = machine if isinstance(machine, hardware.Machine) else None

        def at(name: str) -> Path | None:
            return folder / name if folder is not None else None

        return cls(BrokenDrafters(at(broken_mod.FILE_NAME)), MeasuredRecords(at(measured_mod.FILE_NAME)),
                   LadderRecord(at(ladder_record.FILE_NAME)), EngineFixes(at(fixes_mod.FILE_NAME), machine=machine),
                   links=measured_link, usage=UsageRecords(at(usage_mod.FILE_NAME)))

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
    fixes: EngineSettings = DEFAULTS  # the remembered engine fixes it added (`request.engine`)
    measured: bool = False  # the speed measurements had their say (the ladder's re-plans keep that)
    settings: EngineSettings = DEFAULTS  # the measured engine settings it added (`request.engine`)

    @property
    def measurement(self) -> Measurement | None:
        return self.prepared.measurement

    @property
    def problems(self) -> list[Text]:
        return self.records.problems()

    def spec(self, port: int | None = None, api_key: str | None = None,
             notes: Sequence[Text] = (), *, log_prompts: bool = False) -> LaunchSpec:
        """The LaunchSpec (argv, environment, key, fallback argv) for this port and key.

        `log_prompts`: the user's engine, with their consent to keep prompts (`launch`, the
        window's launch, `serve`, and `plan` showing what they run): llama-server logs each
        request's prompt into the model's folder of the usage records
        (core/measurements/prompt_log.py). A measurement's engines never do: they start from
        `prepared.launch`, not from here, and the prompts are Draftwise's own."""
        machine = self.machine if isinstance(self.machine, hardware.Machine) else None
        backend = self.engine.backend
        usage = self.records.usage
        prompt_log = (None if not log_prompts or usage is None or self.request.backend != resolver.LLAMA_CPP
                      else prompt_log_mod.folder(usage, self.prepared.model.path))
        launch = self.prepared.launch(
            self.engine.binary, engine_backend=backend, gpus=getattr(self.machine, "gpus", ()), port=port,
            api_key=api_key, notes=tuple(notes),
            chosen_gpus=device_choice.visible_for(machine, backend) if machine is not None else None,
            requested=machine.requested if machine is not None else (), prompt_log=prompt_log,
        )
        speed_choice = self.prepared.speed
        sends = upload.uploads(self.prepared.plan.per_device, speed_choice.links if speed_choice is not None else ())
        return replace(launch, uploads=sends) if sends else launch

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
    # Draftwise's own options join the request as data (Request.engine), never as arguments:
    # the user's own arguments win over a remembered fix, and both over a measured setting.
    fixes = DEFAULTS
    if applies and records.fixes is not None and isinstance(machine, hardware.Machine):
        fixes = records.fixes.settings_for(binary, request.model, devices_of(machine)).without(request.extra_args)
    start = Concessions()
    if applies and records.ladder is not None:
        if full:
            records.ladder.forget(request.model, machine, binary)
        start = records.ladder.lookup(request.model, machine, binary)
    measured = records.measured if applies and not ignore_measurements else None
    settings = DEFAULTS
    settings_notes: list[Message] = []
    if measured is not None:
        kept = measured.tuned().get(tuned.key_for(request.model, binary, machine))
        if kept is not None:
            # A remembered fix (and the user's own argument) outranks a measured choice.
            settings = tuned.applicable(kept, engine.caps.has_flag, request.extra_args).less(fixes)
            settings_notes = kept.notes(settings)
    if not fixes.default or not settings.default:
        request = replace(request, engine=request.engine.merged(settings).merged(fixes))
    if applies and request.prefs.cpu_rate is None:
        # The processor's measured rate (never measured here: a probe runs the engine) for the
        # dense offload's cost model (core/planning/ffn_offload.py).
        tp = speed.recorded(binary) or speed.recorded(None)
        if tp is not None:
            request = replace(request, prefs=replace(request.prefs, cpu_rate=tp.cpu))

    def plan_on(on: hardware.Machine) -> prepare.Prepared:
        return prepare.prepare(
            ladder_mod.apply(request, start), engine.caps, on, broken=_broken(records, engine, request),
            model=model, measured=measured, engine=binary if measured is not None else None,
        )

    prepared = plan_on(machine)
    if applies and isinstance(machine, hardware.Machine) and machine.workers and records.links is not None:
        prepared, machine = _weigh_workers(prepared, machine, request, binary, records.links, plan_on)
    if settings_notes:
        prepared = replace(prepared, plan=replace(prepared.plan, settings_notes=list(settings_notes)))
    return PlannedLaunch(prepared, request, engine, machine, records, start, fixes, measured is not None, settings)


def _renumbered(machine: hardware.Machine, keep: Sequence[str]) -> hardware.Machine:
    """The machine with only the workers at `keep`, their devices numbered again across the
    `--rpc` list as the engine numbers them (RPC0, RPC1, ...)."""
    kept = [w for w in machine.workers if w.endpoint in keep]
    return replace(machine, workers=[replace(w, index=i, device=f"RPC{i}") for i, w in enumerate(kept)])


def _weigh_workers(prepared: prepare.Prepared, machine: hardware.Machine, request: prepare.Request,
                   binary: Path, links: LinkSource,
                   plan_on: Callable[[hardware.Machine], prepare.Prepared]) -> tuple[prepare.Prepared, hardware.Machine]:
    """Each worker's link, the speed of each layout (no worker, then the workers added from
    the best link to the worst), and under `auto` the layout that pays: the plan of that
    layout, its machine, and `Prepared.speed` saying what was weighed."""
    endpoints = list(dict.fromkeys(w.endpoint for w in machine.workers if w.endpoint))
    found: dict[str, link.Link] = {}
    notes: list[Message] = []
    for ep in endpoints:
        try:
            lk = links(ep, binary)
        except link.LinkError as exc:
            lk = None
            notes.append(msg("The link to {worker} could not be measured ({why}); it is used as listed.",
                             worker=ep, why=exc.message))
        if lk is not None:
            found[ep] = lk
            if lk.rate_error is not None:
                notes.append(msg("The speed of {worker} could not be measured ({why}); it is predicted at this "
                                 "computer's speed.", worker=ep, why=lk.rate_error))
    unknown = [ep for ep in endpoints if ep not in found]
    # From the fastest link to the slowest: the layouts add the slow ones last.
    ranked = sorted(found, key=lambda ep: (found[ep].mbit_s, -found[ep].rtt_ms), reverse=True)
    # The no-worker layout is always weighed (and shown); one without a worker whose link is
    # unknown is never chosen.
    layouts = list(dict.fromkeys([(), *(tuple(unknown + ranked[:k]) for k in range(len(ranked) + 1))]))
    tp = speed_probe.engine_rate(binary, measure=False) or speed.recorded(None)
    if tp is None and request.use_workers == WorkerUse.AUTO and found:
        # This computer's speed is unknown: measured first, with the engine, through the launch
        # path and its process owner (core/launch/speed_probe.py), so that the workers can be
        # weighed (a figure taken on a busy processor is used, not kept).
        tp = speed_probe.engine_rate(binary)
    try:
        sw = split_speed.split_work(prepared.model.path)
    except (OSError, gguf.GGUFError) as exc:
        log.info("split speed: the header did not read: %s", exc)
        sw = None
    planned: dict[tuple[str, ...], prepare.Prepared] = {}
    alternatives = []
    for keep in layouts:
        try:
            planned[keep] = prepared if len(keep) == len(endpoints) else plan_on(_renumbered(machine, keep))
        except prepare.PrepareError:
            continue
        plan = planned[keep].plan
        rate = None
        if sw is not None and tp is not None:
            parts = split_speed.parts_of(plan.per_device, plan.gpu_layers, plan.n_layers)
            rate = split_speed.predict(sw, parts, tp, links=found, machine=_renumbered(machine, ())).tokens_per_s
        alternatives.append(split_speed.Alternative(keep, rate, plan.fits))
    every = tuple(unknown + ranked)
    chosen = next((a for a in alternatives if a.workers == every), None)
    if request.use_workers == WorkerUse.AUTO and found and tp is None:
        # The engine could not measure this computer, so no layout has a speed: a worker that
        # cannot be weighed is used only where the model does not fit without it (the first
        # layout that fits, fewest workers first; the unknown links' workers as listed).
        best = split_speed.choose([a for a in alternatives if set(unknown) <= set(a.workers)])
        if best is not None and best.workers != every:
            notes.extend(msg("{worker} is not used: this computer's speed could not be measured, so it cannot be "
                             "weighed, and the model fits without it.", worker=ep)
                         for ep in every if ep not in best.workers)
            chosen = best
            machine = _renumbered(machine, best.workers)
            prepared = planned[best.workers]
        else:
            notes.append(msg("This computer's speed could not be measured, so the workers are used only because "
                             "the model does not fit without them."))
    elif request.use_workers == WorkerUse.AUTO and found and sw is not None:
        best = split_speed.choose([a for a in alternatives if set(unknown) <= set(a.workers)])
        if best is not None and best.workers != every:
            for ep in every:
                if ep in best.workers:
                    continue
                # The smallest layout weighed with this worker beside the chosen ones.
                with_it = next((a for a in alternatives if ep in a.workers and set(best.workers) <= set(a.workers)),
                               None)
                faster = with_it is not None and (with_it.tokens_per_s or 0) > (best.tokens_per_s or 0)
                lk = found[ep]
                words = dict(worker=ep, mbit=f"{lk.mbit_s:.0f}", rtt=f"{lk.rtt_ms:.1f}")
                notes.append(msg("{worker} would not make it faster here ({mbit} Mbit/s, {rtt} ms): not used.",
                                 **words) if faster else
                             msg("{worker} would make it slower here ({mbit} Mbit/s, {rtt} ms): not used.", **words))
            chosen = best
            machine = _renumbered(machine, best.workers)
            prepared = planned[best.workers]
    choice = split_speed.SpeedChoice(chosen.tokens_per_s if chosen else None, chosen.workers if chosen else every,
                                     tuple(alternatives), tuple(found[ep] for ep in endpoints if ep in found),
                                     tuple(notes))
    plan = replace(prepared.plan, reasons=[*prepared.plan.reasons, *notes])
    return replace(prepared, plan=plan, speed=choice), machine


def devices_of(machine: hardware.Machine) -> tuple[str, ...]:
    """The device names a per-model engine fix is filed under (identity.launch_devices: the
    machine's selected GPUs, or the ones asked for), the same that `PlannedLaunch.spec` gives
    the launch to write a fix under; a machine-wide one (the CPU's) is found without them."""
    return identity.launch_devices(machine.gpus, machine.requested)


def _broken(records: Records, engine: Engine, request: prepare.Request) -> frozenset[str]:
    if records.broken is None or request.backend != resolver.LLAMA_CPP:
        return frozenset()
    return frozenset(records.broken.broken_for(Path(engine.binary)))
