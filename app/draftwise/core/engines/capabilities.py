"""What a llama-server binary accepts: its flags and speculative types, from its `--help`.

Asked once per binary identity (path, size, mtime) and cached on disk, because `--help`
costs a process start and the window re-plans on every click.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import identity, paths, records
from draftwise.core.engines import provision
from draftwise.core.engines.spec_types import DRAFT_MTP
from draftwise.core.engines.spec_types import PINNED as PINNED_SPEC_TYPES

# Architectures whose MTP graph this engine runs (`LLM_GRAPH_TYPE_DECODER_MTP` built by the
# model class), read from the pinned source 11434; tests/test_capabilities.py re-derives it
# from the source tree when that is on disk. glm4 (dense) and exaone4 keep nextn tensors in
# the file but never run them, so they are not here.
MTP_ARCHS_11434 = frozenset({
    "bailingmoe3", "cohere2moe", "deepseek2", "deepseek32", "deepseek4", "glm-dsa", "glm4moe",
    "glm5-next", "hy_v3", "mimo2", "nemotron_h_moe", "qwen35", "qwen35moe", "qwen3next",
    "qwen4exp", "step35",
})

# The MTP graphs of 11434 that assert `n_layer_nextn == 1` (`graph_mtp` in src/models/<arch>.cpp:
# "... MTP currently only supports a single MTP block"): a file with two nextn layers aborts the
# engine at the first draft. glm5-next, hy_v3, mimo2 and step35 chain their heads instead.
MTP_ONE_NEXTN_11434 = frozenset({
    "bailingmoe3", "cohere2moe", "deepseek2", "deepseek32", "deepseek4", "glm-dsa", "glm4moe",
    "nemotron_h_moe", "qwen35", "qwen35moe", "qwen3next", "qwen4exp",
})
# MTP drafters that are models of their own architecture, run with `--spec-type draft-mtp -md
# FILE` beside a target of another one: the drafter's architecture -> the target's. Gemma 4's
# assistant reads the target's token embeddings and its KV cache (src/models/gemma4-assistant.cpp,
# llama-context.cpp `ctx_other`, common/speculative.cpp `is_mem_shared`).
MTP_ASSISTANTS_11434 = {"gemma4-assistant": "gemma4"}


def mtp_nextn_runs(arch: str | None, nextn: int | None) -> bool:
    """Whether the engine's MTP graph for `arch` runs a head of `nextn` layers (not asserting)."""
    return not (arch in MTP_ONE_NEXTN_11434 and (nextn or 0) != 1)


log = logging.getLogger(__name__)

_PARSER_VERSION = 2
_FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
_SPEC_TYPES = re.compile(r"^--spec-type\s+([\w,-]+)", re.M)


@dataclass(frozen=True)
class EngineCaps:
    """Flags and speculative types one binary accepts."""

    flags: frozenset[str]
    removed: frozenset[str]  # flags the binary still lists only to say they were removed
    spec_types: tuple[str, ...]
    mtp_archs: frozenset[str]

    def has_flag(self, flag: str) -> bool:
        return flag in self.flags and flag not in self.removed

    def has_spec_type(self, spec_type: str) -> bool:
        return spec_type in self.spec_types and self.has_flag("--spec-type")

    def runs_mtp(self, arch: str | None) -> bool:
        return bool(arch) and arch in self.mtp_archs and self.has_spec_type(DRAFT_MTP)

    def to_json(self) -> dict[str, object]:
        return {
            "flags": sorted(self.flags),
            "removed": sorted(self.removed),
            "spec_types": list(self.spec_types),
            "mtp_archs": sorted(self.mtp_archs),
        }


