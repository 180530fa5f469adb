"""Packaging: the spec, the self-test, the tiny GGUF writer, ICU trimming and the installers.

Fast by default (a few seconds): nothing here runs PyInstaller except the `packaging`-marked
test at the end, which builds the real onedir and runs its self-test (about a minute); it
runs only with DRAFTWISE_PACKAGING_TESTS=1.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "packaging" / "draftwise.spec"
ICONS = ROOT / "resources" / "icons"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def build_py():
    return _load("draftwise_packaging_build", ROOT / "packaging" / "build.py")


@pytest.fixture(scope="module")
def build_deb():
    return _load("draftwise_build_deb", ROOT / "installer" / "linux" / "build_deb.py")


# ------------------------------------------------------------------ the spec
def test_spec_parses_and_names_what_it_needs():
    text = SPEC.read_text(encoding="utf-8")
    ast.parse(text)  # a spec is Python
    for needle in (
        'BUNDLE_ID = "app.draftwise.Draftwise"', '"NSHighResolutionCapable": True', "console=False",
        "upx=False", "strip=STRIP", '"PySide6.QtWebEngineCore"', '"PySide6.QtQml"', '"PySide6.QtQuick"',
        '"PySide6.QtPdf"', '"PySide6.QtMultimedia"', '"numpy"', '"draftwise.testing"',
        "DRAFTWISE_BUNDLE_ENGINE", "version=version_info",
    ):
        assert needle in text, needle


def test_spec_references_exist():
    for name in ("draftwise.svg", "draftwise.png", "draftwise.ico", "draftwise.icns", "draftwise-256.png"):
        assert (ICONS / name).is_file(), name
    assert (ROOT / "pyproject.toml").is_file()
    assert (ROOT / "app" / "draftwise" / "gui.py").is_file()
    assert (ROOT / "app" / "draftwise" / "selftest.py").is_file()


def test_icon_files_are_what_they_say(build_py):
    ico = (ICONS / "draftwise.ico").read_bytes()
    reserved, kind, count = struct.unpack_from("<HHH", ico)
    assert (reserved, kind) == (0, 1) and count >= 5
    icns = (ICONS / "draftwise.icns").read_bytes()
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    assert (ICONS / "draftwise.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_windows_version_numbers(build_py):
    assert build_py.windows_version("0.1.0") == "0.1.0.0"
    assert build_py.windows_version("1.2.3rc4") == "1.2.3.0"
    assert build_py.windows_version("2.0") == "2.0.0.0"


# ------------------------------------------------------------------ resources
def test_resources_found_from_source(monkeypatch):
    from draftwise import resources

    resources.clear_cache()
    assert resources.resource_root() == ROOT / "resources"
    assert resources.icon_path() == ROOT / "resources" / "icons" / "draftwise.png"
    assert resources.icon_path("png", 64) == ROOT / "resources" / "icons" / "draftwise-64.png"
    assert resources.find_resource("no-such-file") is None


def test_resources_follow_meipass_and_override(monkeypatch, tmp_path):
    from draftwise import resources

    frozen = tmp_path / "frozen"
    (frozen / "resources" / "icons").mkdir(parents=True)
    (frozen / "resources" / "icons" / "draftwise.png").write_bytes(b"png")
    monkeypatch.setattr(sys, "_MEIPASS", str(frozen), raising=False)
    resources.clear_cache()
    try:
        assert resources.resource_root() == frozen / "resources"
        assert resources.icon_path() == frozen / "resources" / "icons" / "draftwise.png"
        own = tmp_path / "own"
        own.mkdir()
        monkeypatch.setenv(resources.ENV_VAR, str(own))
        resources.clear_cache()
        assert resources.resource_root() == own
    finally:
        monkeypatch.delattr(sys, "_MEIPASS")
        monkeypatch.delenv(resources.ENV_VAR, raising=False)
        resources.clear_cache()


# ------------------------------------------------------------------ the tiny GGUF without numpy
def test_tiny_llama_reads_back(tmp_path):
    from draftwise.core.check import check_models
    from draftwise.core.gguf import reader as gguf

    path = check_models.write_llama(tmp_path / "t.gguf", name="draftwise-selftest")
    info = gguf.read_model(path)
    assert (info.architecture, info.block_count, info.embedding_length) == ("llama", 2, 64)
    assert info.tensor_count == 3 + 9 * 2
    assert info.tokenizer.vocab_size == 3 + 256 + 64
    assert info.sidecar_kind is None and not info.missing_shards
    # The layout equals tinymodels.TinyModel(): tests/test_check_models.py checks it.


def test_test_models_are_written_without_numpy_or_gguf_py(tmp_path):
    """What the frozen app runs: numpy and gguf-py are not there."""
    code = (
        "import sys; sys.modules['numpy'] = None; sys.modules['gguf'] = None\n"
        "from pathlib import Path\n"
        "from draftwise import selftest  # noqa: F401\n"
        "from draftwise.core.check import check_models, machine_check  # noqa: F401\n"
        "from draftwise.core.gguf import reader as gguf  # noqa: F401\n"
        f"d = Path({str(tmp_path)!r})\n"
        "for p in (check_models.write_llama(d / 'l.gguf'), check_models.write_mtp(d / 'm.gguf')):\n"
        "    print(gguf.read_model(p).architecture)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["llama", "glm4moe"]


# ------------------------------------------------------------------ the self-test, in-process
def test_selftest_passes_from_source():
    from draftwise import selftest
    from draftwise.gui import create_window

    out = io.StringIO()
    code = selftest.run(["--engine", "any"], window_factory=create_window, out=out)
    text = out.getvalue()
    assert code == 0, text
    assert text.rstrip().endswith(selftest.PASSED)
    for step in ("Window:", "Imports:", "Resources:", "Text:", "Test model:", "Plan:"):
        assert step in text
    if "(cpu, provisioned)" in text:  # an engine is installed: it was launched and stopped
        assert "ok  Engine start:" in text and "nothing left running" in text


def test_selftest_fails_without_bundled_engine(tmp_path):
    from draftwise import selftest
    from draftwise.gui import create_window

    out = io.StringIO()
    log = tmp_path / "selftest.log"
    code = selftest.run(["--engine", "bundled", "--log", str(log), "--unknown-flag"],
                        window_factory=create_window, out=out)
    assert code == 1
    assert "no usable bundled engine" in out.getvalue()
    assert out.getvalue().rstrip().splitlines()[-1].startswith(selftest.FAILED)
    assert log.read_text(encoding="utf-8") == out.getvalue()


def test_selftest_window_step_fails_when_the_window_cannot_be_built():
    """No fallback window: a factory that raises fails the Window step and the verdict."""
    from draftwise import selftest

    def broken_window():
        raise RuntimeError("the main window could not be built")

    out = io.StringIO()
    code = selftest.run(["--engine", "none"], window_factory=broken_window, out=out)
    text = out.getvalue()
    assert code == 1, text
    window_line = next(line for line in text.splitlines() if " Window: " in line)
    assert "!! " in window_line and "the main window could not be built" in window_line
    assert text.rstrip().splitlines()[-1].startswith(selftest.FAILED)
    assert "Window" in text.rstrip().splitlines()[-1]


# ------------------------------------------------------------------ ICU trimming (Linux wheels)
def test_icu_trim_keeps_what_qt_uses(build_py):
    import PySide6

    libs = sorted((Path(PySide6.__file__).parent / "Qt" / "lib").glob("libicudata.so.[0-9]*"))
    if not libs:
        pytest.skip("this PySide6 carries no ICU (not a Linux wheel)")
    raw = libs[0].read_bytes()
    major = libs[0].name.rsplit(".", 1)[-1]
    off, size = build_py.elf_symbol(raw, f"icudt{major}_dat".encode())
    package, kept, dropped = build_py.trim_icu_package(raw[off:off + size])
    assert dropped > 1000 and kept > 500
    assert len(package) < size * 0.6

    def toc(dat: bytes) -> dict[str, bytes]:
        hs = struct.unpack_from("<H", dat, 0)[0]
        n = struct.unpack_from("<I", dat, hs)[0]
        entries = []
        for i in range(n):
            no, do = struct.unpack_from("<II", dat, hs + 4 + 8 * i)
            assert (hs + do) % 16 == 0
            entries.append((dat[hs + no:dat.index(b"\0", hs + no)].decode(), do))
        names = [e[0] for e in entries]
        assert names == sorted(names)  # ICU finds items by binary search
        offs = sorted(d for _, d in entries) + [len(dat) - hs]
        nxt = dict(zip(offs, offs[1:], strict=False))
        return {name: dat[hs + d:hs + nxt[d]].rstrip(b"\0") for name, d in entries}

    before, after = toc(raw[off:off + size]), toc(package)
    prefix = f"icudt{major}l/"
    for needed in ("cnvalias.icu", "coll/root.res", "coll/de.res", "zoneinfo64.res", "root.res",
                   "lang/root.res", "ibm-943_P15A-2003.cnv"):
        assert prefix + needed in after, needed
        assert after[prefix + needed] == before[prefix + needed]
    assert prefix + "lang/de.res" not in after and prefix + "brkitr/root.res" in after


# ------------------------------------------------------------------ installers
def _fake_onedir(root: Path, exe: str) -> Path:
    app = root / "Draftwise"
    (app / "_internal" / "engine").mkdir(parents=True)
    (app / exe).write_bytes(b"#!/bin/sh\necho draftwise\n")
    (app / exe).chmod(0o755)
    (app / "_internal" / "engine" / "engine.json").write_text("{}", encoding="utf-8")
    return app


@pytest.mark.skipif(shutil.which("makensis") is None, reason="makensis not installed (apt-get install nsis)")
def test_nsis_script_compiles(tmp_path):
    app = _fake_onedir(tmp_path, "Draftwise.exe")
    out = tmp_path / "Draftwise-9.9.9-setup.exe"
    subprocess.run(
        ["makensis", "-V2", "-WX", "-DVERSION=9.9.9", f"-DSRCDIR={app}", f"-DOUTFILE={out}",
         str(ROOT / "installer" / "windows" / "draftwise.nsi")],
        check=True, capture_output=True, text=True,
    )
    data = out.read_bytes()
    assert data[:2] == b"MZ" and b"Nullsoft" in data


def test_nsis_script_is_per_user():
    text = (ROOT / "installer" / "windows" / "draftwise.nsi").read_text(encoding="utf-8")
    for needle in ("RequestExecutionLevel user", r"$LOCALAPPDATA\Programs\${APPNAME}", "WriteUninstaller",
                   "$SMPROGRAMS", "$DESKTOP", "VIProductVersion", "HKCU"):
        assert needle in text, needle
    assert "HKLM" not in text


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb not installed")
def test_deb_builds_with_fields(tmp_path, build_deb):
    app = _fake_onedir(tmp_path, "Draftwise")
    deb = build_deb.build(app, tmp_path / "out", ver="9.9.9", arch="amd64", compress="none",
                          work=tmp_path / "work")
    assert deb.name == "draftwise_9.9.9_amd64.deb"
    info = subprocess.run(["dpkg-deb", "-I", str(deb)], check=True, capture_output=True, text=True).stdout
    for field in ("Package: draftwise", "Version: 9.9.9", "Architecture: amd64", "Depends: libc6",
                  "Recommends: fonts-noto-cjk", "Installed-Size:", "Maintainer:", "Description:"):
        assert field in info, field
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], check=True, capture_output=True, text=True).stdout
    assert "./usr/bin/draftwise-gui -> /opt/draftwise/Draftwise" in listing
    assert "./usr/share/applications/draftwise.desktop" in listing
    assert "./usr/share/icons/hicolor/256x256/apps/draftwise.png" in listing
    assert "./usr/share/icons/hicolor/scalable/apps/draftwise.svg" in listing
    assert "-rwxr-xr-x root/root" in next(ln for ln in listing.splitlines() if ln.endswith("/opt/draftwise/Draftwise"))


def test_desktop_entry_is_valid(tmp_path, build_deb):
    path = tmp_path / "draftwise.desktop"
    path.write_text(build_deb.DESKTOP, encoding="utf-8")
    lines = dict(ln.split("=", 1) for ln in build_deb.DESKTOP.splitlines() if "=" in ln)
    assert lines["Exec"].startswith("/usr/bin/draftwise-gui") and lines["Icon"] == "draftwise"
    if shutil.which("desktop-file-validate") is None:
        pytest.skip("desktop-file-validate not installed (apt-get install desktop-file-utils)")
    subprocess.run(["desktop-file-validate", str(path)], check=True)


def test_release_workflow_shape():
    import yaml  # comes with gguf (a dev dependency)
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    matrix = wf["jobs"]["build"]["strategy"]["matrix"]["include"]
    assert {m["os"] for m in matrix} == {"windows-2022", "macos-14", "ubuntu-24.04"}
    steps = wf["jobs"]["build"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "engine install" in runs and "packaging/build.py" in runs and "make_dmg.sh" in runs
    signing = [s for s in steps if "Sign" in s.get("name", "")]
    assert signing and all("HAVE_" in s["if"] for s in signing)


def test_dmg_script_refuses_off_macos(tmp_path):
    if sys.platform == "darwin":
        pytest.skip("on macOS the script would build a real image")
    out = subprocess.run(["bash", str(ROOT / "installer" / "macos" / "make_dmg.sh"), str(tmp_path / "X.app"),
                          str(tmp_path / "x.dmg")], capture_output=True, text=True)
    assert out.returncode == 2 and "needs macOS" in out.stderr


# ------------------------------------------------------------------ the real build (slow)
@pytest.mark.packaging
@pytest.mark.timeout(900)  # a PyInstaller build: minutes on 2 cores, past the 120 s default
@pytest.mark.skipif(os.environ.get("DRAFTWISE_PACKAGING_TESTS") != "1",
                    reason="builds the app with PyInstaller (about a minute); set DRAFTWISE_PACKAGING_TESTS=1")
def test_frozen_onedir_builds_and_passes_its_self_test(tmp_path, build_py):
    pytest.importorskip("PyInstaller")
    dist, work = tmp_path / "dist", tmp_path / "build" / "pyinstaller"
    code = build_py.main(["--engine", "auto", "--runs", "2", "--dist", str(dist), "--work", str(work)])
    report = (work.parent / "packaging-report.json").read_text(encoding="utf-8")
    assert code == 0, report
    assert '"passed": true' in report
    exe = build_py.executable(dist)
    assert exe.is_file()
    engines = build_py.engine_dirs(build_py.app_dir(dist))
    if engines:  # bundled: discovery must list it as such
        out = subprocess.run([str(exe), "--self-test", "--engine", "bundled"], capture_output=True, text=True,
                             env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, timeout=180)
        assert out.returncode == 0 and "(cpu, bundled)" in out.stdout, out.stdout + out.stderr


def test_a_plain_wheel_carries_icons_and_translations(tmp_path):
    """A non-editable install (pip install .) must still find the icon and the Japanese .qm:
    they travel as data files to <prefix>/share/draftwise/resources, where resources.py looks."""
    import zipfile

    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next(tmp_path.glob("draftwise-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    data = "draftwise-0.1.0.data/data/share/draftwise/resources/"
    assert data + "icons/draftwise.png" in names
    assert data + "i18n/draftwise_ja.qm" in names
