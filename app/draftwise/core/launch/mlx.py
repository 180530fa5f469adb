"""mlx-lm's server (Apple silicon) as an engine: `python -m mlx_lm.server`.

Its server has no API key, so it never listens beyond this computer. No speculative flags
(resolver rule 1), hence no fallback; readiness is `GET /health`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from draftwise.core.address import DEFAULT_PORT, LOOPBACK
from draftwise.core.kinds import Backend, EngineKind
from draftwise.core.launch.launch_spec import (
    LaunchError,
    LaunchSpec,
    check_owned_flags,
    new_api_key,
    require_no_speculation,
)
from draftwise.core.launch.vllm import PythonEngine, find_python_package
from draftwise.core.messages import msg
from draftwise.core.speculation.resolver import SpecDecision

MODULE = "mlx_lm.server"
PACKAGE = "mlx_lm"


def find(pythons: Sequence[Path | str] | None = None) -> PythonEngine | None:
    return find_python_package(EngineKind.MLX, PACKAGE, pythons)


def build_argv(python: Path | str, model: Path, *, port: int = DEFAULT_PORT,
               extra_args: Sequence[str] = ()) -> list[str]:
    return [str(python), "-m", MODULE, "--model", str(model), "--host", LOOPBACK, "--port", str(port),
            *extra_args]


def mlx_launch(
    python: Path,
    model: Path,
    spec: SpecDecision,
    *,
    port: int,
    ctx: int | None = None,
    extra_args: Sequence[str] = (),
    network: bool = False,
) -> LaunchSpec:
    require_no_speculation(spec, "mlx-lm")
    if network:
        raise LaunchError("network", msg("mlx-lm's server has no API key, so Draftwise keeps it on this computer only."))
    check_owned_flags(extra_args)
    notes = list(spec.notes)
    if ctx:
        notes.append(msg("mlx-lm sizes its context itself; the context setting is not passed on."))
    return LaunchSpec(
        kind=EngineKind.MLX, binary=Path(python), model_path=Path(model),
        argv=tuple(build_argv(python, model, port=port, extra_args=extra_args)),
        # A key is still generated so every LaunchSpec looks alike; mlx-lm ignores it.
        env={}, host=LOOPBACK, port=port, api_key=new_api_key(), spec=spec, backend=Backend.METAL,
        notes=tuple(notes),
    )
