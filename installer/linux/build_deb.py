"""Build draftwise_<version>_<arch>.deb from the PyInstaller onedir, with dpkg-deb.

    python installer/linux/build_deb.py --app dist/Draftwise --out dist

Layout: the onedir in /opt/draftwise, /usr/bin/draftwise-gui -> /opt/draftwise/Draftwise, a
desktop entry (app.draftwise.Draftwise.desktop) and the icon in the hicolor theme. Depends
names the Debian packages of the system libraries the bundle links but does not carry
(found with readelf + dpkg -S on the build machine), so apt pulls in the X11/GL pieces.
No maintainer scripts: dpkg's triggers refresh the desktop and icon caches.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "resources" / "icons"
PACKAGE = "draftwise"
# The desktop file is named after QGuiApplication.desktopFileName (gui.py sets "draftwise"),
# so Wayland compositors match the window to its entry and icon.
DESKTOP_ID = "draftwise"
EXE = "Draftwise"
MAINTAINER = "Draftwise maintainers <maintainers@draftwise.app>"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
# glibc's own libraries: covered by the libc6 dependency.
GLIBC = re.compile(r"^(libc|libm|libdl|librt|libpthread|libresolv|libutil|libanl|libmvec|ld-linux[-\w]*)\.so")
# Used when readelf or dpkg cannot tell (another distribution building the .deb).
FALLBACK_DEPENDS = [
    "libgl1", "libegl1", "libfontconfig1", "libdbus-1-3", "libxkbcommon-x11-0",
    "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0",
    "libxcb-render-util0", "libxcb-shape0", "libxcb-xkb1", "libgomp1",
]

# Version names the spec the entry follows: every key here is 1.0's; 1.5 is unknown to the
# desktop-file-validate of Debian 12 (desktop-file-utils 0.26), which refuses the file.
DESKTOP = """[Desktop Entry]
Type=Application
Version=1.4
Name=Draftwise
GenericName=Local LLM launcher
Comment=Run a local LLM with llama.cpp, speculative decoding and MTP set up for you
Exec=/usr/bin/draftwise-gui %F
Icon=draftwise
Terminal=false
Categories=Utility;
Keywords=llm;llama;gguf;ai;
StartupNotify=true
StartupWMClass=Draftwise
"""

COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Draftwise

Files: *
License: MIT
Comment: /opt/draftwise bundles Python, Qt (LGPL-3), PySide6 (LGPL-3) and llama.cpp (MIT);
 their licenses are in the bundle.
"""


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def deb_arch() -> str:
    if shutil.which("dpkg"):
        out = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def missing_libraries(tree: Path) -> set[str]:
    """Shared libraries the bundle's ELF files need but the bundle does not carry."""
    if not shutil.which("readelf"):
        return set()
    present = {p.name for p in tree.rglob("*") if p.is_file() or p.is_symlink()}
    needed: set[str] = set()
    elves = [p for p in tree.rglob("*") if p.is_file() and not p.is_symlink() and _is_elf(p)]
    for i in range(0, len(elves), 64):
        out = subprocess.run(["readelf", "-dW", *map(str, elves[i:i + 64])],
                             capture_output=True, text=True, errors="replace")
        needed.update(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))
    return {n for n in needed if n not in present and not GLIBC.match(n)}


def packages_for(libs: set[str]) -> list[str] | None:
    """Debian packages holding `libs` on this machine; None when that cannot be found."""
    if not libs:
        return []
    if not (shutil.which("ldconfig") or Path("/sbin/ldconfig").exists()) or not shutil.which("dpkg"):
        return None
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    # ldconfig lists every architecture; take this machine's (x86-64 / AArch64 flags).
    flag = {"x86_64": "x86-64", "aarch64": "AArch64"}.get(platform.machine())
    paths: dict[str, str] = {}
    for line in cache.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)", line)
        if m and m.group(1) in libs and (flag is None or flag in m.group(2)):
            paths.setdefault(m.group(1), m.group(3))
    if len(paths) < len(libs):
        return None
    # dpkg knows each file by the path its package shipped (/lib or /usr/lib after usrmerge).
    queries: set[str] = set()
    for path in paths.values():
        for candidate in (path, os.path.realpath(path)):
            queries.add(candidate)
            if candidate.startswith("/lib/"):
                queries.add("/usr" + candidate)
            elif candidate.startswith("/usr/lib/"):
                queries.add(candidate[4:])
    out = subprocess.run(["dpkg", "-S", *sorted(queries)], capture_output=True, text=True)
    found = {}
    for line in out.stdout.splitlines():
        pkg, _, path = line.partition(": ")
        if path and "," not in pkg:
            found[os.path.basename(path)] = pkg.split(":", 1)[0]
    pkgs = set()
    for lib, path in paths.items():
        pkg = found.get(lib) or found.get(os.path.basename(os.path.realpath(path)))
        if pkg is None:
            return None
        pkgs.add(pkg)
    return sorted(pkgs)


