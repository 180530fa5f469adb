"""Translations: English in the code, Japanese from `resources/i18n/draftwise_ja.qm`.

Every user-facing string of the window goes through `tr()` (one translation context,
"Draftwise"), so one .ts file holds them all. The language follows the system locale unless
the user picks one in Settings; switching installs another QTranslator at once, Qt sends
every widget a LanguageChange event and the view-models re-emit their texts.
"""

from __future__ import annotations

import string
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QObject, QTranslator, Signal

from draftwise.core.messages import Message, Text

CONTEXT = "Draftwise"


def N_(text: str) -> str:
    """Marks a string for translation where it is defined; translate it with tr() when shown."""
    return text


LANGUAGE_NAMES = {"system": N_("System language"), "en": "English", "ja": "日本語"}
SUPPORTED = ("en", "ja")


def tr(text: str, disambiguation: str | None = None, n: int = -1) -> str:
    return QCoreApplication.translate(CONTEXT, text, disambiguation, n)


def fields(template: str) -> list[tuple[str, str, str]]:
    """The `{name!conv:spec}` fields of a format template, in order (for checking translations)."""
    return sorted((name, conv or "", spec or "") for _lit, name, spec, conv in string.Formatter().parse(template)
                  if name is not None)


def _tr_template(template: str) -> str:
    """A core template in the current language; the English one when the translation does
    not have the same fields (a broken entry must not lose the sentence)."""
    text = tr(template)
    if text != template and fields(text) != fields(template):
        return template
    return text


def tr_message(message: Text | None) -> str:
    """A core sentence in the current language: its template (and every nested message's)
    looked up in the catalog, then filled in. Plain strings (OS errors, log lines) as they are."""
    if message is None:
        return ""
    if isinstance(message, Message):
        return message.render(_tr_template)
    return str(message)


def tr_error(exc: BaseException) -> str:
    """What an error says, in the current language: its core Message when it carries one
    (FieldError and its kin), else its own text."""
    message = getattr(exc, "message", None)
    return tr_message(message) if isinstance(message, Message | str) and message else str(exc)


def resources_dir() -> Path:
    """The `resources/` folder (source checkout, frozen app or installed share folder)."""
    from draftwise import resources

    return resources.resource_root()


def system_language() -> str:
    name = QLocale.system().name()  # "ja_JP"
    return "ja" if name.lower().startswith("ja") else "en"


def effective_language(setting: str) -> str:
    return system_language() if setting not in SUPPORTED else setting


class LanguageManager(QObject):
    """Installs the translators for a language on the application."""

    language_changed = Signal(str)  # the effective language code

    def __init__(self, i18n_dir: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.i18n_dir = i18n_dir or resources_dir() / "i18n"
        self.current = "en"
        self.setting = "system"
        self._translators: list[QTranslator] = []
        self.problem: str | None = None

    def apply(self, setting: str) -> str:
        """Switch to `setting` (system | en | ja); returns the effective language."""
        self.setting = setting
        lang = effective_language(setting)
        app = QCoreApplication.instance()
        for t in self._translators:
            if app is not None:
                app.removeTranslator(t)
        self._translators = []
        self.problem = None
        if lang != "en" and app is not None:
            ours = QTranslator(self)
            if ours.load(str(self.i18n_dir / f"draftwise_{lang}.qm")):
                app.installTranslator(ours)
                self._translators.append(ours)
            else:
                self.problem = f"The {lang} translation was not found in {self.i18n_dir}."
            qt = QTranslator(self)
            qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
            if qt.load(f"qtbase_{lang}", qt_dir):
                app.installTranslator(qt)
                self._translators.append(qt)
        changed = lang != self.current
        self.current = lang
        if changed:
            self.language_changed.emit(lang)
        return lang

