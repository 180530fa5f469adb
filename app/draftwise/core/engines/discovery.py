"""Find the llama-server binaries this machine has, and what each one is.

Sources, in the order the app prefers them: a path the user configured, one bundled inside
the frozen app, the ones `draftwise engine install` provisioned, and `llama-server` on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import identity, paths
from draftwise.core.engines import provision
from draftwise.core.kinds import Backend, EngineKind, EngineSource
from draftwise.core.messages import Text, msg

# Library names that give a build's GPU backend away when no facts file says it.
_BACKEND_LIBS = (
    (Backend.CUDA, "ggml-cuda"),
    (Backend.ROCM, "ggml-hip"),
    (Backend.VULKAN, "ggml-vulkan"),
    (Backend.METAL, "ggml-metal"),
)


@dataclass(frozen=True)
class EngineInfo:
    """One llama-server binary and what is known about it."""

    kind: EngineKind  # llama.cpp
    binary: Path
    source: EngineSource  # configured | bundled | provisioned | path
    version: str  # "" when the binary would not say
    backend: Backend  # cpu | cuda | rocm | vulkan | metal | unknown
    problem: Text = ""  # why it cannot be used, in words; "" when fine

    @property
    def usable(self) -> bool:
        return not self.problem

    @property
    def folder(self) -> Path:
        return self.binary.parent

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "binary": str(self.binary),
            "source": self.source,
            "version": self.version,
            "backend": self.backend,
            "problem": str(self.problem) if self.problem else None,
        }


def bundled_dirs() -> list[Path]:
    """Folders a frozen app may carry its engine in."""
    roots = []
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        roots.append(Path(meipass) / "engine")
    if getattr(sys, "frozen", False):
        roots.append(Path(sys.executable).resolve().parent / "engine")
    return roots


def guess_backend(folder: Path) -> Backend:
    names = " ".join(p.name for p in folder.iterdir()) if folder.is_dir() else ""
    for backend, marker in _BACKEND_LIBS:
        if marker in names:
            return backend
    return Backend.CPU if "ggml-cpu" in names or "ggml" in names else Backend.UNKNOWN


_version_cache: dict[str, str] = {}  # by identity.engine_build_key


def binary_version(binary: Path, timeout: float = 15.0) -> tuple[str, Text]:
    """(version line, problem). Cached by the engine build (path, size and mtime)."""
    try:
        binary.stat()
    except OSError as exc:
        return "", msg("{binary} cannot be read: {error}", binary=str(binary), error=exc.strerror or str(exc))
    key = identity.engine_build_key(binary)
    if key in _version_cache:
        return _version_cache[key], ""
    if not os.access(binary, os.X_OK):
        return "", msg("{binary} is not executable; reinstall the engine or fix its permissions.", binary=str(binary))
    try:
        out = provision.ask_engine(binary, "--version", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "", msg("{binary} did not answer --version within {seconds} s.", binary=str(binary),
                       seconds=f"{timeout:.0f}")
    except OSError as exc:
        return "", msg("{binary} does not start: {error}", binary=str(binary), error=exc.strerror or str(exc))
    text = out.stdout + out.stderr
    match = re.search(r"version: *(.+)", text)
    if out.returncode != 0 or not match:
        last = text.strip().splitlines()[-1:] or ["no output"]
        return "", msg("{binary} --version failed (exit {code}): {last}", binary=str(binary), code=out.returncode,
                       last=last[0])
    version = match.group(1).strip()
    _version_cache[key] = version
    return version, ""


def _describe(binary: Path, source: EngineSource, backend: str | None = None) -> EngineInfo:
    version, problem = binary_version(binary)
    return EngineInfo(
        kind=EngineKind.LLAMA_CPP,
        binary=binary,
        source=source,
        version=version,
        backend=Backend.named(backend) if backend else guess_backend(binary.parent),
        problem=problem,
    )


def find_engines(configured: str | Path | None = None) -> list[EngineInfo]:
    """Every llama-server found, best first, each listed once."""
    found: list[EngineInfo] = []
    seen: set[Path] = set()

    def add(binary: Path, source: EngineSource, backend: str | None = None) -> None:
        try:
            key = binary.resolve()
        except OSError:
            key = binary
        if key in seen:
            return
        seen.add(key)
        found.append(_describe(binary, source, backend))

    if configured:
        path = Path(configured).expanduser()
        if path.is_dir():
            path = path / provision.binary_name()
        if path.is_file():
            add(path, EngineSource.CONFIGURED)
        else:
            found.append(
                EngineInfo(EngineKind.LLAMA_CPP, path, EngineSource.CONFIGURED, "", Backend.UNKNOWN,
                           problem=msg("{path} does not exist; choose the llama-server file again.", path=str(path)))
            )
    for folder in bundled_dirs():
        binary = folder / provision.binary_name()
        if binary.is_file():
            facts = provision.load_facts(folder)
            add(binary, EngineSource.BUNDLED, facts.backend if facts else None)
    engines = paths.engines_dir()
    if engines.is_dir():
        for folder in sorted(engines.iterdir()):
            facts = provision.load_facts(folder)
            if facts is not None:
                add(facts.binary, EngineSource.PROVISIONED, facts.backend)
    on_path = shutil.which("llama-server")
    if on_path:
        add(Path(on_path), EngineSource.PATH)
    return found


def best_engine(configured: str | Path | None = None) -> EngineInfo | None:
    return next((e for e in find_engines(configured) if e.usable), None)
