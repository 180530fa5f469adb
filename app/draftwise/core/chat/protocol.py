"""The chat protocol of llama-server's `/v1/chat/completions`, and its text-continuation twin
`/v1/completions` for models without a chat template, as data (no Qt, no sockets).

Bytes of a server-sent-event stream go in, events come out: `Delta` (content and reasoning
text), `Finish` (finish_reason), `Timings` (the engine's own figures), `Failure` (an error
inside the stream) and `Done` (`data: [DONE]`). The service that owns the socket only feeds
bytes; every decision about what the bytes mean lives here and is tested without an engine.

What the pinned engine sends (tools/server/server-task.cpp, server-context.cpp):
- a first chunk with `{"role": "assistant", "content": null}`, then one chunk per token with
  `delta.content` or `delta.reasoning_content`;
- `timings` on the chunk that ends the reply (and, when the request asks for
  `timings_per_token`, on every chunk — so a reply cut short still has the engine's figures);
  `draft_n` / `draft_n_accepted` appear in `timings` only when something was drafted;
- `finish_reason` "stop" or "length" (max_tokens reached, or the context is full);
- an error before the first token as a plain HTTP error (401, 503 "Loading model", 400
  `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`); an error after it as
  `data: {"error": {...}}` and the end of the stream.

A model without a chat template (a base model) is not sent through the chat endpoint: the
engine would wrap the text in its default template and the model would write the template's
tokens back (`<|im_end|>`, `<|im_start|>`). It is continued through `/v1/completions` with
the raw text as `prompt` (tokenized with BOS, no template): the same stream, one chunk per
token with `choices[0].text`, `finish_reason`, `timings` (per token with
`timings_per_token`) and `data: [DONE]` at the end (server-context.cpp,
handle_completions_impl with TASK_RESPONSE_TYPE_OAI_CMPL). The legacy `/completion` has no
`[DONE]` and another shape, so it is not used.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from draftwise.core.chat import pictures as pics
from draftwise.core.messages import Message, Text, msg

CHAT_PATH = "/v1/chat/completions"
COMPLETION_PATH = "/v1/completions"  # continuing text for a model without a chat template
# A continuation with no max tokens set stops here: a base model rarely ends on its own and
# would write until the context is full. "Continue" writes on from where it stopped.
WRITE_TOKENS = 256

# Error kinds, for the view-model to choose what to offer (Launch, wait, nothing).
NO_ENGINE, LOADING, AUTH, CONTEXT, CONNECTION, CRASHED, SERVER, BAD_REPLY = (
    "no-engine", "loading", "auth", "context", "connection", "crashed", "server", "bad-reply",
)


# ------------------------------------------------------------------ events
@dataclass(frozen=True)
class Delta:
    content: str = ""
    reasoning: str = ""


@dataclass(frozen=True)
class Finish:
    reason: str  # stop | length | tool_calls | ...


@dataclass(frozen=True)
class Timings:
    """The engine's `timings` object (server_slot_stats::to_json)."""

    prompt_n: int = 0
    prompt_ms: float = 0.0
    cache_n: int = 0
    predicted_n: int = 0
    predicted_ms: float = 0.0
    predicted_per_second: float | None = None
    draft_n: int | None = None  # absent when nothing was drafted
    draft_accepted: int | None = None


@dataclass(frozen=True)
class ChatError:
    kind: str
    sentence: Message
    status: int | None = None
    detail: str = ""  # the engine's own words, shown as they are


@dataclass(frozen=True)
class Failure:
    error: ChatError


@dataclass(frozen=True)
class Done:
    pass


Event = Delta | Finish | Timings | Failure | Done


