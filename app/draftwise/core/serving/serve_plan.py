"""The whole serving plan: each model planned by the launch session, its preset section, how
many stay loaded together, and the router's own command.

Every model is planned exactly as `draftwise plan FILE` plans it (core/launch/session.py
`plan_launch`, the same records), on its share of the machine (together.py); its section is
that launch's options, the data its argv was rendered from (preset.py). The router is the
engine itself (`llama-server` without a model: tools/server/server-models.cpp), started as one LaunchSpec, so its process group, run
file and lifeline are owned like any launch's (core/launch/headless.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from draftwise.core.address import LOOPBACK
from draftwise.core.kinds import EngineKind
from draftwise.core.launch import launch_spec, prepare
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.session import Engine, PlannedLaunch, Records, plan_launch
from draftwise.core.machine.hardware import Machine
from draftwise.core.measurements import prompt_log
from draftwise.core.messages import Message, Text, msg
from draftwise.core.serving import preset, together
from draftwise.core.serving.library import LeftOut, Library, LibraryFile
from draftwise.core.settings import SERVE_SLEEP_IDLE_S

# Idle instances sleep after this long (the router's --sleep-idle-seconds): 10 minutes, one
# number with the window's setting.
SLEEP_IDLE_S = SERVE_SLEEP_IDLE_S
# The engine lists the models of its download cache as well (server-models.cpp
# `load_from_cache`, found through LLAMA_CACHE first): the router is pointed at an empty
# folder of ours, so it lists the library and nothing else.
CACHE_VARIABLE = "LLAMA_CACHE"


@dataclass(frozen=True)
class ServedModel:
    """One model as the router runs it."""

    id: str
    path: Path
    planned: PlannedLaunch
    launch: LaunchSpec  # the launch `plan` shows for this file (its argv, fallback argv)
    section: preset.Section  # what the preset holds for it
    # Without speculation: written in its place when the automatic drafter fails at start
    # (None when speculation may not be dropped: the user chose it).
    fallback: preset.Section | None = None
    notes: tuple[Text, ...] = ()  # what serving changed against `plan` (said to the user)

    def to_json(self) -> dict[str, object]:
        plan = self.planned.prepared.plan
        return {
            "id": self.id,
            "file": str(self.path),
            "speculative": self.planned.prepared.spec.to_json(),
            "drafter_key": self.planned.prepared.spec.drafter_key,
            "context": plan.ctx,
            "kv_type": plan.kv_type,
            "planned_bytes": together.device_bytes(plan.per_device),
            "held_bytes": together.held_bytes(plan.per_device),
            "bytes": plan.bytes.to_json(),  # by component, as `plan --json` has them
            "fits": plan.fits,
            "argv": list(self.launch.argv),
            "preset": dict(self.section.options),
            "notes": [str(n) for n in self.notes],
        }


@dataclass(frozen=True)
class ServePlan:
    models: tuple[ServedModel, ...]
    budget: together.Budget
    left_out: tuple[LeftOut, ...] = ()
    # Files of the library that are another model's drafter: (file, the model's id), not listed.
    drafters: tuple[tuple[Path, str], ...] = ()

    def by_id(self, ident: str) -> ServedModel:
        return next(m for m in self.models if m.id == ident)

    def sections(self) -> list[preset.Section]:
        return [m.section for m in self.models]

    def to_json(self) -> dict[str, object]:
        return {
            "models": [m.to_json() for m in self.models],
            "together": self.budget.to_json(),
            "left_out": [{"file": str(x.path), "why": str(x.why)} for x in self.left_out],
            "drafters": [{"file": str(path), "drafter_of": ident} for path, ident in self.drafters],
        }


class ServeError(prepare.PrepareError):
    """Nothing can be served; the message says why."""


def plan_library(library: Library, request: prepare.Request, engine: Engine, machine: Machine,
                 records: Records, *, port: int, api_key: str, models_max: int | None = None,
                 log_prompts: bool = False) -> ServePlan:
    """Plan every model of `library` with `request`'s options (its model replaced by each file),
    each on its share of `machine`. A model that cannot be planned or does not fit even alone
    is left out and named; ServeError when none is left. `log_prompts`: with the user's
    consent, each model's instance logs its requests' prompts into that model's own folder
    (`PlannedLaunch.spec`; taken in by `ingest_prompts`)."""
    left: list[LeftOut] = list(library.left_out)
    alone: dict[str, PlannedLaunch] = {}
    for m in library.models:
        try:
            planned = _plan(m, request, engine, machine, records)
        except (prepare.PrepareError, launch_spec.LaunchError) as exc:
            left.append(LeftOut(m.path, msg("{name} is left out: {why}", name=m.path.name, why=exc.message)))
            continue
        if not planned.prepared.plan.fits:
            reasons = planned.prepared.plan.reasons
            left.append(LeftOut(m.path, msg("{name} is left out: {why}", name=m.path.name,
                                            why=reasons[-1] if reasons else msg("it does not fit this computer"))))
            continue
        alone[m.id] = planned
    # A model file that another model of the library drafts with is that model's helper, not
    # a model of its own (as a projector is).
    drafters = {p.prepared.spec.draft.resolve(): ident for ident, p in alone.items() if p.prepared.spec.draft}
    helpers = tuple((m.path, drafters[m.path.resolve()]) for m in library.models
                    if m.path.resolve() in drafters and drafters[m.path.resolve()] != m.id)
    alone = {ident: p for ident, p in alone.items() if p.prepared.model.path.resolve() not in
             {path.resolve() for path, _for in helpers}}
    if not alone:
        raise ServeError("model", left[-1].why if left else msg("No model to serve."))
    models = [m for m in library.models if m.id in alone]
    capacities = {d.name: d.capacity for p in alone.values() for d in p.prepared.plan.per_device}
    top = min(len(models), together.MAX_TOGETHER if models_max is None else max(models_max, 1))
    chosen, words, alone_ids = 1, [], []
    plans = alone
    for k in range(top, 1, -1):
        shared: dict[str, PlannedLaunch] = {}
        for m in models:
            try:
                p = _plan(m, request, engine, together.share(machine, k), records)
            except (prepare.PrepareError, launch_spec.LaunchError):
                break
            if not p.prepared.plan.fits:
                break
            shared[m.id] = p
        if len(shared) == len(models):
            chosen, plans = k, shared
            words.append(together.together_words(k, len(models)))
            break
    if chosen == 1 and len(models) > 1:
        # Who needs more than half: each of them forces one model at a time.
        for m in models:
            p = alone[m.id]
            for d in p.prepared.plan.per_device:
                if d.total and d.total * 2 > d.capacity:
                    alone_ids.append(m.id)
                    words.append(together.alone_words(m.id, d.total, d.capacity, 2))
                    break
        if not alone_ids:
            words.append(msg("Models are loaded one at a time: planned on half of this computer each, they "
                             "would not fit."))
    served = [_served(m, plans[m.id], port, api_key, log_prompts) for m in models]
    budget = together.check(chosen, {s.id: s.planned.prepared.plan.per_device for s in served}, capacities,
                            words, alone_ids)
    return ServePlan(tuple(served), budget, tuple(left), drafters=helpers)


def _plan(m: LibraryFile, request: prepare.Request, engine: Engine, machine: Machine,
          records: Records) -> PlannedLaunch:
    return plan_launch(replace(request, model=m.path), engine, machine, records, model=m.info)


def _served(m: LibraryFile, planned: PlannedLaunch, port: int, api_key: str, log_prompts: bool) -> ServedModel:
    launch = planned.spec(port, api_key, log_prompts=log_prompts)
    fallback = preset.section(m.id, launch.fallback_options) if launch.fallback_options else None
    try:
        section = preset.section(m.id, launch.options)
    except preset.PresetError as exc:
        if fallback is None:
            raise ServeError("model", msg("{name} cannot be served as planned: {why}.", name=m.path.name,
                                          why=str(exc))) from exc
        bans = len(planned.prepared.spec.bans)
        note: Message = (msg("{id}: its drafter needs {n} tokens banned, and the engine's model list holds one ban "
                             "per model, so it is served without speculation (`draftwise launch` runs it with).",
                             id=m.id, n=bans) if exc.option in ("-l", "--logit-bias") else
                         msg("{id} is served without speculation: {why}.", id=m.id, why=str(exc)))
        return ServedModel(m.id, m.path, planned, launch, fallback, None, (note,))
    return ServedModel(m.id, m.path, planned, launch, section, fallback)


def ingest_prompts(plan: ServePlan, *, keep: bool, final: bool = False) -> Message | None:
    """Take in the prompts each served model's instance logged (core/measurements/prompt_log.py:
    the newest kept with the user's consent `keep`, every file deleted): at the start of serving,
    on each watch of the router and at its end (`final`). The first failure to keep them, said."""
    problem: Message | None = None
    for m in plan.models:
        store = m.planned.records.usage
        if store is None:
            continue
        try:
            prompt_log.ingest(store, m.path, keep=keep, final=final)
        except OSError as exc:
            problem = problem or prompt_log.not_kept(exc)
    return problem


def router_argv(binary: Path | str, preset_path: Path, plan: ServePlan, *, host: str, port: int,
                sleep_idle_s: int = SLEEP_IDLE_S) -> list[str]:
    """The router's command: only what the router itself reads. Every option on it is laid
    over each instance's section by the engine, so nothing of a model's goes here."""
    argv = [str(binary), "--models-preset", str(preset_path), "--models-max", str(plan.budget.models_max),
            "--models-autoload", "--host", host, "--port", str(port)]
    if sleep_idle_s > 0:
        argv += ["--sleep-idle-seconds", str(sleep_idle_s)]
    return argv


def router_launch(binary: Path | str, preset_path: Path, plan: ServePlan, *, port: int, api_key: str,
                  network: bool, cache_dir: Path, sleep_idle_s: int = SLEEP_IDLE_S,
                  pinned_port: bool = False, notes: Sequence[Text] = ()) -> LaunchSpec:
    """The router as one LaunchSpec: the environment of the models' launches (the engine's
    libraries, the GPUs chosen, the key), pointed at an empty download cache."""
    host = launch_spec.ALL_INTERFACES if network else LOOPBACK
    first = plan.models[0].launch
    env = {**first.env, CACHE_VARIABLE: str(cache_dir)}
    return LaunchSpec(
        kind=EngineKind.LLAMA_CPP, binary=Path(binary), model_path=preset_path,
        argv=tuple(router_argv(binary, preset_path, plan, host=host, port=port, sleep_idle_s=sleep_idle_s)),
        env=env, host=host, port=port, api_key=api_key, spec=launch_spec.NO_SPECULATION, fallback_argv=None,
        backend=first.backend, pinned_port=pinned_port, notes=tuple(notes),
    )


def write_router(binary: Path | str, plan: ServePlan, folder: Path, *, port: int, api_key: str, network: bool,
                 sleep_idle_s: int = SLEEP_IDLE_S, pinned_port: bool = False,
                 notes: Sequence[Text] = ()) -> tuple[LaunchSpec, Path]:
    """Write the plan's preset into `folder` (one file per port) and return the router's
    LaunchSpec with it: what `draftwise serve` and the window's "Serve my models" start."""
    folder.mkdir(parents=True, exist_ok=True)
    preset_path = folder / f"models-{port}.ini"
    preset_path.write_text(preset.render(plan.sections()), encoding="utf-8")
    empty_cache = folder / "no-download-cache"
    empty_cache.mkdir(exist_ok=True)
    router = router_launch(binary, preset_path, plan, port=port, api_key=api_key, network=network,
                           cache_dir=empty_cache, sleep_idle_s=sleep_idle_s, pinned_port=pinned_port, notes=notes)
    return router, preset_path
