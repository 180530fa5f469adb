"""Learning from use: the usage record, the decision to measure again, and what the next plan
says. The decision on stated figures (as test_measured.py's); the engine's lines are read from
recorded logs (tests/data/learn/*.log: the real engine, `-lv 4`, chat requests of Gemma 3 270M). The live run is
test_learn_engine.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.measurements import measured, usage, usage_check
from draftwise.core.measurements.learned import Learned
from draftwise.core.measurements.measurement import Combination, Measurement
from draftwise.core.measurements.sweep_record import Sweep, SweepRow
from draftwise.core.speculation.setup import NONE, Setup

LOGS = [Path(__file__).parent / "data" / "learn" / f"gemma-3-270m-{kind}.log"
        for kind in ("ngram-simple", "none")]
COMBO = Combination(model="/m/a.gguf|1|2", drafter="ngram-mod||--spec-type ngram-mod",
                    engine="/e/llama-server|5|6", machine="ram=16384|gpus=|unified=0")
MOD = Setup(ngram="ngram-mod", ngram_len=32)
SIMPLE = Setup(ngram="ngram-simple", ngram_len=32)
DAY = 24 * 3600.0


def measurement(noise: float = 0.03) -> Measurement:
    """ngram-simple kept at 130 tokens/s; ngram-mod reached 120, none 100."""
    return Measurement(COMBO, "ngram-simple", "n-gram speculation", 130.0, 100.0, noise, 0.9, 3.0, 32,
                       "--spec-ngram-simple-size-m", setup=SIMPLE, others=((MOD, 120.0), (SIMPLE, 130.0)))


def seen(kept: Setup, speeds: list[float], drafted: int = 0, accepted: int = 0) -> usage.Usage:
    key = usage.Key(COMBO.model, COMBO.engine, COMBO.machine, kept)
    requests = tuple(usage.FinishedRequest(100, 100_000.0 / s, drafted, accepted) for s in speeds)
    return usage.Usage(key, requests, len(requests))


def check(u: usage.Usage | None, m: Measurement | None = None, **kw):
    args = dict(prompts=("a prompt", "another"), last=None, now=10 * DAY, idle=True)
    args.update(kw)
    return usage_check.should_remeasure(u, measurement() if m is None else m, **args)


# ------------------------------------------------------------------ the decision
def test_a_kept_setup_behind_another_measured_one_beyond_the_noise_is_measured_again():
    t = check(seen(SIMPLE, [100.0, 101.0, 99.0, 100.0, 100.0]))
    assert t is not None and t.kept == SIMPLE and t.rivals == (MOD,)
    assert str(t.reason) == ("ngram-simple 32 ran 100.0 tokens/s on your last 5 requests; ngram-mod 32 reached "
                             "120.0 when measured")


def test_within_the_noise_nothing_happens():
    # 118 against 120: inside the measurement's 3 % floor.
    assert check(seen(SIMPLE, [118.0] * 5)) is None
    # 100 against 120 but the measurement itself was ±25 %: not beyond it.
    assert check(seen(SIMPLE, [100.0] * 5), measurement(noise=0.25)) is None
    # Real requests that spread widely widen the bound (their error of the mean).
    assert check(seen(SIMPLE, [60.0, 200.0, 70.0, 190.0, 150.0])) is None  # 104 tokens/s over all


def test_too_few_requests_or_prompts_wait():
    assert check(seen(SIMPLE, [100.0] * 4)) is None
    assert check(seen(SIMPLE, [100.0] * 5), prompts=("one",)) is None
    assert check(None) is None
    assert usage_check.should_remeasure(seen(SIMPLE, [100.0] * 5), None, prompts=("a", "b"), last=None, now=0,
                                     idle=True) is None


def test_at_most_once_a_day_and_only_when_idle():
    u = seen(SIMPLE, [100.0] * 5)
    assert check(u, last=10 * DAY - DAY / 2) is None
    assert check(u, last=10 * DAY - DAY - 1) is not None
    assert check(u, idle=False) is None


def test_none_kept_is_compared_with_the_setups_that_speculate():
    m = replace(measurement(), tokens_per_s_with=140.0, setup=MOD, others=((MOD, 140.0), (SIMPLE, 104.0)))
    t = check(seen(NONE, [100.0] * 5), m)
    assert t is not None and t.rivals == (MOD, SIMPLE)


def test_an_acceptance_far_below_the_measured_one_calls_for_measuring_again():
    # As fast as measured, but the drafts are rejected: the traffic is unlike the prompts.
    u = seen(SIMPLE, [130.0] * 5, drafted=100, accepted=30)
    t = check(u)
    assert t is not None and "accepted 30 % of its drafts" in str(t.reason) and "90 % when measured" in str(t.reason)
    # Too few drafted tokens for a verdict.
    assert check(seen(SIMPLE, [130.0] * 5, drafted=10, accepted=3)) is None


def test_a_sweep_names_its_rows_as_the_other_setups():
    rows = (SweepRow(SIMPLE, 130.0, 0.02, 2, 0.9), SweepRow(MOD, 125.0, 0.02, 2, 0.9))
    sw = Sweep(COMBO, 100.0, 0.02, rows)
    table = usage_check.measured_table(sw.measurement())
    assert table == {NONE: 100.0, SIMPLE: 130.0, MOD: 125.0}


# ------------------------------------------------------------------ what the next plan says
def test_the_plan_says_why_it_switched():
    learned = Learned("ngram-simple 32", 1.12, 4, 12)
    m = replace(measurement(), setup=MOD, tokens_per_s_with=131.0, learned=learned)
    use = measured.decide(m, automatic=True)
    assert use.setup == MOD
    assert str(use.note) == "ngram-mod 32 is faster on your requests: 1.31× vs 1.12× with ngram-simple 32"
    same = measured.decide(replace(m, learned=replace(learned, before="ngram-mod 32")), automatic=True)
    assert str(same.note) == "ngram-mod 32 stays: nothing measured beat it beyond the noise on your requests (1.31×, measured again on 4 of them)"


def test_a_learned_measurement_round_trips_and_outranks_an_older_sweep(tmp_path):
    records = measured.MeasuredRecords(tmp_path / measured.FILE_NAME)
    learned = replace(measurement(), setup=MOD, learned=Learned("ngram-simple 32", 1.12, 4, 12, "t"),
                      when="2026-12-05T12:00:00")
    records.record(learned)
    assert records.entries() == [learned]
    sweep = Sweep(COMBO, 100.0, 0.02, (SweepRow(SIMPLE, 130.0, 0.02, 2, 0.9),), when="2026-12-04T12:00:00")
    records.sweeps().record(sweep)
    assert records.get(COMBO) == learned
    records.sweeps().record(replace(sweep, when="2026-12-06T12:00:00"))  # a sweep after it wins again
    assert records.get(COMBO).swept


# ------------------------------------------------------------------ the record
def test_usage_and_prompts_round_trip_bounded(tmp_path):
    store = usage.UsageRecords(tmp_path / usage.FILE_NAME)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    key = usage.Key("m|1|2", "e|1|2", "ram=1", MOD)
    for i in range(usage.KEEP_REQUESTS + 5):
        store.add(key, (usage.FinishedRequest(10 + i, 100.0, 8, 6),))
        store.add_prompts(model, (f"prompt {i}" * 10,))
    u = store.usage(key)
    assert u is not None and u.count == usage.KEEP_REQUESTS + 5 and len(u.requests) == usage.KEEP_REQUESTS
    assert u.requests[-1].tokens == 10 + usage.KEEP_REQUESTS + 4 and u.acceptance == pytest.approx(0.75)
    prompts = store.model(model).prompts
    assert len(prompts) == usage.KEEP_PROMPTS and prompts[-1] == "prompt 54" * 10
    assert store.usage(replace(key, setup=SIMPLE)) is None  # per setup
    store.remeasured(model, 123.0)
    assert store.model(model).remeasured == 123.0 and store.model(model).prompts == prompts
    # The requests' figures are compared with the new measurement from now on (model keys: none here match).
    store.forget(model)
    assert store.model(model).prompts == ()


def test_the_oldest_entries_go_first(tmp_path):
    store = usage.UsageRecords(tmp_path / usage.FILE_NAME)
    keys = [usage.Key(f"m{i}|1|2", "e", "ram=1", MOD) for i in range(usage.KEEP_KEYS + 2)]
    for key in keys:
        store.add(key, (usage.FinishedRequest(10, 100.0),))
    store.add(keys[1], (usage.FinishedRequest(10, 100.0),))  # used again: kept
    kept = [u.key for u in store.record_file.read()]
    assert len(kept) == usage.KEEP_KEYS and keys[0] not in kept and keys[2] not in kept and kept[-1] == keys[1]


def test_remeasured_drops_the_models_requests(tmp_path):
    store = usage.UsageRecords(tmp_path / usage.FILE_NAME)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    from draftwise.core import identity

    key = usage.Key(identity.file_key(model), "e", "ram=1", MOD)
    store.add(key, (usage.FinishedRequest(10, 100.0),))
    store.add_prompts(model, ("p",))
    store.remeasured(model, 5.0)
    assert store.usage(key) is None and store.model(model).prompts == ("p",)


def test_a_damaged_usage_file_is_set_aside(tmp_path):
    path = tmp_path / usage.FILE_NAME
    path.write_text(json.dumps({"version": 1, "entries": [{"key": {}}]}))
    store = usage.UsageRecords(path)
    assert store.usage(usage.Key("m", "e", "ram=1", MOD)) is None
    assert "was set aside as" in str(store.problem)
    assert list(tmp_path.glob(f"{usage.FILE_NAME}.corrupt-*"))


# ------------------------------------------------------------------ the engine's lines
def test_the_tally_reads_each_requests_figures_from_a_recorded_log():
    """The real engine's lines of one launch (ngram-simple 32, three chat requests; and one
    without speculation, whose requests have no acceptance line)."""
    for log in LOGS:
        lines = log.read_text(encoding="utf-8").splitlines()
        tally = usage.Tally()
        # Lines come in batches: a batch may end between a request's eval line and its acceptance.
        done: tuple[usage.FinishedRequest, ...] = ()
        for i in range(0, len(lines), 3):
            tally.lines(lines[i:i + 3])
            done += tally.take()
        done += tally.take(final=True)
        evals = [ln for ln in lines if " eval time =" in ln and "prompt eval" not in ln]
        assert len(done) == len(evals) >= 2, log.name
        assert [r.tokens for r in done] == [int(ln.split("/")[1].split()[0]) for ln in evals]
        accepted = [ln for ln in lines if "draft acceptance" in ln]
        assert [r.accepted for r in done if r.drafted] == [int(ln.split("(")[1].split()[0]) for ln in accepted]


def test_prompts_of_request_bodies():
    assert usage.prompt_of_body('{"prompt": "hello"}') == "hello"
    chat = {"messages": [{"role": "system", "content": "Be brief."},
                         {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image_url"}]}]}
    assert usage.prompt_of_body(json.dumps(chat)) == "System: Be brief.\nUser: Hi\nAssistant:"
    assert usage.prompt_of_body('{"prompt": [1, 2, 3]}') is None  # tokens, not text
    assert usage.prompt_of_body('{"input": "embed me"}') is None
    assert usage.prompt_of_body("not json") is None
    long = usage.prompt_of_body(json.dumps({"prompt": "x" * 10 + "y" * usage.PROMPT_CHARS}))
    assert long == "y" * usage.PROMPT_CHARS  # the end is what the model continues


# ------------------------------------------------------------------ the whole loop, fake arms
def _alone_model(tmp_path, monkeypatch):
    """A tiny model with no drafter, its data folder in tmp_path: the request, the records the
    launch session reads, and the session's plan of it (fresh on each call)."""
    from tests import fake_arms as fa

    from draftwise.core.launch import session

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    fa.write_tiny_model(tmp_path / "alone" / "Tiny-Q8_0.gguf", fa.TARGET)
    request = fa.prepare.Request(model=tmp_path / "alone" / "Tiny-Q8_0.gguf", prefs=fa._prefs())
    engine = session.Engine(fa.ENGINE, fa.CAPS)
    records = session.Records(measured=measured.MeasuredRecords(tmp_path / "data" / measured.FILE_NAME))
    return request, records, lambda: session.plan_launch(request, engine, fa.MACHINE, records)


