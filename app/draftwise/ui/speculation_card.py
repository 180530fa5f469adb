"""The Speculation card: MTP auto/off, the decision in words, notes, the draft model field
(checked live) and "Try it again" for a drafter on the broken record. Shows
`SpeculationViewModel` and follows its `changed` signal; the fields are enabled once a model
is chosen (`ModelDetailsViewModel`), "Try it again" only while no engine runs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QWidget,
)

from draftwise.core.kinds import MtpMode
from draftwise.ui.cards import Card, explain, muted, set_tone
from draftwise.ui.theme import ERROR_COLOR
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.launch import LaunchViewModel
from draftwise.viewmodels.model_details import ModelDetailsViewModel
from draftwise.viewmodels.speculation import SpeculationViewModel


class SpeculationCard(Card):
    retry_drafters = Signal()  # "Try it again": forget the drafters recorded as broken
    forget_measurement = Signal()  # "Forget the measurement": auto decides as if never measured

    def __init__(self, speculation: SpeculationViewModel, details: ModelDetailsViewModel,
                 launch: LaunchViewModel, parent: QWidget | None = None) -> None:
        title = QLabel()
        super().__init__(title, parent)
        self.title = title
        self.vm = speculation
        self.details = details
        self.launch = launch
        cl = self.body
        self.explanation = muted(QLabel())
        self.explanation.setObjectName("cardExplanation")
        cl.addWidget(self.explanation)
        self.mtp_auto = QRadioButton()
        self.mtp_off = QRadioButton()
        self.mtp_group = QButtonGroup(self)
        self.mtp_group.addButton(self.mtp_auto)
        self.mtp_group.addButton(self.mtp_off)
        row = QHBoxLayout()
        self.mtp_label = QLabel()
        row.addWidget(self.mtp_label)
        row.addSpacing(6)
        row.addWidget(self.mtp_auto)
        row.addWidget(self.mtp_off)
        row.addStretch(1)
        cl.addLayout(row)
        self.decision = QLabel()
        self.decision.setObjectName("decision")
        self.decision.setWordWrap(True)
        self.decision.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        cl.addWidget(self.decision)
        self.notes = muted(QLabel())
        cl.addWidget(self.notes)
        rrow = QHBoxLayout()
        self.retry_drafter = QPushButton()
        self.retry_drafter.setObjectName("retryDrafter")
        rrow.addWidget(self.retry_drafter)
        self.measured = muted(QLabel())
        self.measured.setObjectName("measured")
        rrow.addWidget(self.measured)
        self.forget_measured = QPushButton()
        self.forget_measured.setObjectName("forgetMeasurement")
        rrow.addWidget(self.forget_measured)
        rrow.addStretch(1)
        cl.addLayout(rrow)
        drow = QHBoxLayout()
        self.draft_label = QLabel()
        self.draft_edit = QLineEdit()
        self.draft_edit.setObjectName("draftEdit")
        self.draft_edit.setClearButtonEnabled(True)
        self.draft_browse = QPushButton()
        drow.addWidget(self.draft_label)
        drow.addWidget(self.draft_edit, 1)
        drow.addWidget(self.draft_browse)
        cl.addLayout(drow)
        self.draft_msg = QLabel()
        self.draft_msg.setObjectName("draftMessage")
        self.draft_msg.setWordWrap(True)
        cl.addWidget(self.draft_msg)

        self.mtp_auto.toggled.connect(lambda on: speculation.set_mtp(MtpMode.AUTO) if on else None)
        self.mtp_off.toggled.connect(lambda on: speculation.set_mtp(MtpMode.OFF) if on else None)
        self.draft_edit.textChanged.connect(speculation.set_draft)
        self.draft_browse.clicked.connect(self.browse_draft)
        self.retry_drafter.clicked.connect(self.retry_drafters)
        self.forget_measured.clicked.connect(self.forget_measurement)
        speculation.changed.connect(self.refresh)
        details.changed.connect(self.refresh)
        launch.state_changed.connect(self.refresh)

    def retranslate(self) -> None:
        self.title.setText(tr("Speculation"))
        explain(self.explanation,
                tr("A small helper model guesses the next words and the big model checks them — same answers, faster."),
                tr("Speculative decoding: a draft model, or the model's own MTP head, proposes tokens and the "
                   "model verifies them in one pass. The text is what the model alone would write."))
        self.title.setToolTip(self.explanation.toolTip())
        self.mtp_label.setText(tr("Speed-up:"))
        helper_tip = tr("Auto: use the model's built-in helper (an MTP head) or a small draft model found beside it. "
                        "Off: the big model works alone.")
        self.mtp_label.setToolTip(helper_tip)
        self.mtp_auto.setText(tr("Auto"))
        self.mtp_auto.setAccessibleName(tr("Speculation automatic"))
        self.mtp_auto.setToolTip(helper_tip)
        self.mtp_off.setText(tr("Off"))
        self.mtp_off.setAccessibleName(tr("Speculation off"))
        self.mtp_off.setToolTip(tr("Run the big model alone: a little slower, same answers"))
        self.draft_label.setText(tr("Draft model"))
        self.draft_label.setToolTip(tr("The small helper model: one of the same family that guesses words for the "
                                       "big one. Leave empty and Draftwise looks for one."))
        self.draft_edit.setPlaceholderText(tr("automatic"))
        self.draft_edit.setAccessibleName(tr("Draft model file"))
        self.draft_browse.setText(tr("Browse…"))
        self.draft_browse.setAccessibleName(tr("Choose a draft model file"))
        self.draft_browse.setToolTip(tr("Choose a draft model file"))
        self.retry_drafter.setText(tr("Try it again"))
        self.retry_drafter.setToolTip(tr("Forget that this drafter made the engine fail, and use it at the next Launch"))
        self.forget_measured.setText(tr("Forget the measurement"))
        self.forget_measured.setToolTip(tr("Decide as if this model had never been measured here (an n-gram speed-up "
                                           "that turned speculation on is turned off)"))

    def refresh(self) -> None:
        s = self.vm
        for b, on in ((self.mtp_auto, s.mtp == MtpMode.AUTO), (self.mtp_off, s.mtp == MtpMode.OFF)):
            b.blockSignals(True)
            b.setChecked(on)
            b.blockSignals(False)
        if self.draft_edit.text() != s.draft:
            self.draft_edit.blockSignals(True)
            self.draft_edit.setText(s.draft)
            self.draft_edit.blockSignals(False)
        head = s.headline()
        self.decision.setText(f"→ {head}" if head else "")
        self.decision.setVisible(bool(head))
        set_tone(self.decision, "error" if s.error is not None else "")
        notes = s.notes()
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self.draft_msg.setText(s.draft_message())
        self.draft_msg.setVisible(bool(self.draft_msg.text()))
        self.draft_edit.setToolTip(s.draft_tooltip() or self.draft_label.toolTip())
        self.draft_msg.setToolTip(s.draft_tooltip())
        has = self.details.path is not None
        self.mtp_auto.setEnabled(has)
        self.mtp_off.setEnabled(has)
        self.draft_edit.setEnabled(has and s.mtp != MtpMode.OFF)
        self.draft_browse.setEnabled(has and s.mtp != MtpMode.OFF)
        self.retry_drafter.setVisible(s.left_out_broken() and not self.launch.running)
        measured = s.measured_text()
        self.measured.setText(measured)
        self.measured.setVisible(bool(measured))
        self.forget_measured.setVisible(bool(measured) and not self.launch.running)
        state = s.draft_state()
        set_tone(self.draft_msg, {"ok": "ok", "error": "error"}.get(state, ""))
        self.draft_edit.setStyleSheet(
            f"QLineEdit#draftEdit {{ border: 1px solid {ERROR_COLOR.name()}; border-radius: 4px; }}" if state == "error" else ""
        )

    def browse_draft(self) -> None:
        start = str(self.details.path.parent) if self.details.path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, tr("Choose a draft model"), start, tr("GGUF models (*.gguf)"))
        if path:
            self.draft_edit.setText(path)
