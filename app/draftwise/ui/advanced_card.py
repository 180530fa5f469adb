""""Advanced ▸" and its card: extra engine arguments, profiles, this model's settings (and
"Reset to automatic"), port and network, language, and the engine command Launch would run.

Bound to `ProfilesViewModel` for the profiles and this model's settings, and to the app for
the extra arguments, the address, the language and the command (those are the app's
inputs to re-planning); follows their signals.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from draftwise.core.kinds import MtpMode
from draftwise.ui.cards import DisclosedCard, explain, muted, set_tone
from draftwise.viewmodels.app import AppViewModel
from draftwise.viewmodels.i18n import LANGUAGE_NAMES, tr, tr_error


class AdvancedSection(DisclosedCard):
    def __init__(self, app: AppViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.vm = app
        self.profiles = app.profiles
        self.toggle.setObjectName("advancedToggle")
        al = self.card.body
        self.explanation = muted(QLabel())
        self.explanation.setObjectName("cardExplanation")
        al.addWidget(self.explanation)
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
        self.overrides_text = muted(QLabel())
        orow.addWidget(self.overrides_text, 1)
        orow.addWidget(self.reset_button)
        form.addRow(self.overrides_label, orow)
        nrow = QHBoxLayout()
        self.port_spin = QSpinBox()
        self.port_spin.setObjectName("portSpin")
        self.port_spin.setRange(1, 65535)
        self.port_spin.setValue(app.settings.port)
        self.network_check = QCheckBox()
        self.network_check.setObjectName("networkCheck")
        self.network_check.setChecked(app.settings.network)
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
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        al.addWidget(self.command)

        self.extra_edit.textChanged.connect(app.set_extra_args_text)
        self.profile_apply.clicked.connect(lambda: self.profiles.apply(self.profile_combo.currentText()))
        self.profile_save.clicked.connect(self.save_profile)
        self.profile_delete.clicked.connect(self._delete_profile)
        self.reset_button.clicked.connect(self.profiles.reset)
        self.lang_combo.currentIndexChanged.connect(self._on_lang_combo)
        self.port_spin.valueChanged.connect(app.set_port)
        self.network_check.toggled.connect(app.set_network)
        self.toggle.toggled.connect(self._on_toggled)
        app.outcome_changed.connect(self.refresh_command)
        app.extra_args_changed.connect(self.refresh_extra)
        app.launch_state_changed.connect(self.refresh_extra)
        app.speculation.changed.connect(self.refresh_extra)
        app.details.changed.connect(self._refresh_enabled)
        self.profiles.changed.connect(self.refresh_profiles)

    def retranslate(self) -> None:
        self.toggle.setText(tr("Advanced"))
        self.toggle.setAccessibleName(tr("Show advanced settings"))
        self.toggle.setToolTip(tr("Settings most people never need: engine arguments, profiles, port, language"))
        explain(self.explanation, tr("For people who know the engine: everything here is optional."))
        self.extra_label.setToolTip(tr("Flags passed to llama-server as they are (for experts)"))
        self.profile_label.setToolTip(tr("Named sets of these settings you can apply to any model"))
        self.overrides_label.setToolTip(tr("What you changed for this model; Reset goes back to automatic"))
        self.port_label.setToolTip(tr("The network port programs connect to; if it is taken, the engine uses a free "
                                      "one and says so"))
        self.command_label.setToolTip(tr("Exactly what Launch runs: the engine's own terms"))
        self.extra_label.setText(tr("Extra engine arguments"))
        self.extra_edit.setPlaceholderText(tr("e.g. --spec-draft-n-max 4"))
        self.extra_edit.setAccessibleName(tr("Extra engine arguments"))
        self.profile_label.setText(tr("Profiles"))
        self.profile_combo.setAccessibleName(tr("Profiles"))
        self.profile_apply.setText(tr("Apply"))
        self.profile_apply.setToolTip(tr("Use this profile's settings for the chosen model"))
        self.profile_save.setText(tr("Save as…"))
        self.profile_save.setToolTip(tr("Keep the current settings under a name"))
        self.profile_delete.setText(tr("Delete"))
        self.profile_delete.setToolTip(tr("Forget this profile"))
        self.profile_combo.setToolTip(self.profile_label.toolTip())
        self.overrides_label.setText(tr("This model"))
        self.reset_button.setText(tr("Reset to automatic"))
        self.reset_button.setAccessibleName(tr("Reset this model's settings to automatic"))
        self.reset_button.setToolTip(tr("Reset this model's settings to automatic"))
        self.lang_label.setText(tr("Language"))
        self.port_label.setText(tr("Port"))
        self.port_spin.setAccessibleName(tr("Port the engine listens on"))
        self.network_check.setText(tr("Allow other computers on my network (with the API key)"))
        self.network_check.setAccessibleName(tr("Allow other computers on my network"))
        self.network_check.setToolTip(tr("Other computers on your network can use the model if they know the API key; "
                                         "off: only this computer"))
        self.lang_combo.setAccessibleName(tr("Language"))
        self.lang_combo.setToolTip(tr("The language of Draftwise's window"))
        self.lang_combo.setItemText(0, tr(LANGUAGE_NAMES["system"]))
        self.command_label.setText(tr("Engine command (the API key is passed in the environment)"))
        self.command.setAccessibleName(tr("Engine command"))

    def refresh(self) -> None:
        self._refresh_enabled()
        self.refresh_command()
        self.refresh_extra()
        self.refresh_profiles()
        self.lang_combo.blockSignals(True)
        self.lang_combo.setCurrentIndex(max(0, self.lang_combo.findData(self.vm.settings.language)))
        self.lang_combo.blockSignals(False)

    def _refresh_enabled(self) -> None:
        has = self.vm.details.path is not None
        for w in (self.extra_edit, self.reset_button, self.profile_apply):
            w.setEnabled(has)

    def refresh_command(self) -> None:
        text = self.vm.command_text()
        if self.command.toPlainText() != text:
            self.command.setPlainText(text)

    def refresh_extra(self) -> None:
        vm = self.vm
        if self.extra_edit.text() != vm.extra_args_text:
            self.extra_edit.blockSignals(True)
            self.extra_edit.setText(vm.extra_args_text)
            self.extra_edit.blockSignals(False)
        err = vm.extra_args_error
        spec_err = vm.speculation.error
        if not err and spec_err is not None and getattr(spec_err, "field", "") == "extra_args":
            err = tr_error(spec_err)
        self.extra_msg.setText(err or "")
        self.extra_msg.setVisible(bool(err))
        set_tone(self.extra_msg, "error")
        ov = self.profiles.current()
        parts = []
        if ov.context:
            parts.append(tr("context {0}").format(ov.context))
        if ov.kv_type:
            parts.append(tr("KV {0}").format(ov.kv_type))
        if ov.mtp:
            parts.append(tr("speculation {0}").format(tr("Off") if ov.mtp == MtpMode.OFF else ov.mtp))
        if ov.draft:
            parts.append(tr("draft {0}").format(Path(ov.draft).name))
        if ov.extra_args:
            parts.append(tr("extra arguments"))
        self.overrides_text.setText(", ".join(parts) if parts else tr("All automatic."))

    def refresh_profiles(self) -> None:
        names = self.profiles.names()
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

    def save_profile(self) -> None:
        name, ok = QInputDialog.getText(self, tr("Save profile"), tr("Name of the profile:"))
        if ok and name.strip():
            self.profiles.save(name)
            self.profile_combo.setCurrentText(name.strip())

    def _delete_profile(self) -> None:
        name = self.profile_combo.currentText()
        if name:
            self.profiles.delete(name)

    def _on_lang_combo(self, i: int) -> None:
        code = self.lang_combo.itemData(i)
        if code:
            self.vm.set_language(code)

    def _on_toggled(self, on: bool) -> None:
        self.vm.settings.advanced_visible = on
        self.vm.schedule_save()
