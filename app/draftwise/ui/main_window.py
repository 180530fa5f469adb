"""The main window: library on the left; the chosen model, speculation, memory and Launch on
the right; a banner and the status bar at the bottom; the engine log below on demand.

Widgets only: every decision (what Launch would run, whether it may, what a failure
means) comes from `AppViewModel`; this module shows it and forwards clicks.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QEventLoop, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
    QPalette,
)
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QSplitter,
    QSystemTrayIcon,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.ui.check_dialog import CheckDialog
from draftwise.ui.library_panel import LibraryPanel
from draftwise.ui.logs_panel import LogsPanel
from draftwise.ui.memory_bar import BarData, MemoryBars
from draftwise.ui.theme import (
    ERROR_COLOR,
    STATE_COLORS,
    WARN_COLOR,
    app_icon,
    is_dark,
    state_icon,
    text_color,
    tinted,
    title_font,
)
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.i18n import LANGUAGE_NAMES, tr, tr_error
from draftwise.viewmodels.plan import FITS, NO_FIT, SEGMENTS

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
QPushButton#launchButton { background: palette(highlight); color: palette(highlighted-text);
  border: none; border-radius: 8px; padding: 9px 28px; font-weight: 600; }
QPushButton#launchButton:disabled { background: palette(midlight); color: palette(placeholder-text); }
QPushButton#stopButton { border: 1px solid palette(mid); border-radius: 8px; padding: 8px 20px;
  background: palette(button); color: palette(button-text); font-weight: 600; }
QPushButton#stopButton:disabled { color: palette(placeholder-text); }
"""


def card_qss(dark: bool) -> str:
    """Cards are a shade off the inputs' background so fields, borders and radio
    indicators stay visible: white cards in light, AlternateBase ones in dark."""
    return CARD_QSS % {"card": "palette(alternate-base)" if dark else "palette(base)"}


def _card(title_label: QLabel | None = None) -> tuple[QFrame, QVBoxLayout]:
    frame = QFrame()
    frame.setObjectName("card")
    lay = QVBoxLayout(frame)
    lay.setContentsMargins(16, 12, 16, 14)
    lay.setSpacing(8)
    if title_label is not None:
        title_label.setObjectName("cardTitle")
        lay.addWidget(title_label)
    return frame, lay


def _muted(label: QLabel) -> QLabel:
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    label.setWordWrap(True)
    return label


class StatusDot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = "idle"
        self.setFixedSize(12, 12)

    def set_state(self, state: str) -> None:
        self.state = state
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 — Qt override
        from PySide6.QtGui import QPainter

        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(STATE_COLORS.get(self.state, STATE_COLORS["idle"]))
        p.drawEllipse(1, 1, 10, 10)
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


