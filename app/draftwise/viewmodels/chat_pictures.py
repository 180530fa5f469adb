"""The pictures waiting to go with the next chat message, and whether the engine sees them.

Once the engine is ready its `/props` is read (`services.chat_client.PropsProbe`): only an
engine that reports `modalities.vision` is offered pictures. A picture comes from a file (the
button, a drop) or from bytes (a paste); each is read with Qt's image reader, so a file that
is not a picture, or one over `core.chat.pictures.MAX_BYTES`, is refused with one sentence before
anything is sent. Formats the engine does not decode itself are sent as PNG.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, Signal
from PySide6.QtGui import QImage, QImageReader

from draftwise.core.chat import pictures as pics
from draftwise.core.launch.outcome import READY
from draftwise.core.messages import Message
from draftwise.viewmodels.i18n import tr_message
from draftwise.viewmodels.launch import LaunchViewModel
from draftwise.viewmodels.roles import PropsProbeRole


def read_picture(data: bytes, name: str) -> pics.Picture | Message:
    """The picture as it is sent, or the sentence that refuses it."""
    if len(data) > pics.MAX_BYTES:
        return pics.too_big(name, len(data))
    buffer = QBuffer()
    buffer.setData(QByteArray(data))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    reader = QImageReader(buffer)
    fmt = bytes(reader.format().data()).decode("ascii", "replace").lower()
    image = reader.read()
    if image.isNull():
        return pics.not_an_image(name)
    if fmt in pics.SENT_AS_IS:
        return pics.Picture(name, pics.SENT_AS_IS[fmt], data)
    return pics.Picture(name, "image/png", png_bytes(image))


def png_bytes(image: QImage) -> bytes:
    out = QBuffer()
    out.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(out, "PNG")
    return bytes(out.data().data())


class PictureTray(QObject):
    changed = Signal()

    def __init__(self, launch: LaunchViewModel, probe_factory: Callable[[QObject], PropsProbeRole] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.launch = launch
        self.vision = False  # the running engine reported modalities.vision
        self.attached: list[pics.Picture] = []
        self.problem: Message | None = None
        self._probe_factory = probe_factory or _default_probe
        self._probe: PropsProbeRole | None = None
        launch.state_changed.connect(self._on_launch_state)

    # ------------------------------------------------------------ attaching
    def attach_file(self, path: str | Path) -> bool:
        path = Path(path)
        try:
            size = path.stat().st_size
            if size > pics.MAX_BYTES:
                return self._refuse(pics.too_big(path.name, size))
            data = path.read_bytes()
        except OSError:
            return self._refuse(pics.not_an_image(path.name))
        return self.attach_bytes(data, path.name)

    def attach_bytes(self, data: bytes, name: str) -> bool:
        if not self.vision:
            return self._refuse(pics.no_vision())
        got = read_picture(data, name)
        if isinstance(got, Message):
            return self._refuse(got)
        self.attached.append(got)
        self.problem = None
        self.changed.emit()
        return True

    def attach_image(self, image: QImage, name: str) -> bool:
        """A pasted picture (Qt gives it decoded): sent as PNG."""
        if image.isNull():
            return self._refuse(pics.not_an_image(name))
        return self.attach_bytes(png_bytes(image), name)

    def remove(self, index: int) -> None:
        if 0 <= index < len(self.attached):
            del self.attached[index]
            self.changed.emit()

    def take(self) -> list[pics.Picture]:
        """The pictures for the message being sent; the tray is empty after."""
        out, self.attached = self.attached, []
        if out:
            self.changed.emit()
        return out

    def refused_by_engine(self, detail: str) -> None:
        self._refuse(pics.refused(detail))

    def problem_text(self) -> str:
        return tr_message(self.problem)

    def _refuse(self, sentence: Message) -> bool:
        self.problem = sentence
        self.changed.emit()
        return False

    # ------------------------------------------------------------ the engine
    def _on_launch_state(self, state: str) -> None:
        if state == READY and self.launch.spec is not None:
            if self._probe is None:
                self._probe = self._probe_factory(self)
                self._probe.answered.connect(self._on_props)
            self._probe.ask(self.launch.spec.url, self.launch.spec.api_key)
            return
        if self.vision:
            self.vision = False
            self.changed.emit()

    def _on_props(self, obj: Any) -> None:  # /props: the engine's JSON
        self.vision = self.launch.state == READY and pics.vision_of_props(obj)
        if not self.vision:
            self.attached = []
        self.changed.emit()


def _default_probe(parent: QObject) -> PropsProbeRole:
    from draftwise.services.chat_client import PropsProbe

    return PropsProbe(parent=parent)
