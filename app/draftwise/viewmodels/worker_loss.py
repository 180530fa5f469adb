"""A worker that went away during a run is survived (issue 29, item 6).

The rule is the launch flow's (core/launch/lost_worker.py), the same as
the CLI's `launch`: when the engine ends because a worker stopped answering (mid-reply, or
while the weights were sent), its outcome names the workers that went away; the workers card
leaves them out (`WorkersViewModel.leave_out`) and the re-plan that follows is on the workers
that are left. Once it is there:

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

from draftwise.core.launch.lost_worker import WorkerRelaunch, worker_relaunch
from draftwise.viewmodels.roles import AppRole


class WorkerLoss(QObject):
    def __init__(self, app: AppRole) -> None:
        super().__init__(app)  # the AppViewModel, a QObject, owns it
        self.app = app
        self.pending: WorkerRelaunch | None = None  # the relaunch that waits for its plan
        self.model: Path | None = None  # the model that was running
        app.launch.ended.connect(self._on_ended)
        app.launch_state_changed.connect(self._soon)

    def _on_ended(self, _how: str) -> None:
        app = self.app
        relaunch = worker_relaunch(app.launch.outcome)
        if relaunch is not None:
            app.workers.leave_out(relaunch.lost)
            self.pending, self.model = relaunch, getattr(app.launch.spec, "model_path", None)
            self._soon()

    def _soon(self) -> None:
        # Never launch from inside the launch's own signals: from the event loop, once they returned.
        if self.pending is not None:
            QTimer.singleShot(0, self, self._relaunch)

    def _relaunch(self) -> None:
        app = self.app
        if self.pending is None or app.launch.running:
            return
        if app.model_path != self.model:
            self.pending = None  # another model was chosen meanwhile
            return
        if app.details.loading or app.replanning or app.outcome is None:
            return  # launch_state_changed comes again once the plan without it is there
        relaunch, self.pending = self.pending, None
        plan = app.outcome.plan.raw if app.outcome.plan is not None else None
        if plan is None or not plan.fits or not app.can_launch():
            app.launch.relaunch_refused()
            return
        app.do_launch(notes=[relaunch.note()])
