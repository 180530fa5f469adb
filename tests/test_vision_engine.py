"""A picture through the real engine from the window (issue 20, item 4): a tiny Gemma 3 with
its tiny projector beside it, launched by clicking Launch; the plan passes `--mmproj`, the
engine's `/props` reports vision, the chat shows Attach, a PNG made with QImage goes out as an
`image_url` data URI and the engine answers (random weights write nonsense: the tokens are
what is checked). A picture the engine cannot decode gets its one sentence, the text kept.

Waits on signals and conditions (qtbot), never sleeps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage

from draftwise.core.chat import pictures as pics
from draftwise.testing import projectors
from draftwise.testing import tinyarchs as ta
from draftwise.viewmodels.chat import IDLE
from draftwise.viewmodels.chat_pictures import png_bytes
from launched_window import launched_window

pytestmark = [pytest.mark.engine, pytest.mark.timeout(240)]
# Gemma's turn markers, enough for the engine to format a chat (the tiny vocabulary spells
# them out letter by letter); the pane is then a chat pane, not a writing pane.
TEMPLATE = ("{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n"
            "{% endfor %}<start_of_turn>model\n")


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))


def _vision_model(folder: Path) -> Path:
    m = ta.gemma3_model(extra_kv={"tokenizer.chat_template": TEMPLATE})
    model = ta.write_arch(folder / "gemma3-tiny.gguf", m)[0]
    projectors.write_gemma3_projector(folder / "mmproj-gemma3-tiny-F16.gguf", m.n_embd)
    return model


def test_a_picture_goes_to_the_engine_from_the_window_and_it_answers(qtbot, engine, tmp_path):
    model = _vision_model(tmp_path / "models")
    vm, win = launched_window(qtbot, engine, model, ready_timeout=90_000)
    argv = vm.launch.spec.argv
    assert argv[argv.index("--mmproj") + 1] == str(model.parent / "mmproj-gemma3-tiny-F16.gguf")
    tray = vm.chat.pictures
    qtbot.waitUntil(lambda: tray.vision, timeout=10_000)  # /props: modalities.vision
    qtbot.mouseClick(win.status.open_chat, Qt.MouseButton.LeftButton)
    panel = win.chat_panel
    assert panel.picture_strip.isVisible() and not vm.chat.writing

    image = QImage(96, 64, QImage.Format.Format_RGB32)
    image.fill(QColor("teal"))
    assert tray.attach_bytes(png_bytes(image), "teal.png")
    assert panel.picture_strip.thumbs.count() == 1
    sent = []
    original = vm.chat._stream_factory

    def spy(parent):
        stream = original(parent)
        real_start = stream.start
        stream.start = lambda url, key, body, path: (sent.append(body), real_start(url, key, body, path))[1]
        return stream

    vm.chat._stream_factory = spy
    vm.chat.set_max_tokens(8)
    vm.chat.extra_body = {"ignore_eos": True}
    qtbot.keyClicks(panel.input, "What colour is this?")
    qtbot.keyClick(panel.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: vm.chat.state == IDLE and vm.chat.turns[-1].role == "assistant", timeout=120_000)
    parts = sent[0]["messages"][-1]["content"]
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    reply = vm.chat.turns[-1]
    assert not reply.problem, str(reply.note)  # at most the max-tokens remark
    assert reply.figures is not None and reply.figures.tokens > 0 and reply.content
    assert vm.chat.turns[0].pictures and panel.views[0].findChildren(type(panel.empty))  # the thumbnail stays

    # Bytes that look like a PNG to nobody: the engine's own refusal, one sentence, text kept.
    bad = pics.Picture("broken.png", "image/png", b"\x89PNG\r\n\x1a\nnot really")
    tray.attached.append(bad)
    qtbot.keyClicks(panel.input, "And this one?")
    qtbot.keyClick(panel.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: vm.chat.state == IDLE and vm.chat.turns[-1].role == "assistant", timeout=60_000)
    assert str(vm.chat.turns[-1].note).startswith("The engine could not use the picture (")
    assert vm.chat.turns[-2].content == "And this one?" and vm.chat.turns[-2].pictures_refused
    with qtbot.waitSignal(vm.launch.ended, timeout=30_000):
        vm.do_stop()
