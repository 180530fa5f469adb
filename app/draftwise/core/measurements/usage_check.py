"""Whether the user's own requests call for measuring again, on their prompts.

A measurement ran fixed prompts (chat, code, rewriting); the user's work may favour another
setup: n-gram drafting pays on text that repeats its input and not on fresh code. The live
figures of the setup kept (core/measurements/usage.py) are compared with what the other
setups of the measurement reached. `should_remeasure` says why to measure again, or None:

- a measurement of this combination exists (it names the other setups and their figures);
- at least `MIN_REQUESTS` real requests of the kept setup were seen, and `MIN_PROMPTS` of the
  user's prompts are kept to measure on;
- the kept setup's tokens/s on those requests is below another measured setup's beyond the
  noise — the measurement's own (the error of its two means, at least
  `measurement.NOISE_FLOOR`) plus the requests' (their spread over √n: real requests vary far
  more than one prompt between rounds) — or, for a setup that drafts, its acceptance on them
  is `ACCEPTANCE_DROP` below the measured one after `measured.MIN_DRAFTED` drafted tokens
  (the traffic is unlike the prompts it was measured on); or, for a setup with no n-gram type
  while the measurement ran some, the user's prompts repeat themselves (`repetition`: at least
  `REPEATS` of their words follow a phrase seen before them with the same word) — what n-gram
  drafting predicts, and what the speed of a setup that does not draft from it cannot show;
- the model was not measured again in the last `ONCE_PER_S` (a day);
- the machine is idle (the caller's probe: core/machine/idle.py) and the engine serves no
  request (the caller measures before starting it).

Pure: the caller reads the records, the clock and the probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from draftwise.core.measurements import measured
from draftwise.core.measurements.measurement import NOISE_FLOOR, Measurement
from draftwise.core.measurements.usage import Usage
from draftwise.core.messages import Message, msg
from draftwise.core.speculation import setup as setup_mod
from draftwise.core.speculation.setup import Setup

MIN_REQUESTS = 5
MIN_PROMPTS = 2
ONCE_PER_S = 24 * 3600.0
# Acceptance this much below the measured one (absolute) says the traffic drafts differently.
ACCEPTANCE_DROP = 0.2
# The share of words an n-gram predictor gets right above which the prompts call for n-gram
# drafting (on the real Gemma 3 270M n-gram paid on the rewrite prompt, which repeats its
# source text, and not on code: docs/measure.md).
REPEATS = 0.3
# The phrase length the word predictor matches (ngram-mod hashes a few tokens before; a word
# is one to three tokens).
PHRASE_WORDS = 3
# The most setups measured again beside the kept one and none: each costs an engine start a round.
MAX_RIVALS = 2


@dataclass(frozen=True)
class Trigger:
    """Why to measure again, and which setups: the kept one, its rivals and none."""

    kept: Setup
    rivals: tuple[Setup, ...]
    reason: Message


def measured_table(m: Measurement) -> dict[Setup, float]:
    """Every setup the measurement ran (none too) with its tokens/s."""
    table = {setup_mod.NONE: m.tokens_per_s_without}
    for s, tps in m.others:
        table.setdefault(s, tps)
    if m.setup is not None:
        table[m.setup] = m.tokens_per_s_with
    return table


def repetition(text: str) -> float:
    """The share of a text's words that a word n-gram predictor (the word that followed the
    same PHRASE_WORDS words last time) gets right: how much n-gram drafting has to draft."""
    words = text.split()
    if len(words) <= PHRASE_WORDS:
        return 0.0
    last: dict[tuple[str, ...], str] = {}
    hits = 0
    for i in range(PHRASE_WORDS, len(words)):
        phrase = tuple(words[i - PHRASE_WORDS:i])
        hits += last.get(phrase) == words[i]
        last[phrase] = words[i]
    return hits / (len(words) - PHRASE_WORDS)


def should_remeasure(usage: Usage | None, m: Measurement | None, *, prompts: Sequence[str], last: float | None,
                     now: float, idle: bool) -> Trigger | None:
    if m is None or usage is None or len(usage.requests) < MIN_REQUESTS or len(prompts) < MIN_PROMPTS:
        return None
    if last is not None and now - last < ONCE_PER_S:
        return None
    if not idle:
        return None
    live = usage.tokens_per_s
    if live is None:
        return None
    kept = usage.key.setup
    table = measured_table(m)
    rivals = sorted(((s, tps) for s, tps in table.items() if s != kept and s.speculates),
                    key=lambda st: -st[1])[:MAX_RIVALS]
    if not rivals:
        return None
    bound = max(m.noise, NOISE_FLOOR) + usage.error()
    best, best_tps = rivals[0]
    names = tuple(s for s, _ in rivals)
    if live < best_tps * (1.0 - bound):
        return Trigger(kept, names, msg(
            "{kept} ran {live} tokens/s on your last {n} requests; {other} reached {tps} when measured",
            kept=kept.label(), live=f"{live:.1f}", n=len(usage.requests), other=best.label(), tps=f"{best_tps:.1f}"))
    acceptance, was = usage.acceptance, m.acceptance if kept == m.setup else None
    if (acceptance is not None and was is not None and usage.drafted >= measured.MIN_DRAFTED
            and acceptance < was - ACCEPTANCE_DROP):
        return Trigger(kept, names, msg(
            "{kept} accepted {pct} % of its drafts on your last {n} requests, {was} % when measured",
            kept=kept.label(), pct=f"{acceptance * 100:.0f}", n=len(usage.requests), was=f"{was * 100:.0f}"))
    repeats = sum(repetition(p) for p in prompts) / len(prompts)
    ngram = tuple(s for s in names if s.ngram is not None)
    if kept.ngram is None and ngram and repeats >= REPEATS:
        return Trigger(kept, names, msg(
            "your prompts repeat themselves ({pct} % of their words follow a phrase seen before), which n-gram "
            "drafting predicts, and {kept} drafts none of it", pct=f"{repeats * 100:.0f}", kept=kept.label()))
    return None
