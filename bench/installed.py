"""The installed CPU engine the benchmarks run (imported by bench scripts, which Python runs
with bench/ first on the path)."""

from __future__ import annotations

import sys
from pathlib import Path


def cpu_engine() -> Path:
    """The provisioned CPU llama-server; exits with what to do when there is none."""
    from draftwise.core.engines import provision

    build = provision.installed("cpu")
    if build is None:
        sys.exit("llama-server is not installed; run `draftwise engine install`")
    return build.binary