def glibc_version() -> str | None:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").split()[-1]
    except (ValueError, OSError, AttributeError):
        return None


def stage(app: Path, root: Path) -> None:
    opt = root / "opt" / PACKAGE
    shutil.copytree(app, opt, symlinks=True)
    (root / "usr" / "bin").mkdir(parents=True)
    os.symlink(f"/opt/{PACKAGE}/{EXE}", root / "usr" / "bin" / "draftwise-gui")
    apps = root / "usr" / "share" / "applications"
    apps.mkdir(parents=True)
    (apps / f"{DESKTOP_ID}.desktop").write_text(DESKTOP, encoding="utf-8")
    hicolor = root / "usr" / "share" / "icons" / "hicolor"
    for size in ICON_SIZES:
        src = ICONS / f"draftwise-{size}.png"
        if src.is_file():
            dest = hicolor / f"{size}x{size}" / "apps"
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / "draftwise.png")
    if (ICONS / "draftwise.svg").is_file():
        dest = hicolor / "scalable" / "apps"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ICONS / "draftwise.svg", dest / "draftwise.svg")
    doc = root / "usr" / "share" / "doc" / PACKAGE
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(COPYRIGHT, encoding="utf-8")


def normalize_modes(root: Path) -> None:
    """0755 for folders and executables, 0644 for the rest (the build tree's umask varies)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            p = Path(dirpath, d)
            if not p.is_symlink():
                p.chmod(0o755)
        for f in filenames:
            p = Path(dirpath, f)
            if p.is_symlink():
                continue
            executable = p.stat().st_mode & 0o111 or _is_elf(p) and ".so" not in p.name
            p.chmod(0o755 if executable else 0o644)
    root.chmod(0o755)


def installed_size_kib(root: Path) -> int:
    total = sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() or p.is_symlink())
    return (total + 1023) // 1024


def control(ver: str, arch: str, depends: list[str], size_kib: int) -> str:
    libc = glibc_version()
    deps = [f"libc6 (>= {libc})" if libc else "libc6", *depends]
    return (
        f"Package: {PACKAGE}\n"
        f"Version: {ver}\n"
        f"Architecture: {arch}\n"
        f"Maintainer: {MAINTAINER}\n"
        f"Installed-Size: {size_kib}\n"
        f"Depends: {', '.join(dict.fromkeys(deps))}\n"
        # The window is translated into Japanese; without a CJK font it shows boxes.
        "Recommends: fonts-noto-cjk\n"
        "Section: utils\n"
        "Priority: optional\n"
        "Homepage: https://draftwise.app\n"
        "Description: run a local LLM with speculative decoding set up for you\n"
        " Draftwise picks a GGUF model, finds its MTP head or a matching draft model,\n"
        " plans memory and context, and runs llama.cpp's llama-server with it.\n"
        " This package carries the app, Qt and a CPU build of llama-server in /opt/draftwise.\n"
    )


def build(app: Path, out_dir: Path, *, ver: str, arch: str, compress: str, work: Path) -> Path:
    if not (app / EXE).is_file():
        raise SystemExit(f"{app / EXE} not found: build the onedir first (packaging/build.py)")
    root = work / f"{PACKAGE}_{ver}_{arch}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    stage(app, root)
    missing = missing_libraries(root / "opt" / PACKAGE)
    depends = packages_for(missing)
    if depends is None:
        print(f"build_deb: cannot map {sorted(missing)} to packages here; using the default list")
        depends = FALLBACK_DEPENDS
    normalize_modes(root)
    debian = root / "DEBIAN"
    debian.mkdir(mode=0o755)
    (debian / "control").write_text(control(ver, arch, depends, installed_size_kib(root)), encoding="utf-8")
    (debian / "control").chmod(0o644)
    out_dir.mkdir(parents=True, exist_ok=True)
    deb = out_dir / f"{PACKAGE}_{ver}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", f"-Z{compress}", "--build", str(root), str(deb)],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(root, ignore_errors=True)
    return deb


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--app", default=str(ROOT / "dist" / EXE), help="the PyInstaller onedir")
    p.add_argument("--out", default=str(ROOT / "dist"))
    p.add_argument("--version", default=None)
    p.add_argument("--arch", default=None)
    p.add_argument("--compress", default="xz", choices=["xz", "gzip", "zstd", "none"])
    p.add_argument("--work", default=str(ROOT / "build" / "deb"))
    args = p.parse_args(argv)
    if not shutil.which("dpkg-deb"):
        print("dpkg-deb not found (Debian/Ubuntu: it is part of dpkg)", file=sys.stderr)
        return 1
    deb = build(Path(args.app).resolve(), Path(args.out).resolve(), ver=args.version or version(),
                arch=args.arch or deb_arch(), compress=args.compress, work=Path(args.work).resolve())
    print(f"build_deb: {deb} ({deb.stat().st_size / 1048576:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
