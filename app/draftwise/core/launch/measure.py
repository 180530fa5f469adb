"""Measure what speculation really gives: the same prompts with the drafter and without.

One measurement = one arm without speculation, then one arm per draft length tried, each a
fresh engine start (the draft length is a start-up flag; the server has no per-request one)
with everything else equal: the same plan arguments (context, KV type, offload), one slot,
the same prompts, greedy, a fixed number of generated tokens with the end-of-text token
ignored. Tokens/s are the engine's own generation timings (`timings.predicted_*`), so
prompt processing and HTTP are not counted. Noise is the spread between rounds of the same
prompt in the same arm, so a result within the noise is never called slower.

Runs headless (core/launch/headless.py) on the caller's thread; the window runs it on a
worker thread. Engine fixes work as on every launch path (core/launch/fixes.py): a start that
crashes on a feature (the AMX kernels) is relaunched once without it and the fix recorded, and
the later arms start with it, so a measurement pays such a crash at most once. `cancel` (a threading.Event) stops at the next check, within a fraction of a
second; every engine started is stopped before `measure()` returns or raises, and nothing
is recorded unless the whole measurement finished (the caller records the result).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.kinds import Backend
from draftwise.core.launch import crash, drafting, headless, launch_spec
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.prepare import Prepared, Request, combination
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.messages import Message, Text, msg
from draftwise.core.speculation import measured
from draftwise.core.speculation.resolver import SpecDecision


@dataclass(frozen=True)
class Prompt:
    kind: str
    text: str


# A few kinds of work a user gives a model: drafting pays differently on each (code and
# rewriting repeat their input more than chat does).
PROMPTS: tuple[Prompt, ...] = (
    Prompt("chat", "User: What should I pack for a three-day hiking trip in the mountains in autumn?\n"
                   "Assistant:"),
    Prompt("code", "# Python\n# A function that returns the n-th Fibonacci number, iteratively, with a docstring.\n"
                   "def fibonacci(n: int) -> int:\n"),
    Prompt("rewrite", "Rewrite the following text in plain, friendly words, keeping every fact.\n\n"
                      "Text: The quarterly meeting has been rescheduled to Thursday at 10:00 owing to the "
                      "unavailability of the main conference room. Attendees are requested to confirm "
                      "their participation by Wednesday noon and to bring the revised budget figures.\n\n"
                      "Rewritten:"),
)


@dataclass(frozen=True)
class Settings:
    tokens: int = 128  # generated per prompt and round
    rounds: int = 2  # the noise needs at least 2
    prompts: tuple[Prompt, ...] = PROMPTS
    n_max_values: tuple[int, ...] | None = None  # None: measured.N_MAX_CANDIDATES
    ready_timeout: float = 600.0
    request_timeout: float = 600.0


@dataclass(frozen=True)
class Progress:
    step: int
    steps: int
    text: Message


class Cancelled(Exception):
    """The user stopped the measurement (or the app is closing)."""


class MeasureError(Exception):
    """The measurement could not finish; `message` says why (the crash sentence if any)."""

    def __init__(self, message: Text, cause: crash.Cause | None = None) -> None:
        super().__init__(str(message))
        self.message = message
        self.cause = cause


@dataclass(frozen=True)
class Arm:
    """One engine start: tokens/s over all measured requests, and per request."""

    n_max: int | None  # None: the arm without speculation
    tokens: float  # generated over all measured requests
    ms: float  # the engine's generation time for them
    per_request: tuple[tuple[int, int, float], ...]  # (prompt index, round, tokens/s)
    counters: drafting.Counters

    @property
    def tokens_per_s(self) -> float:
        return self.tokens * 1000.0 / self.ms if self.ms > 0 else 0.0

    def plus(self, other: Arm) -> Arm:
        """This arm with another round of it (another engine start) added."""
        return Arm(self.n_max, self.tokens + other.tokens, self.ms + other.ms,
                   self.per_request + other.per_request, self.counters.plus(other.counters))

    @property
    def figures(self) -> drafting.Figures:
        return drafting.Figures.from_counters(self.counters)

    def noise(self) -> float:
        """Relative spread between rounds of the same prompt (RMS over prompts)."""
        by_prompt: dict[int, list[float]] = {}
        for i, _, tps in self.per_request:
            by_prompt.setdefault(i, []).append(tps)
        spreads = []
        for values in by_prompt.values():
            if len(values) < 2 or min(values) <= 0:
                continue
            mean = sum(values) / len(values)
            sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
            spreads.append(sd / mean)
        if not spreads:
            return 0.0
        return math.sqrt(sum(s * s for s in spreads) / len(spreads))


def what_is_drafting(spec: SpecDecision) -> str:
    """The drafter in words, as the notes name it."""
    if spec.spec_type and spec.spec_type.startswith("ngram"):
        return "n-gram speculation"
    if spec.draft is not None:
        return f"the draft model {spec.draft.name}"
    if spec.spec_type == "draft-mtp":
        return "the MTP head"
    return f"{spec.spec_type} speculation"


def candidates(spec: SpecDecision, settings: Settings, extra_args: Sequence[str]) -> tuple[int | None, ...]:
    """Draft lengths to try; (None,) when the type has no length flag or the user set one."""
    flag = measured.n_max_flag(spec.spec_type)
    if flag is None or engine_args.sets(list(extra_args), flag):
        return (None,)
    return settings.n_max_values or measured.n_max_candidates(spec.spec_type) or (None,)


def engine_starts(prepared: Prepared, settings: Settings = Settings()) -> int:
    """How many times a measurement loads the model: every arm, every round."""
    return settings.rounds * (1 + len(candidates(prepared.spec, settings, prepared.extra_args)))


def estimated_seconds(prepared: Prepared, settings: Settings = Settings()) -> float:
    """A rough duration for the offer: every arm loads the model and generates the prompts.
    Loading reads the weights (~1 GB/s from a warm disk); generation reads them once per
    token (~20 GB/s of memory bandwidth, generously)."""
    weights = prepared.model.tensor_bytes + (prepared.draft.tensor_bytes if prepared.draft else 0)
    starts = engine_starts(prepared, settings)
    load = 2.0 + weights / 1e9
    per_token = max(weights / 20e9, 0.002)
    gen = (len(settings.prompts) * settings.tokens + 8) * per_token
    return starts * (load + gen)


def draft_cost(prepared: Prepared) -> float:
    """A drafted token's cost in target tokens, from the weight sizes the headers give."""
    spec = prepared.spec
    if spec.spec_type and spec.spec_type.startswith("ngram"):
        return 0.0  # a hash-table lookup
    if spec.spec_type == "draft-mtp" and prepared.draft is None:
        layers = prepared.model.block_count or 1
        return (prepared.model.nextn_predict_layers or 1) / layers
    if prepared.draft is not None:
        return measured.draft_cost_from_sizes(prepared.draft.tensor_bytes, prepared.model.tensor_bytes)
    return 0.0