ASKS = ["Summarise the minutes below.", "Now the same for Tuesday's meeting.", "And for Friday's."]


def _measured_then_used(request, records, plan, builtin):
    """The quick measurement on the built-in prompts (the fake `builtin` arms) recorded, then
    the user's requests: figures from the real engine's lines of ngram-simple 32 serving chat
    requests, and ASKS as the chat sends them. (the plan after it, the usage store, the keeper)."""
    from tests import fake_arms as fa

    from draftwise.core.chat import protocol as chat
    from draftwise.core.measuring import learn, quick

    target = learn.measured_planned(plan())
    assert target is not None
    records.measured.record(quick.measure(target.prepared, fa.ENGINE, fa.MACHINE, settings=fa.SETTINGS,
                                          runner=builtin, engine_types=fa.NGRAM_MEASURED))
    before = plan()
    store = usage.UsageRecords()
    keeper = usage.Keeper(learn.usage_key(before), store)
    keeper.lines(LOGS[0].read_text(encoding="utf-8").splitlines())
    keeper.save(final=True)
    for ask in ASKS:
        store.add_prompts(request.model, (usage.prompt_of(chat.request_body([("user", ask)], chat.Options())),))
    return before, store, keeper


def test_a_switch_after_use(tmp_path, monkeypatch):
    """A model with no drafter: measured on the built-in prompts, ngram-simple 32 is kept; the
    user's requests (the real engine's lines of ngram-simple 32 serving chat requests) run far
    below what ngram-mod 32 reached, and their prompts favour ngram-mod (the stated landscape
    of the arms on them). The next launch measures again on those prompts and runs ngram-mod,
    saying why; the day after the first, not before."""
    from tests import fake_arms as fa

    from draftwise.core.measuring import learn

    request, records, plan = _alone_model(tmp_path, monkeypatch)

    # The built-in prompts: ngram-simple fastest.
    builtin = fa.Fake(lambda s: {MOD: 115.0, SIMPLE: 130.0}.get(s, 110.0 if s.speculates else 100.0))
    before, store, keeper = _measured_then_used(request, records, plan, builtin)
    assert learn.running_setup(before.prepared) == SIMPLE
    assert keeper.saved == 6 and store.usage(keeper.key).count == 6

    # On the user's prompts ngram-mod is fastest.
    theirs = fa.Fake(lambda s: {MOD: 150.0, SIMPLE: 105.0}.get(s, 110.0 if s.speculates else 100.0))
    now = 1_000_000.0
    out = learn.before_launch(before, store, now=now, idle=lambda: True, settings=fa.SETTINGS, runner=theirs)
    assert out.measurement is not None and out.trigger is not None
    assert out.trigger.kept == SIMPLE and MOD in out.trigger.rivals
    reason = str(out.trigger.reason)
    assert reason.startswith("ngram-simple 32 ran ") and "on your last 6 requests; ngram-mod 32 reached 115." in reason
    # Only none, the kept setup and its rivals, on the user's prompts (not the built-in ones).
    assert {s for s, _ in theirs.starts} == {NONE, SIMPLE, *out.trigger.rivals}
    assert out.measurement.prompts == len(ASKS) and out.measurement.learned is not None

    after = plan()
    assert learn.running_setup(after.prepared) == MOD
    notes = [str(n) for n in after.prepared.spec.notes]
    assert "ngram-mod 32 is faster on your requests: 1.50× vs 1.05× with ngram-simple 32" in notes

    # Once a day: the next launch does not measure again, however its requests go.
    keeper = usage.Keeper(learn.usage_key(after), store)
    keeper.lines(LOGS[0].read_text(encoding="utf-8").splitlines())
    keeper.save(final=True)
    again = fa.Fake(theirs.speed)
    assert learn.before_launch(after, store, now=now + 3600, idle=lambda: True, runner=again).trigger is None
    assert again.starts == []
    # And never on a busy machine: it says so and measures nothing.
    busy = learn.before_launch(after, store, now=now + 2 * DAY, idle=lambda: False, runner=again)
    assert busy.measurement is None and again.starts == []


