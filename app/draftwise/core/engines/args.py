"""How llama-server reads its command line, so our checks read it the same way.

The pinned engine (common/arg.cpp) turns `_` into `-` in long option names, so
`--api_key` is `--api-key`; and it does not split `--flag=value`: that token is an invalid
argument. Every check of the user's extra arguments goes through `flag_name`, and every
argv we build goes through `engine_form`.
"""

from __future__ import annotations

from collections.abc import Sequence


def flag_name(token: str) -> str:
    """The option a token names, as the engine understands it ("" for a plain value)."""
    if token.startswith("--"):
        return token.split("=", 1)[0].replace("_", "-")
    if token.startswith("-") and len(token) > 1 and not token[1].isdigit():
        return token
    return ""


def value_of(args: Sequence[str], *names: str) -> str | None:
    """The value given to any of `names` (`--x v` or `--x=v`); "" when it has none; None
    when the option is absent."""
    for i, token in enumerate(args):
        if flag_name(token) in names:
            if token.startswith("--") and "=" in token:
                return token.split("=", 1)[1]
            return args[i + 1] if i + 1 < len(args) else ""
    return None


def sets(args: Sequence[str], *names: str) -> bool:
    return any(flag_name(t) in names for t in args)


def engine_form(args: Sequence[str]) -> list[str]:
    """`--flag=value` split into `--flag value`, which is the only form the engine takes."""
    out: list[str] = []
    for token in args:
        if token.startswith("--") and "=" in token:
            name, value = token.split("=", 1)
            out += [name, value]
        else:
            out.append(token)
    return out
