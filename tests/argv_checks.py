"""Tests reading the argv Draftwise rendered, to hold it against what it was rendered from (a
test may parse argv; app code may not: tests/test_own_argv.py)."""

from __future__ import annotations

from collections.abc import Sequence

from draftwise.core.engines import args as engine_args
from draftwise.core.serving import preset


def argv_options(argv: Sequence[str]) -> dict[str, str]:
    """`{key: value}` of an argv (binary first) as a preset section would hold it, the router's
    options left out: what a section is compared with."""
    return {preset.key_of(o.name): (preset.SWITCH_VALUE if o.value is None else o.value)
            for o in engine_args.read_options(argv[1:]) if o.name and o.name not in preset.ROUTER_OWNED}
