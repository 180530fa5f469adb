"""How llama-server reads its command line, so our checks read it the same way.

The pinned engine (common/arg.cpp `common_params_parse_ex`) turns `_` into `-` in long option
names, so `--api_key` is `--api-key`; and it does not split `--flag=value` (nor `-c=512`): that
token is an invalid argument. Every check of the user's extra arguments goes through
`flag_name` / `canonical`, and every argv we build goes through `engine_form`.

A launch's command is data: an ordered list of `Option`s (canonical name, value, spelling),
which `render` alone turns into argv. The readers here (`options`, `value_of`, `sets`,
`read_options`...) are for the user's extra arguments only; nothing in app/ reads back an
argv Draftwise rendered (tests/test_own_argv.py).

One option often has several spellings (`-c`, `--ctx-size`); `ALIASES` lists, for the options
Draftwise sets or checks, every spelling common/arg.cpp gives it (tests/test_launch_request.py
reads the pinned arg.cpp and checks this table against it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

# Every spelling of the options Draftwise sets itself, reads, or refuses; the first is the
# name used in messages. From common/arg.cpp `common_arg({...})` of the pinned engine.
ALIASES: tuple[tuple[str, ...], ...] = (
    ("--model", "-m"),
    ("--spec-draft-model", "-md", "--model-draft"),
    ("--host",),
    ("--port",),
    ("--api-key",),
    ("--ctx-size", "-c"),
    ("--parallel", "-np"),
    ("--cache-type-k", "-ctk"),
    ("--cache-type-v", "-ctv"),
    ("--flash-attn", "-fa"),
    ("--swa-full",),
    ("--n-gpu-layers", "-ngl", "--gpu-layers"),
    ("--tensor-split", "-ts"),
    ("--override-tensor", "-ot"),
    ("--cpu-moe", "-cmoe"),
    ("--n-cpu-ffn", "-ncffn"),
    ("--no-kv-offload", "-nkvo"),
    ("--kv-unified", "-kvu"),
    ("--n-cpu-moe", "-ncmoe"),
    ("--batch-size", "-b"),
    ("--ubatch-size", "-ub"),
    ("--fit", "-fit"),
    ("--fit-target", "-fitt"),
    ("--fit-ctx", "-fitc"),
    ("--fit-print", "-fitp"),
    ("--spec-draft-type-k", "-ctkd", "--cache-type-k-draft"),
    ("--spec-draft-type-v", "-ctvd", "--cache-type-v-draft"),
    ("--spec-draft-ngl", "-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft"),
    ("--spec-draft-device", "-devd", "--device-draft"),
    ("--rpc",),
    ("--verbosity", "-lv", "--log-verbosity"),
    ("--verbose", "-v", "--log-verbose"),
    ("--log-disable",),
    ("--logit-bias", "-l"),
    # Options that fetch a model (or its draft, or a projector) instead of the library's file.
    ("--hf-repo", "-hf", "-hfr"),
    ("--hf-file", "-hff"),
    ("--hf-token", "-hft"),
    ("--model-url", "-mu"),
    ("--docker-repo", "-dr"),
    ("--spec-draft-hf", "-hfd", "-hfrd", "--hf-repo-draft"),
    ("--mmproj-url", "-mmu"),
    # Placement the plan decides.
    ("--device", "-dev"),
    ("--split-mode", "-sm"),
    ("--main-gpu", "-mg"),
    ("--spec-draft-override-tensor", "-otd", "--override-tensor-draft"),
    ("--spec-draft-cpu-moe", "-cmoed", "--cpu-moe-draft"),
    ("--spec-draft-n-cpu-moe", "--spec-draft-ncmoe", "-ncmoed", "--n-cpu-moe-draft"),
    ("--kv-unified-per-slot",),
    # Speculation settings a measurement tunes.
    ("--spec-draft-p-min", "--draft-p-min"),
    # Where the engine writes each request's prompt (learning from use, with consent).
    ("--log-prompts-dir",),
)
_CANONICAL = {spelling: group[0] for group in ALIASES for spelling in group}
KNOWN = frozenset(group[0] for group in ALIASES)  # canonical names

# Options the engine adds up instead of replacing: given once per value (`-l 5-inf -l 6-inf`).
REPEATABLE = frozenset({"--logit-bias"})

# Options that take no value (a token after them is the next option or a positional).
SWITCHES = frozenset({"--swa-full", "--cpu-moe", "--verbose", "--log-disable", "--no-kv-offload",
                      "--kv-unified", "--spec-draft-cpu-moe"})


def flag_name(token: str) -> str:
    """The option a token names, as the engine understands it ("" for a plain value)."""
    if token.startswith("--"):
        return token.split("=", 1)[0].replace("_", "-")
    if token.startswith("-") and len(token) > 1 and not token[1].isdigit() and token[1] != ".":
        return token.split("=", 1)[0]
    return ""


def canonical(token: str) -> str:
    """One name for every spelling of an option (`-c`, `--ctx_size=9` → `--ctx-size`); an
    option not in `ALIASES` keeps its own name; "" for a plain value."""
    name = flag_name(token)
    return _CANONICAL.get(name, name)


def _inline_value(token: str) -> str | None:
    return token.split("=", 1)[1] if flag_name(token) and "=" in token else None


def value_of(args: Sequence[str], *names: str) -> str | None:
    """The value given to any of `names` (`--x v` or `--x=v`); "" when it has none; None
    when the option is absent."""
    for i, token in enumerate(args):
        if flag_name(token) in names:
            inline = _inline_value(token)
            if inline is not None:
                return inline
            return args[i + 1] if i + 1 < len(args) else ""
    return None


def sets(args: Sequence[str], *names: str) -> bool:
    return any(flag_name(t) in names for t in args)


def options(args: Sequence[str]) -> Iterator[tuple[int, int, str, str | None]]:
    """(start, end, canonical name, value) for each option in `args`, value None for a switch.

    A token after a valued option is its value even when it looks like an option (`-lv -1`
    is rare, `-ot -x` never), except after a known switch."""
    i = 0
    while i < len(args):
        token = args[i]
        name = canonical(token)
        if not name:
            i += 1
            continue
        inline = _inline_value(token)
        if inline is not None:
            yield i, i + 1, name, inline
            i += 1
        elif name in SWITCHES or i + 1 >= len(args) or (flag_name(args[i + 1]) and name not in _CANONICAL):
            yield i, i + 1, name, None
            i += 1
        else:
            yield i, i + 2, name, args[i + 1]
            i += 2


def without(args: Sequence[str], names: Collection[str]) -> tuple[str, ...]:
    """`args` without the options whose canonical name is in `names`, each with its value
    when it takes one (a switch takes none: `options`); everything else stays, in order."""
    gone: set[int] = set()
    for start, end, name, _value in options(list(args)):
        if name in names:
            gone.update(range(start, end))
    return tuple(t for i, t in enumerate(args) if i not in gone)


def engine_form(args: Sequence[str]) -> list[str]:
    """`--flag=value` (and `-f=value`) split into `--flag value`, the only form the engine takes."""
    out: list[str] = []
    for token in args:
        inline = _inline_value(token)
        if inline is not None:
            out += [token.split("=", 1)[0], inline]
        else:
            out.append(token)
    return out


@dataclass(frozen=True)
class Option:
    """One option of an engine command, as data: `name` its canonical name (`canonical`),
    `spelling` how the command writes it (`-c` for `--ctx-size`), `value` None for a switch.
    A plain value the user gave with no option before it is kept as an Option with no name
    (`name` and `spelling` ""), so their arguments pass through as they wrote them."""

    name: str
    value: str | None = None
    spelling: str = ""

    def tokens(self) -> tuple[str, ...]:
        return (*((self.spelling,) if self.spelling else ()), *(() if self.value is None else (self.value,)))


def option(spelling: str, value: str | None = None) -> Option:
    """The option `spelling` (any of its spellings) with `value` (None: a switch)."""
    return Option(canonical(spelling), value, spelling)


def render(options: Iterable[Option]) -> tuple[str, ...]:
    """The command line of `options`, in order: the one place Draftwise's options become argv."""
    return tuple(t for o in options for t in o.tokens())


