"""Each served model's failures, as one launch's: the rules, once, for the CLI and the window.

Like core/launch/launch_flow.py for one engine, `ServeFlow` is a state machine with no I/O
of its own: events in (the router's `/models` list, each instance's forwarded lines), actions
out (write this preset and load that model again; something to tell). The drivers —
cli/serve.py and viewmodels/serve.py, through services/router_models.py — do what it says and
show what it tells, nothing more. The rules (docs/rules.md, per model):

- an instance that runs out of memory at start takes its ladder's next rung
  (core/launch/ladder.py): its section is written from the lower plan and it is loaded
  again; once that rung has loaded it is remembered for the model, as a launch's is;
- an instance that dies at start while its automatic drafter is on gets one more load
  without speculation — the launch's one-shot fallback — and the drafter is remembered as
  broken for this engine;
- any other failure is said; the other models keep serving.

It keeps one `EngineOutcome` per model (`model` set to its file) and is its only writer.
The preset file is rendered here (`_section_of`, `_render`): the one place serving's
failures call core/serving/preset.py.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from draftwise.core.engines.args import Option
from draftwise.core.launch import crash
from draftwise.core.launch.ladder import Climb, Halt
from draftwise.core.launch.outcome import FAILED, IDLE, LOADING, READY, EngineOutcome, Stage
from draftwise.core.messages import Message, msg
from draftwise.core.records import write_error
from draftwise.core.serving import instances, preset

if TYPE_CHECKING:
    from draftwise.core.serving.serve_plan import ServedModel, ServePlan

log = logging.getLogger(__name__)

# The router's instance states as a model's stage (a sleeping or unloaded model runs no engine).
STAGES: Mapping[str, Stage] = {instances.LOADED: READY, instances.LOADING: LOADING, instances.SLEEPING: IDLE,
                               instances.UNLOADED: IDLE, instances.FAILED: FAILED}


class Rungs(Protocol):
    """What the flow asks of a model's out-of-memory ladder (core/launch/ladder.py `Ladder`)."""

    climbed: list[Any]

    def climb(self, cause: crash.Cause, running_argv: tuple[str, ...]) -> Climb | Halt | None: ...

    def succeeded(self) -> list[Message]: ...


class BrokenStore(Protocol):
    def record(self, binary: Path, drafter_key: str, reason: Any) -> None: ...


@dataclass(frozen=True)
class ServedFacts:
    """What the rules need of one served model (serve_plan.ServedModel, `facts_of`)."""

    id: str
    path: Path
    section: preset.Section  # what the preset holds for it at the start
    argv: tuple[str, ...]  # the launch it was planned as (binary first)
    fallback: preset.Section | None = None  # its section without speculation, when it has one
    drafter_key: str | None = None  # its automatic drafter, remembered as broken when it kills the start
    ladder: Callable[[], Rungs | None] = field(default=lambda: None)  # made at its first out-of-memory


def facts_of(served: ServedModel) -> ServedFacts:
    """The facts of a `serve_plan.ServedModel`: its ladder is the launch session's."""
    spec = served.planned.prepared.spec
    return ServedFacts(served.id, served.path, served.section, tuple(served.launch.argv), served.fallback,
                       spec.drafter_key or None, lambda: served.planned.ladder(served.launch))


# ---------------------------------------------------------------- actions
@dataclass(frozen=True)
class Rewrite:
    """Write `text` as the preset file, have the router read it again (`/models?reload=1`),
    then load `load` (None: load nothing)."""

    text: str
    load: str | None = None


@dataclass(frozen=True)
class StateChanged:
    """A model's instance changed (its state as the router lists it)."""

    instance: instances.Instance


@dataclass(frozen=True)
class ModelFellBack:
    """`id` is loaded again without speculation; `reason` says so in plain words."""

    id: str
    reason: Message


@dataclass(frozen=True)
class ModelClimbed:
    """`id` is loaded again on its ladder's next rung; `reason` says what ran out and what is given up."""

    id: str
    reason: Message


@dataclass(frozen=True)
class Failed:
    """`id` could not start and nothing more is tried: `problem` says why; the others keep serving."""

    id: str
    problem: Message


@dataclass(frozen=True)
class ModelNotice:
    """Something to know about `id` (a rung or a drafter remembered, or not)."""

    id: str
    text: Message


Action = Rewrite | StateChanged | ModelFellBack | ModelClimbed | Failed | ModelNotice


