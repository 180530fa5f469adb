"""Arms: one speculation setup run on the real engine, and stages of them, interleaved.

An arm is one engine start for one setup (the draft length and p-min are start-up flags; the
server has no per-request one) with everything else equal: the same plan arguments (context,
KV type, offload), one slot, the same prompts, greedy, a fixed number of generated tokens with
the end-of-text token ignored. Tokens/s are the engine's own generation timings
(`timings.predicted_*`), so prompt processing and HTTP are not counted. Noise is the spread
between rounds of the same prompt in the same arm, so a result within the noise is never
called slower; a verdict on two setups uses the error of their means (`Arm.error`: the
spread over √rounds), a pruning decision on one round the spread itself.

A stage runs its setups round by round: every setup's round 1, then every setup's round 2, so
a machine that gets busier or quieter slows every setup alike instead of the last ones. The
setups of a stage come in lines — one dimension widened from a start (draft lengths 1…8) —
and a line stops widening, in round 1, once a setup is beyond the noise below the line's best
and below the setup before it (`falling`). Every setup run gets every round, the one that
stopped its line too, so every row of a table has the same rounds and noise bound. The
quick measurement (core/measuring/quick.py) runs stages of single setups, the sweep
(core/measuring/sweep.py) stages of lines.

Runs headless (core/launch/headless.py) on the caller's thread; the window runs it on a worker
thread. Engine fixes work as on every launch path (core/launch/fixes.py): a start that crashes
on a feature (the AMX kernels) is relaunched once without it and the fix recorded, and the
later arms start with it. `cancel` (a threading.Event) stops at the next check, within a
fraction of a second; every engine started is stopped before a call returns or raises.
"""

from __future__ import annotations

import copy
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.kinds import Backend
from draftwise.core.launch import crash, headless, launch_spec
from draftwise.core.launch.fixes import EngineFixes
from draftwise.core.launch.prepare import Prepared, PrepareError, Request, with_engine_settings
from draftwise.core.machine import device_choice
from draftwise.core.machine.hardware import Gpu, Machine
from draftwise.core.measurements import live_figures, measurement
from draftwise.core.measuring import prompts
from draftwise.core.measuring.arm import Arm, Timed
from draftwise.core.measuring.prompts import PROMPTS, Prompt
from draftwise.core.measuring.prompts import body as _body
from draftwise.core.messages import Message, Text, msg
from draftwise.core.speculation import words
from draftwise.core.speculation.resolver import SpecDecision
from draftwise.core.speculation.setup import Setup


@dataclass(frozen=True)
class MeasureSettings:
    tokens: int = 128  # generated per prompt and round
    rounds: int = 2  # the noise needs at least 2
    prompts: tuple[Prompt, ...] = PROMPTS
    n_max_values: tuple[int, ...] | None = None  # None: measured.N_MAX_CANDIDATES
    ready_timeout: float = 600.0
    request_timeout: float = 600.0
    # Each start also times a long prompt (`prompts.LONG_PROMPT`): the settings stage judges prompt
    # speed too; the speculation stages, whose setups read prompts alike, skip it.
    prompt_speed: bool = False
    # Each start runs the prompts this many times, each pass a round of its own: the quick
    # measurement's first start (without speculation, which keeps no state between requests)
    # measures the noise at once, and the answer length from it (core/measuring/quick.py).
    passes: int = 1
    # The quick measurement sets `tokens` from the noise of its first start (quick.tokens_for).
    tokens_from_noise: bool = False
    # The kinds of prompt a start runs (None: every prompt): the quick measurement's settings
    # stage runs half of them (quick.SETTINGS_KINDS), each by its index in `prompts` still.
    only: tuple[str, ...] | None = None
    # The quick measurement's rounds past the first stop where they would take it past this many
    # seconds, the settings stage counted (quick.MINUTE_S where the product runs it with its own
    # lengths and rounds: the choice in about a minute; None: rounds as the rule asks).
    within_s: float | None = None
    # A start of a model drafter stops once its drafts are refused (`refused`): the quick
    # measurement's, which has a minute; the sweep and learning from use run every prompt.
    stop_refused: bool = False


DEFAULT_SETTINGS = MeasureSettings()


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


