"""The wheel over a setting inside the model page scrolls the page instead of changing the
setting (seen in the real window: scrolling across "Memory format" switched it to q4_0)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QComboBox, QScrollArea, QSlider, QVBoxLayout, QWidget

from draftwise.ui.wheel_guard import WheelGuard


def _wheel_down(widget: QWidget) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, -120),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def _page(qtbot, guarded: bool):
    area = QScrollArea()
    body = QWidget()
    lay = QVBoxLayout(body)
    combo = QComboBox()
    combo.addItems(["Auto", "f16", "q8_0", "q4_0"])
    slider = QSlider(Qt.Orientation.Horizontal)
    slider.setRange(0, 10)
    lay.addWidget(combo)
    lay.addWidget(slider)
    lay.addSpacing(3000)  # taller than the area: there is something to scroll
    area.setWidget(body)
    area.resize(300, 200)
    qtbot.addWidget(area)
    guard = WheelGuard(area) if guarded else None
    area.show()
    qtbot.waitExposed(area)
    return area, combo, slider, guard


def test_the_wheel_over_a_setting_scrolls_the_page_and_leaves_the_setting(qtbot):
    area, combo, slider, _guard = _page(qtbot, guarded=True)
    bar = area.verticalScrollBar()
    for control in (combo, slider):
        before = bar.value()
        _wheel_down(control)
        assert bar.value() > before, control
    assert combo.currentIndex() == 0 and slider.value() == 0


def test_no_guarded_setting_takes_focus_from_the_wheel(qtbot):
    """A real wheel event gives a `WheelFocus` control the focus before any filter sees it
    (QApplication::notify), and a focused control takes the wheel: a combo box is one, so the
    guard makes every control inside the area, present or added later, take focus by click or
    Tab only."""
    area, combo, slider, _guard = _page(qtbot, guarded=True)
    later = QComboBox()
    area.widget().layout().insertWidget(0, later)
    later.show()
    qtbot.waitUntil(lambda: later.focusPolicy() == Qt.FocusPolicy.StrongFocus, timeout=2000)
    for control in (combo, slider, later):
        assert control.focusPolicy() & Qt.FocusPolicy.WheelFocus != Qt.FocusPolicy.WheelFocus, control
    outside = QComboBox()
    qtbot.addWidget(outside)
    outside.show()
    assert outside.focusPolicy() == Qt.FocusPolicy.WheelFocus  # Qt's own default, left alone outside


def test_without_the_guard_the_wheel_changes_the_setting(qtbot):
    """What the guard prevents (Qt's own behaviour): the test above can fail."""
    _area, combo, _slider, _ = _page(qtbot, guarded=False)
    _wheel_down(combo)
    assert combo.currentIndex() == 1


def test_a_focused_setting_takes_the_wheel(qtbot):
    area, combo, _slider, _guard = _page(qtbot, guarded=True)
    area.activateWindow()
    combo.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(combo.hasFocus, timeout=2000)
    _wheel_down(combo)
    assert combo.currentIndex() == 1


def test_the_model_page_guards_its_cards(qtbot):
    from pathlib import Path

    from draftwise.core.settings import LoadResult, Settings
    from draftwise.ui.model_page import ModelPage
    from draftwise.viewmodels.app import AppViewModel

    vm = AppViewModel(LoadResult(Settings(), Path("/nonexistent/settings.json")), persist=False)
    page = ModelPage(vm)
    qtbot.addWidget(page)
    assert isinstance(page.wheel_guard, WheelGuard) and page.wheel_guard.area is page.scroll
