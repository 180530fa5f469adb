""""Get models": starters for this computer, hub search, a repository's files each judged
from its own header before anything is downloaded, one download.

Every hub call runs off the GUI thread as one small named operation (op_search, op_list,
op_judge, op_starters, op_fetch), so a slow network never freezes the window; the newest
search and the newest listing win, older answers are dropped.

One `Judge` (core/hub/judge.py) per dialog, for the app's machine, the selected llama.cpp
engine and this computer's measured rate: a listing is shown at once ("Judging…") and then
judged, each file planned from its header as the launch session plans a downloaded file.
The starters are found on the hub and judged the same way (core/hub/starters.py); until the
rate is known they are the curated list in memory order without speeds, and when the hub
cannot be reached the curated list stays, saying so. A download (core/hub/fetch.py) fetches
the drafter the verdict named beside the model, unless "Get the draft model too" is off.

The rate is measured once per computer and engine build and then read from the data folder;
the first time it is measured off the GUI thread (a few seconds with the engine).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import catalog, client, download, fetch, starters
from draftwise.core.hub.files import HubFile, RemoteModel
from draftwise.core.hub.judge import HubVerdict, Judge
from draftwise.core.kinds import Backend, EngineKind
from draftwise.core.launch import session, speed_probe
from draftwise.core.machine import speed
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message
from draftwise.core.readable import human_bytes
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels import hub_words
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.latest import Latest
from draftwise.viewmodels.roles import AppRole

log = logging.getLogger(__name__)
Fetched = fetch.Fetched
# Before the rate is known every starter counts as readable, so they come in memory order.
UNBOUNDED = speed.Throughput(1e30, "described")


def text(m: Message | str) -> str:
    """A core sentence in the window's language (the one translator, i18n.tr_message)."""
    return tr_message(m)


