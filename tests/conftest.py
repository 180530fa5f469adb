"""Shared fixtures: the real engine and tiny real models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(scope="session")
def engine():
    """The provisioned llama-server (`draftwise engine install`).

    CI sets DRAFTWISE_REQUIRE_ENGINE=1 so a missing engine fails instead of skipping.
    """
    from draftwise.core.engines import discovery, provision

    build = provision.installed("cpu")
    info = None
    if build is not None:
        info = next((e for e in discovery.find_engines() if e.binary == build.binary), None)
    if info is None or not info.usable:
        why = info.problem if info else "not installed"
        if os.environ.get("DRAFTWISE_REQUIRE_ENGINE") == "1":
            pytest.fail(f"llama-server is required here but {why}; run `draftwise engine install`")
        pytest.skip(f"llama-server {why}; run `draftwise engine install`")
    return info


@pytest.fixture
def tiny_llama(tmp_path: Path) -> Path:
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    return write_tiny_model(tmp_path / "tiny-llama-F32.gguf", TinyModel())[0]
