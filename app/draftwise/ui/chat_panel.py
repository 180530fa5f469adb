"""The chat pane: the conversation, a box to type in, and what happened to each reply.

Widgets only: `ChatViewModel` decides what to send, when, and what each reply's note and
figures say; this module shows turns as they grow (Markdown, code in monospace, reasoning
folded), forwards Enter / Shift+Enter / Esc, and offers Launch when no engine runs.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QPalette,
    QShortcut,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.chat import Turn, markdown_segments
from draftwise.ui.theme import ERROR_COLOR, WARN_COLOR, is_dark, text_color, tinted
from draftwise.viewmodels.chat import ChatViewModel
from draftwise.viewmodels.i18n import tr

PANEL_QSS = """
QFrame#userTurn { background: palette(alternate-base); border: 1px solid palette(midlight);
  border-radius: 10px; }
QFrame#assistantTurn { border: none; }
QTextBrowser { background: transparent; border: none; }
"""
NO_TEMPERATURE = -0.1  # the spin box's minimum: "the engine's default"


class ChatInput(QPlainTextEdit):
    """Enter sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 — Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
                event.modifiers() & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


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
        self.who.setText(tr("You") if self.turn.role == "user" else tr("Model"))
        self.copy.setText(tr("Copy"))
        self.copy.setAccessibleName(tr("Copy this message"))
        self.copy.setToolTip(tr("Copy this message as Markdown"))
        self.refresh(force=True)

    def _fold(self, on: bool) -> None:
        self.reasoning_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.reasoning.setVisible(on and bool(self.turn.reasoning))

    def refresh(self, force: bool = False) -> None:
        t = self.turn
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


