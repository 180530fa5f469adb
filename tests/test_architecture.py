"""The layer rule (core -> services -> viewmodels -> ui, no Qt in core) is a contract."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]


def test_import_contracts_hold():
    out = subprocess.run(_lint_imports(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Contracts: 3 kept, 0 broken" in out.stdout


def test_contract_catches_qt_in_core(tmp_path):
    """A Qt import planted in core must break the contract (the check can fail)."""
    planted = ROOT / "app" / "draftwise" / "core" / "_planted_qt_import.py"
    planted.write_text("import PySide6.QtCore  # noqa: F401\n")
    try:
        out = subprocess.run(_lint_imports(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        planted.unlink()
    assert out.returncode != 0
    assert "BROKEN" in out.stdout


def test_no_shell_and_no_swallowed_errors():
    offenders = []
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for bad in ("shell=True", "os.system(", "except:\n"):
            if bad in text:
                offenders.append(f"{path.relative_to(ROOT)}: {bad!r}")
    assert not offenders, offenders
