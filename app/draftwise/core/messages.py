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

import re
import string
import sys
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
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


# ------------------------------------------------------------------ messages kept in files
def to_data(text: Any) -> Any:
    """A message as JSON data (`{"template": …, "args": {…}}`, nested messages too; a clause
    says so), so a record can store the sentence and show it translated later. Numbers,
    strings and None stay as they are; anything else becomes its text."""
    if isinstance(text, Message):
        data: dict[str, Any] = {"template": text.template, "args": {k: to_data(v) for k, v in text.args}}
        if isinstance(text, _Clause):
            data["clause"] = True
        return data
    if text is None or isinstance(text, (str, int, float, bool)):
        return text
    return str(text)


def from_data(data: Any) -> Any:
    """What `to_data` wrote, back: a message for a template object, else the value. Raises
    ValueError for an object that is not a message (the record holding it is damaged)."""
    if isinstance(data, dict):
        template, args = data.get("template"), data.get("args", {})
        if not isinstance(template, str) or not isinstance(args, dict):
            raise ValueError("a stored sentence has no template")
        m = Message(template, tuple((str(k), from_data(v)) for k, v in args.items()))
        try:
            str(m)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"a stored sentence does not fill its template: {template!r}") from exc
        return _Clause(m.template, m.args) if data.get("clause") else m
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    raise ValueError(f"a stored sentence is neither text nor a template: {data!r}")


# Modules whose sentences an earlier Draftwise stored in records as English text (the engine
# fix's reason, a crash cause, a ladder step). Each names itself with `stored_in_records`.
_STORED: list[str] = []


def stored_in_records(module_name: str) -> None:
    """Declare that this module's sentences were kept in records as English before records
    kept templates, so `from_english` can give them back as messages (translated at the edge)."""
    if module_name not in _STORED:
        _STORED.append(module_name)


def from_english(text: str, depth: int = 3) -> Text:
    """A stored English sentence as the message it was rendered from, when one of the
    templates of the modules named by `stored_in_records` gives exactly this text (its
    arguments recognised the same way, `depth` levels down); otherwise the text as it is.
    `str()` of the answer is always `text`."""
    best: tuple[int, Message] | None = None
    for template, pattern, literal in _patterns(tuple(_STORED)):
        hit = pattern.fullmatch(text)
        if hit is None or (best is not None and best[0] >= literal):
            continue
        args = {k: (from_english(v, depth - 1) if depth > 1 else v) for k, v in hit.groupdict().items()}
        m = Message(template, tuple(args.items()))
        if str(m) == text:
            best = (literal, m)
    return best[1] if best is not None else text


@lru_cache(maxsize=8)
def _patterns(names: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str], int], ...]:
    """(template, a regex matching its renderings, how many letters its fixed words hold),
    for each template in the code of `names` that can be matched: named fields only (or
    none), no conversions or format specs, and at least one fixed word (a bare `{a} {b}`
    proves nothing)."""
    out = []
    for template in sorted({t for name in names for t in _strings_of(sys.modules.get(name))}):
        try:
            parts = list(string.Formatter().parse(template))
        except ValueError:
            continue
        fields = [f for _lit, f, _spec, _conv in parts if f is not None]
        if any(not f.isidentifier() for f in fields) or len(set(fields)) != len(fields) \
                or any(spec or conv for _lit, f, spec, conv in parts if f is not None):
            continue
        literal = sum(ch.isalpha() for lit, *_ in parts for ch in lit)
        if literal < 3:
            continue
        regex = "".join(re.escape(lit) + (f"(?P<{f}>.*?)" if f is not None else "") for lit, f, _s, _c in parts)
        out.append((template, re.compile(regex, re.DOTALL), literal))
    return tuple(out)


def _strings_of(module: types.ModuleType | None) -> set[str]:
    """The string constants of a module's code (functions, methods, nested code) and its
    messages: where its `msg("…")` templates are, in source or frozen bytecode alike."""
    if module is None:
        return set()
    found: set[str] = set()
    seen: set[int] = set()

    def code(c: types.CodeType) -> None:
        if id(c) in seen:
            return
        seen.add(id(c))
        for k in c.co_consts:
            if isinstance(k, str):
                found.add(k)
            elif isinstance(k, types.CodeType):
                code(k)

    def value(v: Any, depth: int = 0) -> None:
        if isinstance(v, Message):
            found.add(v.template)
        elif isinstance(v, (staticmethod, classmethod)):
            value(v.__func__, depth)
        elif isinstance(v, property):
            for f in (v.fget, v.fset, v.fdel):
                value(f, depth)
        elif isinstance(v, types.FunctionType) and v.__module__ == module.__name__:
            code(v.__code__)
        elif isinstance(v, type) and v.__module__ == module.__name__ and depth < 2:
            for item in vars(v).values():
                value(item, depth + 1)

    for v in vars(module).values():
        value(v)
    return found
