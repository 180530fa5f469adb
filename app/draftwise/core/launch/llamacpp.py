"""llama-server's command line, built from the decisions (never by editing an old one)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from draftwise.core.engines import args as engine_args
from draftwise.core.gguf import reader as gguf
from draftwise.core.speculation.resolver import SpecDecision

HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def build_argv(
    binary: Path | str,
    model: gguf.ModelInfo,
    spec: SpecDecision,
    *,
    extra_args: Sequence[str] = (),
    host: str = HOST,
    port: int = DEFAULT_PORT,
    plan_args: Sequence[str] = (),
) -> list[str]:
    """The full argv. `plan_args` carries the planner's context/KV/offload tokens."""
    argv = [str(binary), "-m", str(model.path), "--host", host, "--port", str(port)]
    argv += list(plan_args)
    argv += list(spec.argv)
    # MTP with more than one slot was unreliable (rules.md): one slot unless the user says.
    if spec.spec_type == "draft-mtp" and not engine_args.sets([*extra_args, *plan_args], "-np", "--parallel"):
        argv += ["-np", "1"]
    # The user's arguments last, in the only form the engine reads (`--flag value`).
    argv += engine_args.engine_form(extra_args)
    return argv
