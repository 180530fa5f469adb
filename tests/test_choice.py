"""The choice's rule (core/measuring/choice.py), on hand-made arms: every figure below is
worked out by hand from the tokens/s the arms are given."""

from __future__ import annotations

import math

import pytest

from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.engines.spec_types import NGRAM_MAP_K, NGRAM_MOD, NGRAM_SIMPLE
from draftwise.core.measurements import live_figures
from draftwise.core.measuring import choice
from draftwise.core.measuring.arm import Arm, Timed
from draftwise.core.speculation.setup import NONE, Setup

MOD = Setup(ngram=NGRAM_MOD, ngram_len=32)
MOD64 = Setup(ngram=NGRAM_MOD, ngram_len=64)
SIMPLE = Setup(ngram=NGRAM_SIMPLE, ngram_len=32)
PAIR = Setup(ngram=NGRAM_SIMPLE, ngram_len=32, ngram2=NGRAM_MOD, ngram2_len=32)
DRAFT4 = Setup("draft-simple", n_max=4)
DRAFT4_PMIN = Setup("draft-simple", n_max=4, p_min=0.5)
DRAFT4_MOD = Setup("draft-simple", n_max=4, ngram=NGRAM_MOD, ngram_len=64)


def arm(setup: Setup, *rounds: tuple[float, ...]) -> Arm:
    """An arm with these tokens/s, one tuple per round, one figure per prompt."""
    per_request = tuple((i, r, tps) for r, values in enumerate(rounds) for i, tps in enumerate(values))
    ms = sum(1000.0 / tps for _i, _r, tps in per_request)
    return Arm(setup, float(len(per_request)), ms, per_request, live_figures.Counters(), rounds=len(rounds))


BASE = arm(NONE, (100.0, 100.0, 100.0, 100.0), (100.0, 100.0, 100.0, 100.0))
BASE8 = arm(NONE, (100.0,) * 8, (100.0,) * 8)


def test_the_geometric_mean_weighs_every_prompt_alike():
    s = choice.standing(arm(MOD, (200.0, 50.0, 100.0, 100.0)), BASE, 0.0)
    assert s.speedups == (2.0, 0.5, 1.0, 1.0)
    assert s.geomean == pytest.approx(1.0)  # (2 × 0.5 × 1 × 1)^(1/4); the mean of tokens/s says 1.125
    assert choice.geometric_mean([1.21, 1.0]) == pytest.approx(1.1)
    assert choice.geometric_mean([1.0, 0.0]) == 0.0


def test_a_setup_run_once_is_set_against_the_round_of_none_that_met_the_same_machine():
    base = arm(NONE, (100.0, 100.0), (50.0, 50.0))  # round 2 ran on a busy machine
    s = choice.standing(arm(MOD, (150.0, 150.0)), base, 0.0)
    assert s.speedups == (1.5, 1.5)  # against round 1's 100, not the mean 75


def test_errors_are_each_prompts_spread_over_root_rounds_combined_with_the_bases():
    two = arm(MOD, (110.0, 100.0), (90.0, 100.0))
    s = choice.standing(two, BASE, noise=0.5)
    # Prompt 1: 110 and 90, sample deviation 14.14 over the mean 100, over √2: 0.1; none's 0.
    assert s.errors[0] == pytest.approx(0.1)
    assert s.errors[1] == 0.0
    # The geometric mean's error: RMS of (0.1, 0) over √2 prompts = 0.05.
    assert s.error == pytest.approx(math.sqrt(0.01 / 2) / math.sqrt(2))
    once = choice.standing(arm(MOD, (120.0, 120.0)), BASE, noise=0.04)
    assert once.errors == (0.04, 0.04)  # one round: the measurement's noise so far


