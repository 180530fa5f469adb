"""Engine capabilities: read from the real --help, and the recorded MTP list checked against the source."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from draftwise.core.engines import capabilities, provision
from draftwise.core.engines.capabilities import MTP_ARCHS_11434, parse_help, pinned_caps

HELP = """\
-c,    --ctx-size N                     size of the prompt context
-h,    --help, --usage                  print usage and exit
--spec-draft-model, -md, --model-draft FNAME
                                        draft model for speculative decoding (default: unused)
--spec-type none,draft-simple,draft-mtp,ngram-mod
                                        comma-separated list of types
--draft, --draft-n, --draft-max N       the argument has been removed. use --spec-draft-n-max
"""


def test_parse_help_reads_flags_types_and_removed_ones():
    caps = parse_help(HELP)
    assert caps.has_flag("-c") and caps.has_flag("--ctx-size")  # names padded after commas
    assert caps.has_flag("-md") and caps.has_flag("--spec-draft-model") and caps.has_flag("--model-draft")
    assert caps.spec_types == ("none", "draft-simple", "draft-mtp", "ngram-mod")
    assert "--draft-max" in caps.flags and not caps.has_flag("--draft-max")
    assert caps.runs_mtp("glm4moe") and not caps.runs_mtp("glm4") and not caps.runs_mtp(None)
    assert not parse_help(HELP.replace("draft-mtp,", "")).runs_mtp("glm4moe")


def test_capabilities_are_asked_once_then_known_until_the_binary_changes(tmp_path, monkeypatch):
    """The binary's --help once; the same process then answers from memory, a new one from
    the cache file; a rebuilt binary (another size or mtime) is asked again."""
    import os
    import subprocess

    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(capabilities, "_KNOWN", {})
    binary = tmp_path / "llama-server"
    binary.write_text("#!/bin/sh\n")
    asked: list[Path] = []

    def ask(path, *args, **kwargs):
        asked.append(path)
        return subprocess.CompletedProcess([str(path), *args], 0, HELP, "")

    monkeypatch.setattr(provision, "ask_engine", ask)
    reads: list[int] = []
    real_read = capabilities._asked_or_cached
    monkeypatch.setattr(capabilities, "_asked_or_cached", lambda *a: reads.append(1) or real_read(*a))
    first = capabilities.capabilities(binary)
    assert capabilities.capabilities(binary) is first and asked == [binary] and len(reads) == 1
    monkeypatch.setattr(capabilities, "_KNOWN", {})  # another process: the cache file answers
    assert capabilities.capabilities(binary) == first and asked == [binary] and len(reads) == 2
    os.utime(binary, ns=(10**18, 10**18))  # rebuilt
    assert capabilities.capabilities(binary) == first and asked == [binary, binary]


@pytest.mark.engine
def test_real_engine_capabilities_cover_the_pinned_facts(engine, tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(capabilities, "_KNOWN", {})  # asked here, not known from an earlier test
    real = capabilities.capabilities(engine.binary)
    pinned = pinned_caps()
    assert set(pinned.spec_types) == set(real.spec_types)
    assert pinned.flags <= real.flags, sorted(pinned.flags - real.flags)
    assert {"--draft", "--draft-max", "--draft-min"} <= real.removed
    # A second ask comes from the cache file, not a new process.
    monkeypatch.setattr(provision, "ask_engine", lambda *a, **k: pytest.fail("asked twice"))
    monkeypatch.setattr(capabilities, "_KNOWN", {})
    assert capabilities.capabilities(engine.binary) == real


def test_mtp_architectures_match_the_pinned_source(pinned_source):
    """The recorded list is what the source builds an MTP graph for (model classes whose
    code uses LLM_GRAPH_TYPE_DECODER_MTP, mapped to architecture names)."""
    src = pinned_source
    arch_names = dict(re.findall(r'\{\s*(LLM_ARCH_\w+),\s*"([^"]+)"', (src / "src/llama-arch.cpp").read_text()))
    mtp_classes = set()
    for f in (src / "src" / "models").glob("*.cpp"):
        text = f.read_text(errors="replace")
        if "LLM_GRAPH_TYPE_DECODER_MTP" in text:
            mtp_classes |= set(re.findall(r"(llama_model_\w+)::", text))
    pending: list[str] = []
    archs = set()
    for line in (src / "src" / "llama-model.cpp").read_text(errors="replace").splitlines():
        if m := re.search(r"case (LLM_ARCH_\w+):", line):
            pending.append(m.group(1))
        elif m := re.search(r"return new (llama_model_\w+)\(", line):
            if m.group(1) in mtp_classes:
                archs |= {arch_names[a] for a in pending if a in arch_names}
            pending = []
    assert archs == set(MTP_ARCHS_11434)
