"""The router's preset file: one section per model, holding exactly the argv `plan` gives it.

The pinned engine's router (`llama-server --models-preset FILE`, tools/server/server-models.cpp)
reads an INI file (common/preset.cpp): `[name]` then `key = value`, a key being any spelling
of an option without its dashes; a switch takes `true`. It renders each section back into the
instance's argv itself, adding `--host`, `--port` and `--alias` and dropping the key, and lays
the router's own command-line options over every section. So a section is the launch
session's command for that file less what the router owns (host, port, key) — written from
the options `llamacpp.build_options` made (`LaunchSpec.options`, the data its argv was
rendered from), never assembled again here, and never read back from the argv.

Two limits of that format, from the same parser: an option holds one value per section (a
second `-l` replaces the first), and `;` or `#` starts a comment wherever it stands.
`section` refuses such a command with PresetError; the caller decides what runs instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from draftwise.core.engines import args as engine_args

# What the router sets on each instance itself, or keeps for itself (server-models.cpp
# `unset_reserved_args`, `update_args`): never in a section.
ROUTER_OWNED = frozenset({"--host", "--port", "--api-key", "--api-key-file", "--alias", "--models-preset",
                          "--models-dir", "--models-max", "--models-autoload", "--no-models-autoload",
                          "--ssl-key-file", "--ssl-cert-file"})
SWITCH_VALUE = "true"  # how a switch is written (common_arg_utils::is_truthy)
_COMMENT = re.compile(r"[;#\r\n]")


class PresetError(ValueError):
    """An argv the preset format cannot hold as it is: `option` says which."""

    def __init__(self, option: str, why: str) -> None:
        super().__init__(f"{option}: {why}")
        self.option = option


@dataclass(frozen=True)
class Section:
    """One model's section: its id and its options in argv order, `(key, value)`."""

    name: str
    options: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        return dict(self.options)


def key_of(name: str) -> str:
    """The INI key of an option: its canonical name (`Option.name`) without the dashes."""
    return name.lstrip("-")


def section(name: str, options: Sequence[engine_args.Option]) -> Section:
    """The section for an instance started with `options` (`LaunchSpec.options`): every option
    in order, less the router's (a plain value the user gave with no option is no key). PresetError
    for an option given twice or a value the file cannot hold."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for o in options:
        if not o.name or o.name in ROUTER_OWNED:
            continue
        key = key_of(o.name)
        if key in seen:
            raise PresetError(o.name, "given more than once; a preset section holds one value per option")
        seen.add(key)
        text = SWITCH_VALUE if o.value is None else o.value
        if _COMMENT.search(text) or text != text.strip():
            raise PresetError(o.name, f"its value {text!r} cannot be written in a preset file")
        out.append((key, text))
    return Section(name, tuple(out))


HEADER = ("; Written by `draftwise serve` from each model's plan; written again at each start.\n"
          "; One section per model: what `draftwise plan MODEL` runs, less host, port and key.\n")


def render(sections: Iterable[Section]) -> str:
    parts = [HEADER, "version = 1\n"]
    for s in sections:
        parts.append(f"\n[{s.name}]\n")
        parts += [f"{k} = {v}\n" for k, v in s.options]
    return "".join(parts)


_HEADER_LINE = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]\s*(?:[;#].*)?$")
_KV_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*(?:[;#].*)?$")


def parse(text: str) -> dict[str, dict[str, str]]:
    """The sections of a preset file as the engine's parser reads them (common/preset.cpp:
    a later key replaces an earlier one; keys before the first header are the `default`
    section's)."""
    out: dict[str, dict[str, str]] = {}
    current = "default"
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        head = _HEADER_LINE.match(line)
        if head:
            current = head.group(1)
            out[current] = {}
            continue
        kv = _KV_LINE.match(line)
        if kv:
            out.setdefault(current, {})[kv.group(1)] = kv.group(2)
    return out
