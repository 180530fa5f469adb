"""One launch, decided: request → speculation → memory plan → argv → environment → LaunchSpec.

The single place where the decisions are chained (docs/launch-path.md). Its one caller is the
launch session (core/launch/session.py), which applies the remembered records first, and the
out-of-memory ladder that session builds; the window, `draftwise plan`, `launch`, `measure`,
the self-test and the machine check all go through the session, so they never disagree.
`draftwise plan --json` prints that LaunchSpec, so it shows what the window runs.
Pure: it reads GGUF headers and asks the engine's --help (cached), nothing else.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core import identity
from draftwise.core.address import DEFAULT_PORT
from draftwise.core.engines import args as engine_args
from draftwise.core.engines import engine_settings
from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import AUTO_SOURCES, Backend, DeviceKind, EngineKind, MtpMode, WorkerUse
from draftwise.core.launch import launch_spec, mlx, owned_args, vllm
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements import measured as measured_mod
from draftwise.core.measurements.learned import stays_off_words
from draftwise.core.messages import Message, Text, msg
from draftwise.core.planning import cpu_buffers, extra_args, plan_types, planner
from draftwise.core.rpc import workers
from draftwise.core.speculation import decision_types, field_settings, resolver
from draftwise.core.speculation import setup as setup_mod


class PrepareError(FieldError):
    """Input that cannot be launched. `draft`: the draft check's verdict when the draft is
    what cannot be used (decision_types.DraftVerdict), for the field that shows it."""

    def __init__(self, field_name: str, message: Text, draft: decision_types.DraftVerdict | None = None) -> None:
        super().__init__(field_name, message)
        self.draft = draft


@dataclass(frozen=True)
class Request:
    """Everything the user chose for one launch."""

    model: Path
    mtp: MtpMode = MtpMode.AUTO
    draft: Path | None = None
    backend: EngineKind = EngineKind.LLAMA_CPP  # the server program: llama.cpp | vllm | mlx
    extra_args: tuple[str, ...] = ()
    ngram_when_no_drafter: bool = False
    prefs: planner.PlanPrefs = field(default_factory=planner.PlanPrefs)
    port: int = DEFAULT_PORT
    pinned_port: bool = False  # a taken port is an error instead of a reason to pick another
    network: bool = False  # listen on every interface (an API key is then required)
    api_key: str | None = None  # None: a fresh key for each launch
    # The workers listed: used only when they pay (auto), or always (the launch session decides).
    use_workers: WorkerUse = WorkerUse.AUTO
    # Draftwise's own engine options (llama.cpp): the remembered engine fixes and the measured
    # settings the launch session added where the user's arguments left them, a fix found
    # while starting (Ladder.with_fix). Data, never argv read back: the plan takes flash
    # attention and the batch sizes as inputs (and writes them), -nr into its CPU buffers, and
    # `Prepared.launch` renders the rest after the user's arguments.
    engine: EngineSettings = DEFAULTS


@dataclass(frozen=True)
class Prepared:
    """The decisions for one launch, ready to print or to start."""

    model: gguf.ModelInfo
    spec: resolver.SpecDecision  # what the engine will run (the drafter dropped if the plan says so)
    chosen: resolver.SpecDecision  # what the resolver chose before the plan had its say
    plan: planner.Plan
    draft: gguf.ModelInfo | None
    extra_args: tuple[str, ...] = ()  # the user's, without the options the plan took over
    request: Request | None = None
    # The speed measurement of this (model, drafter, engine, machine), when there is one.
    measurement: measured_mod.Measurement | None = None
    # The planner's inputs as this plan used them (the user's options read): another of the
    # resolver's drafters is planned with them (`with_drafter`).
    prefs: planner.PlanPrefs = field(default_factory=planner.PlanPrefs)
    # With workers listed: the speed of each layout weighed and the one chosen
    # (split_speed.SpeedChoice, set by the launch session); `plan.speed` in the JSON.
    speed: Any = None
    # Draftwise's own engine options this plan was made with (`Request.engine`, and a measured
    # setting an arm runs: `with_engine_settings`); `launch` renders what the plan does not write.
    engine: EngineSettings = DEFAULTS

    @property
    def notes(self) -> tuple[str, ...]:
        return self.spec.notes

    @property
    def gpu_devices(self) -> tuple[str, ...]:
        """This computer's engine devices the plan puts layers on (`Vulkan0`): what the GPU
        verdict checks. RPC workers' devices are not this computer's GPUs (their buffer lines
        name `RPC0[host:port]`). Engine fixes are filed under the selected devices instead
        (`LaunchSpec.fix_devices`), which are known before the plan that reads them."""
        return tuple(d.device for d in self.plan.per_device
                     if d.kind != DeviceKind.CPU and d.layers and d.device and d.worker is None)

    def running_settings(self) -> EngineSettings:
        """The engine settings the command runs with, as data: Draftwise's own beside the plan
        (`engine`), and the plan's inputs (flash attention, the batches; -nr where the user,
        a fix or the plan itself turns re-laid weights off)."""
        planned = EngineSettings(flash_attn=self.prefs.flash_attn, batch=self.prefs.batch, ubatch=self.prefs.ubatch,
                                 repack=False if self.prefs.no_repack or self.plan.no_repack else None)
        return self.engine.beside_plan().merged(planned)

    def launch(
        self,
        binary: Path | str,
        *,
        engine_backend: str = Backend.CPU,
        gpus: Sequence[Gpu] = (),
        port: int | None = None,
        api_key: str | None = None,
        notes: Sequence[str] = (),
        kernel_targets: Collection[str] | None = None,
        chosen_gpus: Sequence[int] | None = None,
        requested: Sequence[str] = (),
        prompt_log: Path | None = None,
    ) -> launch_spec.LaunchSpec:
        """The LaunchSpec (argv, environment, key, fallback argv) for this decision.

        `engine_backend`: the build's GPU backend (cpu, cuda, rocm, vulkan, metal); `gpus`:
        the machine's inventory; `port`: the port chosen for this start (default: the
        request's); `api_key`: default the request's, else a fresh one. `chosen_gpus`: the
        physical indexes to show the engine (`device_choice.visible_for`); `requested`: the devices
        the user asked for, checked after the start when the plan has none. `prompt_log`: the
        folder llama-server logs each request's prompt into (the user's engines, with consent;
        never a measurement's: core/measurements/prompt_log.py)."""
        request = self.request or Request(model=self.model.path)
        port = request.port if port is None else port
        key = request.api_key if api_key is None else api_key
        binary = Path(binary)
        if request.backend == EngineKind.VLLM:
            return vllm.vllm_launch(binary, self.model.path, self.spec, port=port, ctx=self.plan.ctx,
                                    extra_args=self.extra_args, network=request.network, api_key=key,
                                    gpus=gpus, kernel_targets=kernel_targets)
        if request.backend == EngineKind.MLX:
            return mlx.mlx_launch(binary, self.model.path, self.spec, port=port, extra_args=self.extra_args,
                                  network=request.network)
        spec = launch_spec.llamacpp_launch(
            binary, self.model, self.spec, port=port, extra_args=self.extra_args, engine=self.engine.beside_plan(),
            plan_options=self.plan.plan_options,
            fallback_plan_options=self.plan.fallback_plan_options or self.plan.plan_options,
            network=request.network, api_key=key, backend=engine_backend, gpus=gpus,
            kernel_targets=kernel_targets, pinned_port=request.pinned_port, notes=notes,
            chosen_gpus=chosen_gpus, expected_devices=self.gpu_devices or tuple(requested),
            fix_devices=identity.launch_devices(gpus, requested), settings=self.running_settings(),
            prompt_log=prompt_log,
        )
        spec = replace(spec, workers=tuple(d.worker for d in self.plan.per_device if d.worker is not None))
        # Settings outside the argv that still reach the engine (a system-wide config.ini):
        # said where `draftwise launch` and the window's banner show launch warnings.
        extra = [str(w) for w in launch_spec.system_config_warnings()]
        return replace(spec, warnings=(*spec.warnings, *extra)) if extra else spec

    def argv(self, binary: Path | str, *, port: int | None = None) -> list[str]:
        """The engine command (what `launch` would start, the key aside)."""
        return list(self.launch(binary, port=port).argv)

    def to_json(self) -> dict[str, object]:
        plan = self.plan.to_json()
        if self.speed is not None:
            plan["speed"] = self.speed.to_json()
        return {
            "model": str(self.model.path),
            "speculative": self.spec.to_json(),
            "plan": plan,
        }


