"""The chosen model: the header above the cards (name, MTP chip, one line of facts, what is
wrong with the file) and the "Model details" card (every fact of its header). Both show
`ModelDetailsViewModel` and follow its `changed` signal."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from draftwise.ui.cards import DisclosedCard, ElidedLabel, muted, set_tone
from draftwise.ui.library_panel import MTP_COLOR
from draftwise.ui.theme import tinted, title_font
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.model_details import ModelDetailsViewModel


class ModelHeader(QWidget):
    def __init__(self, details: ModelDetailsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = details
        # A long file name shrinks with "…" (whole in the tooltip) instead of widening the cards.
        self.title = ElidedLabel()
        self.title.setObjectName("modelTitle")
        self.title.setFont(title_font(self.font(), 1.45))
        self.mtp_chip = QLabel("MTP")
        self.mtp_chip.setStyleSheet(
            f"background: {tinted(MTP_COLOR, 50)}; border-radius: 8px; padding: 1px 8px; font-weight: 600;"
        )
        self.subtitle = muted(QLabel())
        self.use_note = QLabel()  # "continues text — not for chat" for a base model
        self.use_note.setObjectName("useNote")
        self.use_note.setWordWrap(True)
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(self.title, 0)
        head.addWidget(self.mtp_chip, 0, Qt.AlignmentFlag.AlignVCenter)
        head.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(head)
        lay.addWidget(self.subtitle)
        lay.addWidget(self.use_note)
        lay.addWidget(self.problems)
        details.changed.connect(self.refresh)

    def retranslate(self) -> None:
        """Nothing fixed to translate: every text comes from the view-model."""

    def refresh(self) -> None:
        d = self.vm
        self.title.setText(d.title())
        self.subtitle.setText(d.subtitle())
        self.mtp_chip.setVisible(bool(d.info and d.info.nextn_predict_layers and d.info.mtp_head_present))
        self.mtp_chip.setToolTip(tr("This model has its own helper built in (an MTP head): faster answers"))
        note, tip = d.use_note()
        self.use_note.setText(note)
        self.use_note.setToolTip(tip)
        self.use_note.setVisible(bool(note))
        set_tone(self.use_note, "warn" if note else "")
        problems = d.problems()
        self.problems.setVisible(bool(problems))
        self.problems.setText("\n".join(problems))
        set_tone(self.problems, "error")


class DetailsSection(DisclosedCard):
    """"Model details ▸" and the card of facts it discloses."""

    def __init__(self, details: ModelDetailsViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = details
        self.toggle.setObjectName("detailsToggle")
        self.facts = QFormLayout()
        self.facts.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.card.body.addLayout(self.facts)
        details.changed.connect(self.refresh)

    def retranslate(self) -> None:
        self.toggle.setText(tr("Model details"))
        self.toggle.setAccessibleName(tr("Show model details"))
        self.toggle.setToolTip(tr("Everything the model file says about itself: size, layers, vocabulary, built-in helper"))

    def refresh(self) -> None:
        while self.facts.rowCount():
            self.facts.removeRow(0)
        for label, value in self.vm.facts():
            v = QLabel(value)
            v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            v.setWordWrap(True)
            self.facts.addRow(muted(QLabel(label)), v)
