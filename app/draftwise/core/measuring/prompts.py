"""What the arms ask the engine (core/measuring/arms.py): the prompts every start
generates from, the long prompt the settings stage times the engine's reading on, and the
request body that makes every arm and round do the same work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from draftwise.core.measuring import prompt_pool


@dataclass(frozen=True)
class Prompt:
    """One request a measurement sends: a chat body (`chat`: messages, and tools for an agent's
    request), rendered by the engine's own chat template before it is sent, or a `text` sent
    as it is (the user's own prompts, which the engine logged already rendered)."""

    kind: str
    text: str = ""
    chat: Mapping[str, Any] | None = field(default=None, compare=False)


def rendered(chat: Mapping[str, Any], apply: Callable[[Mapping[str, Any]], str]) -> str:
    """A chat body as the model's own chat template renders it (`apply`: the engine's
    /apply-template, what a chat request reaches the model as). A template that takes no tools
    drops them (the engine's ChatML fallback does); an agent's request then carries its tool
    definitions as JSON in its system message, as a client does for such a model, so the
    prompt keeps their size: one line, as templates write tools (Jinja's `tojson`)."""
    prompt = apply(chat)
    tools = chat.get("tools")
    if tools and json.dumps(tools[0]["function"]["description"])[1:-1] not in prompt:
        messages = [dict(m) for m in chat["messages"]]
        listing = "\n\nTools you can call, as JSON:\n" + json.dumps(tools)
        if messages and messages[0].get("role") == "system":
            messages[0]["content"] = str(messages[0]["content"]) + listing
        else:
            messages.insert(0, {"role": "system", "content": listing.strip()})
        prompt = apply({"messages": messages})
    return prompt


def built_in(pool: tuple[tuple[str, Mapping[str, Any]], ...]) -> tuple[Prompt, ...]:
    return tuple(Prompt(kind, chat=body) for kind, body in pool)


# The requests every measurement runs (core/measuring/prompt_pool.py): eight kinds of work,
# through the model's chat template.
PROMPTS: tuple[Prompt, ...] = built_in(prompt_pool.MEASURED)

# The prompt the settings stage times prompt processing on (core/measuring/tuning.py):
# `LONG_PROMPT_TOKENS` tokens, past the largest prompt batch it tries (-ub 1024), so a batch
# size shows in it, cut from this text by the engine's own tokenizer (/tokenize) to what the
# plan's context holds. Gemma 3's tokenizer reads the text as 1,169 tokens; a byte-level one
# as many more.
LONG_PROMPT = "\n\n".join(f"Note {i + 1}. {prompt_pool.NOTE}" for i in range(24))
LONG_PROMPT_TOKENS = 1100
# The longest answer a measurement asks for (quick.MAX_TOKENS, the sweep's 128): a prompt is
# cut to leave it room in the slot.
MAX_ANSWER = 256


def long_prompt_length(ctx: int) -> int:
    """The long prompt's tokens in a slot of `ctx` (room left for the answer's token)."""
    return max(16, min(LONG_PROMPT_TOKENS, ctx - 64))


def body(prompt: str | list[int], tokens: int) -> dict[str, Any]:
    """Greedy, a fixed count: the end-of-text token is ignored, the prompt not cached between
    rounds, so every arm and round does the same work."""
    return {"prompt": prompt, "n_predict": tokens, "temperature": 0, "top_k": 1, "ignore_eos": True,
            "cache_prompt": False, "seed": 0}
