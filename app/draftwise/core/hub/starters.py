"""The starters this computer is offered: each curated family (core/hub/catalog.py) found on
the hub, its file judged from its own header (core/hub/judge.py), ranked by speed here.

For each starter the hub's search is asked its hint; the repositories of its publishers are
tried in the publishers' order (then by downloads), and in each the file of the starter's
family and size, by its own header (architecture, parameter count, blocks: `of_its_size`), in
the starter's quant is judged exactly as a downloaded file would be planned. A file of another
size is never offered under the starter's title, whatever its name or quant (a Gemma 3 270M
published beside the 4B is the 4B's drafter, not the "Gemma 3 4B" starter). A starter that must draft
itself (MTP, Gemma 4's assistant) is offered only from a file whose verdict says so: a
repository that publishes the model without its head is passed over for the next. What does
not fit this machine is not offered.

Offline (the hub cannot be reached), the curated list is offered from its own sizes and the
offers say so (`Starters.offline`). Ranking: the starters that stay readable (at least
`speed.READABLE` tokens a second) first — those that draft themselves before the others, each
group largest first — then the others that fit, fastest first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import catalog, client
from draftwise.core.hub.client import HubError, RepoHit
from draftwise.core.hub.files import Drafting, RemoteModel
from draftwise.core.hub.judge import HubVerdict, Judge
from draftwise.core.machine import speed
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, msg

# Repositories tried per starter before it is left out (each costs a listing and a header).
TRIED_PER_STARTER = 3
THREADS = 3
# How far a file's parameter count may be from the count its title names: one family's sizes
# are 1.5x apart or more (Gemma 3: 270M, 1B, 4B, 12B, 27B; Qwen3.5: 0.8B, 2B, 4B, 9B), and a
# published file counts within a few percent of its title (the corpus headers: Gemma 3 4B
# 3.88B, Qwen3.5 0.8B 0.77B with its MTP head, Gemma 4 26B-A4B 25.2B, gpt-oss 20B 20.9B).
PARAMS_SPREAD = 0.2


@dataclass(frozen=True)
class Offer:
    """A starter as this computer would run it: judged from its file (online), or estimated
    from the curated size (offline: `verdict` None)."""

    starter: catalog.Starter
    estimate: speed.Estimate
    verdict: HubVerdict | None = None

    @property
    def repo(self) -> str | None:
        return self.verdict.model.repo if self.verdict is not None else None

    @property
    def model(self) -> RemoteModel | None:
        return self.verdict.model if self.verdict is not None else None

    @property
    def size(self) -> int:
        return self.verdict.model.size if self.verdict is not None else self.starter.size

    def to_json(self) -> dict[str, Any]:
        """The keys of `draftwise get REPO --list --json` plus repo (and the starter's title);
        offline, the file's keys are null: nothing was judged."""
        s = self.starter
        if self.verdict is not None:
            body = self.verdict.to_json()
        else:
            body = {"file": None, "quant": s.quant, "size": s.size, "fits": None, "fit": None, "planned_bytes": None,
                    "context": None, "tokens_per_s": round(self.estimate.tokens_per_s, 1),
                    "readable": self.estimate.readable, "speculation": str(s.drafts), "drafter": None,
                    "projector": None, "header_bytes": 0, "why": [], "error": None}  # fmt: skip
        return {"repo": self.repo, "title": s.title, **body, "device": self.estimate.device,
                "certain": self.estimate.certain}


@dataclass(frozen=True)
class Starters:
    offers: list[Offer]
    offline: Message | None = None  # why the hub was not asked, when it could not be reached
    left_out: list[tuple[str, Message]] = field(default_factory=list)  # starters not offered, and why


def drafts_itself(offer: Offer) -> bool:
    kind = offer.verdict.speculation if offer.verdict is not None else offer.starter.drafts
    return kind in (Drafting.MTP, Drafting.MTP_ASSISTANT)


def rank(offers: Sequence[Offer]) -> list[Offer]:
    """Readable ones first: those that draft themselves (MTP, an MTP assistant), largest
    first, then the others, largest first; then the slow ones, fastest first."""
    readable = sorted((o for o in offers if o.estimate.readable), key=lambda o: (not drafts_itself(o), -o.size))
    slow = sorted((o for o in offers if not o.estimate.readable), key=lambda o: -o.estimate.tokens_per_s)
    return readable + slow


def offline_offers(machine: Machine, rate: speed.Throughput,
                   starters: Sequence[catalog.Starter] | None = None) -> list[Offer]:  # fmt: skip
    """The curated list (`catalog.STARTERS` unless given) from its own sizes, the ones this
    machine's memory holds (the first starter when none does)."""
    starters = catalog.STARTERS if starters is None else starters
    memory = machine.ram_total + sum(g.total_bytes for g in machine.discrete_gpus)
    fitting = [s for s in starters if s.min_memory <= memory] or list(starters[:1])
    return rank([Offer(s, speed.estimate(s.workload(), machine, rate)) for s in fitting])


def of_its_size(starter: catalog.Starter, info: gguf.ModelInfo | None) -> bool:
    """Whether a file's header (`info`; None: unreadable) is the family and size the starter's
    title names: its architecture, its parameter count within `PARAMS_SPREAD` of the title's,
    and (where the starter knows them) the blocks of the model proper, an MTP head's left out."""
    if info is None or info.architecture != starter.arch or starter.params <= 0:
        return False
    if abs(info.parameters - starter.params) > PARAMS_SPREAD * starter.params:
        return False
    blocks = (info.block_count or 0) - (info.nextn_predict_layers or 0)
    return starter.blocks is None or blocks == starter.blocks


def candidates(starter: catalog.Starter, hits: Sequence[RepoHit]) -> list[str]:
    """The repositories that may hold the starter: GGUF repositories of its publishers whose
    name holds its hint, in the publishers' order, then most downloaded."""
    order = {p.lower(): i for i, p in enumerate(starter.publishers)}
    hint = starter.hint.lower()
    found = [h for h in hits if h.repo.split("/")[0].lower() in order and hint in h.repo.lower()
             and "gguf" in h.repo.lower() and not h.gated]  # fmt: skip
    found.sort(key=lambda h: (order[h.repo.split("/")[0].lower()], -h.downloads))
    return [h.repo for h in found]


def find(starter: catalog.Starter, judge: Judge, *,
         search: Callable[[str], list[RepoHit]] = client.search,
         listing: Callable[[str], list[RemoteModel]] = client.list_models) -> Offer | Message:  # fmt: skip
    """The starter's offer from the first repository whose file of its family and size (by
    header) and quant is judged to run here as the starter promises; else why it is left out.
    HubError when the hub cannot be reached at all."""
    tried: list[str] = []
    for repo in candidates(starter, search(starter.hint))[:TRIED_PER_STARTER]:
        try:
            models = listing(repo)
        except HubError as exc:
            if exc.field == "network":
                raise
            continue
        models = judge.classified(models)
        # The family and size from the header, in the starter's quant (the name's quant is
        # looked at first only because it costs no header read: both must hold).
        quanted = [m for m in models if not m.drafter and (m.quant or "").upper() == starter.quant.upper()]
        if not quanted:
            continue
        tried.append(repo)
        model = next((m for m in quanted if of_its_size(starter, judge.header(m))), None)
        if model is None:
            continue  # files of its quant, none of its size
        verdict = judge.judge(model, models)
        if verdict.error is not None:
            continue
        if starter.drafts in (Drafting.MTP, Drafting.MTP_ASSISTANT) and verdict.speculation != starter.drafts:
            continue  # published without its head (or its assistant): never offered as MTP
        if verdict.fit_state == "no":
            return msg("{title} does not fit this computer.", title=starter.title)
        return Offer(starter, verdict.estimate or speed.estimate(starter.workload(), judge.machine, judge.rate),
                     verdict)  # fmt: skip
    if tried:
        return msg("{title}: no file of {repos} runs here as promised.", title=starter.title, repos=", ".join(tried))
    return msg("{title} was not found on the hub.", title=starter.title)


def starters_for(machine: Machine, rate: speed.Throughput, judge: Judge | None, *,
                 starters: Sequence[catalog.Starter] | None = None,
                 search: Callable[[str], list[RepoHit]] = client.search,
                 listing: Callable[[str], list[RemoteModel]] = client.list_models) -> Starters:  # fmt: skip
    """The starters for this machine: found and judged on the hub (`judge`), or the curated
    list when `judge` is None or the hub cannot be reached. `starters`: catalog.STARTERS
    unless given (read when called)."""
    starters = catalog.STARTERS if starters is None else starters
    if judge is None:
        return Starters(offline_offers(machine, rate, starters))
    memory = machine.ram_total + sum(g.total_bytes for g in machine.discrete_gpus)
    # A starter far too large for this machine's memory costs no hub question.
    asked = [s for s in starters if s.size <= memory]

    def one(s: catalog.Starter) -> Offer | Message | HubError:
        try:
            return find(s, judge, search=search, listing=listing)
        except HubError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        found = list(pool.map(one, asked))
    unreachable = next((r for r in found if isinstance(r, HubError) and r.field == "network"), None)
    if unreachable is not None:
        return Starters(offline_offers(machine, rate, starters), offline=msg(
            "The model hub could not be reached, so these are Draftwise's own suggestions, judged from their "
            "usual sizes: {error}", error=unreachable.message))
    offers = [r for r in found if isinstance(r, Offer)]
    left = [(s.title, r.message if isinstance(r, HubError) else r)
            for s, r in zip(asked, found, strict=True) if not isinstance(r, Offer)]
    left += [(s.title, msg("{title} is larger than this computer's memory.", title=s.title))
             for s in starters if s not in asked]
    return Starters(rank(offers), left_out=left)
