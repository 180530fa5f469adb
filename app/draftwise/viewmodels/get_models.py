""""Get models": starters by speed here, hub search, a repository's files with their fit and
speed, one download.

Every hub call runs off the GUI thread as one small named operation (search, list, fetch), so
a slow network never freezes the window; the newest search or listing wins, older answers are
dropped. The download reports progress, can be cancelled (what arrived is kept: the next
download continues from there), and, when the model's family has a known drafter, fetches the
drafter into the model's folder so that "MTP: auto" finds it.

The starters are ranked by how fast they would write on this computer (core/hub/catalog.py,
core/machine/speed.py). The rate is measured once per computer and engine build and then
read from the data folder; the first time, it is measured off the GUI thread (a few seconds
with the engine, a third of a second without) while the list waits in memory order.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QObject, Signal

from draftwise.core.hub import catalog, client, download, helpers
from draftwise.core.hub.files import Fit, HubFile, RemoteModel, judge_fit, projector_model
from draftwise.core.kinds import EngineKind
from draftwise.core.machine import speed
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message
from draftwise.core.readable import human_bytes
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.roles import AppRole

log = logging.getLogger(__name__)
R = TypeVar("R")  # what a hub question answers


def text(m: Message | str) -> str:
    """A core sentence in the window's language (the one translator, i18n.tr_message)."""
    return tr_message(m)


# ---------------------------------------------------------------- background operations
def op_search(query: str) -> list[client.RepoHit]:
    return client.search(query)


def op_list(repo: str) -> list[RemoteModel]:
    return client.list_models(repo)


@dataclass(frozen=True)
class Fetched:
    model: Path
    drafter: Path | None
    projector: Path | None = None


def op_fetch(model: RemoteModel, folder: Path, drafter: catalog.Drafter | None, *,
             report: Callable[[download.Progress], None], cancel: threading.Event,
             projector: bool = False) -> Fetched:  # fmt: skip
    path = download.download(model, folder, progress=report, cancelled=cancel.is_set)
    proj = projector_model(model) if projector else None
    # Beside the model: the reader lists an mmproj in the model's folder as its projector,
    # and the planner plans and passes it (planner.projector_for).
    proj_path = download.download(proj, folder, progress=report, cancelled=cancel.is_set,
                                  into=path.parent) if proj is not None else None  # fmt: skip
    if drafter is None:
        return Fetched(path, None, proj_path)
        return Fetched(path, None)
    draft = catalog.pick(client.list_models(drafter.repo), drafter.quant)
    if draft is None:
        return Fetched(path, None, proj_path)
    draft_path = download.download(draft, folder, progress=report, cancelled=cancel.is_set,
                                   into=path.parent)
    helpers.remember(draft_path, path)  # the library says "helper" for it (core/hub/helpers.py)
    return Fetched(path, draft_path, proj_path)


