"""This processor's cores: the physical ones (the engine's default thread count) and the
logical ones (never more engine threads than these).

The pinned engine's `-t` default is `cpu_get_num_math()` (common/common.cpp): the physical
cores, without efficiency cores. psutil counts physical cores where the OS tells it; without
it, logical cores halved when there are more than four is close on x86 (two threads a core)
and exact on machines without SMT (the 2-core VM this was written on: 2 and 2).
"""

from __future__ import annotations

import os
import platform


def logical() -> int:
    return os.cpu_count() or 1


def physical() -> int:
    try:
        import psutil

        n = psutil.cpu_count(logical=False)
    except (ImportError, OSError):
        n = None
    if n:
        return max(1, min(int(n), logical()))
    n = logical()
    return max(1, n // 2) if n > 4 and platform.machine().lower() in ("x86_64", "amd64") else n
