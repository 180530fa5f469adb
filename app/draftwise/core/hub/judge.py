"""A hub file judged before download, by the same launch session as a file on disk.

A repository is judged as the folder it would be on disk: every model of its listing (each
part of a split model), the drafter files beside them, its vision projector and the family's
draft model from its own repository (the drafters Get models would fetch beside a model) have
their headers read over HTTP ranges as sparse local copies (core/hub/remote.py), and those
copies are laid out in one folder. Then `session.plan_launch` plans each model of that folder
exactly as `draftwise plan` plans a downloaded one: the resolver's own companion search looks
for drafters beside it (core/speculation/companions.py: a small model of the family, a draft,
MTP or assistant file, whatever its name says about drafting) and applies the engine's pairing
rule to each one's real token list, and the planner sizes context, KV, drafter and projector.
There is no drafter rule here: one search, the resolver's.

The verdict names the drafter the resolver chose, and that is the drafter a download then
fetches (`HubVerdict.drafter_model`), so what was judged is what lands.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import catalog, client, files, remote
from draftwise.core.hub.client import HubError
from draftwise.core.hub.files import Drafting, HubFile, RemoteModel
from draftwise.core.kinds import SpecSource
from draftwise.core.launch import prepare, session
from draftwise.core.machine import hardware, speed
from draftwise.core.messages import Message, Text, msg
from draftwise.core.speculation import draft_check, resolver

JUDGED_DIR = "hub-judged"
MTP_ONLY = "mtp-only"  # gguf.ModelInfo.mtp_layout of a file holding just an MTP head
FETCH_THREADS = 4



@dataclass(frozen=True)
class HubVerdict:
    """One hub model as this computer would run it, or why it could not be judged."""

    model: RemoteModel
    fits: bool = False
    fit_state: str = "no"  # plan_types.FITS | PARTIAL | NO_FIT
    planned_bytes: int = 0  # the plan's total (`plan --json`'s plan.bytes.total)
    context: int = 0
    estimate: speed.Estimate | None = None
    speculation: Drafting = Drafting.NONE
    drafter_model: RemoteModel | None = None  # the drafter a download fetches beside it
    projector: HubFile | None = None
    header_bytes: int = 0  # bytes read over the network to judge the model's own file(s)
    why: tuple[Text, ...] = ()  # the speculation decision's notes: why this drafter, or none
    error: Message | None = None  # could not be judged: the sentence to show instead
    local: Path | None = None  # the judged header copy's path (tests compare it with `plan`)
    plan_json: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def drafter_name(self) -> str | None:
        """The drafter as `get` names it: its file, with its repository when that is another."""
        d = self.drafter_model
        if d is None:
            return None
        return d.name if d.repo.lower() == self.model.repo.lower() else f"{d.repo}:{d.name}"

    def to_json(self) -> dict[str, Any]:
        e = self.estimate
        return {
            "file": self.model.name, "quant": self.model.quant, "size": self.model.size,
            "fits": self.fits, "fit": self.fit_state, "planned_bytes": self.planned_bytes, "context": self.context,
            "tokens_per_s": round(e.tokens_per_s, 1) if e else None, "readable": bool(e and e.readable),
            "speculation": self.speculation, "drafter": self.drafter_name,
            "projector": self.projector.path if self.projector else None,
            "header_bytes": self.header_bytes, "why": [str(w) for w in self.why],
            "error": str(self.error) if self.error else None,
        }  # fmt: skip


def judged_dir() -> Path:
    return paths.cache_dir() / JUDGED_DIR


def speculation_kind(spec: resolver.SpecDecision) -> Drafting:
    """The decision in one word: an MTP head inside, Gemma 4's MTP assistant, another drafter
    (an MTP or EAGLE-3/DFlash sidecar, a draft model), n-gram, or none."""
    if spec.source == SpecSource.AUTO_MTP:
        return Drafting.MTP
    if spec.draft is not None:
        info = spec.draft_info
        return Drafting.MTP_ASSISTANT if info is not None and info.sidecar_kind == draft_check.ASSISTANT else Drafting.DRAFT
    if spec.source == SpecSource.AUTO_NGRAM:
        return Drafting.NGRAM
    return Drafting.NONE


def family_drafters(listing: Sequence[RemoteModel],
                    family: Callable[[catalog.Drafter], RemoteModel | None]) -> list[RemoteModel]:  # fmt: skip
    """The family draft models from other repositories that a download may put beside a model
    of `listing` (`family` looks each up on the hub), each once, and none by the name of a file
    the listing holds (a download puts both in one folder: the repository's own file is there)."""
    out: list[RemoteModel] = []
    for m in listing:
        known = None if m.drafter else catalog.drafter_for(m.repo, m.name)
        found = family(known) if known is not None else None
        if found is not None and all(f.name != found.name for f in (*listing, *out)):
            out.append(found)
    return out


class Judge:
    """Judges models of hub repositories for one machine, engine and rate; header copies
    and family drafter listings are shared between the models it judges."""

    def __init__(self, machine: hardware.Machine, engine: session.Engine, rate: speed.Throughput, *,
                 records: session.Records | None = None, revision: str = "main",
                 with_projector: bool = True) -> None:  # fmt: skip
        self.machine, self.engine, self.rate = machine, engine, rate
        self.records = records if records is not None else session.Records.load(machine)
        self.revision = revision
        self.with_projector = with_projector
        self._families: dict[str, RemoteModel | None] = {}

    # -- the drafters of other repositories
    def family_drafter(self, drafter: catalog.Drafter) -> RemoteModel | None:
        if drafter.repo not in self._families:
            try:
                self._families[drafter.repo] = catalog.pick(client.list_models(drafter.repo), drafter.quant)
            except HubError:
                self._families[drafter.repo] = None  # judged without it; the listing said why elsewhere
        return self._families[drafter.repo]

    def judge_listing(self, listing: Sequence[RemoteModel], only: str | None = None) -> list[HubVerdict]:
        """Every model of one repository's listing (or the one named `only`), planned in the
        folder the repository would be on disk (drafters themselves are not judged as models:
        they run beside one). Headers are fetched a few at a time."""
        listing = self.classified(listing)
        judged = [m for m in listing if not m.drafter and (only is None or m.name == only)]
        beside = [*listing, *family_drafters(listing, self.family_drafter)]
        wanted: dict[tuple[str, str], tuple[str, HubFile]] = {}
        for owner in beside:
            for f in owner.files:
                wanted[(owner.repo, f.path)] = (owner.repo, f)
        for m in judged if self.with_projector else ():
            if m.projector is not None:
                wanted[(m.repo, m.projector.path)] = (m.repo, m.projector)
        copies = self._fetch(wanted.values())
        return [self._judge(m, beside, copies) for m in judged]

    def classified(self, listing: Sequence[RemoteModel]) -> list[RemoteModel]:
        """The listing with each file called a drafter or a model by its header, not its name
        ("Qwen3.5-9B-MTP-Q4_K_M.gguf" is a whole model with an MTP head; an assistant or an
        MTP-only sidecar is a drafter whatever it is called; a small whole model is one when
        its name says "draft"). A file whose header cannot be read keeps its name's tag (its
        verdict says what is wrong)."""
        firsts = self._fetch((m.repo, m.first) for m in listing)
        projector = next((m.projector for m in listing if m.projector is not None), None)
        out = []
        for m in listing:
            copy = firsts[(m.repo, m.first.path)]
            if isinstance(copy, remote.HeaderCopy):
                try:
                    info = gguf.read_model(copy.path)
                except gguf.GGUFError:
                    out.append(m)
                    continue
                # A file that cannot run alone drafts; a whole model drafts when its name says
                # so ("-draft-"), not when it merely carries its own MTP head ("-MTP-").
                drafter = info.sidecar_kind is not None or info.mtp_layout == MTP_ONLY or (
                    m.drafter and not files.named_mtp_only(m.name))
                m = dataclasses.replace(m, drafter=drafter, projector=None if drafter else projector)
            out.append(m)
        return out

    def judge(self, model: RemoteModel, listing: Sequence[RemoteModel]) -> HubVerdict:
        """`model` in its repository (`listing`): planned beside the repository's other files,
        as `judge_listing` plans each."""
        others = [m for m in listing if m is not model and m.name != model.name]
        verdicts = self.judge_listing([model, *others], only=model.name)
        if not verdicts:  # the header says it is a drafter: it runs beside a model
            return HubVerdict(model, error=msg(
                "{name} is a drafter, not a model to run: it runs beside its model.", name=model.name))
        return verdicts[0]

    def header(self, model: RemoteModel) -> gguf.ModelInfo | None:
        """What `model`'s own header says (every part of it read), or None when it cannot be
        read (its verdict says why)."""
        copies = self._fetch((model.repo, f) for f in model.files)
        first = copies[(model.repo, model.first.path)]
        if any(isinstance(c, HubError) for c in copies.values()) or not isinstance(first, remote.HeaderCopy):
            return None
        try:
            return gguf.read_model(first.path)
        except gguf.GGUFError:
            return None

    def _fetch(self, files: Iterable[tuple[str, HubFile]]) -> dict[tuple[str, str], remote.HeaderCopy | HubError]:
        def one(item: tuple[str, HubFile]) -> remote.HeaderCopy | HubError:
            repo, f = item
            try:
                return remote.read_remote_header(repo, f, self.revision)
            except HubError as exc:
                return exc

        items = list(files)
        with ThreadPoolExecutor(max_workers=FETCH_THREADS) as pool:
            results = list(pool.map(one, items))
        return {(repo, f.path): r for (repo, f), r in zip(items, results, strict=True)}

    def _judge(self, model: RemoteModel, beside: Sequence[RemoteModel],
               copies: dict[tuple[str, str], remote.HeaderCopy | HubError]) -> HubVerdict:  # fmt: skip
        own = [copies[(model.repo, f.path)] for f in model.files]
        failed = next((c for c in own if isinstance(c, HubError)), None)
        if failed is not None:
            return HubVerdict(model, error=failed.message)
        header_bytes = sum(c.fetched for c in own if isinstance(c, remote.HeaderCopy))
        projector = model.projector if self.with_projector else None
        pc = copies.get((model.repo, projector.path)) if projector is not None else None
        if not isinstance(pc, remote.HeaderCopy):
            projector, pc = None, None
        # The repository's other files whose headers were read (a file that cannot be read is
        # not laid out: its own verdict says why), every part of each.
        ready = [(m, [copies.get((m.repo, f.path)) for f in m.files]) for m in beside if m is not model]
        ready = [(m, mc) for m, mc in ready if all(isinstance(c, remote.HeaderCopy) for c in mc)]
        links = [*own, *([pc] if pc is not None else []), *(c for _m, mc in ready for c in mc)]
        folder = _laid_out(model.repo, self.revision, links)  # type: ignore[arg-type]
        first = folder / own[0].path.name  # type: ignore[union-attr]
        by_path = {folder / mc[0].path.name: m for m, mc in ready}  # type: ignore[union-attr]
        try:
            planned = session.plan_launch(prepare.Request(model=first), self.engine, self.machine, self.records)
        except FieldError as exc:
            return HubVerdict(model, header_bytes=header_bytes, error=exc.message, local=first)
        prepared = planned.prepared
        plan, spec = prepared.plan, prepared.spec
        try:
            estimate = speed.estimate(speed.workload_of(first), self.machine, self.rate)
        except ValueError:
            estimate = None
        drafter = by_path.get(Path(spec.draft)) if spec.draft is not None else None
        return HubVerdict(
            model, fits=plan.fits, fit_state=plan.fit_state, planned_bytes=plan.bytes.total, context=plan.ctx,
            estimate=estimate, speculation=speculation_kind(spec), drafter_model=drafter, projector=projector,
            header_bytes=header_bytes, why=tuple(spec.notes), local=first, plan_json=prepared.to_json(),
        )  # fmt: skip


def _laid_out(repo: str, revision: str, copies: Sequence[remote.HeaderCopy]) -> Path:
    """A folder holding `copies` and nothing else: the repository as it would be on disk.
    Named by what it holds (each copy's name and bytes on the hub, in any order), so one layout
    is made once and shared by every model of the repository (the reader keeps each parsed
    header by its path: the repository's headers are parsed once for all its models). It is
    built under a name of its own and moved into place whole, and a judging running at the
    same time finds either no folder or the finished one."""
    key = hashlib.sha256("\n".join(sorted(f"{c.path.name} {c.size} {c.path.stat().st_mtime_ns}"
                                          for c in copies)).encode()).hexdigest()[:12]
    folder = judged_dir().joinpath(*repo.split("/"), revision, key)
    if folder.is_dir():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
    for c in copies:
        _link(c, building)
    try:
        os.rename(building, folder)
    except OSError:  # another judging put the same layout in place first
        shutil.rmtree(building, ignore_errors=True)
    return folder


def _link(copy: remote.HeaderCopy, folder: Path) -> Path:
    """The header copy in `folder` under its own name: a hard link (no bytes), else a copy of
    its header with the same hole."""
    dest = folder / copy.path.name
    try:
        os.link(copy.path, dest)
    except OSError:
        remote.copy_sparse(copy.path, dest, copy.header_bytes)
    return dest

