"""Sentences as data: a template and its arguments, translated at the edge.

Core speaks to people (resolver notes, plan reasons, crash causes) but must not know their
language. So it returns `Message` objects: an English template with `{name}` fields and the
values for them. `str(message)` gives the English sentence, so logs, the CLI and JSON output
read as before. The window looks the *template* up in its translation catalog and formats the
translated template with the same arguments (arguments that are messages themselves are
translated too), so a wording change in core can never silently stop a translation from
matching: the catalog test finds every `msg("…")` template in the code and asks for an entry.

Write templates as string literals directly inside `msg(...)`: the coverage test reads them
from the source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Message:
    """One sentence: `template.format(**args)` in English, translatable as a whole."""

    template: str
    args: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.render(lambda template: template)

    def render(self, translate: Callable[[str], str]) -> str:
        """The sentence with `translate` applied to this template and to nested messages."""
        values = {k: (v.render(translate) if isinstance(v, Message) else v) for k, v in self.args}
        return translate(self.template).format(**values)

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.args)

    # Messages often stand where strings stood; these keep old call sites honest.
    def __contains__(self, part: str) -> bool:
        return part in str(self)

    def startswith(self, prefix: str) -> bool:
        return str(self).startswith(prefix)

    def to_json(self) -> str:
        return str(self)


def msg(template: str, **args: Any) -> Message:
    """A message; `template` must be a string literal (the catalog test reads it)."""
    return Message(template, tuple(args.items()))


@dataclass(frozen=True)
class _Clause(Message):
    """A sentence quoted inside another, without its full stop (in whatever language)."""

    def render(self, translate: Callable[[str], str]) -> str:
        return super().render(translate).rstrip(".。")


def clause(text: Message | str) -> Message | str:
    """`text` without its full stop, for use as a part of another sentence."""
    if isinstance(text, Message):
        return _Clause(text.template, text.args)
    return text.rstrip(".")


def render_text(text: Message | str, translate: Callable[[str], str]) -> str:
    """A message rendered with `translate`; a plain string as it is."""
    return text.render(translate) if isinstance(text, Message) else text


def join(messages: Iterable[Message | str], sep: str = " ") -> str:
    return sep.join(str(m) for m in messages)


Text = Message | str
"""What core hands out where a sentence goes: a message, or (for open-ended detail such as an
OS error or an engine log line) a plain string that is shown as it is."""
