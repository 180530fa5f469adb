""""Check this machine": the steps of the check as they finish."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.check.machine_check import CheckStep
from draftwise.ui.theme import text_color, title_font
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.machine_check import MachineCheckViewModel

MARKS = {"ok": "✓", "fail": "✗", "info": "ℹ"}
KINDS = {"ok": "ok", "fail": "error", "info": ""}


class CheckDialog(QDialog):
    def __init__(self, vm: MachineCheckViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("checkDialog")
        self.setMinimumSize(560, 340)
        self.heading = QLabel()
        self.heading.setFont(title_font(self.font(), 1.25))
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumHeight(6)
        self.busy.setTextVisible(False)
        self.steps = QListWidget()
        self.steps.setWordWrap(True)
        self.again = QPushButton()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.again, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addWidget(self.heading)
        lay.addWidget(self.summary)
        lay.addWidget(self.busy)
        lay.addWidget(self.steps, 1)
        lay.addWidget(buttons)
        self.again.clicked.connect(vm.run)
        vm.step_added.connect(self._add)
        vm.changed.connect(self.refresh)
        self.retranslate()
        for s in vm.steps:
            self._add(s)

    def retranslate(self) -> None:
        self.setWindowTitle(tr("Check this machine"))
        self.heading.setText(tr("Check this machine"))
        self.again.setText(tr("Run again"))
        self.again.setAccessibleName(tr("Run the check again"))
        self.steps.setAccessibleName(tr("Check steps"))
        self.refresh()

    def refresh(self) -> None:
        if not self.vm.running and not self.vm.steps:
            self.steps.clear()
        self.summary.setText(self.vm.summary())
        self.busy.setVisible(self.vm.running)
        self.again.setEnabled(not self.vm.running)

    def _add(self, step: CheckStep) -> None:
        if self.vm.steps and step is self.vm.steps[0]:
            self.steps.clear()
        item = QListWidgetItem(f"{MARKS.get(step.status, '•')}  {self.vm.step_text(step)}")
        kind = KINDS.get(step.status, "")
        if kind:
            item.setForeground(text_color(kind, self))
        item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
        self.steps.addItem(item)
        self.steps.scrollToBottom()
