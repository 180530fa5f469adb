"""The chat pane's state: conversations, the reply being streamed, and what went wrong.

send() → (no engine: say so and offer Launch; loading: wait, then send) → ChatStream →
events collected as they come and handed to the view on a timer (FLUSH_MS), so a fast
engine never floods the window → the reply ends with its figures (first token, tokens/s,
tokens, drafted/accepted) or a note (stopped, cut short, the engine's crash sentence,
the context or max-tokens limit). Nothing the user typed or the engine sent is dropped.

A model without a chat template makes the pane a writing pane: the text so far is continued
through the completion endpoint as it is (`core.chat.completion_body`), never wrapped in a
chat template; the same figures come under each continuation. The hint in an empty pane
follows the state: no model, one chosen, loading, ready (to chat or to write), stopped.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QElapsedTimer, QObject, QTimer, Signal

from draftwise.core.chat import pictures as pics
from draftwise.core.chat import protocol as chat
from draftwise.core.chat import store as chat_store
from draftwise.core.chat.protocol import ChatError, Conversation, Options, Turn
from draftwise.core.launch.outcome import FAILED, LOADING, READY, STARTING, STOPPED, STOPPING
from draftwise.core.measurements import usage
from draftwise.core.messages import Message
from draftwise.core.readable import human_duration
from draftwise.core.settings import Settings
from draftwise.viewmodels.chat_pictures import PictureTray
from draftwise.viewmodels.i18n import tr, tr_message
from draftwise.viewmodels.launch import LaunchViewModel
from draftwise.viewmodels.roles import ChatStreamRole, PropsProbeRole

IDLE, WAITING, STREAMING = "idle", "waiting", "streaming"


def show(m: Message | str | None) -> str:
    """A core sentence in the window's language (`i18n.tr_message`)."""
    return tr_message(m)


