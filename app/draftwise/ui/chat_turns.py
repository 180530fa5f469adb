"""One turn of the chat pane: its text (Markdown in pieces, so a growing reply is laid out
again only at its end), folded reasoning, Copy, a note and the figures line. Widgets only;
the words come from `ChatViewModel` (who wrote it, the note, the figures)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPalette, QTextFormat
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.chat.protocol import Turn
from draftwise.ui.chat_pictures import thumbnail
from draftwise.ui.theme import text_color
from draftwise.viewmodels.chat import ChatViewModel
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.markdown_pieces import markdown_segments


class TextView(QTextBrowser):
    """Read-only text as tall as its content (the scroll area scrolls, not each turn)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        self.document().setUndoRedoEnabled(False)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def _fit(self, *_: object) -> None:
        height = int(self.document().size().height()) + 4
        if height != self.height():
            self.setFixedHeight(height)

    def show_markdown(self, text: str) -> None:
        self.setMarkdown(text)
        shade = QColor(self.palette().color(QPalette.ColorRole.Text))
        shade.setAlpha(22)
        block = self.document().begin()
        cursor = self.textCursor()
        cursor.beginEditBlock()  # one relayout for all code blocks, not one per line
        while block.isValid():
            # Code blocks: the importer already sets a monospace font; a faint background
            # (the text colour at low alpha) marks them in light and dark alike.
            if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence) or block.blockFormat().nonBreakableLines():
                fmt = block.blockFormat()
                fmt.setBackground(shade)
                cursor.setPosition(block.position())
                cursor.setBlockFormat(fmt)
            block = block.next()
        cursor.endEditBlock()


class MarkdownView(QWidget):
    """A reply as a stack of Markdown pieces (`markdown_segments`): while it streams, only
    the last piece is laid out again, so the cost of a refresh does not grow with the reply."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(0)
        self.pieces: list[TextView] = []
        self._texts: list[str] = []

    def show_markdown(self, text: str) -> None:
        segments = markdown_segments(text)
        while len(self.pieces) < len(segments):
            view = TextView()
            self.pieces.append(view)
            self._texts.append("\0")
            self._lay.addWidget(view)
        while len(self.pieces) > len(segments):
            view = self.pieces.pop()
            self._texts.pop()
            self._lay.removeWidget(view)
            view.deleteLater()
        for i, seg in enumerate(segments):
            if self._texts[i] != seg:
                self.pieces[i].show_markdown(seg)
                self._texts[i] = seg

    def toPlainText(self) -> str:  # noqa: N802 — like QTextEdit's
        return "\n".join(p.toPlainText() for p in self.pieces)


class TurnView(QFrame):
    """One message: the text, its folded reasoning, a note and the figures line."""

    def __init__(self, vm: ChatViewModel, turn: Turn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.turn = turn
        self.setObjectName("userTurn" if turn.role == "user" else "assistantTurn")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 6, 10, 6)
        lay.setSpacing(3)
        head = QHBoxLayout()
        self.who = QLabel()
        f = self.who.font()
        f.setBold(True)
        self.who.setFont(f)
        head.addWidget(self.who)
        head.addStretch(1)
        self.copy = QToolButton()
        self.copy.setObjectName("copyReply")
        self.copy.setAutoRaise(True)
        self.copy.clicked.connect(self._copy)
        head.addWidget(self.copy)
        lay.addLayout(head)
        self.reasoning_toggle = QToolButton()
        self.reasoning_toggle.setObjectName("reasoningToggle")
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.setAutoRaise(True)
        self.reasoning_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.reasoning = TextView()
        self.reasoning.setObjectName("reasoning")
        self.reasoning.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.reasoning_toggle.toggled.connect(self._fold)
        lay.addWidget(self.reasoning_toggle)
        lay.addWidget(self.reasoning)
        if turn.pictures:
            row = QHBoxLayout()
            for picture in turn.pictures:
                row.addWidget(thumbnail(picture, 96))
            row.addStretch(1)
            lay.addLayout(row)
        self.body: TextView | MarkdownView = TextView() if turn.role == "user" else MarkdownView()
        self.body.setObjectName("replyBody" if turn.role == "assistant" else "userBody")
        lay.addWidget(self.body)
        self.note = QLabel()
        self.note.setObjectName("replyNote")
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.note)
        self.figures = QLabel()
        self.figures.setObjectName("replyFigures")
        self.figures.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.figures.setWordWrap(True)
        lay.addWidget(self.figures)
        self._shown = (None, None)
        self._fold(False)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        self.copy.setText(tr("Copy"))
        self.copy.setAccessibleName(tr("Copy this message"))
        self.copy.setToolTip(tr("Copy this message as Markdown"))
        self.refresh(force=True)

    def _fold(self, on: bool) -> None:
        self.reasoning_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.reasoning.setVisible(on and bool(self.turn.reasoning))

    def refresh(self, force: bool = False) -> None:
        t = self.turn
        self.who.setText(self.vm.role_text(t))
        if force or self._shown != (t.content, t.reasoning):
            if t.role == "user":
                self.body.setPlainText(t.content)
            else:
                self.body.show_markdown(t.content)
            if t.reasoning:
                self.reasoning.setPlainText(t.reasoning)
            self._shown = (t.content, t.reasoning)
        self.body.setVisible(bool(t.content) or t.role == "user")
        self.reasoning_toggle.setVisible(bool(t.reasoning))
        if t.reasoning:
            self.reasoning_toggle.setText(tr("Reasoning ({0} words)").format(len(t.reasoning.split())))
        self.reasoning.setVisible(self.reasoning_toggle.isChecked() and bool(t.reasoning))
        self.copy.setVisible(bool(t.content))
        note = self.vm.note_text(t)
        self.note.setText(note)
        self.note.setVisible(bool(note))
        color = text_color("error" if t.problem else "warn", self)
        self.note.setStyleSheet(f"color: {color.name()};" if note else "")
        figures = self.vm.figures_text(t)
        self.figures.setText(figures)
        self.figures.setVisible(bool(figures))

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.vm.transcript(self.turn))
        self.copy.setText(tr("Copied"))
        QTimer.singleShot(1500, lambda: self.copy.setText(tr("Copy")))
