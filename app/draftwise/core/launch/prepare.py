"""One launch, decided: model → speculation → memory plan → engine command.

The single place where the decisions are chained (architecture.md "One launch, as data"),
so `draftwise plan`, `draftwise launch`, the window and the self-test can never disagree.
Pure: it reads GGUF headers and asks the engine's --help (cached), nothing else.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

from draftwise.core.engines.capabilities import EngineCaps
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import launch_spec, llamacpp
from draftwise.core.machine.hardware import Machine
from draftwise.core.planning import planner
from draftwise.core.speculation import resolver


class PrepareError(FieldError):
    """Input that cannot be launched."""


@dataclass(frozen=True)
class Request:
    """Everything the user chose for one launch."""

    model: Path
    mtp: str = "auto"
    draft: Path | None = None
    backend: str = resolver.LLAMA_CPP
    extra_args: tuple[str, ...] = ()
    ngram_when_no_drafter: bool = False
    prefs: planner.PlanPrefs = field(default_factory=planner.PlanPrefs)


@dataclass(frozen=True)
class Prepared:
    """The decisions for one launch, ready to print or to start."""

    model: gguf.ModelInfo
    spec: resolver.SpecDecision  # what the engine will run (the drafter dropped if the plan says so)
    chosen: resolver.SpecDecision  # what the resolver chose before the plan had its say
    plan: planner.Plan
    draft: gguf.ModelInfo | None
    extra_args: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        return self.spec.notes

    def argv(self, binary: Path | str, *, port: int = llamacpp.DEFAULT_PORT,
             host: str = llamacpp.HOST) -> list[str]:  # fmt: skip
        return llamacpp.build_argv(
            binary, self.model, self.spec, extra_args=self.extra_args, host=host, port=port,
            plan_args=self.plan.plan_args,
        )

    def launch(self, binary: Path, *, port: int, **kwargs) -> launch_spec.LaunchSpec:
        """The LaunchSpec (env, key, fallback argv) for this decision."""
        return launch_spec.llamacpp_launch(
            binary, self.model, self.spec, port=port, extra_args=self.extra_args,
            plan_args=self.plan.plan_args,
            fallback_plan_args=self.plan.fallback_plan_args or self.plan.plan_args,
            **kwargs,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "model": str(self.model.path),
            "speculative": self.spec.to_json(),
            "plan": self.plan.to_json(),
        }


def read_model(path: Path) -> gguf.ModelInfo:
    try:
        model = gguf.read_model(path)
    except gguf.GGUFError as exc:
        raise PrepareError("model", str(exc)) from exc
    if model.sidecar_kind is not None or model.mtp_layout == "mtp-only":
        # The engine crashes on a drafter file given as the model (engine-observations.md).
        raise PrepareError(
            "model",
            f"{model.path.name} is a drafter ({model.sidecar_kind or 'MTP head'}), not a model to run; "
            "choose the full model, and put this file in the Draft model field or beside the model.",
        )
    if model.missing_shards:
        raise PrepareError(
            "model",
            f"{model.path.name}: missing part(s) {', '.join(model.missing_shards)}; "
            "download them into the same folder.",
        )
    return model


def prepare(
    request: Request,
    caps: EngineCaps,
    machine: Machine,
    *,
    broken: Collection[str] = frozenset(),
    model: gguf.ModelInfo | None = None,
) -> Prepared:
    """Decide speculation and memory for `request`. PrepareError for a user error."""
    model = model or read_model(request.model)
    options = resolver.SpecOptions(
        mtp=request.mtp,
        draft=request.draft,
        backend=request.backend,
        extra_args=request.extra_args,
        ngram_when_no_drafter=request.ngram_when_no_drafter,
        broken=broken,
    )
    try:
        chosen = resolver.resolve(model, options, caps)
    except resolver.ResolveError as exc:
        raise PrepareError(exc.field, str(exc)) from exc
    draft = chosen.draft_info or _read_draft(chosen.draft)
    try:
        result = planner.plan(model, chosen, machine, request.prefs, draft)
    except ValueError as exc:  # a KV type or context this model cannot take
        raise PrepareError("kv_type", str(exc)) from exc
    spec = chosen
    if result.drop_drafter:
        # The plan decided the drafter costs the model more than it gives: run as if there
        # were none, and say which cost was avoided.
        spec = replace(
            launch_spec.NO_SPECULATION,
            notes=(*chosen.notes, result.drop_reason),
        )
    return Prepared(
        model=model, spec=spec, chosen=chosen, plan=result,
        draft=None if result.drop_drafter else draft, extra_args=tuple(request.extra_args),
    )


def _read_draft(path: Path | None) -> gguf.ModelInfo | None:
    if path is None:
        return None
    try:
        return gguf.read_model(path)
    except gguf.GGUFError as exc:
        # The resolver read it a moment ago; a file changing under us is the user's to fix.
        raise PrepareError("draft", str(exc)) from exc