class ChatViewModel(QObject):
    changed = Signal()  # state, notice, options, the list of conversations
    conversation_changed = Signal()  # another conversation is shown (new chat, picked one)
    turn_added = Signal(int)  # index in the current conversation
    turn_updated = Signal(int)  # that turn's text, figures or note changed
    launch_requested = Signal()  # the user asked to launch from the chat
    settings_changed = Signal()
    keep_prompts_changed = Signal()  # the box: the next launch logs prompts or not

    FLUSH_MS = 50  # how often streamed text reaches the view
    RETRY_MS = 500  # 503 while the model loads: ask again this often
    CRASH_WINDOW_S = 10.0  # a cut reply this recent takes the launcher's crash sentence

    def __init__(self, launch: LaunchViewModel, settings: Settings | None = None, *,
                 store_path: Path | None = None,
                 stream_factory: Callable[[QObject], ChatStreamRole] | None = None,
                 probe_factory: Callable[[QObject], PropsProbeRole] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.launch = launch
        self.settings = settings or Settings()
        self.store_path = store_path
        self._stream_factory = stream_factory or _default_stream
        self.state = IDLE
        self.notice: ChatError | None = None  # the pane-level sentence (no engine, loading...)
        self.store_problem: Message | None = None
        self._save_blocked = False
        self.temperature: float | None = None
        self.max_tokens: int | None = None
        self.extra_body: dict[str, Any] = {}  # further engine parameters for each request
        self.usage_path: Path | None = None  # where the prompts sent are kept (None: the data folder's)
        self.conversations: list[Conversation] = []
        self.current = self._new_conversation()
        self.pending = False  # the last user turn waits for the engine
        self._stream: ChatStreamRole | None = None
        self._reply: Turn | None = None
        self._reply_in: Conversation = self.current
        self._buffer: list[chat.Delta] = []
        self._timings: chat.Timings | None = None
        self._finish: str | None = None
        self._error: ChatError | None = None
        self._counted = 0
        self._first_token_s: float | None = None
        self._cut: tuple[Turn, float] | None = None
        self._reply_writes = False  # the reply streaming now continues text (no chat template)
        self.chosen_name = ""  # the model chosen in the window ("" when none), for the hints
        self.chosen_base = False  # ... and whether it has no chat template
        self._clock = QElapsedTimer()
        self._wait_clock = QElapsedTimer()
        self._flush_timer = QTimer(self)
        self._flush_timer.setInterval(self.FLUSH_MS)
        self._flush_timer.timeout.connect(self._flush)
        self._retry_timer = QTimer(self)
        self._retry_timer.setSingleShot(True)
        self._retry_timer.setInterval(self.RETRY_MS)
        self._retry_timer.timeout.connect(self._send_pending)
        self._tick = QTimer(self)
        self._tick.setInterval(500)
        self._tick.timeout.connect(self.changed.emit)
        launch.state_changed.connect(self._on_launch_state)
        self.pictures = PictureTray(launch, probe_factory, self)  # for the next message
        if self.settings.chat_save:
            self._load_saved()

    # ---------------------------------------------------------------- commands
    @property
    def streaming(self) -> bool:
        return self.state == STREAMING

    @property
    def busy(self) -> bool:
        return self.state != IDLE

    @property
    def turns(self) -> list[Turn]:
        return self.current.turns

    def send(self, text: str) -> bool:
        """Add the user's message and ask the engine; False when nothing was sent. In a
        writing pane an empty message continues the text where it stopped."""
        if self.busy:
            return False
        with_pictures = bool(self.pictures.attached) and not self.writing
        if not text.strip() and not with_pictures:
            if not (self.writing and self.current.document()):
                return False
        else:
            self.current.turns.append(Turn("user", text, pictures=self.pictures.take() if with_pictures else []))
            self.turn_added.emit(len(self.turns) - 1)
        self.pending = True
        self._wait_clock.start()
        self._send_pending()
        return True

    def stop(self) -> None:
        """Esc / Stop: end the reply (keeping what came) or stop waiting for the engine."""
        if self._stream is not None and self.state == STREAMING:
            self._stream.cancel()
            return
        if self.state == WAITING:
            self.pending = False
            self._retry_timer.stop()
            self.notice = None
            self._set_state(IDLE)

    def new_chat(self) -> None:
        self.stop()
        if self.current.turns:
            self.current = self._new_conversation()
        self.notice = None
        self.conversation_changed.emit()
        self.changed.emit()

    def select(self, index: int) -> None:
        if 0 <= index < len(self.conversations) and self.conversations[index] is not self.current:
            self.stop()
            self.current = self.conversations[index]
            self.conversation_changed.emit()
            self.changed.emit()

    def set_system_prompt(self, text: str) -> None:
        self.current.system_prompt = text

    def set_temperature(self, value: float | None) -> None:
        self.temperature = value

    def set_max_tokens(self, value: int | None) -> None:
        self.max_tokens = value or None

    def set_save(self, on: bool) -> None:
        self.settings.chat_save = on
        self.settings_changed.emit()
        if on:
            self.save()
        self.changed.emit()

    def request_launch(self) -> None:
        self.launch_requested.emit()

    # ---------------------------------------------------------------- texts
    # Set by the app at launch: the running model has no chat template (a base model).
    base_model = False

    @property
    def writing(self) -> bool:
        """The pane continues text instead of chatting: the model that runs (or, with none
        running, the one chosen) has no chat template."""
        return self.base_model if self.launch.running else self.chosen_base

    def set_chosen(self, name: str, base: bool) -> None:
        """The model chosen in the window (for the hints), and whether it is a base model."""
        self.chosen_name, self.chosen_base = name, base
        self.changed.emit()

    def notice_text(self) -> str:
        n = self.notice
        if n is None:
            if self.base_model and self.launch.running:
                return tr("This model continues text — not for chat: it has no chat template, so this is a "
                          "writing pane. Write the beginning of a text and the model writes on.")
            return ""
        text = show(n.sentence)
        if n.kind == chat.LOADING and self._wait_clock.isValid():
            text += " " + tr("Waiting {0}.").format(human_duration(self._wait_clock.elapsed() / 1000.0))
        return text

    def empty_text(self) -> str:
        """The hint in an empty pane, for the state the engine is in."""
        state, name = self.launch.state, getattr(self.launch, "model_name", "") or self.chosen_name
        if state in (STARTING, LOADING):
            return tr("{model} is loading. Type your first message now: it goes out as soon as the "
                      "model is ready.").format(model=name or tr("The model"))
        if state == READY:
            if self.writing:
                return tr("{model} continues text. Write the beginning — a sentence, a letter, a list — "
                          "and it writes on. Each continuation shows how fast it came.").format(model=name)
            return tr("{model} is ready: ask it something. Each reply shows how fast it came and how much "
                      "the drafter helped.").format(model=name)
        if state == STOPPING:
            return tr("Stopping the engine…")
        if state == FAILED and self.launch.cause is not None:
            return show(chat.engine_failed(self.launch.cause.sentence).sentence)
        if not self.chosen_name:
            return tr("Choose a model in the library (or get one), launch it, then ask it something.")
        if state == STOPPED:
            return tr("The engine was stopped. Launch {model} again to go on.").format(model=self.chosen_name)
        if self.chosen_base:
            return tr("Launch {model}, then write the beginning of a text: it continues text, it does not "
                      "chat.").format(model=self.chosen_name)
        return tr("Launch {model}, then ask it something. Each reply shows how fast it came and how much "
                  "the drafter helped.").format(model=self.chosen_name)

    def role_text(self, turn: Turn) -> str:
        """Who wrote a turn: "You" and "Model", or in a writing pane "Your text" and
        "Continuation"."""
        if self.writing:
            return tr("Your text") if turn.role == "user" else tr("Continuation")
        return tr("You") if turn.role == "user" else tr("Model")

    def input_hint(self) -> str:
        if self.writing:
            return tr("Write the beginning of a text — Enter continues it, Shift+Enter starts a new line")
        return tr("Type a message — Enter sends, Shift+Enter starts a new line")

    def send_text(self) -> str:
        return tr("Continue") if self.writing else tr("Send")

    def store_problem_text(self) -> str:
        return show(self.store_problem)

    def offers_launch(self) -> bool:
        return self.notice is not None and self.notice.kind == chat.NO_ENGINE and not self.launch.running

    def waiting_for_engine(self) -> bool:
        return self.state == WAITING and self.notice is not None and self.notice.kind == chat.LOADING

    def figures_text(self, turn: Turn) -> str:
        return " · ".join(show(p) for p in chat.figures_line(turn.figures)) if turn.figures else ""

    def note_text(self, turn: Turn) -> str:
        return show(turn.note)

    def titles(self) -> list[str]:
        return [c.title or tr("New chat") for c in self.conversations]

    def current_index(self) -> int:
        return self.conversations.index(self.current)

    def transcript(self, turn: Turn) -> str:
        """What Copy puts on the clipboard: the reply's Markdown as the engine wrote it."""
        return turn.content

    # ---------------------------------------------------------------- the request
    def _new_conversation(self) -> Conversation:
        system = self.current.system_prompt if getattr(self, "current", None) is not None else ""
        conv = Conversation(uuid.uuid4().hex, time.time(), system)
        self.conversations.append(conv)
        return conv

    def _speculative(self) -> bool:
        spec = self.launch.spec
        if spec is None or self.launch.fallback_reason:
            return False
        decision = getattr(spec, "spec", None)
        return bool(decision is not None and (decision.spec_type or decision.argv))

    def _send_pending(self) -> None:
        if not self.pending or self._stream is not None:
            return
        state = self.launch.state
        if state == READY and self.launch.spec is not None:
            self._start_request()
            return
        if state in (STARTING, LOADING):
            self.notice = ChatError(chat.LOADING, chat.error_of_body(None, 503).sentence)
        elif state == FAILED and self.launch.cause is not None:
            self.notice = chat.engine_failed(self.launch.cause.sentence)
        else:
            self.notice = chat.no_engine()
        self._set_state(WAITING)

    def _start_request(self) -> None:
        spec = self.launch.spec
        assert spec is not None
        self.pending = False
        self.notice = None
        options = Options(self.current.system_prompt, self.temperature, self.max_tokens,
                          tuple(self.extra_body.items()))
        # No chat template: continue the text as it is, never through the chat endpoint
        # (whose default template the model would write back as text).
        self._reply_writes = self.base_model
        if self._reply_writes:
            body, path = chat.completion_body(self.current.document(), options), chat.COMPLETION_PATH
        else:
            body, path = chat.request_body(self.current.history(), options), chat.CHAT_PATH
        self._keep_prompt(spec, body)
        self._reply = Turn("assistant")
        self._reply_in = self.current  # the user may switch chats while it streams
        self.current.turns.append(self._reply)
        self.turn_added.emit(len(self.turns) - 1)
        self._buffer, self._timings, self._finish, self._error = [], None, None, None
        self._counted, self._first_token_s = 0, None
        self._stream = self._stream_factory(self)
        self._stream.events.connect(self._on_events)
        self._stream.failed.connect(self._on_failed)
        self._stream.finished.connect(self._on_finished)
        self._clock.start()
        self._set_state(STREAMING)
        self._flush_timer.start()
        self._stream.start(spec.url, spec.api_key, body, path=path)

    def _keep_prompt(self, spec: Any, body: dict[str, Any]) -> None:
        """The user's own request, kept on this computer (the last few per model) so that
        speculation can be measured on their work (core/measuring/learn.py); never sent
        anywhere, and not at all when the user turned that off.

        Not when the engine logs its prompts into Draftwise's folder (`spec.prompt_log`): it
        logs this request too, as the model gets it (after the chat template), which is what
        the measurement should send, and kept twice it would count twice among the last few."""
        if self.settings.keep_prompts and getattr(spec, "prompt_log", None) is None:
            model = getattr(spec, "model_path", None)
            self.store_problem = usage.keep_prompt(model, body, self.usage_path) or self.store_problem

    def set_keep_prompts(self, on: bool) -> None:
        """Off deletes every prompt kept so far and what the engine logged: the box says none
        are kept (an engine started before goes on logging until it is started again, into a
        folder that is gone: it cannot)."""
        self.settings.keep_prompts = on
        self.settings_changed.emit()
        self.keep_prompts_changed.emit()
        if not on:
            self.store_problem = usage.forget_all_prompts(self.usage_path) or self.store_problem
        self.changed.emit()

    def _on_events(self, events: list) -> None:
        for e in events:
            if isinstance(e, chat.Delta):
                if self._first_token_s is None:
                    self._first_token_s = self._clock.elapsed() / 1000.0
                self._counted += 1
                self._buffer.append(e)
            elif isinstance(e, chat.Timings):
                self._timings = e
            elif isinstance(e, chat.Finish):
                self._finish = e.reason
            elif isinstance(e, chat.Failure):
                self._error = e.error

    def _flush(self) -> None:
        reply = self._reply
        if reply is None or not self._buffer:
            return
        reply.content += "".join(d.content for d in self._buffer)
        reply.reasoning += "".join(d.reasoning for d in self._buffer)
        self._buffer = []
        self._updated(reply)

    def _updated(self, turn: Turn) -> None:
        """Tell the view, when the turn is in the conversation it shows."""
        for i, t in enumerate(self.turns):
            if t is turn:
                self.turn_updated.emit(i)
                return

    def _on_failed(self, error: ChatError) -> None:
        self._error = error

    def _on_finished(self) -> None:
        self._flush_timer.stop()
        self._flush()
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.deleteLater()
        reply, self._reply = self._reply, None
        if reply is None:
            return
        error, cancelled = self._error, stream is not None and stream.cancelled
        if error is not None and error.kind == chat.LOADING and not reply.content:
            # 503: the model is still loading. Take the empty reply back and ask again.
            self._reply_in.turns.remove(reply)
            if self._reply_in is self.current:
                self.conversation_changed.emit()
            self.pending = True
            self.notice = error
            self._set_state(WAITING)
            self._retry_timer.start()
            return
        if reply.content or reply.reasoning or self._timings is not None:
            reply.figures = chat.figures(self._timings, first_token_s=self._first_token_s, counted=self._counted,
                                         elapsed_s=self._clock.elapsed() / 1000.0, speculative=self._speculative())
        if cancelled:
            reply.note = chat.stopped_note()
        elif error is not None:
            self._fail_reply(reply, error)
        elif self._finish == "length":
            tokens = reply.figures.tokens if reply.figures else 0
            writes = self._reply_writes
            reply.note = chat.length_note(self.max_tokens, tokens, self._timings, writing=writes)
            # The user's own limit (or a continuation's) is a remark; a full context is a problem.
            limit = self.max_tokens or (chat.WRITE_TOKENS if writes else None)
            reply.problem = not (limit and tokens >= limit)
        self._updated(reply)
        self._set_state(IDLE)
        if self.settings.chat_save:
            self.save()

    def _fail_reply(self, reply: Turn, error: ChatError) -> None:
        reply.problem = True
        if error.kind in (chat.CONNECTION, chat.NO_ENGINE):
            if self.launch.state == FAILED and self.launch.cause is not None:
                reply.note = chat.crashed(self.launch.cause.sentence).sentence
                return
            # The launcher may say why in a moment (the process exit comes after the socket).
            self._cut = (reply, time.monotonic())
            reply.note = chat.cut_note(error.detail) if reply.content else error.sentence
            return
        turns = self._reply_in.turns
        asked = turns[:next((i for i, t in enumerate(turns) if t is reply), len(turns))]
        if asked and asked[-1].role == "user" and asked[-1].pictures and pics.is_refusal(error.detail):
            # Not sent again with the next message; the text stays in the conversation.
            asked[-1].pictures_refused = True
            reply.note = pics.refused(error.detail)
            self.pictures.refused_by_engine(error.detail)
            return
        reply.note = error.sentence

    def _on_launch_state(self, state: str) -> None:
        if state == FAILED and self.launch.cause is not None:
            cut = self._cut
            self._cut = None
            if cut is not None and time.monotonic() - cut[1] <= self.CRASH_WINDOW_S:
                cut[0].note = chat.crashed(self.launch.cause.sentence).sentence
                self._updated(cut[0])
        if self.pending and self._stream is None:
            self._retry_timer.stop()
            self._send_pending()
        self.changed.emit()

    def _set_state(self, state: str) -> None:
        self.state = state
        if state == WAITING:
            self._tick.start()
        else:
            self._tick.stop()
        self.changed.emit()

    # ---------------------------------------------------------------- saving
    def _load_saved(self) -> None:
        loaded = chat_store.load(self.store_path)
        self.store_problem = loaded.problem
        self._save_blocked = loaded.save_blocked
        if loaded.conversations:
            self.conversations[:0] = loaded.conversations

    def save(self) -> str | None:
        """Write the chats (opted in); returns a sentence when that failed."""
        if not self.settings.chat_save or self._save_blocked:
            return None
        try:
            chat_store.save(self.conversations, self.store_path)
        except OSError as exc:
            self.store_problem = chat_store.save_failed(self.store_path or chat_store.chats_path(), exc)
            self.changed.emit()
            return show(self.store_problem)
        return None


def _default_stream(parent: QObject) -> ChatStreamRole:
    from draftwise.services.chat_client import ChatStream

    return ChatStream(parent=parent)