def test_learning_tries_the_pair_the_minute_left_out(tmp_path, monkeypatch):
    """The built-in prompts: ngram-simple (the faster type, so the pair's first) slows one
    prompt where ngram-mod does not, so the quick measurement skips the pair (quick._may_hold)
    and keeps ngram-simple. On the user's prompts neither type slows any, and the two together
    are fastest: measured again, the pair is tried after the types (quick.second_stage) and
    kept, as it beats each type alone on every prompt beyond the noise."""
    from tests import fake_arms as fa

    from draftwise.core.measuring import learn

    request, records, plan = _alone_model(tmp_path, monkeypatch)
    builtin = fa.Fake(lambda s: (150.0, 150.0, 90.0) if s == SIMPLE else 115.0 if s == MOD
                      else 140.0 if s.speculates else 100.0)
    before, store, _keeper = _measured_then_used(request, records, plan, builtin)
    assert {s for s, _ in builtin.starts} == {NONE, SIMPLE, MOD}  # no pair: it could not hold there
    assert learn.running_setup(before.prepared) == SIMPLE

    theirs = fa.Fake(lambda s: 170.0 if s.ngram2 is not None else {MOD: 120.0, SIMPLE: 110.0}.get(s, 100.0))
    out = learn.before_launch(before, store, now=1_000_000.0, idle=lambda: True, settings=fa.SETTINGS, runner=theirs)
    assert out.measurement is not None and out.trigger is not None and out.trigger.rivals == (MOD,)
    pair = replace(MOD, ngram2=SIMPLE.ngram, ngram2_len=SIMPLE.ngram_len)  # the faster type first
    assert [s for s, r in theirs.starts if r == 0] == [NONE, SIMPLE, MOD, pair]
    assert out.measurement.setup == pair
    assert learn.running_setup(plan().prepared) == pair


