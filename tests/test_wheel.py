"""The wheel carries the app, not its tests: no draftwise.testing (tiny models, the corpus,
the hub stand-in), and nothing in it imports what the wheel does not declare."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What the wheel declares (pyproject's dependencies; httpx2 is huggingface_hub's HTTP client, whose
# errors core/hub catches) and the standard library.
DECLARED = {"PySide6", "shiboken6", "psutil", "platformdirs", "huggingface_hub", "httpx2", "draftwise"}

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources (the build leaves no build/ folder in the checkout),
    without build isolation: no network."""
    src = tmp_path_factory.mktemp("src")
    for name in ("app", "resources"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    (built,) = out.glob("draftwise-*.whl")
    return built


def test_the_wheel_holds_no_test_code(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    modules = [n for n in names if n.endswith(".py")]
    assert any(n == "draftwise/core/hub/judge.py" for n in modules)
    assert not [n for n in names if n.startswith("draftwise/testing")], "test code in the wheel"


def test_nothing_in_the_wheel_imports_an_undeclared_package(wheel):
    stdlib = set(sys.stdlib_module_names)
    found: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if not name.endswith(".py"):
                continue
            for node in ast.walk(ast.parse(z.read(name), name)):
                if isinstance(node, ast.Import):
                    tops = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    tops = [node.module.split(".")[0]]
                else:
                    continue
                for top in tops:
                    if top not in stdlib and top not in DECLARED:
                        found.setdefault(top, name)
    assert not found, f"imports the wheel does not declare: {found}"
