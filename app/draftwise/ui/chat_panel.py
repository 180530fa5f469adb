"""The chat pane: the conversation, a box to type in, and what happened to each reply.

Widgets only: `ChatViewModel` decides what to send, when, and what each reply's note and
figures say; this module shows turns as they grow (Markdown, code in monospace, reasoning
folded), forwards Enter / Shift+Enter / Esc, and offers Launch when no engine runs.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeyEvent, QKeySequence, QPalette, QShortcut
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
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.measurements.usage import KEEP_PROMPTS
from draftwise.ui.chat_pictures import PictureStrip, take_mime
from draftwise.ui.chat_turns import TurnView
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
    """Enter sends, Shift+Enter starts a new line; a pasted picture goes to the tray."""

    submitted = Signal()
    tray = None  # the PictureTray, set by the panel

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802 — Qt override
        return (self.tray is not None and self.tray.vision and source.hasImage()) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802 — Qt override
        if self.tray is not None and self.tray.vision and (source.hasImage() or (
                source.hasUrls() and not source.hasText())) and take_mime(self.tray, source):
            return
        super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 — Qt override
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not (
                event.modifiers() & (Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier)):
            self.submitted.emit()
            return
        super().keyPressEvent(event)


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
        self.prompts_check = QCheckBox()
        self.prompts_check.setObjectName("keepPrompts")
        self.prompts_check.setChecked(vm.settings.keep_prompts)
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
        form.addRow("", self.prompts_check)
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

        self.picture_strip = PictureStrip(vm.pictures)
        outer.addWidget(self.picture_strip)
        self.setAcceptDrops(True)

        bottom = QHBoxLayout()
        self.input = ChatInput()
        self.input.tray = vm.pictures
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
        self._writing = vm.writing
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
        self.prompts_check.toggled.connect(vm.set_keep_prompts)
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
        self.prompts_check.setText(tr("Keep my last prompts on this computer to measure speed on them"))
        self.prompts_check.setToolTip(tr("The last {0} prompts per model, this chat's and those other programs send "
                                         "the engines Draftwise starts, never sent anywhere: Draftwise measures "
                                         "speculation again on them when your requests suggest another setting "
                                         "is faster. Unchecking deletes the ones kept.").format(KEEP_PROMPTS))
        self.input.setAccessibleName(tr("Message to the model"))
        self.send_button.setAccessibleName(tr("Send the message"))
        self.stop_button.setText(tr("Stop"))
        self.stop_button.setAccessibleName(tr("Stop the reply"))
        self.stop_button.setToolTip(tr("Stop the reply and keep what came (Esc)"))
        self.launch_button.setText(tr("Launch"))
        self.launch_button.setAccessibleName(tr("Launch the model"))
        for v in self.views:
            v.retranslate()
        self.picture_strip.retranslate()
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
        self.empty.setText(vm.empty_text())
        self.input.setPlaceholderText(vm.input_hint())
        self.send_button.setText(vm.send_text())
        if self._writing != vm.writing:  # a base model launched (or a chat model again)
            self._writing = vm.writing
            for v in self.views:
                v.refresh(force=True)
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

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 — Qt override
        mime = event.mimeData()
        if self.vm.pictures.vision and (mime.hasUrls() or mime.hasImage()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 — Qt override
        if take_mime(self.vm.pictures, event.mimeData()):
            event.acceptProposedAction()

    def focus_input(self) -> None:
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)

    def _scrolled(self, value: int) -> None:
        bar = self.scroll.verticalScrollBar()
        self._follow_bottom = value >= bar.maximum() - 4

    def _follow(self, _min: int, maximum: int) -> None:
        # Stay at the bottom while a reply grows, unless the user scrolled up to read.
        if self._follow_bottom:
            self.scroll.verticalScrollBar().setValue(maximum)
