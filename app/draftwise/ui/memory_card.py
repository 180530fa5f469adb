"""The Memory card: the fit chip, one bar per device (weights, context, drafter, work), the
context slider and KV cache type, the planner's reasons and, once the engine reported its
buffers, planned against actual. Shows `PlanViewModel` and follows its `changed` signal; the
inputs are enabled once a model is chosen (`ModelDetailsViewModel`)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QWidget,
)

from draftwise.ui.cards import Card, explain, muted
from draftwise.ui.memory_bar import BarData, MemoryBars
from draftwise.ui.theme import tinted
from draftwise.viewmodels.i18n import N_, tr
from draftwise.viewmodels.model_details import ModelDetailsViewModel
from draftwise.viewmodels.plan import FITS, NO_FIT, SEGMENT_TIPS, SEGMENTS, PlanViewModel

# The KV cache types in words (the engine's names stay in the list, in brackets).
KV_WORDS = {
    "f16": N_("full quality"),
    "bf16": N_("full quality"),
    "f32": N_("full quality, twice the memory"),
    "q8_0": N_("half the memory, nearly the same"),
    "q4_0": N_("a quarter of the memory, lower quality"),
}

FIT_COLORS = {"ok": "#34a853", "warn": "#f4b400", "error": "#ea4335"}


class MemoryCard(Card):
    def __init__(self, plan: PlanViewModel, details: ModelDetailsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(None, parent)
        self.vm = plan
        self.details = details
        ml = self.body
        top = QHBoxLayout()
        self.title = QLabel()
        self.title.setObjectName("cardTitle")
        top.addWidget(self.title)
        top.addStretch(1)
        self.fit_chip = QLabel()
        top.addWidget(self.fit_chip)
        ml.addLayout(top)
        self.explanation = muted(QLabel())
        self.explanation.setObjectName("cardExplanation")
        ml.addWidget(self.explanation)
        self.bars = MemoryBars()
        ml.addWidget(self.bars)
        crow = QHBoxLayout()
        self.ctx_label = QLabel()
        self.ctx_slider = QSlider(Qt.Orientation.Horizontal)
        self.ctx_slider.setObjectName("contextSlider")
        self.ctx_slider.setPageStep(1)
        self.ctx_value = QLabel()
        self.ctx_value.setMinimumWidth(80)
        self.ctx_auto = QPushButton()
        self.ctx_auto.setObjectName("contextAuto")
        self.kv_label = QLabel()
        self.kv_combo = QComboBox()
        self.kv_combo.setObjectName("kvCombo")
        self.kv_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        crow.addWidget(self.ctx_label)
        crow.addWidget(self.ctx_slider, 1)
        crow.addWidget(self.ctx_value)
        crow.addWidget(self.ctx_auto)
        ml.addLayout(crow)
        # Its own row: the formats are named in words, wider than the engine's names.
        krow = QHBoxLayout()
        krow.addWidget(self.kv_label)
        krow.addWidget(self.kv_combo)
        krow.addStretch(1)
        ml.addLayout(krow)
        self.reasons = QLabel()
        self.reasons.setObjectName("planReasons")
        self.reasons.setWordWrap(True)
        ml.addWidget(self.reasons)
        self.actual_box = QWidget()
        self.actual_grid = QGridLayout(self.actual_box)
        self.actual_grid.setContentsMargins(0, 4, 0, 0)
        self.actual_grid.setHorizontalSpacing(18)
        self.actual_grid.setVerticalSpacing(2)
        ml.addWidget(self.actual_box)

        self.ctx_slider.valueChanged.connect(self._on_slider)
        self.ctx_auto.clicked.connect(lambda: plan.set_context(None))
        self.kv_combo.currentIndexChanged.connect(self._on_kv)
        plan.changed.connect(self.refresh)
        details.changed.connect(self._refresh_enabled)

    def retranslate(self) -> None:
        self.title.setText(tr("Memory"))
        explain(self.explanation,
                tr("How the model fits in this computer's memory. A longer conversation needs more room."),
                tr("Planned before launch from the model file; once the engine runs, compared with the buffer "
                   "sizes it reports."))
        self.title.setToolTip(self.explanation.toolTip())
        self.bars.set_legend({k: tr(label) for k, label in SEGMENTS}, {k: tr(t) for k, t in SEGMENT_TIPS.items()})
        self.ctx_label.setText(tr("Conversation length"))
        ctx_tip = tr("How much text the model can keep in mind at once — your messages, its answers and any "
                     "documents — counted in tokens (about ¾ of a word each). This is the context length.")
        self.ctx_label.setToolTip(ctx_tip)
        self.ctx_slider.setToolTip(ctx_tip)
        self.ctx_slider.setAccessibleName(tr("Context length"))
        self.ctx_auto.setText(tr("Reset to auto"))
        self.ctx_auto.setAccessibleName(tr("Choose the context length automatically"))
        self.ctx_auto.setToolTip(tr("Choose the context length automatically"))
        self.kv_label.setText(tr("Memory format"))
        kv_tip = tr("How the engine stores the conversation it keeps in mind (the KV cache type). A smaller "
                    "format fits a longer conversation in less memory, at some cost in quality.")
        self.kv_label.setToolTip(kv_tip)
        self.kv_combo.setToolTip(kv_tip)
        self.kv_combo.setAccessibleName(tr("KV cache type"))
        self._fill_kv_combo()

    def _fill_kv_combo(self) -> None:
        """Auto plus the KV types this model can use (the view-model's list)."""
        self.kv_combo.blockSignals(True)
        self.kv_combo.clear()
        self.kv_combo.addItem(tr("Auto"), None)
        for t in self.vm.kv_types:
            self.kv_combo.addItem(self.kv_words(t), t)
        self.kv_combo.blockSignals(False)

    @staticmethod
    def kv_words(kv_type: str) -> str:
        """"q8_0 — half the memory, nearly the same": the engine's name, then what it means."""
        words = KV_WORDS.get(kv_type)
        return f"{kv_type} — {tr(words)}" if words else kv_type

    def _refresh_enabled(self) -> None:
        has = self.details.path is not None
        for w in (self.ctx_slider, self.ctx_auto, self.kv_combo):
            w.setEnabled(has)

    def refresh(self) -> None:
        p = self.vm
        r = p.result
        steps = p.steps()
        shown = p.shown_context()
        idx = min(range(len(steps)), key=lambda i: abs(steps[i] - shown)) if steps else 0
        self.ctx_slider.blockSignals(True)
        self.ctx_slider.setRange(0, max(0, len(steps) - 1))
        self.ctx_slider.setValue(idx)
        self.ctx_slider.blockSignals(False)
        self.ctx_value.setText(p.context_text())
        self.ctx_auto.setVisible(p.context is not None)
        if [self.kv_combo.itemData(i) for i in range(1, self.kv_combo.count())] != list(p.kv_types):
            self._fill_kv_combo()
        self.kv_combo.blockSignals(True)
        self.kv_combo.setCurrentIndex(max(0, self.kv_combo.findData(p.kv_type)) if p.kv_type else 0)
        if p.kv_type is None and r is not None:
            self.kv_combo.setItemText(0, tr("Auto ({0})").format(tr(KV_WORDS.get(r.kv_type, r.kv_type))))
        else:
            self.kv_combo.setItemText(0, tr("Auto"))
        self.kv_combo.blockSignals(False)
        if r is not None:
            labels = {k: tr(label) for k, label in SEGMENTS}
            self.bars.set_devices([
                BarData(d.name, d.capacity, tuple((k, labels[k], d.segment(k)) for k, _ in SEGMENTS))
                for d in r.devices
            ])
        else:
            self.bars.set_devices([])
        self.fit_chip.setText(p.fit_text())
        kind = {FITS: "ok", NO_FIT: "error"}.get(r.fit, "warn") if r is not None else ""
        if kind:
            self.fit_chip.setStyleSheet(
                f"background: {tinted(QColor(FIT_COLORS[kind]), 46)}; border-radius: 8px; padding: 1px 10px; font-weight: 600;"
            )
        else:
            self.fit_chip.setStyleSheet("")
        reasons = p.reasons()
        self.reasons.setText((tr("Why: ") + " ".join(reasons)) if reasons else "")
        self._fill_actual(p.planned_vs_actual())
        self._refresh_enabled()

    def _fill_actual(self, rows: list[tuple[str, str, str]]) -> None:
        while self.actual_grid.count():
            item = self.actual_grid.takeAt(0)
            if item.widget():
                item.widget().hide()
                item.widget().deleteLater()
        self.actual_box.setVisible(bool(rows))
        if not rows:
            return
        head = QLabel(tr("What the engine really uses"))
        head.setObjectName("cardTitle")
        head.setToolTip(tr("Planned: Draftwise's estimate before launch. Actual: the buffer sizes the engine "
                           "reported in its log."))
        self.actual_grid.addWidget(head, 0, 0, 1, 4)
        for col, text in enumerate(("", tr("planned"), tr("actual"))):
            self.actual_grid.addWidget(muted(QLabel(text)), 1, col)
        for i, (what, planned, actual) in enumerate(rows, start=2):
            self.actual_grid.addWidget(QLabel(what), i, 0)
            self.actual_grid.addWidget(QLabel(planned), i, 1)
            self.actual_grid.addWidget(QLabel(actual), i, 2)
        self.actual_grid.setColumnStretch(3, 1)

    def _on_slider(self, i: int) -> None:
        steps = self.vm.steps()
        if 0 <= i < len(steps):
            self.vm.set_context(steps[i])

    def _on_kv(self, i: int) -> None:
        if i >= 0:
            self.vm.set_kv_type(self.kv_combo.itemData(i))
