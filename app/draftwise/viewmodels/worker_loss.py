"""A worker that went away during a run is survived (issue 29, item 6).

When the engine ends because a worker stopped answering (mid-reply, or while the weights were
sent), the workers card names it and leaves it out (`WorkersViewModel.explain_crash`); the
re-plan that follows is on the workers that are left. Once it is there:

- the model fits without the worker: it is launched again, at once, and the launch card says
  which computer went away and that it runs without it;
- it does not fit: nothing is launched, and the failure says what to do (start the worker
  there again, then Launch).

Only a launch that was running when the worker went away is relaunched: a user's Stop, a
model chosen meanwhile or a failure of the relaunch itself launch nothing more.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from draftwise.core.launch import crash
from draftwise.core.messages import msg
from draftwise.viewmodels.roles import AppRole


class WorkerLoss(QObject):
    def __init__(self, app: AppRole) -> None:
        super().__init__(app)  # the AppViewModel, a QObject, owns it
        self.app = app
        self.lost: list[str] = []  # the workers that went away, while a relaunch waits for its plan
        self.model: Path | None = None  # the model that was running
        app.launch.ended.connect(self._on_ended)
        app.launch_state_changed.connect(self._soon)

    def _on_ended(self, _how: str) -> None:
        app = self.app
        lost = app.workers.explain_crash(app.launch)
        if lost:
            self.lost, self.model = lost, getattr(app.launch.spec, "model_path", None)
            self._soon()

    def _soon(self) -> None:
        # Never launch from inside the launch's own signals: from the event loop, once they returned.
        if self.lost:
            QTimer.singleShot(0, self, self._relaunch)

    def _relaunch(self) -> None:
        app = self.app
        if not self.lost or app.launch.running:
            return
        if app.model_path != self.model:
            self.lost = []  # another model was chosen meanwhile
            return
        if app.details.loading or app.replanning or app.outcome is None:
            return  # launch_state_changed comes again once the plan without it is there
        lost, self.lost = self.lost, []
        gone = ", ".join(lost)
        plan = app.outcome.plan.raw if app.outcome.plan is not None else None
        if plan is None or not plan.fits or not app.can_launch():
            cause = app.launch.cause
            if cause is not None:
                app.launch.cause = crash.Cause(
                    cause.kind, cause.sentence,
                    msg("The model does not fit on what is left without {workers}: start ggml-rpc-server there "
                        "again, then Launch.", workers=gone),
                    cause.evidence)
                app.launch.changed.emit()
            return
        app.do_launch(notes=[msg("{workers} went away during the last run; Draftwise launched again without it.",
                                 workers=gone)])
