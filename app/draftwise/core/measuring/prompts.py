"""What the arms ask the engine (core/measuring/arms.py): the prompts every start
generates from, the long prompt the settings stage times the engine's reading on, and the
request body that makes every arm and round do the same work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Prompt:
    kind: str
    text: str


# A few kinds of work a user gives a model: drafting pays differently on each (code and
# rewriting repeat their input more than chat does).
PROMPTS: tuple[Prompt, ...] = (
    Prompt("chat", "User: What should I pack for a three-day hiking trip in the mountains in autumn?\n"
                   "Assistant:"),
    Prompt("code", "# Python\n# A function that returns the n-th Fibonacci number, iteratively, with a docstring.\n"
                   "def fibonacci(n: int) -> int:\n"),
    Prompt("rewrite", "Rewrite the following text in plain, friendly words, keeping every fact.\n\n"
                      "Text: The quarterly meeting has been rescheduled to Thursday at 10:00 owing to the "
                      "unavailability of the main conference room. Attendees are requested to confirm "
                      "their participation by Wednesday noon and to bring the revised budget figures.\n\n"
                      "Rewritten:"),
)

# The prompt the settings stage times prompt processing on (core/measuring/tuning.py):
# `LONG_PROMPT_TOKENS` tokens, past the largest prompt batch it tries (-ub 1024), so a batch
# size shows in it, cut from this text by the engine's own tokenizer (/tokenize) to what the
# plan's context holds. Gemma 3's tokenizer reads the text as 1,169 tokens; a byte-level one
# as many more.
LONG_PROMPT = "\n\n".join(f"Note {i + 1}. {PROMPTS[2].text.split('Text: ', 1)[1].split(chr(10), 1)[0]}"
                          for i in range(24))
LONG_PROMPT_TOKENS = 1100


def long_prompt_length(ctx: int) -> int:
    """The long prompt's tokens in a slot of `ctx` (room left for the answer's token)."""
    return max(16, min(LONG_PROMPT_TOKENS, ctx - 64))


def body(prompt: str | list[int], tokens: int) -> dict[str, Any]:
    """Greedy, a fixed count: the end-of-text token is ignored, the prompt not cached between
    rounds, so every arm and round does the same work."""
    return {"prompt": prompt, "n_predict": tokens, "temperature": 0, "top_k": 1, "ignore_eos": True,
            "cache_prompt": False, "seed": 0}