def read_model(path: Path) -> gguf.ModelInfo:
    try:
        model = gguf.read_model(path)
    except gguf.GGUFError as exc:
        raise PrepareError("model", exc.message) from exc
    if model.sidecar_kind is not None or model.mtp_layout == "mtp-only":
        # The engine crashes on a drafter file given as the model (engine-observations.md).
        raise PrepareError(
            "model",
            msg("{name} is a drafter ({kind}), not a model to run; choose the full model, and put this file "
                "in the Draft model field or beside the model.", name=model.path.name,
                kind=model.sidecar_kind or msg("MTP head")),
        )
    if model.missing_shards:
        raise PrepareError(
            "model",
            msg("{name}: missing part(s) {parts}; download them into the same folder.",
                name=model.path.name, parts=", ".join(model.missing_shards)),
        )
    return model


def prepare(
    request: Request,
    caps: EngineCaps,
    machine: Machine,
    *,
    broken: Collection[str] = frozenset(),
    model: gguf.ModelInfo | None = None,
    measured: measured_mod.MeasuredRecords | None = None,
    engine: Path | None = None,
) -> Prepared:
    """Decide speculation and memory for `request`. PrepareError for a user error.

    With `measured` and the `engine` binary, a speed measurement of this combination has
    its say (measured.decide): a slower automatic drafter is left out before the plan, the
    tuned draft length is passed."""
    model = model or read_model(request.model)
    extra, prefs = tuple(request.extra_args), request.prefs
    if request.backend == resolver.LLAMA_CPP:
        try:
            # Host, port and key have their own fields.
            launch_spec.check_owned_flags(extra)
        except FieldError as exc:
            raise PrepareError(exc.field, exc.message) from exc
        extra, prefs = _planner_inputs(extra, prefs, model)
        # What the rest still changes in the plan (RoPE scaling, draft lengths, caches) and
        # the projector that belongs to the model (planned, passed with --mmproj).
        prefs, extra = extra_args.engine_inputs(prefs, model, extra)
        prefs = with_settings(_repack_read(extra, prefs), request.engine)
    options = resolver.SpecOptions(
        mtp=request.mtp,
        draft=request.draft,
        backend=request.backend,
        extra_args=extra,
        ngram_when_no_drafter=request.ngram_when_no_drafter,
        broken=broken,
    )
    try:
        chosen = resolver.resolve(model, options, caps)
    except resolver.ResolveError as exc:
        raise PrepareError(exc.field, exc.message, exc.draft) from exc
    effective, measurement = chosen, None
    if measured is not None and engine is not None and chosen.source == resolver.NONE:
        # No drafter found, and n-gram speculation measured to pay on this machine before:
        # the measurement decides, without --ngram again.
        ngram, stays_off = _measured_ngram(model, options, caps, measured, engine, machine)
        chosen = ngram or (replace(chosen, notes=(*chosen.notes, stays_off)) if stays_off is not None else chosen)
        effective = chosen
    if measured is not None and engine is not None and chosen.argv:
        measurement = measured.get(combination(model.path, chosen, engine, machine))
        if measurement is not None:
            effective = _apply_measurement(chosen, measurement, extra, model.path)
    try:
        # A worker the user named that has nothing to lend stops the launch, naming it.
        workers.check_free(machine.workers, request.prefs.margin_bytes or plan_types.GPU_MARGIN)
    except workers.WorkerError as exc:
        raise PrepareError(exc.field, exc.message) from exc
    result, spec, draft = _plan(model, effective, machine, prefs, request.backend)
    if effective.argv and effective.drafter_key != chosen.drafter_key and effective.draft is not None \
            and (not result.fits or result.drop_drafter):
        # The sweep's drafter is not the resolver's, and this machine's plan has no room for
        # it now (another context, a busier GPU): the resolver's choice runs, saying why.
        why = result.drop_reason if result.fits and result.drop_reason else (
            result.reasons[-1] if result.reasons else msg("it does not fit this machine's memory"))
        effective = replace(chosen, notes=(*chosen.notes, msg(
            "The sweep measured {name} fastest, but it does not fit now ({why}); the drafter the rules "
            "chose runs instead.", name=effective.draft.name, why=why)))
        result, spec, draft = _plan(model, effective, machine, prefs, request.backend)
    return Prepared(
        model=model, spec=spec, chosen=chosen, plan=result, draft=draft, extra_args=extra, request=request,
        measurement=measurement, prefs=prefs,
        engine=request.engine if request.backend == resolver.LLAMA_CPP else DEFAULTS,
    )