def _without_draft_flags(args: Sequence[str]) -> tuple[str, ...]:
    """Plan arguments for the arm without speculation: the drafter's own settings out
    (`--spec-draft-*` take a value each), the target's context, KV and offload unchanged."""
    out: list[str] = []
    skip = False
    for token in args:
        if skip:
            skip = False
            continue
        if engine_args.flag_name(token).startswith("--spec-draft"):
            skip = "=" not in token
            continue
        out.append(token)
    return tuple(out)


# ------------------------------------------------------------------ the measurement
def measure(
    prepared: Prepared,
    binary: Path,
    machine: Machine,
    *,
    backend: str = Backend.CPU,
    gpus: Sequence[Gpu] = (),
    settings: Settings = Settings(),
    cancel: threading.Event | None = None,
    report: Callable[[Progress], None] | None = None,
    fixes: EngineFixes | None = None,
) -> measured.Measurement:
    """Run the arms and return the measurement (not recorded: the caller records it).
    `fixes`: the engine-fix record (a fix found on the way is written there at once)."""
    spec = prepared.spec
    if not spec.argv:
        raise MeasureError(msg("There is no speculation to measure for this model: {why}",
                               why=" ".join(str(n) for n in spec.notes[-1:]) or "none was chosen."))
    if not prepared.plan.fits:
        reasons = prepared.plan.reasons
        raise MeasureError(reasons[-1] if reasons else msg("The model does not fit this machine."))
    started = time.monotonic()
    lengths = candidates(spec, settings, prepared.extra_args)
    flag = measured.n_max_flag(spec.spec_type)
    steps = settings.rounds * (1 + len(lengths)) * (1 + len(settings.prompts))
    done = [0]

    def step(text: Message) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        if report is not None:
            report(Progress(done[0], steps, text))
        done[0] += 1

    # On loopback with a fresh key, whatever the user's launch settings (network, port).
    request = replace(prepared.request or Request(model=prepared.model.path), network=False, pinned_port=False,
                      api_key=None)
    fixed: list[str] = []  # a feature fix an arm needed (-nr): every later arm starts with it

    def arm_spec(decision: SpecDecision, plan_args: Sequence[str]) -> launch_spec.LaunchSpec:
        # The one launch path (Prepared.launch), with this arm's speculation and plan arguments;
        # the slots, context, KV and offload are the plan's in every arm.
        plan = replace(prepared.plan, plan_args=tuple(plan_args), fallback_plan_args=tuple(plan_args))
        arm = replace(prepared, spec=decision, plan=plan, request=request,
                      extra_args=(*prepared.extra_args, *fixed))
        launch = arm.launch(binary, engine_backend=backend, gpus=gpus, port=launch_spec.any_free_port(),
                            requested=machine.requested)
        return replace(launch, fallback_argv=None)  # a drafter that fails is the result, not retried

    # One engine start per arm and round, the arms interleaved round by round: a machine
    # that gets busier or quieter during the measurement slows every arm alike instead of
    # the last ones, and the spread between rounds (the noise) spans engine starts.
    plans: list[tuple[int | None, SpecDecision, tuple[str, ...], Message]] = [
        (None, launch_spec.NO_SPECULATION, _without_draft_flags(prepared.plan.plan_args), msg("without speculation"))]
    for n in lengths:
        decision = spec if n is None or flag is None else replace(spec, argv=(*spec.argv, flag, str(n)))
        label = (msg("with {what}", what=what_is_drafting(spec)) if n is None
                 else msg("with {what}, draft length {n}", what=what_is_drafting(spec), n=n))
        plans.append((n, decision, tuple(prepared.plan.plan_args), label))
    results: list[Arm | None] = [None] * len(plans)
    for r in range(settings.rounds):
        for k, (n, decision, plan_args, label) in enumerate(plans):
            got = _run_arm(arm_spec(decision, plan_args), n, r, settings, cancel, step, label, fixes, fixed)
            results[k] = got if results[k] is None else results[k].plus(got)  # type: ignore[union-attr]
    base, arms = results[0], [a for a in results[1:] if a is not None]
    assert base is not None
    best = max(arms, key=lambda a: a.tokens_per_s)
    figures = best.figures
    noise = math.sqrt(base.noise() ** 2 + best.noise() ** 2)
    if report is not None:
        report(Progress(steps, steps, msg("measured")))
    return measured.Measurement(
        combination=combination(prepared.model.path, spec, binary, machine),
        spec_type=spec.spec_type or "", what=what_is_drafting(spec),
        tokens_per_s_with=best.tokens_per_s, tokens_per_s_without=base.tokens_per_s, noise=noise,
        acceptance=figures.acceptance, mean_length=figures.mean_length,
        n_max=best.n_max, n_max_flag=flag if best.n_max is not None else None,
        tried=tuple((a.n_max, a.tokens_per_s) for a in arms if a.n_max is not None),
        tokens=settings.tokens, prompts=len(settings.prompts),
        seconds=time.monotonic() - started, when=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )


