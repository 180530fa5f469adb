"""The sweep's choices on fake arms (no engine): every dimension widened and pruned, the best
found and run by auto, the quick measurement within a third of its engine starts. The real
engine's side is tests/test_measure_engine.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests import fake_arms as fa

from draftwise.core.engines.spec_types import NGRAM_MOD
from draftwise.core.launch import arms, prepare
from draftwise.core.speculation import measured
from draftwise.core.speculation.setup import Setup, drafter_flags, of_decision
from draftwise.core.speculation.sweep_record import SweepRecords


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
    assert drafter_flags(again.spec.argv) == ("--spec-draft-model", str(with_drafter.spec.draft))
    assert of_decision(again.spec.spec_type, again.spec.argv) == best.setup


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

    table = fa.run_sweep(alone, fa.Fake(speed))
    finals = [r for r in table.rows if r.final_tokens_per_s is not None]
    assert len(finals) == 3 and Setup(ngram="ngram-simple", ngram_len=16) in {r.setup for r in finals}
    assert table.best.setup == Setup(ngram=NGRAM_MOD, ngram_len=32)
    assert table.ratio(table.best) == pytest.approx(2.0, rel=0.02)  # against none in the same final
