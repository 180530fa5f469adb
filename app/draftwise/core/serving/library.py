"""The models of a library to serve: one id per model, the files that are not models left out.

The id is the file's stem (`Qwen3.5-0.8B-Q8_0`), the shard tag dropped, so a split model is
one model; projectors and drafters are not models of their own (the launch session gives a
model its projector and its drafter). The ids are what clients send as `model`, so they must
be unique, and readable by the engine's preset file (tools/server's INI parser: a section
name ends at `]`, and a `:` starts a tag the engine rewrites).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Text, msg

_LATER_SHARD = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)
MAX_DEPTH = 5
# Characters the engine's preset parser cannot keep in a section name or a value
# (common/preset.cpp: `]` ends the name, `:` tags it, `;` and `#` start a comment).
_NOT_IN_PRESET = re.compile(r"[\]\[:;#\r\n]")


class LibraryError(FieldError):
    """Input that cannot be served at all; the message names the file or folder."""


def find_gguf_files(folders: Iterable[Path], cancel: threading.Event | None = None) -> list[Path]:
    """Every `.gguf` under the folders (a file given is taken as it is; 5 levels deep, no hidden folders, symlinked folders
    not followed); of a split model only its first part, which names the set."""
    out: list[Path] = []
    seen: set[str] = set()
    for root in folders:
        root = Path(root).expanduser()
        if root.is_file():
            key = os.path.normcase(os.path.realpath(root))
            if key not in seen and root.suffix.lower() == ".gguf":
                seen.add(key)
                out.append(root)
            continue
        stack = [(root, 0)]
        while stack:
            if cancel is not None and cancel.is_set():
                return out
            folder, depth = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name.lower())
            except OSError:
                continue
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if depth < MAX_DEPTH:
                            stack.append((Path(entry.path), depth + 1))
                        continue
                    if not name.lower().endswith(".gguf") or not entry.is_file():
                        continue
                except OSError:
                    continue
                m = _LATER_SHARD.search(name)
                if m and int(m.group(1)) != 1:
                    continue
                key = os.path.normcase(os.path.realpath(entry.path))
                if key not in seen:
                    seen.add(key)
                    out.append(Path(entry.path))
    return out


@dataclass(frozen=True)
class LibraryFile:
    """One model to serve: its id (what clients name) and its file (the first shard)."""

    id: str
    path: Path
    info: gguf.ModelInfo


@dataclass(frozen=True)
class LeftOut:
    """A file that is a model but cannot be served, and why (said to the user)."""

    path: Path
    why: Text


@dataclass(frozen=True)
class Library:
    models: tuple[LibraryFile, ...]
    left_out: tuple[LeftOut, ...] = ()


def model_id(path: Path) -> str:
    """The id clients name a model by: its file's stem without the shard tag."""
    return gguf.shard_stem(path)


def collect(paths: Sequence[Path]) -> Library:
    """The models under `paths` (folders or files). LibraryError when a path does not exist,
    a folder holds no GGUF, no model is left, or two models share an id; a file that cannot
    be read is left out and named."""
    for p in paths:
        if not Path(p).expanduser().exists():
            raise LibraryError("model", msg("{path} does not exist; give a folder of GGUF models or a GGUF file.",
                                            path=str(p)))
    files: list[Path] = []
    for p in paths:
        found = find_gguf_files([Path(p)])
        if not found:
            raise LibraryError("model", msg("{path} holds no GGUF file; give a folder with models in it "
                                            "(or download one with `draftwise get`).", path=str(p)))
        files += [f for f in found if f not in files]
    models: list[LibraryFile] = []
    left: list[LeftOut] = []
    for path in files:
        try:
            info = gguf.read_model(path)
        except gguf.GGUFError as exc:
            left.append(LeftOut(path, msg("{name} cannot be read ({why}); it is left out. Download it again "
                                          "or remove it from the folder.", name=path.name, why=exc.message)))
            continue
        except OSError as exc:
            left.append(LeftOut(path, msg("{name} cannot be read ({why}); it is left out. Check its permissions "
                                          "or remove it from the folder.", name=path.name,
                                          why=exc.strerror or str(exc))))
            continue
        if info.is_projector or info.sidecar_kind is not None or info.mtp_layout == "mtp-only":
            continue  # a projector or a drafter: it helps a model, it is not one
        ident = model_id(path)
        if _NOT_IN_PRESET.search(ident) or _NOT_IN_PRESET.search(str(path)):
            left.append(LeftOut(path, msg("{name}: the engine's model list cannot hold a name or folder with "
                                          "[ ] : ; or #; it is left out. Rename it to serve it.", name=str(path))))
            continue
        models.append(LibraryFile(ident, path, info))
    by_id: dict[str, list[Path]] = {}
    for m in models:
        by_id.setdefault(m.id, []).append(m.path)
    twice = {k: v for k, v in by_id.items() if len(v) > 1}
    if twice:
        ident, same = sorted(twice.items())[0]
        raise LibraryError("model", msg(
            "Two models would both be named {id}: {first} and {second}. Clients pick a model by its file "
            "name, so rename one of them (or serve one folder only).",
            id=ident, first=str(same[0]), second=str(same[1])))
    if not models:
        raise LibraryError("model", msg("No model to serve in {paths}: every GGUF there is a drafter, a "
                                        "projector or unreadable.", paths=", ".join(str(p) for p in paths)))
    return Library(tuple(models), tuple(left))
