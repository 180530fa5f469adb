"""Starter models for a first launch, and the drafters known to pair with a model family.

A short list a person can trust on day one, sized to the machine, each with a drafter so
that "MTP: auto" has something to find. Entries name a repository and a quant; the file is
picked from the repository's own listing at download time, so a renamed file does not break
the list. The drafter is downloaded into the model's folder, where the resolver looks for
companions. Pairs are families that share a tokenizer (the engine still checks each pair:
core/speculation/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from draftwise.core.hub.files import RemoteModel
from draftwise.core.machine.hardware import GB, Machine
from draftwise.core.messages import Message, msg


@dataclass(frozen=True)
class Drafter:
    repo: str
    quant: str


@dataclass(frozen=True)
class Starter:
    repo: str
    quant: str
    min_memory: int  # RAM + GPU memory it wants to run comfortably
    about: Message
    drafter: Drafter | None = None


QWEN25_DRAFT = Drafter("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "Q8_0")
GEMMA3_DRAFT = Drafter("unsloth/gemma-3-270m-it-GGUF", "Q8_0")

STARTERS: tuple[Starter, ...] = (
    Starter("Qwen/Qwen2.5-1.5B-Instruct-GGUF", "Q4_K_M", 4 * GB,
            msg("Small and quick: everyday questions on almost any computer."), QWEN25_DRAFT),
    Starter("unsloth/gemma-3-4b-it-GGUF", "Q4_K_M", 8 * GB,
            msg("Google's Gemma 3: good writing, many languages."), GEMMA3_DRAFT),
    Starter("Qwen/Qwen2.5-7B-Instruct-GGUF", "Q4_K_M", 12 * GB,
            msg("A capable all-rounder for 16 GB computers."), QWEN25_DRAFT),
    Starter("Qwen/Qwen2.5-Coder-7B-Instruct-GGUF", "Q4_K_M", 12 * GB,
            msg("Writes and explains code."), QWEN25_DRAFT),
    Starter("Qwen/Qwen2.5-14B-Instruct-GGUF", "Q4_K_M", 20 * GB,
            msg("Stronger answers; wants 24 GB or a big GPU."), QWEN25_DRAFT),
)

# Repositories whose models pair with a drafter of the same family (same tokenizer).
_FAMILIES: tuple[tuple[re.Pattern[str], Drafter], ...] = (
    (re.compile(r"qwen2\.5-(coder-)?(1\.5|3|7|14|32|72)b", re.IGNORECASE), QWEN25_DRAFT),
    (re.compile(r"gemma-3-(1|4|12|27)b", re.IGNORECASE), GEMMA3_DRAFT),
)

DRAFTER_OFFER = msg("Get the draft model too — usually 1.5–2× faster, same answers.")


def starters_for(machine: Machine) -> list[Starter]:
    """The starters this machine can run, the largest it runs comfortably first."""
    memory = machine.ram_total + sum(g.total_bytes for g in machine.discrete_gpus)
    fitting = [s for s in STARTERS if s.min_memory <= memory]
    return sorted(fitting or list(STARTERS[:1]), key=lambda s: -s.min_memory)


def drafter_for(repo: str, file_name: str = "") -> Drafter | None:
    """A known drafter for a model of this repository, unless it is the drafter itself."""
    for pattern, drafter in _FAMILIES:
        if pattern.search(repo) or pattern.search(file_name):
            return None if drafter.repo.lower() == repo.lower() else drafter
    return None


def pick(models: list[RemoteModel], quant: str) -> RemoteModel | None:
    """The model of that quant in a listing (the first non-drafter when none has it)."""
    runnable = [m for m in models if not m.drafter]
    return next((m for m in runnable if (m.quant or "").upper() == quant.upper()), None) or (
        runnable[0] if runnable else None
    )