def _plan(model: gguf.ModelInfo, decision: resolver.SpecDecision, machine: Machine, prefs: planner.PlanPrefs,
          backend: EngineKind) -> tuple[planner.Plan, resolver.SpecDecision, gguf.ModelInfo | None]:
    """The memory plan for `decision`, the decision it leaves (without the drafter when the
    plan drops it) and the draft's header as planned (None without one)."""
    draft = (decision.draft_info or _read_draft(decision.draft)) if decision.argv else None
    try:
        result = planner.plan(model, decision, machine, prefs, draft)
    except ValueError as exc:  # a KV type or context this model cannot take
        raise PrepareError("kv_type", getattr(exc, "message", None) or str(exc)) from exc
    if backend == resolver.LLAMA_CPP:
        # The engine applies a system-wide config.ini before its command line; we cannot move it.
        result.warnings.extend(launch_spec.system_config_warnings())
    if result.drop_drafter:
        # The plan decided the drafter costs the model more than it gives: run as if there
        # were none, and say which cost was avoided.
        return result, replace(resolver.NO_SPECULATION, notes=(*decision.notes, result.drop_reason)), None
    return result, decision, draft


def with_drafter(prepared: Prepared, decision: resolver.SpecDecision, machine: Machine) -> Prepared:
    """`prepared` planned for another drafter (`decision`: one of the resolver's alternatives),
    with the same options: the sweep runs each drafter with its own memory plan. The caller
    checks `plan.fits` and `plan.drop_drafter`."""
    backend = prepared.request.backend if prepared.request is not None else EngineKind.LLAMA_CPP
    result, spec, draft = _plan(prepared.model, decision, machine, prepared.prefs, backend)
    return replace(prepared, spec=spec, plan=result, draft=draft, measurement=None)