def test_simpler_forms():
    assert choice.simpler(MOD, PAIR) and choice.simpler(SIMPLE, PAIR)
    assert choice.simpler(MOD, MOD64) and not choice.simpler(MOD64, MOD)
    assert choice.simpler(DRAFT4, DRAFT4_PMIN) and choice.simpler(DRAFT4, DRAFT4_MOD)
    assert choice.simpler(Setup(ngram=NGRAM_MOD, ngram_len=64), DRAFT4_MOD)
    assert not choice.simpler(NONE, MOD) and not choice.simpler(MOD, MOD)
    # ngram-simple keeps nothing from one request to the next; ngram-mod and ngram-map-k do:
    # the stateless type at the same length or shorter is the simpler form, not the reverse.
    assert choice.simpler(SIMPLE, MOD) and choice.simpler(SIMPLE, MOD64) and not choice.simpler(MOD, SIMPLE)
    assert choice.simpler(SIMPLE, Setup(ngram=NGRAM_MAP_K, ngram_len=32))
    assert not choice.simpler(Setup(ngram=NGRAM_SIMPLE, ngram_len=64), MOD)
    assert choice.simpler(Setup(ngram=NGRAM_SIMPLE), Setup(ngram=NGRAM_MOD))  # the engine's 48 and 64
    assert choice.simpler(SIMPLE, Setup(ngram="ngram-cache"))  # a type with no length to set
    assert not choice.simpler(MOD, Setup(ngram=NGRAM_MOD, ngram_len=64, engine=EngineSettings(repack=False)))


def test_a_combination_needs_to_beat_each_simpler_form_on_most_prompts():
    mod = choice.standing(arm(MOD, (140.0, 140.0, 100.0, 100.0)), BASE, 0.0)
    simple = choice.standing(arm(SIMPLE, (100.0, 100.0, 140.0, 140.0)), BASE, 0.0)
    # Each alone 1.18 (√1.4); the pair 1.5 on every prompt: 1.27× of each, beyond both errors
    # at the 3 % floor (1 − 0.042), and faster on all four prompts: kept.
    pair = choice.standing(arm(PAIR, (150.0, 150.0, 150.0, 150.0)), BASE, 0.0)
    assert choice.beats(pair, mod) and choice.beats(pair, simple)
    assert choice.choose([mod, simple, pair]) == pair
    # Against a steady 1.4×: 2 % ahead on every prompt is within the noise (1.43 / 1.4 = 1.021
    # < 1 / (1 − 0.042)), so the simpler setup is kept.
    steady = choice.standing(arm(MOD, (140.0, 140.0, 140.0, 140.0)), BASE, 0.0)
    tie = choice.standing(arm(PAIR, (143.0, 143.0, 143.0, 143.0)), BASE, 0.0)
    assert not choice.beats(tie, steady)
    assert choice.choose([steady, tie]).setup == MOD
    # Far ahead on average (√(2 × 1.39) = 1.67 against 1.4) but faster on exactly half the
    # prompts: half is not most.
    half = choice.standing(arm(PAIR, (200.0, 200.0, 139.0, 139.0)), BASE, 0.0)
    assert not choice.beats(half, steady)
    assert choice.choose([steady, half]) == steady


def test_a_combination_slower_than_none_on_any_prompt_is_never_kept():
    mod = choice.standing(arm(MOD, (110.0, 110.0, 110.0, 110.0)), BASE, 0.0)
    pair = choice.standing(arm(PAIR, (200.0, 200.0, 200.0, 90.0)), BASE, 0.0)
    assert choice.beats(pair, mod) and not choice.never_slower(pair)
    assert choice.choose([mod, pair]) == mod
    # 0.98× is within the 3 % floor: not slower.
    close = choice.standing(arm(PAIR, (200.0, 200.0, 200.0, 98.0)), BASE, 0.0)
    assert choice.never_slower(close) and choice.choose([mod, close]) == close


