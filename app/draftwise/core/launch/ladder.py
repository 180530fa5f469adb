"""The out-of-memory ladder: when a planned start dies for memory, give up one thing at a time.

The plan can be right for the machine it was told about and still die: another program took
GPU memory after the probe, a driver reserves more than expected, a limit the probe cannot
see (a container's cap). Then the engine is relaunched once per rung, stopping at the first
start that becomes ready (docs/ladder.md):

1. the automatic drafter off;
2. a q8_0 KV cache (not for the families in fit_search.KV_QUANT_AVOID, nor models or flags that
   cannot take one);
3. the context halved (never below the planner's floor);
4. fewer GPU layers (for a mixture-of-experts model: the experts to the CPU first);
5. the CPU only.

Concessions add up: each rung keeps the ones before it. Every rung is a new `Request` planned
by the one builder (core/launch/prepare.py) — never an edit of the old argv — and a rung that
changes nothing in the command is skipped. What the user chose is never climbed over: a
drafter, KV type, context or GPU placement they set stops the ladder at that rung with a
sentence naming the choice to relax. What worked is remembered (core/launch/ladder_record.py)
so the next launch starts there.

Pure: no processes. `LaunchFlow` asks `climb()` after an out-of-memory exit before ready and
`succeeded()` once ready; the drivers start whatever spec it returns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.engines.engine_settings import DEFAULTS
from draftwise.core.errors import FieldError
from draftwise.core.kinds import EngineKind, Switch
from draftwise.core.launch import crash, owned_args
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.launch.prepare import Prepared, Request, prepare, with_settings
from draftwise.core.machine import device_choice
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, msg, stored_in_records
from draftwise.core.planning import fit_search, plan_types, planner
from draftwise.core.planning.kv_cache import KV_TYPES
from draftwise.core.readable import human_ctx
from draftwise.core.speculation import resolver

log = logging.getLogger(__name__)
# The step a rung was reached by was kept as English in the ladder record before it kept
# templates: recognised when read back (core/records.py).
stored_in_records(__name__)

DRAFTER_OFF, KV_Q8, CTX_HALF, FEWER_GPU, CPU_ONLY = (
    "drafter-off", "kv-q8_0", "context-half", "fewer-gpu-layers", "cpu-only")
RUNGS = (DRAFTER_OFF, KV_Q8, CTX_HALF, FEWER_GPU, CPU_ONLY)
LADDER_KV = "q8_0"
_USER_SOURCES = frozenset({resolver.Source.EXPLICIT, resolver.Source.USER_ARGS})
_KV_RANK = {"f32": 0, "f16": 1, "bf16": 1, "q8_0": 2}  # anything else is smaller than q8_0


@dataclass(frozen=True)
class Concessions:
    """What the ladder gave up, cumulatively; empty means the full settings."""

    rung: str = ""  # the last rung climbed; "" none
    drafter_off: bool = False
    kv_type: str | None = None
    ctx: int | None = None
    gpu_layers: int | None = None
    n_cpu_moe: int | None = None
    cpu_only: bool = False

    @property
    def empty(self) -> bool:
        return not self.rung

    @property
    def index(self) -> int:
        return RUNGS.index(self.rung) if self.rung in RUNGS else -1

    def given_up(self) -> tuple[Message, ...]:
        """One short phrase per concession, for the window's banner and the CLI."""
        out: list[Message] = []
        if self.drafter_off:
            out.append(msg("no automatic drafter"))
        if self.kv_type:
            out.append(msg("a {kv} KV cache", kv=self.kv_type))
        if self.ctx:
            out.append(msg("a {ctx} context", ctx=human_ctx(self.ctx)))
        if self.cpu_only:
            out.append(msg("the CPU only"))
        elif self.n_cpu_moe:
            out.append(msg("the experts in RAM"))
        elif self.gpu_layers is not None:
            out.append(msg("{n} layers on the GPU", n=self.gpu_layers))
        return tuple(out)

    def summary(self) -> Message:
        """The concessions as one phrase: "a q8_0 KV cache, a 16k context"."""
        parts = self.given_up()
        if not parts:
            return msg("the full settings")
        out = parts[-1]
        for part in reversed(parts[:-1]):
            out = msg("{first}, {rest}", first=part, rest=out)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"rung": self.rung, "drafter_off": self.drafter_off, "kv_type": self.kv_type, "ctx": self.ctx,
                "gpu_layers": self.gpu_layers, "n_cpu_moe": self.n_cpu_moe, "cpu_only": self.cpu_only}

    @classmethod
    def from_json(cls, data: Any) -> Concessions:
        """ValueError for anything that is not a concessions object this version wrote."""
        if not isinstance(data, dict) or data.get("rung") not in RUNGS:
            raise ValueError("not a ladder rung")

        def num(key: str) -> int | None:
            v = data.get(key)
            if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
                raise ValueError(f"{key} is not a count")
            return v

        kv = data.get("kv_type")
        if kv is not None and kv not in KV_TYPES:
            raise ValueError("kv_type is not a KV cache type")
        return cls(rung=data["rung"], drafter_off=bool(data.get("drafter_off")), kv_type=kv, ctx=num("ctx"),
                   gpu_layers=num("gpu_layers"), n_cpu_moe=num("n_cpu_moe"), cpu_only=bool(data.get("cpu_only")))