# ---------------------------------------------------------------- sentences
def failed_words(ident: str, exit_code: int | None) -> Message:
    return msg("{id} stopped while starting (exit code {code}). The other models keep serving; the log says why.",
               id=ident, code=exit_code if exit_code is not None else "?")


def problem_words(ident: str, cause: crash.Cause | None, exit_code: int | None) -> Message:
    """Why a model could not start, in plain words (the cause from its own last lines)."""
    if cause is None:
        return failed_words(ident, exit_code)
    return msg("{id} could not start: {sentence} {next_step} The other models keep serving.", id=ident,
               sentence=cause.sentence, next_step=cause.next_step)


def fallback_words(ident: str, cause: crash.Cause | None) -> Message:
    if cause is None:
        return msg("{id} stopped at start with its draft model, so it was started again without it. The other "
                   "models keep serving.", id=ident)
    return msg("{id} stopped at start with its draft model ({sentence}), so it was started again without it. "
               "The other models keep serving.", id=ident, sentence=cause.sentence)


def climbed_words(ident: str, reason: Message) -> Message:
    return msg("{id}: {reason} The other models keep serving.", id=ident, reason=reason)


# ---------------------------------------------------------------- the flow
class ServeFlow:
    """The failure rules of every served model; `outcomes` holds one EngineOutcome per model."""

    def __init__(self, models: Iterable[ServedFacts], *, binary: Path | None = None,
                 broken: BrokenStore | None = None) -> None:
        self.facts = {m.id: m for m in models}
        self.binary, self.broken = binary, broken
        self.sections: dict[str, preset.Section] = {i: m.section for i, m in self.facts.items()}
        self.outcomes: dict[str, EngineOutcome] = {i: EngineOutcome(model=m.path) for i, m in self.facts.items()}
        self.lines = instances.ChildLines.new()  # each instance's last lines: what a crash cause reads
        self.watch = instances.InstanceWatch.new()
        self._ladders: dict[str, Rungs | None] = {}  # made at a model's first out-of-memory
        self._argv: dict[str, tuple[str, ...]] = {}  # the argv of its running rung, once it climbed
        self._remembered: set[str] = set()  # ids whose lower rung is remembered

    @classmethod
    def from_plan(cls, plan: ServePlan, binary: Path) -> ServeFlow:
        """The flow of a `serve_plan.ServePlan` (one Records for all its models)."""
        records = plan.models[0].planned.records if plan.models else None
        return cls([facts_of(m) for m in plan.models], binary=binary,
                   broken=records.broken if records is not None else None)

    # ------------------------------------------------------------ events
    def add_lines(self, lines: list[str]) -> None:
        """The router's output lines (each instance's are kept, by its port)."""
        self.lines.add(lines)

    def models(self, now: Mapping[str, instances.Instance]) -> list[Action]:
        """The router's `/models` list, read (instances.read): what to do about what changed."""
        actions: list[Action] = []
        for inst in self.watch.changes(dict(now)):
            if inst.id not in self.facts or inst.id not in self.sections:
                continue
            actions.append(StateChanged(inst))
            if inst.state == instances.FAILED:
                actions += self._failed(inst)
            else:
                self._set(inst.id, stage=STAGES.get(inst.state, IDLE), cause=None)
                if inst.state == instances.LOADED:
                    actions += self._loaded(inst.id)
        return actions

    def removed(self, ident: str) -> list[Action]:
        """`ident` is served no more (its file was deleted): the preset is written without it."""
        if self.sections.pop(ident, None) is None:
            return []
        return [Rewrite(self._render())]

    # ------------------------------------------------------------ rules
    def _failed(self, inst: instances.Instance) -> list[Action]:
        facts = self.facts[inst.id]
        lines = self.lines.of(inst.args)
        status = crash.ExitStatus.from_returncode(inst.exit_code if inst.exit_code is not None else 1)
        running = self.sections[inst.id].as_dict()
        speculation = "spec-type" in running or "model-draft" in running
        cause = crash.classify(status, lines, speculation=speculation) if lines else None
        self._set(inst.id, stage=FAILED, cause=cause)
        if cause is not None and cause.kind == crash.OUT_OF_MEMORY:
            climbed = self._climb(facts, cause)
            if climbed is not None:
                return climbed
        can = facts.fallback is not None and self.sections[inst.id] != facts.fallback
        if self.watch.falls_back(inst, can):
            return self._fall_back(facts, inst, cause)
        return [Failed(inst.id, problem_words(inst.id, cause, inst.exit_code))]

    def _climb(self, facts: ServedFacts, cause: crash.Cause) -> list[Action] | None:
        """The ladder's next rung for an out-of-memory start; None when the ladder has none to
        give (no ladder for this model)."""
        if facts.id not in self._ladders:
            self._ladders[facts.id] = facts.ladder()
        steps = self._ladders[facts.id]
        if steps is None:
            return None
        step = steps.climb(cause, self._argv.get(facts.id, facts.argv))
        if step is None:
            return None
        if isinstance(step, Halt):
            problem = msg("{problem} {halt}", problem=problem_words(facts.id, cause, None), halt=step.reason)
            return [Failed(facts.id, problem)]
        try:
            section = _section_of(facts.id, step.spec.options)
        except preset.PresetError as exc:
            return [Failed(facts.id, msg("{problem} The lower setting cannot be written for the engine ({why}).",
                                         problem=problem_words(facts.id, cause, None), why=str(exc)))]
        self.sections[facts.id] = section
        self._argv[facts.id] = tuple(step.spec.argv)
        out = self.outcomes[facts.id]
        self._set(facts.id, stage=LOADING, attempt=out.attempt + 1, concessions=step.concessions,
                  ladder_reason=step.reason, plan=step.prepared.plan)
        return [ModelClimbed(facts.id, climbed_words(facts.id, step.reason)), Rewrite(self._render(), facts.id)]

    def _fall_back(self, facts: ServedFacts, inst: instances.Instance, cause: crash.Cause | None) -> list[Action]:
        assert facts.fallback is not None
        self.sections[facts.id] = facts.fallback
        reason = fallback_words(facts.id, cause)
        out = self.outcomes[facts.id]
        self._set(facts.id, stage=LOADING, attempt=out.attempt + 1, fallback_reason=reason, fallback_cause=cause)
        actions: list[Action] = [ModelFellBack(facts.id, reason)]
        actions += self._record_broken(facts, inst)
        actions.append(Rewrite(self._render(), facts.id))
        return actions

    def _record_broken(self, facts: ServedFacts, inst: instances.Instance) -> list[Action]:
        if self.broken is None or self.binary is None or not facts.drafter_key:
            return []
        try:
            self.broken.record(self.binary, facts.drafter_key, instances.broken_reason(inst.id, inst.exit_code))
        except OSError as exc:
            text = msg("Could not remember the broken drafter ({error}); the next launch will try it again.",
                       error=write_error(exc))
        else:
            text = msg("{id} runs without its draft model from now on; `draftwise broken clear` lets it try "
                       "again later.", id=facts.id)
        self._tell(facts.id, text, about_fallback=True)
        return [ModelNotice(facts.id, text)]

    def _loaded(self, ident: str) -> list[Action]:
        """Loaded on a lower rung: that rung is remembered for the model, as a launch's is."""
        steps = self._ladders.get(ident)
        if steps is None or not steps.climbed or ident in self._remembered:
            return []
        self._remembered.add(ident)
        out = []
        for note in steps.succeeded():
            self._tell(ident, note)
            out.append(ModelNotice(ident, note))
        return out

    # ------------------------------------------------------------ the outcomes
    def _set(self, ident: str, **changes: Any) -> None:
        self.outcomes[ident] = replace(self.outcomes[ident], **changes)

    def _tell(self, ident: str, text: Message, *, about_fallback: bool = False) -> None:
        log.warning("%s: %s", ident, text)
        out = self.outcomes[ident]
        if about_fallback:
            self._set(ident, fallback_notes=(*out.fallback_notes, text))
        else:
            self._set(ident, notices=(*out.notices, text))

    def done(self, ident: str) -> Message | None:
        """What was done about a model's failure, in plain words; None when nothing was."""
        out = self.outcomes.get(ident)
        if out is None:
            return None
        if out.ladder_reason is not None:
            return climbed_words(ident, out.ladder_reason)
        return out.fallback_reason

    def problem(self, ident: str, inst: instances.Instance | None) -> Message | None:
        """Why a model's instance failed, while it is failed."""
        out = self.outcomes.get(ident)
        if out is None or out.stage != FAILED:
            return None
        return problem_words(ident, out.cause, inst.exit_code if inst is not None else None)

    def _render(self) -> str:
        return preset.render(self.sections.values())


def _section_of(ident: str, options: Sequence[Option]) -> preset.Section:
    """A model's section for a lower rung's launch (its `LaunchSpec.options`, never its argv
    read back): the one call into preset.section here."""
    return preset.section(ident, options)