def with_engine_settings(prepared: Prepared, settings: EngineSettings, machine: Machine) -> Prepared:
    """`prepared` planned again with engine settings added on top of its own (a measured speed
    setting: -nr, -t, -fa, -ub; a fix an earlier arm needed): flash attention and the batch
    sizes into the plan, -nr into its CPU buffers (no re-laid copies), the rest passed after
    the user's arguments. The settings stage runs each setting so, and the plan then shows
    the layout that runs. PrepareError where the plan cannot take them."""
    prefs = with_settings(prepared.prefs, settings)
    backend = prepared.request.backend if prepared.request is not None else EngineKind.LLAMA_CPP
    result, spec, draft = _plan(prepared.model, prepared.spec, machine, prefs, backend)
    return replace(prepared, spec=spec, plan=result, draft=draft, prefs=prefs,
                   engine=prepared.engine.merged(settings))


def with_settings(prefs: planner.PlanPrefs, settings: EngineSettings) -> planner.PlanPrefs:
    """The plan's inputs with Draftwise's own engine options in them: flash attention and the
    batch sizes (the plan writes them), no re-laid copies for -nr. They come after the user's
    arguments were read, so the launch session leaves out what the user set (`without`),
    and a fix found while starting wins (Ladder.with_fix)."""
    changes: dict[str, Any] = {name: getattr(settings, name) for name in engine_settings.PLANNED
                               if getattr(settings, name) is not None}
    if settings.repack is False:
        changes["no_repack"] = True
    return replace(prefs, **changes) if changes else prefs


