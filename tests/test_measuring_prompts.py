"""The measurement's prompts as sent (core/measuring/prompts.py `rendered`): a chat body goes
through the model's own template; an agent's tools that the template drops travel in its
system message. The template here is a stand-in function with ChatML's shape, the engine's
fallback for a file without one (the real Gemma 3 270M's); tests/test_chat_engine.py asks the
real engine's /apply-template."""

from __future__ import annotations

import json

from draftwise.core.measuring import prompt_pool, prompts


def chatml(body) -> str:
    """ChatML without tools, as the engine's fallback template renders a body."""
    return "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in body["messages"]) + \
        "<|im_start|>assistant\n"


def test_a_chat_without_tools_is_the_templates_own_text():
    body = {"messages": [{"role": "user", "content": "Hello"}]}
    assert prompts.rendered(body, chatml) == "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n"


def test_tools_a_template_drops_go_into_the_system_message_as_one_line_of_json():
    agent = dict(prompt_pool.MEASURED)["agent"]
    text = prompts.rendered(agent, chatml)
    listing = "\n\nTools you can call, as JSON:\n" + json.dumps(agent["tools"])
    system = agent["messages"][0]
    assert system["role"] == "system"
    assert text.startswith(f"<|im_start|>system\n{system['content']}{listing}<|im_end|>\n")
    assert "\n " not in json.dumps(agent["tools"])  # one line: no indentation to read


def test_tools_the_template_renders_are_not_added_again():
    agent = dict(prompt_pool.MEASURED)["agent"]

    def with_tools(body) -> str:
        return chatml(body) + json.dumps(body.get("tools", []))

    assert prompts.rendered(agent, with_tools) == with_tools(agent)