# ---------------------------------------------------------------- background operations
class OneAtATime(Judge):
    """The dialog's judge, one judging at a time: the starters and a listing may ask for the
    same file at once, and two judgings of one repository share its header copies and its
    judged folder."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._lock = threading.RLock()

    def judge_listing(self, listing: Sequence[RemoteModel], only: str | None = None) -> list[HubVerdict]:
        with self._lock:
            return super().judge_listing(listing, only)

    def classified(self, listing: Sequence[RemoteModel]) -> list[RemoteModel]:
        with self._lock:
            return super().classified(listing)

    def header(self, model: RemoteModel) -> gguf.ModelInfo | None:
        with self._lock:
            return super().header(model)


def op_search(query: str) -> list[client.RepoHit]:
    return client.search(query)


def op_list(repo: str) -> list[RemoteModel]:
    return client.list_models(repo)


def op_judge(judge: Judge, listing: list[RemoteModel]) -> list[HubVerdict]:
    return judge.judge_listing(listing)


def op_starters(machine: Machine, rate: speed.Throughput, judge: Judge) -> starters.Starters:
    return starters.starters_for(machine, rate, judge)


def op_fetch(model: RemoteModel, folder: Path, drafter: RemoteModel | None, *,
             report: Callable[[download.DownloadProgress], None], cancel: threading.Event,
             projector: bool = False) -> fetch.Fetched:  # fmt: skip
    """The model, its projector (`projector`) and the drafter its verdict named, into its
    folder; the drafter is remembered as its helper (core/hub/fetch.py)."""
    return fetch.fetch(model, folder, drafter=drafter, projector=projector, progress=report, cancelled=cancel.is_set)


# ---------------------------------------------------------------- view-model
class GetModelsViewModel(QObject):
    changed = Signal()
    progress = Signal(object)  # download.DownloadProgress
    downloaded = Signal(object)  # fetch.Fetched
    busy_changed = Signal(bool)
    starters_changed = Signal()  # the starters (their order, speeds or verdicts) changed

    def __init__(self, runner: TaskRunner, machine: Machine, folder: Path, parent: QObject | None = None, *,
                 rate: speed.Throughput | None = None, engine: session.Engine | None = None,
                 probe: Path | None = None, measure: bool = True,
                 records: session.Records | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.runner = runner
        self.machine = machine
        self.folder = folder
        # The engine the verdicts are planned for (the pinned engine's facts before one is found).
        self.engine = engine or session.Engine(Path("llama-server"), capabilities.pinned_caps(), Backend.CPU)
        self.records = records
        self.rate = rate  # this computer's measured rate; None until the probe answers
        self.judge: Judge | None = None
        self.offers: list[starters.Offer] = starters.offline_offers(machine, rate or UNBOUNDED)
        self.offline: str = ""  # why the starters are the curated list (the hub was not reached)
        self.left_out: list[tuple[str, Message]] = []
        self.finding = False  # the starters are being found and judged on the hub
        self.hits: list[client.RepoHit] = []
        self.repo: str | None = None
        self.listing: list[RemoteModel] = []  # the repository's files as listed (names tag drafters)
        self.models: list[RemoteModel] = []  # the rows: judged models, then the drafters
        self.verdicts: dict[str, HubVerdict] = {}  # by model name
        self.judge_error: str = ""  # judging the listing failed as a whole
        self.no_rate: str = ""  # why nothing can be judged in this dialog (no rate at all)
        self.rows_version = 0  # bumped whenever the rows or their verdicts change
        self.error: str | None = None
        self.status: str = ""
        self.loading = False  # a listing is on its way
        self.from_starter = False  # the one row is a starter's judged file
        self.searching = False
        self.with_drafter = True
        self.with_projector = True  # a vision model's mmproj comes with it
        self._hits = Latest()
        self._rows = Latest()
        self._download = None
        if rate is None:
            # A failed probe falls back to the standard library's memory scan (a third of a second).
            self.runner.submit(speed_probe.throughput, probe, measure=measure, on_done=self._on_rate,
                               on_error=self._on_probe_failed, name="speed-probe")  # fmt: skip
        else:
            self._start_judging()

    # -- the starters
    def speed_text(self, offer: starters.Offer) -> str:
        if self.rate is None:
            return "" if self.no_rate else tr("Measuring how fast this computer runs models…")
        return text(catalog.speed_sentence(offer.estimate))

    def speed_tip(self, offer: starters.Offer) -> str:
        if self.rate is None:
            return ""
        return hub_words.speed_cell(offer.estimate).tip

    def starter_text(self, offer: starters.Offer) -> str:
        """Its name, what it is for, how fast here, and (judged) its verdict in a line."""
        lines = [offer.starter.title, text(offer.starter.about), self.speed_text(offer)]
        lines = [line for line in lines if line]
        if offer.verdict is not None:
            lines.append(hub_words.verdict_line(offer.verdict))
        return "\n".join(lines)

    def starter_tip(self, offer: starters.Offer) -> str:
        v = offer.verdict
        if v is None:
            head = tr("Not judged yet: a click searches the hub for {hint}.").format(hint=offer.starter.hint)
        else:
            head = tr("{repo}: {file} ({size}). A click shows its verdict; Download (or a double click) gets it."
                      ).format(repo=v.model.repo, file=v.model.name, size=human_bytes(v.model.size))  # fmt: skip
        return "\n".join(p for p in (head, self.speed_tip(offer)) if p)

    def starters_note(self) -> tuple[str, str]:
        """(line, tooltip) under the starters: searching, offline, or what was left out."""
        left = "\n".join(f"{title}: {text(why)}" for title, why in self.left_out)
        note = speed.shown_note(self.rate) if self.rate is not None else None
        if note is not None and not self.finding:
            # Its speeds are low, or not kept, for now: said before anything else under the starters.
            busy = text(note)
            more = tr("{n} more were not offered (hover for why).").format(n=len(self.left_out)) if self.left_out else ""
            return " ".join(p for p in (busy, self.offline, more) if p), left
        if self.finding:
            return tr("Finding the starters on the hub and judging their files…"), ""
        if self.offline:
            return self.offline, left
        if self.left_out:
            return tr("{n} more were not offered (hover for why).").format(n=len(self.left_out)), left
        return "", ""

    def _on_probe_failed(self, exc: BaseException) -> None:
        log.warning("speed probe failed: %s", exc)
        self.runner.submit(speed.memory_throughput, on_done=self._on_rate, name="speed-probe",
                           on_error=self._on_no_rate)  # fmt: skip

    def _on_no_rate(self, exc: BaseException) -> None:
        """No rate at all: nothing can be judged, but every file can still be downloaded."""
        log.warning("memory scan failed: %s", exc)
        self.no_rate = tr("this computer's speed could not be measured ({error})").format(error=exc)
        self.rows_version += 1
        self.starters_changed.emit()
        self.changed.emit()

    def _on_rate(self, rate: speed.Throughput) -> None:
        self.rate = rate
        self.offers = starters.offline_offers(self.machine, rate)
        self._start_judging()
        self.starters_changed.emit()
        self.changed.emit()

    def _start_judging(self) -> None:
        assert self.rate is not None
        self.judge = OneAtATime(self.machine, self.engine, self.rate, records=self.records)
        self.finding = True
        self.runner.submit(op_starters, self.machine, self.rate, self.judge, name="op_starters",
                           on_done=self._on_starters, on_error=self._on_starters_failed)  # fmt: skip
        if self.listing and not self.verdicts:
            self._judge_rows(self._rows.current)  # listed before the rate was known

    def _on_starters(self, found: starters.Starters) -> None:
        self.finding = False
        self.left_out = list(found.left_out)
        if found.offline is not None:
            self.offers, self.offline = list(found.offers), text(found.offline)
        elif found.offers:
            self.offers, self.offline = list(found.offers), ""
        else:  # the hub answered, but no starter could be judged: the curated list, saying so
            self.offline = tr("None of the starters could be judged on the hub just now; these are Draftwise's "
                              "own suggestions, from their usual sizes.")
        self.starters_changed.emit()
        self.changed.emit()

    def _on_starters_failed(self, exc: BaseException) -> None:
        log.warning("finding the starters failed: %s", exc)
        self.finding = False
        self.offline = tr("The starters could not be judged on the hub ({error}); these are Draftwise's own "
                          "suggestions, from their usual sizes.").format(error=_said(exc))
        self.starters_changed.emit()
        self.changed.emit()

    def pick_starter(self, offer: starters.Offer) -> None:
        """A judged starter shows its verdict as the one row (nothing asked of the hub);
        one not judged (offline, or before the rate is known) searches the hub for its hint."""
        if offer.verdict is None:
            self.search(offer.starter.hint)
            return
        self._rows.new()
        self.repo, self.listing, self.loading, self.error = offer.verdict.model.repo, [offer.verdict.model], False, None
        self.from_starter, self.judge_error = True, ""
        self._set_verdicts([offer.verdict])

    def get_starter(self, offer: starters.Offer) -> bool:
        """Download a judged starter's model with the drafter its verdict named."""
        self.pick_starter(offer)
        return offer.verdict is not None and self.fetch(offer.verdict.model)

    # -- the rows
    def repo_text(self) -> str:
        if not self.repo:
            return ""
        if self.loading:
            return tr("Loading {repo}…").format(repo=self.repo)
        if self.from_starter:
            return tr("{repo}: the starter's file, judged for this computer. Search the hub for its other "
                      "files.").format(repo=self.repo)
        return self.repo

    def verdict(self, model: RemoteModel) -> HubVerdict | None:
        return self.verdicts.get(model.name)

    def pending(self, model: RemoteModel) -> bool:
        """Listed, not judged yet (and judging has not failed)."""
        return not model.drafter and model.name not in self.verdicts and not (self.judge_error or self.no_rate)

    def row_words(self, model: RemoteModel) -> hub_words.VerdictWords | hub_words.Cell:
        """A judged model's cells; one cell across them for a file still being judged, a
        helper, or one whose judging failed."""
        v = self.verdict(model)
        if v is not None:
            return hub_words.verdict_words(v)
        if model.drafter:
            return hub_words.helper_cell()
        why = self.judge_error or self.no_rate
        if why:
            return hub_words.Cell(tr("Not judged: {why}").format(why=why), why)
        return hub_words.pending_cell()

    def drafter_offer(self, model: RemoteModel | None) -> RemoteModel | None:
        """The drafter that would come with `model`: its verdict's."""
        v = self.verdict(model) if model is not None else None
        return v.drafter_model if v is not None else None

    def drafter_text(self, model: RemoteModel | None) -> str:
        v = self.verdict(model) if model is not None else None
        return hub_words.drafter_offer_text(v) if v is not None else ""

    def projector_offer(self) -> HubFile | None:
        """The repository's vision projector (mmproj), offered with its models."""
        return next((m.projector for m in self.models if m.projector is not None), None)

    def projector_text(self) -> str:
        p = self.projector_offer()
        if p is None:
            return ""
        return tr("Get its vision projector too ({name}, {size}): the model can then see pictures you attach "
                  "in the chat.").format(name=p.path.rsplit("/", 1)[-1], size=human_bytes(p.size))

    @property
    def downloading(self) -> bool:
        return self._download is not None

    def can_fetch(self, model: RemoteModel | None) -> bool:
        return model is not None and not self.downloading and not self.pending(model)

    # -- actions
    def search(self, query: str) -> None:
        ticket = self._hits.new()
        self.searching, self.error = True, None
        self.changed.emit()
        self.runner.submit(op_search, query.strip(), name="op_search",
                           on_done=self._hits.deliver(self._on_hits, ticket),
                           on_error=self._hits.deliver(self._on_error, ticket))  # fmt: skip

    def open_repo(self, repo: str) -> None:
        ticket = self._rows.new()
        self.repo, self.listing, self.models, self.verdicts, self.judge_error = repo, [], [], {}, ""
        self.rows_version += 1
        self.loading, self.error, self.from_starter = True, None, False
        self.changed.emit()
        self.runner.submit(op_list, repo, name="op_list", on_done=self._rows.deliver(self._on_listing, ticket),
                           on_error=self._rows.deliver(self._on_error, ticket))  # fmt: skip

    def fetch(self, model: RemoteModel) -> bool:
        if self._download is not None:
            return False
        drafter = self.drafter_offer(model) if self.with_drafter else None
        self.error, self.status = None, tr("Downloading {name}…").format(name=model.name)
        self._download = self.runner.submit(
            op_fetch, model, self.folder, drafter, projector=self.with_projector and not model.drafter,
            on_progress=self.progress.emit,
            on_done=self._on_fetched, on_error=self._on_fetch_failed, name="op_fetch",
        )
        self.busy_changed.emit(True)
        self.changed.emit()
        return True

    def cancel(self) -> None:
        if self._download is not None:
            self._download.cancel_event.set()

    # -- results
    def _on_hits(self, hits: list[client.RepoHit]) -> None:
        self.hits, self.searching = hits, False
        self.status = "" if hits else tr("No GGUF repositories found; try other words.")
        self.changed.emit()

    def _on_listing(self, listing: list[RemoteModel]) -> None:
        self.listing, self.loading = listing, False
        self.models = list(listing)
        self.rows_version += 1
        if self.judge is not None:
            self._judge_rows(self._rows.current)
        self.changed.emit()

    def _judge_rows(self, ticket: int) -> None:
        assert self.judge is not None
        self.runner.submit(op_judge, self.judge, list(self.listing), name="op_judge",
                           on_done=self._rows.deliver(self._set_verdicts, ticket),
                           on_error=self._rows.deliver(self._on_judge_failed, ticket))  # fmt: skip

    def _set_verdicts(self, verdicts: list[HubVerdict]) -> None:
        self.verdicts = {v.model.name: v for v in verdicts}
        self.models = [v.model for v in verdicts] + [m for m in self.listing if m.name not in self.verdicts]
        self.rows_version += 1
        self.changed.emit()

    def _on_judge_failed(self, exc: BaseException) -> None:
        log.warning("judging %s failed: %s", self.repo, exc)
        self.judge_error = _said(exc)
        self.rows_version += 1
        self.changed.emit()

    def _on_error(self, exc: BaseException) -> None:
        self.loading = self.searching = False
        self.error = _said(exc)
        self.changed.emit()

    def _on_fetched(self, result: fetch.Fetched) -> None:
        self._download = None
        if result.drafter is not None:
            self.status = tr("Downloaded {name} and its helper {helper}.").format(
                name=result.model.name, helper=result.drafter.name)
        else:
            self.status = tr("Downloaded {name}.").format(name=result.model.name)
        if result.problem is not None:
            self.status += "\n" + tr_message(result.problem)
        self.busy_changed.emit(False)
        self.downloaded.emit(result)
        self.changed.emit()

    def _on_fetch_failed(self, exc: BaseException) -> None:
        self._download = None
        if isinstance(exc, download.DownloadCancelled):
            self.status = tr("Stopped. What arrived is kept: Download continues from there.")
        elif isinstance(exc, client.HubError):
            self.error = text(exc.message)
        else:
            self.error = tr("The download failed: {error}").format(error=exc)
        self.busy_changed.emit(False)
        self.changed.emit()


