"""The quick measurement's choices on fake arms (no engine), and how auto runs what was
recorded: setups, lines and pruning, the records, the per-type figures (the sweep: test_sweep.py).

The arms here are functions of the setup (a speed landscape), so each test states which setup
is fastest and checks that it is the one found, tried at the cost stated, and then launched.
The real engine's side is tests/test_measure_engine.py."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from tests import fake_arms as fa

from draftwise.core.engines.spec_types import NGRAM_MAP_K, NGRAM_MEASURED, NGRAM_MOD, NGRAM_SIMPLE
from draftwise.core.launch import prepare
from draftwise.core.measurements import live_figures, measured
from draftwise.core.measuring import arms, quick
from draftwise.core.speculation import resolver
from draftwise.core.speculation.setup import NONE, Setup, of_decision


@pytest.fixture
def with_drafter(tmp_path):
    return fa.with_drafter(tmp_path)


@pytest.fixture
def alone(tmp_path):
    return fa.alone(tmp_path)


# ------------------------------------------------------------------ lines and pruning
def test_a_line_stops_widening_once_beyond_the_noise_and_falling():
    speeds = {1: 50, 2: 70, 3: 90, 4: 100, 5: 95, 6: 80, 7: 70, 8: 60}
    fake = fa.Fake(lambda s: speeds[s.n_max] if s.n_max else 40)
    line = arms.Line(tuple(Setup("draft-simple", n_max=n) for n in range(1, 9)), start=2)
    results = arms.Results()
    kept = arms.run_stage(fake, [line], 2, results, arms.Steps(4))
    ran = [(s.n_max, r) for s, r in fake.starts]
    # Up from 3: 4 is better, 5 falls beyond the 3 % floor; down: 2 falls below 3. Nothing past
    # them runs; they get their second round like the others (one table, one noise bound), in
    # the reverse order (a drift over the stage weighs on every setup alike).
    assert ran == [(3, 0), (4, 0), (5, 0), (2, 0), (2, 1), (5, 1), (4, 1), (3, 1)]
    assert [s.n_max for s in kept] == [3, 4, 5, 2]
    assert {s.n_max for s in results.stopped} == {5, 2}
    assert results.best().setup.n_max == 4


def test_a_flat_line_within_the_noise_is_widened_to_its_ends():
    fake = fa.Fake(lambda s: 100.0 - 0.5 * (s.n_max or 0))  # 0.5 % per step: within the floor
    line = arms.Line(tuple(Setup("draft-simple", n_max=n) for n in range(1, 9)), start=2)
    arms.run_stage(fake, [line], 2, arms.Results(), arms.Steps(4))
    assert sorted({s.n_max for s, _ in fake.starts}) == list(range(1, 9))
    assert len(fake.starts) == 16


def test_progress_shrinks_with_pruning_and_a_cancel_stops_at_the_next_step():
    seen: list[arms.Progress] = []
    steps = arms.Steps(1, seen.append)
    runs = fa.Fake(lambda s: {1: 10, 2: 100, 3: 10, 4: 5}[s.n_max])

    def run(setup, r):
        steps(arms.msg("x"))
        return runs(setup, r)

    line = arms.Line(tuple(Setup("draft-simple", n_max=n) for n in (1, 2, 3, 4)), start=1)
    arms.run_stage(run, [line], 2, arms.Results(), steps)
    assert all(a.step < a.steps for a in seen)
    assert seen[0].steps == 8 and seen[-1].steps == 6  # 3 stops its line: 4 never runs
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(arms.Cancelled):
        arms.Steps(1, cancel=cancel)(arms.msg("x"))


# ------------------------------------------------------------------ the quick measurement
def test_no_drafter_measures_each_ngram_type_and_auto_runs_the_fastest_without_a_flag(alone: prepare.Prepared):
    fast = {NGRAM_MOD: 130.0, NGRAM_SIMPLE: 150.0, NGRAM_MAP_K: 120.0}
    fake = fa.Fake(lambda s: 140.0 if s.ngram2 else fast.get(s.ngram, 100.0))
    m = fa.run_measure(alone, fake)
    assert {s.ngram for s, _ in fake.starts} == {None, *quick.QUICK_NGRAM_TYPES} == {None, NGRAM_MOD, NGRAM_SIMPLE}
    # None and the two types once each (ngram-map-k is the sweep's), then the two types
    # together; a second round for none and the choice alone: the others are behind it
    # beyond the noise (no round could make them the choice).
    pair = Setup(ngram=NGRAM_SIMPLE, ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=32)
    assert len(fake.starts) == 6 and fake.ran(pair) == 1
    assert fake.ran(NONE) == 2 and fake.ran(Setup(ngram=NGRAM_SIMPLE, ngram_len=32)) == 2
    assert m.setup == Setup(ngram=NGRAM_SIMPLE, ngram_len=quick.QUICK_NGRAM_LENGTH)
    assert m.spec_type == NGRAM_SIMPLE and m.n_max_flag == "--spec-ngram-simple-size-m" and m.faster
    records = measured.MeasuredRecords()
    records.record(m)
    # The next plan, without --ngram: the measured type and its length.
    again = prepare.prepare(replace(alone.request, ngram_when_no_drafter=False), fa.CAPS, fa.MACHINE, measured=records,
                            engine=fa.ENGINE)
    assert again.spec.source == resolver.AUTO_NGRAM
    assert again.spec.argv == ("--spec-type", NGRAM_SIMPLE, "--spec-ngram-simple-size-m", "32")
    assert again.measurement == m


def test_two_ngram_types_together_run_when_they_beat_each_alone(alone: prepare.Prepared):
    """ngram-simple drafts the rewrite's source text, ngram-mod what came before (chat): where
    the pair takes both kinds of prompt, beating each type alone beyond the noise on most
    prompts, auto runs both types in one launch, each at its length."""
    def speed(s: Setup) -> tuple[float, float, float]:
        if s.ngram2:
            return 150.0, 150.0, 150.0
        return {NGRAM_MOD: (140.0, 140.0, 100.0), NGRAM_SIMPLE: (100.0, 100.0, 140.0)}.get(s.ngram, (100.0,) * 3)

    m = fa.run_measure(alone, fa.Fake(speed))
    # Built from the faster type first; one setup whichever came first (the engine's order).
    assert m.setup == Setup(ngram=NGRAM_MOD, ngram_len=32, ngram2=NGRAM_SIMPLE, ngram2_len=32)
    assert m.setup == Setup(ngram=NGRAM_SIMPLE, ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=32)
    assert m.setup.types == (NGRAM_SIMPLE, NGRAM_MOD) and m.setup.several
    assert m.setup.label() == "ngram-simple 32 + ngram-mod 32"
    records = measured.MeasuredRecords()
    records.record(m)
    assert measured.MeasuredRecords().get(m.combination).setup == m.setup  # through the file
    again = prepare.prepare(replace(alone.request, ngram_when_no_drafter=False), fa.CAPS, fa.MACHINE, measured=records,
                            engine=fa.ENGINE)
    assert again.spec.argv == ("--spec-type", "ngram-simple,ngram-mod", "--spec-ngram-simple-size-m", "32",
                               "--spec-ngram-mod-n-max", "32")
    assert of_decision(again.spec) == Setup(
        ngram=NGRAM_SIMPLE, ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=32)


def test_a_pair_no_better_than_one_type_beyond_the_noise_is_not_kept(alone: prepare.Prepared):
    """The real Gemma 3 270M measured the pair at 1.46× against ngram-mod's 1.43× on its own
    prompts, then ran it at 0.78× of ngram-mod on prompts it had not seen (issue 38): a pair
    2 % ahead on every prompt is within the noise, so the simpler setup is kept."""
    def speed(s: Setup) -> float:
        return 146.0 if s.ngram2 else {NGRAM_MOD: 143.0, NGRAM_SIMPLE: 124.0}.get(s.ngram, 100.0)

    m = fa.run_measure(alone, fa.Fake(speed))
    assert m.setup == Setup(ngram=NGRAM_MOD, ngram_len=32)
    assert [s.label() for s, _r in sorted(m.per_prompt, key=lambda row: -row[1][0])][0] == "ngram-simple 32 + ngram-mod 32"


def test_a_combination_slower_than_none_on_one_prompt_is_not_kept(alone: prepare.Prepared):
    """Ahead of each type on most prompts, and by far on average, but 0.8× of none on one
    kind of prompt: never kept."""
    def speed(s: Setup) -> tuple[float, float, float]:
        if s.ngram2:
            return 200.0, 200.0, 80.0
        return {NGRAM_MOD: (130.0, 130.0, 100.0), NGRAM_SIMPLE: (120.0, 120.0, 100.0)}.get(s.ngram, (100.0,) * 3)

    m = fa.run_measure(alone, fa.Fake(speed))
    assert m.setup == Setup(ngram=NGRAM_MOD, ngram_len=32)


def test_setups_rank_by_the_geometric_mean_of_their_per_prompt_speed_ups(alone: prepare.Prepared):
    """One setup 2× on one prompt and 0.9× on two (arithmetic mean of tokens/s ahead) against one
    1.2× on every prompt: the geometric means are 1.17 and 1.2, so the steady one is kept."""
    def speed(s: Setup) -> tuple[float, float, float]:
        return {NGRAM_MOD: (200.0, 90.0, 90.0), NGRAM_SIMPLE: (120.0, 120.0, 120.0)}.get(s.ngram, (100.0,) * 3)

    m = fa.run_measure(alone, fa.Fake(speed))
    assert m.setup == Setup(ngram=NGRAM_SIMPLE, ngram_len=32)
    assert m.ratio == pytest.approx(1.2, rel=0.01)
    rows = dict((s.label(), r) for s, r in m.per_prompt)
    assert rows["ngram-mod 32"] == pytest.approx((2.0, 0.9, 0.9), rel=0.01)


def test_no_pair_when_its_first_type_slows_a_prompt_the_other_does_not(alone: prepare.Prepared):
    """The engine asks the pair's first type (ngram-simple) first, so a prompt ngram-simple
    alone slows, the pair slows too, and a combination slower than none where a type alone is
    not is never kept: the pair's start is saved. As the real Gemma 3 270M measured: the short
    chat question at 0.76-0.89× with ngram-simple, 0.95-1.06× with ngram-mod."""
    def speed(s: Setup) -> tuple[float, float, float]:
        return {NGRAM_SIMPLE: (80.0, 150.0, 150.0), NGRAM_MOD: (100.0, 120.0, 120.0)}.get(s.ngram, (100.0,) * 3)

    fake = fa.Fake(speed)
    m = fa.run_measure(alone, fake)
    assert not any(s.ngram2 for s, _ in fake.starts)
    assert m.setup == Setup(ngram=NGRAM_SIMPLE, ngram_len=32)  # the higher geometric mean alone
    # The other way round the pair is tried: its first type slows nothing ngram-mod does not.
    def mod_slow(s: Setup) -> tuple[float, float, float]:
        if s.ngram2:
            return 160.0, 160.0, 160.0
        return {NGRAM_SIMPLE: (100.0, 150.0, 150.0), NGRAM_MOD: (80.0, 120.0, 120.0)}.get(s.ngram, (100.0,) * 3)

    fake = fa.Fake(mod_slow)
    m = fa.run_measure(alone, fake)
    assert any(s.ngram2 for s, _ in fake.starts) and m.setup.several


def test_no_pair_of_ngram_types_when_neither_pays(alone: prepare.Prepared):
    fake = fa.Fake(lambda s: 90.0 if s.ngram else 100.0)
    fa.run_measure(alone, fake)
    assert not any(s.ngram2 for s, _ in fake.starts)


def test_a_drafter_is_measured_at_its_lengths_beside_ngram_and_combined_when_both_pay(with_drafter):
    def speed(s: Setup) -> float:
        if s.combined:
            return 190.0
        if s.drafter:
            return {2: 120.0, 4: 160.0, 8: 140.0}[s.n_max] * (0.9 if s.p_min else 1.0)
        return 130.0 if s.ngram else 100.0

    fake = fa.Fake(speed, acceptance=0.7)
    m = fa.run_measure(with_drafter, fake)
    tried = list(dict.fromkeys(s for s, _ in fake.starts))
    assert tried[:5] == [NONE, *(Setup("draft-simple", n_max=n) for n in (2, 4, 8)),
                         Setup(ngram=NGRAM_MOD, ngram_len=32)]
    # The cheap extras: p-min (acceptance 70 % leaves drafts to cut) and the combination, at the
    # engine's --spec-default length for ngram-mod.
    assert tried[5:] == [Setup("draft-simple", n_max=4, p_min=quick.P_MIN_QUICK),
                         Setup("draft-simple", n_max=4, ngram=NGRAM_MOD, ngram_len=64)]
    assert m.setup == tried[6] and m.spec_type == "ngram-mod,draft-simple"
    assert "with n-gram speculation" in m.what
    records = measured.MeasuredRecords()
    records.record(m)
    again = prepare.prepare(with_drafter.request, fa.CAPS, fa.MACHINE, measured=records, engine=fa.ENGINE)
    argv = again.spec.argv
    assert argv[:2] == ("--spec-type", "ngram-mod,draft-simple")
    assert argv[argv.index("--spec-draft-n-max") + 1] == "4" and argv[argv.index("--spec-ngram-mod-n-max") + 1] == "64"
    assert "--spec-draft-model" in argv and again.spec.source == resolver.AUTO_COMPANION
    assert again.spec.spec_type == "ngram-mod,draft-simple" and again.draft is not None
    # The plan counts the drafter of a combined launch as it does a single one.
    assert again.plan.bytes.drafter == with_drafter.plan.bytes.drafter > 0


def test_the_lengths_shown_beside_the_kept_one_are_its_own_kinds(with_drafter):
    """`draftwise measure` prints "draft length kept: N (tokens/s per length tried: …)": where
    n-gram beats the drafter, the drafter's 2/4/8 must not stand beside ngram-mod's 32 (the
    corpus SmolLM2-360M beside its 135M printed exactly that); where the drafter is kept, with
    n-gram beside it or not, its own lengths are the ones that chose it."""
    from draftwise.cli.measure import render

    ngram_wins = fa.Fake(lambda s: 150.0 if s.ngram and not s.drafter else 110.0 if s.speculates else 100.0,
                         acceptance=1.0)
    m = fa.run_measure(with_drafter, ngram_wins)
    assert m.setup == Setup(ngram=NGRAM_MOD, ngram_len=32) and [n for n, _ in m.tried] == [32]
    assert "draft length kept: 32 (tokens/s per length tried: 32: 15" in render(m)

    def drafter_wins(s: Setup) -> float:
        if s.combined:
            return 190.0
        return {2: 120.0, 4: 160.0, 8: 140.0}[s.n_max] if s.drafter else 130.0 if s.ngram else 100.0

    m = fa.run_measure(with_drafter, fa.Fake(drafter_wins, acceptance=1.0))
    assert m.setup.combined and [n for n, _ in m.tried] == [2, 4, 8]


def test_p_min_is_tried_only_when_drafts_are_rejected_and_kept_only_when_faster(with_drafter):
    def speed(s: Setup) -> float:
        if s.drafter:
            return (150.0 if s.n_max == 4 else 120.0) + (20.0 if s.p_min else 0.0)
        return 90.0 if s.ngram else 100.0  # n-gram does not pay: no combination tried

    m = fa.run_measure(with_drafter, fa.Fake(speed, acceptance=0.6))
    assert m.setup == Setup("draft-simple", n_max=4, p_min=quick.P_MIN_QUICK)
    again = prepare.prepare(with_drafter.request, fa.CAPS, fa.MACHINE, measured=_recorded(m), engine=fa.ENGINE)
    assert again.spec.argv[-4:] == ("--spec-draft-n-max", "4", "--spec-draft-p-min", "0.5")
    # Every draft accepted: nothing for p-min to cut, so the quick measurement does not try it.
    exact = fa.Fake(speed, acceptance=1.0)
    fa.run_measure(with_drafter, exact)
    assert not any(s.p_min for s, _ in exact.starts)


def _recorded(m: measured.Measurement) -> measured.MeasuredRecords:
    records = measured.MeasuredRecords()
    records.record(m)
    return records


def test_a_drafter_the_user_chose_keeps_its_type_and_takes_length_and_p_min(with_drafter, tmp_path):
    draft = with_drafter.spec.draft
    forced = prepare.prepare(replace(with_drafter.request, draft=draft), fa.CAPS, fa.MACHINE)
    assert forced.spec.source == resolver.EXPLICIT
    fake = fa.Fake(lambda s: 200.0 if s.ngram else (150.0 + (10 if s.p_min else 0)) if s.drafter else 100.0)
    m = fa.run_measure(forced, fake)
    assert not any(s.ngram for s, _ in fake.starts)  # no n-gram setups for a drafter you chose
    again = prepare.prepare(forced.request, fa.CAPS, fa.MACHINE, measured=_recorded(m), engine=fa.ENGINE)
    assert again.spec.argv[:2] == ("--spec-type", "draft-simple")
    assert again.spec.argv[-4:-2] == ("--spec-draft-n-max", str(m.setup.n_max))
    assert again.spec.argv[-2:] == ("--spec-draft-p-min", "0.5")


def test_users_own_length_wins_over_the_measured_one(alone):
    m = fa.run_measure(alone, fa.Fake(lambda s: 150.0 if s.ngram == NGRAM_SIMPLE else 100.0))
    request = replace(alone.request, ngram_when_no_drafter=False, extra_args=("--spec-ngram-simple-size-m", "12"))
    again = prepare.prepare(request, fa.CAPS, fa.MACHINE, measured=_recorded(m), engine=fa.ENGINE)
    assert again.spec.argv == ("--spec-type", NGRAM_SIMPLE)
    argv = again.argv("llama-server")
    assert argv.count("--spec-ngram-simple-size-m") == 1 and argv[argv.index("--spec-ngram-simple-size-m") + 1] == "12"


def test_speculation_off_is_not_turned_into_ngram(alone, tmp_path):
    off = prepare.prepare(replace(alone.request, mtp="off", ngram_when_no_drafter=False), fa.CAPS, fa.MACHINE)
    assert quick.ngram_request(off) is None


def test_a_damaged_sweeps_file_is_set_aside_and_reported(with_drafter):
    records = measured.MeasuredRecords()
    path = records.path.with_name("speculation-sweeps.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "entries": [{"combination": {}}]}))
    assert records.get(measured.Combination("a", "b", "c", "d")) is None
    assert records.problem and "set aside" in records.problem and not path.exists()


# ------------------------------------------------------------------ setups and per-type figures
def test_setup_argv_json_and_validation():
    s = Setup("draft-mtp", n_max=2, p_min=0.75, ngram=NGRAM_MAP_K, ngram_len=24)
    head = resolver.SpecDecision("draft-mtp", None, resolver.AUTO_MTP, True)
    assert s.on(head).argv == ("--spec-type", "ngram-map-k,draft-mtp", "--spec-draft-n-max", "2", "--spec-draft-p-min",
                               "0.75", "--spec-ngram-map-k-size-m", "24")
    assert Setup.from_json(json.loads(json.dumps(s.to_json()))) == s
    companion = resolver.SpecDecision("draft-simple", Path("x.gguf"), resolver.AUTO_COMPANION, True)
    assert Setup(ngram=NGRAM_MOD).on(companion).argv == ("--spec-type", "ngram-mod")
    for bad in ({"drafter": "ngram-mod"}, {"ngram": "draft-simple"}, {"n_max": 0, "drafter": "draft-simple"},
                {"p_min": 2.0, "drafter": "draft-simple"}, {"n_max": True}):
        with pytest.raises(ValueError):
            Setup.from_json(bad)
    chosen = resolver.SpecDecision("draft-simple", Path("d.gguf"), resolver.EXPLICIT, False, p_min=0.5)
    assert of_decision(chosen) == Setup("draft-simple", p_min=0.5)


LINES = [
    "spec common_specu: statistics        ngram-mod: #calls(b,g,a) =    1     80     40, #gen drafts =     40, "
    "#acc drafts =    36, #gen tokens =    960, #acc tokens =   900, #mean acc len = 23.50, #acc rate/pos = (0.9)",
    "spec common_specu: statistics     draft-simple: #calls(b,g,a) =    1     40     40, #gen drafts =     40, "
    "#acc drafts =    20, #gen tokens =    240, #acc tokens =   120",
    "spec common_specu: statistics        ngram-mod: #calls(b,g,a) =    2    160     80, #gen drafts =     80, "
    "#acc drafts =    72, #gen tokens =   1920, #acc tokens =  1800",
]


def test_the_per_type_lines_say_which_type_drafted_how_much():
    stats = live_figures.type_stats(LINES)
    assert [(s.spec_type, s.drafted, s.accepted) for s in stats] == [("ngram-mod", 1920, 1800),
                                                                      ("draft-simple", 240, 120)]
    assert str(live_figures.types_text(stats)) == ("drafted tokens by type: ngram-mod 89 % (94 % accepted), "
                                               "draft-simple 11 % (50 % accepted)")
    assert live_figures.types_text(stats[:1]) is None  # one type: nothing to split
    watch = live_figures.Watch(speculating=True, what="x", break_even=None)
    watch.lines(LINES)
    assert "ngram-mod 89 %" in str(watch.types_text())


def test_an_mtp_head_gets_its_short_lengths_and_p_min_where_it_pays(tmp_path):
    """MTP: lengths 1, 2, 4 (short drafts pay for a head drafting from the model's own state),
    then p-min at the best length; the next plan passes both on `--spec-type draft-mtp`."""
    from draftwise.core.planning import planner
    from draftwise.testing.tinymodels import mtp_model, write_tiny_model

    model = write_tiny_model(tmp_path / "GLM-tiny.gguf", mtp_model())[0]
    p = prepare.prepare(prepare.Request(model=model, prefs=planner.PlanPrefs(margin_bytes=0, ctx=2048)), fa.CAPS,
                        fa.MACHINE)
    assert p.spec.source == resolver.AUTO_MTP

    def speed(s: Setup) -> float:
        if s.drafter:
            return {1: 150.0, 2: 140.0, 4: 110.0}[s.n_max] + (25.0 if s.p_min else 0.0)
        return 100.0

    fake = fa.Fake(speed, acceptance=0.5)
    m = fa.run_measure(p, fake)
    assert [s.n_max for s, r in fake.starts if r == 0 and s.drafter and not s.p_min and not s.ngram] == [1, 2, 4]
    assert m.setup == Setup("draft-mtp", n_max=1, p_min=quick.P_MIN_QUICK)
    again = prepare.prepare(p.request, fa.CAPS, fa.MACHINE, measured=_recorded(m), engine=fa.ENGINE)
    assert again.spec.argv == ("--spec-type", "draft-mtp", "--spec-draft-n-max", "1", "--spec-draft-p-min", "0.5")


def test_a_verdict_within_the_noise_gets_more_rounds_of_none_and_the_best(alone):
    """A busy machine: rounds 1 and 2 stray ±30 % (every setup alike), later ones do not. After
    two rounds 1.3× is within the error; a third round of none and the best makes it faster, so
    auto turns n-gram on (the other type, behind beyond the noise, ran once)."""
    swing = (1.3, 0.7, 1.0, 1.0)

    class Busy(fa.Fake):
        def __call__(self, setup, r):
            arm = super().__call__(setup, r)
            k = swing[r] / (1.0 + 0.01 * (r % 2))
            return replace(arm, ms=arm.ms / k, per_request=tuple((i, rr, t * k) for i, rr, t in arm.per_request))

    fake = Busy(lambda s: 130.0 if s.ngram == NGRAM_SIMPLE else 110.0 if s.ngram else 100.0)
    m = fa.run_measure(alone, fake)
    assert fake.ran(NONE) == quick.MAX_ROUNDS == 3 and fake.ran(Setup(ngram=NGRAM_SIMPLE, ngram_len=32)) == 3
    assert fake.ran(Setup(ngram=NGRAM_MOD, ngram_len=32)) == 1
    assert m.ratio == pytest.approx(1.3, rel=0.01) and m.faster and m.noise < 0.3
    # ngram-mod ahead on every prompt, within the noise of ngram-simple, its simpler form
    # (choice._stateless_form): the third round goes to both, as it can settle that. Here the
    # rounds stray ±30 % (each figure's error about 0.18 after three), wider than 1.3 against
    # 1.1: still a tie after MAX_ROUNDS, and a tie keeps the simpler form.
    fake = Busy(lambda s: 130.0 if s.ngram == NGRAM_MOD else 110.0 if s.ngram else 100.0)
    m = fa.run_measure(alone, fake)
    mod, simple = Setup(ngram=NGRAM_MOD, ngram_len=32), Setup(ngram=NGRAM_SIMPLE, ngram_len=32)
    assert [fake.ran(s) for s in (NONE, mod, simple)] == [3, 3, 3]
    assert m.setup == simple


def test_rounds_past_the_first_run_only_within_the_minute(alone):
    """The same busy machine, with the product's minute (`MeasureSettings.within_s`): where a
    start takes 13 s (the real Gemma 3 270M's eight prompts on 2 cores, about), the second round
    of none and the best would end past 60 s, so it is not run: the choice stands on one round,
    and the progress line says why. Where a start takes 2 s, the rounds run as the rule asks."""
    swing = (1.3, 0.7, 1.0, 1.0)
    now = [0.0]

    class Busy(fa.Fake):
        def __init__(self, speed, seconds: float) -> None:
            super().__init__(speed)
            self.seconds = seconds

        def __call__(self, setup, r):
            now[0] += self.seconds
            arm = super().__call__(setup, r)
            k = swing[r] / (1.0 + 0.01 * (r % 2))
            return replace(arm, ms=arm.ms / k, per_request=tuple((i, rr, t * k) for i, rr, t in arm.per_request))

    simple = Setup(ngram=NGRAM_SIMPLE, ngram_len=32)
    settings = replace(fa.SETTINGS, within_s=quick.MINUTE_S)
    for seconds, rounds in ((13.0, 1), (2.0, quick.MAX_ROUNDS)):
        now[0] = 0.0
        said: list[str] = []
        fake = Busy(lambda s: 130.0 if s.ngram == NGRAM_SIMPLE else 110.0 if s.ngram else 100.0, seconds)
        m = quick.measure(alone, fa.ENGINE, fa.MACHINE, settings=settings, runner=fake, engine_types=NGRAM_MEASURED,
                          clock=lambda: now[0], report=lambda p, said=said: said.append(str(p.text)))
        assert fake.ran(NONE) == fake.ran(simple) == rounds, seconds
        stopped = [t for t in said if t.startswith("no round 2: it would take the measurement past 60 s")]
        assert bool(stopped) is (rounds == 1), said
        assert m.seconds <= quick.MINUTE_S or rounds > 1


def test_ngram_is_turned_on_only_when_faster_beyond_the_noise(alone):
    """n-gram for a model with no drafter turns on only when it measured faster beyond the
    noise: 1.03× with ±8 % noise is a tie (off; the prompt kinds can pull apart within it),
    0.99× is off, 1.20× with ±3 % is on."""
    m = fa.run_measure(alone, fa.Fake(lambda s: 150.0 if s.ngram == NGRAM_MOD else 100.0))
    request = replace(alone.request, ngram_when_no_drafter=False)
    for ratio, noise, on in ((1.03, 0.08, False), (0.99, 0.08, False), (1.20, 0.03, True)):
        noisy = replace(m, tokens_per_s_with=m.tokens_per_s_without * ratio, noise=noise)
        assert noisy.faster is on and noisy.pays is on
        again = prepare.prepare(request, fa.CAPS, fa.MACHINE, measured=_recorded(noisy), engine=fa.ENGINE)
        assert bool(again.spec.argv) is on, ratio




def test_measure_says_when_auto_leaves_a_tied_ngram_off(alone):
    """`draftwise measure` on a model with no drafter: a setup within the noise is named as the
    fastest tried, never as what auto runs from now on."""
    from draftwise.cli.measure import render

    m = fa.run_measure(alone, fa.Fake(lambda s: 150.0 if s.ngram == NGRAM_MOD else 100.0))
    tie = replace(m, tokens_per_s_with=m.tokens_per_s_without * 1.01, noise=0.02)
    out = render(tie, on_trial=True)
    assert "not faster than none beyond the noise, so auto leaves n-gram speculation off" in out
    assert "setup kept" not in out
    assert "setup kept: ngram-mod 32 (what auto runs from now on)" in render(m, on_trial=True)


def test_measure_never_calls_a_drafter_left_out_kept(with_drafter):
    """A drafter slower than none beyond the noise (the zero-weight corpus SmolLM2 pair's 0.22×
    in bench/generalize.py's smoke run, here a landscape): its fastest length is named as that,
    not as "what auto runs from now on", beside the line that says it is left out."""
    from draftwise.cli.measure import render

    m = fa.run_measure(with_drafter, fa.Fake(lambda s: 25.0 if s.speculates else 100.0))
    assert m.slower
    out = render(m)
    assert "setup kept" not in out and "* kept" not in out, out
    assert f"fastest setup: {m.setup.label()}; slower than none beyond the noise" in out
    assert "(geometric mean first; * the choice, not run)" in out
    assert "An automatic drafter is left out from now on" in out


def test_a_drafter_whose_drafts_are_refused_is_not_ranked_nor_given_p_min(with_drafter):
    """The engine's arms stop a drafter whose drafts are refused (arms.refused: a start's
    first prompts alone): such an arm is never ranked prompt by prompt against whole ones,
    p-min is not tried on it (it cannot make refused drafts pay), and ngram-mod, which pays,
    is kept."""
    class Refusing(fa.Fake):
        def __call__(self, setup, r):
            arm = super().__call__(setup, r)
            if setup.drafter is None:
                return arm
            return replace(arm, per_request=arm.per_request[:1], tokens=64.0, ms=64.0 * 1000.0 / 20.0,
                           counters=replace(arm.counters, accepted=0.0), refused=True)

    fake = Refusing(lambda s: 20.0 if s.drafter is not None else 150.0 if s.ngram else 100.0)
    m = fa.run_measure(with_drafter, fake)
    assert not any(s.p_min for s, _ in fake.starts)
    assert m.setup is not None and m.setup.drafter is None and m.setup.ngram == NGRAM_MOD
    assert all(s.drafter is None for s, _ in m.per_prompt)


def test_a_pairs_length_the_user_set_is_left_to_them(alone: prepare.Prepared):
    """Your own --spec-ngram-mod-n-max wins over the measured pair's, never doubled."""
    m = fa.run_measure(alone, fa.Fake(lambda s: 146.0 if s.ngram2 else 120.0 if s.ngram else 100.0))
    assert m.setup is not None and m.setup.ngram2 is not None
    use = measured.decide(m, automatic=True, user_args=("--spec-ngram-mod-n-max",))
    kept = use.setup
    assert kept is not None and {kept.ngram, kept.ngram2} == {NGRAM_SIMPLE, NGRAM_MOD}
    mod_len = kept.ngram_len if kept.ngram == NGRAM_MOD else kept.ngram2_len
    assert mod_len is None and "--spec-ngram-mod-n-max" not in dict(kept.lengths)


def test_a_pair_is_two_types_even_when_one_type_ran_at_two_lengths(alone: prepare.Prepared):
    """`--n-max 16,32` on a model with no drafter: the type measured at two lengths counts once
    (its faster length) beside the other type, never a type paired with itself."""
    def speed(s: Setup) -> float:
        if s.ngram2:
            return 160.0
        return {(NGRAM_MOD, 16): 140.0, (NGRAM_MOD, 32): 130.0}.get((s.ngram, s.ngram_len), 120.0 if s.ngram else 100.0)

    fake = fa.Fake(speed)
    settings = replace(fa.SETTINGS, n_max_values=(16, 32))
    m = quick.measure(alone, fa.ENGINE, fa.MACHINE, settings=settings, runner=fake, engine_types=NGRAM_MEASURED)
    assert m.setup == Setup(ngram=NGRAM_SIMPLE, ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=16)


def test_a_setup_on_a_decision_keeps_its_drafters_file_and_replaces_only_what_a_setup_sets():
    """Issue 36, argv as data: the setup's types, lengths and p-min replace the decision's own
    (the field's n-max 3 and p-min 0.75 here); the drafter's file stays (in an older build's
    spelling, `-md`), and the decision renders each option once."""
    chosen = resolver.SpecDecision("draft-simple", Path("/m/d.gguf"), resolver.AUTO_COMPANION, True,
                                   lengths=(("--spec-draft-n-max", 3),), p_min=0.75, draft_flag="-md")
    run = Setup("draft-simple", n_max=4, ngram=NGRAM_MOD, ngram_len=16).on(chosen)
    assert run.argv == ("--spec-type", "ngram-mod,draft-simple", "-md", "/m/d.gguf", "--spec-draft-n-max", "4",
                        "--spec-ngram-mod-n-max", "16")
    assert of_decision(run) == Setup("draft-simple", n_max=4, ngram=NGRAM_MOD, ngram_len=16)
    users = replace(chosen, source=resolver.USER_ARGS, spec_type="draft-simple", lengths=(), p_min=None)
    assert Setup("draft-simple", n_max=2).on(users).argv == ("-md", "/m/d.gguf", "--spec-draft-n-max", "2")


def test_a_fix_an_earlier_arm_needed_is_planned_with_not_added_to_the_users_arguments(tmp_path):
    """A fix found while measuring (-nr after the AMX fault, -fa off after a GPU fault) joins
    the next arms' plans as data, as a launch's found fix does: the user's extra arguments stay
    theirs, each option is passed once, and -nr's plan keeps no re-laid CPU copies."""
    from conftest import TEST_MACHINE
    from draftwise.core.engines.capabilities import pinned_caps
    from draftwise.core.engines.engine_settings import EngineSettings
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    model = write_tiny_model(tmp_path / "q4.gguf", TinyModel(n_layer=2, n_embd=64, dtype="Q4_0"))[0]
    prepared = prepare.prepare(prepare.Request(model=model, extra_args=("--temp", "0.5")), pinned_caps(),
                               TEST_MACHINE)
    run = arms.EngineArms(prepared, tmp_path / "llama-server", machine=TEST_MACHINE)
    before = run.launch(NONE).argv
    assert "-nr" not in before
    run._found.append(EngineSettings(repack=False))
    run._found.append(EngineSettings(flash_attn="off"))
    after = run.launch(NONE).argv
    assert after.count("-nr") == 1 and after.count("-fa") == 1
    assert after[after.index("-fa") + 1] == "off"
    assert tuple(after[after.index("--temp"):after.index("--temp") + 2]) == ("--temp", "0.5")
    fixed = [p for key, p in run._planned.items() if key[1] == EngineSettings(repack=False, flash_attn="off")]
    assert len(fixed) == 1 and fixed[0].extra_args == ("--temp", "0.5")
    assert fixed[0].plan.bytes.cpu_extra == {} and fixed[0].prefs.flash_attn == "off"
