"""The window's side of the out-of-memory ladder (docs/ladder.md): the ladder handed to a
Launch (the launch session's, which read the remembered rung while re-planning), what the launch card says was
given up, and "Try full settings again". Mixed into `AppViewModel`, which owns the outcome,
the launch, the engine and the machine."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from draftwise.core.launch import ladder, session
from draftwise.core.launch.ladder import Ladder
from draftwise.core.launch.launch_spec import LaunchSpec
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Text
from draftwise.core.records import write_error
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.replan import records_of

if TYPE_CHECKING:
    from draftwise.viewmodels.replan import Outcome


def forget_rung(records: session.Records, model: Path, machine: Machine, binary: Path) -> Text | None:
    """Forget the rung remembered in `records`; None when done, else why not (to show)."""
    if records.ladder is None:
        return None
    try:
        records.ladder.forget(model, machine, binary)
    except OSError as exc:
        return write_error(exc)
    return None


def ladder_for(out: Outcome | None, spec: LaunchSpec) -> Ladder | None:
    """The out-of-memory ladder for a Launch of the outcome `out`: the launch session's, with
    the records it planned the first start with (core/launch/session.py)."""
    if out is None or out.planned is None:
        return None
    return out.planned.ladder(spec)


class LadderActions:
    """Methods of AppViewModel (self.outcome, self.launch, self.engine, self.machine...)."""

    def lowered_text(self) -> str:
        """What the launch gave up to fit in memory, or (before Launch) what the remembered
        rung will give up; "" at full settings (docs/ladder.md)."""
        text = self.launch.lowered_text()
        out = self.outcome
        if not text and out is not None and not out.start.empty and not self.launch.running:
            text = tr_message(ladder.started_lower(out.start))
        return text

    def can_try_full_settings(self) -> bool:
        """A remembered lower rung that "Try full settings again" undoes."""
        out = self.outcome
        return not self.launch.running and out is not None and not out.start.empty

    def try_full_settings(self) -> None:
        """Forget the rung remembered for this model, machine and engine; re-plan at full settings."""
        engine = self.engine.selected
        if self.model_path is not None and engine is not None and self.machine is not None:
            problem = forget_rung(records_of(self.outcome), self.model_path, self.machine, engine.binary)
            if problem is not None:
                self.message.emit(tr("Could not clear the record: {0}").format(tr_message(problem)))
        self.schedule_replan()

    def _show_record_problem(self) -> None:
        out = self.outcome
        if out is not None and out.start_problem and out.start_problem != self.settings_problem_text:
            self.settings_problem_text = out.start_problem
            self.banner_changed.emit()