def _said(exc: BaseException) -> str:
    return text(exc.message) if isinstance(exc, client.HubError) else str(exc)


def engine_for(app: AppRole) -> tuple[session.Engine, Path | None]:
    """The engine the verdicts are planned for (the selected llama.cpp build, else the pinned
    engine's facts), and the binary the speed probe may run (a usable llama.cpp build only)."""
    chosen = app.engine.selected
    if chosen is None or chosen.kind != EngineKind.LLAMA_CPP:
        return session.Engine(Path("llama-server"), capabilities.pinned_caps(), Backend.CPU), None
    engine = session.Engine(Path(chosen.binary), app.engine.caps(), chosen.backend or Backend.CPU)
    return engine, Path(chosen.binary) if chosen.usable else None


def for_app(app: AppRole) -> GetModelsViewModel:
    """The view-model for the window's app state: its runner, machine, engine and first
    library folder.

    Before the machine probe has answered, RAM alone is used to size the starters (psutil,
    instant); downloaded models join the library through the app's folder list.
    """
    from draftwise.core import paths
    from draftwise.core.machine.hardware import cpu_only

    machine = app.machine
    if machine is None:
        import psutil

        mem = psutil.virtual_memory()
        machine = cpu_only(mem.total, mem.available)
    folders = app.settings.model_folders
    folder = Path(folders[0]) if folders else paths.models_dir()
    engine, probe = engine_for(app)
    # While a model runs it shares the processor: use what was measured, measure nothing new.
    vm = GetModelsViewModel(app.runner, machine, folder, app, engine=engine, probe=probe,
                            measure=not app.launch.running)  # fmt: skip

    def on_downloaded(result: fetch.Fetched) -> None:
        if not app.add_folder(folder):  # a new folder is scanned as it is added
            app.library.rescan()
        app.open_model(result.model)

    vm.downloaded.connect(on_downloaded)
    return vm
