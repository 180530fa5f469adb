"""Speed measurements: the decision logic on recorded figures, the record file, the live
figures' parsing and the break-even. No engine here (see test_measure_engine.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from draftwise.core.measurements import live_figures
from draftwise.core.measurements import measured as m

COMBO = m.Combination(model="/m/a.gguf|1|2", drafter="draft-simple|/m/a-draft.gguf|3|4",
                      engine="/e/llama-server|5|6", machine="linux|16|")


def figure(ratio: float, noise: float = 0.05, n_max: int | None = 4) -> m.Measurement:
    return m.Measurement(
        combination=COMBO, spec_type="draft-simple", what="the draft model a-draft.gguf",
        tokens_per_s_with=100.0 * ratio, tokens_per_s_without=100.0, noise=noise,
        acceptance=0.5, mean_length=2.0, n_max=n_max, n_max_flag="--spec-draft-n-max" if n_max else None,
        tried=((2, 90.0), (4, 100.0 * ratio)), tokens=128, prompts=3,
    )


# ------------------------------------------------------------------ decisions
def test_automatic_drafter_measured_slower_is_left_out_with_the_figure():
    use = m.decide(figure(0.83), automatic=True)
    assert not use.keep
    assert str(use.note) == "measured slower: 0.83× — started without the draft model a-draft.gguf"


def test_forced_drafter_measured_slower_stays_with_a_warning():
    use = m.decide(figure(0.83), automatic=False)
    assert use.keep
    assert use.lengths == (("--spec-draft-n-max", 4),)
    assert "0.83×" in str(use.warning) and "you chose it" in str(use.warning)


def test_slower_within_the_noise_is_not_slower():
    assert not figure(0.93, noise=0.10).slower  # 0.93 × 1.10 > 1
    assert figure(0.93, noise=0.05).slower
    # The floor: a run that reports no noise still is not called slower at 0.99.
    assert not figure(0.99, noise=0.0).slower
    assert m.decide(figure(0.93, noise=0.10), automatic=True).keep


def test_faster_passes_the_tuned_draft_length_unless_the_user_set_one():
    use = m.decide(figure(1.8), automatic=True)
    assert use.keep and use.lengths == (("--spec-draft-n-max", 4),)
    assert "1.80×" in str(use.note) and "draft length 4" in str(use.note)
    assert m.decide(figure(1.8), automatic=True, user_args=("--spec-draft-n-max",)).lengths == ()
    assert m.decide(figure(1.8, n_max=None), automatic=True).lengths == ()


def test_ratio_and_summary():
    f = figure(1.5)
    assert f.ratio == pytest.approx(1.5)
    assert "1.50×" in str(f.summary())
    assert replace(f, tokens_per_s_without=0.0).ratio == 0.0


# ------------------------------------------------------------------ break-even
def test_break_even_is_the_drafts_cost_plus_the_verify_overhead():
    # A free draft with free verification pays at any acceptance above zero.
    assert m.break_even_acceptance(0.0, 4) == 0.0
    # Each drafted token costing a fifth of a target token: 20 % must be accepted.
    assert m.break_even_acceptance(0.2, 4) == pytest.approx(0.2)
    # A verify pass costing 1.4 single passes over 4 drafted tokens adds 10 points.
    assert m.break_even_acceptance(0.2, 4, verify_cost=1.4) == pytest.approx(0.3)
    assert m.break_even_acceptance(3.0, 4) == 1.0  # can never pay
    assert m.draft_cost_from_sizes(100, 1000) == pytest.approx(0.1)


def test_cannot_pay_needs_enough_drafted_tokens_and_a_clear_shortfall():
    assert not m.cannot_pay(0.05, m.MIN_DRAFTED - 1, 0.3)  # too few tokens to tell
    assert m.cannot_pay(0.05, 1000, 0.3)
    assert not m.cannot_pay(0.28, 300, 0.3)  # within chance of break-even
    assert not m.cannot_pay(None, 1000, 0.3)
    assert "5 %" in str(m.cannot_pay_warning(0.05, 0.3))


def test_live_break_even_uses_the_launchs_draft_length():
    assert live_figures.n_max_of("draft-simple", ()) == 3  # the engine's default
    assert live_figures.n_max_of("draft-simple", (("--spec-draft-n-max", 8),)) == 8
    assert live_figures.n_max_of("ngram-mod", ()) == 64
    # ngram drafting is free, yet a verify pass is not: a zero acceptance never pays.
    assert live_figures.break_even_for("ngram-mod", (), 0.0) > 0.0


# ------------------------------------------------------------------ the record
def test_record_round_trip_forget_and_atomic_file(tmp_path: Path):
    records = m.MeasuredRecords(tmp_path / m.FILE_NAME)
    assert records.get(COMBO) is None
    records.record(figure(0.83))
    records.record(figure(1.2))  # the same combination: replaced, not added
    assert len(records.entries()) == 1
    got = records.get(COMBO)
    assert got is not None and got.ratio == pytest.approx(1.2) and got.tried == ((2, 90.0), (4, 120.0))
    data = json.loads((tmp_path / m.FILE_NAME).read_text())
    assert data["version"] == m.VERSION
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind
    other = replace(COMBO, engine="/e/other|1|1")
    records.record(replace(figure(2.0), combination=other))
    assert records.get(other) is not None and records.get(COMBO) is not None
    assert records.forget(combination=other) == 1
    assert records.forget(model="/m/a.gguf") == 1
    assert records.entries() == []


def test_corrupt_record_is_set_aside_and_reported(tmp_path: Path):
    path = tmp_path / m.FILE_NAME
    path.write_text("{not json")
    records = m.MeasuredRecords(path)
    assert records.entries() == []
    assert records.problem and "set aside" in records.problem
    assert not path.exists()
    assert len(list(tmp_path.glob(f"{m.FILE_NAME}.corrupt-*"))) == 1
    # (A newer version's file is left alone instead: tests/test_records.py.)
    records.record(figure(1.1))
    assert m.MeasuredRecords(path).get(COMBO) is not None


# ------------------------------------------------------------------ live figures
METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 72
llamacpp:tokens_predicted_total 256
llamacpp:tokens_predicted_seconds_total 3.2
llamacpp:spec_decode_num_draft_tokens_total 400
llamacpp:spec_decode_num_accepted_tokens_total 100
llamacpp:spec_decode_num_drafts_total 50
llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position="0"} 40
"""


