"""The bottom of the window: the status bar (state, endpoint URL, API key, passing notes,
"Check this machine", Logs), and above it the warning banner (speculation was switched
off, a settings problem) and the failure strip (why the engine failed, "Show log").

The status bar and the failure strip show `LaunchViewModel` and follow its `changed`
signal; the banner joins the launch's notices with the app's settings problem.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QPainter
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.launch.outcome import Stage
from draftwise.ui.cards import Disclosure, ElidedLabel, muted, set_tone
from draftwise.ui.theme import ERROR_COLOR, WARN_COLOR, state_color, tinted, title_font
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.i18n import tr
from draftwise.viewmodels.launch import LaunchViewModel


class StatusDot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = Stage.IDLE
        self.setFixedSize(12, 12)

    def set_state(self, state: Stage) -> None:
        self.state = state
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 — Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(state_color(self.state))
        p.drawEllipse(1, 1, 10, 10)
        p.end()


class StatusStrip(QWidget):
    """● Ready — http://127.0.0.1:8080/v1 [Copy] [Open chat] key ••••1234 [Copy] … Logs"""

    MESSAGE_MS = 8000  # how long a passing note stays
    # Open chat: the window shows its chat tab (the engine we build has no web page: 404).
    chat_requested = Signal()

    def __init__(self, launch: LaunchViewModel, logs_action: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = launch
        h = QHBoxLayout(self)
        h.setContentsMargins(8, 2, 4, 2)
        h.setSpacing(8)
        self.dot = StatusDot()
        # The state shrinks with "…"; the URL (what a person copies) never does.
        self.status_text = ElidedLabel()
        self.status_text.setObjectName("statusText")
        self.url_label = QLabel()
        self.url_label.setObjectName("urlLabel")
        self.url_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.url_label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.port_flag = QLabel()  # "⚠ port 8080 was taken": the engine listens elsewhere
        self.port_flag.setObjectName("portFlag")
        self.port_flag.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.copy_url = QPushButton()
        self.open_chat = QPushButton()
        self.key_label = QLabel()
        self.copy_key = QPushButton()
        self.message = muted(QLabel())
        self.message.setWordWrap(False)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.check_button = QPushButton()
        self.check_button.setFlat(True)
        self.logs_button = QToolButton()
        self.logs_button.setAutoRaise(True)
        self.logs_button.setDefaultAction(logs_action)
        for b in (self.copy_url, self.open_chat, self.copy_key):
            b.setFlat(False)
        h.addWidget(self.dot)
        h.addWidget(self.status_text)
        h.addWidget(self.url_label)
        h.addWidget(self.port_flag)
        h.addWidget(self.copy_url)
        h.addWidget(self.open_chat)
        h.addSpacing(6)
        h.addWidget(self.key_label)
        h.addWidget(self.copy_key)
        h.addWidget(self.message, 1)
        h.addWidget(self.check_button)
        h.addWidget(self.logs_button)
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.setInterval(self.MESSAGE_MS)
        self._message_timer.timeout.connect(lambda: self.message.setText(""))

        self.copy_url.clicked.connect(lambda: self._copy(launch.api_url(), tr("URL copied")))
        self.copy_key.clicked.connect(lambda: self._copy(launch.api_key(), tr("API key copied")))
        self.open_chat.clicked.connect(self.chat_requested.emit)
        launch.changed.connect(self.refresh)

    def retranslate(self) -> None:
        self.copy_url.setText(tr("Copy"))
        self.copy_url.setAccessibleName(tr("Copy the endpoint URL"))
        self.open_chat.setText(tr("Open chat"))
        self.open_chat.setAccessibleName(tr("Chat with the model in this window"))
        self.copy_key.setText(tr("Copy"))
        self.copy_key.setAccessibleName(tr("Copy the API key"))
        self.check_button.setText(tr("Check this machine"))
        self.check_button.setAccessibleName(tr("Check this machine"))
        self.check_button.setToolTip(tr("Try a tiny model on this computer's engine and graphics card, and say what works"))
        self.copy_url.setToolTip(tr("Copy the address chat programs and scripts use to talk to the model"))
        self.copy_key.setToolTip(tr("Copy the password (API key) programs need to use the model"))
        self.open_chat.setToolTip(tr("Chat with the model in this window"))

    def refresh(self) -> None:
        launch = self.vm
        self.dot.set_state(launch.state)
        self.status_text.setText(launch.status_text())
        ready = launch.state == Stage.READY
        for w in (self.url_label, self.copy_url, self.open_chat, self.key_label, self.copy_key):
            w.setVisible(ready)
        if ready:
            self.url_label.setText(f"— {launch.api_url()}")
            self.url_label.setToolTip(tr("The address for chat programs and scripts (OpenAI-compatible API)"))
            self.key_label.setText(tr("key {0}").format("••••" + launch.api_key()[-4:]))
            self.key_label.setToolTip(tr("The password (API key) programs send with each request"))
        moved = launch.port_moved()
        self.port_flag.setVisible(moved is not None)
        if moved is not None:
            self.port_flag.setText("⚠ " + tr("port {0} was taken").format(moved[0]))
            self.port_flag.setToolTip(launch.port_note())
            set_tone(self.port_flag, "warn")

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setToolTip(text)
        self._message_timer.start()

    def _copy(self, text: str, note: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)
            self.show_message(note)


class Banner(QFrame):
    """⚠ Speculation was turned off… / the settings file was set aside… [Dismiss]"""

    def __init__(self, app: AppViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = app
        self.setObjectName("banner")
        self.setStyleSheet(
            f"QFrame#banner {{ background: {tinted(WARN_COLOR, 46)}; border-top: 1px solid {tinted(WARN_COLOR, 140)}; }}"
        )
        h = QHBoxLayout(self)
        h.setContentsMargins(14, 8, 10, 8)
        icon = QLabel("⚠")
        icon.setFont(title_font(self.font(), 1.2, bold=False))
        self.text = QLabel()
        self.text.setObjectName("bannerText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss = QPushButton()
        self.dismiss.setObjectName("bannerDismiss")
        # "Details ▸": the cause in the engine's terms, kept out of the one-line sentence.
        self.details = QLabel()
        self.details.setObjectName("bannerDetails")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details_toggle = Disclosure(self.details)
        self.details_toggle.setObjectName("bannerDetailsToggle")
        column = QVBoxLayout()
        column.setSpacing(2)
        column.addWidget(self.text)
        column.addWidget(self.details_toggle, 0, Qt.AlignmentFlag.AlignLeft)
        column.addWidget(self.details)
        h.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        h.addLayout(column, 1)
        h.addWidget(self.dismiss, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)
        self.dismiss.clicked.connect(app.dismiss_settings_problem)
        app.launch.changed.connect(self.refresh)
        app.banner_changed.connect(self.refresh)
        app.launch_state_changed.connect(self.refresh)
        app.settings_problem.connect(lambda _text: self.refresh())

    def retranslate(self) -> None:
        self.dismiss.setText(tr("Dismiss"))
        self.dismiss.setAccessibleName(tr("Dismiss this notice"))
        self.details_toggle.setText(tr("Details"))
        self.details_toggle.setAccessibleName(tr("Show the details of this notice"))

    def refresh(self) -> None:
        banner = self.vm.banner_text()
        self.setVisible(bool(banner))
        self.text.setText(banner)
        self.dismiss.setVisible(bool(self.vm.settings_problem_text))
        details = self.vm.launch.fallback_details()
        self.details.setText(details)
        self.details_toggle.setVisible(bool(details))
        if not details:
            self.details_toggle.setChecked(False)
        self.details.setVisible(bool(details) and self.details_toggle.isChecked())


class FailureStrip(QFrame):
    """Why the engine failed, in words, and "Show log"."""

    def __init__(self, launch: LaunchViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = launch
        self.setObjectName("failure")
        self.setStyleSheet(
            f"QFrame#failure {{ background: {tinted(ERROR_COLOR, 38)}; border-top: 1px solid {tinted(ERROR_COLOR, 140)}; }}"
        )
        h = QHBoxLayout(self)
        h.setContentsMargins(14, 8, 10, 8)
        self.text = QLabel()
        self.text.setObjectName("failureText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_log = QPushButton()
        h.addWidget(self.text, 1)
        h.addWidget(self.show_log, 0, Qt.AlignmentFlag.AlignTop)
        self.setVisible(False)
        launch.changed.connect(self.refresh)

    def retranslate(self) -> None:
        self.show_log.setText(tr("Show log"))
        self.show_log.setToolTip(tr("Open the engine's log to see what it said before it stopped"))

    def refresh(self) -> None:
        failure = self.vm.failure_text()
        self.setVisible(bool(failure))
        self.text.setText(failure)
