"""The model library: folders the user added, scanned in the background, as a table.

Split models are one row (the scanner reports only the first part). The "fits" badge is the
planner's verdict for this machine, computed on the scan thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)

from draftwise.core import identity
from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import helpers
from draftwise.core.launch import session
from draftwise.core.machine import hardware
from draftwise.core.messages import Text
from draftwise.core.readable import human_bytes, human_ctx, human_params
from draftwise.core.speculation import tags
from draftwise.services.library_scan import LibraryScanner, ScanEntry, TaskRunner
from draftwise.viewmodels.i18n import N_, tr, tr_message
from draftwise.viewmodels.model_details import (
    CHAT_KIND,
    DRAFT_KIND,
    KIND_TIPS,
    TEXT_KIND,
    display_name,
    mtp_badge,
)
from draftwise.viewmodels.plan import FITS, NO_FIT, PARTIAL, assess_fit

COLUMNS = (
    ("name", N_("Name")),
    ("kind", N_("Use")),
    ("arch", N_("Arch")),
    ("params", N_("Params")),
    ("quant", N_("Quant")),
    ("size", N_("Size")),
    ("ctx", N_("Context")),
    ("mtp", N_("Speed-up")),
    ("fit", N_("Fits")),
)
HEADER_TIPS = {
    "arch": N_("Architecture"),
    "params": N_("Parameters"),
    "quant": N_("Quantization"),
    "size": N_("Size on disk"),
    "ctx": N_("Trained context length"),
    "mtp": N_("What makes answers faster: a built-in MTP head, or a small draft model beside it"),
    "fit": N_("Whether it fits in this machine's memory"),
}
log = logging.getLogger(__name__)
COL = {key: i for i, (key, _) in enumerate(COLUMNS)}
PathRole = Qt.ItemDataRole.UserRole
SortRole = Qt.ItemDataRole.UserRole + 1
FitRole = Qt.ItemDataRole.UserRole + 2  # fits | partial | no | None
ErrorRole = Qt.ItemDataRole.UserRole + 3  # the error text of an unreadable file
SearchRole = Qt.ItemDataRole.UserRole + 4

FIT_WORDS = {FITS: N_("✓ fits"), PARTIAL: N_("◐ partly"), NO_FIT: N_("✗ too big")}
DRAFT_TAG, COMPANION_TAG = N_("draft"), N_("+ drafter")
TAG_TIPS = {
    "MTP": N_("Has a built-in MTP head: it guesses several words at once, so answers come faster"),
    COMPANION_TAG: N_("A small draft model of the same family sits beside it: it guesses the next "
                      "words and this model checks them — same answers, faster"),
    DRAFT_TAG: N_("A draft model: it helps a bigger model of its family answer faster; it is not "
                  "meant to be launched on its own"),
}
@dataclass(frozen=True)
class LibraryRow:
    path: Path
    info: gguf.ModelInfo | None
    error: Text | None = None  # shown with tr_message
    fit: str | None = None

    @property
    def name(self) -> str:
        return display_name(self.info, self.path)


class LibraryModel(QAbstractTableModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[LibraryRow] = []
        self._index: dict[str, int] = {}
        self._tags: dict[str, str] = {}  # path -> speculation tag, rebuilt when rows change
        self._helpers: set[str] | None = None  # paths that are some model's helper, likewise
        self._speedups: dict[str, float | None] | None = None  # path -> measured speed-up (read lazily)

    def tag(self, row: LibraryRow) -> str:
        """"MTP", "+ drafter" (a drafter beside it), "draft" (the file is one), or ""."""
        key = str(row.path)
        if key not in self._tags:
            self._tags[key] = self._compute_tag(row)
        return self._tags[key]

    def speedup(self, row: LibraryRow) -> float | None:
        """The speed-up measured on this computer where speculation pays (measured.speedups),
        per row path: asked on every paint, so neither the record nor the path is read twice."""
        if self._speedups is None:
            try:
                by_key = session.Records.load().measured.speedups()
            except OSError as exc:  # the records unreadable: the column shows the tags alone
                log.info("measured speed-ups not read: %s", exc)
                by_key = {}
            self._speedups = {str(r.path): by_key.get(identity.path_key(r.path)) for r in self.rows} if by_key else {}
        return self._speedups.get(str(row.path))

    def refresh_speedups(self) -> None:
        """A measurement was recorded or forgotten: read the figures again on the next paint."""
        self._speedups = None
        if self.rows:
            col = COL["mtp"]
            self.dataChanged.emit(self.index(0, col), self.index(len(self.rows) - 1, col))

    def kind(self, row: LibraryRow) -> str:
        i = row.info
        if i is not None and (tags.is_drafter(i) or self.is_helper(row)):
            return DRAFT_KIND
        return CHAT_KIND if i is not None and i.has_chat_template else TEXT_KIND

    def is_helper(self, row: LibraryRow) -> bool:
        """A file that is there to help another model: fetched as its drafter (Get models'
        "draft model too", core/hub/helpers.py) or the drafter the resolver would pair with a
        model beside it (a small model of the same family). Its own header may say chat or
        base model; what it is for here is helping."""
        if self._helpers is None:
            self._helpers = self._find_helpers()
        return str(row.path) in self._helpers

    def _find_helpers(self) -> set[str]:
        here = {str(r.path) for r in self.rows}
        found = {d for d, model in helpers.recorded().items() if d in here and model in here}
        by_folder: dict[Path, list[gguf.ModelInfo]] = {}
        for r in self.rows:
            if r.info is not None:
                by_folder.setdefault(r.path.parent, []).append(r.info)
        for infos in by_folder.values():
            for model in infos:
                if tags.is_drafter(model):
                    continue
                # The one the resolver ranks first: a drafter by name, then the smaller file.
                paired = [o for o in infos if o is not model and tags.has_companion(model, [o])]
                if paired:
                    best = min(paired, key=lambda o: (not tags.is_drafter(o), o.size_bytes, o.path.name))
                    found.add(str(best.path))
        return found

    def _compute_tag(self, row: LibraryRow) -> str:
        i = row.info
        if i is None:
            return ""
        if tags.is_drafter(i) or self.is_helper(row):
            return DRAFT_TAG
        if mtp_badge(i):
            return "MTP"
        others = (r.info for r in self.rows if r.info is not None and r.path.parent == row.path.parent)
        return COMPANION_TAG if tags.has_companion(i, others) else ""

    # ---------------------------------------------------------------- Qt model
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return tr(COLUMNS[section][1])
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = HEADER_TIPS.get(COLUMNS[section][0])
            return tr(tip) if tip else None
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        key = COLUMNS[index.column()][0]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row, key)
        if role == SortRole:
            return self._sort_value(row, key)
        if role == PathRole:
            return str(row.path)
        if role == FitRole:
            return row.fit
        if role == ErrorRole:
            return tr_message(row.error) if row.error else None
        if role == SearchRole:
            i = row.info
            return " ".join(filter(None, [row.name, i.architecture if i else "", i.quant if i else "", i.name if i else ""]))
        if role == Qt.ItemDataRole.ToolTipRole:
            if row.error:
                return tr_message(row.error)
            if key == "fit" and row.fit:
                return {FITS: tr("Fits in this machine's memory"),
                        PARTIAL: tr("Fits only partly on the GPU: slower"),
                        NO_FIT: tr("Too big for this machine's memory")}[row.fit]
            if key == "mtp" and (self.tag(row) or self.speedup(row)):
                ratio = self.speedup(row)
                return "\n".join(filter(None, [
                    tr(TAG_TIPS[self.tag(row)]) if self.tag(row) else "",
                    tr("Measured on this computer: {0}× as fast with speculation").format(f"{ratio:.2f}")
                    if ratio else ""]))
            if key == "kind" and row.info is not None:
                return tr(KIND_TIPS[self.kind(row)])
            return str(row.path)
        if role == Qt.ItemDataRole.TextAlignmentRole and key in ("params", "size", "ctx"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, row: LibraryRow, key: str) -> str:
        i = row.info
        if key == "name":
            return row.name
        if key == "kind":
            return tr(self.kind(row)) if i is not None else ""
        if i is None:
            return tr("unreadable") if key == "arch" else ""
        if key == "arch":
            return i.architecture or "?"
        if key == "params":
            return human_params(i.parameters)
        if key == "quant":
            return i.quant or ""
        if key == "size":
            return human_bytes(i.size_bytes)
        if key == "ctx":
            return human_ctx(i.context_length)
        if key == "mtp":
            ratio = self.speedup(row)
            return " · ".join(filter(None, [tr(self.tag(row)) if self.tag(row) else "",
                                            f"{ratio:.2f}×" if ratio else ""]))
        if key == "fit":
            return tr(FIT_WORDS[row.fit]) if row.fit else ""
        return ""

    def _sort_value(self, row: LibraryRow, key: str) -> str | int:
        i = row.info
        if key == "name":
            return row.name.lower()
        if i is None:
            return -1 if key in ("params", "size", "ctx") else ""
        return {
            "arch": i.architecture or "", "params": i.parameters or 0, "quant": i.quant or "",
            "size": i.size_bytes, "ctx": i.context_length or 0, "mtp": self.tag(row),
            "kind": self.kind(row),
            "fit": {FITS: 0, PARTIAL: 1, NO_FIT: 2}.get(row.fit or "", 3),
        }.get(key, "")

    # ---------------------------------------------------------------- rows
    def upsert(self, rows: list[LibraryRow]) -> None:
        self._tags.clear()
        self._speedups = None
        self._helpers = None
        new = []
        for r in rows:
            k = str(r.path)
            at = self._index.get(k)
            if at is None:
                new.append(r)
            else:
                self.rows[at] = r
                self.dataChanged.emit(self.index(at, 0), self.index(at, len(COLUMNS) - 1))
        if new:
            first = len(self.rows)
            self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
            for r in new:
                self._index[str(r.path)] = len(self.rows)
                self.rows.append(r)
            self.endInsertRows()

    def replace_all(self, rows: list[LibraryRow]) -> None:
        self._tags.clear()
        self._speedups = None
        self._helpers = None
        self.beginResetModel()
        self.rows = list(rows)
        self._index = {str(r.path): i for i, r in enumerate(self.rows)}
        self.endResetModel()

    def keep_only(self, paths: set[str]) -> None:
        if all(str(r.path) in paths for r in self.rows):
            return
        self.replace_all([r for r in self.rows if str(r.path) in paths])

    def set_fits(self, fits: dict[str, str | None]) -> None:
        for k, fit in fits.items():
            at = self._index.get(k)
            if at is not None and self.rows[at].fit != fit:
                self.rows[at] = replace(self.rows[at], fit=fit)
        if self.rows:
            col = COL["fit"]
            self.dataChanged.emit(self.index(0, col), self.index(len(self.rows) - 1, col))

    def row_of(self, path: str | Path) -> int | None:
        return self._index.get(str(path))

    def retranslate(self) -> None:
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(COLUMNS) - 1)
        if self.rows:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self.rows) - 1, len(COLUMNS) - 1))


class LibraryFilter(QSortFilterProxyModel):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setSortRole(SortRole)
        self.setFilterRole(SearchRole)
        self.setFilterKeyColumn(COL["name"])
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)


class LibraryViewModel(QObject):
    changed = Signal()
    scan_finished = Signal(int)  # models found
    folders_changed = Signal()

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.scanner = LibraryScanner(runner, self)
        self.model = LibraryModel(self)
        self.proxy = LibraryFilter(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.sort(COL["name"], Qt.SortOrder.AscendingOrder)
        self.folders: list[str] = []
        self.files: list[str] = []  # single files the user opened or dropped
        self.machine: hardware.Machine | None = None
        self.search = ""
        self.last_scan_seconds: float | None = None
        self.scanner.batch_found.connect(self._on_batch)
        self.scanner.scan_finished.connect(self._on_scan_finished)
        self._seen: set[str] = set()

    @property
    def scanning(self) -> bool:
        return self.scanner.scanning

    def set_sources(self, folders: list[str], files: list[str]) -> None:
        self.folders = list(folders)
        self.files = list(files)

    def _assess(self, info: gguf.ModelInfo) -> str | None:
        machine = self.machine
        return assess_fit(info, machine) if machine is not None else None

    def rescan(self) -> None:
        self._seen = set()
        sources = [*self.folders, *self.files]
        self.scanner.scan([Path(p) for p in sources], self._assess)
        self.changed.emit()

    def add_folder(self, folder: str | Path) -> bool:
        text = str(Path(folder).expanduser())
        if text in self.folders:
            return False
        self.folders.append(text)
        self.folders_changed.emit()
        self.rescan()
        return True

    def remove_folder(self, folder: str) -> None:
        if folder in self.folders:
            self.folders.remove(folder)
            self.folders_changed.emit()
            self.rescan()

    def add_file(self, path: str | Path) -> bool:
        text = str(Path(path).expanduser())
        inside = any(Path(text).is_relative_to(Path(f)) for f in self.folders)
        if inside or text in self.files:
            return False
        self.files.append(text)
        self.folders_changed.emit()
        self.rescan()
        return True

    def set_search(self, text: str) -> None:
        self.search = text
        self.proxy.setFilterFixedString(text)
        self.changed.emit()

    def set_machine(self, machine: hardware.Machine | None) -> None:
        """The machine is known: (re)compute every fit badge off the GUI thread."""
        self.machine = machine
        infos = [r.info for r in self.model.rows if r.info is not None]
        if not infos:
            return

        def work(items: list[gguf.ModelInfo]) -> dict[str, str | None]:
            out: dict[str, str | None] = {}
            for info in items:
                try:
                    out[str(info.path)] = assess_fit(info, machine)
                except Exception:  # noqa: BLE001 — a failed estimate leaves the badge empty
                    out[str(info.path)] = None
            return out

        self.runner.submit(work, infos, on_done=self.model.set_fits, name="assess-fits")

    def _on_batch(self, scan_id: int, batch: list[ScanEntry]) -> None:
        rows = [LibraryRow(e.path, e.info, e.error, e.extra) for e in batch]
        self._seen.update(str(r.path) for r in rows)
        self.model.upsert(rows)
        self.changed.emit()

    def _on_scan_finished(self, scan_id: int, count: int, seconds: float) -> None:
        self.last_scan_seconds = seconds
        # Rows of folders removed (or files deleted) since the last scan go now.
        self.model.keep_only(self._seen)
        self.changed.emit()
        self.scan_finished.emit(count)

    def info_for(self, path: str | Path) -> gguf.ModelInfo | None:
        at = self.model.row_of(path)
        return self.model.rows[at].info if at is not None else None

    def status_text(self) -> str:
        n = self.model.rowCount()
        if self.scanning:
            return (tr("Scanning… {0} model") if n == 1 else tr("Scanning… {0} models")).format(n)
        if not self.folders and not self.files:
            return tr("Add a folder with .gguf models, or drop a file here.")
        if n == 0:
            return tr("No models found in these folders.")
        shown = self.proxy.rowCount()
        if shown != n:
            return tr("{0} of {1} models").format(shown, n)
        return (tr("{0} model") if n == 1 else tr("{0} models")).format(n)
