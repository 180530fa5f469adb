""""Get models": pick a starter or search the hub, see each file's size and fit, download."""

from __future__ import annotations

from PySide6.QtCore import Qt
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

from draftwise.core.hub import catalog
from draftwise.core.hub.download import Progress
from draftwise.core.hub.files import display_name
from draftwise.core.readable import human_bytes, human_duration
from draftwise.ui.theme import title_font
from draftwise.viewmodels.get_models import GetModelsViewModel, text
from draftwise.viewmodels.i18n import N_, tr

REPO_ROLE = Qt.ItemDataRole.UserRole
FIT_WORDS = {"fits": N_("Fits"), "gpu-partly": N_("Partly on CPU"), "too-big": N_("Too big")}
FIT_TIPS = {
    "fits": N_("Fits this computer's memory, with room for a few thousand words of context."),
    "gpu-partly": N_("Fits only with part of it on the processor: it runs, but slower."),
    "too-big": N_("Too big for this computer's memory; choose a smaller file."),
}


class GetModelsDialog(QDialog):
    def __init__(self, vm: GetModelsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self._files_rate = vm.rate
        self.setObjectName("getModelsDialog")
        self.setWindowTitle(tr("Get models"))
        self.resize(980, 600)

        heading = QLabel(tr("Get models"))
        heading.setFont(title_font(self.font(), 1.25))
        intro = QLabel(tr(
            "Pick a starter model for this computer, or search the model hub. Models go into "
            "{folder} and appear in your library.").format(folder=vm.folder))
        intro.setWordWrap(True)

        self.starters = QListWidget()
        self.starters.setObjectName("starters")
        self.starters.setWordWrap(True)
        self.starters.setSpacing(2)
        self.starters.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._fill_starters()
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
                                     "here comes first; slower ones are below it."))
        lv.addWidget(starters_title)
        lv.addWidget(self.starters, 3)
        row = QHBoxLayout()
        row.addWidget(self.query, 1)
        row.addWidget(self.search_button)
        lv.addLayout(row)
        lv.addWidget(self.hits, 2)

        self.repo_label = QLabel(tr("Choose a model on the left to see its files."))
        self.repo_label.setWordWrap(True)
        self.files = QTableWidget(0, 5)
        self.files.setObjectName("files")
        self.files.setHorizontalHeaderLabels([tr("File"), tr("Quality"), tr("Size"), tr("Fits?"), tr("Speed here")])
        self.files.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2, 3, 4):
            self.files.horizontalHeader().setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.files.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.verticalHeader().hide()
        self.files.horizontalHeaderItem(1).setToolTip(tr(
            "How strongly the weights are compressed: Q4_K_M is a good balance; Q8_0 is closer "
            "to the original and twice the size."))
        self.drafter = QCheckBox(text(catalog.DRAFTER_OFFER))
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
        split.setSizes([400, 580])
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addWidget(split, 1)

        self.starters.currentItemChanged.connect(self._on_pick)
        self.hits.currentItemChanged.connect(self._on_pick)
        self.search_button.clicked.connect(lambda: vm.search(self.query.text()))
        self.query.returnPressed.connect(lambda: vm.search(self.query.text()))
        self.download_button.clicked.connect(self._on_download)
        self.files.doubleClicked.connect(lambda _i: self._on_download())
        self.cancel_button.clicked.connect(vm.cancel)
        self.drafter.toggled.connect(lambda on: setattr(vm, "with_drafter", on))
        self.projector.toggled.connect(lambda on: setattr(vm, "with_projector", on))
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, activated=self._on_escape)
        vm.changed.connect(self.refresh)
        vm.starters_changed.connect(self._fill_starters)
        vm.progress.connect(self._on_progress)
        self.refresh()

    def _fill_starters(self) -> None:
        """One item per starter, in the view-model's order: name, what it is for, and how fast
        it would write here (slower ones, below, in a quieter colour)."""
        current = self.starters.currentItem()
        keep = current.data(REPO_ROLE) if current is not None else None
        self.starters.blockSignals(True)
        self.starters.clear()
        for offer in self.vm.offers:
            s = offer.starter
            badge = tr("  + draft model") if s.drafter else ""
            item = QListWidgetItem(f"{s.name}{badge}\n{text(s.about)}\n{self.vm.speed_text(offer)}")
            item.setData(REPO_ROLE, s.repo)
            tip = self.vm.speed_tip(offer, drafter=s.drafter is not None)
            item.setToolTip(f"{s.repo}\n{tip}" if tip else s.repo)
            if self.vm.rate is not None and not offer.estimate.readable:
                item.setForeground(self.palette().color(QPalette.ColorRole.PlaceholderText))
            self.starters.addItem(item)
            if s.repo == keep:
                self.starters.setCurrentItem(item)
        self.starters.blockSignals(False)

    def _on_pick(self, item: QListWidgetItem | None, _prev: object = None) -> None:
        if item is not None:
            self.vm.open_repo(item.data(REPO_ROLE))

    def _on_download(self) -> None:
        row = self.files.currentRow()
        if 0 <= row < len(self.vm.models):
            self.vm.fetch(self.vm.models[row])

    def _on_escape(self) -> None:
        if self.vm.downloading:
            self.vm.cancel()
        else:
            self.reject()

    def _on_progress(self, p: Progress) -> None:
        self.bar.setValue(int(p.fraction * 1000))
        left = tr(", {time} left").format(time=human_duration(p.eta_s)) if p.eta_s is not None else ""
        self.rate.setText(tr("{done} of {total} — {speed}/s{left}").format(
            done=human_bytes(p.done), total=human_bytes(p.total), speed=human_bytes(p.speed), left=left))

    def refresh(self) -> None:
        vm = self.vm
        if self.hits.count() != len(vm.hits):
            self.hits.clear()
            for h in vm.hits:
                gated = tr("  (asks for an access token)") if h.gated else ""
                item = QListWidgetItem(f"{h.repo}{gated}")
                item.setData(REPO_ROLE, h.repo)
                item.setToolTip(tr("{n} downloads").format(n=f"{h.downloads:,}"))
                self.hits.addItem(item)
        if vm.repo:
            self.repo_label.setText(tr("Loading {repo}…").format(repo=vm.repo) if vm.loading and not vm.models
                                    else vm.repo)
        self._fill_files()
        offer = vm.drafter_offer()
        self.drafter.setVisible(offer is not None)
        self.projector.setText(vm.projector_text())
        self.projector.setVisible(vm.projector_offer() is not None)
        self.download_button.setEnabled(bool(vm.models) and not vm.downloading)
        self.cancel_button.setVisible(vm.downloading)
        self.bar.setVisible(vm.downloading)
        self.rate.setVisible(vm.downloading)
        self.status.setProperty("kind", "error" if vm.error else "")
        self.status.setText(vm.error or vm.status)
        self.status.style().polish(self.status)

    def _fill_files(self) -> None:
        vm = self.vm
        if self.files.rowCount() == len(vm.models) and self._files_rate is vm.rate and all(
            self.files.item(r, 0).data(REPO_ROLE) == m.name for r, m in enumerate(vm.models)
        ):
            return
        self._files_rate = vm.rate  # the speeds are filled in once the rate is known
        self.files.setRowCount(len(vm.models))
        best = None
        for r, m in enumerate(vm.models):
            fit = vm.fit(m)
            name = display_name(m) + (tr("  (draft model)") if m.drafter else "")
            parts = tr(" in {n} parts").format(n=len(m.files)) if len(m.files) > 1 else ""
            rate, rate_tip = vm.file_speed(m)
            cells = (name, m.quant or "?", human_bytes(m.size) + parts, tr(FIT_WORDS[fit.level]), rate)
            for c, value in enumerate(cells):
                item = QTableWidgetItem(value)
                item.setData(REPO_ROLE, m.name)
                if c == 3:
                    item.setToolTip(tr(FIT_TIPS[fit.level]))
                if c == 4 and rate_tip:
                    item.setToolTip(rate_tip)
                self.files.setItem(r, c, item)
            if best is None and fit.level == "fits" and not m.drafter and (m.quant or "").startswith("Q4"):
                best = r
        if vm.models:
            self.files.selectRow(best if best is not None else 0)
