""""Check this machine": the core check run off the GUI thread, one step at a time."""

from __future__ import annotations

import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from draftwise.core.check.machine_check import CheckStep, run_check
from draftwise.services.library_scan import TaskRunner
from draftwise.viewmodels.i18n import tr, tr_message


def _work(configured: str | None, *, report: Callable[[CheckStep], None], cancel: threading.Event) -> bool:
    ok = True
    steps = run_check(configured_engine=configured)
    try:
        for step in steps:
            report(step)
            ok = ok and step.status != "fail"
            if cancel.is_set():
                break
    finally:
        steps.close()  # stops the engine if the check was cancelled half-way
    return ok


class MachineCheckViewModel(QObject):
    running_changed = Signal(bool)
    step_added = Signal(object)  # CheckStep
    finished = Signal(bool)  # all steps passed
    changed = Signal()

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.steps: list[CheckStep] = []
        self.running = False
        self.result: bool | None = None
        self._task = None
        self.configured_engine: str | None = None

    def run(self) -> None:
        if self.running:
            return
        self.steps = []
        self.result = None
        self.running = True
        self.running_changed.emit(True)
        self.changed.emit()
        self._task = self.runner.submit(
            _work, self.configured_engine, on_progress=self._on_step,
            on_done=self._on_done, on_error=self._on_error, name="machine-check",
        )

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel_event.set()

    def _on_step(self, step: CheckStep) -> None:
        self.steps.append(step)
        self.step_added.emit(step)
        self.changed.emit()

    def _on_done(self, ok: bool) -> None:
        self._finish(bool(ok))

    def _on_error(self, exc: BaseException) -> None:
        self._on_step(CheckStep(tr("Check"), "fail", str(exc)))
        self._finish(False)

    def _finish(self, ok: bool) -> None:
        self.running = False
        self.result = ok
        self._task = None
        self.running_changed.emit(False)
        self.finished.emit(ok)
        self.changed.emit()

    def summary(self) -> str:
        if self.running:
            return tr("Checking this machine…")
        if self.result is None:
            return tr("Runs a tiny model on the engine to prove everything works here.")
        if self.result:
            return tr("This machine is ready: the engine starts and generates text.")
        failed = next((s for s in self.steps if s.status == "fail"), None)
        if failed is None:
            return tr("The check did not finish.")
        return tr("Problem at “{0}”: {1}").format(tr_message(failed.title), tr_message(failed.detail))

    def step_text(self, step: CheckStep) -> str:
        """One step as the list shows it: "title: detail", in the current language."""
        return f"{tr_message(step.title)}: {tr_message(step.detail)}"
