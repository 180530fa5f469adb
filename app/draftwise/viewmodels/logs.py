"""The engine log as the window shows it: bounded, batched, filterable.

Lines arrive in bursts (hundreds per second while a model loads). Updating a widget per
line froze Qt for seconds in measurements, so lines wait in a buffer and go to the view
in one batch every ~50 ms, and both the stored log and the view are capped.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

LEVELS = ("all", "warnings", "errors")
# llama-server lines: "0.00.364.262 I srv  llama_server: model loaded" (level letter second).
_LEVEL = re.compile(r"^\S+ ([IWED]) ")


def line_level(line: str) -> str:
    m = _LEVEL.match(line)
    if m:
        return m.group(1)
    lower = line.lower()
    if "error" in lower or "failed" in lower:
        return "E"
    if "warn" in lower:
        return "W"
    return "I"


class LogsViewModel(QObject):
    lines_added = Signal(list)  # a batch of lines that pass the filter, to append
    reset = Signal(list)  # everything that passes the filter (after a filter change or clear)
    count_changed = Signal(int)

    MAX_LINES = 5000
    FLUSH_MS = 50

    def __init__(self, max_lines: int = MAX_LINES, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.max_lines = max_lines
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._pending: list[str] = []
        self._filter = ""
        self._level = "all"
        self.dropped = 0
        self._timer = QTimer(self)
        self._timer.setInterval(self.FLUSH_MS)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.flush)

    # ---------------------------------------------------------------- input
    def append(self, lines: Iterable[str]) -> None:
        added = [line.rstrip("\r\n") for line in lines]
        if not added:
            return
        self._pending.extend(added)
        if len(self._pending) > self.max_lines:
            self.dropped += len(self._pending) - self.max_lines
            del self._pending[: len(self._pending) - self.max_lines]
        if not self._timer.isActive():
            self._timer.start()

    def append_line(self, line: str) -> None:
        self.append([line])

    def flush(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        overflow = len(self._lines) + len(batch) - self.max_lines
        if overflow > 0:
            self.dropped += overflow
        self._lines.extend(batch)
        shown = [line for line in batch if self._passes(line)]
        if shown:
            self.lines_added.emit(shown[-self.max_lines :])
        self.count_changed.emit(len(self._lines))

    def clear(self) -> None:
        self._pending.clear()
        self._lines.clear()
        self.dropped = 0
        self.reset.emit([])
        self.count_changed.emit(0)

    # ---------------------------------------------------------------- filter
    @property
    def filter_text(self) -> str:
        return self._filter

    @property
    def level(self) -> str:
        return self._level

    def set_filter(self, text: str) -> None:
        if text != self._filter:
            self._filter = text
            self._refilter()

    def set_level(self, level: str) -> None:
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}")
        if level != self._level:
            self._level = level
            self._refilter()

    def _refilter(self) -> None:
        self.flush()
        self.reset.emit(self.visible_lines())

    def _passes(self, line: str) -> bool:
        if self._level != "all":
            lv = line_level(line)
            if self._level == "errors" and lv != "E":
                return False
            if self._level == "warnings" and lv not in ("W", "E"):
                return False
        return not self._filter or self._filter.lower() in line.lower()

    # ---------------------------------------------------------------- output
    def lines(self) -> list[str]:
        self.flush()
        return list(self._lines)

    def visible_lines(self) -> list[str]:
        return [line for line in self.lines() if self._passes(line)]

    def text(self, visible_only: bool = True) -> str:
        lines = self.visible_lines() if visible_only else self.lines()
        return "\n".join(lines) + ("\n" if lines else "")

    def save(self, path: str | Path) -> Path:
        """Write the whole log (not just the filtered part); raises OSError."""
        path = Path(path)
        head = f"[{self.dropped} earlier lines were dropped to keep memory bounded]\n" if self.dropped else ""
        path.write_text(head + self.text(visible_only=False), encoding="utf-8")
        return path