def _run_arm(spec: launch_spec.LaunchSpec, n_max: int | None, r: int, settings: Settings,
             cancel: threading.Event | None, step: Callable[[Message], None], label: Message,
             fixes: EngineFixes | None = None, fixed: list[str] | None = None) -> Arm:
    """One engine start of an arm: round `r` of every prompt. A feature fix its start needed
    is added to `fixed` for the arms after it."""
    run = headless.HeadlessLaunch(spec, fixes=fixes, record_run=True)
    try:
        step(msg("starting the engine {label}", label=label))
        run.start()
        deadline = time.monotonic() + settings.ready_timeout
        while not run.flow.is_ready and not run.flow.ended:
            _check(cancel)
            if time.monotonic() > deadline:
                raise MeasureError(msg("The engine was not ready after {s} s.", s=f"{settings.ready_timeout:.0f}"))
            run.pump()
        _fail_if_crashed(run)
        if run.flow.fix is not None and fixed is not None:
            fixed.extend(run.flow.fix.args)  # new: the arm's command had every earlier fix
        if spec.spec.argv and _slots_speculative(run) is False:
            raise MeasureError(drafting.dropped_drafter_warning(True, False, what_is_drafting(spec.spec)))
        # Warm-up: the first request allocates graphs and fills caches; not counted.
        _complete(run, _body(settings.prompts[0].text, 8), settings, cancel)
        before = _counters(run)
        per_request: list[tuple[int, int, float]] = []
        total_n, total_ms = 0.0, 0.0
        counters = drafting.Counters()
        for i, prompt in enumerate(settings.prompts):
            step(msg("{label}: {kind} prompt, round {r}", label=label, kind=prompt.kind, r=r + 1))
            timings = _complete(run, _body(prompt.text, settings.tokens), settings, cancel).get("timings", {})
            n, ms = float(timings.get("predicted_n", 0)), float(timings.get("predicted_ms", 0))
            if n <= 0 or ms <= 0:
                raise MeasureError(msg("The engine generated no tokens for the {kind} prompt.", kind=prompt.kind))
            per_request.append((i, r, n * 1000.0 / ms))
            total_n, total_ms = total_n + n, total_ms + ms
            # Each request's own figures: exact, where a difference of /metrics totals rounds.
            counters = counters.plus(drafting.Counters.from_timings(timings))
        # Verification steps are in no request's timings: the /metrics difference, exact while
        # the totals are below 10^6 (each arm starts its own engine); else unknown.
        after = _counters(run)
        steps = after.drafts - before.drafts if after.exact else 0.0
        return Arm(n_max, total_n, total_ms, tuple(per_request), replace(counters, drafts=steps))
    finally:
        run.stop()


