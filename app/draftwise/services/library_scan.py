"""Background work for the window: a small task runner and the model-library scanner.

The pattern is Anki's taskman: a function runs on a pool thread and its result (or its
exception) is posted back to the GUI thread by a Qt signal, so nothing the user clicks
waits on a disk, a subprocess or a header walk. Folder scans read GGUF headers on a pool
thread and post them in batches (one signal per ~25 models or 100 ms), because one signal
per file would cost the GUI thread more than the scan itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Text
from draftwise.core.serving import library

log = logging.getLogger(__name__)

__all__ = ["LibraryScanner", "ScanEntry", "Task", "TaskRunner", "find_gguf_files"]


# ------------------------------------------------------------------ tasks
class Task(QObject):
    """One function running off the GUI thread. Signals arrive on the GUI thread."""

    succeeded = Signal(object)  # the function's return value
    failed = Signal(object)  # the exception it raised
    progress = Signal(object)  # whatever the function passed to its `report` callback
    done = Signal()  # after succeeded or failed

    def __init__(self, name: str = "") -> None:
        super().__init__()
        self.name = name
        self.cancel_event = threading.Event()
        self.finished_ok: bool | None = None

    def cancel(self) -> None:
        """Ask the function to stop (it must look at `cancel_event`); its result is dropped."""
        self.cancel_event.set()

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()


class _Runnable(QRunnable):
    def __init__(self, task: Task, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.task, self.fn, self.args, self.kwargs = task, fn, args, kwargs

    def run(self) -> None:
        task = self.task
        try:
            result = self.fn(*self.args, **self.kwargs)
        except Exception as exc:  # noqa: BLE001 — every failure goes back to the GUI as a signal
            log.debug("task %s failed", task.name, exc_info=True)
            task.finished_ok = False
            if not task.cancelled:
                task.failed.emit(exc)
        else:
            task.finished_ok = True
            if not task.cancelled:
                task.succeeded.emit(result)
        task.done.emit()


class TaskRunner(QObject):
    """Runs functions on its own thread pool and keeps their Task objects alive."""

    def __init__(self, max_threads: int | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads or max(4, os.cpu_count() or 2))
        self._live: set[Task] = set()

    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
        name: str = "",
        **kwargs: Any,
    ) -> Task:
        """Run `fn(*args, **kwargs)` off the GUI thread.

        With `on_progress`, fn is also given `report=callable` and `cancel=threading.Event`.
        """
        task = Task(name or getattr(fn, "__name__", "task"))
        if on_done is not None:
            task.succeeded.connect(on_done)
        if on_error is not None:
            task.failed.connect(on_error)
        if on_progress is not None:
            task.progress.connect(on_progress)
            kwargs = {**kwargs, "report": task.progress.emit, "cancel": task.cancel_event}
        self._live.add(task)
        task.done.connect(lambda t=task: self._live.discard(t))
        self.pool.start(_Runnable(task, fn, args, kwargs))
        return task

    def busy(self) -> bool:
        return bool(self._live)

    def wait(self, msecs: int = 30000) -> bool:
        """Block until every task is finished (shutdown and tests only)."""
        return self.pool.waitForDone(msecs)


# ------------------------------------------------------------------ library scan
# One walk of the folders for the window and `draftwise serve` (core, no Qt).
find_gguf_files = library.find_gguf_files


@dataclass(frozen=True)
class ScanEntry:
    """One model file found: its header summary, or why it could not be read."""

    path: Path
    info: gguf.ModelInfo | None
    error: Text | None = None  # a core Message (the GGUF reader's) or an OS error's text
    # What `assess(info)` returned (the view-model's fit estimate), when one was given.
    extra: Any = None

    @property
    def is_launchable(self) -> bool:
        """A model to list: not a projector and not a drafter-only sidecar."""
        if self.info is None:
            return True  # listed with its error, so the user learns why it does not load
        return not self.info.is_projector and self.info.sidecar_kind is None


Assess = Callable[[gguf.ModelInfo], Any]


class LibraryScanner(QObject):
    """Scans folders for GGUF models on a pool thread and posts what it finds in batches.

    Headers are cached by path, size and mtime, so adding a folder re-reads only new files.
    A new scan cancels the one before it; results of a cancelled scan never arrive.
    """

    scan_started = Signal(int)  # scan id
    batch_found = Signal(int, object)  # scan id, list[ScanEntry]
    scan_finished = Signal(int, int, float)  # scan id, models found, seconds
    BATCH_SIZE = 25
    BATCH_SECONDS = 0.1

    def __init__(self, runner: TaskRunner | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner or TaskRunner(parent=self)
        self._scan_id = 0
        self._task: Task | None = None
        self._cache: dict[tuple[str, int, int], gguf.ModelInfo] = {}
        self._cache_lock = threading.Lock()

    @property
    def scanning(self) -> bool:
        return self._task is not None

    def scan(self, folders: Sequence[Path | str], assess: Assess | None = None) -> int:
        if self._task is not None:
            self._task.cancel()
        self._scan_id += 1
        scan_id = self._scan_id
        self.scan_started.emit(scan_id)
        task = self.runner.submit(
            self._work, scan_id, [Path(f) for f in folders], assess,
            on_progress=lambda batch, i=scan_id: self._on_batch(i, batch),
            on_done=lambda result, i=scan_id: self._on_done(i, result),
            on_error=lambda exc, i=scan_id: self._on_done(i, (0, 0.0)),
            name="library-scan",
        )
        self._task = task
        return scan_id

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _on_batch(self, scan_id: int, batch: list[ScanEntry]) -> None:
        if scan_id == self._scan_id:
            self.batch_found.emit(scan_id, batch)

    def _on_done(self, scan_id: int, result: tuple[int, float]) -> None:
        if scan_id != self._scan_id:
            return
        self._task = None
        self.scan_finished.emit(scan_id, result[0], result[1])

    def read(self, path: Path) -> gguf.ModelInfo:
        """One header, through the cache (any thread)."""
        st = path.stat()
        key = (str(path), st.st_size, st.st_mtime_ns)
        with self._cache_lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        info = gguf.read_model(path)
        with self._cache_lock:
            self._cache[key] = info
        return info

    def _work(
        self,
        scan_id: int,
        folders: list[Path],
        assess: Assess | None,
        *,
        report: Callable[[list[ScanEntry]], None],
        cancel: threading.Event,
    ) -> tuple[int, float]:
        start = time.perf_counter()
        files = find_gguf_files(folders, cancel)
        batch: list[ScanEntry] = []
        last = time.perf_counter()
        count = 0
        for path in files:
            if cancel.is_set():
                break
            entry = self._entry(path, assess)
            if not entry.is_launchable:
                continue
            batch.append(entry)
            count += 1
            now = time.perf_counter()
            if len(batch) >= self.BATCH_SIZE or now - last >= self.BATCH_SECONDS:
                report(batch)
                batch, last = [], now
        if batch and not cancel.is_set():
            report(batch)
        return count, time.perf_counter() - start

    def _entry(self, path: Path, assess: Assess | None) -> ScanEntry:
        try:
            info = self.read(path)
        except gguf.GGUFError as exc:
            return ScanEntry(path, None, exc.message)
        except OSError as exc:
            return ScanEntry(path, None, str(exc))
        extra = None
        if assess is not None:
            try:
                extra = assess(info)
            except Exception:  # noqa: BLE001 — an estimate that fails leaves the badge empty
                log.debug("assessing %s failed", path, exc_info=True)
        return ScanEntry(path, info, None, extra)