def test_a_simple_setup_needs_nothing_but_the_highest_geometric_mean():
    draft = choice.standing(arm(DRAFT4, (90.0, 90.0, 200.0, 200.0)), BASE, 0.0)  # 0.9× on two
    simple = choice.standing(arm(SIMPLE, (120.0, 120.0, 120.0, 120.0)), BASE, 0.0)
    assert draft.geomean == pytest.approx(math.sqrt(0.9 * 2.0))
    assert choice.choose([draft, simple]) == draft  # 1.34 against 1.2: neither is a form of the other
    assert choice.choose([]) is None


def test_an_ngram_type_with_state_is_held_to_ngram_simple():
    # A tie by kind of prompt: ngram-mod ahead by the geometric mean (√(1.3 × 1.09) = 1.19
    # against √1.3 = 1.14), each faster on half the prompts: ngram-mod does not beat it.
    mod = choice.standing(arm(MOD, (130.0, 130.0, 109.0, 109.0)), BASE, 0.0)
    simple = choice.standing(arm(SIMPLE, (100.0, 100.0, 130.0, 130.0)), BASE, 0.0)
    assert mod.geomean > simple.geomean and not choice.beats(mod, simple)
    assert choice.choose([mod, simple]) == simple
    # Ahead beyond the noise and faster on three of four: kept.
    ahead = choice.standing(arm(MOD, (130.0, 130.0, 135.0, 125.0)), BASE, 0.0)
    assert choice.beats(ahead, simple) and choice.choose([ahead, simple]) == ahead


def test_behind_is_beyond_both_errors_below():
    best = choice.standing(arm(MOD, (130.0, 130.0)), BASE, 0.0)
    near = choice.standing(arm(SIMPLE, (127.0, 127.0)), BASE, 0.0)
    far = choice.standing(arm(SIMPLE, (120.0, 120.0)), BASE, 0.0)
    # Both errors at the 3 % floor: 1.27 × (1 + 0.0424) = 1.324 ≥ 1.3; 1.2 × 1.0424 = 1.251 < 1.3.
    assert not choice.behind(near, best) and choice.behind(far, best)


def test_an_engine_setting_holds_when_faster_on_most_prompts_and_slower_on_none():
    assert choice.holds(choice.standing(arm(MOD, (110.0, 110.0, 110.0, 100.0)), BASE, 0.0))
    assert not choice.holds(choice.standing(arm(MOD, (110.0, 110.0, 100.0, 100.0)), BASE, 0.0))  # half
    assert not choice.holds(choice.standing(arm(MOD, (130.0, 130.0, 130.0, 90.0)), BASE, 0.0))  # 0.9× on one


def test_the_answer_length_comes_from_the_first_starts_noise():
    from draftwise.core.measuring import quick

    assert quick.FIRST_TOKENS == 64 and quick.TARGET_NOISE == 0.04
    # Eight prompts: the geometric mean's error is the prompts' noise over √8.
    assert quick.tokens_for(0.0, 8) == quick.tokens_for(0.11, 8) == 64  # 0.11 / √8 = 0.039
    assert quick.tokens_for(0.13, 8) == 96  # 0.046: 64 × (0.046 / 0.04)² = 84.5, in steps of 16
    assert quick.tokens_for(0.06, 1) == 128  # one prompt: 64 × 2.25 = 144, at most 128
    assert quick.tokens_for(0.5, 8) == quick.MAX_TOKENS == 128


def test_a_choice_among_some_is_still_held_to_every_simpler_form():
    mod = choice.standing(arm(MOD, (140.0, 140.0, 140.0, 140.0)), BASE, 0.0)
    pair = choice.standing(arm(PAIR, (143.0, 143.0, 143.0, 143.0)), BASE, 0.0)
    # ngram-mod left out of the running does not let the pair pass without beating it.
    assert choice.choose([mod, pair], among=[PAIR]) is None
    assert choice.choose([mod, pair], among=[MOD]) == mod