def user_prefs(request: Request) -> planner.PlanPrefs:
    """The plan preferences set before the ladder, from the fields, the planner-owned extra
    arguments and Draftwise's own options (a remembered fix, a measured setting, this
    launch's fix: `Request.engine`) alike: what the ladder may not change."""
    if request.backend != resolver.LLAMA_CPP:
        return request.prefs
    try:
        prefs = owned_args.read(tuple(request.extra_args), request.prefs).prefs
    except FieldError:
        prefs = request.prefs  # prepare() refuses such a request with the field to fix
    return with_settings(prefs, request.engine)


def apply(request: Request, c: Concessions) -> Request:
    """`request` with the concessions in it, as new plan inputs. A field the user set is left
    as they set it (a remembered rung never overrides a later choice)."""
    if c.empty:
        return request
    user = user_prefs(request)
    prefs = request.prefs
    changes: dict[str, Any] = {}
    if c.kv_type and user.kv_type is None:
        changes["kv_type"] = c.kv_type
    if c.ctx and user.ctx is None:
        changes["ctx"] = c.ctx
    fixed = user.gpu_layers is not None or user.n_cpu_moe is not None or user.n_cpu_ffn is not None
    if not fixed:
        if c.gpu_layers is not None:
            changes["gpu_layers"] = c.gpu_layers
        if c.n_cpu_moe is not None:
            changes["n_cpu_moe"] = c.n_cpu_moe
        if c.cpu_only:
            changes["cpu_only"] = True
    mtp = request.mtp
    if c.drafter_off and request.draft is None:
        mtp = resolver.MtpMode.OFF
    return replace(request, mtp=mtp, ngram_when_no_drafter=request.ngram_when_no_drafter and not c.drafter_off,
                   prefs=replace(prefs, **changes))


@dataclass(frozen=True)
class Climb:
    """Relaunch with this spec: the next rung."""

    spec: LaunchSpec
    concessions: Concessions
    reason: Message  # one sentence: what ran out, what is given up now
    prepared: Prepared


@dataclass(frozen=True)
class Halt:
    """No relaunch: say why the ladder stops here (the crash itself is reported as usual)."""

    reason: Message


# ------------------------------------------------------------------ phrases per rung
def _change(rung: str, c: Concessions, total_layers: int) -> Message:
    if rung == DRAFTER_OFF:
        return msg("the automatic drafter off")
    if rung == KV_Q8:
        return msg("a {kv} KV cache", kv=c.kv_type or LADDER_KV)
    if rung == CTX_HALF:
        return msg("a {ctx} context", ctx=human_ctx(c.ctx or 0))
    if rung == FEWER_GPU:
        if c.n_cpu_moe:
            return msg("the experts in RAM")
        return msg("{n} of {total} layers on the GPU", n=c.gpu_layers or 0, total=total_layers)
    return msg("the CPU only")


