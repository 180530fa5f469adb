"""A cache of what was derived from objects that do not change once made (the reader's shared
headers, a weight table made from them), so a re-plan does not walk a model's whole tensor
table again: the weight tables (weight_table.py) and the CPU buffers per placement
(cpu_buffers.py) are kept here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


class IdentityCache:
    """What was derived from objects that do not change once made — the reader's shared
    headers (gguf.read_header hands out the same object while the file is unchanged), a
    weight table made from them — keyed by those objects' identities, which it keeps alive
    so no identity is reused while its entry stands. Each plan (a re-plan on every setting
    change, every launch) walks a model's whole tensor table twice otherwise: on the real
    Gemma 3 270M 0.6 of its 1.4 ms (bench/launch.py). Thread-safe (re-plans run on a pool)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: OrderedDict[tuple, tuple[tuple[object, ...], Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, objects: tuple[object, ...], extra: Hashable, make: Callable[[], Any]) -> Any:
        key = (tuple(id(o) for o in objects), extra)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit[1]
        value = make()
        with self._lock:
            self._entries[key] = (objects, value)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return value


