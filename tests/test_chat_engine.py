"""The chat pane on the real llama-server with tiny models (issue 12): a streamed reply with
its figures, Stop, New chat, the drafting line, the engine killed mid-reply, a wrong key,
503 while loading, no engine, the context limit, and "Open chat" in the window.

Waits on signals and conditions (qtbot), never sleeps.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, Signal

from draftwise.core.chat import protocol as chat
from draftwise.core.engines import args as engine_args
from draftwise.core.engines import capabilities
from draftwise.core.gguf import reader as gguf
from draftwise.core.launch import headless, launch_spec
from draftwise.core.speculation import resolver
from draftwise.core.speculation.broken import BrokenDrafters
from draftwise.testing import tinymodels as tm
from draftwise.ui.chat_panel import ChatPanel
from draftwise.viewmodels.chat import IDLE, ChatViewModel
from draftwise.viewmodels.launch import FAILED, LaunchViewModel
from launched_window import launched_window

pytestmark = [pytest.mark.engine, pytest.mark.timeout(180)]
LONG = {"ignore_eos": True}  # a tiny random model may stop at once; these replies must not


@pytest.fixture(autouse=True)
def _own_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAFTWISE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DRAFTWISE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DRAFTWISE_CONFIG_DIR", str(tmp_path / "config"))


def _spec(binary: Path, model_path: Path, ctx: int = 512) -> launch_spec.LaunchSpec:
    model = gguf.read_model(model_path)
    decision = resolver.resolve(model, resolver.SpecOptions(broken=BrokenDrafters().broken_for(binary)),
                                capabilities.capabilities(binary))
    return launch_spec.llamacpp_launch(binary, model, decision, port=launch_spec.any_free_port(),
                                       plan_options=(engine_args.option("-c", str(ctx)),))


@pytest.fixture
def launcher(qtbot, engine):
    """start(model, ctx) -> a LaunchViewModel whose engine is ready; stopped afterwards."""
    started: list[LaunchViewModel] = []

    def start(model_path: Path, ctx: int = 512, wait: bool = True) -> LaunchViewModel:
        launch = LaunchViewModel()
        started.append(launch)
        if wait:
            with qtbot.waitSignal(launch.became_ready, timeout=60_000):
                launch.start(_spec(engine.binary, model_path, ctx))
        else:
            launch.start(_spec(engine.binary, model_path, ctx))
        return launch

    yield start
    for launch in started:
        if launch.running:
            with qtbot.waitSignal(launch.ended, timeout=30_000):
                launch.stop()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return tm.write_tiny_model(tmp_path / "alone" / "tiny-F32.gguf", tm.TinyModel())[0]


def _pane(qtbot, vm: ChatViewModel) -> ChatPanel:
    panel = ChatPanel(vm)
    qtbot.addWidget(panel)
    panel.resize(700, 800)
    panel.show()
    return panel


def _wait_reply(qtbot, vm: ChatViewModel, timeout: int = 60_000) -> chat.Turn:
    qtbot.waitUntil(lambda: vm.state == IDLE and vm.turns and vm.turns[-1].role == "assistant", timeout=timeout)
    return vm.turns[-1]


class Ready(QObject):
    """A launch that is ready at a given address: for engines started outside the window
    (the chat must cope with a wrong key or an engine still loading there too)."""

    state_changed = Signal(str)
    state, cause, fallback_reason, running = "ready", None, None, True

    def __init__(self, url: str, api_key: str) -> None:
        super().__init__()
        self.spec = dataclasses.make_dataclass("S", ["url", "api_key", "spec"])(url, api_key, None)


# ------------------------------------------------------------------ the happy path
def test_type_a_question_and_read_the_streamed_reply(qtbot, launcher, model):
    vm = ChatViewModel(launcher(model))
    vm.max_tokens = 64
    panel = _pane(qtbot, vm)
    qtbot.keyClicks(panel.input, "Hello")
    qtbot.keyClick(panel.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(panel.input, "there")
    assert panel.input.toPlainText() == "Hello\nthere" and vm.turns == []  # Shift+Enter: a new line
    qtbot.keyClick(panel.input, Qt.Key.Key_Return)  # Enter sends
    assert panel.input.toPlainText() == "" and vm.turns[0].content == "Hello\nthere"
    reply = _wait_reply(qtbot, vm)
    assert not reply.problem and (reply.note is None or "max tokens limit (64)" in str(reply.note))
    f = reply.figures
    assert f is not None and f.from_engine and f.tokens > 0 and f.tokens_per_s and f.first_token_s is not None
    view = panel.views[-1]
    assert view.figures.isVisible() and "tokens/s" in view.figures.text() and f"{f.tokens} tokens" in view.figures.text()
    assert view.body.toPlainText().strip()  # the reply is in the pane
    # No speculation for a lone model: no drafting words under the reply.
    assert "draft" not in view.figures.text()
    # A second question goes out with the first exchange as history.
    assert vm.send("And again?")
    second = _wait_reply(qtbot, vm)
    assert second is not reply and len(vm.turns) == 4 and second.figures is not None


def test_stop_keeps_the_partial_reply_and_new_chat_starts_fresh(qtbot, launcher, model):
    vm = ChatViewModel(launcher(model, ctx=4096))
    vm.extra_body = LONG
    panel = _pane(qtbot, vm)
    vm.send("Write a long story.")
    qtbot.waitUntil(lambda: len(vm.turns) == 2 and len(vm.turns[1].content) > 0, timeout=30_000)
    assert vm.streaming and panel.stop_button.isEnabled()
    qtbot.keyClick(panel.input, Qt.Key.Key_Escape)  # Esc stops
    reply = _wait_reply(qtbot, vm)
    assert str(reply.note) == str(chat.stopped_note()) and not reply.problem
    kept = reply.content
    assert kept and reply.figures is not None and 0 < reply.figures.tokens < 4000
    assert "Stopped" in panel.views[-1].note.text()
    old = vm.current
    qtbot.mouseClick(panel.new_button, Qt.MouseButton.LeftButton)
    assert vm.turns == [] and panel.views == [] and len(vm.conversations) == 2
    assert old.turns[1].content == kept  # the old chat is kept for the session
    vm.select(0)
    assert vm.current is old and len(panel.views) == 2


def test_the_drafting_line_on_a_companion_draft_model(qtbot, launcher, tmp_path):
    target = tm.TinyModel(name="Tiny", n_layer=4, n_embd=128, n_ff=256)
    path = tm.write_tiny_model(tmp_path / "m" / "Tiny-Q8_0.gguf", target)[0]
    tm.write_tiny_model(tmp_path / "m" / "Tiny-draft.gguf", tm.draft_model(target))
    launch = launcher(path)
    assert launch.spec.spec.spec_type == "draft-simple"
    vm = ChatViewModel(launch)
    vm.extra_body = LONG
    vm.max_tokens = 48
    panel = _pane(qtbot, vm)
    vm.send("Hi")
    reply = _wait_reply(qtbot, vm)
    f = reply.figures
    assert f is not None and f.speculative and f.drafted and f.drafted > 0 and f.accepted is not None
    text = panel.views[-1].figures.text()
    assert f"drafted {f.drafted}, accepted {f.accepted}" in text
    assert "max tokens limit (48)" in panel.views[-1].note.text() and not reply.problem


# ------------------------------------------------------------------ bad cases
def test_engine_killed_mid_reply_keeps_the_partial_and_says_why(qtbot, launcher, model):
    launch = launcher(model, ctx=8192)
    vm = ChatViewModel(launch)
    vm.extra_body = LONG
    panel = _pane(qtbot, vm)
    vm.send("Write a long story.")
    qtbot.waitUntil(lambda: len(vm.turns) == 2 and len(vm.turns[1].content) > 0, timeout=30_000)
    os.kill(launch.process.pid, signal.SIGKILL)
    reply = _wait_reply(qtbot, vm)
    qtbot.waitUntil(lambda: launch.state == FAILED, timeout=30_000)
    qtbot.waitUntil(lambda: "The engine stopped while replying" in str(reply.note), timeout=10_000)
    assert reply.content and reply.problem
    assert launch.cause is not None and str(launch.cause.sentence) in str(reply.note)
    assert "The engine stopped while replying" in panel.views[-1].note.text()
    # The next message waits for a new launch instead of failing silently.
    assert vm.send("Are you there?")
    assert vm.offers_launch() and panel.launch_button.isVisible() and vm.turns[-1].content == "Are you there?"


def test_a_wrong_key_gets_a_sentence(qtbot, launcher, model):
    launch = launcher(model)
    vm = ChatViewModel(Ready(launch.spec.url, "not-the-key"))
    panel = _pane(qtbot, vm)
    vm.send("Hello")
    reply = _wait_reply(qtbot, vm, timeout=20_000)
    assert reply.problem and reply.content == "" and "401" in str(reply.note)
    assert vm.turns[0].content == "Hello"  # the question stays
    assert "401" in panel.views[-1].note.text()


def test_503_while_loading_waits_with_progress_then_sends(qtbot, engine, tmp_path):
    # A big vocabulary takes the engine a moment to load; its HTTP side answers 503 meanwhile.
    path = tm.write_tiny_model(tmp_path / "bigvocab.gguf", tm.TinyModel(n_pieces=100_000))[0]
    server = headless.start_server(engine.binary, path, ctx=512, log_dir=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while server.health() != 503:
            assert server.health() != 200, "the engine loaded before the test could ask"
            assert time.monotonic() < deadline
        vm = ChatViewModel(Ready(server.base_url, server.api_key))
        panel = _pane(qtbot, vm)
        seen: list[str] = []
        vm.changed.connect(lambda: seen.append(vm.notice_text()) if vm.waiting_for_engine() else None)
        vm.send("Hello")
        qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
        assert "still loading" in seen[0]
        try:
            reply = _wait_reply(qtbot, vm, timeout=120_000)
        except Exception as exc:  # say where it stood, for a machine too loaded to tell
            raise AssertionError(f"state={vm.state} notice={vm.notice_text()!r} turns={vm.turns} "
                                 f"health={server.health()}") from exc
        assert reply.figures is not None and reply.figures.tokens > 0 and reply.content
        assert len(vm.turns) == 2  # one question, one reply: the 503 left nothing behind
        assert not panel.notice.isVisible()
    finally:
        server.stop()


def test_no_engine_offers_launch_and_the_message_goes_out_once_ready(qtbot, engine, model):
    launch = LaunchViewModel()
    vm = ChatViewModel(launch)
    panel = _pane(qtbot, vm)
    asked: list[bool] = []
    vm.launch_requested.connect(lambda: asked.append(True))
    vm.send("Hello")
    assert vm.offers_launch() and panel.launch_button.isVisible() and "No engine is running" in panel.notice_text.text()
    qtbot.mouseClick(panel.launch_button, Qt.MouseButton.LeftButton)
    assert asked == [True]
    try:
        launch.start(_spec(engine.binary, model))
        assert vm.waiting_for_engine() and panel.wait_bar.isVisible()  # loading: wait with progress
        reply = _wait_reply(qtbot, vm)
        assert reply.figures is not None and reply.figures.tokens > 0 and vm.turns[0].content == "Hello"
    finally:
        if launch.running:
            with qtbot.waitSignal(launch.ended, timeout=30_000):
                launch.stop()


def test_the_context_limit_is_said(qtbot, launcher, model):
    vm = ChatViewModel(launcher(model, ctx=256))
    vm.extra_body = LONG
    _pane(qtbot, vm)
    vm.send("Hi")
    reply = _wait_reply(qtbot, vm)
    assert reply.problem and "filled the model's context" in str(reply.note) and reply.content
    vm.new_chat()
    vm.send("word " * 400)  # longer than the whole context
    reply = _wait_reply(qtbot, vm)
    assert reply.problem and "no longer fits the model's context of 256 tokens" in str(reply.note)


# ------------------------------------------------------------------ a base model (issue 20)
def _post(url: str, key: str, path: str, body: dict) -> dict:
    import json
    import urllib.request

    req = urllib.request.Request(url + path, json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_a_base_model_continues_text_with_no_template_tokens(qtbot, launcher, model):
    """A model without a chat template is continued through /v1/completions with the raw
    text: what the engine evaluated is exactly the text's own tokens (BOS and the text), not
    the engine's default chat template, whose markers the model would write back."""
    import json

    from draftwise.services.chat_client import ChatStream

    assert not gguf.read_model(model).has_chat_template
    launch = launcher(model)
    sent: list[tuple[str, dict]] = []

    class Recording(ChatStream):
        def start(self, base_url, api_key, body, path=chat.CHAT_PATH):
            sent.append((path, body))
            super().start(base_url, api_key, body, path)

    vm = ChatViewModel(launch, stream_factory=lambda parent: Recording(parent=parent))
    vm.base_model = True
    vm.max_tokens, vm.extra_body = 24, dict(LONG)
    panel = _pane(qtbot, vm)
    assert panel.send_button.text() == "Continue"
    text = "The capital of France is"
    qtbot.keyClicks(panel.input, text)
    qtbot.keyClick(panel.input, Qt.Key.Key_Return)
    reply = _wait_reply(qtbot, vm)
    path, body = sent[-1]
    assert path == chat.COMPLETION_PATH and body["prompt"] == text and "messages" not in body
    assert "<|im_start|>" not in json.dumps(body) and "<|im_end|>" not in json.dumps(body)
    # The engine's own count of what it evaluated: the text's tokens with BOS, nothing more.
    own = _post(launch.spec.url, launch.spec.api_key, "/tokenize", {"content": text, "add_special": True})["tokens"]
    f = reply.figures
    assert f is not None and f.from_engine and f.tokens == 24 and f.tokens_per_s
    timings = vm._timings
    assert timings is not None and timings.prompt_n + timings.cache_n == len(own)
    # Through the chat endpoint the same text would have been wrapped in the template.
    templated = _post(launch.spec.url, launch.spec.api_key, "/apply-template",
                      {"messages": [{"role": "user", "content": text}]})["prompt"]
    assert "<|im_start|>" in templated and templated != text
    assert "<|im_" not in reply.content
    assert [v.who.text() for v in panel.views] == ["Your text", "Continuation"]
    assert "tokens/s" in panel.views[-1].figures.text()
    # Continue (nothing typed) writes on from the whole text.
    assert vm.send("")
    _wait_reply(qtbot, vm)
    assert sent[-1][1]["prompt"] == text + reply.content


# ------------------------------------------------------------------ the window
def test_open_chat_opens_the_chat_in_the_window(qtbot, engine, model):
    vm, win = launched_window(qtbot, engine, model)
    assert win.right_tabs.tabBar().isVisible()  # Model | Chat
    qtbot.mouseClick(win.status.open_chat, Qt.MouseButton.LeftButton)
    assert win.right_tabs.currentWidget() is win.chat_panel
    qtbot.keyClicks(win.chat_panel.input, "What is speculative decoding?")
    qtbot.keyClick(win.chat_panel.input, Qt.Key.Key_Return)
    reply = _wait_reply(qtbot, vm.chat)
    assert reply.figures is not None and "tokens/s" in win.chat_panel.views[-1].figures.text()
    # The tiny model has no chat template: the window made the pane a writing pane.
    assert vm.chat.writing and win.chat_panel.send_button.text() == "Continue"
    with qtbot.waitSignal(vm.launch.ended, timeout=30_000):
        vm.do_stop()
