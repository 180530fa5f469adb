"""Find Draftwise's resource files (icons, translations) from source and from a frozen app.

One helper for everyone: `resource_path("icons", "draftwise.png")` works in a checkout
(`<repo>/resources/...`), in the PyInstaller onedir (`sys._MEIPASS/resources/...`), in the
macOS .app bundle (PyInstaller links `Contents/Frameworks/resources` to the same files) and
in an installed package that carries them under `<prefix>/share/draftwise/resources`.
`DRAFTWISE_RESOURCES` overrides the search (a portable install, a test).

Pure standard library: importing it costs nothing at startup and core may use it.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from pathlib import Path

ENV_VAR = "DRAFTWISE_RESOURCES"
ICON_NAME = "draftwise"


def candidate_roots() -> list[Path]:
    """Folders that may hold the resources, most specific first."""
    roots: list[Path] = []
    override = os.environ.get(ENV_VAR)
    if override:
        roots.append(Path(override))
    meipass = getattr(sys, "_MEIPASS", None)
    if meipass:
        roots.append(Path(meipass) / "resources")
    if getattr(sys, "frozen", False):
        roots.append(Path(sys.executable).resolve().parent / "resources")
    # app/draftwise/resources.py -> <repo>/resources
    roots.append(Path(__file__).resolve().parents[2] / "resources")
    roots.append(Path(sys.prefix) / "share" / "draftwise" / "resources")
    return roots


@cache
def resource_root() -> Path:
    """The first folder that exists; the source folder when none does (so errors name it)."""
    roots = candidate_roots()
    return next((r for r in roots if r.is_dir()), roots[-2])


def resource_path(*parts: str) -> Path:
    """The path of a resource, whether or not the file exists."""
    return resource_root().joinpath(*parts)


def find_resource(*parts: str) -> Path | None:
    """The path of an existing resource, looked up in every root; None when there is none."""
    for root in candidate_roots():
        path = root.joinpath(*parts)
        if path.exists():
            return path
    return None


def icon_path(suffix: str = "png", size: int | None = None) -> Path | None:
    """The app icon: `icon_path()` (largest PNG), `icon_path("svg")`, `icon_path("ico")`,
    `icon_path("png", 64)` (one size, as `icons/draftwise-64.png`)."""
    if size is not None:
        return find_resource("icons", f"{ICON_NAME}-{size}.{suffix}")
    return find_resource("icons", f"{ICON_NAME}.{suffix}")


def clear_cache() -> None:
    """Forget the chosen root (after changing DRAFTWISE_RESOURCES in a test)."""
    resource_root.cache_clear()
