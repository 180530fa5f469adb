"""ChatViewModel without an engine: tokens reach the view in batches, saved chats are opt-in
and a corrupt file is reported in the pane. (The engine cases are in test_chat_engine.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core import chat
from draftwise.core.settings import Settings
from draftwise.ui.chat_panel import ChatPanel
from draftwise.viewmodels.chat import IDLE, ChatViewModel


class Ready(QObject):
    state_changed = Signal(str)
    state, cause, fallback_reason, running = "ready", None, None, True

    def __init__(self) -> None:
        super().__init__()
        self.spec = type("S", (), {"url": "http://127.0.0.1:9", "api_key": "k", "spec": None})()


class Scripted(QObject):
    """A stream that replays llama-server's bytes through the real decoder when told to."""

    events = Signal(list)
    failed = Signal(object)
    finished = Signal()
    cancelled = False

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.body = None
        Scripted.last = self

    def start(self, url, key, body) -> None:
        self.body = body

    def play(self, data: bytes) -> None:
        self.events.emit(chat.SseDecoder().feed(data))

    def end(self) -> None:
        self.finished.emit()

    def cancel(self) -> None:
        # Like an aborted network reply whose finished signal comes on a later turn.
        from PySide6.QtCore import QTimer

        self.cancelled = True
        QTimer.singleShot(0, self.finished.emit)


def _sse(*contents: str) -> bytes:
    return b"".join(b"data: " + json.dumps({"choices": [{"delta": {"content": c}}]}).encode() + b"\n\n"
                    for c in contents)


def test_tokens_reach_the_view_in_batches_on_a_timer(qtbot):
    vm = ChatViewModel(Ready(), stream_factory=Scripted)
    updates: list[int] = []
    vm.turn_updated.connect(updates.append)
    assert vm.send("hi")
    stream = Scripted.last
    assert stream.body["messages"] == [{"role": "user", "content": "hi"}]
    for i in range(20):
        stream.play(_sse(*[f"t{i}-{k} " for k in range(100)]))  # 2,000 tokens at once
    assert updates == []  # nothing drawn per token
    qtbot.waitUntil(lambda: bool(updates), timeout=2000)
    assert len(updates) <= 3 and vm.turns[1].content.startswith("t0-0 t0-1")
    assert vm.turns[1].content.count(" ") == 2000
    stream.play(b"data: [DONE]\n\n")
    stream.end()
    f = vm.turns[1].figures
    assert vm.state == IDLE and f.tokens == 2000 and not f.from_engine  # counted: no timings came


def test_saved_chats_are_opt_in_and_a_corrupt_file_is_reported(qtbot, tmp_path: Path):
    path = tmp_path / "chats.json"
    vm = ChatViewModel(Ready(), Settings(), store_path=path, stream_factory=Scripted)
    vm.send("hi")
    Scripted.last.play(_sse("hello") + b"data: [DONE]\n\n")
    Scripted.last.end()
    assert not path.exists()  # not opted in
    vm.set_save(True)
    saved = json.loads(path.read_text())
    assert saved["conversations"][0]["turns"][1]["content"] == "hello"

    path.write_text("{broken")
    again = ChatViewModel(Ready(), Settings(chat_save=True), store_path=path, stream_factory=Scripted)
    panel = ChatPanel(again)
    qtbot.addWidget(panel)
    panel.show()
    assert "could not be read" in again.store_problem_text() and "chats.json.corrupt-" in again.store_problem_text()
    assert panel.store_note.isVisible() and list(tmp_path.glob("chats.json.corrupt-*"))


def test_japanese_pane_and_sentences(qtbot):
    from draftwise.viewmodels.i18n import LanguageManager

    lang = LanguageManager()
    try:
        assert lang.apply("ja") == "ja" and lang.problem is None
        vm = ChatViewModel(Ready(), stream_factory=Scripted)
        panel = ChatPanel(vm)
        qtbot.addWidget(panel)
        assert panel.send_button.text() == "送信" and panel.new_button.text() == "新しいチャット"
        f = chat.Figures(0.25, 40, 80.0, 30, 21, True, True)
        assert vm.figures_text(chat.Turn("assistant", "x", figures=f)) == \
            "最初のトークン 250 ms · 80.0 トークン/秒 · 40 トークン · ドラフト 30、採用 21（70 %）"
        crash = chat.crashed("The engine ran out of memory.").sentence
        assert vm.note_text(chat.Turn("assistant", note=crash)).startswith("返答中にエンジンが停止しました: ")
    finally:
        lang.apply("en")


def test_new_chat_while_a_reply_streams_keeps_it_in_the_old_chat(qtbot):
    vm = ChatViewModel(Ready(), stream_factory=Scripted)
    panel = ChatPanel(vm)
    qtbot.addWidget(panel)
    vm.send("tell me")
    Scripted.last.play(_sse("part", "ial"))
    old = vm.current
    vm.new_chat()
    assert vm.turns == [] and vm.current is not old
    qtbot.waitUntil(lambda: vm.state == IDLE, timeout=2000)
    assert old.turns[1].content == "partial" and str(old.turns[1].note) == str(chat.stopped_note())
    assert vm.turns == [] and panel.views == []


def test_every_chat_sentence_of_core_is_translated():
    import ast

    from draftwise.viewmodels.i18n import LanguageManager, fields, tr

    root = Path(__file__).resolve().parents[1] / "app" / "draftwise" / "core"
    templates = set()
    for name in ("chat.py", "chat_store.py"):
        for node in ast.walk(ast.parse((root / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "msg":
                templates.add(node.args[0].value)
    assert len(templates) > 25
    lang = LanguageManager()
    try:
        lang.apply("ja")
        untranslated = sorted(t for t in templates if tr(t) == t or fields(tr(t)) != fields(t))
        assert not untranslated, untranslated
    finally:
        lang.apply("en")


def test_a_base_model_is_named_as_continuing_text(qtbot):
    vm = ChatViewModel(Ready(), stream_factory=Scripted)
    assert vm.notice_text() == ""
    vm.base_model = True
    assert "continues text — not for chat" in vm.notice_text()