def parse_help(text: str, mtp_archs: frozenset[str] = MTP_ARCHS_11434) -> EngineCaps:
    """Read the flag table of `llama-server --help`.

    Each option starts a line with its names (`-md, --model-draft FNAME`); continuation lines
    are indented, so only the text before the description column is scanned for names.
    """
    flags: set[str] = set()
    removed: set[str] = set()
    current: list[str] = []
    for line in text.splitlines():
        if line.startswith("-"):
            # Names are padded after their commas ("-c,    --ctx-size N"); the description
            # starts after a run of spaces that does not follow a comma.
            names_part = re.split(r"(?<![,\s])\s{2,}", line, maxsplit=1)[0]
            current = [f for f in _FLAG.findall(names_part) if not f.startswith("---")]
            flags.update(current)
        if "has been removed" in line:
            removed.update(current)
    match = _SPEC_TYPES.search(text)
    spec_types = tuple(match.group(1).split(",")) if match else ()
    return EngineCaps(frozenset(flags), frozenset(removed), spec_types, mtp_archs)


def _cache_file() -> Path:
    return paths.cache_dir() / "engine-caps.json"


# The answers this process already has, by the cache file's key: each launch (the window
# re-plans on every change) would otherwise read and parse the cache file again.
_KNOWN: dict[str, EngineCaps] = {}


def capabilities(binary: Path, timeout: float = 30.0) -> EngineCaps:
    """The binary's capabilities; raises OSError/ValueError when it cannot be asked."""
    binary.stat()  # a binary that is not there raises here, before the cache is read
    # The parser's version is part of the key: a better parser must not reuse old answers.
    key = f"v{_PARSER_VERSION}|{identity.engine_build_key(binary)}"
    known = _KNOWN.get(key)
    if known is not None:
        return known
    caps = _asked_or_cached(binary, key, timeout)
    _KNOWN[key] = caps
    return caps


def _asked_or_cached(binary: Path, key: str, timeout: float) -> EngineCaps:
    """The answer in the cache file, else the binary's --help (written to the file)."""
    cache_path = _cache_file()
    cache: dict[str, dict] = {}
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
        hit = cache.get(key)
        if hit:
            return EngineCaps(
                frozenset(hit["flags"]), frozenset(hit["removed"]),
                tuple(hit["spec_types"]), frozenset(hit["mtp_archs"]),
            )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        cache = {}  # a missing or damaged cache is rebuilt below
    try:
        out = provision.ask_engine(binary, "--help", timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise OSError(f"{binary} --help did not finish within {timeout:.0f} s") from exc
    caps = parse_help(out.stdout + out.stderr)
    if not caps.flags:
        raise ValueError(f"{binary} --help printed no options; is it llama-server?")
    cache[key] = caps.to_json()
    try:
        records.write_atomic(cache_path, json.dumps(cache))
    except OSError as exc:
        # The cache only saves a process start; asking again next time is still correct.
        log.info("could not write the engine capability cache %s: %s", cache_path, exc)
    return caps


def pinned_caps() -> EngineCaps:
    """What the pinned engine (11434) accepts, for planning where no engine is installed."""
    flags = frozenset({
        "-m", "--model", "--host", "--port", "-c", "--ctx-size", "-np", "--parallel", "-ngl",
        "--n-gpu-layers", "--fit", "--fit-target", "--fit-ctx", "-ctk", "--cache-type-k", "-ctv",
        "--cache-type-v", "--n-cpu-moe", "--swa-full", "-lv", "--spec-type", "--spec-draft-model",
        "-md", "--model-draft", "--spec-draft-n-max", "--spec-draft-ngl", "--spec-draft-type-k",
        "--spec-draft-type-v", "--split-mode", "-sm", "--api-key",
        # The speed settings a measurement tries (engine_settings.FLAGS).
        "-t", "--threads", "-tb", "--threads-batch", "-fa", "--flash-attn", "-b", "--batch-size",
        "-ub", "--ubatch-size", "-nr", "--no-repack", "--repack",
    })
    return EngineCaps(flags, frozenset(), PINNED_SPEC_TYPES, MTP_ARCHS_11434)
