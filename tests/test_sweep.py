"""The sweep's choices on fake arms (no engine): every dimension widened and pruned, the best
found and run by auto, the quick measurement within a third of its engine starts. The real
engine's side is tests/test_measure_engine.py."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from tests import fake_arms as fa

from draftwise.core.engines.spec_types import NGRAM_MEASURED, NGRAM_MOD
from draftwise.core.launch import prepare
from draftwise.core.measurements import measured
from draftwise.core.measurements.sweep_record import SweepRecords
from draftwise.core.measuring import arms, sweep
from draftwise.core.measuring.sweep import SweepPlan
from draftwise.core.speculation.setup import NONE, Setup, of_decision


@pytest.fixture
def with_drafter(tmp_path):
    return fa.with_drafter(tmp_path)


@pytest.fixture
def alone(tmp_path):
    return fa.alone(tmp_path)


def _step35(s: Setup) -> float:
    """A drafter whose best is n-max 2 with p-min 0.5 (Step-3.5's shape, llama.cpp#24508),
    n-gram best at 16, and ngram-mod beside the best drafter faster still."""
    if s.combined:
        return 260.0 if s.ngram == NGRAM_MOD and s.ngram_len == 16 else 150.0
    if s.drafter:
        n, p = s.n_max, s.p_min or 0.0
        base = {1: 150, 2: 170, 3: 160, 4: 140, 5: 120, 6: 110, 7: 100, 8: 90, None: 130}[n]
        return base + (60 if p == 0.5 and n == 2 else 20 if p == 0.5 else -10 if p else 0)
    if s.ngram:
        return {8: 120, 16: 130, 24: 125, 32: 122, 48: 110, 64: 100}[s.ngram_len] - (5 if s.ngram != NGRAM_MOD else 0)
    return 100.0


def test_the_sweep_finds_the_best_of_every_dimension_and_auto_runs_it(with_drafter):
    fake = fa.Fake(_step35, acceptance=0.6)
    result = fa.run_sweep(with_drafter, fake)
    best = result.best
    assert best.setup == Setup("draft-simple", n_max=2, p_min=0.5, ngram=NGRAM_MOD, ngram_len=16)
    assert result.ratio(best) == pytest.approx(2.6, rel=0.01)
    labels = {r.setup.label() for r in result.rows}
    assert "draft-simple n-max 2 p-min 0.75" in labels and "ngram-map-k 16" in labels
    assert any(r.stopped for r in result.rows)
    assert all(r.rounds == 2 for r in result.rows)
    # Pruned: n-max 8 at p-min 0 is never reached (5 falls beyond the noise first).
    assert fake.ran(Setup("draft-simple", n_max=8)) == 0
    records = SweepRecords()
    records.record(result)
    assert SweepRecords().get(result.combination) == result
    # Auto, with no flag: the sweep's best.
    again = prepare.prepare(with_drafter.request, fa.CAPS, fa.MACHINE, measured=measured.MeasuredRecords(), engine=fa.ENGINE)
    assert again.measurement is not None and again.measurement.swept
    assert again.spec.spec_type == "ngram-mod,draft-simple"
    assert again.spec.draft == with_drafter.spec.draft and again.spec.draft_flag == "--spec-draft-model"
    assert of_decision(again.spec) == best.setup


def test_a_sweeps_best_wins_over_a_quick_measurement_and_forget_drops_both(with_drafter):
    records = measured.MeasuredRecords()
    quick = fa.run_measure(with_drafter, fa.Fake(_step35))
    records.record(quick)
    swept = fa.run_sweep(with_drafter, fa.Fake(_step35))
    SweepRecords().record(swept)
    got = records.get(quick.combination)
    assert got is not None and got.swept and got.setup == swept.best.setup
    assert records.forget(model=with_drafter.model.path) == 2
    assert records.get(quick.combination) is None and SweepRecords().entries() == []


def test_the_quick_measurement_costs_at_most_a_third_of_the_sweep(alone, with_drafter):
    for p, speed in ((alone, lambda s: 100.0 + (s.ngram_len or 0) / 4), (with_drafter, _step35)):
        quick, full = fa.Fake(speed, 0.6), fa.Fake(speed, 0.6)
        fa.run_measure(p, quick)
        fa.run_sweep(p, full)
        assert len(quick.starts) * 3 <= len(full.starts), (len(quick.starts), len(full.starts))


def test_the_sweep_leaves_a_setting_the_user_fixed_alone(with_drafter):
    request = replace(with_drafter.request, extra_args=("--spec-draft-n-max", "5"))
    p = prepare.prepare(request, fa.CAPS, fa.MACHINE)
    fake = fa.Fake(_step35)
    fa.run_sweep(p, fake)
    assert {s.n_max for s, _ in fake.starts if s.drafter} == {None}


def test_a_users_own_spec_type_is_not_swept(alone):
    p = prepare.prepare(replace(alone.request, ngram_when_no_drafter=False, extra_args=("--spec-type", "ngram-mod")),
                        fa.CAPS, fa.MACHINE)
    with pytest.raises(arms.MeasureError, match="own --spec-type"):
        fa.run_sweep(p, fa.Fake(lambda s: 1.0))




def test_the_final_stage_keeps_the_steady_best_not_the_lucky_one(alone):
    """ngram-simple 16 is fast only in its first two starts (a quiet moment); ngram-mod 32 is
    steadily fastest. The final measures the three fastest and none again, on the same rounds."""
    seen: dict = {}

    def speed(s: Setup) -> float:
        seen[s] = seen.get(s, 0) + 1
        if s == Setup(ngram="ngram-simple", ngram_len=16):
            return 300.0 if seen[s] <= 2 else 90.0
        return 200.0 if s == Setup(ngram=NGRAM_MOD, ngram_len=32) else 150.0 if s.speculates else 100.0

    fake = fa.Fake(speed)
    table = fa.run_sweep(alone, fake)
    # Two rounds in the stages, FINAL_ROUNDS (3) in the final: the verdict that is kept.
    assert sweep.FINAL_ROUNDS == 3 and fake.ran(NONE) == fa.SETTINGS.rounds + sweep.FINAL_ROUNDS
    finals = [r for r in table.rows if r.final_tokens_per_s is not None]
    assert len(finals) == 3 and Setup(ngram="ngram-simple", ngram_len=16) in {r.setup for r in finals}
    assert table.best.setup == Setup(ngram=NGRAM_MOD, ngram_len=32)
    assert table.ratio(table.best) == pytest.approx(2.0, rel=0.02)  # against none in the same final


# ------------------------------------------------------------------ every drafter the files allow
def _companion_fastest(s: Setup) -> float:
    """The draft model beside the MTP head drafts fastest, at n-max 4; the head's best is 1."""
    if s.combined:
        return 150.0
    if s.drafter == "draft-simple":
        assert s.drafter_key is not None  # the companion is never the resolver's own here
        return {1: 150, 2: 180, 3: 200, 4: 240, 5: 210, 6: 190, 7: 170, 8: 160}[s.n_max] - (30 if s.p_min else 0)
    if s.drafter == "draft-mtp":
        return {1: 190, 2: 180, 3: 150, 4: 140, 5: 120, 6: 110, 7: 100, 8: 90}[s.n_max] - (30 if s.p_min else 0)
    return 110.0 if s.ngram else 100.0


@pytest.fixture
def mtp_and_draft(tmp_path):
    return fa.mtp_with_companion(tmp_path)


def test_the_sweep_runs_the_mtp_head_and_the_draft_beside_it_and_auto_runs_the_faster(mtp_and_draft):
    p = mtp_and_draft
    (alt,) = p.spec.alternatives
    fake = fa.Fake(_companion_fastest)
    result = fa.run_sweep(p, fake)
    ran = {(s.drafter, s.drafter_key) for s, _ in fake.starts if s.drafter}
    assert ran == {("draft-mtp", None), ("draft-simple", alt.drafter_key)}
    # Both beat none at the default length: both get their lengths line.
    assert fake.ran(Setup("draft-mtp", n_max=1)) == 2 and fake.ran(Setup("draft-simple", n_max=4,
                                                                          drafter_key=alt.drafter_key)) >= 2
    best = result.best
    assert best.setup == Setup("draft-simple", n_max=4, drafter_key=alt.drafter_key)
    assert best.what == f"the draft model {alt.draft.name}"
    assert best.setup.label() == "draft-simple (TinyMTP-draft.gguf) n-max 4"
    assert SweepPlan(p, NGRAM_MEASURED).most_starts(fa.SETTINGS.rounds) >= len(fake.starts)
    # The table names each drafter's file (the head's is the model's).
    from draftwise.cli.measure import render_sweep

    table = render_sweep(result)
    assert "draft-mtp (TinyMTP-Q8_0.gguf) n-max 1 " in table
    assert "Kept: draft-simple (TinyMTP-draft.gguf) n-max 4 (" in table
    SweepRecords().record(result)
    assert SweepRecords().get(result.combination) == result  # the key survives the file
    again = prepare.prepare(p.request, fa.CAPS, fa.MACHINE, measured=measured.MeasuredRecords(), engine=fa.ENGINE)
    assert again.chosen.source == "auto-mtp" and again.measurement is not None and again.measurement.swept
    spec = again.spec
    assert (spec.spec_type, spec.draft, spec.drafter_key) == ("draft-simple", alt.draft, alt.drafter_key)
    assert spec.draft == alt.draft and spec.draft_flag == "--spec-draft-model"
    assert of_decision(spec) == replace(best.setup, drafter_key=None)
    # Planned for the draft model, not the head: its header, its own offload flag.
    assert again.draft is spec.draft_info and again.draft.path == alt.draft and "--spec-draft-ngl" in again.plan.plan_args
    notes = " ".join(map(str, spec.notes))
    assert "Chosen by the sweep: TinyMTP-draft.gguf drafted fastest on this computer, ahead of the model's own MTP head" in notes
    argv = again.argv(fa.ENGINE)
    assert argv[argv.index("--spec-draft-model") + 1] == str(alt.draft)


def test_a_recorded_alternative_that_changed_or_does_not_fit_leaves_the_resolvers_choice(mtp_and_draft):
    import os

    from draftwise.core.machine.hardware import Machine

    p = mtp_and_draft
    result = fa.run_sweep(p, fa.Fake(_companion_fastest))
    assert result.best.setup.drafter_key is not None
    # A machine with no room for the draft model now: the same record, filed under its key.
    small = Machine(ram_total=10 << 20, ram_available=10 << 20, gpus=[], os="linux")
    SweepRecords().record(result)
    SweepRecords().record(replace(result, combination=prepare.combination(p.model.path, p.spec, fa.ENGINE, small)))
    tight = prepare.prepare(p.request, fa.CAPS, small, measured=measured.MeasuredRecords(), engine=fa.ENGINE)
    assert "--spec-draft-model" not in tight.argv(fa.ENGINE)
    assert any("does not fit now" in str(n) for n in tight.spec.notes)
    # The draft file rewritten since: its key is another, so the rules' choice runs.
    draft = p.spec.alternatives[0].draft
    os.utime(draft, ns=(10**18, 10**18))
    again = prepare.prepare(p.request, fa.CAPS, fa.MACHINE, measured=measured.MeasuredRecords(), engine=fa.ENGINE)
    assert (again.spec.spec_type, again.spec.draft) == ("draft-mtp", None)
    assert any("no longer a suitable drafter" in str(n) for n in again.spec.notes)


def test_a_record_without_the_drafter_field_still_loads_and_applies(mtp_and_draft):
    """Setups from before alternatives have no `drafter_key`: the resolver's own drafter."""
    old = {"drafter": "draft-mtp", "n_max": 1, "p_min": None, "ngram": None, "ngram_len": None}
    assert Setup.from_json(old) == Setup("draft-mtp", n_max=1) and Setup("draft-mtp", n_max=1).to_json() == old
    p = mtp_and_draft
    result = fa.run_sweep(p, fa.Fake(lambda s: 300.0 if s == Setup("draft-mtp", n_max=1) else
                                     _companion_fastest(s)))
    assert result.best.setup == Setup("draft-mtp", n_max=1)
    SweepRecords().record(result)
    rows = json.loads(SweepRecords().path.read_text())
    best = next(r for e in rows["entries"] for r in e["rows"] if r["setup"] == old)
    assert "drafter_key" not in best["setup"]
    again = prepare.prepare(p.request, fa.CAPS, fa.MACHINE, measured=measured.MeasuredRecords(), engine=fa.ENGINE)
    assert again.spec.argv == ("--spec-type", "draft-mtp", "--spec-draft-n-max", "1")


def test_a_setup_names_a_drafter_of_its_own_type_only():
    key = "draft-simple|/m/b.gguf|10|20"
    assert Setup("draft-simple", drafter_key=key).drafter_file == "b.gguf"
    with pytest.raises(ValueError, match="not of a draft-mtp drafter"):
        Setup("draft-mtp", drafter_key=key)
    with pytest.raises(ValueError):
        Setup(ngram=NGRAM_MOD, drafter_key=key)


def test_the_sweep_tries_the_two_fastest_ngram_types_together(alone):
    """A pair of n-gram types that beats each type alone (the real Gemma 3 270M's shape: one
    type takes chat, the other the rewrite) is found and is the sweep's best."""
    def speed(s: Setup) -> float:
        if s.ngram2 is not None:
            return 160.0 if {s.ngram, s.ngram2} == {NGRAM_MOD, "ngram-simple"} else 120.0
        return {NGRAM_MOD: 140.0, "ngram-simple": 130.0}.get(s.ngram, 110.0 if s.ngram else 100.0)

    fake = fa.Fake(speed)
    table = fa.run_sweep(alone, fake)
    pairs = [s for s, _ in fake.starts if s.ngram2 is not None]
    assert set(pairs) == {Setup(ngram="ngram-simple", ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=32)}
    assert table.best.setup == pairs[0] and table.measurement().pays


def test_the_sweeps_verdict_says_what_auto_does_with_a_tie(with_drafter, alone):
    """A tie within the noise: auto keeps a drafter's best (not slower), while n-gram on trial
    for a model with no drafter stays off; the table's last words say which."""
    from draftwise.cli.measure import render_sweep

    tie = fa.Fake(lambda s: 101.0 if s.speculates else 100.0)
    drafted = render_sweep(fa.run_sweep(with_drafter, tie))
    assert "Kept:" in drafted and "turns no n-gram" not in drafted
    on_trial = render_sweep(fa.run_sweep(alone, fa.Fake(lambda s: 101.0 if s.speculates else 100.0)), on_trial=True)
    assert "is not faster than none beyond the noise" in on_trial and "Kept:" not in on_trial
