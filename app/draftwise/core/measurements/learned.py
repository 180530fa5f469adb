"""What a measurement on the user's own prompts found, kept in the measurement it made.

Learning from use (core/measurements/usage_check.py, core/measuring/learn.py) measures the
kept setup again beside the setups that may beat it, on prompts drawn from the user's requests.
Its measurement is recorded like any other (measured.py), with this beside it: which setup ran
before, its speed-up on those prompts, and why it was measured again, so the next plan can say
why it switched ("ngram-mod 32 is faster on your requests: 1.31× vs 1.12×").

Its own module, below measurement.py, so that the record reads it without importing the runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from draftwise.core.messages import Message, msg


@dataclass(frozen=True)
class Learned:
    before: str  # the setup that ran before, as Setup.label() writes it ("no speculation" for none)
    before_ratio: float  # its speed-up over none on the user's prompts
    prompts: int  # how many of the user's prompts were measured
    requests: int  # real requests seen before it was measured again
    when: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"before": self.before, "before_ratio": self.before_ratio, "prompts": self.prompts,
                "requests": self.requests, "when": self.when}

    @classmethod
    def from_json(cls, data: Any) -> Learned:
        if not isinstance(data, dict):
            raise ValueError("learned is not an object")
        return cls(before=str(data["before"]), before_ratio=float(data["before_ratio"]),
                   prompts=int(data.get("prompts", 0)), requests=int(data.get("requests", 0)),
                   when=str(data.get("when", "")))


def switched_words(setup_label: str, ratio: float, learned: Learned) -> Message:
    """The plan's reason after a measurement on the user's prompts: the setup kept now against
    the one before, each as a speed-up over none on those prompts."""
    if setup_label == learned.before:
        # The rule keeps it on a tie too (nothing beat it beyond the noise), so not "the fastest".
        return msg("{setup} stays: nothing measured beat it beyond the noise on your requests ({ratio}×, "
                   "measured again on {n} of them)", setup=setup_label, ratio=f"{ratio:.2f}", n=learned.prompts)
    return msg("{setup} is faster on your requests: {ratio}× vs {before_ratio}× with {before}",
               setup=setup_label, ratio=f"{ratio:.2f}", before_ratio=f"{learned.before_ratio:.2f}",
               before=learned.before)


def stays_off_words(ratio: float, noise: float, learned: Learned) -> Message:
    """The plan's reason when n-gram drafting (a model with no drafter) was not faster than none
    beyond the noise on the user's prompts: it stays off."""
    return msg("n-gram speculation is not faster on your requests ({ratio}×, noise ±{noise} %; measured again on "
               "{n} of them), so it stays off", ratio=f"{ratio:.2f}", noise=f"{noise * 100:.0f}", n=learned.prompts)