class MainWindow(QMainWindow):
    def __init__(self, vm: AppViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("mainWindow")
        self.setWindowIcon(app_icon())
        self.setAcceptDrops(True)
        self.setStyleSheet(card_qss(is_dark(self)))
        self._quitting = False
        self._check_dialog: CheckDialog | None = None
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.setInterval(8000)
        self._message_timer.timeout.connect(lambda: self.message.setText(""))

        self._build_actions()
        self._build_menus()
        self.library = LibraryPanel(vm.library)
        right = self._build_right()
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.library)
        self.split.addWidget(right)
        self.split.setStretchFactor(0, 5)
        self.split.setStretchFactor(1, 6)
        self.split.setChildrenCollapsible(False)
        self.logs = LogsPanel(vm.logs)
        self.vsplit = QSplitter(Qt.Orientation.Vertical)
        self.vsplit.addWidget(self.split)
        self.vsplit.addWidget(self.logs)
        self.vsplit.setStretchFactor(0, 3)
        self.vsplit.setStretchFactor(1, 1)
        self.logs.setVisible(vm.settings.logs_visible)
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.vsplit, 1)
        cl.addWidget(self._build_banner())
        cl.addWidget(self._build_failure())
        self.setCentralWidget(central)
        self._build_status()
        self._build_tray()

        self._connect()
        self.retranslate()
        self._restore_geometry()
        self.refresh_all()

    # ================================================================ building
    def _build_actions(self) -> None:
        self.act_open = QAction(self)
        self.act_open.setShortcut(QKeySequence("Ctrl+O"))
        self.act_add_folder = QAction(self)
        self.act_launch = QAction(self)
        self.act_launch.setShortcut(QKeySequence("Ctrl+L"))
        self.act_stop = QAction(self)
        self.act_stop.setShortcut(QKeySequence("Ctrl+."))
        self.act_check = QAction(self)
        self.act_install = QAction(self)
        self.act_logs = QAction(self)
        self.act_logs.setCheckable(True)
        self.act_quit = QAction(self)
        self.act_quit.setShortcut(QKeySequence.StandardKey.Quit)
        self.act_about = QAction(self)
        for a in (self.act_open, self.act_add_folder, self.act_launch, self.act_stop, self.act_check,
                  self.act_logs, self.act_quit):
            self.addAction(a)
        self.lang_actions: dict[str, QAction] = {}
        for code in LANGUAGE_NAMES:
            a = QAction(self)
            a.setCheckable(True)
            a.triggered.connect(lambda _=False, c=code: self.vm.set_language(c))
            self.lang_actions[code] = a

    def _build_menus(self) -> None:
        mb = self.menuBar()
        self.menu_file = mb.addMenu("")
        self.menu_file.addAction(self.act_open)
        self.menu_file.addAction(self.act_add_folder)
        self.menu_file.addSeparator()
        self.menu_file.addAction(self.act_quit)
        self.menu_engine = mb.addMenu("")
        self.menu_engine.addAction(self.act_launch)
        self.menu_engine.addAction(self.act_stop)
        self.menu_engine.addSeparator()
        self.menu_engine.addAction(self.act_install)
        self.menu_engine.addAction(self.act_check)
        self.menu_view = mb.addMenu("")
        self.menu_view.addAction(self.act_logs)
        self.menu_lang = QMenu(self)
        for a in self.lang_actions.values():
            self.menu_lang.addAction(a)
        self.menu_view.addMenu(self.menu_lang)
        self.menu_help = mb.addMenu("")
        self.menu_help.addAction(self.act_about)

    def _build_right(self) -> QWidget:
        body = QWidget()
        body.setObjectName("detailsBody")
        lay = QVBoxLayout(body)
        lay.setContentsMargins(8, 10, 12, 10)
        lay.setSpacing(10)

        # ---- header
        self.title = QLabel()
        self.title.setObjectName("modelTitle")
        self.title.setFont(title_font(self.font(), 1.45))
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.mtp_chip = QLabel("MTP")
        self.mtp_chip.setStyleSheet(
            f"background: {tinted(self._mtp_color(), 50)}; border-radius: 8px; padding: 1px 8px; font-weight: 600;"
        )
        self.subtitle = _muted(QLabel())
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        head = QHBoxLayout()
        head.addWidget(self.title, 0)
        head.addWidget(self.mtp_chip, 0, Qt.AlignmentFlag.AlignVCenter)
        head.addStretch(1)
        header = QVBoxLayout()
        header.setSpacing(2)
        header.addLayout(head)
        header.addWidget(self.subtitle)
        header.addWidget(self.problems)
        lay.addLayout(header)

        # ---- speculation
        self.spec_title = QLabel()
        card, cl = _card(self.spec_title)
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
        self.spec_notes = _muted(QLabel())
        cl.addWidget(self.spec_notes)
        rrow = QHBoxLayout()
        self.retry_drafter = QPushButton()
        self.retry_drafter.setObjectName("retryDrafter")
        rrow.addWidget(self.retry_drafter)
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
        lay.addWidget(card)

        # ---- memory
        self.mem_title = QLabel()
        card, ml = _card(None)
        top = QHBoxLayout()
        self.mem_title.setObjectName("cardTitle")
        top.addWidget(self.mem_title)
        top.addStretch(1)
        self.fit_chip = QLabel()
        top.addWidget(self.fit_chip)
        ml.addLayout(top)
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
        crow.addSpacing(12)
        crow.addWidget(self.kv_label)
        crow.addWidget(self.kv_combo)
        ml.addLayout(crow)
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
        lay.addWidget(card)

        # ---- engine + launch
        card, el = _card(None)
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
        self.install_bar = QProgressBar()
        self.install_bar.setRange(0, 1000)
        self.install_bar.setTextVisible(True)
        el.addWidget(self.install_bar)
        self.engine_status = _muted(QLabel())
        el.addWidget(self.engine_status)
        lrow = QHBoxLayout()
        self.block_reason = _muted(QLabel())
        self.block_reason.setObjectName("launchBlockReason")
        self.launch_button = QPushButton()
        self.launch_button.setObjectName("launchButton")
        self.launch_button.setDefault(True)
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopButton")
        lrow.addWidget(self.block_reason, 1)
        lrow.addWidget(self.stop_button)
        lrow.addWidget(self.launch_button)
        el.addLayout(lrow)
        # Pinned under the scroll area: Launch/Stop stay reachable in a small window.
        self.launch_card = card

        # ---- advanced
        self.advanced = QWidget()
        self.adv_toggle = Disclosure(self.advanced)
        self.adv_toggle.setObjectName("advancedToggle")
        lay.addWidget(self.adv_toggle)
        card_adv, al = _card(None)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.extra_edit = QLineEdit()
        self.extra_edit.setObjectName("extraArgs")
        self.extra_msg = QLabel()
        self.extra_msg.setWordWrap(True)
        self.extra_msg.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.extra_label = QLabel()
        form.addRow(self.extra_label, self.extra_edit)
        form.addRow("", self.extra_msg)
        prow = QHBoxLayout()
        self.profile_combo = QComboBox()
        self.profile_combo.setObjectName("profileCombo")
        self.profile_apply = QPushButton()
        self.profile_save = QPushButton()
        self.profile_delete = QPushButton()
        prow.addWidget(self.profile_combo, 1)
        prow.addWidget(self.profile_apply)
        prow.addWidget(self.profile_save)
        prow.addWidget(self.profile_delete)
        self.profile_label = QLabel()
        form.addRow(self.profile_label, prow)
        self.reset_button = QPushButton()
        self.overrides_label = QLabel()
        orow = QHBoxLayout()
        self.overrides_text = _muted(QLabel())
        orow.addWidget(self.overrides_text, 1)
        orow.addWidget(self.reset_button)
        form.addRow(self.overrides_label, orow)
        nrow = QHBoxLayout()
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("portSpin")
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(self.vm.settings.port)
        self.network_check = QCheckBox()
        self.network_check.setObjectName("networkCheck")
        self.network_check.setChecked(self.vm.settings.network)
        nrow.addWidget(self.port_spin)
        nrow.addSpacing(12)
        self.network_check.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        nrow.addWidget(self.network_check, 1)
        self.port_label = QLabel()
        form.addRow(self.port_label, nrow)
        self.lang_combo = QComboBox()
        self.lang_combo.setObjectName("languageCombo")
        for code, name in LANGUAGE_NAMES.items():
            self.lang_combo.addItem(name, code)
        self.lang_label = QLabel()
        form.addRow(self.lang_label, self.lang_combo)
        al.addLayout(form)
        self.command_label = QLabel()
        al.addWidget(self.command_label)
        self.command = QPlainTextEdit()
        self.command.setObjectName("commandPreview")
        self.command.setReadOnly(True)
        self.command.setMaximumHeight(78)
        from PySide6.QtGui import QFontDatabase

        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        al.addWidget(self.command)
        av = QVBoxLayout(self.advanced)
        av.setContentsMargins(0, 0, 0, 0)
        av.addWidget(card_adv)
        lay.addWidget(self.advanced)

        # ---- details
        self.details_box = QWidget()
        self.details_toggle = Disclosure(self.details_box)
        self.details_toggle.setObjectName("detailsToggle")
        lay.addWidget(self.details_toggle)
        card_det, dl = _card(None)
        self.facts = QFormLayout()
        self.facts.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        dl.addLayout(self.facts)
        dv = QVBoxLayout(self.details_box)
        dv.setContentsMargins(0, 0, 0, 0)
        dv.addWidget(card_det)
        lay.addWidget(self.details_box)
        lay.addStretch(1)

        scroll = QScrollArea()
        scroll.setObjectName("detailsScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(body)
        right = QWidget()
        right.setObjectName("rightSide")
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.setSpacing(0)
        rl.addWidget(scroll, 1)
        pin = QVBoxLayout()
        pin.setContentsMargins(8, 6, 12 + scroll.verticalScrollBar().sizeHint().width(), 8)
        pin.addWidget(self.launch_card)
        rl.addLayout(pin)
        return right

    def _mtp_color(self):
        from draftwise.ui.library_panel import MTP_COLOR

        return MTP_COLOR

    def _build_banner(self) -> QWidget:
        self.banner = QFrame()
        self.banner.setObjectName("banner")
        self.banner.setStyleSheet(
            f"QFrame#banner {{ background: {tinted(WARN_COLOR, 46)}; border-top: 1px solid {tinted(WARN_COLOR, 140)}; }}"
        )
        h = QHBoxLayout(self.banner)
        h.setContentsMargins(14, 8, 10, 8)
        icon = QLabel("⚠")
        icon.setFont(title_font(self.font(), 1.2, bold=False))
        self.banner_text = QLabel()
        self.banner_text.setObjectName("bannerText")
        self.banner_text.setWordWrap(True)
        self.banner_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner_dismiss = QPushButton()
        self.banner_dismiss.setObjectName("bannerDismiss")
        h.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        h.addWidget(self.banner_text, 1)
        h.addWidget(self.banner_dismiss, 0, Qt.AlignmentFlag.AlignTop)
        self.banner.setVisible(False)
        return self.banner

    def _build_failure(self) -> QWidget:
        self.failure = QFrame()
        self.failure.setObjectName("failure")
        self.failure.setStyleSheet(
            f"QFrame#failure {{ background: {tinted(ERROR_COLOR, 38)}; border-top: 1px solid {tinted(ERROR_COLOR, 140)}; }}"
        )
        h = QHBoxLayout(self.failure)
        h.setContentsMargins(14, 8, 10, 8)
        self.failure_text = QLabel()
        self.failure_text.setObjectName("failureText")
        self.failure_text.setWordWrap(True)
        self.failure_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.failure_logs = QPushButton()
        h.addWidget(self.failure_text, 1)
        h.addWidget(self.failure_logs, 0, Qt.AlignmentFlag.AlignTop)
        self.failure.setVisible(False)
        return self.failure

    def _build_status(self) -> None:
        bar = self.statusBar()
        bar.setSizeGripEnabled(True)
        w = QWidget()
        h = QHBoxLayout(w)
        h.setContentsMargins(8, 2, 4, 2)
        h.setSpacing(8)
        self.dot = StatusDot()
        self.status_text = QLabel()
        self.status_text.setObjectName("statusText")
        self.url_label = QLabel()
        self.url_label.setObjectName("urlLabel")
        self.url_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_url = QPushButton()
        self.open_chat = QPushButton()
        self.key_label = QLabel()
        self.copy_key = QPushButton()
        self.message = _muted(QLabel())
        self.message.setWordWrap(False)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.check_button = QPushButton()
        self.check_button.setFlat(True)
        self.logs_button = QToolButton()
        self.logs_button.setAutoRaise(True)
        self.logs_button.setDefaultAction(self.act_logs)
        for b in (self.copy_url, self.open_chat, self.copy_key):
            b.setFlat(False)
        h.addWidget(self.dot)
        h.addWidget(self.status_text)
        h.addWidget(self.url_label)
        h.addWidget(self.copy_url)
        h.addWidget(self.open_chat)
        h.addSpacing(6)
        h.addWidget(self.key_label)
        h.addWidget(self.copy_key)
        h.addWidget(self.message, 1)
        h.addWidget(self.check_button)
        h.addWidget(self.logs_button)
        bar.addPermanentWidget(w, 1)

    def _build_tray(self) -> None:
        self.tray: QSystemTrayIcon | None = None
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return
        self.tray = QSystemTrayIcon(state_icon("idle"), self)
        menu = QMenu(self)
        self.tray_show = menu.addAction("")
        self.tray_show.triggered.connect(self._show_from_tray)
        menu.addAction(self.act_stop)
        menu.addSeparator()
        menu.addAction(self.act_quit)
        self.tray.setContextMenu(menu)
        self.tray.activated.connect(
            lambda reason: self._show_from_tray() if reason == QSystemTrayIcon.ActivationReason.Trigger else None
        )
        self.tray.show()

    # ================================================================ wiring
    def _connect(self) -> None:
        vm = self.vm
        self.act_open.triggered.connect(self.browse_model)
        self.act_add_folder.triggered.connect(self.browse_folder)
        self.act_launch.triggered.connect(self.launch)
        self.act_stop.triggered.connect(vm.do_stop)
        self.act_check.triggered.connect(self.show_check)
        self.act_install.triggered.connect(lambda: vm.engine.install())
        self.act_logs.toggled.connect(self._set_logs_visible)
        self.act_quit.triggered.connect(self.quit)
        self.act_about.triggered.connect(self.about)
        self.library.model_chosen.connect(vm.open_model)
        self.library.add_folder_requested.connect(self.browse_folder)
        self.library.open_file_requested.connect(self.browse_model)
        self.library.get_models_requested.connect(self.show_get_models)
        self.mtp_auto.toggled.connect(lambda on: vm.speculation.set_mtp("auto") if on else None)
        self.mtp_off.toggled.connect(lambda on: vm.speculation.set_mtp("off") if on else None)
        self.draft_edit.textChanged.connect(vm.speculation.set_draft)
        self.draft_browse.clicked.connect(self.browse_draft)
        self.ctx_slider.valueChanged.connect(self._on_slider)
        self.ctx_auto.clicked.connect(lambda: vm.plan.set_context(None))
        self.kv_combo.currentIndexChanged.connect(self._on_kv)
        self.engine_combo.currentIndexChanged.connect(self._on_engine_combo)
        self.install_button.clicked.connect(lambda: vm.engine.install())
        self.launch_button.clicked.connect(self.launch)
        self.stop_button.clicked.connect(vm.do_stop)
        self.extra_edit.textChanged.connect(vm.set_extra_args_text)
        self.profile_apply.clicked.connect(lambda: vm.apply_profile(self.profile_combo.currentText()))
        self.profile_save.clicked.connect(self.save_profile)
        self.profile_delete.clicked.connect(self._delete_profile)
        self.reset_button.clicked.connect(vm.reset_overrides)
        self.lang_combo.currentIndexChanged.connect(self._on_lang_combo)
        self.port_spin.valueChanged.connect(vm.set_port)
        self.network_check.toggled.connect(vm.set_network)
        self.copy_url.clicked.connect(lambda: self._copy(vm.launch.api_url(), tr("URL copied")))
        self.copy_key.clicked.connect(lambda: self._copy(vm.launch.api_key(), tr("API key copied")))
        self.open_chat.clicked.connect(self.open_chat_page)
        self.check_button.clicked.connect(self.show_check)
        self.failure_logs.clicked.connect(lambda: self.act_logs.setChecked(True))
        self.banner_dismiss.clicked.connect(vm.dismiss_settings_problem)
        self.retry_drafter.clicked.connect(vm.retry_broken_drafters)
        self.adv_toggle.toggled.connect(self._on_advanced_toggled)

        vm.model_changed.connect(self.refresh_model)
        vm.library.changed.connect(self._reselect)
        vm.details.changed.connect(self.refresh_model)
        vm.speculation.changed.connect(self.refresh_speculation)
        vm.plan.changed.connect(self.refresh_plan)
        vm.outcome_changed.connect(self.refresh_command)
        vm.engine.changed.connect(self.refresh_engine)
        vm.engine.engines_changed.connect(self.refresh_engine)
        vm.engine.install_progress.connect(lambda *_: self.refresh_engine())
        vm.launch_state_changed.connect(self.refresh_launch)
        vm.launch.changed.connect(self.refresh_status)
        vm.launch.state_changed.connect(self._on_state)
        vm.extra_args_changed.connect(self.refresh_extra)
        vm.message.connect(self.show_message)
        vm.settings_problem.connect(self.show_settings_problem)
        vm.banner_changed.connect(self.refresh_status)
        # Translators change synchronously; Qt's LanguageChange event comes later: re-read now.
        vm.retranslated.connect(self.retranslate)
        vm.retranslated.connect(self.refresh_all)

    # ================================================================ texts
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 — Qt override
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        self.setWindowTitle("Draftwise")
        self.act_open.setText(tr("&Open model…"))
        self.act_add_folder.setText(tr("&Add folder…"))
        self.act_launch.setText(tr("&Launch"))
        self.act_stop.setText(tr("&Stop"))
        self.act_check.setText(tr("&Check this machine"))
        self.act_install.setText(tr("&Install engine"))
        self.act_logs.setText(tr("Logs"))
        self.act_logs.setToolTip(tr("Show or hide the engine log"))
        self.act_quit.setText(tr("&Quit"))
        self.act_about.setText(tr("&About Draftwise"))
        self.menu_file.setTitle(tr("&File"))
        self.menu_engine.setTitle(tr("&Engine"))
        self.menu_view.setTitle(tr("&View"))
        self.menu_help.setTitle(tr("&Help"))
        self.menu_lang.setTitle(tr("Language"))
        for code, a in self.lang_actions.items():
            a.setText(tr(LANGUAGE_NAMES[code]) if code == "system" else LANGUAGE_NAMES[code])
        self.lang_combo.setItemText(0, tr(LANGUAGE_NAMES["system"]))

        self.spec_title.setText(tr("Speculation"))
        self.mtp_label.setText(tr("MTP / draft:"))
        self.mtp_auto.setText(tr("Auto"))
        self.mtp_auto.setAccessibleName(tr("Speculation automatic"))
        self.mtp_off.setText(tr("Off"))
        self.mtp_off.setAccessibleName(tr("Speculation off"))
        self.draft_label.setText(tr("Draft model"))
        self.draft_edit.setPlaceholderText(tr("automatic"))
        self.draft_edit.setAccessibleName(tr("Draft model file"))
        self.draft_browse.setText(tr("Browse…"))
        self.draft_browse.setAccessibleName(tr("Choose a draft model file"))
        self.mem_title.setText(tr("Memory"))
        self.bars.set_legend({k: tr(label) for k, label in SEGMENTS})
        self.ctx_label.setText(tr("Context"))
        self.ctx_slider.setAccessibleName(tr("Context length"))
        self.ctx_auto.setText(tr("Reset to auto"))
        self.ctx_auto.setAccessibleName(tr("Choose the context length automatically"))
        self.kv_label.setText(tr("KV cache"))
        self.kv_combo.setAccessibleName(tr("KV cache type"))
        self._fill_kv_combo()
        self.engine_label.setText(tr("Engine"))
        self.engine_combo.setAccessibleName(tr("Engine"))
        self.install_button.setText(tr("Install engine"))
        self.install_button.setAccessibleName(tr("Install the llama.cpp engine"))
        self.install_bar.setAccessibleName(tr("Engine installation progress"))
        self.launch_button.setText(tr("Launch"))
        self.launch_button.setAccessibleName(tr("Launch the model"))
        self.launch_button.setToolTip(tr("Start the engine with this model (Ctrl+L)"))
        self.stop_button.setText(tr("Stop"))
        self.stop_button.setAccessibleName(tr("Stop the engine"))
        self.stop_button.setToolTip(tr("Stop the engine (Ctrl+.)"))
        self.adv_toggle.setText(tr("Advanced"))
        self.adv_toggle.setAccessibleName(tr("Show advanced settings"))
        self.details_toggle.setText(tr("Model details"))
        self.details_toggle.setAccessibleName(tr("Show model details"))
        self.extra_label.setText(tr("Extra engine arguments"))
        self.extra_edit.setPlaceholderText(tr("e.g. --spec-draft-n-max 4"))
        self.extra_edit.setAccessibleName(tr("Extra engine arguments"))
        self.profile_label.setText(tr("Profiles"))
        self.profile_combo.setAccessibleName(tr("Profiles"))
        self.profile_apply.setText(tr("Apply"))
        self.profile_save.setText(tr("Save as…"))
        self.profile_delete.setText(tr("Delete"))
        self.overrides_label.setText(tr("This model"))
        self.reset_button.setText(tr("Reset to automatic"))
        self.reset_button.setAccessibleName(tr("Reset this model's settings to automatic"))
        self.lang_label.setText(tr("Language"))
        self.port_label.setText(tr("Port"))
        self.port_spin.setAccessibleName(tr("Port the engine listens on"))
        self.network_check.setText(tr("Allow other computers on my network (with the API key)"))
        self.network_check.setAccessibleName(tr("Allow other computers on my network"))
        self.lang_combo.setAccessibleName(tr("Language"))
        self.command_label.setText(tr("Engine command (the API key is passed in the environment)"))
        self.command.setAccessibleName(tr("Engine command"))
        self.copy_url.setText(tr("Copy"))
        self.copy_url.setAccessibleName(tr("Copy the endpoint URL"))
        self.open_chat.setText(tr("Open chat"))
        self.open_chat.setAccessibleName(tr("Open the chat page in the browser"))
        self.copy_key.setText(tr("Copy"))
        self.copy_key.setAccessibleName(tr("Copy the API key"))
        self.check_button.setText(tr("Check this machine"))
        self.check_button.setAccessibleName(tr("Check this machine"))
        self.failure_logs.setText(tr("Show log"))
        self.banner_dismiss.setText(tr("Dismiss"))
        self.banner_dismiss.setAccessibleName(tr("Dismiss this notice"))
        self.retry_drafter.setText(tr("Try it again"))
        self.retry_drafter.setToolTip(tr("Forget that this drafter made the engine fail, and use it at the next Launch"))
        if self.tray is not None:
            self.tray_show.setText(tr("Show Draftwise"))
        self.library.retranslate()
        self.logs.retranslate()
        if self._check_dialog is not None:
            self._check_dialog.retranslate()

    def _fill_kv_combo(self) -> None:
        """Auto plus the KV types this model can use (the view-model's list)."""
        self.kv_combo.blockSignals(True)
        self.kv_combo.clear()
        self.kv_combo.addItem(tr("Auto"), None)
        for t in self.vm.plan.kv_types:
            self.kv_combo.addItem(t, t)
        self.kv_combo.blockSignals(False)

    # ================================================================ refresh
    def refresh_all(self) -> None:
        self.refresh_model()
        self.refresh_speculation()
        self.refresh_plan()
        self.refresh_engine()
        self.refresh_command()
        self.refresh_extra()
        self.refresh_launch()
        self.refresh_profiles()
        lang = self.vm.settings.language
        self.lang_combo.blockSignals(True)
        self.lang_combo.setCurrentIndex(max(0, self.lang_combo.findData(lang)))
        self.lang_combo.blockSignals(False)
        for code, a in self.lang_actions.items():
            a.setChecked(code == lang)

    def refresh_model(self) -> None:
        d = self.vm.details
        self.title.setText(d.title())
        self.subtitle.setText(d.subtitle())
        self.mtp_chip.setVisible(bool(d.info and d.info.nextn_predict_layers and d.info.mtp_head_present))
        problems = d.problems()
        self.problems.setVisible(bool(problems))
        self.problems.setText("\n".join(problems))
        self._color(self.problems, "error")
        while self.facts.rowCount():
            self.facts.removeRow(0)
        for label, value in d.facts():
            v = QLabel(value)
            v.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            v.setWordWrap(True)
            self.facts.addRow(_muted(QLabel(label)), v)
        if d.path is not None:
            self.library.select_path(str(d.path))
        has = d.path is not None
        for w in (self.mtp_auto, self.mtp_off, self.ctx_slider,
                  self.ctx_auto, self.kv_combo, self.extra_edit, self.reset_button, self.profile_apply):
            w.setEnabled(has)
        for w in (self.draft_edit, self.draft_browse):
            w.setEnabled(has and self.vm.speculation.mtp != "off")
        self.refresh_launch()

    def _reselect(self) -> None:
        if self.vm.model_path is not None:
            self.library.select_path(str(self.vm.model_path))

    def refresh_speculation(self) -> None:
        s = self.vm.speculation
        for b, on in ((self.mtp_auto, s.mtp == "auto"), (self.mtp_off, s.mtp == "off")):
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
        self._color(self.decision, "error" if s.error is not None else "")
        notes = s.notes()
        self.spec_notes.setText("\n".join(notes))
        self.spec_notes.setVisible(bool(notes))
        self.draft_msg.setText(s.draft_message())
        self.draft_msg.setVisible(bool(self.draft_msg.text()))
        self.draft_edit.setToolTip(s.draft_tooltip())
        self.draft_msg.setToolTip(s.draft_tooltip())
        has = self.vm.details.path is not None
        self.draft_edit.setEnabled(has and s.mtp != "off")
        self.draft_browse.setEnabled(has and s.mtp != "off")
        self.retry_drafter.setVisible(s.left_out_broken() and not self.vm.launch.running)
        state = s.draft_state()
        self._color(self.draft_msg, {"ok": "ok", "error": "error"}.get(state, ""))
        self.draft_edit.setStyleSheet(
            f"QLineEdit#draftEdit {{ border: 1px solid {ERROR_COLOR.name()}; border-radius: 4px; }}" if state == "error" else ""
        )
        self.refresh_launch()

    def refresh_plan(self) -> None:
        p = self.vm.plan
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
            self.kv_combo.setItemText(0, tr("Auto ({0})").format(r.kv_type))
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
        fit = p.fit_text()
        self.fit_chip.setText(fit)
        kind = {FITS: "ok", NO_FIT: "error"}.get(r.fit, "warn") if r is not None else ""
        if kind:
            color = {"ok": "#34a853", "warn": "#f4b400", "error": "#ea4335"}[kind]
            from PySide6.QtGui import QColor

            self.fit_chip.setStyleSheet(
                f"background: {tinted(QColor(color), 46)}; border-radius: 8px; padding: 1px 10px; font-weight: 600;"
            )
        else:
            self.fit_chip.setStyleSheet("")
        reasons = p.reasons()
        self.reasons.setText((tr("Why: ") + " ".join(reasons)) if reasons else "")
        self._fill_actual(p.planned_vs_actual())

    def _fill_actual(self, rows: list[tuple[str, str, str]]) -> None:
        while self.actual_grid.count():
            item = self.actual_grid.takeAt(0)
            if item.widget():
                item.widget().hide()
                item.widget().deleteLater()
        self.actual_box.setVisible(bool(rows))
        if not rows:
            return
        head = QLabel(tr("Planned vs actual (the engine's own buffer sizes)"))
        head.setObjectName("cardTitle")
        self.actual_grid.addWidget(head, 0, 0, 1, 4)
        for col, text in enumerate(("", tr("planned"), tr("actual"))):
            self.actual_grid.addWidget(_muted(QLabel(text)), 1, col)
        for i, (what, planned, actual) in enumerate(rows, start=2):
            self.actual_grid.addWidget(QLabel(what), i, 0)
            self.actual_grid.addWidget(QLabel(planned), i, 1)
            self.actual_grid.addWidget(QLabel(actual), i, 2)
        self.actual_grid.setColumnStretch(3, 1)

    def refresh_engine(self) -> None:
        e = self.vm.engine
        self.engine_combo.blockSignals(True)
        self.engine_combo.clear()
        for choice in e.engines:
            label = choice.label() + (f" — {tr('unusable')}" if choice.problem else "")
            self.engine_combo.addItem(label, choice.key)
        if not e.engines:
            self.engine_combo.addItem(tr("Looking for engines…") if e.detecting else tr("No engine found"), None)
        at = self.engine_combo.findData(e.selected_key) if e.selected_key else -1
        self.engine_combo.setCurrentIndex(max(0, at))
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

    def refresh_command(self) -> None:
        text = self.vm.command_text()
        if self.command.toPlainText() != text:
            self.command.setPlainText(text)

    def refresh_extra(self) -> None:
        if self.extra_edit.text() != self.vm.extra_args_text:
            self.extra_edit.blockSignals(True)
            self.extra_edit.setText(self.vm.extra_args_text)
            self.extra_edit.blockSignals(False)
        err = self.vm.extra_args_error
        spec_err = self.vm.speculation.error
        if not err and spec_err is not None and getattr(spec_err, "field", "") == "extra_args":
            err = tr_error(spec_err)
        self.extra_msg.setText(err or "")
        self.extra_msg.setVisible(bool(err))
        self._color(self.extra_msg, "error")
        ov = self.vm.current_overrides()
        parts = []
        if ov.context:
            parts.append(tr("context {0}").format(ov.context))
        if ov.kv_type:
            parts.append(tr("KV {0}").format(ov.kv_type))
        if ov.mtp:
            parts.append(tr("speculation {0}").format(tr("Off") if ov.mtp == "off" else ov.mtp))
        if ov.draft:
            parts.append(tr("draft {0}").format(Path(ov.draft).name))
        if ov.extra_args:
            parts.append(tr("extra arguments"))
        self.overrides_text.setText(", ".join(parts) if parts else tr("All automatic."))

    def refresh_profiles(self) -> None:
        names = [p.name for p in self.vm.settings.profiles]
        current = self.profile_combo.currentText()
        self.profile_combo.blockSignals(True)
        self.profile_combo.clear()
        self.profile_combo.addItems(names)
        if current in names:
            self.profile_combo.setCurrentText(current)
        self.profile_combo.blockSignals(False)
        has = bool(names)
        self.profile_combo.setEnabled(has)
        self.profile_apply.setEnabled(has and self.vm.model_path is not None)
        self.profile_delete.setEnabled(has)

    def refresh_launch(self) -> None:
        why = self.vm.launch_block_reason()
        can = why is None
        self.launch_button.setEnabled(can)
        self.act_launch.setEnabled(can)
        can_stop = self.vm.can_stop()
        self.stop_button.setEnabled(can_stop)
        self.stop_button.setVisible(self.vm.launch.running)
        self.act_stop.setEnabled(can_stop)
        other = self.vm.running_model_path() not in (None, self.vm.model_path)
        show_why = why if (why and (not self.vm.launch.running or other)) else ""
        self.block_reason.setText(show_why)
        self._color(self.block_reason, "error" if (self.vm.speculation.blocks_launch() and show_why) else "")
        self.refresh_extra()
        self.refresh_status()

    def refresh_status(self) -> None:
        launch = self.vm.launch
        self.dot.set_state(launch.state)
        self.status_text.setText(launch.status_text())
        ready = launch.state == "ready"
        for w in (self.url_label, self.copy_url, self.open_chat, self.key_label, self.copy_key):
            w.setVisible(ready)
        if ready:
            self.url_label.setText(f"— {launch.api_url()}")
            self.key_label.setText(tr("key {0}").format("••••" + launch.api_key()[-4:]))
        banner = self.vm.banner_text()
        self.banner.setVisible(bool(banner))
        self.banner_text.setText(banner)
        self.banner_dismiss.setVisible(bool(self.vm.settings_problem_text))
        failure = launch.failure_text()
        self.failure.setVisible(bool(failure))
        self.failure_text.setText(failure)
        if self.tray is not None:
            self.tray.setIcon(state_icon(launch.state))
            self.tray.setToolTip(f"Draftwise — {launch.status_text()}")
        self.stop_button.setVisible(launch.running)
        self.stop_button.setEnabled(self.vm.can_stop())

    def _on_state(self, state: str) -> None:
        self.refresh_engine()
        self.refresh_launch()
        if state == "failed" and self.tray is not None and not self.isVisible():
            self.tray.showMessage("Draftwise", self.vm.launch.status_text(), QSystemTrayIcon.MessageIcon.Warning)

    def _color(self, label: QLabel, kind: str) -> None:
        if kind:
            # A style sheet's colour reaches PlaceholderText only at half alpha: draw with
            # WindowText so the colour shows in full.
            label.setForegroundRole(QPalette.ColorRole.WindowText)
            label.setStyleSheet(f"color: {text_color(kind).name()};")
        else:
            label.setStyleSheet("")
            label.setForegroundRole(QPalette.ColorRole.PlaceholderText)

    # ================================================================ actions
    def _on_slider(self, i: int) -> None:
        steps = self.vm.plan.steps()
        if 0 <= i < len(steps):
            self.vm.plan.set_context(steps[i])

    def _on_kv(self, i: int) -> None:
        if i >= 0:
            self.vm.plan.set_kv_type(self.kv_combo.itemData(i))

    def _on_engine_combo(self, i: int) -> None:
        key = self.engine_combo.itemData(i)
        if key:
            self.vm.engine.select(key)

    def _on_lang_combo(self, i: int) -> None:
        code = self.lang_combo.itemData(i)
        if code:
            self.vm.set_language(code)

    def _on_advanced_toggled(self, on: bool) -> None:
        self.vm.settings.advanced_visible = on
        self.vm.schedule_save()

    def _set_logs_visible(self, on: bool) -> None:
        self.logs.setVisible(on)
        self.vm.settings.logs_visible = on
        self.vm.schedule_save()

    def launch(self) -> None:
        self.vm.do_launch()

    def browse_model(self) -> None:
        start = self.vm.settings.model_folders[0] if self.vm.settings.model_folders else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, tr("Open a model"), start, tr("GGUF models (*.gguf)"))
        if path:
            err = self.vm.open_file(path)
            if err:
                self.show_message(err)

    def browse_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, tr("Add a folder of models"), str(Path.home()))
        if folder:
            self.vm.add_folder(folder)

    def browse_draft(self) -> None:
        start = str(self.vm.model_path.parent) if self.vm.model_path else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, tr("Choose a draft model"), start, tr("GGUF models (*.gguf)"))
        if path:
            self.draft_edit.setText(path)

    def save_profile(self) -> None:
        name, ok = QInputDialog.getText(self, tr("Save profile"), tr("Name of the profile:"))
        if ok and name.strip():
            self.vm.save_profile(name)
            self.refresh_profiles()
            self.profile_combo.setCurrentText(name.strip())

    def _delete_profile(self) -> None:
        name = self.profile_combo.currentText()
        if name:
            self.vm.delete_profile(name)
            self.refresh_profiles()

    def open_chat_page(self) -> None:
        url = self.vm.launch.base_url()
        if url:
            QDesktopServices.openUrl(QUrl(url))

    def _copy(self, text: str, note: str) -> None:
        if text:
            QGuiApplication.clipboard().setText(text)
            self.show_message(note)

    def show_message(self, text: str) -> None:
        self.message.setText(text)
        self.message.setToolTip(text)
        self._message_timer.start()

    def show_settings_problem(self, text: str) -> None:
        # The banner keeps it (the view-model holds it until dismissed); the status bar
        # says it in passing.
        self.show_message(text)
        self.refresh_status()

    def show_get_models(self) -> None:
        from draftwise.ui.get_models_dialog import GetModelsDialog
        from draftwise.viewmodels import get_models

        if getattr(self, "_get_models_dialog", None) is None:
            self._get_models_dialog = GetModelsDialog(get_models.for_app(self.vm), self)
        self._get_models_dialog.show()
        self._get_models_dialog.raise_()

    def show_check(self) -> None:
        if self._check_dialog is None:
            self._check_dialog = CheckDialog(self.vm.check, self)
        self._check_dialog.show()
        self._check_dialog.raise_()
        if not self.vm.check.running:
            self.vm.check.run()

    def about(self) -> None:
        from draftwise import __version__

        QMessageBox.about(
            self, tr("About Draftwise"),
            tr("Draftwise {0}\nRun a local LLM with llama.cpp; speculative decoding and MTP are set up for you.").format(__version__),
        )

    # ================================================================ drag and drop
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 — Qt override
        if self._dropped_paths(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 — Qt override
        paths = self._dropped_paths(event.mimeData())
        for p in paths:
            if p.is_dir():
                self.vm.add_folder(p)
        files = [p for p in paths if p.is_file()]
        if files:
            err = self.vm.open_file(files[0])
            if err:
                self.show_message(err)
            for extra in files[1:]:
                self.vm.library.add_file(extra)
        event.acceptProposedAction()

    @staticmethod
    def _dropped_paths(mime) -> list[Path]:
        if not mime.hasUrls():
            return []
        out = []
        for url in mime.urls():
            if url.isLocalFile():
                p = Path(url.toLocalFile())
                if p.is_dir() or p.suffix.lower() == ".gguf":
                    out.append(p)
        return out

    # ================================================================ geometry, close, tray
    def _restore_geometry(self) -> None:
        s = self.vm.settings
        restored = False
        if s.geometry:
            restored = self.restoreGeometry(QByteArray.fromBase64(s.geometry.encode()))
        if not restored:
            self.resize(1240, 800)
        if s.splitter:
            self.split.restoreState(QByteArray.fromBase64(s.splitter.encode()))
        else:
            self.split.setSizes([540, 700])
        self.act_logs.setChecked(s.logs_visible)
        self.adv_toggle.setChecked(s.advanced_visible)

    def _store_geometry(self) -> None:
        s = self.vm.settings
        s.geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        s.splitter = bytes(self.split.saveState().toBase64().data()).decode()

    def ask_close(self) -> str:
        """stop | tray | cancel — what to do with a running engine on close."""
        pref = self.vm.settings.close_action
        if pref == "stop" or (pref == "tray" and self.tray is not None):
            return pref
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(tr("The engine is running"))
        box.setText(tr("The engine is still running. Stop it, or keep it running in the tray?"))
        stop = box.addButton(tr("Stop the engine and quit"), QMessageBox.ButtonRole.AcceptRole)
        tray = box.addButton(tr("Keep running in the tray"), QMessageBox.ButtonRole.ActionRole) if self.tray else None
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        clicked = box.clickedButton()
        if clicked is stop:
            return "stop"
        if tray is not None and clicked is tray:
            return "tray"
        return "cancel"

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 — Qt override
        self._store_geometry()
        if self.vm.engine_running() and not self._quitting:
            choice = self.ask_close()
            if choice == "cancel":
                event.ignore()
                return
            if choice == "tray":
                self.vm.save_settings()
                self.hide()
                if self.tray is not None:
                    self.tray.showMessage("Draftwise", tr("The engine keeps running. Use the tray icon to stop it."))
                event.ignore()
                return
        self._finish()
        event.accept()

    def quit(self) -> None:
        self._quitting = True
        self._store_geometry()
        self._finish()
        self.close()
        app = QGuiApplication.instance()
        if app is not None:
            app.quit()

    def _finish(self) -> None:
        """Save and stop the engine (waiting a few seconds for it to end)."""
        running = self.vm.engine_running()
        self.vm.shutdown(stop_engine=True)
        if running and self.vm.engine_running():
            loop = QEventLoop()
            self.vm.launch.ended.connect(loop.quit)
            QTimer.singleShot(8000, loop.quit)
            loop.exec()
        if self.tray is not None:
            self.tray.hide()

    def _show_from_tray(self) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()
