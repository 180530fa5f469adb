"""Whether the computer is idle enough to measure on: a measurement on the user's prompts
(core/measuring/learn.py) starts engines of its own, and another program busy on the
processor both slows the user and spreads the figures past any verdict (on the shared 2-core
test machine the rounds spread ±31 % under a busy loop, docs/measure.md).

The probe reads the processor's use by every process over `seconds` (psutil): the caller asks
before starting its engine, so what it sees is other programs' share. Idle: below
`BUSY_SHARE` of all cores.
"""

from __future__ import annotations

import psutil

# Other programs' share of all cores above which the machine is not idle (a browser tab or
# an editor stays well below; a build or a game does not).
BUSY_SHARE = 0.25
PROBE_SECONDS = 3.0


def busy_share(seconds: float = PROBE_SECONDS) -> float:
    """The share of all cores in use over `seconds` (0..1)."""
    return psutil.cpu_percent(interval=seconds) / 100.0


def idle(seconds: float = PROBE_SECONDS, threshold: float = BUSY_SHARE) -> bool:
    return busy_share(seconds) < threshold
