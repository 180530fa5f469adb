"""Speculation settings: MTP auto/off, an optional draft model, and the decision in words.

The draft field shows the resolver's own draft check (core/speculation/draft_check.py
`check_draft`, run by the app's re-plan off the GUI thread): missing / a folder / not a GGUF
model / the model itself / another vocabulary / not for this model or engine / OK with the
speculative type it calls for. A bad draft blocks Launch with the reason next to the field.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.kinds import MtpMode
from draftwise.core.measurements import measured as measured_mod
from draftwise.core.messages import Message
from draftwise.core.speculation import decision_types, resolver
from draftwise.core.speculation.words import words_of
from draftwise.viewmodels.i18n import tr, tr_message

# The resolver's note for a companion it could not use (core/speculation/companions.py).
_SKIPPED = "Skipped {name}: {reason}."


class SpeculationViewModel(QObject):
    changed = Signal()  # anything shown changed
    inputs_changed = Signal()  # mode or draft changed: the app re-resolves

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mtp = MtpMode.AUTO
        self.draft = ""
        self.check: decision_types.DraftVerdict | None = None  # None: the field is empty
        self.decision: resolver.SpecDecision | None = None
        self.error: resolver.ResolveError | None = None
        self.pending = False
        # The drafter was left out because it failed in the run going on now (the app
        # sets this): the card says "just now", not "last time".
        self.fell_back_in_this_run = False
        self.measurement = None  # the speed measurement that had its say in the plan (measured.Measurement)

    # ---------------------------------------------------------------- input
    def set_fell_back_in_this_run(self, on: bool) -> None:
        if on != self.fell_back_in_this_run:
            self.fell_back_in_this_run = on
            self.changed.emit()

    def set_mtp(self, mode: MtpMode | str) -> None:
        mode = MtpMode(mode)  # ValueError for a word that is no mode
        if mode != self.mtp:
            self.mtp = mode
            self.pending = True
            self.changed.emit()
            self.inputs_changed.emit()

    def set_draft(self, text: str) -> None:
        if text != self.draft:
            self.draft = text
            self.pending = True
            self.changed.emit()
            self.inputs_changed.emit()

    def load(self, mtp: MtpMode | str, draft: str) -> None:
        """Set both from saved overrides without re-resolving twice."""
        self.mtp = MtpMode(mtp) if mtp in tuple(MtpMode) else MtpMode.AUTO
        self.draft = draft
        self.check = self.decision = self.error = None
        self.changed.emit()

    def draft_path(self) -> Path | None:
        return Path(self.draft.strip()).expanduser() if self.draft.strip() else None

    # ---------------------------------------------------------------- results
    def set_result(
        self,
        check: decision_types.DraftVerdict | None,
        decision: resolver.SpecDecision | None,
        error: resolver.ResolveError | None,
    ) -> None:
        self.check, self.decision, self.error = check, decision, error
        self.pending = False
        self.changed.emit()

    def set_measurement(self, m) -> None:
        """The recorded speed measurement the plan used (None: none); set before set_result."""
        self.measurement = m

    def measured_text(self) -> str:
        """"Measured on this computer: 1.40× with n-gram." — shown with its one-click undo."""
        m = self.measurement
        if m is None or self.error is not None:
            return ""
        if m.setup is not None and (m.swept or m.setup.several):
            # Which setup won, where the words alone do not say it (a sweep, a combined one).
            return tr("Measured on this computer: {0}× with {1} ({2}).").format(f"{m.ratio:.2f}", tr_message(words_of(m.what)),
                                                                                m.setup.label())
        return tr("Measured on this computer: {0}× with {1}.").format(f"{m.ratio:.2f}", tr_message(words_of(m.what)))

    def clear_result(self) -> None:
        self.set_result(None, None, None)

    # ---------------------------------------------------------------- texts
    def draft_message(self) -> str:
        """The line under the draft field: the draft check's verdict in words."""
        c = self.check
        if c is not None and not c.ok:
            return tr_message(c.reason)
        if self._draft_error():
            return tr_message(self.error.message)  # e.g. a draft with MTP off
        if c is None:
            if self.mtp == MtpMode.OFF:
                return ""
            return tr("Leave empty: Draftwise uses the model's built-in helper, or a draft model found beside it.")
        return tr("OK — {0}").format(tr_message(decision_types.type_words(c.spec_type or "")))

    def draft_tooltip(self) -> str:
        """The technical speculative type of an accepted draft (for the field's tooltip)."""
        c = self.check
        if c is not None and c.ok and c.spec_type:
            return tr("Speculative type: {0}").format(c.spec_type)
        return ""

    def draft_state(self) -> str:
        """ok | error | neutral — for the field's colour."""
        if self._draft_error():
            return "error"
        c = self.check
        if c is None:
            return "neutral"
        return "ok" if c.ok else "error"

    def _draft_error(self) -> bool:
        return self.error is not None and getattr(self.error, "field", "") == "draft"

    def headline(self) -> str:
        """"→ MTP head found in the model: on" — the decision in one line."""
        if self.error is not None:
            if getattr(self.error, "field", "") == "draft":
                return ""  # said once, under the draft field
            if getattr(self.error, "field", "") in ("mtp", "model"):
                return tr("Cannot start like this: {0}").format(tr_message(self.error.message))
            return ""  # shown next to the field it is about (extra arguments)
        d = self.decision
        if d is None:
            return tr("Deciding…") if self.pending else ""
        if d.spec_type is None:
            if d.source == resolver.OFF:
                return tr("Speculation is off, as you chose.")
            last = d.notes[-1] if d.notes else ""
            if self.left_out_broken():
                if self.fell_back_in_this_run:
                    return tr("The engine could not start with the helper model just now, so it runs without "
                              "speculation.")
                return tr("A helper model was left out because the engine could not start with it last time: "
                          "the model runs without speculation.")
            if not last or last.startswith("No drafter found"):
                if d.refused:
                    # A companion was there: say which and why, never "none found".
                    name, why = d.refused[0]
                    return tr("{0} is beside the model but cannot draft for it: {1}. The model runs without "
                              "speculation.").format(name, tr_message(why))
                return tr("No draft model found: the model runs without speculation.")
            return tr_message(last)  # e.g. another backend, or the planner left the drafter out
        words = tr_message(decision_types.type_words(d.spec_type))
        if d.source == resolver.AUTO_MTP:
            return tr("This model has its own helper built in (an MTP head): speculation on.")
        if d.source == resolver.AUTO_COMPANION:
            return tr("Found {0} beside the model: speculation on ({1}).").format(d.draft.name if d.draft else "?", words)
        if d.source == resolver.EXPLICIT:
            return tr("Using your draft model {0} ({1}).").format(d.draft.name if d.draft else "?", words)
        if d.source == resolver.USER_ARGS:
            return tr("Your own --spec-type {0} is used.").format(d.spec_type)
        return tr("Speculation on: {0}.").format(words)

    def left_out_broken(self) -> bool:
        """True when the resolver skipped a drafter because it made this engine fail before
        (the broken-drafter record): the user may clear the record and try it again."""
        d = self.decision
        if d is None or self.error is not None:
            return False
        return bool(d.left_out)

    def notes(self) -> list[str]:
        d = self.decision
        if d is None or self.error is not None:
            return []
        # The note the headline already says is left out: the last one of a decision
        # without speculation (the conclusion), else the first.
        rest = d.notes[:-1] if d.spec_type is None else d.notes[1:]
        if d.spec_type is None and d.refused and d.notes and d.notes[-1].startswith("No drafter found"):
            # The headline names this companion and why: its "Skipped" note would say it twice.
            said = d.refused[0][0]
            rest = tuple(n for n in rest if not (isinstance(n, Message) and n.template == _SKIPPED
                                                and n.kwargs.get("name") == said))
        if self.measured_text():
            # Said once, by measured_text(), beside its undo.
            rest = tuple(n for n in rest if not measured_mod.is_decision_note(n))
        return [*map(tr_message, rest), *(f"⚠ {tr_message(w)}" for w in d.warnings)]

    def blocks_launch(self) -> str | None:
        """Why Launch is disabled by the speculation settings, or None."""
        draft_error = self._draft_error()
        if self.error is not None and not draft_error:
            return tr_message(self.error.message)
        if draft_error or (self.check is not None and not self.check.ok):
            return tr("Fix the draft model first (see the message under the field).")
        return None
