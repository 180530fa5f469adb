"""The ready-to-paste lines for a served address: Claude Code, an OpenAI-compatible client
and curl. One place for them: `draftwise serve` prints them and the window's "Serve my
models" card shows them with a Copy button each.

Claude Code reads `ANTHROPIC_BASE_URL` and sends `ANTHROPIC_AUTH_TOKEN` as
`Authorization: Bearer`, which the engine checks against `--api-key` (the same port serves
`/v1/messages`); OpenAI clients take the base URL with `/v1` and the key.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass

CLAUDE_CODE, OPENAI, CURL = "Claude Code", "OpenAI-compatible", "curl"


@dataclass(frozen=True)
class CopyLine:
    client: str  # one of the names above (program names: not translated)
    text: str  # what to paste


def copy_lines(url: str, key_shown: str, model_id: str) -> tuple[CopyLine, ...]:
    """The lines for `model_id` at `url` with the key as shown (the key itself, or
    `$DRAFTWISE_API_KEY` when the user set it in the environment)."""
    body = json.dumps({"model": model_id, "messages": [{"role": "user", "content": "Hello"}]})
    return (
        CopyLine(CLAUDE_CODE, f"ANTHROPIC_BASE_URL={url} ANTHROPIC_AUTH_TOKEN={key_shown} claude --model "
                              f"{shlex.quote(model_id)}"),
        CopyLine(OPENAI, f"base URL {url}/v1  key {key_shown}"),
        CopyLine(CURL, f"curl {url}/v1/chat/completions -H 'Authorization: Bearer {key_shown}' "
                       f"-H 'Content-Type: application/json' -d '{body}'"),
    )
