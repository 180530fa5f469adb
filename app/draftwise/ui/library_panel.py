"""The left side: search, the model table (with MTP and fit badges), folders."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QAction, QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.ui.theme import ERROR_COLOR, OK_COLOR, WARN_COLOR
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.library import COL, COLUMNS, FitRole, LibraryViewModel, PathRole
from draftwise.viewmodels.plan import FITS, NO_FIT, PARTIAL

FIT_COLORS = {FITS: OK_COLOR, PARTIAL: WARN_COLOR, NO_FIT: ERROR_COLOR}
MTP_COLOR = QColor("#8b3dff")


class BadgeDelegate(QStyledItemDelegate):
    """Draws the MTP and fit cells as small pills."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        text = index.data(Qt.ItemDataRole.DisplayRole)
        if not text:
            super().paint(painter, option, index)
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        color = MTP_COLOR if index.column() == COL["mtp"] else FIT_COLORS.get(index.data(FitRole), QColor("#888"))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        f = QFont(option.font)
        f.setPointSizeF(max(7.0, f.pointSizeF() * 0.85)) if f.pointSizeF() > 0 else None
        f.setBold(True)
        painter.setFont(f)
        fm = painter.fontMetrics()
        w = fm.horizontalAdvance(text) + 12
        h = fm.height() + 2
        r = QRectF(option.rect.left() + 4, option.rect.center().y() - h / 2 + 0.5, w, h)
        fill = QColor(color)
        fill.setAlpha(48)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        painter.drawRoundedRect(r, h / 2, h / 2)
        dark = option.palette.color(QPalette.ColorRole.Base).lightness() < 128
        painter.setPen(color.lighter(140) if dark else color.darker(130))
        painter.drawText(r, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        s = super().sizeHint(option, index)
        return QSize(s.width() + 16, s.height())


HIDDEN_COLUMNS = ("arch", "quant", "ctx", "params")
NAME_MIN_WIDTH = 180


class LibraryPanel(QWidget):
    model_chosen = Signal(str)
    add_folder_requested = Signal()
    open_file_requested = Signal()
    get_models_requested = Signal()

    def __init__(self, vm: LibraryViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("libraryPanel")
        self.search = QLineEdit()
        self.search.setClearButtonEnabled(True)
        self.table = QTableView()
        self.table.setObjectName("libraryTable")
        self.table.setModel(vm.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(COL["name"], Qt.SortOrder.AscendingOrder)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(28)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        hh = self.table.horizontalHeader()
        hh.setHighlightSections(False)
        hh.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(COL["name"], QHeaderView.ResizeMode.Stretch)
        hh.setMinimumSectionSize(36)
        hh.setSortIndicatorShown(True)
        # Fits right after Name; Arch, Quant and Context are in the model details (the
        # header's context menu shows them again).
        hh.moveSection(hh.visualIndex(COL["fit"]), 1)
        for key in HIDDEN_COLUMNS:
            hh.setSectionHidden(COL[key], True)
        hh.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        hh.customContextMenuRequested.connect(self._header_menu)
        hh.sectionResized.connect(lambda *_: self._fit_name())
        self.badges = BadgeDelegate(self.table)
        self.table.setItemDelegateForColumn(COL["mtp"], self.badges)
        self.table.setItemDelegateForColumn(COL["fit"], self.badges)
        self.get_models = QPushButton()
        self.get_models.setObjectName("getModels")
        self.add_folder = QPushButton()
        self.open_file = QPushButton()
        self.folders = QToolButton()
        self.folders.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.folders_menu = QMenu(self.folders)
        self.folders.setMenu(self.folders_menu)
        self.status = QLabel()
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)

        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.get_models)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_folder)
        buttons.addWidget(self.open_file)
        buttons.addWidget(self.folders)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 10, 6, 8)
        lay.setSpacing(8)
        lay.addLayout(top)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.empty, 1)
        lay.addWidget(self.status)
        lay.addLayout(buttons)

        self.search.textChanged.connect(vm.set_search)
        self.table.selectionModel().currentRowChanged.connect(self._on_current)
        self.table.activated.connect(self._on_current)
        self.get_models.clicked.connect(self.get_models_requested)
        self.add_folder.clicked.connect(self.add_folder_requested)
        self.open_file.clicked.connect(self.open_file_requested)
        self.folders_menu.aboutToShow.connect(self._fill_folders_menu)
        vm.changed.connect(self.refresh)
        self.retranslate()

    def retranslate(self) -> None:
        self.search.setPlaceholderText(tr("Search models…"))
        self.search.setAccessibleName(tr("Search models"))
        self.table.setAccessibleName(tr("Model library"))
        self.get_models.setText(tr("Get models…"))
        self.get_models.setToolTip(tr("Download a model from the model hub, with its draft model where one exists"))
        self.add_folder.setText(tr("+ Add folder"))
        self.add_folder.setAccessibleName(tr("Add a folder of models"))
        self.open_file.setText(tr("Browse…"))
        self.open_file.setAccessibleName(tr("Open a model file"))
        self.folders.setText(tr("Folders"))
        self.folders.setAccessibleName(tr("Model folders"))
        self.empty.setText(tr("No models yet.\n\nPress Get models… for a starter model chosen for this "
                              "computer,\nadd a folder with .gguf models, or drop a .gguf file here."))
        self.refresh()

    def refresh(self) -> None:
        self.status.setText(self.vm.status_text())
        has_rows = self.vm.model.rowCount() > 0
        self._fit_name()
        self.table.setVisible(has_rows)
        self.empty.setVisible(not has_rows)

    def _header_menu(self, pos) -> None:
        hh = self.table.horizontalHeader()
        menu = QMenu(self)
        for key, _ in COLUMNS:
            if key == "name":
                continue
            col = COL[key]
            act = menu.addAction(str(self.vm.model.headerData(col, Qt.Orientation.Horizontal)))
            act.setCheckable(True)
            act.setChecked(not hh.isSectionHidden(col))
            act.toggled.connect(lambda on, c=col: self.set_column_visible(c, on))
        menu.exec(hh.mapToGlobal(pos))

    def set_column_visible(self, column: int, on: bool) -> None:
        self.table.horizontalHeader().setSectionHidden(column, not on)
        self._fit_name()

    def _fit_name(self) -> None:
        """Keep at least NAME_MIN_WIDTH for the names: the panel is never narrower than the
        other visible columns plus that (the splitter respects it)."""
        hh = self.table.horizontalHeader()
        others = sum(hh.sectionSize(c) for c in range(hh.count())
                     if c != COL["name"] and not hh.isSectionHidden(c))
        frame = 2 * self.table.frameWidth() + self.table.verticalScrollBar().sizeHint().width()
        self.table.setMinimumWidth(others + NAME_MIN_WIDTH + frame)

    def _fill_folders_menu(self) -> None:
        m = self.folders_menu
        m.clear()
        if not self.vm.folders and not self.vm.files:
            a = m.addAction(tr("No folders yet"))
            a.setEnabled(False)
        for folder in self.vm.folders:
            sub = m.addMenu(folder)
            act = QAction(tr("Remove from the library"), sub)
            act.triggered.connect(lambda _=False, f=folder: self.vm.remove_folder(f))
            sub.addAction(act)
        m.addSeparator()
        rescan = m.addAction(tr("Scan again"))
        rescan.triggered.connect(self.vm.rescan)

    def _on_current(self, index: QModelIndex, *_args: object) -> None:
        if index.isValid():
            path = index.siblingAtColumn(0).data(PathRole)
            if path:
                self.model_chosen.emit(path)

    def select_path(self, path: str) -> None:
        at = self.vm.model.row_of(path)
        if at is None:
            return
        src = self.vm.model.index(at, 0)
        idx = self.vm.proxy.mapFromSource(src)
        if idx.isValid() and self.table.currentIndex().row() != idx.row():
            # Selecting the row the window already shows: no "model chosen" echo.
            sm = self.table.selectionModel()
            sm.blockSignals(True)
            self.table.setCurrentIndex(idx)
            self.table.selectRow(idx.row())
            sm.blockSignals(False)
            self.table.scrollTo(idx)
