"""The main window: menus, the splitters (library | right column, above the engine log),
the banner and status bar at the bottom, the tray icon, and closing.

Widgets only: every decision (what Launch would run, whether it may, what a failure
means) comes from `AppViewModel`. The right column is `ModelPage` (one widget per card,
each bound to its own view-model); the status bar, banner and failure strip are
`ui/status_bar.py`.

`right_tabs` holds the right column as its first tab, with the tab bar hidden while it is
the only one: another page beside the model's (a chat) is added there as a second tab.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QEventLoop, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QGuiApplication,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QSystemTrayIcon,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.launch.outcome import Stage
from draftwise.ui.cards import card_qss
from draftwise.ui.chat_panel import ChatPanel
from draftwise.ui.check_dialog import CheckDialog
from draftwise.ui.drafting_card import DraftingCard
from draftwise.ui.library_panel import LibraryPanel
from draftwise.ui.logs_panel import LogsPanel
from draftwise.ui.model_page import ModelPage
from draftwise.ui.serve_card import ServePage, ServingButton
from draftwise.ui.status_bar import Banner, FailureStrip, StatusStrip
from draftwise.ui.theme import app_icon, is_dark, state_icon
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.i18n import LANGUAGE_NAMES, tr


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

        self._build_actions()
        self._build_menus()
        self.library = LibraryPanel(vm.library)
        self.page = ModelPage(vm)
        # The cards, by name (the page lays them out).
        self.header = self.page.header
        self.speculation = self.page.speculation
        self.memory = self.page.memory
        self.advanced = self.page.advanced
        self.details = self.page.details
        self.launch_card = self.page.launch_card
        self.right_tabs = QTabWidget()
        self.right_tabs.setObjectName("rightTabs")
        self.right_tabs.setDocumentMode(True)
        self.right_tabs.setTabBarAutoHide(True)
        # No title yet: the bar shows only once a second page is added, which names both (the chat is the second).
        self.right_tabs.addTab(self.page, "")
        self.chat_panel = ChatPanel(vm.chat)
        self.right_tabs.addTab(self.chat_panel, "")
        # "Serve my models": the whole library at one address, a page beside the model's Launch.
        self.serve_page = ServePage(vm.serve)
        self.right_tabs.addTab(self.serve_page, "")
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.library)
        self.split.addWidget(self.right_tabs)
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
        self.banner = Banner(vm)
        self.failure = FailureStrip(vm.launch)
        central = QWidget()
        cl = QVBoxLayout(central)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        cl.addWidget(self.vsplit, 1)
        self.drafting_card = DraftingCard(vm.drafting)  # figures, measurement (hides when idle)
        cl.addWidget(self.drafting_card)
        cl.addWidget(self.banner)
        cl.addWidget(self.failure)
        self.setCentralWidget(central)
        self.status = StatusStrip(vm.launch, self.act_logs)
        bar = self.statusBar()
        bar.setSizeGripEnabled(True)
        bar.addPermanentWidget(self.status, 1)
        self.serving_button = ServingButton(vm.serve)  # serving beside Launch, one click to its page
        self.serving_button.clicked.connect(lambda: self.open_serve_page())
        bar.addPermanentWidget(self.serving_button)
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

    def _build_tray(self) -> None:
        self.tray: QSystemTrayIcon | None = None
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return
        self.tray = QSystemTrayIcon(state_icon(Stage.IDLE), self)
        menu = QMenu(self)
        self.tray_show = menu.addAction("")
        self.tray_show.triggered.connect(self._show_from_tray)
        menu.addAction(self.act_stop)
        self.tray_stop_serving = menu.addAction("")
        self.tray_stop_serving.triggered.connect(self.vm.serve.stop)
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
        self.status.check_button.clicked.connect(self.show_check)
        self.status.chat_requested.connect(self.open_chat_page)
        vm.chat.launch_requested.connect(self.launch)
        self.failure.show_log.clicked.connect(lambda: self.act_logs.setChecked(True))

        vm.model_changed.connect(self._reselect)
        vm.library.changed.connect(self._reselect)
        vm.details.changed.connect(self._reselect)
        for signal in (vm.launch_state_changed, vm.details.changed, vm.speculation.changed):
            signal.connect(self._refresh_actions)
        vm.launch.changed.connect(self._refresh_tray)
        vm.serve.changed.connect(self._refresh_tray)
        vm.launch.state_changed.connect(self._on_state)
        vm.message.connect(self.show_message)
        vm.settings_problem.connect(self.show_message)
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
        self.page.retranslate()
        self.status.retranslate()
        self.right_tabs.setTabText(0, tr("Model"))
        self.right_tabs.setTabText(1, tr("Chat"))
        self.right_tabs.setTabText(2, tr("Serve"))
        self.right_tabs.setTabToolTip(2, tr("Serve every model of your library to other programs at one address"))
        self.serve_page.retranslate()
        self.serving_button.retranslate()
        self.banner.retranslate()
        self.failure.retranslate()
        if self.tray is not None:
            self.tray_show.setText(tr("Show Draftwise"))
            self.tray_stop_serving.setText(tr("Stop serving"))
        self.library.retranslate()
        self.logs.retranslate()
        if self._check_dialog is not None:
            self._check_dialog.retranslate()

    # ================================================================ refresh
    def refresh_all(self) -> None:
        self.page.refresh()
        self.serve_page.refresh()
        self.status.refresh()
        self.banner.refresh()
        self.failure.refresh()
        self._reselect()
        self._refresh_actions()
        self._refresh_tray()
        lang = self.vm.settings.language
        for code, a in self.lang_actions.items():
            a.setChecked(code == lang)

    def refresh_status(self) -> None:
        """The bottom of the window: status bar, banner and failure strip."""
        self.status.refresh()
        self.banner.refresh()
        self.failure.refresh()

    def _reselect(self) -> None:
        if self.vm.model_path is not None:
            self.library.select_path(str(self.vm.model_path))

    def _refresh_actions(self) -> None:
        self.act_launch.setEnabled(self.vm.launch_block_reason() is None)
        self.act_stop.setEnabled(self.vm.can_stop())

    def _refresh_tray(self) -> None:
        if self.tray is not None:
            serve = self.vm.serve
            # The launched engine's state, else the serving one's when only that runs.
            state = self.vm.launch.state if self.vm.engine_running() or not serve.running else serve.outcome.stage
            self.tray.setIcon(state_icon(state))
            tip = f"Draftwise — {self.vm.launch.status_text()}"
            if serve.running:
                tip += "\n" + serve.status_text()
            self.tray.setToolTip(tip)
            self.tray_stop_serving.setVisible(serve.running)

    def _on_state(self, state: str) -> None:
        if state == Stage.FAILED and self.tray is not None and not self.isVisible():
            self.tray.showMessage("Draftwise", self.vm.launch.status_text(), QSystemTrayIcon.MessageIcon.Warning)

    # ================================================================ actions
    def _set_logs_visible(self, on: bool) -> None:
        self.logs.setVisible(on)
        self.vm.settings.logs_visible = on
        self.vm.schedule_save()

    def open_serve_page(self) -> None:
        self.right_tabs.setCurrentWidget(self.serve_page)

    def open_chat_page(self) -> None:
        """The chat tab, ready to type in."""
        self.right_tabs.setCurrentWidget(self.chat_panel)
        self.chat_panel.focus_input()

    def launch(self) -> None:
        self.vm.do_launch()

    def show_message(self, text: str) -> None:
        self.status.show_message(text)

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
        self.advanced.toggle.setChecked(s.advanced_visible)

    def _store_geometry(self) -> None:
        s = self.vm.settings
        s.geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        s.splitter = bytes(self.split.saveState().toBase64().data()).decode()

    def ask_close(self) -> str:
        """stop | tray | cancel — what to do with a running engine on close."""
        pref = self.vm.settings.close_action
        if pref == "stop" or (pref == "tray" and self.tray is not None):
            return pref
        box, stop, tray = self.close_box()
        box.exec()
        clicked = box.clickedButton()
        if clicked is stop:
            return "stop"
        if tray is not None and clicked is tray:
            return "tray"
        return "cancel"

    def close_box(self) -> tuple[QMessageBox, QPushButton, QPushButton | None]:
        """The close question and its buttons; it offers the tray only where there is one,
        and says only what the buttons do."""
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(tr("The engine is running"))
        stop = box.addButton(tr("Stop the engine and quit"), QMessageBox.ButtonRole.AcceptRole)
        tray = None
        if self.tray is not None and QSystemTrayIcon.isSystemTrayAvailable():
            box.setText(tr("The engine is still running. Stop it, or keep it running in the tray?"))
            tray = box.addButton(tr("Keep running in the tray"), QMessageBox.ButtonRole.ActionRole)
        else:
            box.setText(tr("The engine is still running. Stop it and quit?"))
        box.addButton(QMessageBox.StandardButton.Cancel)
        return box, stop, tray

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 — Qt override
        self._store_geometry()
        if (self.vm.engine_running() or self.vm.serve.running) and not self._quitting:
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
        self.vm.shutdown(stop_engine=True)  # serving stops too (its engine waits for it at quit)
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