def find(options: Iterable[Option], *names: str) -> Option | None:
    """The first of `options` named any of `names` (canonical names); None when none is."""
    return next((o for o in options if o.name in names), None)


def read_options(args: Sequence[str]) -> tuple[Option, ...]:
    """The user's extra arguments as options, in the engine's form (`engine_form`), every
    token kept: where a user's argument meets ours, it is read here, once (`options`)."""
    tokens = engine_form(args)
    out: list[Option] = []
    i = 0
    for start, end, name, value in options(tokens):
        out += [Option("", t, "") for t in tokens[i:start]]
        out.append(Option(name, value, tokens[start]))
        i = end
    out += [Option("", t, "") for t in tokens[i:]]
    return tuple(out)


class OwnOptions:
    """Options Draftwise sets, keyed by canonical name (`canonical`), rendered to argv once
    (`render`): a second value for a name is refused where it is set (ValueError), so a
    rendered command line cannot hold one of our options twice. `spelling` is the engine's
    name for it where not the canonical one (an older build's `-md`); a value of None is a switch."""

    def __init__(self) -> None:
        self._items: dict[str, Option] = {}

    def set(self, name: str, value: str | None = None, *, spelling: str | None = None) -> None:
        key = canonical(name)
        if key in self._items:
            raise ValueError(f"{key} is set twice")
        self._items[key] = Option(key, value, spelling or name)

    def names(self) -> frozenset[str]:
        return frozenset(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def items(self) -> tuple[Option, ...]:
        return tuple(self._items.values())

    def argv(self) -> tuple[str, ...]:
        return render(self.items())
