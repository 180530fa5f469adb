"""vLLM's OpenAI server as an engine: found in a Python environment, started with `-m`.

Speculation is llama.cpp's business here (resolver rule 1: other backends get no
speculative flags), so a vLLM launch has no fallback. The key goes in `VLLM_API_KEY`
(argv is visible to every user); readiness is the same `GET /health` (200 when ready).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.address import ALL_INTERFACES, LOOPBACK
from draftwise.core.kinds import Backend, EngineKind
from draftwise.core.launch.launch_spec import (
    LaunchError,
    LaunchSpec,
    check_owned_flags,
    gpu_env,
    network_warning,
    new_api_key,
    require_no_speculation,
)
from draftwise.core.machine.hardware import Gpu
from draftwise.core.messages import msg
from draftwise.core.speculation.resolver import SpecDecision

MODULE = "vllm.entrypoints.openai.api_server"
PACKAGE = "vllm"
KEY_VARIABLE = "VLLM_API_KEY"

# Asks an interpreter whether it has a package, without importing it (importing vLLM
# takes seconds and initialises CUDA).
_PROBE = (
    "import importlib.util, importlib.metadata, sys\n"
    "name = sys.argv[1]\n"
    "if importlib.util.find_spec(name) is None: sys.exit(3)\n"
    "print(importlib.metadata.version(name))\n"
)


@dataclass(frozen=True)
class PythonEngine:
    """A Python environment that can run a server module."""

    kind: EngineKind  # vllm | mlx
    python: Path
    version: str


def default_pythons() -> list[Path]:
    found: list[Path] = []
    if not getattr(sys, "frozen", False):
        found.append(Path(sys.executable))  # a frozen app's executable is not a Python
    for name in ("python3", "python"):
        which = shutil.which(name)
        if which:
            found.append(Path(which))
    return found


def find_python_package(kind: EngineKind, package: str, pythons: Sequence[Path | str] | None = None,
                        timeout: float = 20.0) -> PythonEngine | None:
    """The first interpreter that has `package` installed, with its version."""
    seen: set[Path] = set()
    for candidate in pythons if pythons is not None else default_pythons():
        python = Path(candidate)
        if python in seen:
            continue
        seen.add(python)
        try:
            out = subprocess.run(
                [str(python), "-c", _PROBE, package], capture_output=True, text=True, timeout=timeout,
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
            )
        except (OSError, subprocess.TimeoutExpired):
            continue  # not a working interpreter: try the next one
        if out.returncode == 0:
            return PythonEngine(kind, python, out.stdout.strip())
    return None


def find(pythons: Sequence[Path | str] | None = None) -> PythonEngine | None:
    return find_python_package(EngineKind.VLLM, PACKAGE, pythons)


def build_argv(python: Path | str, model: Path, *, host: str = LOOPBACK, port: int = 8000,
               ctx: int | None = None, extra_args: Sequence[str] = ()) -> list[str]:
    argv = [str(python), "-m", MODULE, "--model", str(model), "--host", host, "--port", str(port)]
    if ctx:
        argv += ["--max-model-len", str(ctx)]
    return argv + list(extra_args)


def vllm_launch(
    python: Path,
    model: Path,
    spec: SpecDecision,
    *,
    port: int,
    ctx: int | None = None,
    extra_args: Sequence[str] = (),
    network: bool = False,
    api_key: str | None = None,
    gpus: Sequence[Gpu] = (),
    chosen_gpus: Sequence[int] | None = None,
    kernel_targets: Collection[str] | None = None,
) -> LaunchSpec:
    require_no_speculation(spec, "vLLM")
    check_owned_flags(extra_args)
    if network and api_key is not None and not api_key:
        raise LaunchError("api_key", msg("An engine open to the network needs an API key."))
    key = api_key or new_api_key()
    host = ALL_INTERFACES if network else LOOPBACK
    gpu = gpu_env(Backend.CUDA, gpus, chosen=chosen_gpus, kernel_targets=kernel_targets)
    env = {**gpu.env, KEY_VARIABLE: key}
    return LaunchSpec(
        kind=EngineKind.VLLM, binary=Path(python), model_path=Path(model),
        argv=tuple(build_argv(python, model, host=host, port=port, ctx=ctx, extra_args=extra_args)),
        env=env, host=host, port=port, api_key=key, spec=spec, backend=Backend.CUDA,
        notes=(*spec.notes, *gpu.notes), warnings=(network_warning(port),) if network else (),
    )