class SettingFault(MeasureError):
    """An engine setting the settings stage tried made the engine fail (`cause` the crash, or
    None where the plan could not take it): the stage leaves it out (core/measuring/
    tuning.py) instead of ending the measurement."""

    def __init__(self, message: Text, settings: EngineSettings, cause: crash.Cause | None = None) -> None:
        super().__init__(message, cause)
        self.settings = settings


def what_is_drafting(spec: SpecDecision) -> Message:
    """The drafter in words, as the notes name it ("the draft model x.gguf with n-gram
    speculation" for a combined setup; core/speculation/words.py)."""
    return words.drafting_words(spec.spec_type, spec.draft.name if spec.draft is not None else None)


def ngram_pair(results: Results) -> Setup | None:
    """The two fastest n-gram types together, each at its fastest length alone, among the
    setups that drafted: what the quick measurement and the sweep try next (setup.py: the
    engine asks one type, then the other). None with fewer than two types."""
    best: dict[str, Arm] = {}
    for a in results.full():
        s = a.setup
        if s.drafter is None and s.ngram is not None and s.ngram2 is None and a.counters.drafted > 0 and (
                s.ngram not in best or a.tokens_per_s > best[s.ngram].tokens_per_s):
            best[s.ngram] = a
    if len(best) < 2:
        return None
    first, second = sorted(best.values(), key=lambda a: -a.tokens_per_s)[:2]
    return replace(first.setup, ngram2=second.setup.ngram, ngram2_len=second.setup.ngram_len)


def decision_for(base: SpecDecision, setup: Setup) -> SpecDecision:
    """The decision that runs `setup`, from the measured decision `base` (its drafter's file
    flags and bans kept while the setup runs that drafter; for a setup naming another drafter,
    that alternative's)."""
    if not setup.speculates:
        return launch_spec.NO_SPECULATION
    if setup.drafter is not None:
        other = base.drafter_for(setup.drafter_key)
        if other is None:
            raise ValueError(f"the decision has no drafter {setup.drafter_key!r}")
        base = other
    # For the user's own --spec-type (in their extra arguments), only the settings.
    return setup.on(base)


# ------------------------------------------------------------------ progress and cancel
@dataclass
class Steps:
    """Progress over a measurement whose length shrinks as lines stop widening."""

    per_arm: int  # steps of one engine start: the start and each prompt
    report: Callable[[Progress], None] | None = None
    cancel: threading.Event | None = None
    done: int = 0
    total: int = 0

    def plan(self, starts: int) -> None:
        self.total += starts * self.per_arm

    def unplan(self, starts: int) -> None:
        self.skip(starts * self.per_arm)

    def __call__(self, text: Message) -> None:
        check(self.cancel)
        if self.report is not None:
            self.report(Progress(self.done, max(self.total, self.done + 1), text))
        self.done += 1

    def skip(self, steps: int) -> None:
        """Steps planned that will not run (a start stopped early; starts `unplan`ned)."""
        self.total = max(self.done, self.total - steps)

    def say(self, text: Message) -> None:
        """Report what the measurement goes on with, without a step of its own."""
        check(self.cancel)
        if self.report is not None:
            self.report(Progress(self.done, max(self.total, self.done + 1), text))

    def finish(self) -> None:
        if self.report is not None:
            self.report(Progress(self.done, self.done, msg("measured")))


