"""Engine provisioning and discovery, without rebuilding anything."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from draftwise.core.engines import discovery, provision


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "data"


def _fake_engine(folder: Path, version: str = "0.6.0-dev (build 0, commit unknown)") -> Path:
    """An executable that answers --version like llama-server (a test double for discovery only)."""
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "llama-server"
    binary.write_text(f"#!/bin/sh\necho 'version: {version}' >&2\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def test_missing_tools_message_says_what_to_install(monkeypatch, data_dir):
    monkeypatch.setattr(provision.shutil, "which", lambda _name: None)
    with pytest.raises(provision.ProvisionError) as err:
        provision.install("cpu")
    text = str(err.value)
    assert "cmake" in text and "C++ compiler" in text
    if sys.platform.startswith("linux"):
        assert "apt-get install cmake build-essential" in text


def test_gpu_backend_names_its_toolkit(monkeypatch, data_dir):
    monkeypatch.setattr(provision.shutil, "which", lambda name: None if name == "nvcc" else "/usr/bin/" + name)
    with pytest.raises(provision.ProvisionError, match="CUDA toolkit"):
        provision.install("cuda")


def test_unknown_backend_is_refused(data_dir):
    with pytest.raises(provision.ProvisionError, match="Unknown GPU backend 'opencl'"):
        provision.install("opencl")


def test_installed_engine_is_found_and_not_rebuilt(monkeypatch, data_dir):
    folder = provision.install_folder("cpu")
    binary = _fake_engine(folder)
    (folder / provision.FACTS_FILE).write_text(json.dumps({
        "binary": str(binary), "source_package": provision.SOURCE_PACKAGE,
        "source_version": provision.SOURCE_VERSION, "backend": "cpu", "build_flags": [],
    }))

    def no_build(*_a, **_k):
        raise AssertionError("a second install must not build")

    monkeypatch.setattr(provision.subprocess, "Popen", no_build)
    lines = []
    build = provision.install("cpu", progress=lambda line, _f: lines.append(line))
    assert build.binary == binary
    assert "already installed" in lines[-1]


def test_half_written_install_is_not_taken_for_an_engine(data_dir):
    folder = provision.install_folder("cpu")
    _fake_engine(folder)
    (folder / provision.FACTS_FILE).write_text("{not json")
    assert provision.installed("cpu") is None


def test_discovery_lists_every_source(monkeypatch, data_dir, tmp_path):
    prov = provision.install_folder("cpu")
    prov_bin = _fake_engine(prov)
    (prov / provision.FACTS_FILE).write_text(json.dumps({
        "binary": str(prov_bin), "source_package": "x", "source_version": "1", "backend": "cpu",
    }))
    _fake_engine(tmp_path / "bin", version="9.9 (build 9)")
    (tmp_path / "bin" / "libggml-vulkan.so").write_bytes(b"")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    configured = _fake_engine(tmp_path / "mine")
    found = discovery.find_engines(configured)
    by_source = {e.source: e for e in found}
    assert list(by_source) == ["configured", "provisioned", "path"]
    assert by_source["path"].version == "9.9 (build 9)"
    assert by_source["path"].backend == "vulkan"
    assert all(e.usable for e in found)


def test_discovery_explains_broken_engines(data_dir, tmp_path):
    missing = discovery.find_engines(tmp_path / "nope" / "llama-server")
    assert "does not exist" in missing[0].problem
    not_exec = tmp_path / "llama-server"
    not_exec.write_text("#!/bin/sh\n")
    found = discovery.find_engines(not_exec)
    assert "not executable" in found[0].problem
    best = discovery.best_engine(not_exec)
    assert best is None or best.source != "configured"


@pytest.mark.engine
def test_second_real_install_takes_seconds(engine):
    """The provisioned engine is found again without building (the CLI, as a user runs it)."""
    start = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", "engine", "install"],
        capture_output=True, text=True, timeout=120,
    )
    took = time.monotonic() - start
    assert out.returncode == 0, out.stderr
    assert "already installed" in out.stdout
    assert took < 10
    facts = provision.installed("cpu")
    assert facts is not None and facts.sha256 == provision.sha256_of(facts.binary)
    assert facts.version_text.startswith("version:")


@pytest.mark.engine
def test_engine_list_shows_the_provisioned_engine(engine):
    out = subprocess.run(
        [sys.executable, "-m", "draftwise.cli.main", "engine", "list", "--json"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    prov = [r for r in rows if r["source"] == "provisioned"]
    assert prov and prov[0]["backend"] == "cpu" and prov[0]["version"].startswith("0.6.0")
