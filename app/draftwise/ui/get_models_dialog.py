""""Get models": pick a starter or search the hub, see each file judged for this computer before
download (fit, context, planned memory, speed, what drafts), download it with its helper."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.hub.download import DownloadProgress
from draftwise.core.hub.files import RemoteModel, display_name
from draftwise.core.hub.starters import Offer
from draftwise.core.planning.plan_types import FITS
from draftwise.core.readable import human_bytes, human_duration
from draftwise.ui.theme import title_font
from draftwise.viewmodels import hub_words
from draftwise.viewmodels.get_models import GetModelsViewModel
from draftwise.viewmodels.i18n import N_, tr

REPO_ROLE = Qt.ItemDataRole.UserRole
COLUMNS = (N_("File"), N_("Quality"), N_("Size"), N_("Fits here?"), N_("Context"), N_("Planned"),
           N_("Speed here"), N_("Drafting"))  # fmt: skip
VERDICT_COL = 3  # the verdict's cells start here; one cell spans them while a file is judged
# The verdict's words wrap in columns this wide (pixels at the default font): a row stays short
# enough to read at a glance, the details are in each cell's tooltip.
WRAPPED = {3: 120, 6: 130, 7: 190}
COLUMN_TIPS = {
    1: N_("How strongly the weights are compressed: Q4_K_M is a good balance; Q8_0 is closer to the "
          "original and twice the size."),
    3: N_("Each file is planned from its own header (read from the hub, a few MB at most) exactly as a "
          "downloaded file would be: nothing is downloaded to judge it."),
    5: N_("The memory the plan uses in all: weights, context, compute buffers, drafter and projector."),
    7: N_("What guesses the next words for it: its own MTP head, its MTP assistant, a small helper model "
          "downloaded beside it, or nothing."),
}


class GetModelsDialog(QDialog):
    def __init__(self, vm: GetModelsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self._rows_version = -1
        self._auto: str | None = None  # the file chosen for the user (a better one may replace it)
        self.setObjectName("getModelsDialog")
        self.setWindowTitle(tr("Get models"))
        self.resize(1240, 660)

        heading = QLabel(tr("Get models"))
        heading.setFont(title_font(self.font(), 1.25))
        intro = QLabel(tr(
            "Pick a starter model for this computer, or search the model hub. Each file is judged for this "
            "computer before anything is downloaded. Models go into {folder} and appear in your library."
        ).format(folder=vm.folder))
        intro.setWordWrap(True)

        self.starters = QListWidget()
        self.starters.setObjectName("starters")
        self.starters.setWordWrap(True)
        self.starters.setSpacing(2)
        self.starters.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.starters_note = QLabel()
        self.starters_note.setObjectName("startersNote")
        self.starters_note.setWordWrap(True)
        self.query = QLineEdit()
        self.query.setPlaceholderText(tr("Search the hub, e.g. qwen 7b"))
        self.search_button = QPushButton(tr("Search"))
        self.hits = QListWidget()
        self.hits.setObjectName("hits")

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        starters_title = QLabel(tr("Starters for this computer"))
        starters_title.setToolTip(tr("The largest model that still writes at least about 8 tokens a second "
                                     "here comes first; slower ones are below it. A double click downloads one."))
        lv.addWidget(starters_title)
        lv.addWidget(self.starters, 3)
        lv.addWidget(self.starters_note)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.search_button)
        lv.addLayout(row)
        lv.addWidget(self.hits, 2)

        self.repo_label = QLabel(tr("Choose a model on the left to see its files."))
        self.repo_label.setWordWrap(True)
        self.files = QTableWidget(0, len(COLUMNS))
        self.files.setObjectName("files")
        self.files.setHorizontalHeaderLabels([tr(c) for c in COLUMNS])
        header = self.files.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Interactive if col in WRAPPED
                                        else QHeaderView.ResizeMode.ResizeToContents)  # fmt: skip
        for col, width in WRAPPED.items():
            header.resizeSection(col, width)
        self.files.setWordWrap(True)
        self.files.setTextElideMode(Qt.TextElideMode.ElideRight)
        for col, tip in COLUMN_TIPS.items():
            self.files.horizontalHeaderItem(col).setToolTip(tr(tip))
        self.files.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.verticalHeader().hide()
        self.drafter = QCheckBox()
        self.drafter.setObjectName("withDrafter")
        self.drafter.setChecked(vm.with_drafter)
        self.drafter.setToolTip(tr(
            "A small model of the same family guesses the next words and the big model checks "
            "them: same answers, faster. It is saved beside the model, where Draftwise finds it."))
        self.projector = QCheckBox()
        self.projector.setObjectName("withProjector")
        self.projector.setChecked(vm.with_projector)
        self.projector.setToolTip(tr(
            "A vision model's eyes: the mmproj file turns a picture into words the model reads. It is "
            "saved beside the model, and the launch passes it to the engine."))
        self.download_button = QPushButton(tr("Download"))
        self.download_button.setDefault(True)
        self.cancel_button = QPushButton(tr("Stop"))
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.rate = QLabel()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setObjectName("status")

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.repo_label)
        rv.addWidget(self.files, 1)
        rv.addWidget(self.drafter)
        rv.addWidget(self.projector)
        buttons = QHBoxLayout()
        buttons.addWidget(self.bar, 1)
        buttons.addWidget(self.download_button)
        buttons.addWidget(self.cancel_button)
        rv.addLayout(buttons)
        rv.addWidget(self.rate)
        rv.addWidget(self.status)

        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([360, 880])
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addWidget(split, 1)

        self._fill_starters()
        self.starters.currentItemChanged.connect(self._on_pick_starter)
        self.starters.itemActivated.connect(self._on_get_starter)
        self.hits.currentItemChanged.connect(self._on_pick)
        self.search_button.clicked.connect(lambda: vm.search(self.query.text()))
        self.query.returnPressed.connect(lambda: vm.search(self.query.text()))
        self.download_button.clicked.connect(self._on_download)
        self.files.doubleClicked.connect(lambda _i: self._on_download())
        self.files.currentCellChanged.connect(lambda *_a: self._refresh_choice())
        self.cancel_button.clicked.connect(vm.cancel)
        self.drafter.toggled.connect(lambda on: setattr(vm, "with_drafter", on))
        self.projector.toggled.connect(lambda on: setattr(vm, "with_projector", on))
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self._on_escape)
        vm.changed.connect(self.refresh)
        vm.starters_changed.connect(self._fill_starters)
        vm.progress.connect(self._on_progress)
        self.query.setFocus()  # the starters list would take the focus, and choose its first at once
        self.refresh()

    # -- the starters
    def _fill_starters(self) -> None:
        """One item per starter, in the view-model's order: name, what it is for, how fast it
        would write here and, once judged, its verdict (slower ones, below, in a quieter colour)."""
        current = self.starters.currentItem()
        keep = current.data(REPO_ROLE) if current is not None else None
        self.starters.blockSignals(True)
        self.starters.clear()
        for offer in self.vm.offers:
            item = QListWidgetItem(self.vm.starter_text(offer))
            item.setData(REPO_ROLE, offer.starter.title)
            item.setToolTip(self.vm.starter_tip(offer))
            if self.vm.rate is not None and not offer.estimate.readable:
                item.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
            self.starters.addItem(item)
            if offer.starter.title == keep:
                self.starters.setCurrentItem(item)
        self.starters.blockSignals(False)

    def _offer(self, item: QListWidgetItem | None) -> Offer | None:
        row = self.starters.row(item) if item is not None else -1
        return self.vm.offers[row] if 0 <= row < len(self.vm.offers) else None

    def _on_pick_starter(self, item: QListWidgetItem | None, _prev: object = None) -> None:
        offer = self._offer(item)
        if offer is None:
            return
        if offer.verdict is None:
            self.query.setText(offer.starter.hint)  # not judged: its hint, searched on the hub
        self.vm.pick_starter(offer)

    def _on_get_starter(self, item: QListWidgetItem) -> None:
        offer = self._offer(item)
        if offer is not None and offer.verdict is not None:
            self.vm.get_starter(offer)

    # -- the files
    def _on_pick(self, item: QListWidgetItem | None, _prev: object = None) -> None:
        if item is not None:
            self.vm.open_repo(item.data(REPO_ROLE))

    def selected_model(self) -> RemoteModel | None:
        row = self.files.currentRow()
        return self.vm.models[row] if 0 <= row < len(self.vm.models) else None

    def _on_download(self) -> None:
        model = self.selected_model()
        if self.vm.can_fetch(model):
            self.vm.fetch(model)  # type: ignore[arg-type]

    def _on_escape(self) -> None:
        if self.vm.downloading:
            self.vm.cancel()
        else:
            self.reject()

    def _on_progress(self, p: DownloadProgress) -> None:
        self.bar.setValue(int(p.fraction * 1000))
        left = tr(", {time} left").format(time=human_duration(p.eta_s)) if p.eta_s is not None else ""
        self.rate.setText(tr("{done} of {total} — {speed}/s{left}").format(
            done=human_bytes(p.done), total=human_bytes(p.total), speed=human_bytes(p.speed), left=left))

    def refresh(self) -> None:
        vm = self.vm
        if [self.hits.item(i).data(REPO_ROLE) for i in range(self.hits.count())] != [h.repo for h in vm.hits]:
            self.hits.blockSignals(True)
            self.hits.clear()
            for h in vm.hits:
                gated = tr("  (asks for an access token)") if h.gated else ""
                item = QListWidgetItem(f"{h.repo}{gated}")
                item.setData(REPO_ROLE, h.repo)
                item.setToolTip(tr("{n} downloads").format(n=f"{h.downloads:,}"))
                self.hits.addItem(item)
            self.hits.blockSignals(False)
        note, note_tip = vm.starters_note()
        self.starters_note.setText(note)
        self.starters_note.setToolTip(note_tip)
        self.starters_note.setVisible(bool(note))
        if vm.repo:
            self.repo_label.setText(vm.repo_text())
        elif vm.searching:
            self.repo_label.setText(tr("Searching the hub…"))
        elif vm.hits:
            self.repo_label.setText(tr("Choose a repository on the left to see its files."))
        else:
            self.repo_label.setText(tr("Choose a model on the left to see its files."))
        self._fill_files()
        self.projector.setText(vm.projector_text())
        self.projector.setVisible(vm.projector_offer() is not None)
        self.cancel_button.setVisible(vm.downloading)
        self.bar.setVisible(vm.downloading)
        self.rate.setVisible(vm.downloading)
        self.status.setProperty("kind", "error" if vm.error else "")
        self.status.setText(vm.error or vm.status)
        self.status.style().polish(self.status)
        self._refresh_choice()

    def _refresh_choice(self) -> None:
        """The selected file's drafter offer (named, only when its verdict has one) and Download."""
        model = self.selected_model()
        offer = self.vm.drafter_text(model)
        self.drafter.setText(offer)
        self.drafter.setVisible(bool(offer))
        self.download_button.setEnabled(self.vm.can_fetch(model))
        self.download_button.setToolTip(tr("Still judging this file: a moment.") if model is not None
                                        and self.vm.pending(model) else "")  # fmt: skip

    def _fill_files(self) -> None:
        vm = self.vm
        if self._rows_version == vm.rows_version and self.files.rowCount() == len(vm.models):
            return
        self._rows_version = vm.rows_version
        chosen = self.selected_model()
        keep = chosen.name if chosen is not None and chosen.name != self._auto else None  # the user's choice
        line = self.files.fontMetrics().height() + 8
        self.files.blockSignals(True)
        self.files.clearSpans()
        self.files.setRowCount(len(vm.models))
        best = again = None
        for r, m in enumerate(vm.models):
            name = display_name(m)
            parts = tr(" in {n} parts").format(n=len(m.files)) if len(m.files) > 1 else ""
            first = (hub_words.Cell(name, m.name if m.repo == vm.repo else f"{m.repo}: {m.name}"),
                     hub_words.Cell(m.quant or "?"), hub_words.Cell(human_bytes(m.size) + parts))
            words = vm.row_words(m)
            if isinstance(words, hub_words.VerdictWords) and words.error is None:
                cells = (*first, *words.cells)
            else:
                one = words.error if isinstance(words, hub_words.VerdictWords) else words
                cells = (*first, one)  # type: ignore[assignment]
                self.files.setSpan(r, VERDICT_COL, 1, len(COLUMNS) - VERDICT_COL)
            for c in range(len(COLUMNS)):
                cell = cells[c] if c < len(cells) else hub_words.Cell("")
                item = QTableWidgetItem(cell.text)
                item.setData(REPO_ROLE, m.name)
                if cell.tip:
                    item.setToolTip(cell.tip)
                if c == VERDICT_COL and len(cells) == VERDICT_COL + 1:
                    # One line across the verdict's columns, elided: it sizes neither column nor row.
                    item.setData(Qt.ItemDataRole.SizeHintRole, QSize(1, line))
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                self.files.setItem(r, c, item)
            v = vm.verdict(m)
            if best is None and v is not None and v.error is None and v.fit_state == FITS and (
                    m.quant or "").startswith("Q4"):  # fmt: skip
                best = r
            if m.name == keep:
                again = r
        self.files.blockSignals(False)
        self.files.resizeRowsToContents()
        if vm.models:
            row = again if again is not None else best if best is not None else 0
            self.files.selectRow(row)
            self._auto = None if again is not None else vm.models[row].name