def check(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


# ------------------------------------------------------------------ stages and lines
Runner = Callable[[Setup, int], Arm]  # one engine start of a setup, round r (0-based)


@dataclass(frozen=True)
class Line:
    """One dimension: setups in their order (short to long), widened from `start` up, then down."""

    setups: tuple[Setup, ...]
    start: int = 0
    prune: bool = True

    def directions(self) -> tuple[tuple[Setup, ...], tuple[Setup, ...]]:
        return self.setups[self.start:], tuple(reversed(self.setups[:self.start]))


@dataclass
class Results:
    """Every arm measured so far, by setup, and the setups at which a line stopped widening."""

    arms: dict[Setup, Arm] = field(default_factory=dict)
    stopped: set[Setup] = field(default_factory=set)

    def add(self, arm: Arm) -> None:
        old = self.arms.get(arm.setup)
        self.arms[arm.setup] = arm if old is None else old.plus(arm)

    def full(self) -> list[Arm]:
        """Every arm, in the order first run."""
        return list(self.arms.values())

    def best(self, *, speculating: bool = True) -> Arm | None:
        """The fastest arm (of those that speculate). A setup that drafted no token ran as
        without speculation, so it is the best only when no setup drafted at all."""
        arms = [a for a in self.full() if a.setup.speculates or not speculating]
        drafting = [a for a in arms if a.counters.drafted > 0 or not a.setup.speculates]
        arms = drafting or arms
        return max(arms, key=lambda a: a.tokens_per_s) if arms else None

    def noise(self) -> float:
        """The measurement's noise so far: RMS of the spread of every arm with two rounds."""
        spreads = [a.noise() for a in self.full() if a.rounds >= 2]
        return math.sqrt(sum(s * s for s in spreads) / len(spreads)) if spreads else 0.0


# A model drafter whose drafts the target refuses cannot pay: every draft costs the drafter's
# steps and a verification that keeps one token. Once it drafted REFUSED_DRAFTED tokens with
# fewer than REFUSED_SHARE of them accepted, its start stops (`MeasureSettings.stop_refused`).
# A drafter paired well accepts 30-90 % on the built-in prompts; the corpus SmolLM2-135M beside
# SmolLM2-360M (zero weights: their ties break apart) accepted 0 % and ran 0.10-0.21× of none,
# 8 prompts × 128 tokens a start, so three lengths and p-min took most of the quick
# measurement's 675 s in bench/generalize.py.
REFUSED_DRAFTED = 64
REFUSED_SHARE = 0.10


def refused(setup: Setup, counters: live_figures.Counters) -> bool:
    """A model drafter's drafts refused so far (an n-gram type beside it drafts too: its
    acceptance then counts, and a pair that pays is not stopped)."""
    return (setup.drafter is not None and counters.drafted >= REFUSED_DRAFTED
            and counters.accepted < REFUSED_SHARE * counters.drafted)


def falling(tps: float, previous: float | None, best: float, noise: float) -> bool:
    """Stop widening: beyond the noise below the line's best, and below the setup before it."""
    bound = max(noise, measurement.NOISE_FLOOR)
    return tps < best * (1.0 - bound) and (previous is None or tps < previous)


def run_stage(run: Runner, lines: Sequence[Line], rounds: int, results: Results, steps: Steps) -> list[Setup]:
    """Round 1 widens each line (pruning with the noise measured so far); the later rounds
    run every setup round 1 ran, every other round in the reverse order (A B C, C B A: a
    drift of the machine over the stage, or a setup's place in the round, then weighs on every
    setup alike). Setups measured in an earlier stage are not run again. Returns the setups
    run here."""
    noise = results.noise()
    todo = [s for line in lines for s in line.setups if s not in results.arms]
    steps.plan(len(dict.fromkeys(todo)) * rounds)
    kept: list[Setup] = []
    for line in lines:
        line_best = max((results.arms[s].tokens_per_s for s in line.setups
                         if s in results.arms), default=0.0)
        up, down = line.directions()
        for direction in (up, down):
            # Widening down starts beside the start: that is the setup before it.
            first = results.arms.get(up[0]) if direction is down and up else None
            previous: float | None = first.tokens_per_s if first is not None else None
            for i, setup in enumerate(direction):
                known = results.arms.get(setup)
                if known is not None:
                    previous = known.tokens_per_s
                    line_best = max(line_best, previous)
                    continue
                arm = run(setup, 0)
                results.add(arm)
                tps = arm.tokens_per_s
                kept.append(setup)  # every setup run gets every round: one table, one noise bound
                if line.prune and line_best > 0 and falling(tps, previous, line_best, noise):
                    results.stopped.add(setup)
                    steps.unplan(len([s for s in direction[i + 1:] if s not in results.arms]) * rounds)
                    break
                previous, line_best = tps, max(line_best, tps)
    for r in range(1, rounds):
        for setup in (reversed(kept) if r % 2 else kept):
            results.add(run(setup, r))
    return kept


# ------------------------------------------------------------------ the engine's arms
def runner_for(prepared: Prepared, binary: Path, machine: Machine, steps: Steps, *, backend: str = Backend.CPU,
               gpus: Sequence[Gpu] = (), settings: MeasureSettings = DEFAULT_SETTINGS,
               cancel: threading.Event | None = None, fixes: EngineFixes | None = None,
               runner: Runner | None = None, drafters: Mapping[str, Prepared] | None = None) -> Runner:
    """What a measurement and a sweep both start with: refuse a launch with no speculation
    or one that does not fit, then the caller's runner, else the real engine's arms (filing
    engine fixes under the devices the user asked for, as every launch does). `drafters`:
    the launch planned for each other drafter a setup may name, by key (the sweep's)."""
    spec = prepared.spec
    if not spec.argv:
        raise MeasureError(msg("There is no speculation to measure for this model: {why}",
                               why=" ".join(str(n) for n in spec.notes[-1:]) or "none was chosen."))
    if not prepared.plan.fits:
        reasons = prepared.plan.reasons
        raise MeasureError(reasons[-1] if reasons else msg("The model does not fit this machine."))
    return runner or EngineArms(prepared, binary, backend=backend, gpus=gpus, settings=settings, cancel=cancel,
                                steps=steps, fixes=fixes, requested=machine.requested, drafters=drafters,
                                chosen_gpus=device_choice.visible_for(machine, backend), machine=machine)


class EngineArms:
    """Runs setups for one prepared launch on the real engine: a `Runner`."""

    def __init__(self, prepared: Prepared, binary: Path, *, backend: str = Backend.CPU, gpus: Sequence[Gpu] = (),
                 settings: MeasureSettings = MeasureSettings(), cancel: threading.Event | None = None,
                 steps: Steps | None = None, fixes: EngineFixes | None = None,
                 requested: tuple[str, ...] = (), drafters: Mapping[str, Prepared] | None = None,
                 chosen_gpus: Sequence[int] | None = None, machine: Machine | None = None) -> None:
        self.prepared, self.binary, self.backend, self.gpus = prepared, binary, backend, gpus
        # The session's chosen GPUs (device_choice.visible_for): each arm runs where the launch would.
        self.chosen_gpus = chosen_gpus
        # Another drafter's setups start from its own plan (its draft's offload and KV flags).
        self.drafters = dict(drafters or {})
        self.requested = requested  # the devices the user asked for: engine fixes are filed under them
        self.settings, self.cancel, self.fixes = settings, cancel, fixes
        self.steps = steps or Steps(1 + len(settings.prompts), cancel=cancel)
        # On loopback with a fresh key, whatever the user's launch settings (network, port).
        self.request = replace(prepared.request or Request(model=prepared.model.path), network=False,
                               pinned_port=False, api_key=None)
        # The feature fixes arms needed (-nr), as data: every later arm starts with them. One
        # list, shared with `measuring_prompts`' copy, so a fix found there holds here too.
        self._found: list[EngineSettings] = []
        # Engine settings change the plan (-nr drops the re-laid copies, -ub the compute buffer,
        # -fa off the KV types): each is planned once, as a launch with them would be.
        self.machine = machine
        self._planned: dict[tuple[str | None, EngineSettings], Prepared] = {}
        # Each prompt as sent, asked of the first engine (one model, one template); shared with copies.
        self._rendered: dict[int, str | list[int]] = {}

    @property
    def fixed(self) -> EngineSettings:
        """The feature fixes found so far, together."""
        out = DEFAULTS
        for fix in self._found:
            out = out.merged(fix)
        return out

    def measuring_prompts(self) -> EngineArms:
        """These arms, each start also timing the long prompt (the settings stage's): the same
        fixes found so far and progress."""
        other = copy.copy(self)
        other.settings = replace(self.settings, prompt_speed=True)
        return other

    def words(self, setup: Setup) -> Message:
        return what_is_drafting(decision_for(self.prepared.spec, setup))

    def label(self, setup: Setup) -> Message:
        if not setup.speculates:  # the settings stage's arms: "without speculation (-nr)"
            return msg("without speculation ({settings})", settings=setup.engine.label()) if not setup.engine.default \
                else msg("without speculation")
        return msg("with {what} ({setup})", what=self.words(setup), setup=setup.label())

    def launch(self, setup: Setup) -> launch_spec.LaunchSpec:
        # The one launch path (Prepared.launch), with this setup's speculation; the slots,
        # context, KV and offload are the plan's in every arm.
        prepared = self.drafters[setup.drafter_key] if setup.drafter and setup.drafter_key else self.prepared
        if not setup.engine.default:
            key = (setup.drafter_key if setup.drafter else None, setup.engine)
            if key not in self._planned:
                self._planned[key] = with_engine_settings(prepared, setup.engine, self.machine)
            prepared = self._planned[key]
        # A fix found by an earlier arm joins the plan as data, as a launch's found fix does
        # (Ladder.with_fix): planned with (-fa off into the plan's inputs, -nr into its CPU
        # buffers), less what the user's arguments or this arm's own setting already set.
        fixed = self.fixed.without(prepared.extra_args).less(prepared.engine)
        if not fixed.default:
            fix_key = (setup.drafter_key if setup.drafter else None, setup.engine.merged(fixed))
            if fix_key not in self._planned:
                self._planned[fix_key] = with_engine_settings(prepared, fixed, self.machine)
            prepared = self._planned[fix_key]
        decision = decision_for(prepared.spec, setup)
        plan = prepared.plan
        options = plan.plan_options if setup.drafter or plan.target_plan_options is None else plan.target_plan_options
        plan = replace(plan, plan_options=options, fallback_plan_options=options)
        arm = replace(prepared, spec=decision, plan=plan, request=self.request)
        spec = arm.launch(self.binary, engine_backend=self.backend, gpus=self.gpus, port=launch_spec.any_free_port(),
                          requested=self.requested, chosen_gpus=self.chosen_gpus)
        return replace(spec, fallback_argv=None)  # a drafter that fails is the result, not retried

    def __call__(self, setup: Setup, r: int) -> Arm:
        """One engine start of `setup`: round `r` of every prompt. An engine setting that
        cannot be planned or makes the engine fail raises SettingFault."""
        try:
            return self._run(setup, r)
        except PrepareError as exc:
            if setup.engine.default:
                raise
            raise SettingFault(exc.message, setup.engine) from exc
        except MeasureError as exc:
            if setup.engine.default or exc.cause is None or isinstance(exc, SettingFault):
                raise
            raise SettingFault(exc.message, setup.engine, exc.cause) from exc

    def _run(self, setup: Setup, r: int) -> Arm:
        settings, cancel, step = self.settings, self.cancel, self.steps
        label = self.label(setup)
        spec = self.launch(setup)
        run = headless.HeadlessLaunch(spec, fixes=self.fixes, record_run=True)
        try:
            step(msg("starting the engine {label}", label=label))
            run.start()
            deadline = time.monotonic() + settings.ready_timeout
            while not run.flow.is_ready and not run.flow.ended:
                check(cancel)
                if time.monotonic() > deadline:
                    raise MeasureError(msg("The engine was not ready after {s} s.", s=f"{settings.ready_timeout:.0f}"))
                run.pump()
            _fail_if_crashed(run)
            if run.flow.fix is not None:
                self._found.append(run.flow.fix.settings)  # new: the arm's command had every earlier fix
            if spec.spec.argv and _slots_speculative(run) is False:
                raise MeasureError(live_figures.dropped_drafter_warning(True, False, what_is_drafting(spec.spec)))
            texts = self._texts(run)
            # Warm-up: the first request allocates graphs and fills caches; not counted.
            _complete(run, _body(texts[0], 8), settings, cancel)
            before = _counters(run)
            per_request: list[tuple[int, int, float]] = []
            timed: list[Timed] = []
            total_n, total_ms, prompt_n, prompt_ms = 0.0, 0.0, 0.0, 0.0
            counters = live_figures.Counters()
            passes = max(1, settings.passes)
            stopped = False
            for k in range(passes):
                for i, prompt in enumerate(settings.prompts):
                    if settings.only is not None and prompt.kind not in settings.only:
                        continue
                    if stopped:
                        step.skip(1)
                        continue
                    step(msg("{label}: {kind} prompt, round {r}", label=label, kind=prompt.kind, r=r * passes + k + 1))
                    body = _body(texts[i], settings.tokens)
                    body["cache_prompt"] = k > 0  # a later pass's answer is timed alone: read once
                    timings = _complete(run, body, settings, cancel).get("timings", {})
                    n, ms = float(timings.get("predicted_n", 0)), float(timings.get("predicted_ms", 0))
                    if n <= 0 or ms <= 0:
                        raise MeasureError(msg("The engine generated no tokens for the {kind} prompt.",
                                               kind=prompt.kind))
                    per_request.append((i, r * passes + k, n * 1000.0 / ms))
                    total_n, total_ms = total_n + n, total_ms + ms
                    read_n, read_ms = float(timings.get("prompt_n", 0)), float(timings.get("prompt_ms", 0))
                    prompt_n, prompt_ms = prompt_n + read_n, prompt_ms + read_ms
                    timed.append(Timed(i, r, n, ms, read_n, read_ms))
                    # Each request's own figures: exact, where a difference of /metrics totals rounds.
                    counters = counters.plus(live_figures.Counters.from_timings(timings))
                    if settings.stop_refused and refused(setup, counters):
                        stopped = True
                        step.say(msg("{label}: stopped, its drafts are refused ({accepted} of {drafted} accepted)",
                                     label=label, accepted=f"{counters.accepted:.0f}",
                                     drafted=f"{counters.drafted:.0f}"))
            # Verification steps are in no request's timings: the /metrics difference, exact while
            # the totals are below 10^6 (each arm starts its own engine); else unknown.
            after = _counters(run)
            drafts = after.drafts - before.drafts if after.exact else 0.0
            per_type = live_figures.type_stats(list(run.log)) if setup.several else ()
            if settings.prompt_speed:  # no step of its own: a start's steps are its prompts
                body = _body(_long_prompt(run, self.prepared.plan.ctx), 1)
                timings = _complete(run, body, settings, cancel).get("timings", {})
                prompt_n, prompt_ms = float(timings.get("prompt_n", 0)), float(timings.get("prompt_ms", 0))
            prompt_rounds = ((r, prompt_n * 1000.0 / prompt_ms),) if prompt_ms > 0 else ()
            return Arm(setup, total_n, total_ms, tuple(per_request), replace(counters, drafts=drafts),
                       rounds=passes, per_type=per_type, prompt_tokens=prompt_n, prompt_ms=prompt_ms,
                       prompt_rounds=prompt_rounds, timed=tuple(timed), refused=stopped)
        finally:
            run.stop()


    def _texts(self, run: headless.HeadlessLaunch) -> list[str | list[int]]:
        """The prompts as sent: a chat prompt rendered by this engine's template, a text as it
        is; one longer than a slot holds beside the answer (a small context, a tokenizer that
        reads bytes) as its last tokens that fit. Asked once per measurement."""
        room = max(16, self.prepared.plan.ctx - prompts.MAX_ANSWER - 16)
        for i, prompt in enumerate(self.settings.prompts):
            if i not in self._rendered:
                text = prompt.text if prompt.chat is None else prompts.rendered(
                    prompt.chat, lambda chat: str(_ask(run, "/apply-template", dict(chat))["prompt"]))
                tokens = _tokenize(run, text)
                self._rendered[i] = tokens[-room:] if len(tokens) > room else text
        return [self._rendered[i] for i in range(len(self.settings.prompts))]


def _fail_if_crashed(run: headless.HeadlessLaunch) -> None:
    if run.flow.cause is not None:
        raise MeasureError(msg("The engine stopped: {sentence}", sentence=run.flow.cause.sentence), run.flow.cause)
    if not run.flow.is_ready:
        raise MeasureError(msg("The engine stopped before it was ready."))


def _long_prompt(run: headless.HeadlessLaunch, ctx: int) -> list[int]:
    """The long prompt as the engine's own tokens, cut to what a slot of `ctx` holds."""
    return _tokenize(run, prompts.LONG_PROMPT)[:prompts.long_prompt_length(ctx)]


def _tokenize(run: headless.HeadlessLaunch, text: str) -> list[int]:
    return list(_ask(run, "/tokenize", {"content": text}).get("tokens", []))


def _ask(run: headless.HeadlessLaunch, path: str, body: dict) -> dict:
    status, raw = headless.request(run.url, run.spec.api_key, path, body, 30.0)
    if status != 200:
        raise MeasureError(msg("The engine answered {status}: {body}", status=status, body=raw[:200].decode(errors="replace")))
    return json.loads(raw)


def _complete(run: headless.HeadlessLaunch, body: dict, settings: MeasureSettings,
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
        check(cancel)
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


def _counters(run: headless.HeadlessLaunch) -> live_figures.Counters:
    try:
        status, raw = headless.request(run.url, run.spec.api_key, "/metrics", None, 5.0)
    except OSError:
        return live_figures.Counters()
    return live_figures.Counters.from_metrics(raw.decode(errors="replace")) if status == 200 else live_figures.Counters()


def _slots_speculative(run: headless.HeadlessLaunch) -> bool | None:
    try:
        status, raw = headless.request(run.url, run.spec.api_key, "/slots", None, 5.0)
    except OSError:
        return None
    return live_figures.slots_speculative(raw) if status == 200 else None

