"""The "Other computers" / "Share this computer" section (widgets only; state in
viewmodels/workers.py). It sits inside Advanced, folded under its own "Other computers ▸"
until it is used: it opens by itself when computers are listed or this one is shared. Its
buttons are enabled only when they can act (Remove with a computer chosen, Check again with
one to ask)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from draftwise.ui.cards import Disclosure, muted
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.workers import CHECKING, FAILED, READY, WorkersViewModel

_MARK = {READY: "✓", FAILED: "✗"}


class WorkersCard(QWidget):
    def __init__(self, vm: WorkersViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setAccessibleName("workersCard")
        self.box = QWidget()  # what the disclosure folds
        self.toggle = Disclosure(self.box)
        self.toggle.setObjectName("workersToggle")
        self._opened_for_use = False
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.toggle)
        outer.addWidget(self.box)
        lay = QVBoxLayout(self.box)
        lay.setContentsMargins(0, 0, 0, 0)
        self.explanation = muted(QLabel())
        self.explanation.setObjectName("workersExplanation")
        lay.addWidget(self.explanation)
        row = QHBoxLayout()
        self.address = QLineEdit()
        self.address.setObjectName("workerAddress")
        self.add_button = QPushButton()
        self.add_button.setObjectName("addWorker")
        row.addWidget(self.address, 1)
        row.addWidget(self.add_button)
        lay.addLayout(row)
        self.list = QListWidget()
        self.list.setObjectName("workerList")
        self.list.setMaximumHeight(96)
        lay.addWidget(self.list)
        buttons = QHBoxLayout()
        self.remove_button = QPushButton()
        self.remove_button.setObjectName("removeWorker")
        self.recheck_button = QPushButton()
        self.recheck_button.setObjectName("recheckWorkers")
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.recheck_button)
        buttons.addStretch(1)
        lay.addLayout(buttons)
        self.always = QCheckBox()
        self.always.setObjectName("workersAlways")
        lay.addWidget(self.always)
        self.error = QLabel()
        self.error.setObjectName("workerError")
        self.error.setWordWrap(True)
        self.error.hide()
        lay.addWidget(self.error)

        self.share_title = QLabel()
        self.share_title.setObjectName("cardTitle")
        lay.addWidget(self.share_title)
        srow = QHBoxLayout()
        self.share_host = QLineEdit(vm.share_host)
        self.share_host.setObjectName("shareHost")
        self.share_port = QSpinBox()
        self.share_port.setObjectName("sharePort")
        self.share_port.setRange(1, 65535)
        self.share_port.setValue(vm.share_port)
        self.share_button = QPushButton()
        self.share_button.setObjectName("shareButton")
        srow.addWidget(self.share_host, 1)
        srow.addWidget(self.share_port)
        srow.addWidget(self.share_button)
        lay.addLayout(srow)
        self.share_warning = QLabel()
        self.share_warning.setObjectName("shareWarning")
        self.share_warning.setWordWrap(True)
        lay.addWidget(self.share_warning)
        self.share_status = muted(QLabel())
        self.share_status.setObjectName("shareStatus")
        lay.addWidget(self.share_status)

        self.add_button.clicked.connect(self._add)
        self.address.returnPressed.connect(self._add)
        self.address.textChanged.connect(lambda _t: self._refresh_buttons())
        self.list.currentRowChanged.connect(lambda _r: self._refresh_buttons())
        self.remove_button.clicked.connect(self._remove)
        self.recheck_button.clicked.connect(vm.probe_all)
        self.always.toggled.connect(vm.set_always)
        self.share_host.editingFinished.connect(self._address_changed)
        self.share_port.valueChanged.connect(lambda _v: self._address_changed())
        self.share_button.clicked.connect(self._toggle_share)
        vm.changed.connect(self.refresh)
        vm.error.connect(self._show_error)
        vm.share_changed.connect(self.refresh)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        self.toggle.setText(tr("Other computers"))
        self.toggle.setAccessibleName(tr("Show other computers"))
        self.toggle.setToolTip(tr("Split a model across other computers, or lend this one to them"))
        self.explanation.setText(tr("Use the memory of other computers that run “draftwise share”, "
                                    "or lend this computer to them."))
        self.address.setPlaceholderText(tr("host:port of a computer running draftwise share"))
        self.add_button.setText(tr("Add"))
        self.remove_button.setText(tr("Remove"))
        self.recheck_button.setText(tr("Check again"))
        self.always.setText(tr("Use them even when this computer alone would be faster"))
        self.always.setToolTip(tr("Off: they are used only when the model does not fit here, or when the plan "
                                  "predicts them faster over their link."))
        self.share_title.setText(tr("Share this computer"))
        self.address.setAccessibleName(tr("Other computer's address (host:port)"))
        self.share_host.setAccessibleName(tr("Address to share this computer on"))
        self.share_port.setAccessibleName(tr("Port to share this computer on"))
        edit = self.share_port.findChild(QLineEdit)
        if edit is not None:
            edit.setAccessibleName(tr("Port to share this computer on"))
        self.refresh()

    def refresh(self) -> None:
        chosen = self.list.currentItem()
        keep = chosen.data(256) if chosen is not None else None
        self.list.blockSignals(True)
        self.list.clear()
        for r in self.vm.rows:
            item = QListWidgetItem(f"{_MARK.get(r.state, '…')} {r.endpoint} — {r.text}")
            item.setData(256, r.endpoint)  # Qt.UserRole
            item.setToolTip(r.text)
            self.list.addItem(item)
            if r.endpoint == keep:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        if (self.vm.rows or self.vm.sharing) and not self._opened_for_use:
            self._opened_for_use = True  # once: the person may fold it again
            self.toggle.setChecked(True)
        self._refresh_buttons()
        self.always.blockSignals(True)
        self.always.setChecked(self.vm.always)
        self.always.blockSignals(False)
        self.always.setEnabled(bool(self.vm.rows))
        self.share_button.setText(tr("Stop sharing") if self.vm.sharing else tr("Share"))
        warning = self.vm.share_warning()
        self.share_warning.setText(warning)
        self.share_warning.setVisible(bool(warning))
        self.share_status.setText(self.vm.share_status or tr("Not sharing"))
        self.share_host.setEnabled(not self.vm.sharing)
        self.share_port.setEnabled(not self.vm.sharing)

    def _refresh_buttons(self) -> None:
        rows = self.vm.rows
        self.add_button.setEnabled(bool(self.address.text().strip()))
        self.remove_button.setEnabled(self.list.currentItem() is not None)
        askable = [r for r in rows if not r.bad_address]
        self.recheck_button.setEnabled(bool(askable) and not all(r.state == CHECKING for r in askable))

    def _add(self) -> None:
        self.error.hide()
        if self.vm.add(self.address.text()):
            self.address.clear()

    def _remove(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.vm.remove(str(item.data(256)))

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    def _address_changed(self) -> None:
        self.vm.set_share_address(self.share_host.text(), self.share_port.value())

    def _toggle_share(self) -> None:
        if self.vm.sharing:
            self.vm.stop_sharing()
            return
        self._address_changed()
        warning = self.vm.share_warning()
        confirmed = False
        if warning:
            # A LAN address is a deliberate choice: the worker has no authentication.
            answer = QMessageBox.warning(self, tr("Share this computer"), warning,
                                         QMessageBox.StandardButton.Cancel | QMessageBox.StandardButton.Ok,
                                         QMessageBox.StandardButton.Cancel)  # fmt: skip
            if answer != QMessageBox.StandardButton.Ok:
                return
            confirmed = True
        self.vm.start_sharing(confirmed=confirmed)
