"""A repository's GGUF files as models a person picks: shards grouped, quant named, fit judged.

Pure data and rules (no network): the client hands in the file list the hub returned.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from draftwise.core.machine.hardware import GB, Machine

# "model-00001-of-00003.gguf": the engine loads the first shard and finds the rest by name.
_SHARD = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$", re.IGNORECASE)
# Quant names as converters write them into file names (Q4_K_M, IQ3_XXS, F16, BF16, Q8_0, MXFP4…).
_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(I?Q\d(?:_[A-Z0-9]+)*|BF16|FP?16|FP?32|MXFP4(?:_MOE)?|TQ\d_\d)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# Files beside a model that are not models to run on their own.
_NOT_A_MODEL = re.compile(r"(^|[/_.-])(mmproj|imatrix)([/_.-]|$)", re.IGNORECASE)
# Names under which drafters are published beside (or as) a model.
_DRAFTER = re.compile(r"(^|[/_.-])(draft|mtp|eagle3?|dflash|assistant)([/_.-]|$)", re.IGNORECASE)

# What the weights leave for everything else, as a share of the file and a fixed part: the KV
# cache at a few thousand tokens and the compute buffers. Only for the list before download;
# after download the planner plans from the real header.
RUNTIME_SHARE = 0.15
RUNTIME_FIXED = GB // 2


class Drafting(StrEnum):
    """What drafts for a model, in one word (a hub verdict's and a starter's `speculation`,
    `draftwise get --json`): an MTP head inside, Gemma 4's MTP assistant beside it, another
    drafter (a draft model, an MTP/EAGLE-3/DFlash sidecar), n-gram, or nothing. The hub's words
    only (not core/kinds.py's: "mtp" and "draft" name other things elsewhere)."""

    MTP = "mtp"
    MTP_ASSISTANT = "mtp-assistant"
    DRAFT = "draft"
    NGRAM = "ngram"
    NONE = "none"


@dataclass(frozen=True)
class HubFile:
    """One file as the hub lists it."""

    path: str
    size: int
    sha256: str | None = None  # the LFS object id: the file's sha256


@dataclass(frozen=True)
class RemoteModel:
    """One model in a repository: a single GGUF, or all shards of one."""

    repo: str
    name: str  # what the library will show: the file name (the first shard's)
    files: tuple[HubFile, ...]
    quant: str | None
    drafter: bool = False
    # The repository's vision projector (mmproj) that goes with this model, when it has one.
    projector: HubFile | None = None

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def first(self) -> HubFile:
        return self.files[0]


@dataclass(frozen=True)
class Fit:
    """Whether a model of this size fits this machine, judged from the file size alone."""

    level: str  # "fits" | "gpu-partly" | "too-big"
    need: int
    room: int


def named_mtp_only(name: str) -> bool:
    """Whether only "mtp" tags the name as a drafter (a whole model with its MTP head is often
    published as "…-MTP-Q4_K_M.gguf"); the header then decides (core/hub/judge.py)."""
    tags = {m.group(2).lower() for m in _DRAFTER.finditer(name.rsplit("/", 1)[-1])}
    return tags == {"mtp"}


def quant_of(name: str) -> str | None:
    found = _QUANT.findall(name.rsplit("/", 1)[-1])
    return found[-1].upper().replace("FP", "F") if found else None


def display_name(model: RemoteModel) -> str:
    """The model's name without the shard numbering of its first file."""
    m = _SHARD.match(model.name)
    return f"{m.group('stem')}.gguf" if m else model.name


# Projector precisions in the order taken: F16 and BF16 are what the converter publishes by
# default and what mtmd runs at full quality; F32 doubles the bytes for nothing; a quantized
# projector loses more than it saves (the encoder is small next to the model).
_PROJECTOR_ORDER = ("F16", "BF16", "F32")
_MMPROJ = re.compile(r"(^|[/_.-])mmproj([/_.-]|$)", re.IGNORECASE)


def pick_projector(files: Iterable[HubFile]) -> HubFile | None:
    """The repository's vision projector to download with a model: its F16 mmproj, else BF16,
    else F32, else the smallest one; None when the repository has no mmproj file."""
    found = [f for f in files if f.path.lower().endswith(".gguf") and _MMPROJ.search(f.path.rsplit("/", 1)[-1])]
    if not found:
        return None

    def rank(f: HubFile) -> tuple[int, int]:
        q = quant_of(f.path)
        return (_PROJECTOR_ORDER.index(q) if q in _PROJECTOR_ORDER else len(_PROJECTOR_ORDER), f.size)

    return min(found, key=rank)


def projector_model(model: RemoteModel) -> RemoteModel | None:
    """The model's projector as a one-file download (the same resumable, checked path)."""
    p = model.projector
    return None if p is None else RemoteModel(model.repo, p.path.rsplit("/", 1)[-1], (p,), quant_of(p.path))


def group_models(repo: str, files: Iterable[HubFile]) -> list[RemoteModel]:
    """GGUF files as models: shards of one model together, in index order; others alone. A
    vision projector is no model of its own: it goes with each non-drafter model."""
    files = list(files)
    projector = pick_projector(files)
    singles: list[RemoteModel] = []
    shards: dict[str, list[tuple[int, int, HubFile]]] = {}
    for f in files:
        if not f.path.lower().endswith(".gguf") or _NOT_A_MODEL.search(f.path):
            continue
        m = _SHARD.match(f.path)
        if m:
            shards.setdefault(m.group("stem"), []).append((int(m.group("index")), int(m.group("count")), f))
            continue
        singles.append(_model(repo, (f,)))
    for parts in shards.values():
        parts.sort(key=lambda p: p[0])
        count = parts[0][1]
        if [p[0] for p in parts] != list(range(1, count + 1)):
            continue  # an incomplete set on the hub is not a model anyone can run
        singles.append(_model(repo, tuple(p[2] for p in parts)))
    singles = [m if m.drafter else dataclasses.replace(m, projector=projector) for m in singles]
    return sorted(singles, key=lambda m: (m.drafter, m.size))


def _model(repo: str, files: tuple[HubFile, ...]) -> RemoteModel:
    first = files[0].path
    return RemoteModel(
        repo=repo, name=first.rsplit("/", 1)[-1], files=files, quant=quant_of(first),
        drafter=bool(_DRAFTER.search(first.rsplit("/", 1)[-1])),
    )


def judge_fit(size: int, machine: Machine) -> Fit:
    """Fits when weights plus runtime fit in free GPU memory (or unified memory), partly when
    only RAM and GPU together hold it, too big otherwise."""
    need = int(size * (1 + RUNTIME_SHARE)) + RUNTIME_FIXED
    gpu = sum(g.free_bytes or g.total_bytes for g in machine.discrete_gpus)
    ram = machine.ram_available
    if machine.unified_memory or not machine.discrete_gpus:
        room = ram
        return Fit("fits" if need <= room else "too-big", need, room)
    if need <= gpu:
        return Fit("fits", need, gpu)
    return Fit("gpu-partly" if need <= gpu + ram else "too-big", need, gpu + ram)
