"""The "Serve my models" page: every model of the library at one address for other programs
(Claude Code, Open WebUI, an editor, scripts), beside the Model page and its Launch.

One card: what it does in a sentence, Serve / Stop, the status, the address and key, the
ready-to-paste lines with a Copy button each, a row per model (its state, speculation,
measured speed-up and last request), and the user's choices (idle models sleep after N
minutes, start when I log in). Everything shown comes from `ServeViewModel`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.launch.outcome import FAILED
from draftwise.core.serving.copy_lines import CLAUDE_CODE, CURL, OPENAI
from draftwise.ui.cards import Card, explain, muted, set_tone
from draftwise.ui.theme import state_icon, text_color
from draftwise.viewmodels.i18n import N_, tr, tr_message
from draftwise.viewmodels.serve import ServeViewModel

COLUMNS = (N_("Model"), N_("State"), N_("Speculation"), N_("Speed-up"), N_("Last request"))
CLIENT_TIPS = {
    CLAUDE_CODE: N_("Paste this line into a terminal to run Claude Code on a served model"),
    OPENAI: N_("For Open WebUI, an editor or any program that speaks the OpenAI API: its base URL and key"),
    CURL: N_("A test from a terminal: one question to the first model"),
}
# The clients' labels: program names as their makers write them, the OpenAI kind in words.
CLIENT_NAMES = {CLAUDE_CODE: CLAUDE_CODE, OPENAI: N_("OpenAI-compatible"), CURL: CURL}
STATE_TONES = {"failed": "error", "loaded": "ok"}


class ServeCard(Card):
    def __init__(self, vm: ServeViewModel, parent: QWidget | None = None) -> None:
        self.title = QLabel()
        super().__init__(self.title, parent)
        self.vm = vm
        self.setObjectName("card")
        self.explain = muted(QLabel())
        self.body.addWidget(self.explain)

        row = QHBoxLayout()
        self.status = QLabel()
        self.status.setObjectName("serveStatus")
        self.status.setWordWrap(True)
        self.stop_button = QPushButton()
        self.stop_button.setObjectName("stopServingButton")
        self.serve_button = QPushButton()
        self.serve_button.setObjectName("serveButton")
        row.addWidget(self.status, 1)
        row.addWidget(self.stop_button)
        row.addWidget(self.serve_button)
        self.body.addLayout(row)

        # The address, the key, and the lines to paste: each with its Copy button.
        self.lines = QGridLayout()
        self.lines.setHorizontalSpacing(8)
        self.lines.setColumnStretch(1, 1)
        self.address_label, self.address, self.copy_address = self._line_row(0)
        self.key_label, self.key, self.copy_key = self._line_row(1)
        self.client_rows = {client: self._line_row(i + 2) for i, client in enumerate((CLAUDE_CODE, OPENAI, CURL))}
        self.lines_box = QWidget()
        self.lines_box.setLayout(self.lines)
        self.lines.setContentsMargins(0, 0, 0, 0)
        self.body.addWidget(self.lines_box)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("servedModels")
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body.addWidget(self.table)
        self.failures = muted(QLabel())  # which model failed and why, in plain words
        self.failures.setObjectName("serveFailures")
        self.body.addWidget(self.failures)
        self.notes = muted(QLabel())
        self.notes.setObjectName("serveNotes")
        self.body.addWidget(self.notes)

        opts = QHBoxLayout()
        self.sleep_label = QLabel()
        self.sleep_spin = QSpinBox()
        self.sleep_spin.setObjectName("sleepMinutes")
        self.sleep_spin.setRange(0, 24 * 60)
        self.sleep_label.setBuddy(self.sleep_spin)
        self.at_login = QCheckBox()
        self.at_login.setObjectName("serveAtLogin")
        opts.addWidget(self.sleep_label)
        opts.addWidget(self.sleep_spin)
        opts.addStretch(1)
        opts.addWidget(self.at_login)
        self.body.addLayout(opts)

        self.serve_button.clicked.connect(vm.start)
        self.stop_button.clicked.connect(vm.stop)
        self.sleep_spin.valueChanged.connect(vm.set_sleep_minutes)
        self.at_login.toggled.connect(self._on_at_login)
        vm.changed.connect(self.refresh)
        for signal in (vm.app.engine.changed, vm.app.machine_known, vm.app.library.folders_changed):
            signal.connect(self.refresh)

    def _line_row(self, row: int) -> tuple[QLabel, QLineEdit, QPushButton]:
        label = QLabel()
        field = QLineEdit()
        field.setReadOnly(True)
        field.setCursorPosition(0)
        copy = QPushButton()
        copy.clicked.connect(lambda: self._copy(field))
        self.lines.addWidget(label, row, 0)
        self.lines.addWidget(field, row, 1)
        self.lines.addWidget(copy, row, 2)
        return label, field, copy

    def _copy(self, field: QLineEdit) -> None:
        QGuiApplication.clipboard().setText(field.text())
        field.selectAll()

    def _on_at_login(self, on: bool) -> None:
        if on != self.vm.at_login:
            self.vm.set_at_login(on)

    # ---------------------------------------------------------------- texts
    def retranslate(self) -> None:
        self.title.setText(tr("Serve my models"))
        explain(self.explain,
                tr("Let other programs — Claude Code, Open WebUI, your editor — use every model in your library "
                   "at one address. Each model starts when a program asks for it by name, with its own speculation, "
                   "and rests when it is not used. Launch keeps working beside it."),
                tr("One llama.cpp engine in router mode serves the OpenAI and Anthropic APIs; each model runs the "
                   "plan the Model page shows for it, and only as many stay loaded together as fit this computer."))
        self.serve_button.setText(tr("Serve my models"))
        self.serve_button.setAccessibleName(tr("Serve every model of the library"))
        self.serve_button.setToolTip(tr("Start serving every model of your library folders at one address"))
        self.stop_button.setText(tr("Stop serving"))
        self.stop_button.setToolTip(tr("Stop the engine that serves your models (Launch is not affected)"))
        self.address_label.setText(tr("Address"))
        self.address.setToolTip(tr("Where programs send their requests"))
        self.address.setAccessibleName(tr("Address"))
        self.key.setAccessibleName(tr("Key"))
        self.key_label.setText(tr("Key"))
        self.key.setToolTip(tr("Programs must send this key; without it the engine answers 401"))
        for client, (label, field, copy) in self.client_rows.items():
            label.setText(tr(CLIENT_NAMES[client]))
            field.setAccessibleName(tr(CLIENT_NAMES[client]))
            copy.setAccessibleName(tr("Copy this line"))
            field.setToolTip(tr(CLIENT_TIPS[client]))
            copy.setText(tr("Copy"))
            copy.setToolTip(tr("Copy this line"))
        self.copy_address.setText(tr("Copy"))
        self.copy_key.setText(tr("Copy"))
        self.table.setHorizontalHeaderLabels([tr(c) for c in COLUMNS])
        self.sleep_label.setText(tr("Let idle models sleep after"))
        self.sleep_spin.setSuffix(tr(" min"))
        self.sleep_spin.setSpecialValueText(tr("never"))
        tip = tr("A model nobody used for this long gives its memory back; the next request wakes it. "
                 "Takes effect the next time serving starts.")
        self.sleep_label.setToolTip(tip)
        self.sleep_spin.setToolTip(tip)
        self.at_login.setText(tr("Start when I log in"))
        self.at_login.setToolTip(tr("Serve your models each time you log in to this computer; Draftwise waits "
                                    "in the tray"))
        self.refresh()

    # ---------------------------------------------------------------- state
    def refresh(self) -> None:
        vm = self.vm
        why = vm.block_reason()
        had_focus = self.serve_button.hasFocus() or self.stop_button.hasFocus()
        self.serve_button.setVisible(not vm.running)
        self.serve_button.setEnabled(why is None)
        self.stop_button.setVisible(vm.running)
        if had_focus:  # the button pressed gave way to the other: the focus follows, not to the next field
            (self.stop_button if vm.running else self.serve_button).setFocus()
        status = vm.status_text()
        if why is not None and not vm.running and not vm.problem:
            status = why
        self.status.setText(status)
        set_tone(self.status, "error" if vm.problem or vm.stage == FAILED else "")
        ready = vm.ready
        self.lines_box.setVisible(ready)
        if ready:
            self.address.setText(vm.url)
            self.key.setText(vm.api_key)
            lines = {line.client: line.text for line in vm.copy_lines()}
            for client, (_label, field, _copy) in self.client_rows.items():
                field.setText(lines.get(client, ""))
                field.setCursorPosition(0)
                # The whole line where the field cuts it.
                field.setToolTip(f"{tr(CLIENT_TIPS[client])}\n\n{field.text()}")
        self._fill_table()
        failed, done = vm.failures()
        self.failures.setText("\n".join(failed + done))
        self.failures.setVisible(bool(failed or done))
        set_tone(self.failures, "error" if failed else "warn" if done else "")
        notes = vm.notes()
        self.notes.setText("\n".join(notes))
        self.notes.setVisible(bool(notes))
        self.sleep_spin.blockSignals(True)
        self.sleep_spin.setValue(vm.sleep_minutes)
        self.sleep_spin.blockSignals(False)
        self.at_login.blockSignals(True)
        self.at_login.setChecked(vm.at_login)
        self.at_login.blockSignals(False)

    def _fill_table(self) -> None:
        rows = self.vm.rows()
        self.table.setVisible(bool(rows))
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = (row.id, ServeViewModel.state_text(row), tr_message(row.speculation),
                     ServeViewModel.speedup_text(row), ServeViewModel.live_text(row))
            tips = (row.id, ServeViewModel.state_tip(row), "",
                    tr("Measured on this computer: {0}× as fast with speculation").format(f"{row.speedup:.2f}")
                    if row.speedup else tr("Not measured on this computer yet"), "")
            for c, (text, tip) in enumerate(zip(cells, tips, strict=True)):
                item = QTableWidgetItem(text)
                if tip:
                    item.setToolTip(tip)
                if c == 1 and row.state in STATE_TONES:
                    item.setForeground(text_color(STATE_TONES[row.state]))
                self.table.setItem(r, c, item)
        # As tall as its rows: the page scrolls, not the table.
        height = self.table.horizontalHeader().height() + sum(self.table.rowHeight(i) for i in range(len(rows)))
        self.table.setFixedHeight(height + 2 * self.table.frameWidth())


class ServePage(QWidget):
    """The card in a scroll area (the right column's second page)."""

    def __init__(self, vm: ServeViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("servePage")
        self.card = ServeCard(vm)
        body = QWidget()
        lay = QVBoxLayout(body)
        lay.setContentsMargins(8, 10, 12, 10)
        lay.addWidget(self.card)
        lay.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(body)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.scroll)

    def retranslate(self) -> None:
        self.card.retranslate()

    def refresh(self) -> None:
        self.card.refresh()


class ServingButton(QPushButton):
    """In the status bar while serving (the bar's strip is the launched engine's): the
    router's state and how many models, a click away from the Serve page."""

    def __init__(self, vm: ServeViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = vm
        self.setObjectName("servingStatus")
        self.setFlat(True)
        vm.changed.connect(self.refresh)
        self.refresh()

    def retranslate(self) -> None:
        self.setToolTip(tr("Show the models being served"))
        self.refresh()

    def refresh(self) -> None:
        vm = self.vm
        self.setVisible(vm.running)
        if not vm.running:
            return
        self.setIcon(state_icon(vm.outcome.stage))
        n = len(vm.rows())
        self.setText(tr("Serving {0} models").format(n) if vm.ready and n != 1 else
                     tr("Serving 1 model") if vm.ready else tr("Starting to serve…"))
