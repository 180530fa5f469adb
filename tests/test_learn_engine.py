"""Learning from use on the real llama-server with the real Gemma 3 270M Q4_K_M.

The loop of core/measuring/runs/learn.py end to end: the launch the plan makes serves the
user's chat requests (their prompts kept as the chat keeps them, their figures read from the
engine's own lines), the next launch measures again on those prompts, records it, and the plan
after it runs what that measurement found and says why.

The starting point is a real measurement of this model on the built-in prompts
(tests/data/request-lines/gemma-3-270m-measured.json: `draftwise measure --tokens 64 --rounds
2`, recorded on the 2-core test machine, filed here under this run's keys): n-gram was not
faster than none beyond the noise, so auto runs none — what docs/measure.md reports for this
model on a quiet machine too. The user's prompts repeat themselves (tables and forms filled in
again), which n-gram drafting predicts: the repetition trigger fires on text, not on timing.
What the measurement on them finds is timing; the test asserts that the next plan does what
it found (n-gram on where it pays, with its reason; none otherwise) and that n-gram's drafts
on those prompts are accepted (greedy decoding: the same every run); the speed-up seen is in
docs/learn-from-use.md.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core import chat, identity
from draftwise.core.engines import capabilities
from draftwise.core.launch import headless, launch_spec, prepare, session
from draftwise.core.machine import hardware
from draftwise.core.measuring.records import measured, usage, usage_check
from draftwise.core.measuring.runs import arms, learn
from draftwise.core.speculation.setup import NONE
from draftwise.testing import realmodels

RECORDED = Path(__file__).parent / "data" / "request-lines" / "gemma-3-270m-measured.json"
MACHINE = hardware.Machine(ram_total=16 << 30, ram_available=12 << 30, os="linux")
# Short answers and replies: the loop, not a benchmark (the app measures 128 tokens).
SETTINGS = arms.Settings(tokens=48, rounds=2)
ROWS = [("apple", "red", 3), ("banana", "yellow", 5), ("cherry", "red", 2), ("grape", "green", 7)]
TABLE = "| fruit | colour | crates |\n" + "".join(f"| {n} | {c} | {k} |\n" for n, c, k in ROWS)
ASKS = [f"Copy the stock table once more for shelf {s}, exactly as before.\n\n" + (TABLE + "\n") * 2
        for s in ("A", "B", "C")]


@pytest.fixture
def gemma() -> Path:
    try:
        return realmodels.gemma3_270m()
    except RuntimeError as exc:
        pytest.skip(f"Gemma 3 270M is not to be had here: {exc}")


def _recorded(combination: measured.Combination) -> measured.Measurement:
    """The real measurement, filed under this run's model file, engine build and machine."""
    m = measured.Measurement.from_json(json.loads(RECORDED.read_text(encoding="utf-8")))
    return replace(m, combination=combination)


def _serve(planned: session.PlannedLaunch, store: usage.UsageRecords, asks: list[str]) -> usage.Keeper:
    """The user's engine serving chat requests: prompts kept as the chat keeps them, figures
    from the engine's lines."""
    spec = planned.spec(launch_spec.any_free_port())
    run = headless.HeadlessLaunch(spec, fixes=planned.records.fixes, record_run=True)
    keeper = usage.Keeper(learn.usage_key(planned), store)
    try:
        run.start()
        deadline = time.monotonic() + 120
        while not run.flow.is_ready and not run.flow.ended and time.monotonic() < deadline:
            run.pump()
        assert run.flow.is_ready, list(run.log)[-20:]
        for ask in asks:
            body = chat.request_body([("user", ask)], chat.Options(temperature=0.0, max_tokens=24))
            store.add_prompts(planned.prepared.model.path, (usage.prompt_of(body),))
            status, _ = headless.request(run.url, spec.api_key, chat.CHAT_PATH, {**body, "stream": False}, 300)
            assert status == 200
            run.pump(0.2)
        for _ in range(10):
            run.pump(0.1)
    finally:
        run.stop()
        keeper.lines(list(run.log))
        keeper.save(final=True)
    return keeper


def test_the_users_repeating_requests_lead_to_measuring_on_them_and_the_next_plan_runs_the_finding(
        gemma: Path, engine):
    request = prepare.Request(model=gemma, extra_args=("-c", "2048"))
    eng = session.Engine(engine.binary, capabilities.capabilities(engine.binary), engine.backend)
    records = session.Records.load(MACHINE)
    store = usage.UsageRecords()

    def plan() -> session.PlannedLaunch:
        return session.plan_launch(request, eng, MACHINE, records)

    target = learn.measured_planned(plan())
    assert target is not None  # no drafter: auto's n-gram speculation is what is measured
    combination = prepare.combination(gemma, target.prepared.spec, engine.binary, MACHINE)
    records.measured.record(_recorded(combination))
    before = plan()
    assert learn.running_setup(before.prepared) == NONE  # n-gram did not pay on the built-in prompts

    # Five chat requests (more than usage_check.MIN_REQUESTS) of text that repeats itself.
    asks = [*ASKS, *ASKS[:2]]
    keeper = _serve(before, store, asks)
    seen = store.usage(keeper.key)
    assert seen is not None and seen.count == len(asks) and seen.drafted == 0  # none drafts nothing
    prompts = store.model(gemma).prompts
    assert len(prompts) == len(ASKS) and all(p.startswith("User: Copy the stock table") for p in prompts)

    started = time.monotonic()
    out = learn.before_launch(plan(), store, idle=lambda: True, settings=SETTINGS)
    seconds = time.monotonic() - started
    assert out.trigger is not None and out.measurement is not None, out
    assert "your prompts repeat themselves" in str(out.trigger.reason)
    assert out.trigger.kept == NONE and all(s.ngram for s in out.trigger.rivals)
    m = out.measurement
    assert m.learned is not None and m.learned.before == "no speculation" and m.prompts == len(ASKS)
    assert m.combination == combination and records.measured.get(combination) == m
    # n-gram's drafts on the user's prompts: the tables come again word for word.
    assert m.acceptance is not None and m.acceptance > 0.5, m
    print(f"measured again on {m.prompts} prompts in {seconds:.0f} s: {m.summary()}; "
          f"rivals {[s.label() for s in out.trigger.rivals]}; {m.others}")

    after = plan()
    notes = [str(n) for n in after.prepared.spec.notes]
    if m.pays:
        assert learn.running_setup(after.prepared) == m.setup
        assert f"{m.setup.label()} is faster on your requests: {m.ratio:.2f}× vs " in " ".join(notes), notes
    else:  # not faster than none beyond the noise on them either: n-gram stays off
        assert learn.running_setup(after.prepared) == NONE
    assert store.usage(keeper.key) is None  # the requests were compared; new ones start afresh
    # Once a day: the launch after it does not measure again.
    assert learn.before_launch(after, store, idle=lambda: True, settings=SETTINGS).trigger is None
    assert identity.path_key(gemma) == store.model(gemma).path and store.model(gemma).remeasured is not None
    assert usage_check.ONCE_PER_S == 24 * 3600