def test_metrics_give_acceptance_mean_length_and_speed():
    f = live_figures.Figures.from_counters(live_figures.Counters.from_metrics(METRICS))
    assert f.acceptance == pytest.approx(0.25)
    assert f.mean_length == pytest.approx(3.0)  # 1 + 100 / 50, the engine's definition
    assert f.tokens_per_second == pytest.approx(80.0)
    assert str(f.text()) == "drafting: acceptance 25 % · mean accepted length 3.00 · 80.0 tokens/s"
    empty = live_figures.Figures.from_counters(live_figures.Counters())
    assert (empty.acceptance, empty.mean_length, empty.tokens_per_second) == (None, None, None)


def test_acceptance_line_as_the_engine_prints_it():
    line = ("slot print_timing: id  0 | task 5 | draft acceptance = 0.78125 (   25 accepted /    32 generated),"
            " mean len =  2.56")
    got = live_figures.parse_acceptance_line(line)
    assert got == live_figures.AcceptanceLine(0.78125, 25, 32, 2.56)
    assert live_figures.parse_acceptance_line("slot print_timing: eval time = 1 ms") is None


def test_slots_tell_whether_speculation_initialised():
    assert live_figures.slots_speculative(b'[{"id":0,"speculative":true}]') is True
    assert live_figures.slots_speculative(b'[{"id":0,"speculative":false},{"id":1,"speculative":false}]') is False
    assert live_figures.slots_speculative(b'{"error":"disabled"}') is None
    assert live_figures.slots_speculative(b"not json") is None


def test_watch_warns_once_about_a_dropped_drafter_and_about_drafting_that_cannot_pay():
    watch = live_figures.Watch(speculating=True, what="the draft model d.gguf", break_even=0.5)
    warning = watch.slots(b'[{"id":0,"speculative":false}]')
    assert warning is not None and "d.gguf" in str(warning)
    assert watch.dropped
    assert watch.slots(b'[{"id":0,"speculative":false}]') is None  # said once
    changed, low = watch.metrics(METRICS)  # 25 % of 400 drafted, break-even 50 %
    assert changed and low is not None and "25 %" in str(low)
    assert watch.metrics(METRICS) == (False, None)
    # With a measurement on record, the measurement decides, not the live figures.
    measured_watch = live_figures.Watch(speculating=True, what="x", break_even=0.5, measured=True)
    assert measured_watch.metrics(METRICS)[1] is None
    plain = live_figures.Watch(speculating=False, what="x", break_even=None)
    assert plain.slots(b'[{"id":0,"speculative":false}]') is None


# ------------------------------------------------------------------ counters that do not round
def _metrics(predicted: float, drafted: float = 0.0) -> str:
    """/metrics as the engine prints it: a default C++ stream, 6 significant digits."""
    return (f"llamacpp:tokens_predicted_total {predicted:.6g}\n"
            f"llamacpp:tokens_predicted_seconds_total {61728.4:.6g}\n"
            f"llamacpp:spec_decode_num_draft_tokens_total {drafted:.6g}\n")


def test_metrics_totals_round_past_a_million_so_a_short_request_does_not_move_them():
    assert _metrics(1_234_567) == _metrics(1_234_569)  # a 2-token request: the same text
    assert not live_figures.Counters.from_metrics(_metrics(1_234_567)).exact
    assert live_figures.Counters.from_metrics(_metrics(999_999)).exact


def test_the_watch_sees_a_finished_request_from_the_engine_line_where_the_totals_stall():
    w = live_figures.Watch(speculating=True, what="the draft model", break_even=None)
    w.metrics(_metrics(1_234_567))
    changed, _ = w.metrics(_metrics(1_234_569))
    assert not changed  # nothing said, nothing new
    w.lines(["srv  log: slot print_timing: id  0 | task 7 | prompt eval time =   10.00 ms /     3 tokens",
             "slot print_timing: id  0 | task 7 |        eval time =      80.00 ms /     2 tokens (   40.00 ms "
             "per token,    25.00 tokens per second)"])
    assert w.requests == 1
    changed, _ = w.metrics(_metrics(1_234_569))
    assert changed
    assert not w.metrics(_metrics(1_234_569))[0]


def test_per_request_timings_are_the_exact_counts():
    t = {"predicted_n": 24, "predicted_ms": 1235.356, "draft_n": 17, "draft_n_accepted": 15, "cache_n": 0}
    c = live_figures.Counters.from_timings(t)
    assert (c.drafted, c.accepted, c.drafts, c.predicted) == (17, 15, 0, 24)
    assert c.predicted_seconds == pytest.approx(1.235356)
    assert live_figures.Counters.from_timings({"predicted_n": 3}).drafted == 0
    two = c.plus(live_figures.Counters.from_timings(t))
    assert (two.drafted, two.accepted) == (34, 30)
    assert live_figures.parse_eval_line("prompt eval time =  10.00 ms /  3 tokens") is None
    assert live_figures.parse_eval_line("       eval time =   80.50 ms /    2 tokens (...)") == (2, 80.5)
