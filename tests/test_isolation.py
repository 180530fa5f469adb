"""The tests' own world: folders that are not the user's, a described machine, and the
provisioned engine still found there (conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from draftwise.core import paths
from draftwise.core.engines import discovery
from draftwise.core.machine import hardware


def test_folders_are_the_tests_own(tmp_path_factory):
    base = Path(tmp_path_factory.getbasetemp())
    for folder, real in ((paths.data_dir(), platformdirs.user_data_dir("draftwise", appauthor=False)),
                         (paths.config_dir(), platformdirs.user_config_dir("draftwise", appauthor=False)),
                         (paths.cache_dir(), platformdirs.user_cache_dir("draftwise", appauthor=False)),
                         (paths.models_dir(), None)):
        if real is not None:
            assert folder != Path(real)
        assert base in folder.parents, folder


def test_a_child_process_sees_the_same_folders():
    out = subprocess.run([sys.executable, "-c", "from draftwise.core import paths; import json; "
                          "print(json.dumps([str(paths.data_dir()), str(paths.config_dir()), str(paths.cache_dir())]))"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(out.stdout) == [str(paths.data_dir()), str(paths.config_dir()), str(paths.cache_dir())]


def test_every_probe_answers_the_described_machine(described_machine):
    assert hardware.inventory() is described_machine and hardware.inventory(Path("/x/llama-server")) is described_machine
    assert described_machine.described and described_machine.ram_available < described_machine.ram_total


@pytest.mark.real_machine
def test_real_machine_mark_asks_this_machine():
    # Not conftest's stand-in: the probe itself (tests of the probing use this mark).
    assert hardware.inventory.__module__ == hardware.__name__


@pytest.mark.engine
def test_the_provisioned_engine_is_found_in_the_tests_folders(engine):
    found = [e for e in discovery.find_engines() if e.source == "provisioned"]
    assert any(e.binary.resolve() == engine.binary.resolve() for e in found), found
    assert all(paths.engines_dir() in e.binary.parents for e in found)
