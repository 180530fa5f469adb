"""The engine log: a capped, read-only text view fed in batches by LogsViewModel."""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.logs import LEVELS, LogsViewModel


class LogsPanel(QWidget):
    def __init__(self, vm: LogsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("logsPanel")
        self.title = QLabel()
        f = QFont(self.title.font())
        f.setBold(True)
        self.title.setFont(f)
        self.filter = QLineEdit()
        self.filter.setClearButtonEnabled(True)
        self.level = QComboBox()
        self.copy = QPushButton()
        self.save = QPushButton()
        self.clear = QPushButton()
        self.view = QPlainTextEdit()
        self.view.setReadOnly(True)
        self.view.setMaximumBlockCount(vm.max_lines)
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setUndoRedoEnabled(False)
        self.count = QLabel()

        top = QHBoxLayout()
        top.addWidget(self.title)
        top.addSpacing(12)
        top.addWidget(self.filter, 1)
        top.addWidget(self.level)
        top.addWidget(self.copy)
        top.addWidget(self.save)
        top.addWidget(self.clear)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.addLayout(top)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.count)

        self.filter.textChanged.connect(vm.set_filter)
        self.level.currentIndexChanged.connect(lambda i: vm.set_level(LEVELS[i]) if i >= 0 else None)
        self.copy.clicked.connect(self.copy_visible)
        self.save.clicked.connect(self.save_to_file)
        self.clear.clicked.connect(vm.clear)
        vm.lines_added.connect(self._append)
        vm.reset.connect(self._reset)
        vm.count_changed.connect(self._count)
        self.retranslate()

    def retranslate(self) -> None:
        self.title.setText(tr("Engine log"))
        self.filter.setPlaceholderText(tr("Filter the log…"))
        self.filter.setAccessibleName(tr("Filter the log"))
        current = self.level.currentIndex()
        self.level.blockSignals(True)
        self.level.clear()
        self.level.addItems([tr("All lines"), tr("Warnings and errors"), tr("Errors only")])
        self.level.setCurrentIndex(max(0, current))
        self.level.blockSignals(False)
        self.level.setAccessibleName(tr("Log level"))
        self.copy.setText(tr("Copy"))
        self.copy.setAccessibleName(tr("Copy the log"))
        self.save.setText(tr("Save…"))
        self.save.setAccessibleName(tr("Save the log to a file"))
        self.clear.setText(tr("Clear"))
        self.clear.setAccessibleName(tr("Clear the log"))
        self.view.setAccessibleName(tr("Engine log"))
        self._count(len(self.vm.lines()))

    def _append(self, lines: list[str]) -> None:
        bar = self.view.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.view.appendPlainText("\n".join(lines))
        if at_end:
            bar.setValue(bar.maximum())

    def _reset(self, lines: list[str]) -> None:
        self.view.setPlainText("\n".join(lines[-self.vm.max_lines :]))
        self.view.verticalScrollBar().setValue(self.view.verticalScrollBar().maximum())

    def _count(self, n: int) -> None:
        text = tr("{0} lines").format(n)
        if self.vm.dropped:
            text += " " + tr("({0} older lines dropped)").format(self.vm.dropped)
        self.count.setText(text)

    def copy_visible(self) -> None:
        QGuiApplication.clipboard().setText(self.vm.text())

    def save_to_file(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, tr("Save the engine log"), "draftwise-engine.log",
                                              tr("Log files (*.log *.txt)"))
        if path:
            try:
                self.vm.save(path)
            except OSError as exc:
                self.count.setText(tr("Could not save: {0}").format(exc.strerror or exc))
