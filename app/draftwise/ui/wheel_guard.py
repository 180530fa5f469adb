"""The mouse wheel scrolls a page of cards; it never changes a setting the pointer passes over.

Qt gives a wheel event to the widget under the pointer: scrolling the model page with the
pointer crossing "Memory format" or the conversation-length slider changed them on the way
(seen in the real window: the memory format went from Auto to q4_0 and the model re-planned).
A guard on one scroll area sends the wheel of its combo boxes, sliders and spin boxes to the
area's scroll bar instead, unless the control has the keyboard focus (clicked or tabbed to:
then the wheel is meant for it). The controls take focus by click or Tab, not by the wheel:
Qt gives a combo box or spin box (`Qt.WheelFocus`) the focus on a real wheel event before any
event filter sees it, so their policy becomes `Qt.StrongFocus` as they are polished.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QComboBox, QScrollArea

GUARDED = (QComboBox, QAbstractSlider, QAbstractSpinBox)


class WheelGuard(QObject):
    """Installed on the application (a wheel event goes to the control first, so a filter on
    the area would not see it); acts only on controls inside `area`, including those added later."""

    def __init__(self, area: QScrollArea) -> None:
        super().__init__(area)
        self.area = area
        content = area.widget()
        for kind in GUARDED if content is not None else ():
            for control in content.findChildren(kind):
                _no_wheel_focus(control)
        app = QCoreApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def _inside(self, obj: QObject) -> bool:
        content = self.area.widget()  # the cards (not the area's own scroll bars)
        return isinstance(obj, GUARDED) and content is not None and content.isAncestorOf(obj)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind == QEvent.Type.Polish and self._inside(obj):
            _no_wheel_focus(obj)  # a control added later, before its first wheel
            return False
        if kind != QEvent.Type.Wheel or not self._inside(obj) or obj.hasFocus():
            return False
        QCoreApplication.sendEvent(self.area.verticalScrollBar(), event)
        return True


def _no_wheel_focus(control) -> None:
    if control.focusPolicy() == Qt.FocusPolicy.WheelFocus:
        control.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

