"""The router's instances as it reports them (`GET /models`), and what to do when one fails.

Each entry of the router's list has `id` and `status` (`value`: unloaded, loading, loaded,
sleeping; `failed` and `exit_code` when its last start died; `args`: the instance's argv;
server-models.cpp `get_router_models`). An instance that died at start while its automatic
drafter was on gets one more load without speculation — the launch's one-shot fallback
(docs/rules.md), per model; any other failure is said and the other models keep serving.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass

from draftwise.core.messages import Message, msg

LOADED, LOADING, SLEEPING, UNLOADED, FAILED = "loaded", "loading", "sleeping", "unloaded", "failed"


@dataclass(frozen=True)
class Instance:
    id: str
    state: str  # one of the above
    args: tuple[str, ...] = ()
    exit_code: int | None = None


def read(body: bytes | str) -> dict[str, Instance]:
    """The instances of a `/models` answer, by id (an answer that is not the router's: {})."""
    try:
        data = json.loads(body)
    except ValueError:
        return {}
    out: dict[str, Instance] = {}
    for entry in data.get("data", []) if isinstance(data, dict) else []:
        status = entry.get("status") or {}
        state = FAILED if status.get("failed") else str(status.get("value", UNLOADED))
        out[str(entry.get("id"))] = Instance(str(entry.get("id")), state, tuple(status.get("args") or ()),
                                             status.get("exit_code"))
    return out


@dataclass
class InstanceWatch:
    """What changed between two reads of the list, and which failures get their fallback."""

    fallen_back: set[str]
    # id -> (state, argv): a start that failed again between two reads is another argv (the
    # router gives each start its own port), so it is seen even when both reads say "failed".
    states: dict[str, tuple[str, tuple[str, ...]]]

    @classmethod
    def new(cls) -> InstanceWatch:
        return cls(set(), {})

    def changes(self, now: dict[str, Instance]) -> list[Instance]:
        out = [i for i in now.values() if self.states.get(i.id) != (i.state, i.args)]
        self.states = {i.id: (i.state, i.args) for i in now.values()}
        return out

    def falls_back(self, inst: Instance, has_fallback: bool) -> bool:
        """Whether this failure gets the one more load without speculation (once per model)."""
        if inst.state != FAILED or not has_fallback or inst.id in self.fallen_back:
            return False
        self.fallen_back.add(inst.id)
        return True


def broken_reason(ident: str, exit_code: int | None) -> Message:
    """Why a drafter is remembered as broken after its instance died at start."""
    return msg("The served model {id} stopped at start with this drafter (exit code {code}); it runs without it.",
               id=ident, code=exit_code if exit_code is not None else "?")


# The router forwards each instance's log lines as `[ PORT] line` (server-models.cpp
# `server_monitor::on_line`: `LOG("[%5d] %s", port, line)`).
_CHILD_LINE = re.compile(r"^\[\s*(\d+)\] ?(.*)$")
LINES_KEPT = 400  # per instance: what a crash cause reads (crash.classify looks at the tail)


def child_line(line: str) -> tuple[int, str] | None:
    """(instance port, its line) of a router output line, None for the router's own."""
    m = _CHILD_LINE.match(line)
    return (int(m.group(1)), m.group(2)) if m else None


@dataclass
class ChildLines:
    """The last lines of each instance, by its port, read from the router's output."""

    by_port: dict[int, deque[str]]

    @classmethod
    def new(cls) -> ChildLines:
        return cls({})

    def add(self, lines: list[str]) -> None:
        for line in lines:
            found = child_line(line)
            if found is not None:
                self.by_port.setdefault(found[0], deque(maxlen=LINES_KEPT)).append(found[1])

    def of(self, args: tuple[str, ...]) -> list[str]:
        """The lines of the instance started with `args` (its `--port`)."""
        if "--port" not in args[:-1]:
            return []
        try:
            port = int(args[args.index("--port") + 1])
        except ValueError:
            return []
        return list(self.by_port.get(port, ()))
