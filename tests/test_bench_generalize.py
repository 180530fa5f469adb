"""bench/generalize.py's pure parts (no engine): the pool's halves, the setups and settings the
held-out sweep runs, the arms of its stage and its verdict. The counts are worked out by hand
from the module's text (e.g. three n-gram types at four lengths, alone and in pairs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.engines.spec_types import NGRAM_MAP_K, NGRAM_MOD, NGRAM_SIMPLE
from draftwise.core.kinds import Switch
from draftwise.core.measuring import prompt_pool
from draftwise.core.measuring.tuning import Dimension
from draftwise.core.speculation.setup import NONE, Setup

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import generalize  # noqa: E402

TYPES = (NGRAM_MOD, NGRAM_SIMPLE, NGRAM_MAP_K)
DRAFT = Setup("draft-simple")
DIMS = [Dimension("repack", (None, False), 0), Dimension("threads", (1, None), 1),
        Dimension("flash_attn", (None, Switch.OFF), 0)]


def test_the_halves_are_the_measured_and_the_held_out_prompts_one_of_each_kind():
    seen, unseen = generalize.halves()
    assert seen == prompt_pool.MEASURED and unseen == prompt_pool.HELD_OUT
    assert [k for k, _ in seen] == [k for k, _ in unseen] == list(prompt_pool.KINDS)
    assert generalize.halves(swap=True) == (prompt_pool.HELD_OUT, prompt_pool.MEASURED)


def test_no_drafter_sweeps_each_ngram_type_and_each_pair_at_four_lengths():
    setups = generalize.speculation_setups(NONE, TYPES, drafter_lengths=(), beside_lengths=())
    assert len(setups) == 3 * 4 + 3 * 4  # three types alone, three pairs, at 8/16/32/64
    assert Setup(ngram=NGRAM_MOD, ngram_len=8) in setups
    assert Setup(ngram=NGRAM_SIMPLE, ngram_len=64, ngram2=NGRAM_MAP_K, ngram2_len=64) in setups
    assert all(s.drafter is None for s in setups)
    # A type the engine does not run is left out (one type: no pair).
    assert generalize.speculation_setups(NONE, (NGRAM_MOD,), drafter_lengths=(), beside_lengths=()) == [
        Setup(ngram=NGRAM_MOD, ngram_len=n) for n in (8, 16, 32, 64)]


def test_a_drafter_sweeps_its_lengths_ngram_alone_and_ngram_beside_it():
    setups = generalize.speculation_setups(DRAFT, TYPES, drafter_lengths=range(1, 9), beside_lengths=(2, 4, 8))
    assert len(setups) == 8 + 3 * 4 + 3 * 3 * 4  # lengths 1..8; 12 n-gram alone; 36 beside
    assert Setup("draft-simple", n_max=1) in setups
    assert Setup("draft-simple", n_max=8, ngram=NGRAM_MAP_K, ngram_len=16) in setups
    assert not any(s.ngram2 for s in setups)  # no pairs of n-gram types beside a drafter


def test_the_settings_grid_is_every_combination_the_defaults_first():
    grid = generalize.settings_grid(DIMS)
    assert len(grid) == 2 * 2 * 2 and grid[0] == DEFAULTS
    assert EngineSettings(repack=False, threads=1, flash_attn=Switch.OFF) in grid
    assert generalize.settings_grid([]) == [DEFAULTS]


def test_the_cut_crosses_every_setup_with_the_defaults_and_autos_settings_and_every_setting_with_autos_setup():
    setups = generalize.speculation_setups(NONE, TYPES, drafter_lengths=(), beside_lengths=())
    auto = Setup(ngram=NGRAM_MOD, ngram_len=32, engine=EngineSettings(threads=1))
    grid = generalize.settings_grid(DIMS)
    cut = generalize.arms_to_run(setups, grid, auto, generalize.CUT)
    # 25 (none + 24) at two settings, and 8 combinations × (none, ngram-mod 32) of which 4
    # (none and ngram-mod 32 at the defaults and at -t 1) are counted already.
    assert len(cut) == 25 * 2 + (8 * 2 - 4)
    assert cut[:2] == [NONE, auto]
    assert Setup(ngram=NGRAM_MOD, ngram_len=32, engine=EngineSettings(repack=False, flash_attn=Switch.OFF)) in cut
    assert len(generalize.arms_to_run(setups, grid, auto, generalize.FULL)) == 25 * 8
    # Auto at the defaults: the cut has one settings row for the setups.
    assert len(generalize.arms_to_run(setups, grid, Setup(ngram=NGRAM_MOD, ngram_len=32), generalize.CUT)) == 25 + 14


def test_the_verdict_is_autos_geometric_mean_over_the_best():
    rows = [generalize.Row("no speculation", 1.0, 0.02, (1.0, 1.0), 100.0),
            generalize.Row("ngram-mod 32", 1.25, 0.02, (1.5625, 1.0), 125.0),
            generalize.Row("ngram-simple 16", 1.2, 0.02, (1.44, 1.0), 120.0)]
    v = generalize.Verdict("gemma", ("chat", "edit code"), rows, "ngram-simple 16")
    assert v.best == "ngram-mod 32"
    assert v.ratio == pytest.approx(1.2 / 1.25)  # 0.96
    assert v.met
    missed = generalize.Verdict("gemma", ("chat", "edit code"), rows, "no speculation")
    assert missed.ratio == pytest.approx(0.8) and not missed.met
    assert "auto / best on the unseen half = 0.800" in generalize.render(missed)


def test_the_confirmation_runs_none_auto_and_the_sweeps_fastest_and_scores_the_sweeps_pick():
    rows = [generalize.Row("no speculation", 1.0, 0.02, (1.0,), 100.0),
            generalize.Row("a", 1.49, 0.02, (1.49,), 149.0),
            generalize.Row("b", 1.47, 0.02, (1.47,), 147.0),
            generalize.Row("auto", 1.33, 0.02, (1.33,), 133.0),
            generalize.Row("c", 1.46, 0.02, (1.46,), 146.0),
            generalize.Row("d", 1.40, 0.02, (1.40,), 140.0)]
    assert generalize.finalists(rows, "auto", 3) == ["no speculation", "auto", "a", "b", "c"]
    assert generalize.finalists(rows, "a", 3) == ["no speculation", "a", "b", "c"]
    # Fresh rounds: the sweep's pick "a" at 1.40, "b" now ahead at 1.45, auto at 1.38. The
    # verdict scores the sweep's pick, not the fresh rounds' own highest: 1.38 / 1.40.
    fresh = [generalize.Row("no speculation", 1.0, 0.02, (1.0,), 100.0),
             generalize.Row("auto", 1.38, 0.02, (1.38,), 138.0),
             generalize.Row("a", 1.40, 0.02, (1.40,), 140.0),
             generalize.Row("b", 1.45, 0.02, (1.45,), 145.0)]
    v = generalize.Verdict("gemma (confirmed)", ("chat",), fresh, "auto", best="a")
    assert v.best == "a" and v.ratio == pytest.approx(1.38 / 1.40)


def test_at_equal_text_the_best_is_the_fastest_setup_at_autos_settings_times_the_settings_own_speed():
    nr = EngineSettings(repack=False)
    off = EngineSettings(repack=False, flash_attn=Switch.OFF)
    simple, mod = Setup(ngram=NGRAM_SIMPLE, ngram_len=32), Setup(ngram=NGRAM_MOD, ngram_len=32)
    auto = simple
    setups = [NONE, simple, mod, Setup(ngram=NGRAM_SIMPLE, ngram_len=32, engine=off),
              Setup(engine=nr), Setup(engine=off)]
    # Hand-made: ngram-simple 32 at -nr -fa off first (1.4, its own text), while none runs
    # slower at -nr (0.98) and at -nr -fa off (0.95): at equal text auto's own (1.3) is the best.
    geomeans = [1.0, 1.3, 1.1, 1.4, 0.98, 0.95]
    rows = [generalize.Row(s.label(), g, 0.03, (g,), 100.0 * g) for s, g in zip(setups, geomeans, strict=True)]
    assert generalize.equal_text(setups, rows, auto) == ("ngram-simple 32", pytest.approx(1.3))
    # A setting faster on none (1.05) lifts the best by its own speed, and names it.
    rows[4] = generalize.Row(Setup(engine=nr).label(), 1.05, 0.03, (1.05,), 105.0)
    label, geomean = generalize.equal_text(setups, rows, auto)
    assert label == f"ngram-simple 32 × {Setup(engine=nr).label()}" and geomean == pytest.approx(1.3 * 1.05)
    # Auto at -nr: the setups at -nr are the ones that write its text, none at -nr its base.
    auto_nr = Setup(ngram=NGRAM_SIMPLE, ngram_len=32, engine=nr)
    rows2 = rows + [generalize.Row(auto_nr.label(), 1.30, 0.03, (1.30,), 130.0)]
    assert generalize.equal_text([*setups, auto_nr], rows2, auto_nr) == (auto_nr.label(), pytest.approx(1.30))


def test_the_estimate_scales_generation_with_the_answer_length():
    # 10 s a start, 2 s of it generating 16 tokens: at 128 tokens 8 + 16 = 24 s; 50 starts 1200 s.
    assert generalize.estimate_seconds(50, 10.0, 2.0, 128, 16) == pytest.approx(1200.0)