def test_a_longer_draft_slow_on_a_prompt_where_the_shorter_is_slow_too_is_still_kept():
    """The held-out bench's corpus run: draft-simple n-max 2 at 0.14× everywhere (an all-zero
    drafter), n-max 8 far ahead but slower than none on one prompt, as n-max 2 is there: n-max
    8 brought no new slowdown, so the rule does not fall back to n-max 2."""
    short = choice.standing(arm(DRAFT4, (14.0, 14.0, 14.0, 14.0)), BASE, 0.0)
    long_ = choice.standing(arm(Setup("draft-simple", n_max=8), (200.0, 200.0, 200.0, 80.0)), BASE, 0.0)
    assert not choice.never_slower(long_)
    assert choice.choose([short, long_]) == long_


def test_an_arm_over_some_prompts_is_rebuilt_from_their_requests_own_figures():
    """The settings stage of the quick measurement runs half the prompts and is set against
    none's arm over that half (quick._settings_half): writing and reading from those requests."""
    timed = (Timed(0, 0, 64.0, 1000.0, 100.0, 250.0), Timed(1, 0, 64.0, 500.0, 900.0, 1500.0),
             Timed(0, 0, 64.0, 800.0, 1.0, 5.0), Timed(1, 0, 64.0, 400.0, 1.0, 5.0))  # a second pass, cached
    per_request = tuple((t.prompt, k, t.n * 1000.0 / t.ms) for k, t in zip((0, 0, 1, 1), timed, strict=True))
    whole = Arm(NONE, 256.0, 2700.0, per_request, live_figures.Counters(), rounds=2, prompt_tokens=1002.0,
                prompt_ms=1760.0, prompt_rounds=((0, 1002.0 * 1000.0 / 1760.0),), timed=timed)
    first = whole.over({0})
    assert first.per_request == ((0, 0, 64.0), (0, 1, 80.0))
    assert first.tokens_per_s == pytest.approx(128.0 * 1000.0 / 1800.0)  # its two answers, not the four
    assert first.prompt_per_s == pytest.approx(101.0 * 1000.0 / 255.0)  # its reading: 100 and 1 tokens
    assert first.prompt_rounds == ((0, pytest.approx(101.0 * 1000.0 / 255.0)),)
    assert first.rounds == 2 and first.over({0}) == first
    assert whole.over({0, 1}).tokens_per_s == pytest.approx(whole.tokens_per_s)


def test_a_lead_made_of_gains_on_some_prompts_and_losses_on_others_is_within_the_prompts_noise():
    simple = choice.standing(arm(SIMPLE, (100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0)), BASE8, 0.0)
    # 1.5× on three prompts, 1.02× on two, 0.8× on three: geometric mean 1.076, faster on five of
    # eight, but the log ratios' sample deviation is 0.293 and their mean's error 0.104:
    # 1.076 × (1 − 0.104) < 1. Other prompts of these kinds could rank them the other way.
    uneven = choice.standing(arm(MOD, (150.0, 150.0, 150.0, 102.0, 102.0, 80.0, 80.0, 80.0)), BASE8, 0.0)
    assert choice.faster_on_most(uneven, simple) and uneven.geomean == pytest.approx(1.076, abs=0.001)
    assert choice.across_prompts(uneven.speedups, simple.speedups) == pytest.approx(0.1035, abs=0.0005)
    assert not choice.beats(uneven, simple) and choice.choose([uneven, simple]) == simple
    # The same geometric mean on every prompt alike: beyond the noise, kept.
    even = choice.standing(arm(MOD, (107.6,) * 8), BASE8, 0.0)
    assert choice.across_prompts(even.speedups, simple.speedups) == pytest.approx(0.0)
    assert choice.beats(even, simple) and choice.choose([even, simple]) == even
    # More rounds settle the rounds' noise, never the prompts': a lead within the prompts'
    # spread gets none; the even lead, had each prompt strayed ±25 % between rounds, would.
    assert not choice.rounds_may_settle(uneven, simple)
    noisy = choice.Standing(MOD, even.speedups, (0.25,) * 8)
    assert not choice.beats(noisy, simple) and choice.rounds_may_settle(noisy, simple)
