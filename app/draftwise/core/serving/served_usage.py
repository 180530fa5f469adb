"""What each served model's requests did, kept for learning from use as a launch keeps its own.

`draftwise launch` and the window's launch read their engine's lines into a `usage.Keeper`
(core/measurements/usage.py): each finished request's tokens, time, drafts and acceptance, kept
under the model, engine build, machine and setup (`learn.usage_key`). The usage check at the
next launch (core/measurements/usage_check.py) reads them and measures again on the user's own
prompts when they say another setup may be faster. Served models are used the same way — by
Claude Code, editors, scripts — so their requests count too.

The router forwards each instance's lines as `[ PORT] line` (`instances.child_line`), and an
instance's own start-up line names its model file (server-context.cpp `load_model`: "loading
model '<path>'"), so each port's lines go to that model's Keeper from its first line on,
without waiting for the router's model list. A port the router gives to another model later
(a model unloaded, another loaded) is mapped again by that instance's own start-up line.
Kept under the key a launch of the same model uses, so a model used only through `serve`
teaches auto as one launched does; a model loaded again without speculation (serve_flow's
fallback, after its drafter made it stop) keeps its later requests under none's key, as a
launch's fallback does (`usage.Keeper.ran_without_speculation`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from draftwise.core.measurements import usage
from draftwise.core.measuring import learn
from draftwise.core.messages import Message
from draftwise.core.serving import instances
from draftwise.core.serving.serve_plan import ServePlan

# server-context.cpp `load_model`: SRV_INF("loading model '%s'\n", path).
_LOADING = re.compile(r"load_model: loading model '(.+)'")


def same_file(path: Path | str) -> str:
    """A model file as the router names it and as the plan does, compared alike."""
    return os.path.normcase(os.path.abspath(str(path)))


class ServedUsage:
    """One Keeper per served model, fed the router's lines by instance port."""

    def __init__(self, keepers: dict[str, usage.Keeper], by_id: dict[str, usage.Keeper] | None = None) -> None:
        self.keepers = keepers  # by the model file's normalised path
        self.by_id = by_id or {}  # the same, by the model's id in the router's list
        self.ports: dict[int, usage.Keeper] = {}

    @classmethod
    def from_plan(cls, plan: ServePlan) -> ServedUsage:
        keepers: dict[str, usage.Keeper] = {}
        by_id: dict[str, usage.Keeper] = {}
        for m in plan.models:
            store = m.planned.records.usage
            if store is None:
                continue
            keeper = usage.Keeper(learn.usage_key(m.planned), store)
            for path in (m.path, m.planned.prepared.model.path):
                keepers[same_file(path)] = keeper
            by_id[m.id] = keeper
        return cls(keepers, by_id)

    def fell_back(self, ident: str) -> Message | None:
        """`ident` is loaded again without speculation: its later requests are none's."""
        keeper = self.by_id.get(ident)
        return keeper.ran_without_speculation() if keeper is not None else None

    def lines(self, lines: Iterable[str]) -> None:
        for line in lines:
            found = instances.child_line(line)
            if found is None:
                continue
            port, text = found
            loading = _LOADING.search(text)
            if loading is not None:
                keeper = self.keepers.get(same_file(loading.group(1)))
                if keeper is None:
                    self.ports.pop(port, None)
                else:
                    self.ports[port] = keeper
            keeper = self.ports.get(port)
            if keeper is not None:
                keeper.lines([text])

    def save(self, *, final: bool = False) -> Message | None:
        """Keep the requests finished since the last save, for every model; the first failure
        to write them, for the caller to say once."""
        problem: Message | None = None
        for keeper in dict.fromkeys(self.keepers.values()):
            said = keeper.save(final=final)
            problem = problem or said
        return problem