def test_the_windows_measurement_from_use_says_when_nothing_calls_for_it(tmp_path, monkeypatch):
    """The window offers it when `learn.due` says so; by the time the user accepts, the
    worker asks again, and with nothing due it fails with a sentence, measuring nothing."""
    import threading

    from tests import fake_arms as fa

    from draftwise.core.launch import session
    from draftwise.core.measuring import arms
    from draftwise.services import drafting_tasks

    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    fa.write_tiny_model(tmp_path / "Tiny-Q8_0.gguf", fa.TARGET)
    request = fa.prepare.Request(model=tmp_path / "Tiny-Q8_0.gguf", prefs=fa._prefs())
    with pytest.raises(arms.MeasureError) as err:
        drafting_tasks.prepare_measure_and_record(request, session.Engine(fa.ENGINE, fa.CAPS), fa.MACHINE,
                                                  fa.SETTINGS, report=lambda p: None, cancel=threading.Event(),
                                                  from_use=True)
    assert str(err.value.message) == "Your requests no longer call for measuring again."


def test_n_gram_not_faster_on_the_users_prompts_stays_off_and_the_plan_says_so(tmp_path, monkeypatch):
    """A model with no drafter whose prompts repeat themselves, with n-gram off (within the
    noise on the built-in prompts): measured again on them, n-gram is still no faster, and
    the plan says why it stays off."""
    from tests import fake_arms as fa

    from draftwise.core.measuring import learn, quick

    request, records, plan = _alone_model(tmp_path, monkeypatch)

    # Within the 3 % floor (off), at the speed the recorded requests ran (4.1 tokens/s over all).
    flat = fa.Fake(lambda s: 4.2 if s.speculates else 4.15)
    target = learn.measured_planned(plan())
    records.measured.record(quick.measure(target.prepared, fa.ENGINE, fa.MACHINE, settings=fa.SETTINGS,
                                          runner=flat, engine_types=fa.NGRAM_MEASURED))
    before = plan()
    assert learn.running_setup(before.prepared) == NONE
    store = usage.UsageRecords()
    keeper = usage.Keeper(learn.usage_key(before), store)
    keeper.lines(LOGS[1].read_text(encoding="utf-8").splitlines())  # served without speculation
    keeper.lines(LOGS[1].read_text(encoding="utf-8").splitlines())
    keeper.save(final=True)
    table = "| a | b |\n| 1 | 2 |\n" * 6
    store.add_prompts(request.model, (f"Copy: {table}", f"Again: {table}"))
    out = learn.before_launch(before, store, idle=lambda: True, settings=fa.SETTINGS, runner=fa.Fake(flat.speed))
    assert out.measurement is not None and "your prompts repeat themselves" in str(out.trigger.reason)
    after = plan()
    assert learn.running_setup(after.prepared) == NONE
    assert any(str(n).startswith("n-gram speculation is not faster on your requests (1.01×")
               for n in after.prepared.spec.notes), after.prepared.spec.notes


def test_idle_is_other_programs_share_of_all_cores_below_a_quarter(monkeypatch):
    import psutil

    from draftwise.core.machine import idle

    asked: list[float] = []

    def share(percent: float):
        def cpu_percent(interval: float) -> float:
            asked.append(interval)
            return percent
        return cpu_percent

    monkeypatch.setattr(psutil, "cpu_percent", share(10.0))
    assert idle.idle() and asked == [idle.PROBE_SECONDS]
    monkeypatch.setattr(psutil, "cpu_percent", share(40.0))
    assert not idle.idle(seconds=0.5) and asked[-1] == 0.5
