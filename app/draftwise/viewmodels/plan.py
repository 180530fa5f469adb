"""Memory plan: what goes where, per device, for the chosen context and KV type.

The numbers are `core.planner`'s (exact tensor bytes and KV geometry from the header, the
engine's own placement rules). This module turns a Plan into what the window draws: one bar
per device with weights, context (KV), drafter and work (compute) against the device's
capacity, the reasons in words, and after launch the engine's own buffer lines next to the
plan ("planned vs actual", `core.logparse` + `planned_vs_actual.compare`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import DeviceKind
from draftwise.core.machine import hardware
from draftwise.core.messages import Text
from draftwise.core.planning import fit_search, logparse, plan_types, planned_vs_actual, planner
from draftwise.core.readable import human_bytes, human_ctx
from draftwise.core.speculation.resolver import SpecDecision
from draftwise.viewmodels.i18n import N_, tr, tr_message

KV_TYPES = ("f16", "q8_0", "q4_0")
CONTEXT_FLOOR = plan_types.CTX_FLOOR
# The bar's parts in plain words; SEGMENT_TIPS names what the engine calls them.
SEGMENTS = (
    ("weights", N_("model")),
    ("kv", N_("conversation")),
    ("drafter", N_("helper")),
    ("compute", N_("working space")),
)
SEGMENT_TIPS = {
    "weights": N_("The model's weights: its learned numbers, loaded from the file"),
    "kv": N_("Room for the conversation the model keeps in mind (the KV cache), set by the context length"),
    "drafter": N_("The helper model that guesses words (the draft model or MTP head) and its own context"),
    "compute": N_("Scratch memory the engine needs while it works (compute and output buffers)"),
}
FITS, PARTIAL, NO_FIT = plan_types.FITS, plan_types.PARTIAL, plan_types.NO_FIT
# Log lines the planned-vs-actual comparison needs (logparse reads buffer sizes, and the
# lines that say a draft context or the fit step's dry runs begin).
_ACTUAL_MARKERS = ("buffer size", "llama_kv_cache", "draft", "fitting params", "fit_params",
                   "projected to use", "speculative", "using device", "failed to initialize")


@dataclass(frozen=True)
class DeviceRow:
    name: str  # "CUDA0 (RTX 4070)" / "RAM"
    kind: str  # gpu | cpu | unified
    capacity: int  # bytes usable
    weights: int = 0
    kv: int = 0
    drafter: int = 0
    compute: int = 0

    @property
    def used(self) -> int:
        return self.weights + self.kv + self.drafter + self.compute

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.used)

    def segment(self, key: str) -> int:
        return int(getattr(self, key))


@dataclass(frozen=True)
class PlanView:
    context: int
    kv_type: str
    slots: int
    devices: tuple[DeviceRow, ...]
    fit: str  # fits | partial | no
    reasons: tuple[Text, ...]
    plan_args: tuple[str, ...] = ()
    fallback_plan_args: tuple[str, ...] | None = None  # the plan without the drafter
    drop_drafter: bool = False
    drop_reason: Text | None = None
    max_context: int = 0
    estimate_only: bool = False
    warnings: tuple[Text, ...] = ()
    settings_notes: tuple[Text, ...] = ()  # the engine settings measured and chosen (after the why)
    raw: planner.Plan | None = field(default=None, compare=False, repr=False)  # what this view shows

    @property
    def total(self) -> int:
        return sum(d.used for d in self.devices)


def view_of(p: planner.Plan) -> PlanView:
    devices = tuple(
        DeviceRow(
            _device_name(d), d.kind, d.capacity, weights=d.weights + d.projector, kv=d.kv,
            drafter=d.drafter, compute=d.compute + d.output,
        )
        for d in p.per_device
    )
    return PlanView(
        context=p.ctx, kv_type=p.kv_type, slots=p.slots, devices=devices, fit=p.fit_state,
        reasons=tuple(p.reasons), plan_args=tuple(p.plan_args),
        fallback_plan_args=tuple(p.fallback_plan_args) if p.fallback_plan_args else None,
        drop_drafter=p.drop_drafter, drop_reason=p.drop_reason, max_context=p.max_context,
        estimate_only=p.estimated_weights, warnings=tuple(p.warnings), settings_notes=tuple(p.settings_notes), raw=p,
    )


def _device_name(d: plan_types.DeviceUse) -> str:
    return tr("RAM") if d.name == "RAM" else d.name


# ------------------------------------------------------------------ the machine
def probe_machine(engine_binary: Path | None = None) -> hardware.Machine:
    """The machine as the engine will see it (process starts: off the GUI thread)."""
    return hardware.inventory(engine_binary)


# ------------------------------------------------------------------ planning
def context_steps(max_ctx: int) -> list[int]:
    """Slider stops: powers of two and their 1.5x, from the floor to the model's maximum."""
    max_ctx = max(max_ctx or CONTEXT_FLOOR, CONTEXT_FLOOR)
    steps: list[int] = []
    n = CONTEXT_FLOOR
    while n < max_ctx:
        steps.append(n)
        if n * 3 // 2 < max_ctx and n >= 4096:
            steps.append(n * 3 // 2)
        n *= 2
    steps.append(max_ctx)
    return sorted(set(steps))


def prefs_for(context: int | None, kv_type: str | None) -> planner.PlanPrefs:
    return planner.PlanPrefs(ctx=context, kv_type=kv_type)


def make_plan(
    model: gguf.ModelInfo,
    spec: SpecDecision,
    machine: hardware.Machine,
    context: int | None,
    kv_type: str | None,
) -> PlanView:
    """The plan for the window, without speculation's say (runs off the GUI thread)."""
    return view_of(planner.plan(model, spec, machine, prefs_for(context, kv_type)))


def assess_fit(model: gguf.ModelInfo, machine: hardware.Machine) -> str:
    """The library's "fits" badge: the model alone at default settings."""
    return planner.fit_state(model, machine)


# ------------------------------------------------------------------ actual use (engine log)
def parse_actual(lines: Sequence[str]) -> logparse.ActualMemory:
    return logparse.parse_lines(lines)


class PlanViewModel(QObject):
    changed = Signal()
    inputs_changed = Signal()  # context or KV type changed: re-plan at once

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context: int | None = None  # None: let the planner choose
        self.kv_type: str | None = None  # None: let the planner choose
        self.result: PlanView | None = None
        self.error: str | None = None
        self.planning = False
        self.max_context = 0
        self.kv_types: tuple[str, ...] = KV_TYPES  # the types this model can use
        self.actual: logparse.ActualMemory | None = None
        self.launched: PlanView | None = None  # the plan the running engine was started with
        self._actual_lines: list[str] = []

    # ---------------------------------------------------------------- input
    def set_context(self, value: int | None) -> None:
        if value != self.context:
            self.context = value
            self.planning = True
            self.changed.emit()
            self.inputs_changed.emit()

    def set_kv_types(self, types: Sequence[str]) -> None:
        """Offer only these KV types (a quantized cache needs head sizes that are a multiple
        of 32); a saved choice the model cannot use goes back to automatic."""
        self.kv_types = tuple(t for t in KV_TYPES if t in types) or ("f16",)
        if self.kv_type is not None and self.kv_type not in self.kv_types:
            self.kv_type = None
        self.changed.emit()

    def set_kv_type(self, value: str | None) -> None:
        if value is not None and value not in self.kv_types:
            raise ValueError(value)
        if value != self.kv_type:
            self.kv_type = value
            self.planning = True
            self.changed.emit()
            self.inputs_changed.emit()

    def load(self, context: int | None, kv_type: str | None, max_context: int) -> None:
        self.context = context
        self.kv_type = kv_type if kv_type in self.kv_types else None
        self.max_context = max_context
        self.result = None
        self.error = None
        self.clear_actual()

    def set_result(self, result: PlanView | None, error: str | None = None) -> None:
        self.result, self.error = result, error
        self.planning = False
        if result is not None and result.max_context:
            self.max_context = result.max_context
        self.changed.emit()

    # ---------------------------------------------------------------- actual
    def clear_actual(self) -> None:
        self.actual = None
        self.launched = None
        self._actual_lines = []

    def set_launched(self, view: PlanView | None) -> None:
        self.clear_actual()
        self.launched = view

    def new_attempt(self, plan: planner.Plan | None = None) -> None:
        """A relaunch of the running launch begins (fallback, feature fix, ladder rung): what the
        engine uses is read from its lines alone, never summed with the start before it, and
        compared with the plan it runs (`plan`; None: the same plan)."""
        if self.launched is None:
            return
        if plan is not None:
            self.launched = view_of(plan)
        self.actual = None
        self._actual_lines = []
        self.changed.emit()

    def feed_log(self, lines: Sequence[str]) -> None:
        relevant = [x for x in lines if any(m in x for m in _ACTUAL_MARKERS)]
        if relevant and self.launched is not None and len(self._actual_lines) < 5000:
            self._actual_lines += relevant
            actual = parse_actual(self._actual_lines)
            if actual.lines:
                self.actual = actual
                self.changed.emit()

    # ---------------------------------------------------------------- texts
    def steps(self) -> list[int]:
        return context_steps(self.max_context or (self.result.max_context if self.result else 0))

    def shown_context(self) -> int:
        if self.context is not None:
            return self.context
        return self.result.context if self.result else CONTEXT_FLOOR

    def context_text(self) -> str:
        text = human_ctx(self.shown_context())
        return text if self.context is not None else tr("{0} (auto)").format(text)

    def fit_text(self) -> str:
        r = self.result
        if r is None:
            return self.error or (tr("Planning…") if self.planning else "")
        return {FITS: tr("Fits"), PARTIAL: tr("Partly on the GPU"), NO_FIT: tr("Does not fit")}[r.fit]

    def reasons(self) -> list[str]:
        r = self.result
        if r is None:
            return [self.error] if self.error else []
        out = [tr_message(t) for t in (*r.reasons, *r.warnings, *r.settings_notes)]
        if not r.reasons and r.fit != NO_FIT:
            out.insert(0, self._summary(r))
        return out

    def _summary(self, r: PlanView) -> str:
        """The "why" when nothing had to give: where it runs and what is left."""
        used = [d for d in r.devices if d.used > 0]
        spare = human_bytes(min((d.free for d in used), default=0))
        gpus = [d for d in used if d.kind != DeviceKind.CPU]
        if gpus and r.fit == FITS:
            text = tr("Everything runs on {0} with {1} to spare.").format(", ".join(d.name for d in gpus), spare)
        elif gpus:
            text = tr("The model is split between the GPU and RAM, with {0} to spare.").format(spare)
        else:
            text = tr("Everything fits in RAM with {0} to spare.").format(spare)
        text += " " + tr("Room for a {0}-token conversation ({1} KV cache).").format(human_ctx(r.context), r.kv_type)
        drafter = getattr(r.raw, "drafter", None)
        if drafter:
            text += " " + tr("The {0} fits as well.").format(tr_message(drafter))
        return text

    def planned_vs_actual(self) -> list[tuple[str, str, str]]:
        """(what, planned, actual) rows once the engine reported its buffers."""
        plan = self.launched
        if self.actual is None or plan is None or plan.raw is None:
            return []
        labels = {**{k: tr(label) for k, label in SEGMENTS}, "total": tr("total")}
        rows = []
        for row in planned_vs_actual.compare(plan.raw, self.actual):
            key, planned, actual = row["component"], row["planned"], row["actual"]
            if key == "output" or (not planned and not actual):
                continue
            rows.append((labels.get(key, key), human_bytes(planned), human_bytes(actual) if actual else "—"))
        return rows


def kv_types_for(model: gguf.ModelInfo) -> list[str]:
    """The KV cache types this model can use (`fit_search.kv_types_for`) that the window offers."""
    return [t for t in fit_search.kv_types_for(model) if t in KV_TYPES]
