"""One bar per device: weights, context (KV), drafter and work (compute) against capacity.

Painted with the palette (track, text) plus fixed segment hues, so it follows dark mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from draftwise.core.readable import human_bytes, human_use
from draftwise.ui.theme import ERROR_COLOR, SEGMENT_COLORS
from draftwise.viewmodels.i18n import tr


@dataclass(frozen=True)
class BarData:
    name: str
    capacity: int
    segments: tuple[tuple[str, str, int], ...]  # (key, label, bytes)

    @property
    def used(self) -> int:
        return sum(b for _, _, b in self.segments)


def use_text(used: int, capacity: int) -> str:
    """"11.9 MiB of 22.1 GiB free": the capacity is what is free for the model (free memory
    less a safety margin), not the machine's total."""
    u, c = human_use(used, capacity)
    return tr("{0} of {1} free").format(u, c)


class MemoryBar(QWidget):
    """The bar itself (one device)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: BarData | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(120)

    def sizeHint(self) -> QSize:
        return QSize(320, 18)

    def set_data(self, data: BarData | None) -> None:
        self.data = data
        if data is not None:
            lines = [f"{data.name}: {use_text(data.used, data.capacity)}"]
            lines += [f"  {label}: {human_bytes(b)}" for _, label, b in data.segments if b]
            free = data.capacity - data.used
            lines.append("  " + (tr("left: {0}") if free >= 0 else tr("over: {0}")).format(human_bytes(abs(free))))
            self.setToolTip("\n".join(lines))
            self.setAccessibleDescription("; ".join(lines))
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 — Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        r = QRectF(self.rect()).adjusted(0.5, 2.5, -0.5, -2.5)
        radius = r.height() / 2
        track = pal.color(QPalette.ColorRole.Mid)
        track.setAlpha(70)
        clip = QPainterPath()
        clip.addRoundedRect(r, radius, radius)
        p.fillPath(clip, track)
        d = self.data
        if d is None or d.capacity <= 0:
            p.end()
            return
        scale = max(d.capacity, d.used)
        p.setClipPath(clip)
        x = r.left()
        for key, _label, b in d.segments:
            if b <= 0:
                continue
            w = r.width() * b / scale
            color = QColor(SEGMENT_COLORS.get(key, QColor("#888")))
            p.fillRect(QRectF(x, r.top(), max(w, 1.5), r.height()), color)
            x += w
        if d.used > d.capacity:
            cap_x = r.left() + r.width() * d.capacity / scale
            p.fillRect(QRectF(cap_x, r.top(), r.right() - cap_x, r.height()), QColor(234, 67, 53, 110))
            p.setClipping(False)
            p.setPen(QPen(ERROR_COLOR, 2))
            p.drawLine(QPointF(cap_x, r.top() - 2), QPointF(cap_x, r.bottom() + 2))
        p.setClipping(False)
        outline = pal.color(QPalette.ColorRole.Mid)
        outline.setAlpha(120)
        p.setPen(QPen(outline, 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(r, radius, radius)
        p.end()


class Swatch(QWidget):
    def __init__(self, color: QColor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.color = color
        self.setFixedSize(10, 10)

    def paintEvent(self, event) -> None:  # noqa: N802 — Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(self.color)
        p.drawRoundedRect(QRectF(self.rect()), 2.5, 2.5)
        p.end()


class MemoryBars(QWidget):
    """A column of device rows ("GPU 0 ███▒▒░ 7.1 / 8.0 GiB") and the legend under them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows = QVBoxLayout()
        self._rows.setSpacing(6)
        self._rows.setContentsMargins(0, 0, 0, 0)
        self.legend = QHBoxLayout()
        self.legend.setSpacing(6)
        self._legend_labels: dict[str, QLabel] = {}
        for key in SEGMENT_COLORS:
            self.legend.addWidget(Swatch(SEGMENT_COLORS[key]))
            label = QLabel(key)
            label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            self._legend_labels[key] = label
            self.legend.addWidget(label)
            self.legend.addSpacing(8)
        self.legend.addStretch(1)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        outer.addLayout(self._rows)
        outer.addLayout(self.legend)
        self.bars: list[MemoryBar] = []
        self._widgets: list[QWidget] = []

    def set_legend(self, labels: dict[str, str], tips: dict[str, str] | None = None) -> None:
        for key, text in labels.items():
            if key in self._legend_labels:
                self._legend_labels[key].setText(text)
                self._legend_labels[key].setToolTip((tips or {}).get(key, ""))

    def set_devices(self, devices: Sequence[BarData]) -> None:
        for w in self._widgets:
            w.setParent(None)
            w.deleteLater()
        self._widgets = []
        self.bars = []
        for d in devices:
            row = QWidget(self)
            h = QHBoxLayout(row)
            h.setContentsMargins(0, 0, 0, 0)
            name = QLabel(d.name, row)
            name.setMinimumWidth(64)
            bar = MemoryBar(row)
            bar.set_data(d)
            bar.setAccessibleName(f"{d.name} memory")
            amount = QLabel(use_text(d.used, d.capacity), row)
            amount.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            amount.setMinimumWidth(110)
            if d.used > d.capacity:
                amount.setStyleSheet(f"color: {ERROR_COLOR.name()};")
            h.addWidget(name)
            h.addWidget(bar, 1)
            h.addWidget(amount)
            self._rows.addWidget(row)
            self._widgets.append(row)
            self.bars.append(bar)
