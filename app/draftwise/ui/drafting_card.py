"""The drafting card: live acceptance and tokens/s, the speed measurement, its offer.

Standalone: it reads only its view-model (viewmodels/drafting.py) and hides itself when
there is nothing to say, so the window needs one line to place it.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.viewmodels.drafting import DraftingViewModel
from draftwise.viewmodels.i18n import tr, tr_message


class DraftingCard(QFrame):
    def __init__(self, vm: DraftingViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("card")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(16, 10, 16, 10)
        lay.setSpacing(6)
        self.figures = QLabel()
        self.figures.setObjectName("draftingFigures")
        self.warning = QLabel()
        self.warning.setObjectName("draftingWarning")
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet("color: #b45309;")
        self.offer = QLabel()
        self.offer.setWordWrap(True)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.progress_text = QLabel()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.measure_btn = QPushButton()
        self.measure_btn.setObjectName("measureSpeed")
        self.sweep_btn = QPushButton()
        self.sweep_btn.setObjectName("measureAllSettings")
        self.cancel_btn = QPushButton()
        self.forget_btn = QPushButton()
        self.not_now_btn = QPushButton()
        self.turn_off_btn = QPushButton()
        self.automatic = QCheckBox()
        self.automatic.setChecked(vm.app.settings.measure_automatically)
        self.automatic.toggled.connect(vm.set_measure_automatically)
        buttons = QHBoxLayout()
        for b in (self.measure_btn, self.sweep_btn, self.not_now_btn, self.cancel_btn, self.forget_btn,
                  self.turn_off_btn):
            buttons.addWidget(b)
        buttons.addStretch(1)
        for w in (self.figures, self.warning, self.offer, self.progress_text, self.progress, self.result):
            lay.addWidget(w)
        lay.addLayout(buttons)
        lay.addWidget(self.automatic)
        self.measure_btn.clicked.connect(lambda: vm.measure_speed())
        self.sweep_btn.clicked.connect(lambda: vm.measure_speed(all_settings=True))
        self.cancel_btn.clicked.connect(vm.cancel)
        self.forget_btn.clicked.connect(vm.forget)
        self.not_now_btn.clicked.connect(vm.dismiss_offer)
        self.turn_off_btn.clicked.connect(vm.turn_speculation_off)
        vm.changed.connect(self.refresh)
        vm.app.outcome_changed.connect(self.refresh)
        vm.app.retranslated.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        vm = self.vm
        self.measure_btn.setText(tr("Measure speed"))
        self.measure_btn.setToolTip(tr("A few settings, with speculation and without: a few minutes."))
        self.sweep_btn.setText(tr("Measure all settings"))
        self.sweep_btn.setToolTip(tr("Every setting the engine and the files allow (each kind of speculation, "
                                     "combined ones, draft lengths, confidence cut-off): several times longer. "
                                     "The fastest is used from then on."))
        self.cancel_btn.setText(tr("Stop measuring"))
        self.forget_btn.setText(tr("Forget measurement"))
        self.not_now_btn.setText(tr("Not now"))
        self.turn_off_btn.setText(tr("Turn speculation off for this model"))
        self.automatic.setText(tr("Measure new model and drafter pairs without asking"))
        self.automatic.setVisible(bool(vm.offer) or vm.measuring)
        figures = vm.figures_text()
        self.figures.setText(figures)
        self.figures.setVisible(bool(figures))
        self.warning.setText("\n".join(vm.warnings))
        self.warning.setVisible(bool(vm.warnings))
        self.offer.setText(vm.offer or "")
        self.offer.setVisible(bool(vm.offer))
        measuring = vm.measuring
        self.progress_text.setText(vm.progress_text)
        self.progress_text.setVisible(measuring and bool(vm.progress_text))
        self.progress.setValue(int(vm.fraction * 1000))
        self.progress.setVisible(measuring)
        text = vm.error_text or vm.result_text
        m = vm.measurement() if not measuring else None
        if not text and m is not None:
            text = (tr("Measured with all settings: {0}") if m.swept else tr("Measured: {0}")).format(
                tr_message(m.summary()))
        self.result.setText(text)
        self.result.setVisible(bool(text))
        can = vm.can_measure()
        self.measure_btn.setVisible(can)
        self.sweep_btn.setVisible(can)
        self.not_now_btn.setVisible(bool(vm.offer) and not measuring)
        self.cancel_btn.setVisible(measuring)
        self.forget_btn.setVisible(m is not None)
        self.turn_off_btn.setVisible(vm.can_turn_off)
        self.setVisible(any(w.isVisibleTo(self) for w in (
            self.figures, self.warning, self.offer, self.result, self.progress, self.measure_btn)))
