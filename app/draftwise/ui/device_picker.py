"""The GPU picker: which device to run on, and how much of it to keep free."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QWidget

from draftwise.viewmodels.devices import DevicesViewModel
from draftwise.viewmodels.i18n import tr


class DevicePicker(QWidget):
    def __init__(self, vm: DevicesViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.combo = QComboBox()
        self.combo.setObjectName("deviceCombo")
        self.combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.keep_label = QLabel()
        self.keep = QDoubleSpinBox()
        self.keep.setObjectName("keepFreeSpin")
        self.keep.setRange(0.0, 512.0)
        self.keep.setSingleStep(0.5)
        self.keep.setDecimals(1)
        self.keep.setSuffix(" GB")
        row.addWidget(self.label)
        row.addWidget(self.combo, 1)
        row.addWidget(self.keep_label)
        row.addWidget(self.keep)
        self.combo.currentIndexChanged.connect(self._on_combo)
        self.keep.valueChanged.connect(self._on_keep)
        vm.changed.connect(self.refresh)
        vm.probed_changed.connect(self.refresh)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        self.label.setText(tr("Device"))
        self.keep_label.setText(tr("Keep free"))
        self.combo.setAccessibleName(tr("Device"))
        self.keep.setToolTip(tr("Memory this GPU keeps free for other programs (default 1 GB)"))

    def refresh(self) -> None:
        self.combo.blockSignals(True)
        self.combo.clear()
        for choice in self.vm.choices():
            self.combo.addItem(choice.label, choice.name)
        at = self.combo.findData(self.vm.selected) if self.vm.selected else 0
        self.combo.setCurrentIndex(max(at, 0))
        self.combo.blockSignals(False)
        has_gpu = self.vm.machine is not None and bool(self.vm.machine.gpus)
        self.keep.blockSignals(True)
        value = self.vm.keep_free_gb()
        self.keep.setValue(1.0 if value is None else value)
        self.keep.setEnabled(has_gpu)
        self.keep.blockSignals(False)
        self.setVisible(len(self.vm.choices()) > 1)  # nothing to choose on a machine without GPUs

    def _on_combo(self, i: int) -> None:
        self.vm.select(self.combo.itemData(i))

    def _on_keep(self, value: float) -> None:
        self.vm.set_keep_free_gb(None if abs(value - 1.0) < 1e-9 else value)
