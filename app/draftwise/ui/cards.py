"""What every card of the window shares: the card frame and its style sheet, muted and
coloured labels, and the "Advanced ▸" disclosure."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from draftwise.ui.theme import text_color

CARD_QSS = """
QFrame#card { border: 1px solid palette(midlight); border-radius: 10px; background: %(card)s; }
QFrame#card QLineEdit { border: 1px solid palette(mid); border-radius: 4px; padding: 3px 4px;
  background: palette(base); }
QFrame#card QLineEdit:disabled { color: palette(placeholder-text); border-color: palette(midlight); }
QFrame#card QRadioButton::indicator { width: 12px; height: 12px; border-radius: 7px;
  border: 1px solid palette(mid); background: palette(base); }
QFrame#card QRadioButton::indicator:checked { border: 4px solid palette(highlight); width: 6px; height: 6px;
  border-radius: 7px; }
QFrame#card QRadioButton::indicator:disabled { border-color: palette(midlight); }
QLabel#cardTitle { font-weight: 600; }
QPushButton#launchButton, QPushButton#serveButton { background: palette(highlight); color: palette(highlighted-text);
  border: none; border-radius: 8px; padding: 9px 28px; font-weight: 600; }
QPushButton#launchButton:disabled, QPushButton#serveButton:disabled { background: palette(midlight); color: palette(placeholder-text); }
QPushButton#stopButton, QPushButton#stopServingButton { border: 1px solid palette(mid); border-radius: 8px; padding: 8px 20px;
  background: palette(button); color: palette(button-text); font-weight: 600; }
QPushButton#stopButton:disabled, QPushButton#stopServingButton:disabled { color: palette(placeholder-text); }
"""


def card_qss(dark: bool) -> str:
    """Cards are a shade off the inputs' background so fields, borders and radio
    indicators stay visible: white cards in light, AlternateBase ones in dark."""
    return CARD_QSS % {"card": "palette(alternate-base)" if dark else "palette(base)"}


class Card(QFrame):
    """A rounded card (styled by `CARD_QSS`); `self.body` is its column."""

    def __init__(self, title: QLabel | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(16, 12, 16, 14)
        self.body.setSpacing(8)
        if title is not None:
            title.setObjectName("cardTitle")
            self.body.addWidget(title)


def muted(label: QLabel) -> QLabel:
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    label.setWordWrap(True)
    return label


def set_tone(label: QLabel, kind: str) -> None:
    """Colour a muted label: "error", "warn" or "ok"; "" makes it muted again."""
    if kind:
        # A style sheet's colour reaches PlaceholderText only at half alpha: draw with
        # WindowText so the colour shows in full.
        label.setForegroundRole(QPalette.ColorRole.WindowText)
        label.setStyleSheet(f"color: {text_color(kind).name()};")
    else:
        label.setStyleSheet("")
        label.setForegroundRole(QPalette.ColorRole.PlaceholderText)


def explain(label: QLabel, text: str, tip: str = "") -> None:
    """A card's one-line explanation under its title (muted, wrapped), with a tooltip that
    may name the technical term."""
    label.setText(text)
    label.setToolTip(tip or text)


class ElidedLabel(QLabel):
    """One line that shrinks with "…" at its end instead of being cut mid-word; the whole
    text is its tooltip. It asks for its full width but takes what the row leaves."""

    MIN_WIDTH = 60

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 — Qt override
        super().setText(text)
        self.setToolTip(text)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 — Qt override
        return QSize(min(self.MIN_WIDTH, super().sizeHint().width()), super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """The text as drawn at the current width (with "…" when it does not fit)."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())

    def paintEvent(self, event) -> None:  # noqa: N802 — Qt override
        p = QPainter(self)
        p.setPen(self.palette().color(self.foregroundRole()))
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft),
                   self.shown_text())
        p.end()


class Disclosure(QToolButton):
    """"Advanced ▸": a flat button that shows or hides a section."""

    def __init__(self, section: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.section = section
        self.setCheckable(True)
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggled.connect(self._toggle)
        self._toggle(False)

    def _toggle(self, on: bool) -> None:
        self.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.section.setVisible(on)


class DisclosedCard(QWidget):
    """A disclosure button and, under it, a card it shows or hides (Advanced, Model
    details). The spacing matches the right column's, so the section reads as two rows."""

    SPACING = 10  # the right column's spacing (`ModelPage`)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.card = Card()
        self.box = QWidget()  # hidden with the card; holds it at the column's margins
        box = QVBoxLayout(self.box)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.card)
        self.toggle = Disclosure(self.box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(self.SPACING)
        lay.addWidget(self.toggle)
        lay.addWidget(self.box)
