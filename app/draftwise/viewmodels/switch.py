"""Switch models in one click: while an engine runs and another model is chosen, "Stop and
launch this one" stops the running engine, waits until it has exited (the port and the
memory are free again), then launches the chosen model.

Nothing is launched when the stop ends in a failure, when the user chose yet another model
in the meantime, or when the chosen model cannot be launched (the launch card says why).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from draftwise.core.launch.outcome import STOPPED
from draftwise.viewmodels.roles import AppRole


class ModelSwitch(QObject):
    def __init__(self, app: AppRole) -> None:
        super().__init__(app)  # the AppViewModel, a QObject, owns it
        self.app = app
        self.pending: Path | None = None  # the model to launch once the engine has exited
        self.exited = False  # the engine reported its exit (not just "stopping")
        app.launch.ended.connect(self._on_ended)
        app.launch_state_changed.connect(self._soon)

    def _soon(self) -> None:
        # Never launch from inside the launch's own signals (its stop is still being
        # reported): from the event loop, once they have returned.
        if self.pending is not None and self.exited:
            QTimer.singleShot(0, self, self._launch_pending)

    def can_switch(self) -> bool:
        app = self.app
        running = app.running_model_path()
        return running is not None and app.model_path not in (None, running) and app.can_stop()

    def switch(self) -> bool:
        if not self.can_switch():
            return False
        self.pending = self.app.model_path
        self.exited = False
        self.app.launch.stop()
        self.app.launch_state_changed.emit()
        return True

    def _on_ended(self, how: str) -> None:
        if how != STOPPED:
            self.pending = None  # the failure strip says why; launch nothing
            return
        self.exited = True
        self._soon()

    def _launch_pending(self) -> None:
        app = self.app
        target = self.pending
        if target is None or not self.exited or app.launch.running:
            return
        if target != app.model_path:
            self.pending = None  # another model was chosen meanwhile
            return
        if app.details.loading or app.replanning or app.outcome is None:
            return  # launch_state_changed comes again once the plan is there
        self.pending = None
        app.do_launch()
