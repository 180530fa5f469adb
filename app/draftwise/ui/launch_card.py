"""The Launch card, pinned under the scrolling cards: the engine to run (and "Install
engine" with its progress), why Launch is not possible yet, and Launch / Stop.

Whether Launch may run is the app's decision (`AppViewModel.launch_block_reason`: it weighs
the model, the engine, the speculation and the plan), so this card is bound to the app and
follows its `launch_state_changed` plus the engine's and the launch's own signals.

`figures` is an empty slot between the engine line and the Launch row, meant for live
figures of a running engine (drafting acceptance, tokens per second).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.ui.cards import Card, muted, set_tone
from draftwise.ui.device_picker import DevicePicker
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.i18n import tr


class LaunchCard(Card):
    def __init__(self, app: AppViewModel, parent: QWidget | None = None) -> None:
        super().__init__(None, parent)
        self.vm = app
        el = self.body
        erow = QHBoxLayout()
        self.engine_label = QLabel()
        self.engine_combo = QComboBox()
        self.engine_combo.setObjectName("engineCombo")
        self.engine_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.install_button = QPushButton()
        erow.addWidget(self.engine_label)
        erow.addWidget(self.engine_combo, 1)
        erow.addWidget(self.install_button)
        el.addLayout(erow)
        self.device_picker = DevicePicker(app.devices)
        el.addWidget(self.device_picker)
        self.install_bar = QProgressBar()
        self.install_bar.setRange(0, 1000)
        self.install_bar.setTextVisible(True)
        el.addWidget(self.install_bar)
        self.engine_status = muted(QLabel())
        el.addWidget(self.engine_status)
        # The slot for live figures of the running engine (empty: takes no room).
        self.figures = QVBoxLayout()
        self.figures.setContentsMargins(0, 0, 0, 0)
        el.addLayout(self.figures)
        # The port move: a client set up for the chosen port would talk to another program.
        self.port_note = muted(QLabel())
        self.port_note.setObjectName("portNote")
        el.addWidget(self.port_note)
        # What the out-of-memory ladder gave up, and the way back (docs/ladder.md).
        frow = QHBoxLayout()
        self.lowered = muted(QLabel())
        self.lowered.setObjectName("launchLowered")
        self.lowered.setWordWrap(True)
        self.full_settings = QPushButton()
        self.full_settings.setObjectName("tryFullSettings")
        frow.addWidget(self.lowered, 1)
        frow.addWidget(self.full_settings)
        el.addLayout(frow)
        lrow = QHBoxLayout()
        self.block_reason = muted(QLabel())
        self.block_reason.setObjectName("launchBlockReason")
        self.launch_button = QPushButton()
        self.launch_button.setObjectName("launchButton")
        self.launch_button.setDefault(True)
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopButton")
        # Another model is chosen while one runs: one click stops it and launches this one.
        self.switch_button = QPushButton()
        self.switch_button.setObjectName("switchButton")
        lrow.addWidget(self.block_reason, 1)
        lrow.addWidget(self.stop_button)
        lrow.addWidget(self.switch_button)
        lrow.addWidget(self.launch_button)
        el.addLayout(lrow)

        engine = app.engine
        self.engine_combo.currentIndexChanged.connect(self._on_engine_combo)
        self.install_button.clicked.connect(lambda: engine.install())
        self.launch_button.clicked.connect(app.do_launch)
        self.stop_button.clicked.connect(app.do_stop)
        self.switch_button.clicked.connect(app.switch_to_chosen)
        self.full_settings.clicked.connect(app.try_full_settings)
        engine.changed.connect(self.refresh_engine)
        engine.engines_changed.connect(self.refresh_engine)
        engine.install_progress.connect(lambda *_: self.refresh_engine())
        app.launch.state_changed.connect(self.refresh_engine)
        app.launch_state_changed.connect(self.refresh_launch)
        app.launch.changed.connect(self.refresh_launch)
        app.details.changed.connect(self.refresh_launch)
        app.speculation.changed.connect(self.refresh_launch)

    def retranslate(self) -> None:
        self.device_picker.retranslate()
        self.engine_label.setText(tr("Engine"))
        self.engine_combo.setAccessibleName(tr("Engine"))
        tip = tr("The program that runs the model on this computer (llama.cpp's llama-server)")
        self.engine_label.setToolTip(tip)
        self.engine_combo.setToolTip(tip)
        self.install_button.setText(tr("Install engine"))
        self.install_button.setAccessibleName(tr("Install the llama.cpp engine"))
        self.install_button.setToolTip(tr("Download and build the engine for this computer (once; 10–40 minutes)"))
        self.install_bar.setAccessibleName(tr("Engine installation progress"))
        self.launch_button.setText(tr("Launch"))
        self.launch_button.setAccessibleName(tr("Launch the model"))
        self.launch_button.setToolTip(tr("Start the engine with this model (Ctrl+L)"))
        self.full_settings.setText(tr("Try full settings again"))
        self.full_settings.setToolTip(tr("Forget the lower settings this model needed after running out of memory"))
        self.stop_button.setText(tr("Stop"))
        self.stop_button.setAccessibleName(tr("Stop the engine"))
        self.stop_button.setToolTip(tr("Stop the engine (Ctrl+.)"))
        self.switch_button.setText(tr("Stop and launch this one"))
        self.switch_button.setAccessibleName(tr("Stop the running model and launch the chosen one"))
        self.switch_button.setToolTip(tr("Stop the model that runs now, wait until it has ended, then launch this one"))

    def refresh(self) -> None:
        self.refresh_engine()
        self.refresh_launch()

    def refresh_engine(self) -> None:
        e = self.vm.engine
        self.engine_combo.blockSignals(True)
        self.engine_combo.clear()
        for choice in e.engines:
            label = choice.label() + (f" — {tr('unusable')}" if choice.problem else "")
            self.engine_combo.addItem(label, choice.key)
            self.engine_combo.setItemData(self.engine_combo.count() - 1, choice.build_text(),
                                          Qt.ItemDataRole.ToolTipRole)
        if not e.engines:
            self.engine_combo.addItem(tr("Looking for engines…") if e.detecting else tr("No engine found"), None)
        at = self.engine_combo.findData(e.selected_key) if e.selected_key else -1
        self.engine_combo.setCurrentIndex(max(0, at))
        chosen = e.selected
        base = tr("The program that runs the model on this computer (llama.cpp's llama-server)")
        self.engine_combo.setToolTip(f"{base}\n{chosen.build_text()}" if chosen is not None else base)
        self.engine_combo.setEnabled(bool(e.engines) and not self.vm.launch.running)
        self.engine_combo.blockSignals(False)
        self.install_bar.setVisible(e.installing)
        if e.installing:
            if e.install_fraction is None:
                self.install_bar.setRange(0, 0)
            else:
                self.install_bar.setRange(0, 1000)
                self.install_bar.setValue(int(e.install_fraction * 1000))
        self.install_button.setEnabled(not e.installing)
        self.install_button.setVisible(e.installing or not any(c.launchable for c in e.engines) or bool(e.install_message))
        status = e.status_text()
        self.engine_status.setText(status)
        self.engine_status.setVisible(bool(status))

    def refresh_launch(self) -> None:
        vm = self.vm
        why = vm.launch_block_reason()
        self.launch_button.setEnabled(why is None)
        self.stop_button.setEnabled(vm.can_stop())
        self.stop_button.setVisible(vm.launch.running)
        other = vm.running_model_path() not in (None, vm.model_path)
        self.switch_button.setVisible(other or vm.switching)
        self.switch_button.setEnabled(vm.can_switch())
        self.launch_button.setVisible(not self.switch_button.isVisible())
        note = vm.launch.port_note()
        self.port_note.setText("⚠ " + note if note else "")
        self.port_note.setVisible(bool(note))
        set_tone(self.port_note, "warn" if note else "")
        show_why = why if (why and (not vm.launch.running or other)) else ""
        self.block_reason.setText(show_why)
        set_tone(self.block_reason, "error" if (vm.speculation.blocks_launch() and show_why) else "")
        lowered = vm.lowered_text()
        self.lowered.setText(lowered)
        self.lowered.setVisible(bool(lowered))
        self.full_settings.setVisible(vm.can_try_full_settings())

    def _on_engine_combo(self, i: int) -> None:
        key = self.engine_combo.itemData(i)
        if key:
            self.vm.engine.select(key)