def timings_from_json(data: Any) -> Timings | None:
    if not isinstance(data, dict):
        return None

    def num(key: str, kind: type = float) -> Any:
        v = data.get(key)
        return kind(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    draft_n = num("draft_n", int)
    return Timings(
        prompt_n=num("prompt_n", int) or 0,
        prompt_ms=num("prompt_ms") or 0.0,
        cache_n=num("cache_n", int) or 0,
        predicted_n=num("predicted_n", int) or 0,
        predicted_ms=num("predicted_ms") or 0.0,
        predicted_per_second=num("predicted_per_second"),
        draft_n=draft_n,
        draft_accepted=num("draft_n_accepted", int) if draft_n is not None else None,
    )


def events_of_chunk(obj: Any) -> list[Event]:
    """The events in one decoded `data:` JSON object."""
    if not isinstance(obj, dict):
        return [Failure(ChatError(BAD_REPLY, msg("The engine sent a reply Draftwise cannot read.")))]
    if "error" in obj:
        return [Failure(error_of_body(obj, None))]
    out: list[Event] = []
    choices = obj.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = choices[0]
        delta = choice.get("delta")
        text = choice.get("text")  # /v1/completions: the continuation's next piece
        if isinstance(text, str) and text:
            out.append(Delta(text))
        if isinstance(delta, dict):
            content = delta.get("content")
            reasoning = delta.get("reasoning_content")
            content = content if isinstance(content, str) else ""
            reasoning = reasoning if isinstance(reasoning, str) else ""
            if content or reasoning:
                out.append(Delta(content, reasoning))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            out.append(Finish(reason))
    timings = timings_from_json(obj.get("timings"))
    if timings is not None:
        out.append(timings)
    return out


class SseDecoder:
    """Server-sent events from arbitrary byte pieces (lines may be cut anywhere)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        out: list[Event] = []
        while True:
            cut = self._buffer.find(b"\n")
            if cut < 0:
                break
            line = self._buffer[:cut].rstrip(b"\r").decode("utf-8", "replace")
            self._buffer = self._buffer[cut + 1:]
            out += self._line(line)
        return out

    def close(self) -> list[Event]:
        """The stream ended: a last event without its blank line still counts."""
        out = self.feed(b"\n") if self._buffer else []
        return out + self._dispatch()

    def _line(self, line: str) -> list[Event]:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return []  # a comment: the engine's keep-alive ping
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return []

    def _dispatch(self) -> list[Event]:
        if not self._data:
            return []
        text = "\n".join(self._data)
        self._data = []
        if text.strip() == "[DONE]":
            return [Done()]
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return [Failure(ChatError(BAD_REPLY, msg("The engine sent a reply Draftwise cannot read."),
                                      detail=text[:200]))]
        return events_of_chunk(obj)


# ------------------------------------------------------------------ requests
@dataclass(frozen=True)
class Options:
    system_prompt: str = ""
    temperature: float | None = None  # None: the engine's default
    max_tokens: int | None = None  # None: until the model stops or the context is full
    # Further engine parameters, passed as they are (e.g. {"ignore_eos": true}, {"seed": 1}).
    extra: tuple[tuple[str, Any], ...] = ()


def request_body(messages: list[tuple[str, Any]], options: Options) -> dict[str, Any]:
    """The JSON body for `(role, content)` turns, streamed, with per-token timings. A content
    is text, or a list of parts with pictures (`core.chat.pictures.content`)."""
    turns = [{"role": "system", "content": options.system_prompt}] if options.system_prompt.strip() else []
    turns += [{"role": role, "content": content} for role, content in messages]
    body: dict[str, Any] = {
        "messages": turns,
        "stream": True,
        # Figures for a reply that is stopped or cut short, too (the last chunk that came).
        "timings_per_token": True,
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    if options.max_tokens:
        body["max_tokens"] = options.max_tokens
    for key, value in options.extra:
        if key in NEVER_SENT:
            continue
        body.setdefault(key, value)
    return body


# A request's own `logit_bias` replaces the engine's command-line list for that request
# (tools/server/server-schema.cpp clears it), dropping the bans a drafter pairing needs
# (core/speculation/pairing.py): the engine would then die mid-reply. The chat never sends one.
NEVER_SENT = frozenset({"logit_bias"})


def completion_body(text: str, options: Options) -> dict[str, Any]:
    """The JSON body for continuing `text` as it is (`/v1/completions`): no roles, no
    template, no system prompt; streamed with per-token timings, at most `WRITE_TOKENS` new
    tokens unless the user chose a limit."""
    body: dict[str, Any] = {
        "prompt": text,
        "stream": True,
        "timings_per_token": True,
        "max_tokens": options.max_tokens or WRITE_TOKENS,
    }
    if options.temperature is not None:
        body["temperature"] = options.temperature
    for key, value in options.extra:
        if key not in NEVER_SENT:  # as in the chat's body: the bans stay the engine's
            body.setdefault(key, value)
    return body


# ------------------------------------------------------------------ errors
def error_of_body(obj: Any, status: int | None, path: str = CHAT_PATH) -> ChatError:
    """An error answer (`{"error": {...}}` or anything else) with its HTTP status."""
    err = obj.get("error") if isinstance(obj, dict) else None
    err = err if isinstance(err, dict) else {}
    kind_text = str(err.get("type") or "")
    message = str(err.get("message") or "")
    code = err.get("code")
    status = status if status is not None else (code if isinstance(code, int) else None)
    if status == 401 or kind_text == "authentication_error":
        return ChatError(AUTH, msg(
            "The engine refused Draftwise's API key (401). It was probably started by another "
            "program or with another key; stop it and launch the model from Draftwise."), status, message)
    if status == 503 or kind_text == "unavailable_error":
        return ChatError(LOADING, msg("The model is still loading; your message goes out as soon as it is ready."),
                         status, message)
    if kind_text == "exceed_context_size_error":
        n_prompt, n_ctx = err.get("n_prompt_tokens"), err.get("n_ctx")
        if isinstance(n_prompt, int) and isinstance(n_ctx, int):
            sentence = msg("The conversation ({used} tokens) no longer fits the model's context of {ctx} tokens. "
                           "Start a new chat, or launch with a longer context.", used=n_prompt, ctx=n_ctx)
        else:
            sentence = msg("The conversation no longer fits the model's context. "
                           "Start a new chat, or launch with a longer context.")
        return ChatError(CONTEXT, sentence, status, message)
    if status == 404:
        return ChatError(SERVER, msg("This engine has no chat endpoint ({path}).", path=path), status, message)
    if message:
        return ChatError(SERVER, msg("The engine answered with an error: {error}", error=message), status, message)
    return ChatError(SERVER, msg("The engine answered with HTTP {status}.", status=status or 0), status, message)


def error_of_response(status: int | None, body: bytes, path: str = CHAT_PATH) -> ChatError:
    try:
        obj = json.loads(body.decode("utf-8", "replace")) if body.strip() else None
    except json.JSONDecodeError:
        obj = None
    return error_of_body(obj, status, path)


def connection_error(detail: str) -> ChatError:
    return ChatError(CONNECTION, msg("The connection to the engine was lost ({error}).", error=detail), detail=detail)


def refused_error(detail: str) -> ChatError:
    return ChatError(NO_ENGINE, msg("The engine does not answer ({error}). Launch the model again.", error=detail),
                     detail=detail)


def no_engine() -> ChatError:
    return ChatError(NO_ENGINE, msg("No engine is running. Launch a model to chat with it."))


def crashed(cause: Text) -> ChatError:
    return ChatError(CRASHED, msg("The engine stopped while replying: {cause}", cause=cause))


def engine_failed(cause: Text) -> ChatError:
    """Waiting for an engine that ended instead of becoming ready."""
    return ChatError(NO_ENGINE, msg("The engine stopped: {cause} Launch the model again to chat.", cause=cause))


def stopped_note() -> Message:
    return msg("Stopped; the reply so far is kept.")


def cut_note(detail: str) -> Message:
    return msg("The reply was cut short ({error}); what arrived is kept.", error=detail or "closed")


def length_note(max_tokens: int | None, generated: int, timings: Timings | None, *,
                writing: bool = False) -> Message:
    """finish_reason "length": the max-tokens limit, or the context filled up. `writing`: a
    continuation, which stops at `WRITE_TOKENS` unless the user set a limit."""
    if writing and not max_tokens and generated >= WRITE_TOKENS:
        return msg("Wrote {n} tokens; press Continue to write on, or set Max tokens under More.", n=generated)
    if max_tokens and generated >= max_tokens:
        return msg("The reply stopped at the max tokens limit ({n}); raise it under More for longer replies.",
                   n=max_tokens)
    if timings is not None and timings.prompt_n + timings.cache_n + timings.predicted_n > 0:
        used = timings.prompt_n + timings.cache_n + timings.predicted_n
        return msg("The reply stopped because the conversation filled the model's context ({used} tokens). "
                   "Start a new chat, or launch with a longer context.", used=used)
    return msg("The reply stopped because the conversation filled the model's context. "
               "Start a new chat, or launch with a longer context.")


# ------------------------------------------------------------------ figures
@dataclass(frozen=True)
class ReplyFigures:
    """What one reply cost, for the quiet line under it."""

    first_token_s: float | None = None
    tokens: int = 0
    tokens_per_s: float | None = None
    drafted: int | None = None
    accepted: int | None = None
    speculative: bool = False  # speculation was on for this engine
    from_engine: bool = False  # tokens and speed are the engine's own (timings), not counted here

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("first_token_s", "tokens", "tokens_per_s", "drafted", "accepted",
                                               "speculative", "from_engine")}

    @classmethod
    def from_json(cls, data: Any) -> ReplyFigures | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                first_token_s=_opt_float(data.get("first_token_s")), tokens=int(data.get("tokens") or 0),
                tokens_per_s=_opt_float(data.get("tokens_per_s")), drafted=_opt_int(data.get("drafted")),
                accepted=_opt_int(data.get("accepted")), speculative=bool(data.get("speculative")),
                from_engine=bool(data.get("from_engine")),
            )
        except (TypeError, ValueError):
            return None


def _opt_float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _opt_int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def figures(timings: Timings | None, *, first_token_s: float | None, counted: int,
            elapsed_s: float | None, speculative: bool) -> ReplyFigures:
    """The engine's figures when it sent them; otherwise what the client counted."""
    if timings is not None and timings.predicted_n > 0:
        rate = timings.predicted_per_second
        if rate is None and timings.predicted_ms > 0:
            rate = timings.predicted_n * 1000.0 / timings.predicted_ms
        return ReplyFigures(first_token_s, timings.predicted_n, rate, timings.draft_n, timings.draft_accepted,
                       speculative, True)
    rate = None
    if counted and elapsed_s and first_token_s is not None and elapsed_s > first_token_s:
        rate = counted / (elapsed_s - first_token_s)
    return ReplyFigures(first_token_s, counted, rate, None, None, speculative, False)


def _seconds(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s"


def figures_line(f: ReplyFigures) -> list[Message]:
    """The parts of the line under a reply, in order."""
    parts: list[Message] = []
    if f.first_token_s is not None:
        parts.append(msg("first token {time}", time=_seconds(f.first_token_s)))
    if f.tokens_per_s is not None:
        parts.append(msg("{rate} tokens/s", rate=f"{f.tokens_per_s:.1f}"))
    parts.append(msg("{n} tokens", n=f.tokens))
    if f.drafted:
        accepted = f.accepted or 0
        parts.append(msg("drafted {drafted}, accepted {accepted} ({share} %)", drafted=f.drafted,
                         accepted=accepted, share=f"{100.0 * accepted / f.drafted:.0f}"))
    elif f.speculative and f.from_engine:
        parts.append(msg("speculation is on, but nothing was drafted for this reply"))
    return parts


# ------------------------------------------------------------------ the conversation
@dataclass
class Turn:
    role: str  # user | assistant
    content: str = ""
    reasoning: str = ""
    figures: ReplyFigures | None = None
    note: Message | None = None  # stopped, cut short, crashed, length...
    problem: bool = False  # the note is a failure, not a quiet remark
    pictures: list[pics.Picture] = field(default_factory=list)  # attached to a user turn
    pictures_refused: bool = False  # the engine could not use them: not sent again

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.pictures:
            out["pictures"] = [{"name": p.name, "mime": p.mime, "data": base64.b64encode(p.data).decode("ascii")}
                               for p in self.pictures]
            out["pictures_refused"] = self.pictures_refused
        if self.reasoning:
            out["reasoning"] = self.reasoning
        if self.figures is not None:
            out["figures"] = self.figures.to_json()
        if self.note is not None:
            out["note"] = str(self.note)
            out["problem"] = self.problem
        return out

    @classmethod
    def from_json(cls, data: Any) -> Turn | None:
        if not isinstance(data, dict) or data.get("role") not in ("user", "assistant"):
            return None
        content, reasoning, note = data.get("content"), data.get("reasoning", ""), data.get("note")
        if not isinstance(content, str) or not isinstance(reasoning, str):
            return None
        return cls(data["role"], content, reasoning, ReplyFigures.from_json(data.get("figures")),
                   Message(note) if isinstance(note, str) and note else None, bool(data.get("problem")),
                   _pictures_from_json(data.get("pictures")), bool(data.get("pictures_refused")))

    def sent_content(self) -> Any:
        """What the engine gets for this turn: its text, with its pictures as parts."""
        if self.role != "user" or self.pictures_refused:
            return self.content
        return pics.content(self.content, self.pictures)


def _pictures_from_json(data: Any) -> list[pics.Picture]:
    out = []
    for p in data if isinstance(data, list) else []:
        if isinstance(p, dict) and isinstance(p.get("data"), str) and isinstance(p.get("mime"), str):
            try:
                out.append(pics.Picture(str(p.get("name") or ""), p["mime"], base64.b64decode(p["data"])))
            except ValueError:
                continue  # a damaged entry: the text of the turn is still worth keeping
    return out


@dataclass
class Conversation:
    id: str
    created: float
    system_prompt: str = ""
    turns: list[Turn] = field(default_factory=list)

    @property
    def title(self) -> str:
        first = next((t.content for t in self.turns if t.role == "user" and t.content.strip()), "")
        line = " ".join(first.split())
        return line[:60] + ("…" if len(line) > 60 else "")

    def history(self) -> list[tuple[str, Any]]:
        """What the engine is sent: every turn with text or pictures (a failed reply's partial
        text too)."""
        return [(t.role, t.sent_content()) for t in self.turns
                if t.content or (t.pictures and not t.pictures_refused)]

    def document(self) -> str:
        """A writing pane's text so far, as one piece to continue: every turn's text joined as
        it is (the model's continuation goes on right where the text before it stopped). Text
        the person adds after a continuation gets one space before it when neither side has
        one, so two words never run together."""
        out = ""
        for t in self.turns:
            if not t.content:
                continue
            if t.role == "user" and out and not out[-1].isspace() and not t.content[0].isspace():
                out += " "
            out += t.content
        return out

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "system_prompt": self.system_prompt,
                "turns": [t.to_json() for t in self.turns]}

    @classmethod
    def from_json(cls, data: Any) -> Conversation | None:
        if not isinstance(data, dict) or not isinstance(data.get("id"), str):
            return None
        created = data.get("created")
        system = data.get("system_prompt", "")
        turns = data.get("turns")
        if not isinstance(created, (int, float)) or not isinstance(system, str) or not isinstance(turns, list):
            return None
        parsed = [Turn.from_json(t) for t in turns]
        if any(t is None for t in parsed):
            return None
        return cls(data["id"], float(created), system, [t for t in parsed if t is not None])