@dataclass
class Ladder:
    """One launch's ladder. `build` turns a re-planned `Prepared` into the LaunchSpec the
    drivers start (same binary, port, key and environment as the first start)."""

    request: Request  # what the user asked for (no concessions in it)
    caps: EngineCaps
    machine: Machine
    build: Callable[[Prepared], LaunchSpec]
    broken: Collection[str] = frozenset()
    start: Concessions = field(default_factory=Concessions)  # where this launch began (a remembered rung)
    prepared: Prepared | None = None  # the plan the first start ran; None: planned here
    on_success: Callable[[Concessions, Message], list[Message]] | None = None  # remember what worked
    measured: Any = None  # prepare()'s speed records and the engine they are keyed by, as the first plan had
    engine: Path | None = None

    def __post_init__(self) -> None:
        self.current = self.start
        self.climbed: list[Concessions] = []
        self._last_reason: Message | None = None
        self._user = user_prefs(self.request)
        if self.prepared is None:
            self.prepared = self._prepare(self.start)
        self._first_source = self._source_of(self.prepared)

    # ------------------------------------------------------------ the flow's hook
    def climb(self, cause: crash.Cause, running_argv: tuple[str, ...]) -> Climb | Halt | None:
        """After an exit before ready: the next rung, a halt with its reason, or None when
        this is not the ladder's business (a crash not about memory before any rung)."""
        if cause.kind != crash.OUT_OF_MEMORY:
            if not self.climbed:
                return None
            return Halt(msg("The start with {change} failed for another reason, so Draftwise stopped lowering "
                            "the settings; the cause is below.", change=self._phrase(self.current)))
        cur = self.prepared
        assert cur is not None
        for rung in RUNGS[self.current.index + 1:]:
            step = self._rung(rung, self.current, cur)
            if step is None:
                continue
            if isinstance(step, Halt):
                log.info("ladder halts at %s: %s", rung, step.reason)
                return step
            try:
                prepared = self._prepare(step)
            except FieldError as exc:
                log.info("ladder skips %s: %s", rung, exc)
                continue
            if not prepared.plan.fits:
                log.info("ladder skips %s: the plan does not fit", rung)
                continue
            spec = self.build(prepared)
            if tuple(spec.argv) == tuple(running_argv):
                log.info("ladder skips %s: the command would not change", rung)
                self.current = step  # the concession is in effect anyway
                continue
            reason = msg("{cause} Starting it again with {change}.", cause=cause.sentence,
                         change=self._phrase(step))
            log.warning("ladder climbs to %s: %s", rung, " ".join(spec.argv))
            self.current, self.prepared, self._last_reason = step, prepared, reason
            self.climbed.append(step)
            return Climb(spec, step, reason, prepared)
        if self.current.empty:
            return Halt(msg("Draftwise has no lower setting to try for this model."))
        return Halt(msg("Draftwise has no lower setting left to try: it ran out of memory even with {change}.",
                        change=self._phrase(self.current)))

    def with_fix(self, args: tuple[str, ...]) -> LaunchSpec | None:
        """The running rung planned again with a feature fix (crash.FeatureFix: `-fa off`,
        `-nr`; `args` is its `args`, looked up as data in crash.FIXES) among Draftwise's own
        options (`Request.engine`), which every later rung keeps. So the plan is what the
        relaunch runs (-nr: no re-laid weights), and a rung the fix rules out is skipped: after
        `-fa off` the KV cache stays unquantized (the engine refuses a quantized V cache without
        flash attention). None when the fix cannot be planned: the flow then adds it to the
        command as it is."""
        fix = crash.FIXES.get(tuple(args)) if args else DEFAULTS  # no fix: the running rung again
        if fix is None:
            return None
        request = replace(self.request, engine=self.request.engine.merged(fix))
        try:
            prepared = self._prepare(self.current, request)
        except FieldError as exc:
            log.info("the fix %s is not planned: %s", fix.label(), exc)
            return None
        self.request, self._user, self.prepared = request, user_prefs(request), prepared
        return self.build(prepared)

    def succeeded(self) -> list[Message]:
        """The start became ready: remember the rung that worked (notices to show)."""
        if not self.climbed or self.on_success is None:
            return []
        return self.on_success(self.current, self._last_reason or msg("out of memory"))

    # ------------------------------------------------------------ rungs
    def _phrase(self, c: Concessions) -> Message:
        return _change(c.rung, c, self.prepared.plan.n_layers if self.prepared else 0)

    def _prepare(self, c: Concessions, request: Request | None = None) -> Prepared:
        return prepare(apply(request or self.request, c), self.caps, self.machine, broken=self.broken,
                       model=self.prepared.model if self.prepared else None, measured=self.measured,
                       engine=self.engine)

    @staticmethod
    def _source_of(p: Prepared) -> str:
        return p.chosen.source if not p.plan.drop_drafter else resolver.Source.NONE

    def _rung(self, rung: str, c: Concessions, cur: Prepared) -> Concessions | Halt | None:
        """The concessions after `rung` (None: not applicable here, skip it)."""
        plan, model, user = cur.plan, cur.model, self._user
        if rung == DRAFTER_OFF:
            if not cur.spec.argv:
                return None  # nothing speculative runs
            if self._first_source in _USER_SOURCES:
                return Halt(msg("The engine ran out of memory with the drafter you chose. To let Draftwise lower "
                                "the settings, clear the Draft model field (or remove --spec-type from the extra "
                                "arguments), or choose a smaller drafter."))
            return replace(c, rung=rung, drafter_off=True)
        if rung == KV_Q8:
            if _KV_RANK.get(plan.kv_type, 9) >= _KV_RANK[LADDER_KV]:
                return None  # already as small
            if user.kv_type is not None:
                return Halt(msg("The engine ran out of memory with the {kv} KV cache you chose. Set the KV cache "
                                "to Auto (or q8_0) to let Draftwise lower it.", kv=user.kv_type))
            if ((model.architecture or "") in fit_search.KV_QUANT_AVOID or user.flash_attn == Switch.OFF
                    or LADDER_KV not in fit_search.kv_types_for(model)):
                # This model, or -fa off (the user's, a remembered fix, or this launch's fix:
                # with_fix), keeps an f16 cache: go on to the context.
                return None
            return replace(c, rung=rung, kv_type=LADDER_KV)
        if rung == CTX_HALF:
            if user.ctx is not None:
                return Halt(msg("The engine ran out of memory with the {ctx} context you chose. Set the context "
                                "to Auto (or smaller) to let Draftwise lower it.", ctx=human_ctx(user.ctx)))
            floor = min(user.ctx_floor, plan.ctx)
            half = max(plan.ctx // 2 // 256 * 256, floor)
            if half >= plan.ctx:
                return None  # at the floor already
            return replace(c, rung=rung, ctx=half)
        on_gpu = plan.gpu_layers > 0 and not user.cpu_only
        if not on_gpu:
            return None  # nothing on a GPU to move
        if user.gpu_layers is not None or user.n_cpu_moe is not None or user.n_cpu_ffn is not None:
            return Halt(msg("The engine ran out of memory with the GPU layers you set (-ngl / --n-cpu-moe). "
                            "Remove them from the extra arguments to let Draftwise move layers to the CPU."))
        if rung == FEWER_GPU:
            if (model.expert_count or 0) > 0 and plan.n_cpu_moe < plan.n_layers:
                return replace(c, rung=rung, n_cpu_moe=plan_types.ALL_LAYERS)
            fewer = plan.gpu_layers // 2
            if fewer <= 0:
                return None  # halving leaves nothing on the GPU: the next rung says CPU only
            return replace(c, rung=rung, gpu_layers=fewer)
        return replace(c, rung=CPU_ONLY, cpu_only=True, gpu_layers=None, n_cpu_moe=None)


def for_launch(
    request: Request,
    prepared: Prepared,
    spec: LaunchSpec,
    *,
    caps: EngineCaps,
    machine: Machine,
    broken: Collection[str] = frozenset(),
    start: Concessions | None = None,
    on_success: Callable[[Concessions, Message], list[Message]] | None = None,
    measured: Any = None,
    engine: Path | None = None,
) -> Ladder | None:
    """The ladder for a launch `spec` built from `prepared` (which has `start` applied):
    every rung is started with the same binary, port, key, GPUs and prompt log. None for engines other
    than llama.cpp (they plan their own memory)."""
    if request.backend != resolver.LLAMA_CPP or spec.kind != EngineKind.LLAMA_CPP:
        return None
    gpus = machine.gpus

    def build(p: Prepared) -> LaunchSpec:
        # The devices the user chose stay the ones the engine sees, and the verdict's.
        return p.launch(spec.binary, engine_backend=spec.backend, gpus=gpus, port=spec.port,
                        api_key=spec.api_key, notes=tuple(p.plan.reasons),
                        chosen_gpus=device_choice.visible_for(machine, spec.backend),
                        requested=machine.requested, prompt_log=spec.prompt_log)

    return Ladder(request, caps, machine, build, broken=broken, start=start or Concessions(),
                  prepared=prepared, on_success=on_success, measured=measured, engine=engine)


def started_lower(c: Concessions) -> Message:
    """Said when a launch starts at a remembered rung."""
    return msg("Starting with {given_up}, the settings that worked after this model ran out of memory last time "
               "(Try full settings again, or `draftwise launch --full`, goes back to the full settings).",
               given_up=c.summary())
