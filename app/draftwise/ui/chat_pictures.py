"""Pictures in the chat pane: the Attach button, the thumbnails waiting to be sent, the
sentence when one is refused, and the thumbnails on a sent message. Widgets only; what is
taken and why is `PictureTray`'s (viewmodels/chat_pictures.py)."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from draftwise.core.chat.pictures import Picture
from draftwise.ui.theme import text_color
from draftwise.viewmodels.chat_pictures import PictureTray
from draftwise.viewmodels.i18n import tr

THUMB = 64  # px, the longer side


def thumbnail(picture: Picture, size: int = THUMB) -> QLabel:
    label = QLabel()
    pixmap = QPixmap()
    pixmap.loadFromData(picture.data)
    label.setPixmap(pixmap.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio,
                                  Qt.TransformationMode.SmoothTransformation))  # fmt: skip
    label.setToolTip(picture.name)
    label.setAccessibleName(tr("Picture {name}").format(name=picture.name))
    return label


def take_mime(tray: PictureTray, mime: QMimeData) -> bool:
    """A drop or a paste: its files, or the picture itself. False when it holds neither."""
    if mime.hasUrls() and any(u.isLocalFile() for u in mime.urls()):
        for url in mime.urls():
            if url.isLocalFile():
                tray.attach_file(url.toLocalFile())
        return True
    if mime.hasImage():
        tray.attach_image(QImage(mime.imageData()), tr("pasted picture"))
        return True
    return False


class PictureStrip(QWidget):
    """Above the input: Attach, the pictures for the next message, the refusal sentence."""

    def __init__(self, tray: PictureTray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tray = tray
        self.setObjectName("chatPictures")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.attach = QPushButton()
        self.attach.setObjectName("attachPicture")
        self.attach.clicked.connect(self.choose)
        row.addWidget(self.attach)
        self.thumbs = QHBoxLayout()
        row.addLayout(self.thumbs)
        row.addStretch(1)
        outer.addLayout(row)
        self.problem = QLabel()
        self.problem.setObjectName("pictureProblem")
        self.problem.setWordWrap(True)
        outer.addWidget(self.problem)
        tray.changed.connect(self.refresh)
        self.retranslate()

    def retranslate(self) -> None:
        self.attach.setText(tr("Attach picture…"))
        self.attach.setToolTip(tr("Add a picture to the message (or drop one here, or paste it)"))
        self.refresh()

    def choose(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, tr("Attach picture"), "",
                                                tr("Pictures (*.png *.jpg *.jpeg *.gif *.bmp *.webp);;All files (*)"))
        for p in paths:
            self.tray.attach_file(p)

    def refresh(self) -> None:
        while self.thumbs.count():
            item = self.thumbs.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for i, picture in enumerate(self.tray.attached):
            box = QWidget()
            lay = QHBoxLayout(box)
            lay.setContentsMargins(0, 0, 0, 0)
            lay.setSpacing(0)
            lay.addWidget(thumbnail(picture))
            remove = QToolButton()
            remove.setObjectName("removePicture")
            remove.setText("×")
            remove.setAutoRaise(True)
            remove.setAccessibleName(tr("Remove the picture {name}").format(name=picture.name))
            remove.clicked.connect(lambda _=False, i=i: self.tray.remove(i))
            lay.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
            self.thumbs.addWidget(box)
        problem = self.tray.problem_text()
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
        self.problem.setStyleSheet(f"color: {text_color('error', self).name()};" if problem else "")
        self.setVisible(self.tray.vision or bool(problem))
