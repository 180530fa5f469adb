"""Starter models for a first launch, and the drafters known to pair with a model family.

A short list a person can trust on day one, sized to the machine, each with a drafter so
that "MTP: auto" has something to find. Entries name a repository and a quant; the file is
picked from the repository's own listing at download time, so a renamed file does not break
the list. The drafter is downloaded into the model's folder, where the resolver looks for
companions. Pairs are families that share a tokenizer (the engine still checks each pair:
core/speculation/).

Starters are offered by **speed on this computer** (core/machine/speed.py): first the
largest that stays readable (at least `speed.READABLE` tokens a second), then the others that
fit, slowest last, each saying how fast it would write here. The bytes a token reads come from
each file's published size and its architecture (the input embedding is a lookup, read whole
only when it is also the output head, as in Gemma 3 and the small Qwen2.5): known before
anything is downloaded. After the download the planner plans from the real header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from draftwise.core.hub.files import RemoteModel
from draftwise.core.machine import speed
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
    size: int = 0  # the file's bytes (the hub's listing of that quant)
    active: int = 0  # weight bytes one token reads (the file without an input-only embedding)
    vocab: int = 0  # vocabulary entries (sampling costs time per token)

    @property
    def name(self) -> str:
        return self.repo.split("/")[-1].removesuffix("-GGUF")

    def workload(self) -> speed.Workload:
        return speed.Workload(self.active or self.size, self.size, self.vocab, self.quant)


@dataclass(frozen=True)
class Offer:
    """A starter as this computer would run it."""

    starter: Starter
    estimate: speed.Estimate

    def to_json(self) -> dict[str, object]:
        s = self.starter
        return {"repo": s.repo, "quant": s.quant, "size": s.size, "drafter": s.drafter.repo if s.drafter else None,
                **self.estimate.to_json()}


QWEN25_DRAFT = Drafter("Qwen/Qwen2.5-0.5B-Instruct-GGUF", "Q8_0")
GEMMA3_DRAFT = Drafter("unsloth/gemma-3-270m-it-GGUF", "Q8_0")
_MB = 1_000_000
QWEN_VOCAB, GEMMA3_VOCAB = 151_936, 262_144

# Sizes: the Q4_K_M files as the hub lists them. Active bytes: Qwen2.5 1.5B and Gemma 3 tie
# the output head to the embedding, so a token reads the whole file; the 7B and 14B have
# their own head, and their Q4_K embedding (vocabulary × width × 4.5 bits: 307 MB and 438 MB)
# is only looked up.
STARTERS: tuple[Starter, ...] = (
    Starter("Qwen/Qwen2.5-1.5B-Instruct-GGUF", "Q4_K_M", 4 * GB,
            msg("Small and quick: everyday questions on almost any computer."), QWEN25_DRAFT,
            size=1_117 * _MB, active=1_117 * _MB, vocab=QWEN_VOCAB),
    Starter("unsloth/gemma-3-4b-it-GGUF", "Q4_K_M", 8 * GB,
            msg("Google's Gemma 3: good writing, many languages."), GEMMA3_DRAFT,
            size=2_489 * _MB, active=2_489 * _MB, vocab=GEMMA3_VOCAB),
    Starter("Qwen/Qwen2.5-7B-Instruct-GGUF", "Q4_K_M", 12 * GB,
            msg("A capable all-rounder for 16 GB computers."), QWEN25_DRAFT,
            size=4_683 * _MB, active=4_376 * _MB, vocab=QWEN_VOCAB),
    Starter("Qwen/Qwen2.5-Coder-7B-Instruct-GGUF", "Q4_K_M", 12 * GB,
            msg("Writes and explains code."), QWEN25_DRAFT,
            size=4_683 * _MB, active=4_376 * _MB, vocab=QWEN_VOCAB),
    Starter("Qwen/Qwen2.5-14B-Instruct-GGUF", "Q4_K_M", 20 * GB,
            msg("Stronger answers; wants 24 GB or a big GPU."), QWEN25_DRAFT,
            size=8_988 * _MB, active=8_550 * _MB, vocab=QWEN_VOCAB),
)

# Repositories whose models pair with a drafter of the same family (same tokenizer).
_FAMILIES: tuple[tuple[re.Pattern[str], Drafter], ...] = (
    (re.compile(r"qwen2\.5-(coder-)?(1\.5|3|7|14|32|72)b", re.IGNORECASE), QWEN25_DRAFT),
    (re.compile(r"gemma-3-(1|4|12|27)b", re.IGNORECASE), GEMMA3_DRAFT),
)

DRAFTER_OFFER = msg("Get the draft model too — usually 1.5–2× faster, same answers.")


def starters_for(machine: Machine, rate: speed.Throughput) -> list[Offer]:
    """The starters this machine can hold, as it would run them: the readable ones first,
    largest first; then the slower ones, fastest first."""
    memory = machine.ram_total + sum(g.total_bytes for g in machine.discrete_gpus)
    fitting = [s for s in STARTERS if s.min_memory <= memory] or list(STARTERS[:1])
    offers = [Offer(s, speed.estimate(s.workload(), machine, rate)) for s in fitting]
    readable = sorted((o for o in offers if o.estimate.readable), key=lambda o: -o.starter.size)
    slow = sorted((o for o in offers if not o.estimate.readable), key=lambda o: -o.estimate.tokens_per_s)
    return readable + slow


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


def file_estimate(model: RemoteModel, machine: Machine, rate: speed.Throughput) -> speed.Estimate:
    """A hub file's speed here, from its size. A starter's repository lends its vocabulary and
    the share of the file a token reads, so its files agree with the starter's own figure;
    any other file counts every byte as read per token (a little slow for a model with an
    input-only embedding, never fast by mistake)."""
    starter = next((s for s in STARTERS if s.repo.lower() == model.repo.lower()), None)
    if starter is not None and starter.size:
        active = int(model.size * (starter.active or starter.size) / starter.size)
        return speed.estimate(speed.Workload(active, model.size, starter.vocab, model.quant), machine, rate)
    return speed.estimate(speed.Workload(model.size, model.size, 0, model.quant), machine, rate)


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