def _planner_inputs(args: Sequence[str], prefs: planner.PlanPrefs,
                    model: gguf.ModelInfo) -> tuple[tuple[str, ...], planner.PlanPrefs]:
    """The planner's options among engine arguments (-c, -ctk, -fa, -b, -ub...) read into its
    inputs; the rest as given. PrepareError naming the field where one cannot be read."""
    try:
        inputs = owned_args.read(args, prefs, n_ctx_train=model.context_length)
    except FieldError as exc:
        raise PrepareError(exc.field, exc.message) from exc
    return tuple(inputs.rest), inputs.prefs


def _repack_read(args: Sequence[str], prefs: planner.PlanPrefs) -> planner.PlanPrefs:
    """-nr among the arguments keeps every CPU weight in the mapped file: no re-laid copies to plan."""
    if engine_args.sets(args, *cpu_buffers.NO_REPACK_FLAGS) and not prefs.no_repack:
        return replace(prefs, no_repack=True)
    return prefs


def combination(model_path: Path, spec: resolver.SpecDecision, engine: Path,
                machine: Machine) -> measured_mod.Combination:
    """The (model, drafter, engine build, machine) a measurement of `spec` is valid for: the
    one key `measure` records under and `launch`, `plan` and the window look up, given the
    machine as selected (core/identity.py)."""
    drafter = str(spec.drafter_key or f"{spec.spec_type}|{spec.draft or ''}|{' '.join(spec.argv)}")
    return measured_mod.Combination(
        model=identity.file_key(model_path), drafter=drafter, engine=identity.engine_build_key(engine),
        machine=identity.machine_key(machine),
        earlier_machines=(identity.legacy_measurement_machine_key(machine),),
    )


def _measured_ngram(model: gguf.ModelInfo, options: resolver.SpecOptions, caps: EngineCaps,
                    measured: measured_mod.MeasuredRecords, engine: Path,
                    machine: Machine) -> tuple[resolver.SpecDecision | None, Message | None]:
    """The n-gram decision when a measurement of it on this model, engine and machine says it
    pays (above 1× and not slower beyond the noise: `Measurement.pays`); None otherwise, with
    why when a measurement on the user's own prompts turned it off (learned.py)."""
    if options.ngram_when_no_drafter:
        return None, None
    try:
        ngram = resolver.resolve(model, replace(options, ngram_when_no_drafter=True), caps)
    except resolver.ResolveError:
        return None, None
    if ngram.source != resolver.AUTO_NGRAM:
        return None, None
    m = measured.get(combination(model.path, ngram, engine, machine))
    if m is None or not m.pays:
        return None, (stays_off_words(m.ratio, m.noise, m.learned) if m is not None and m.learned else None)
    # Still an automatic choice (the startup fallback may drop it); `Prepared.measurement` says
    # it was measured, and decide() adds the figure and the tuned draft length.
    return replace(ngram, notes=(*ngram.notes[:-1], msg(
        "No drafter found; n-gram speculation measured faster on this computer, so it is on."))), None


