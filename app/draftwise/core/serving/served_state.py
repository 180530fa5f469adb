"""What the window says about each served model: its state as the router reports it, the
speculation its section runs, the speed-up measured for it, and, while requests run, its
live tokens/s and acceptance from the engine's own per-request lines.

The router forwards each instance's lines as `[ PORT] line` (instances.child_line); an
instance's port is in the argv the router lists for it (`/models`: `status.args`), so a line
is tied to its model through that port. The figures are the engine's `print_timings` lines
of each request (core/measurements/live_figures.py parses them): the generation line
`eval time = X ms / N tokens` and, with speculation, `draft acceptance = R (...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from draftwise.core.engines import spec_types
from draftwise.core.measurements import live_figures
from draftwise.core.messages import Message, Text, msg
from draftwise.core.serving import instances, serve_flow
from draftwise.core.serving.preset import Section
from draftwise.core.speculation.decision_types import type_words

# Before the router has listed a model, or while the router itself starts.
WAITING = "waiting"


@dataclass(frozen=True)
class LiveFigures:
    """One model's last request, as its instance said it."""

    tokens_per_second: float | None = None
    acceptance: float | None = None  # 0..1; None without speculation or before a draft
    requests: int = 0  # requests finished since serving started


@dataclass(frozen=True)
class ServedRow:
    id: str
    state: str  # instances.LOADED, LOADING, SLEEPING, UNLOADED, FAILED, or WAITING
    speculation: Text  # in words: "MTP head", "draft model", "none"
    speedup: float | None  # measured here where speculation pays (measured.speedups), else None
    live: LiveFigures = field(default_factory=LiveFigures)
    problem: Message | None = None  # why it failed, in plain words
    done: Message | None = None  # what was done about its failure (started again without its drafter, lower)


def speculation_words(section: Section) -> Text:
    """The speculation a model's section runs, in words ("MTP head", "n-gram lookup + draft
    model"); "none" when it runs without."""
    types = [t for t in spec_types.split_types(section.as_dict().get("spec-type")) if t != spec_types.NONE]
    if not types and section.as_dict().get("model-draft"):
        types = [spec_types.DRAFT_SIMPLE]
    if not types:
        return msg("none")
    return " + ".join(str(type_words(t)) for t in types) if len(types) > 1 else type_words(types[0])


def failure(inst: instances.Instance, lines: list[str], section: Section) -> Message:
    """Why a model's instance stopped, from its own last lines (instances.ChildLines), as one
    launch's failure is told (core/launch/crash.py); the other models keep serving."""
    from draftwise.core.launch import crash

    if not lines:
        return serve_flow.failed_words(inst.id, inst.exit_code)
    status = crash.ExitStatus.from_returncode(inst.exit_code if inst.exit_code is not None else 1)
    cause = crash.classify(status, lines, speculation="spec-type" in section.as_dict())
    return serve_flow.problem_words(inst.id, cause, inst.exit_code)


def port_of(args: tuple[str, ...]) -> int | None:
    """The port an instance was started on (its `--port`), None when the argv has none."""
    if "--port" not in args[:-1]:
        return None
    try:
        return int(args[args.index("--port") + 1])
    except ValueError:
        return None


@dataclass
class LiveByModel:
    """Each model's last request figures, from the router's output lines."""

    ports: dict[int, str] = field(default_factory=dict)  # instance port -> model id
    by_port: dict[int, LiveFigures] = field(default_factory=dict)

    def set_instances(self, now: Mapping[str, instances.Instance]) -> None:
        for inst in now.values():
            port = port_of(inst.args)
            if port is not None:
                self.ports[port] = inst.id

    def add(self, lines: list[str]) -> bool:
        """Read the router's lines; True when a figure changed."""
        changed = False
        for line in lines:
            found = instances.child_line(line)
            if found is None:
                continue
            port, text = found
            old = self.by_port.get(port, LiveFigures())
            evals = live_figures.parse_eval_line(text)
            if evals is not None and evals[1] > 0:
                self.by_port[port] = LiveFigures(evals[0] / (evals[1] / 1000.0), old.acceptance, old.requests + 1)
                changed = True
                continue
            accepted = live_figures.parse_acceptance_line(text)
            if accepted is not None:
                self.by_port[port] = LiveFigures(old.tokens_per_second, accepted.rate, old.requests)
                changed = True
        return changed

    def of(self, ident: str) -> LiveFigures:
        """The model's figures (its newest instance's, when it was started more than once)."""
        ports = [p for p, i in self.ports.items() if i == ident and p in self.by_port]
        return self.by_port[ports[-1]] if ports else LiveFigures()


def rows(models: Mapping[str, Section], now: Mapping[str, instances.Instance], live: LiveByModel,
         speedups: Mapping[str, float | None], lines: instances.ChildLines | None = None,
         flow: serve_flow.ServeFlow | None = None) -> tuple[ServedRow, ...]:
    """One row per served model (`models`: id -> its section, in the plan's order); a failed
    one says why — the flow's cause where a ServeFlow reads the failures, else from its
    instance's own lines (`lines`) — and what was done about it."""
    out = []
    for ident, section in models.items():
        inst = now.get(ident)
        state = inst.state if inst is not None else WAITING
        if flow is not None:
            section = flow.sections.get(ident, section)  # the running one: after a fallback, without
        problem = None
        if inst is not None and state == instances.FAILED:
            # With a flow, a failure it is starting again (fallback, rung) is no problem: `done` says so.
            problem = flow.problem(ident, inst) if flow is not None else \
                failure(inst, lines.of(inst.args) if lines is not None else [], section)
        done = flow.done(ident) if flow is not None else None
        out.append(ServedRow(ident, state, speculation_words(section), speedups.get(ident), live.of(ident), problem,
                             done))
    return tuple(out)