# ---------------------------------------------------------------- view-model
class GetModelsViewModel(QObject):
    changed = Signal()
    progress = Signal(object)  # download.Progress
    downloaded = Signal(object)  # Fetched
    busy_changed = Signal(bool)
    starters_changed = Signal()  # the order (and the speeds) of the starters changed

    def __init__(self, runner: TaskRunner, machine: Machine, folder: Path, parent: QObject | None = None, *,
                 rate: speed.Throughput | None = None, engine: Path | None = None,
                 measure: bool = True) -> None:  # fmt: skip
        super().__init__(parent)
        self.runner = runner
        self.machine = machine
        self.folder = folder
        self.rate = rate  # this computer's measured rate; None until the probe answers
        self.offers: list[catalog.Offer] = []
        self.starters: list[catalog.Starter] = []
        self._rank()
        if rate is None:
            # A failed probe leaves the starters in memory order, without speeds.
            self.runner.submit(speed.throughput, engine, measure=measure, on_done=self._on_rate,
                               on_error=lambda exc: log.warning("speed probe failed: %s", exc),
                               name="speed-probe")  # fmt: skip
        self.hits: list[client.RepoHit] = []
        self.repo: str | None = None
        self.models: list[RemoteModel] = []
        self.error: str | None = None
        self.status: str = ""
        self.loading = False
        self.with_drafter = True
        self.with_projector = True  # a vision model's mmproj comes with it
        self._latest = 0
        self._download = None

    # -- what the view shows
    def fit(self, model: RemoteModel) -> Fit:
        return judge_fit(model.size, self.machine)

    def speed_text(self, offer: catalog.Offer) -> str:
        if self.rate is None:
            return tr("Measuring how fast this computer runs models…")
        return text(catalog.speed_sentence(offer.estimate))

    def speed_tip(self, offer: catalog.Offer, drafter: bool = False) -> str:
        if self.rate is None:
            return ""
        return " ".join(text(m) for m in catalog.speed_details(offer.estimate, drafter=drafter))

    def file_speed(self, model: RemoteModel) -> tuple[str, str]:
        """(cell, tooltip) for a hub file's speed here; ("", "") until the rate is known."""
        if self.rate is None:
            return "", ""
        e = catalog.file_estimate(model, self.machine, self.rate)
        cell = tr("about {rate} tokens/s").format(rate=catalog.rate_words(e.tokens_per_s))
        if not e.readable:
            cell += " " + tr("(slow here)")
        return cell, " ".join(text(m) for m in catalog.speed_details(e))

    def _rank(self) -> None:
        # Not measured yet: an unbounded rate makes every starter readable, so they come in
        # memory order, largest first; no speed is shown until the rate is known.
        self.offers = catalog.starters_for(self.machine, self.rate or speed.Throughput(1e30, "described"))
        self.starters = [o.starter for o in self.offers]

    def _on_rate(self, rate: speed.Throughput) -> None:
        self.rate = rate
        self._rank()
        self.starters_changed.emit()
        self.changed.emit()

    def projector_offer(self) -> HubFile | None:
        """The repository's vision projector (mmproj), offered with its models."""
        return next((m.projector for m in self.models if m.projector is not None), None)

    def projector_text(self) -> str:
        p = self.projector_offer()
        if p is None:
            return ""
        return tr("Get its vision projector too ({name}, {size}): the model can then see pictures you attach "
                  "in the chat.").format(name=p.path.rsplit("/", 1)[-1], size=human_bytes(p.size))

    def drafter_offer(self) -> catalog.Drafter | None:
        return catalog.drafter_for(self.repo or "")

    @property
    def downloading(self) -> bool:
        return self._download is not None

    # -- actions
    def search(self, query: str) -> None:
        self._ask(op_search, query.strip(), self._on_hits)

    def open_repo(self, repo: str) -> None:
        self.repo, self.models = repo, []
        self._ask(op_list, repo, self._on_models)

    def fetch(self, model: RemoteModel) -> bool:
        if self._download is not None:
            return False
        drafter = self.drafter_offer() if self.with_drafter and not model.drafter else None
        self.error, self.status = None, tr("Downloading {name}…").format(name=model.name)
        self._download = self.runner.submit(
            op_fetch, model, self.folder, drafter, projector=self.with_projector and not model.drafter,
            on_progress=self.progress.emit,
            on_done=self._on_fetched, on_error=self._on_fetch_failed, name="hub-fetch",
        )
        self.busy_changed.emit(True)
        self.changed.emit()
        return True

    def cancel(self) -> None:
        if self._download is not None:
            self._download.cancel_event.set()

    # -- results
    def _ask(self, fn: Callable[[str], R], arg: str, done: Callable[[R], object]) -> None:
        self._latest += 1
        ticket = self._latest
        self.loading, self.error = True, None
        self.changed.emit()
        self.runner.submit(
            fn, arg, name=fn.__name__,
            on_done=lambda result: ticket == self._latest and done(result),
            on_error=lambda exc: ticket == self._latest and self._on_error(exc),
        )

    def _on_hits(self, hits: list[client.RepoHit]) -> None:
        self.hits, self.loading = hits, False
        if not hits:
            self.status = tr("No GGUF repositories found; try other words.")
        self.changed.emit()

    def _on_models(self, models: list[RemoteModel]) -> None:
        self.models, self.loading = models, False
        self.changed.emit()

    def _on_error(self, exc: BaseException) -> None:
        self.loading = False
        self.error = text(exc.message) if isinstance(exc, client.HubError) else str(exc)
        self.changed.emit()

    def _on_fetched(self, result: Fetched) -> None:
        self._download = None
        self.status = (tr("Downloaded {name} and its draft model.") if result.drafter
                       else tr("Downloaded {name}.")).format(name=result.model.name)
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


def for_app(app: AppRole) -> GetModelsViewModel:
    """The view-model for the window's app state: its runner, machine and first library folder.

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
    chosen = app.engine.selected
    engine = Path(chosen.binary) if chosen is not None and chosen.kind == EngineKind.LLAMA_CPP and chosen.usable else None
    # While a model runs it shares the processor: use what was measured, measure nothing new.
    vm = GetModelsViewModel(app.runner, machine, folder, app, engine=engine, measure=not app.launch.running)

    def on_downloaded(result: Fetched) -> None:
        if not app.add_folder(folder):  # a new folder is scanned as it is added
            app.library.rescan()
        app.open_model(result.model)

    vm.downloaded.connect(on_downloaded)
    return vm
