"""Colours, fonts and the app icon. Colours that carry meaning (memory segments, status)
are fixed hues that read on light and dark backgrounds; everything else comes from the
palette, so the window follows the system's light/dark scheme."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon, QLinearGradient, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QApplication, QWidget

from draftwise import resources
from draftwise.core.launch.outcome import Stage

SEGMENT_COLORS = {
    "weights": QColor("#4f7cff"),
    "kv": QColor("#a259ff"),
    "drafter": QColor("#ff9f1c"),
    "compute": QColor("#2ec4b6"),
}
# The engine's stage as a colour (the status dot, the tray icon); its words are
# LaunchViewModel.status_text's.
STATE_COLORS = {
    Stage.IDLE: QColor("#9aa0a6"),
    Stage.STARTING: QColor("#f4b400"),
    Stage.LOADING: QColor("#f4b400"),
    Stage.READY: QColor("#34a853"),
    Stage.STOPPING: QColor("#f4b400"),
    Stage.STOPPED: QColor("#9aa0a6"),
    Stage.FAILED: QColor("#ea4335"),
}
OK_COLOR = QColor("#34a853")
WARN_COLOR = QColor("#f4b400")
ERROR_COLOR = QColor("#ea4335")


def is_dark(widget: QWidget | None = None) -> bool:
    pal = widget.palette() if widget is not None else QApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def tinted(color: QColor, alpha: int) -> str:
    """A CSS rgba() of `color` at `alpha` (0-255): for banners that work in both schemes."""
    return f"rgba({color.red()}, {color.green()}, {color.blue()}, {alpha})"


def text_color(kind: str, widget: QWidget | None = None) -> QColor:
    """Readable status text colours: a little lighter on dark backgrounds."""
    base = {"ok": OK_COLOR, "warn": WARN_COLOR, "error": ERROR_COLOR}.get(kind)
    if base is None:
        pal = widget.palette() if widget is not None else QApplication.palette()
        return pal.color(QPalette.ColorRole.PlaceholderText)
    if is_dark(widget):
        return base.lighter(135)
    return base.darker(125) if kind == "warn" else base.darker(110)


def app_icon() -> QIcon:
    icon = QIcon()
    for path in (resources.icon_path("svg"), resources.icon_path("png")):
        if path is not None:
            icon.addFile(str(path))
    if icon.isNull():
        icon = QIcon(_drawn_icon(256))
    return icon


def state_color(stage: Stage) -> QColor:
    return STATE_COLORS.get(stage, STATE_COLORS[Stage.IDLE])


def state_icon(state: Stage, size: int = 64) -> QIcon:
    """The app icon with a state dot (tray)."""
    base = app_icon().pixmap(size, size)
    if base.isNull():
        base = _drawn_icon(size)
    p = QPainter(base)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    r = size * 0.34
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("white"))
    p.drawEllipse(QRectF(size - r - 1, size - r - 1, r, r))
    p.setBrush(state_color(state))
    inset = r * 0.16
    p.drawEllipse(QRectF(size - r - 1 + inset, size - r - 1 + inset, r - 2 * inset, r - 2 * inset))
    p.end()
    return QIcon(base)


def _drawn_icon(size: int) -> QPixmap:
    pm = QPixmap(size, size)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    g = QLinearGradient(0, 0, size, size)
    g.setColorAt(0, QColor("#5b6cff"))
    g.setColorAt(1, QColor("#8b3dff"))
    p.setBrush(QBrush(g))
    p.setPen(Qt.PenStyle.NoPen)
    p.drawRoundedRect(QRectF(size * 0.05, size * 0.05, size * 0.9, size * 0.9), size * 0.21, size * 0.21)
    p.setBrush(QColor("white"))
    h = size * 0.08
    for y, w in ((0.46, 0.53), (0.62, 0.36)):
        p.drawRoundedRect(QRectF(size * 0.23, size * y, size * w, h), h / 2, h / 2)
    p.end()
    return pm


def title_font(base: QFont, scale: float = 1.5, bold: bool = True) -> QFont:
    f = QFont(base)
    if f.pointSizeF() > 0:
        f.setPointSizeF(f.pointSizeF() * scale)
    else:
        f.setPixelSize(int(f.pixelSize() * scale))
    f.setBold(bold)
    return f


def dark_palette() -> QPalette:
    """Fusion's dark palette, for platforms that report no colour scheme (offscreen, some
    Linux desktops) when the user asked for dark."""
    p = QPalette()
    window, base, text = QColor(36, 37, 41), QColor(28, 29, 32), QColor(230, 230, 232)
    roles = {
        QPalette.ColorRole.Window: window,
        QPalette.ColorRole.WindowText: text,
        QPalette.ColorRole.Base: base,
        QPalette.ColorRole.AlternateBase: QColor(40, 41, 46),
        QPalette.ColorRole.ToolTipBase: QColor(50, 51, 56),
        QPalette.ColorRole.ToolTipText: text,
        QPalette.ColorRole.Text: text,
        QPalette.ColorRole.Button: QColor(48, 49, 54),
        QPalette.ColorRole.ButtonText: text,
        QPalette.ColorRole.BrightText: QColor("#ff6b6b"),
        QPalette.ColorRole.Highlight: QColor(79, 124, 255),
        QPalette.ColorRole.HighlightedText: QColor("white"),
        QPalette.ColorRole.Link: QColor(120, 160, 255),
        QPalette.ColorRole.PlaceholderText: QColor(150, 152, 158),
        QPalette.ColorRole.Light: QColor(70, 71, 76),
        QPalette.ColorRole.Midlight: QColor(58, 59, 64),
        QPalette.ColorRole.Mid: QColor(90, 92, 98),
        QPalette.ColorRole.Dark: QColor(20, 20, 22),
        QPalette.ColorRole.Shadow: QColor(0, 0, 0),
    }
    for role, color in roles.items():
        p.setColor(role, color)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(120, 121, 126))
    return p
