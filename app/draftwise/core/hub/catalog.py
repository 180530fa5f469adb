"""The curated starters and the drafters known to pair with a model family: data only.

A starter names a **family** (what it is, what it is good for, which quant), the
**publishers** whose repositories may hold its GGUF files, and a **hint**: the words the hub's
search is asked. The exact repository and file come from the hub's own listing at the time
(core/hub/starters.py), and each is judged from its own header before it is offered, so a
renamed file never leads to a 404 and a file without MTP tensors is never called MTP. The
sizes here only order the list when the hub cannot be reached (the quant's published size,
rounded); online, the judged header decides fit and speed.

Families that draft themselves come first in the data: Qwen3.5 with its MTP head (0.8B to 9B),
Qwen3.6 27B and 35B-A3B with the MTP head, and Gemma 4 with its MTP assistant. gpt-oss-20b (no
drafter) and Gemma 3 4B (with Gemma 3 270M as its draft model) stay where they serve a
machine better. The drafter of a family without MTP is downloaded into the model's folder,
where the resolver looks for companions; pairs are families that share a tokenizer (the
engine's rule still checks each pair: core/speculation/pairing.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from draftwise.core.hub.files import Drafting, RemoteModel
from draftwise.core.machine import speed
from draftwise.core.machine.hardware import GB
from draftwise.core.messages import Message, msg


@dataclass(frozen=True)
class Drafter:
    repo: str
    quant: str


@dataclass(frozen=True)
class Starter:
    title: str  # the family and size as people name it: "Qwen3.5 0.8B"
    hint: str  # what the hub's search is asked; a repository's name contains it
    quant: str
    about: Message
    drafts: Drafting  # what its file must show to be offered (MTP: the head's tensors really there)
    size: int  # about the quant's bytes (offline order and memory filter only)
    active: int = 0  # about the bytes a token reads (offline estimate only; 0: the whole file)
    vocab: int = 0
    drafter: Drafter | None = None  # a family draft model from another repository
    publishers: tuple[str, ...] = ()  # whose repositories, in order of trust
    # What its file's header must say to be offered under its title (core/hub/starters.py
    # `of_its_size`): the architecture, the parameter count the title names, and the blocks of
    # the model proper (without an MTP head's) where the published config is at hand (the
    # corpus's geometries: app/draftwise/testing/corpus); None: the count alone decides.
    arch: str = ""
    params: int = 0
    blocks: int | None = None

    @property
    def name(self) -> str:
        return self.title

    @property
    def min_memory(self) -> int:
        """RAM + GPU memory it wants to run comfortably offline: the weights, a context and
        the system beside them (online the planner decides from the header)."""
        return int(self.size * 1.25) + 2 * GB

    def workload(self) -> speed.Workload:
        return speed.Workload(self.active or self.size, self.size, self.vocab, self.quant)


QWEN25_DRAFT = Drafter("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "Q8_0")
GEMMA3_DRAFT = Drafter("unsloth/gemma-3-270m-it-GGUF", "Q8_0")
_MB = 1_000_000
_B = 1_000_000_000
QWEN35_VOCAB, GEMMA_VOCAB, GPT_OSS_VOCAB = 248_320, 262_144, 201_088
# Who publishes GGUF conversions people trust, in the order a repository is taken.
PUBLISHERS = ("unsloth", "Qwen", "ggml-org", "google", "bartowski", "lmstudio-community", "openai")

# Sizes: Q4_K_M (MXFP4 for gpt-oss) as published, rounded; the corpus's real geometries
# (app/draftwise/testing/corpus) give the exact ones for 0.8B, 27B, 35B-A3B, Gemma 4 and gpt-oss.
# Active: a mixture of experts reads only its used experts (Qwen3.6-35B-A3B: 3B of 35B).
# Blocks: the published config.json's num_hidden_layers (text_config), as the corpus family
# modules cite them: Qwen3.5-0.8B 24, Qwen3.5/3.6-35B-A3B 40, gemma-4-26B-A4B-it 30,
# gpt-oss-20b 24, gemma-3-4b-it 34. Qwen3.5 2B, 4B, 9B and Qwen3.6 27B (whose config the corpus
# does not hold) are checked by their architecture and parameter count only.
STARTERS: tuple[Starter, ...] = (
    Starter("Qwen3.5 0.8B", "Qwen3.5-0.8B", "Q4_K_M",
            msg("Tiny and quick, and drafts its own next words (MTP): fine on any computer."), Drafting.MTP,
            size=560 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35", params=800 * _MB, blocks=24),
    Starter("Qwen3.5 2B", "Qwen3.5-2B", "Q4_K_M",
            msg("Small and quick, drafts its own next words (MTP): everyday questions."), Drafting.MTP,
            size=1_350 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35", params=2 * _B),
    Starter("Qwen3.5 4B", "Qwen3.5-4B", "Q4_K_M",
            msg("A good all-rounder that drafts its own next words (MTP)."), Drafting.MTP,
            size=2_750 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35", params=4 * _B),
    Starter("Qwen3.5 9B", "Qwen3.5-9B", "Q4_K_M",
            msg("Stronger answers for 16 GB computers; drafts its own next words (MTP)."), Drafting.MTP,
            size=5_700 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35", params=9 * _B),
    Starter("Qwen3.6 27B", "Qwen3.6-27B", "Q4_K_M",
            msg("Strong answers; wants 24 GB or a big GPU; drafts its own next words (MTP)."), Drafting.MTP,
            size=16_800 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35", params=27 * _B),
    Starter("Qwen3.6 35B-A3B", "Qwen3.6-35B-A3B", "Q4_K_M",
            msg("A large mixture of experts that reads only 3B a word: quick for its size (MTP)."), Drafting.MTP,
            size=21_200 * _MB, active=1_900 * _MB, vocab=QWEN35_VOCAB, publishers=PUBLISHERS, arch="qwen35moe",
            params=35 * _B, blocks=40),
    Starter("Gemma 4 26B-A4B", "gemma-4-26B-A4B-it", "Q4_K_M",
            msg("Google's Gemma 4 with its MTP assistant: good writing, many languages."), Drafting.MTP_ASSISTANT,
            size=16_900 * _MB, active=2_600 * _MB, vocab=GEMMA_VOCAB, publishers=PUBLISHERS, arch="gemma4",
            params=26 * _B, blocks=30),
    Starter("gpt-oss 20B", "gpt-oss-20b", "MXFP4",
            msg("OpenAI's open model: reasons step by step; a mixture of experts."), Drafting.NONE,
            size=12_100 * _MB, active=2_100 * _MB, vocab=GPT_OSS_VOCAB, publishers=PUBLISHERS, arch="gpt-oss",
            params=20 * _B, blocks=24),
    Starter("Gemma 3 4B", "gemma-3-4b-it", "Q4_K_M",
            msg("Google's Gemma 3 with its small draft model: good writing, many languages."), Drafting.DRAFT,
            size=2_489 * _MB, vocab=GEMMA_VOCAB, drafter=GEMMA3_DRAFT, publishers=PUBLISHERS, arch="gemma3",
            params=4 * _B, blocks=34),
)

# Repositories whose models pair with a drafter of the same family (same tokenizer).
_FAMILIES: tuple[tuple[re.Pattern[str], Drafter], ...] = (
    (re.compile(r"qwen2\.5-(coder-)?(1\.5|3|7|14|32|72)b", re.IGNORECASE), QWEN25_DRAFT),
    (re.compile(r"gemma-3-(1|4|12|27)b", re.IGNORECASE), GEMMA3_DRAFT),
)

DRAFTER_OFFER = msg("Get the draft model too — usually 1.5–2× faster, same answers.")


def rate_words(tokens_per_s: float) -> str:
    """12.4 -> "12", 3.46 -> "3.5", 0.84 -> "0.8": the figure people read, not its noise."""
    return f"{tokens_per_s:.0f}" if tokens_per_s >= 10 else f"{tokens_per_s:.1f}"


def speed_sentence(estimate: speed.Estimate) -> Message:
    """How fast a model would write here, in tokens (what the chat pane measures after)."""
    rate = rate_words(estimate.tokens_per_s)
    if estimate.readable:
        return msg("About {rate} tokens a second here.", rate=rate)
    return msg("Slow here: about {rate} tokens a second, slower than most people read.", rate=rate)


def speed_details(estimate: speed.Estimate, *, drafter: bool = False) -> list[Message]:
    """The tooltip's sentences: where it would run, what a token is, how sure the figure is,
    and (`drafter`) that the draft model's help is not counted."""
    where = {"gpu": msg("It would run on the graphics card."),
             "split": msg("It would run partly on the graphics card, the rest on the processor."),
             "cpu": msg("It would run on the processor.")}[estimate.device]
    out = [where, msg("A token is a piece of a word: in English about three quarters of a word.")]
    if drafter:
        out.append(msg("Counted without the draft model; with it, replies usually come faster."))
    if not estimate.certain:
        out.append(msg("A first guess from this computer's memory speed; measured with the engine once it "
                       "is installed."))
    return out


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
