"""Background work for the drafting figures and the speed measurement (Qt, no widgets).

- `DraftingMonitor` reads `/metrics` (and `/slots` until it has an answer) of the running
  engine every couple of seconds on the task pool: never on the GUI thread, one request
  at a time, so a busy engine never piles requests up.
- `MeasureRunner` runs core/measuring/quick.py (or the sweep,
  core/measuring/sweep.py, for "all settings") on the task pool: progress as signals, cancellable, the result recorded only once
  the whole measurement finished.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from draftwise.core.launch import headless, prepare, session
from draftwise.core.machine.hardware import Machine
from draftwise.core.measurements.measured import Measurement
from draftwise.core.measurements.sweep_record import Sweep
from draftwise.core.measuring import learn, quick, sweep
from draftwise.core.messages import msg
from draftwise.services.library_scan import Task, TaskRunner

POLL_MS = 2000


@dataclass(frozen=True)
class MetricsAndSlots:
    metrics: str | None
    slots: bytes | None


def fetch(url: str, api_key: str, ask_slots: bool) -> MetricsAndSlots:
    """One look at the engine (off the GUI thread); None for what did not answer."""
    slots = None
    if ask_slots:
        try:
            status, body = headless.request(url, api_key, "/slots", None, 2.0)
            slots = body if status == 200 else None
        except OSError:
            slots = None
    try:
        status, body = headless.request(url, api_key, "/metrics", None, 2.0)
        metrics = body.decode(errors="replace") if status == 200 else None
    except OSError:
        metrics = None
    return MetricsAndSlots(metrics, slots)


class DraftingMonitor(QObject):
    fetched = Signal(object)  # MetricsAndSlots

    def __init__(self, runner: TaskRunner, parent: QObject | None = None, interval_ms: int = POLL_MS) -> None:
        super().__init__(parent)
        self.runner = runner
        self.url = ""
        self.api_key = ""
        self.ask_slots = False
        self._task: Task | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.poll)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self, url: str, api_key: str, *, ask_slots: bool) -> None:
        self.url, self.api_key, self.ask_slots = url, api_key, ask_slots
        self._timer.start()
        self.poll()

    def stop(self) -> None:
        self._timer.stop()
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def poll(self) -> None:
        if self._task is not None or not self.url:
            return  # the last look has not come back yet
        self._task = self.runner.submit(fetch, self.url, self.api_key, self.ask_slots,
                                        on_done=self._on_fetched, name="drafting-figures")
        self._task.done.connect(self._on_done)

    def _on_done(self) -> None:
        self._task = None

    def _on_fetched(self, result: MetricsAndSlots) -> None:
        if not self._timer.isActive():
            return  # stopped meanwhile: figures of an engine that is gone
        if result.slots is not None:
            self.ask_slots = False
        self.fetched.emit(result)


def prepare_measure_and_record(
    request: prepare.Request, engine: session.Engine, machine: Machine, settings: quick.MeasureSettings, *,
    report: Callable, cancel: threading.Event, all_settings: bool = False, from_use: bool = False,
) -> Measurement | Sweep:
    """The whole measurement on a worker thread, planned by the launch session as Launch plans
    it (remembered fixes, rung, broken drafters) except that an old measurement does not leave
    the drafter out. `all_settings`: the sweep (every setup) instead of the quick measurement.
    The record is written after the last arm (an engine fix found on the way, at once).
    `from_use`: the kept setup and its rivals on the user's own prompts, which their requests
    called for (core/measuring/learn.py; the user accepted, so no idle probe)."""
    records = session.Records.load(machine)
    if from_use:
        return _measure_on_the_users_prompts(request, engine, machine, records, settings, report, cancel)
    planned = session.plan_launch(request, engine, machine, records, ignore_measurements=True)
    ngram = quick.ngram_request(planned.prepared, request)
    if ngram is not None:  # no drafter found: the n-gram types are measured instead
        planned = session.plan_launch(ngram, engine, machine, records, ignore_measurements=True)
    run = sweep.sweep if all_settings else quick.measure
    store = records.measured
    result = run(planned.prepared, engine.binary, machine, backend=engine.backend, gpus=machine.gpus,
                 settings=settings, cancel=cancel, report=report, fixes=records.fixes, caps=engine.caps,
                 tuned=store.tuned())
    if not cancel.is_set():
        store.keep(result)
    return result


def _measure_on_the_users_prompts(request: prepare.Request, engine: session.Engine, machine: Machine,
                                  records: session.Records, settings: quick.MeasureSettings, report: Callable,
                                  cancel: threading.Event) -> Measurement:
    store = records.usage
    d = learn.due(session.plan_launch(request, engine, machine, records), store)
    if d is None:
        raise quick.MeasureError(msg("Your requests no longer call for measuring again."))
    return learn.run_due(d, store, settings=settings, cancel=cancel, report=report)


class MeasureRunner(QObject):
    progress = Signal(object)  # quick.Progress
    finished = Signal(object)  # Measurement (or Sweep, for all settings), recorded
    failed = Signal(object)  # the exception (quick.MeasureError, PrepareError, OSError)
    ended = Signal()  # after any of them, or after a cancel

    def __init__(self, runner: TaskRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self._task: Task | None = None

    @property
    def running(self) -> bool:
        return self._task is not None

    def start(self, *args, **kwargs) -> None:
        """Arguments of `prepare_measure_and_record` before `report`/`cancel`."""
        if self._task is not None:
            return
        self._task = self.runner.submit(
            prepare_measure_and_record, *args, on_done=self.finished.emit, on_error=self.failed.emit,
            on_progress=self.progress.emit, name="measure-speed", **kwargs,
        )
        self._task.done.connect(self._on_done)

    def cancel(self) -> None:
        """Stop at the next check (a fraction of a second); the engine is stopped, nothing recorded."""
        if self._task is not None:
            self._task.cancel()

    def wait(self, msecs: int = 30000) -> bool:
        return self.runner.wait(msecs)

    def _on_done(self) -> None:
        self._task = None
        self.ended.emit()
