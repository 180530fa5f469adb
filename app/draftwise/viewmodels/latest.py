""""Latest request wins" for background work whose answers can arrive out of order.

The window asks the pool the same question again and again (read this model, probe this
engine's machine, re-plan with these inputs); only the answer to the newest question may
be used. Each `new()` makes the answers to earlier requests stale; `deliver(fn)` wraps a
callback so it runs only while the request it was made for is still the newest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec

P = ParamSpec("P")  # the wrapped callback's arguments, passed through unchanged


class Latest:
    def __init__(self) -> None:
        self._current = 0

    @property
    def current(self) -> int:
        """The ticket of the newest request (0 before the first)."""
        return self._current

    def new(self) -> int:
        """A new request: every earlier ticket is stale from now on."""
        self._current += 1
        return self._current

    def is_current(self, ticket: int) -> bool:
        return ticket == self._current

    def deliver(self, fn: Callable[P, object], ticket: int | None = None) -> Callable[P, None]:
        """`fn`, called only if `ticket` (default: the newest now) is still the newest."""
        t = self._current if ticket is None else ticket

        def call(*args: P.args, **kwargs: P.kwargs) -> None:
            if t == self._current:
                fn(*args, **kwargs)

        return call