def _apply_measurement(chosen: resolver.SpecDecision, m: measured_mod.Measurement,
                       extra_args: tuple[str, ...], model_path: Path) -> resolver.SpecDecision:
    use = measured_mod.decide(
        m, automatic=chosen.source in AUTO_SOURCES,
        user_args=tuple(engine_args.flag_name(t) for t in extra_args),
    )
    # "Until Draftwise measures it here": it has, and the measurement's note says what runs.
    chosen = replace(chosen, notes=tuple(n for n in chosen.notes if not field_settings.is_field_note(n)))
    if not use.keep:
        return replace(resolver.NO_SPECULATION, notes=(*chosen.notes, *((use.note,) if use.note else ())))
    notes = (*chosen.notes, *((use.note,) if use.note else ()))
    warnings = (*chosen.warnings, *((use.warning,) if use.warning else ()))
    if use.setup is not None and use.setup.drafter is not None and use.setup.drafter_key is not None:
        # The sweep's best runs another of the drafters the files allow than the resolver chose.
        other = chosen.drafter_for(use.setup.drafter_key)
        name = use.setup.drafter_file
        if other is None or other.draft is None:
            # Changed, moved, or it made the engine fail since: the rules' choice, as if unmeasured.
            return replace(chosen, notes=(*chosen.notes, msg(
                "The sweep measured {name} fastest, but it is no longer a suitable drafter here (changed, "
                "moved or it failed); the drafter the rules chose runs instead.", name=name)))
        if other is not chosen:
            return _with_setup(other, use.setup, model_path, (*other.notes, msg(
                "Chosen by the sweep: {name} drafted fastest on this computer, ahead of {rules}, the drafter "
                "the rules pick.", name=other.draft.name, rules=_drafter_words(chosen)),
                *((use.note,) if use.note else ())), (*other.warnings, *((use.warning,) if use.warning else ())))
    if use.setup is not None and _runs_with(chosen, use.setup):
        return _with_setup(chosen, use.setup, model_path, notes, warnings)
    # The tuned length (and p-min) for the decision's own type, as data over its own.
    lengths = (*((f, n) for f, n in chosen.lengths if f not in dict(use.lengths)), *use.lengths)
    return replace(chosen, lengths=lengths, p_min=use.p_min if use.p_min is not None else chosen.p_min,
                   notes=notes, warnings=warnings)


def _drafter_words(decision: resolver.SpecDecision) -> Text:
    """The resolver's drafter in a note: its file, or (the one drafter without a file of its
    own) the model's embedded MTP head."""
    return decision.draft.name if decision.draft is not None else msg("the model's own MTP head")


def _runs_with(chosen: resolver.SpecDecision, s: setup_mod.Setup) -> bool:
    """Whether a measured setup fits the decision it was measured for: the same model drafter
    (the record's key says so; this guards a hand-edited file), or an n-gram type alone."""
    own = setup_mod.of_decision(chosen)
    return s.speculates and (s.drafter is None or (s.drafter == own.drafter and s.drafter_key in (None, chosen.drafter_key)))


def _with_setup(chosen: resolver.SpecDecision, s: setup_mod.Setup, model_path: Path,
                notes: tuple, warnings: tuple) -> resolver.SpecDecision:
    """The decision running a measured setup: its types (an n-gram type beside the drafter,
    or alone in its place), its draft lengths and p-min. Still automatic (the startup fallback
    may drop it); without its model drafter it has no draft file, bans or drafter key."""
    run = replace(s.on(chosen), notes=notes, warnings=warnings)
    if s.drafter is not None:
        return run
    # Keyed by the model, as the resolver keys n-gram speculation: it has no file to blame.
    return replace(run, drafter_key=resolver.drafter_key(model_path, run.spec_type or ""))


def _read_draft(path: Path | None) -> gguf.ModelInfo | None:
    if path is None:
        return None
    try:
        return gguf.read_model(path)
    except gguf.GGUFError as exc:
        # The resolver read it a moment ago; a file changing under us is the user's to fix.
        raise PrepareError("draft", exc.message) from exc

