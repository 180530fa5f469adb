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


def test_source_download_builds_no_build_dependency_from_source(monkeypatch, data_dir):
    """`--no-binary :all:` compiled CMake itself (27 min) before llama.cpp; only the sdist is source."""
    seen = []

    def fake_run(argv, _title, _say):
        seen.append(argv)
        raise provision.ProvisionError("stop here")

    monkeypatch.setattr(provision, "_run", fake_run)
    with pytest.raises(provision.ProvisionError, match="stop here"):
        provision._source_tree(lambda *_a: None)
    argv = seen[0]
    assert argv[argv.index("--no-binary") + 1] == provision.SOURCE_PACKAGE
    assert ":all:" not in argv


def test_one_build_installs_the_cpu_and_the_vulkan_engine(monkeypatch, data_dir, tmp_path):
    """One configure, one build; the CPU folder leaves the Vulkan module out."""
    if not provision.uses_backend_modules():
        pytest.skip("backend modules are built on x86 and ARM Linux only")
    source = tmp_path / "src"
    (source).mkdir()
    monkeypatch.setattr(provision, "_source_tree", lambda _say: source)
    monkeypatch.setattr(provision, "missing_tools", lambda _b: [])
    monkeypatch.setattr(provision, "_vulkan_flags", lambda: ["-DVulkan_INCLUDE_DIR=/x"])
    calls = []

    def fake_run(argv, _title, _say):
        calls.append(argv)
        if "--build" in argv:
            bin_dir = Path(argv[argv.index("--build") + 1]) / "bin"
            _fake_engine(bin_dir)
            for name in ("libggml-base.so", "libggml-cpu-haswell.so", "libggml-cpu-x64.so",
                         "libggml-vulkan.so", "libggml-rpc.so", "libllama.so"):
                (bin_dir / name).write_bytes(b"")
            (bin_dir / "ggml-rpc-server").write_bytes(b"")

    monkeypatch.setattr(provision, "_run", fake_run)
    builds = provision.install_many(["cpu", "vulkan"])
    assert [a[a.index("--build") + 1] for a in calls if "--build" in a] == [
        str(provision.work_dir() / f"build-{provision.SOURCE_VERSION}-cpu-vulkan")]
    configure = next(a for a in calls if "-S" in a)
    assert {"-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON", "-DGGML_RPC=ON",
            "-DGGML_VULKAN=ON"} <= set(configure)
    cpu = {p.name for p in builds["cpu"].folder.iterdir()}
    vulkan = {p.name for p in builds["vulkan"].folder.iterdir()}
    assert "libggml-vulkan.so" not in cpu and "libggml-cpu-haswell.so" in cpu
    assert "libggml-vulkan.so" in vulkan and "ggml-rpc-server" in vulkan
    assert "-DGGML_VULKAN=ON" not in builds["cpu"].build_flags


def test_old_vulkan_headers_get_a_sentence_with_the_fix(monkeypatch, data_dir):
    monkeypatch.delenv("DRAFTWISE_VULKAN_INCLUDE_DIR", raising=False)
    monkeypatch.setattr(provision, "_system_vulkan_headers_ok", lambda: False)
    with pytest.raises(provision.ProvisionError, match="vulkan-headers.sh"):
        provision._vulkan_flags()


def test_the_cuda_build_is_for_the_named_architectures_only(monkeypatch):
    """bench/cuda_check.py names the GPU's own architecture (90 on an H100); unnamed, ggml's
    own list of every architecture stands."""
    monkeypatch.delenv(provision.CUDA_ARCHITECTURES_ENV, raising=False)
    assert "-DCMAKE_CUDA_ARCHITECTURES" not in " ".join(provision._flags_for(["cuda"], modules=True))
    monkeypatch.setenv(provision.CUDA_ARCHITECTURES_ENV, "90")
    flags = provision._flags_for(["cuda"], modules=True)
    assert "-DGGML_CUDA=ON" in flags and flags[-1] == "-DCMAKE_CUDA_ARCHITECTURES=90"
    assert not any("CUDA_ARCH" in f for f in provision._flags_for([], modules=True))  # the CPU engine
    monkeypatch.setenv(provision.CUDA_ARCHITECTURES_ENV, "86,89")
    assert provision.cuda_flags() == ["-DCMAKE_CUDA_ARCHITECTURES=86;89"]
    monkeypatch.setenv(provision.CUDA_ARCHITECTURES_ENV, "90 -DX=1")
    with pytest.raises(provision.ProvisionError, match="not a list of CUDA architectures"):
        provision.cuda_flags()


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


def test_discovery_explains_broken_engines(data_dir, tmp_path, monkeypatch):
    # What else is installed is this test's choice, never this machine's: first nothing (an
    # empty PATH; data_dir has no provisioned engine), then one working engine on PATH.
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    missing = discovery.find_engines(tmp_path / "nope" / "llama-server")
    assert "does not exist" in missing[0].problem
    not_exec = tmp_path / "llama-server"
    not_exec.write_text("#!/bin/sh\n")
    found = discovery.find_engines(not_exec)
    assert [e.source for e in found] == ["configured"] and "not executable" in found[0].problem
    assert discovery.best_engine(not_exec) is None  # the broken file is never the best
    on_path = _fake_engine(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(on_path.parent))
    best = discovery.best_engine(not_exec)
    assert best is not None and (best.source, best.binary) == ("path", on_path)


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


def _archive(tmp_path: Path, members: list[tuple[str, bytes | None, str | None]]) -> Path:
    """A .tar.gz with (name, file bytes or None, symlink target or None) members."""
    import io
    import tarfile

    path = tmp_path / "src.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                info.size = len(data or b"")
                tar.addfile(info, io.BytesIO(data or b""))
    return path


@pytest.mark.parametrize("has_data_filter", [True, False], ids=["python-3.11.4+", "debian-3.11.2"])
def test_source_unpacks_safely_with_or_without_the_data_filter(tmp_path, monkeypatch, has_data_filter):
    """Debian 12's Python 3.11.2 has no `extractall(filter=...)` (3.11.4 added it): the
    source still unpacks, and a member escaping the folder is refused on both."""
    import inspect
    import tarfile

    if not has_data_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
        real = tarfile.TarFile.extractall

        takes_filter = "filter" in inspect.signature(real).parameters  # False on a real 3.11.2

        def old_extractall(self, path=".", members=None, *, numeric_owner=False, **kw):
            assert not kw, f"Python 3.11.2's extractall takes no {sorted(kw)}"
            extra = {"filter": "fully_trusted"} if takes_filter else {}
            return real(self, path, members, numeric_owner=numeric_owner, **extra)

        monkeypatch.setattr(tarfile.TarFile, "extractall", old_extractall)
    good = _archive(tmp_path, [("pkg/llama.cpp/CMakeLists.txt", b"project(x)", None),
                               ("pkg/link", None, "llama.cpp/CMakeLists.txt")])
    dest = tmp_path / "ok"
    dest.mkdir()
    with tarfile.open(good) as tar:
        provision.safe_extract(tar, dest)
    assert (dest / "pkg/llama.cpp/CMakeLists.txt").read_bytes() == b"project(x)"
    for bad in ([("../escape.txt", b"x", None)], [("pkg/out", None, "../../../etc/passwd")]):
        out = tmp_path / f"bad{len(list(tmp_path.iterdir()))}"
        out.mkdir()
        with tarfile.open(_archive(out, bad)) as tar, pytest.raises(tarfile.TarError):
            provision.safe_extract(tar, out / "dest")
        assert not (tmp_path / "escape.txt").exists()
