"""Pictures in the chat without an engine: the OpenAI body, the /props gate, and the three
refusals (not a picture, too big, refused by the engine), each one sentence, nothing typed
lost. (The engine case is in test_vision_engine.py.)"""

from __future__ import annotations

import base64
import json

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QImage
from tests.test_chat_viewmodel import Ready, Scripted

from draftwise.core.chat import pictures as pics
from draftwise.core.chat import protocol as chat
from draftwise.ui.chat_panel import ChatPanel
from draftwise.viewmodels.chat import ChatViewModel
from draftwise.viewmodels.chat_pictures import png_bytes, read_picture

PNG = b"\x89PNG\r\n\x1a\n"


def _png(w: int = 8, h: int = 6) -> bytes:
    image = QImage(w, h, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    return png_bytes(image)


class Props(QObject):
    """/props as a test says it."""

    answered = Signal(object)
    props: object = {"modalities": {"vision": True}}

    def ask(self, url: str, key: str) -> None:
        self.answered.emit(Props.props)


def _vm(vision: bool = True) -> ChatViewModel:
    Props.props = {"modalities": {"vision": vision, "audio": False}}
    launch = Ready()
    vm = ChatViewModel(launch, stream_factory=Scripted, probe_factory=lambda parent: Props(parent))
    launch.state_changed.emit("ready")
    return vm


def test_the_body_carries_the_picture_as_an_image_url_data_uri():
    p = pics.Picture("cat.png", "image/png", PNG + b"xyz")
    body = chat.request_body([("user", pics.content("What is this?", [p]))], chat.Options())
    parts = body["messages"][0]["content"]
    assert parts[0] == {"type": "image_url",
                        "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG + b"xyz").decode()}}
    assert parts[1] == {"type": "text", "text": "What is this?"}
    assert pics.content("plain", []) == "plain"  # no picture: the text as before
    assert [x["type"] for x in pics.content("", [p])] == ["image_url"]


def test_vision_comes_from_props():
    assert pics.vision_of_props({"modalities": {"vision": True}})
    assert not pics.vision_of_props({"modalities": {"vision": False}})
    assert not pics.vision_of_props({}) and not pics.vision_of_props(None)


def test_a_picture_goes_with_the_message_and_stays_in_the_history(qtbot):
    vm = _vm()
    assert vm.pictures.vision
    assert vm.pictures.attach_bytes(_png(), "teal.png")
    assert vm.send("Which colour?")
    parts = Scripted.last.body["messages"][-1]["content"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert vm.pictures.attached == []  # the tray is empty for the next message
    saved = chat.Turn.from_json(json.loads(json.dumps(vm.turns[0].to_json())))
    assert saved is not None and saved.pictures[0].data == vm.turns[0].pictures[0].data


def test_a_file_that_is_not_a_picture_gets_one_sentence(qtbot, tmp_path):
    vm = _vm()
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    assert not vm.pictures.attach_file(notes)
    assert vm.pictures.problem_text() == ("notes.txt is not a picture Draftwise can read; attach a PNG, JPEG, "
                                          "GIF, BMP or WebP file.")
    assert vm.pictures.attached == []


def test_a_picture_too_big_gets_one_sentence(qtbot, tmp_path):
    vm = _vm()
    big = tmp_path / "huge.png"
    big.write_bytes(PNG + b"\0" * pics.MAX_BYTES)
    assert not vm.pictures.attach_file(big)
    assert vm.pictures.problem_text().startswith("huge.png is too big to attach (10.0 MiB); pictures up to "
                                                 "10.0 MiB are taken.")


def test_a_picture_the_engine_refuses_gets_one_sentence_and_the_text_stays(qtbot):
    vm = _vm()
    vm.pictures.attach_bytes(_png(), "teal.png")
    vm.send("Which colour?")
    stream = Scripted.last
    stream.failed.emit(chat.error_of_response(500, json.dumps(
        {"error": {"code": 500, "message": "Failed to load image or audio file", "type": "server_error"}}).encode()))
    stream.end()
    reply = vm.turns[-1]
    assert str(reply.note) == ("The engine could not use the picture (Failed to load image or audio file); your "
                               "message is kept: attach another picture or send it without one.")
    assert vm.turns[0].content == "Which colour?" and vm.turns[0].pictures_refused
    vm.send("And now?")  # the refused picture is not sent again
    assert all(isinstance(m["content"], str) for m in Scripted.last.body["messages"])


def test_no_vision_no_pictures(qtbot):
    vm = _vm(vision=False)
    assert not vm.pictures.vision
    assert not vm.pictures.attach_bytes(_png(), "teal.png")
    assert "does not see pictures" in vm.pictures.problem_text()


def test_other_formats_are_sent_as_png(qtbot):
    image = QImage(4, 4, QImage.Format.Format_RGB32)
    image.fill(QColor("red"))
    from PySide6.QtCore import QBuffer, QIODevice

    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PPM")
    got = read_picture(bytes(buf.data().data()), "red.ppm")
    assert isinstance(got, pics.Picture) and got.mime == "image/png" and got.data.startswith(PNG)


def test_the_pane_shows_attach_and_thumbnails_only_with_vision(qtbot):
    vm = _vm()
    panel = ChatPanel(vm)
    qtbot.addWidget(panel)
    panel.show()
    assert panel.picture_strip.isVisible()
    vm.pictures.attach_bytes(_png(), "teal.png")
    assert panel.picture_strip.thumbs.count() == 1
    panel.input.setPlainText("Which colour?")
    panel.send()
    assert panel.picture_strip.thumbs.count() == 0 and panel.input.toPlainText() == ""
    blind = _vm(vision=False)
    other = ChatPanel(blind)
    qtbot.addWidget(other)
    other.show()
    assert not other.picture_strip.isVisible()
