"""Learning from use on the real llama-server with the real Gemma 3 270M Q4_K_M.

The loop of core/measuring/learn.py on the engine: the launch the plan makes serves the
user's chat requests (their prompts kept as the chat keeps them, their figures read from the
engine's own lines), the next launch measures again on those prompts, records it, and the plan
after it runs what that measurement found and says why.

The starting point is a real measurement of this model on the built-in prompts
(tests/data/learn/gemma-3-270m-measured.json: `draftwise measure --tokens 64 --rounds 2` on the
shared 2-core test machine, under load: none ran 3.4 tokens/s, ngram-simple 32 9.3, ngram-mod
32 4.5, the pair 6.9; ngram-simple 32 kept), filed under this run's keys. Whether the user's
requests make it due depends on timings of two different moments of a busy machine; that
decision is tests/test_learn_from_use.py's (stated figures, and the whole loop on fake arms).
Here the measurement it calls for runs on the engine: none, the kept setup and its measured
rivals, on the user's prompts; the test asserts what is structural — the requests' figures
kept, the prompts measured on, the record, the next plan running what was found with its
reason — and prints the figures (docs/learn-from-use.md, "Measured").
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.chat import protocol as chat
from draftwise.core.engines import capabilities
from draftwise.core.launch import headless, launch_spec, prepare, session
from draftwise.core.machine import hardware
from draftwise.core.measurements import measured, usage, usage_check
from draftwise.core.measuring import arms, learn
from draftwise.core.messages import msg
from draftwise.core.speculation.setup import NONE
from draftwise.testing import realmodels

RECORDED = Path(__file__).parent / "data" / "learn" / "gemma-3-270m-measured.json"
MACHINE = hardware.Machine(ram_total=16 << 30, ram_available=12 << 30, os="linux")
# Short answers and replies: the loop, not a benchmark (the app measures 128 tokens).
SETTINGS = arms.MeasureSettings(tokens=32, rounds=2)
ROWS = [("apple", "red", 3), ("banana", "yellow", 5), ("cherry", "red", 2), ("grape", "green", 7)]
TABLE = "| fruit | colour | crates |\n" + "".join(f"| {n} | {c} | {k} |\n" for n, c, k in ROWS)
ASKS = [f"Copy the stock table once more for shelf {s}, exactly as before.\n\n" + (TABLE + "\n") * 2
        for s in ("A", "B")]


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


# One engine thread, as the user's own extra argument (the plan passes it to the served engine
# and to every arm). The test's work is fixed (five requests, 4 setups x 2 rounds), so its time
# is the engine's time a token. With its default two threads on two cores, the engine's threads
# meet at a spinning barrier after each of the graph's operations: under other work, one spins
# while the other waits for a core, and every token costs scheduler slices. Measured here under
# a load average of 10-13 on 2 cores, 32 tokens of this model: -t 2 0.8-2.5 tokens/s, -t 1
# 11-16. The loop asserted here does not depend on the thread count.
ONE_THREAD = ("-t", "1")


@pytest.mark.timeout(600)  # about 30 s on a quiet 2-core machine; minutes under others' load
def test_the_users_requests_are_measured_on_and_the_next_plan_runs_what_was_found(gemma: Path, engine):
    request = prepare.Request(model=gemma, extra_args=("-c", "2048", *ONE_THREAD))
    eng = session.Engine(engine.binary, capabilities.capabilities(engine.binary), engine.backend)
    records = session.Records.load(MACHINE)
    store = usage.UsageRecords()

    def plan() -> session.PlannedLaunch:
        return session.plan_launch(request, eng, MACHINE, records)

    target = learn.measured_planned(plan())
    assert target is not None  # no drafter: auto's n-gram speculation is what is measured
    combination = prepare.combination(gemma, target.prepared.spec, engine.binary, MACHINE)
    recorded = _recorded(combination)
    records.measured.record(recorded)
    before = plan()
    kept = learn.running_setup(before.prepared)
    assert kept == recorded.setup  # it paid on the built-in prompts: auto runs it

    # Five chat requests (usage_check.MIN_REQUESTS) of text that repeats itself.
    asks = [*ASKS, *ASKS, ASKS[0]]
    keeper = _serve(before, store, asks)
    seen = store.usage(keeper.key)
    assert seen is not None and seen.count == len(asks) and all(r.tokens == 24 for r in seen.requests)
    prompts = store.model(gemma).prompts
    assert len(prompts) == len(ASKS) and all(p.startswith("User: Copy the stock table") for p in prompts)

    # What the decision sees (its verdict on these timings is printed, not asserted: see above).
    d = learn.due(plan(), store)
    table = usage_check.measured_table(recorded)
    rivals = tuple(sorted((s for s in table if s != kept and s.speculates), key=lambda s: -table[s]))
    trigger = d.trigger if d is not None else usage_check.Trigger(kept, rivals, msg("the test asks for it"))
    print(f"requests: {seen.count}, {seen.tokens_per_s:.1f} tokens/s, drafted {seen.drafted}, acceptance "
          f"{seen.acceptance}; "
          f"due: {d.trigger.reason if d is not None else None}")
    started = time.monotonic()
    m = learn.run_due(learn.Due(trigger, target, prompts, seen.count), store, settings=SETTINGS)
    seconds = time.monotonic() - started
    print(f"measured again on {m.prompts} prompts in {seconds:.0f} s: {m.summary()}; "
          + ", ".join(f"{s.label()} {tps:.1f}" for s, tps in m.others))
    assert m.learned is not None and m.learned.before == kept.label() and m.prompts == len(ASKS)
    assert {s for s, _ in m.others} == {kept, *trigger.rivals}  # none, the kept setup, its rivals
    assert m.combination == combination and records.measured.get(combination) == m

    after = plan()
    notes = " ".join(str(n) for n in after.prepared.spec.notes)
    if m.pays:  # faster than none beyond the noise on their prompts: it runs, and says why
        assert learn.running_setup(after.prepared) == m.setup
        why = (f"{m.setup.label()} stays: nothing measured beat it beyond the noise on your requests" if m.setup == kept
               else f"{m.setup.label()} is faster on your requests: {m.ratio:.2f}× vs ")
        assert why in notes, notes
    else:  # not beyond the noise on them: n-gram off, as for any measurement
        assert learn.running_setup(after.prepared) == NONE
    assert store.usage(keeper.key) is None  # the requests were compared; new ones start afresh
    # Once a day: right after, nothing is due, whatever the requests.
    assert learn.due(after, store) is None