def _check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def _fail_if_crashed(run: headless.HeadlessLaunch) -> None:
    if run.flow.cause is not None:
        raise MeasureError(msg("The engine stopped: {sentence}", sentence=run.flow.cause.sentence), run.flow.cause)
    if not run.flow.is_ready:
        raise MeasureError(msg("The engine stopped before it was ready."))


def _body(prompt: str, tokens: int) -> dict:
    # Greedy, a fixed count: the end-of-text token is ignored, the prompt not cached between
    # rounds, so every arm and round does the same work.
    return {"prompt": prompt, "n_predict": tokens, "temperature": 0, "top_k": 1, "ignore_eos": True,
            "cache_prompt": False, "seed": 0}


def _complete(run: headless.HeadlessLaunch, body: dict, settings: Settings,
              cancel: threading.Event | None) -> dict:
    """POST /completion on a helper thread while this one pumps the engine's output, so a
    crash mid-reply is seen (and classified) and a cancel is honoured at once."""
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["answer"] = headless.request(run.url, run.spec.api_key, "/completion", body,
                                                settings.request_timeout)
        except OSError as exc:
            result["error"] = exc

    worker = threading.Thread(target=work, name="measure-request", daemon=True)
    worker.start()
    while worker.is_alive():
        _check(cancel)
        run.pump(0.02)
        if run.flow.ended:
            worker.join(timeout=5)
            break
    _fail_if_crashed(run)
    if "error" in result or "answer" not in result:
        raise MeasureError(msg("The engine did not answer: {why}", why=str(result.get("error", "no answer"))))
    status, raw = result["answer"]  # type: ignore[misc]
    if status != 200:
        raise MeasureError(msg("The engine answered {status}: {body}", status=status, body=raw[:200].decode(errors="replace")))
    return json.loads(raw)


def _counters(run: headless.HeadlessLaunch) -> drafting.Counters:
    try:
        status, raw = headless.request(run.url, run.spec.api_key, "/metrics", None, 5.0)
    except OSError:
        return drafting.Counters()
    return drafting.Counters.from_metrics(raw.decode(errors="replace")) if status == 200 else drafting.Counters()


def _slots_speculative(run: headless.HeadlessLaunch) -> bool | None:
    try:
        status, raw = headless.request(run.url, run.spec.api_key, "/slots", None, 5.0)
    except OSError:
        return None
    return drafting.slots_speculative(raw) if status == 200 else None


def watch_for(prepared: Prepared) -> drafting.Watch:
    """The live-figures watch for a launch of `prepared` (break-even from its drafter's cost)."""
    spec = prepared.spec
    speculating = bool(spec.argv)
    break_even = drafting.break_even_for(spec.spec_type, spec.argv, draft_cost(prepared)) if speculating else None
    return drafting.Watch(speculating=speculating, what=what_is_drafting(spec), break_even=break_even,
                          measured=prepared.measurement is not None)