class ChatPanel(QWidget):
    def __init__(self, vm: ChatViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("chatPanel")
        self.setStyleSheet(PANEL_QSS)
        self.views: list[TurnView] = []
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        outer.setSpacing(6)

        top = QHBoxLayout()
        self.history = QComboBox()
        self.history.setObjectName("chatHistory")
        self.history.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.history.setMinimumContentsLength(18)
        self.new_button = QPushButton()
        self.new_button.setObjectName("newChat")
        self.more_toggle = QToolButton()
        self.more_toggle.setObjectName("chatMore")
        self.more_toggle.setCheckable(True)
        self.more_toggle.setAutoRaise(True)
        self.more_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        top.addWidget(self.history, 1)
        top.addWidget(self.new_button)
        top.addWidget(self.more_toggle)
        outer.addLayout(top)

        self.more = QWidget()
        form = QFormLayout(self.more)
        form.setContentsMargins(0, 0, 0, 0)
        self.system_prompt = QPlainTextEdit()
        self.system_prompt.setObjectName("systemPrompt")
        self.system_prompt.setMaximumHeight(64)
        self.temperature = QDoubleSpinBox()
        self.temperature.setObjectName("temperature")
        self.temperature.setRange(NO_TEMPERATURE, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setValue(NO_TEMPERATURE)
        self.max_tokens = QSpinBox()
        self.max_tokens.setObjectName("maxTokens")
        self.max_tokens.setRange(0, 1_000_000)
        self.max_tokens.setSingleStep(256)
        self.save_check = QCheckBox()
        self.save_check.setObjectName("saveChats")
        self.save_check.setChecked(vm.settings.chat_save)
        self.system_label, self.temp_label, self.max_label = QLabel(), QLabel(), QLabel()
        form.addRow(self.system_label, self.system_prompt)
        row = QHBoxLayout()
        row.addWidget(self.temperature)
        row.addSpacing(12)
        row.addWidget(self.max_label)
        row.addWidget(self.max_tokens)
        row.addStretch(1)
        form.addRow(self.temp_label, row)
        form.addRow("", self.save_check)
        outer.addWidget(self.more)

        self.scroll = QScrollArea()
        self.scroll.setObjectName("chatScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget()
        body.setObjectName("chatBody")
        self.turns_layout = QVBoxLayout(body)
        self.turns_layout.setContentsMargins(2, 2, 8, 2)
        self.turns_layout.setSpacing(8)
        self.empty = QLabel()
        self.empty.setObjectName("chatEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.turns_layout.addWidget(self.empty)
        self.turns_layout.addStretch(1)
        self.scroll.setWidget(body)
        self.scroll.verticalScrollBar().rangeChanged.connect(self._follow)
        outer.addWidget(self.scroll, 1)

        self.notice = QFrame()
        self.notice.setObjectName("chatNotice")
        nl = QHBoxLayout(self.notice)
        nl.setContentsMargins(10, 6, 10, 6)
        self.notice_text = QLabel()
        self.notice_text.setObjectName("chatNoticeText")
        self.notice_text.setWordWrap(True)
        self.wait_bar = QProgressBar()
        self.wait_bar.setRange(0, 0)  # busy: how long loading takes is not known
        self.wait_bar.setMaximumWidth(120)
        self.wait_bar.setTextVisible(False)
        self.launch_button = QPushButton()
        self.launch_button.setObjectName("chatLaunch")
        nl.addWidget(self.notice_text, 1)
        nl.addWidget(self.wait_bar)
        nl.addWidget(self.launch_button)
        outer.addWidget(self.notice)

        self.store_note = QLabel()
        self.store_note.setObjectName("chatStoreProblem")
        self.store_note.setWordWrap(True)
        outer.addWidget(self.store_note)

        bottom = QHBoxLayout()
        self.input = ChatInput()
        self.input.setObjectName("chatInput")
        self.input.setMaximumHeight(90)
        self.input.setTabChangesFocus(True)
        self.send_button = QPushButton()
        self.send_button.setObjectName("chatSend")
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("chatStop")
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        bottom.addWidget(self.input, 1)
        bottom.addLayout(buttons)
        outer.addLayout(bottom)

        self._follow_bottom = True
        self.scroll.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self.esc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.esc.activated.connect(vm.stop)
        self.input.submitted.connect(self.send)
        self.send_button.clicked.connect(self.send)
        self.stop_button.clicked.connect(vm.stop)
        self.new_button.clicked.connect(vm.new_chat)
        self.launch_button.clicked.connect(vm.request_launch)
        self.history.activated.connect(vm.select)
        self.more_toggle.toggled.connect(self._toggle_more)
        self.system_prompt.textChanged.connect(lambda: vm.set_system_prompt(self.system_prompt.toPlainText()))
        self.temperature.valueChanged.connect(
            lambda v: vm.set_temperature(None if v <= NO_TEMPERATURE + 1e-9 else round(v, 2)))
        self.max_tokens.valueChanged.connect(lambda v: vm.set_max_tokens(v or None))
        self.save_check.toggled.connect(vm.set_save)
        vm.changed.connect(self.refresh)
        vm.turn_added.connect(self._add_turn)
        vm.turn_updated.connect(self._update_turn)
        vm.conversation_changed.connect(self.rebuild)
        self._toggle_more(False)
        self.retranslate()
        self.rebuild()

    # ---------------------------------------------------------------- texts
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 — Qt override
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        elif event.type() == QEvent.Type.PaletteChange:
            self._style_notice()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.new_button.setText(tr("New chat"))
        self.new_button.setAccessibleName(tr("Start a new chat"))
        self.more_toggle.setText(tr("More"))
        self.more_toggle.setAccessibleName(tr("Show more chat settings"))
        self.history.setAccessibleName(tr("Chats of this session"))
        self.system_label.setText(tr("System prompt"))
        self.system_prompt.setPlaceholderText(tr("e.g. Answer briefly."))
        self.system_prompt.setAccessibleName(tr("System prompt"))
        self.temp_label.setText(tr("Temperature"))
        self.temperature.setSpecialValueText(tr("engine default"))
        self.temperature.setAccessibleName(tr("Temperature"))
        self.max_label.setText(tr("Max tokens"))
        self.max_tokens.setSpecialValueText(tr("no limit"))
        self.max_tokens.setAccessibleName(tr("Max tokens per reply"))
        self.save_check.setText(tr("Keep chats on this computer (in the data folder)"))
        self.input.setPlaceholderText(tr("Type a message — Enter sends, Shift+Enter starts a new line"))
        self.input.setAccessibleName(tr("Message to the model"))
        self.send_button.setText(tr("Send"))
        self.send_button.setAccessibleName(tr("Send the message"))
        self.stop_button.setText(tr("Stop"))
        self.stop_button.setAccessibleName(tr("Stop the reply"))
        self.stop_button.setToolTip(tr("Stop the reply and keep what came (Esc)"))
        self.launch_button.setText(tr("Launch"))
        self.launch_button.setAccessibleName(tr("Launch the model"))
        self.empty.setText(tr("Launch a model, then ask it something. Each reply shows how fast it came "
                              "and how much the drafter helped."))
        for v in self.views:
            v.retranslate()
        self.refresh()

    # ---------------------------------------------------------------- refresh
    def rebuild(self) -> None:
        for v in self.views:
            self.turns_layout.removeWidget(v)
            v.deleteLater()
        self.views = []
        for i in range(len(self.vm.turns)):
            self._add_turn(i)
        if self.system_prompt.toPlainText() != self.vm.current.system_prompt:
            self.system_prompt.blockSignals(True)
            self.system_prompt.setPlainText(self.vm.current.system_prompt)
            self.system_prompt.blockSignals(False)
        self._follow_bottom = True
        self.refresh()

    def _add_turn(self, index: int) -> None:
        turn = self.vm.turns[index]
        view = TurnView(self.vm, turn)
        self.views.append(view)
        # Before the stretch at the end.
        self.turns_layout.insertWidget(self.turns_layout.count() - 1, view)
        self.empty.setVisible(False)
        self._follow_bottom = True

    def _update_turn(self, index: int) -> None:
        turn = self.vm.turns[index] if 0 <= index < len(self.vm.turns) else None
        for v in self.views:
            if v.turn is turn:
                v.refresh()

    def refresh(self) -> None:
        vm = self.vm
        self.empty.setVisible(not self.views)
        self.history.blockSignals(True)
        titles = vm.titles()
        if [self.history.itemText(i) for i in range(self.history.count())] != titles:
            self.history.clear()
            self.history.addItems(titles)
        self.history.setCurrentIndex(vm.current_index())
        self.history.blockSignals(False)
        self.send_button.setEnabled(not vm.busy)
        self.stop_button.setEnabled(vm.busy)
        text = vm.notice_text()
        self.notice.setVisible(bool(text))
        self.notice_text.setText(text)
        self.wait_bar.setVisible(vm.waiting_for_engine())
        self.launch_button.setVisible(vm.offers_launch())
        self._style_notice()
        problem = vm.store_problem_text()
        self.store_note.setText(problem)
        self.store_note.setVisible(bool(problem))
        self.store_note.setStyleSheet(f"color: {text_color('error', self).name()};" if problem else "")

    def _style_notice(self) -> None:
        loading = self.vm.waiting_for_engine()
        color = WARN_COLOR if loading or self.vm.offers_launch() or self.vm.notice is None else ERROR_COLOR
        self.notice.setStyleSheet(
            f"QFrame#chatNotice {{ background: {tinted(color, 60 if is_dark(self) else 40)}; border-radius: 8px; }}")

    def _toggle_more(self, on: bool) -> None:
        self.more_toggle.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.more.setVisible(on)

    # ---------------------------------------------------------------- input
    def send(self) -> None:
        text = self.input.toPlainText()
        if self.vm.send(text):
            self.input.clear()

    def focus_input(self) -> None:
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def _scrolled(self, value: int) -> None:
        bar = self.scroll.verticalScrollBar()
        self._follow_bottom = value >= bar.maximum() - 4

    def _follow(self, _min: int, maximum: int) -> None:
        # Stay at the bottom while a reply grows, unless the user scrolled up to read.
        if self._follow_bottom:
            self.scroll.verticalScrollBar().setValue(maximum)
