"""ChatViewModel without an engine: tokens reach the view in batches, saved chats are opt-in
and a corrupt file is reported in the pane. (The engine cases are in test_chat_engine.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from draftwise.core.chat import protocol as chat
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

    def start(self, url, key, body, path=chat.CHAT_PATH) -> None:
        self.body, self.path = body, path

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


def test_the_prompts_sent_are_kept_per_model_on_this_computer(qtbot, tmp_path: Path):
    """For measuring speculation on the user's own work (core/measuring/learn.py): the
    chat as the engine gets it, the last few per model, in the data folder."""
    from draftwise.core.measurements import usage

    launch = Ready()
    launch.spec.model_path = tmp_path / "model.gguf"
    vm = ChatViewModel(launch, stream_factory=Scripted)
    vm.usage_path = tmp_path / usage.FILE_NAME
    assert vm.send("Rewrite this table.")
    kept = usage.UsageRecords(vm.usage_path).model(launch.spec.model_path).prompts
    assert kept == ("User: Rewrite this table.\nAssistant:",)
    assert usage.UsageRecords(vm.usage_path).model(tmp_path / "other.gguf").prompts == ()


def test_turning_kept_prompts_off_keeps_none_and_deletes_those_kept(qtbot, tmp_path: Path):
    """The chat's box "Keep my last prompts…" (settings.keep_prompts): unchecked, the prompts
    sent are not kept and the ones kept before are deleted, every model's."""
    from draftwise.core.measurements import usage

    launch = Ready()
    launch.spec.model_path = tmp_path / "model.gguf"
    settings = Settings()
    vm = ChatViewModel(launch, settings, stream_factory=Scripted)
    vm.usage_path = tmp_path / usage.FILE_NAME
    usage.UsageRecords(vm.usage_path).add_prompts(tmp_path / "other.gguf", ("User: old\nAssistant:",))
    assert vm.send("Rewrite this table.")
    assert usage.UsageRecords(vm.usage_path).model(launch.spec.model_path).prompts
    saved: list[int] = []
    vm.settings_changed.connect(lambda: saved.append(1))
    vm.set_keep_prompts(False)
    assert not settings.keep_prompts and saved and vm.store_problem is None
    assert usage.UsageRecords(vm.usage_path).models() == []
    Scripted.last.play(_sse("ok") + b"data: [DONE]\n\n")
    Scripted.last.end()
    assert vm.send("Another one.")
    assert usage.UsageRecords(vm.usage_path).models() == []
    assert Settings.from_json(settings.to_json()).keep_prompts is False
    assert Settings.from_json({}).keep_prompts is True


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
        f = chat.ReplyFigures(0.25, 40, 80.0, 30, 21, True, True)
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
    for name in ("chat/protocol.py", "chat/store.py"):
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
    assert "continues text — not for chat" in vm.notice_text() and "writing pane" in vm.notice_text()


def _text(*pieces: str, finish: str | None = None) -> bytes:
    out = b"".join(b"data: " + json.dumps({"choices": [{"text": t, "index": 0, "finish_reason": None}]}).encode()
                   + b"\n\n" for t in pieces)
    if finish:
        out += b"data: " + json.dumps({"choices": [{"text": "", "index": 0, "finish_reason": finish}],
                                       "timings": {"predicted_n": chat.WRITE_TOKENS, "predicted_ms": 100.0}}).encode()
        out += b"\n\ndata: [DONE]\n\n"
    return out


def test_a_base_model_is_continued_through_the_completion_endpoint(qtbot):
    """Issue 20: no chat template, no chat endpoint: the raw text goes to /v1/completions,
    the pane becomes a writing pane, and the continuation has the same figures."""
    vm = ChatViewModel(Ready(), stream_factory=Scripted)
    vm.base_model = True
    vm.current.system_prompt = "Answer briefly."  # a base model has no system turn: not sent
    panel = ChatPanel(vm)
    qtbot.addWidget(panel)
    assert panel.send_button.text() == "Continue" and "Write the beginning" in panel.input.placeholderText()
    assert vm.send("The capital of France is")
    stream = Scripted.last
    assert stream.path == chat.COMPLETION_PATH
    assert stream.body["prompt"] == "The capital of France is" and "messages" not in stream.body
    assert "Answer briefly" not in json.dumps(stream.body)
    stream.play(_text(" Paris", ".", finish="length"))
    stream.end()
    reply = vm.turns[1]
    assert reply.content == " Paris." and reply.figures.from_engine and reply.figures.tokens == chat.WRITE_TOKENS
    assert "press Continue to write on" in vm.note_text(reply) and not reply.problem
    assert [v.who.text() for v in panel.views] == ["Your text", "Continuation"]
    # Continue with nothing typed writes on from the whole text so far.
    assert vm.send("")
    assert Scripted.last.body["prompt"] == "The capital of France is Paris."
    Scripted.last.play(_text(" It", finish="stop"))
    Scripted.last.end()
    # A chat model keeps the chat endpoint.
    vm.base_model = False
    vm.new_chat()
    assert not vm.send("")  # nothing to continue in a chat
    assert vm.send("hi")
    assert Scripted.last.path == chat.CHAT_PATH and Scripted.last.body["messages"][-1]["content"] == "hi"


class Launch(QObject):
    """A launch whose state a test sets."""

    state_changed = Signal(str)
    cause, fallback_reason, spec = None, None, None

    def __init__(self) -> None:
        super().__init__()
        self.state, self.model_name = "idle", ""

    @property
    def running(self) -> bool:
        return self.state in ("starting", "loading", "ready", "stopping")

    def to(self, state: str, name: str = "") -> None:
        self.state, self.model_name = state, name or self.model_name
        self.state_changed.emit(state)


def test_the_empty_pane_hint_follows_the_state(qtbot):
    """Issue 20: the pane no longer says "Launch a model" while one runs."""
    launch = Launch()
    vm = ChatViewModel(launch, stream_factory=Scripted)
    panel = ChatPanel(vm)
    qtbot.addWidget(panel)
    hints = {}
    hints["none"] = panel.empty.text()
    vm.set_chosen("Qwen2.5 1.5B Instruct", base=False)
    hints["chosen"] = panel.empty.text()
    launch.to("loading", "Qwen2.5 1.5B Instruct")
    hints["loading"] = panel.empty.text()
    launch.to("ready")
    hints["ready"] = panel.empty.text()
    launch.to("stopped")
    hints["stopped"] = panel.empty.text()
    assert hints["none"].startswith("Choose a model in the library")
    assert hints["chosen"].startswith("Launch Qwen2.5 1.5B Instruct, then ask it something")
    assert hints["loading"].startswith("Qwen2.5 1.5B Instruct is loading")
    assert hints["ready"].startswith("Qwen2.5 1.5B Instruct is ready: ask it something")
    assert hints["stopped"] == "The engine was stopped. Launch Qwen2.5 1.5B Instruct again to go on."
    assert len(set(hints.values())) == 5 and not any("Launch a model" in h for h in hints.values())
    # A base model chosen (the window resets a stopped launch then): the hints say it continues text.
    launch.to("idle")
    vm.set_chosen("Gemma 3 270M", base=True)
    assert "write the beginning of a text" in panel.empty.text()
    vm.base_model = True
    launch.to("ready", "Gemma 3 270M")
    assert panel.empty.text().startswith("Gemma 3 270M continues text. Write the beginning")
    assert panel.send_button.text() == "Continue"
