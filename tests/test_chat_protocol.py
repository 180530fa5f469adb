"""core/chat/protocol.py and core/chat/store.py: the stream as llama-server writes it, errors, figures,
saved chats. Pure Python; the bytes are the pinned engine's format (tools/server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from draftwise.core.chat import protocol as chat
from draftwise.core.chat import store as chat_store
from draftwise.core.chat.protocol import (
    Conversation,
    Delta,
    Done,
    Failure,
    Finish,
    Options,
    ReplyFigures,
    Timings,
    Turn,
)

FIRST = b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],' \
        b'"object":"chat.completion.chunk"}\n\n'


def _chunk(content: str | None = None, *, reasoning: str | None = None, finish: str | None = None,
           timings: dict | None = None) -> bytes:
    delta: dict = {}
    if content is not None:
        delta["content"] = content
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    obj: dict = {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}], "object": "chat.completion.chunk"}
    if timings is not None:
        obj["timings"] = timings
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


TIMINGS = {"cache_n": 0, "prompt_n": 56, "prompt_ms": 11.1, "predicted_n": 20, "predicted_ms": 17.3,
           "predicted_per_second": 1097.6, "draft_n": 51, "draft_n_accepted": 12}


def test_a_stream_in_any_pieces_gives_the_same_events():
    stream = (FIRST + _chunk("Hel") + b": ping\n\n" + _chunk("lo", timings={"predicted_n": 2})
              + _chunk(reasoning="hmm") + _chunk(finish="stop", timings=TIMINGS) + b"data: [DONE]\n\n")
    whole = chat.SseDecoder().feed(stream)
    for size in (1, 3, 7, 64):
        d = chat.SseDecoder()
        pieces = []
        for i in range(0, len(stream), size):
            pieces += d.feed(stream[i:i + size])
        assert pieces + d.close() == whole
    assert [e for e in whole if isinstance(e, Delta)] == [Delta("Hel"), Delta("lo"), Delta("", "hmm")]
    assert Finish("stop") in whole and whole[-1] == Done()
    last = [e for e in whole if isinstance(e, Timings)][-1]
    assert (last.predicted_n, last.draft_n, last.draft_accepted) == (20, 51, 12)


def test_crlf_lines_and_a_last_event_without_blank_line():
    d = chat.SseDecoder()
    events = d.feed(_chunk("a").replace(b"\n", b"\r\n")) + d.feed(b'data: {"choices":[{"delta":{"content":"b"}}]}')
    assert events == [Delta("a")]
    assert d.close() == [Delta("b")]


def test_no_draft_fields_means_nothing_was_drafted():
    t = chat.timings_from_json({"predicted_n": 5, "predicted_ms": 10.0, "predicted_per_second": 500.0})
    assert t is not None and t.draft_n is None and t.draft_accepted is None


def test_an_error_inside_the_stream_and_a_broken_line():
    events = chat.SseDecoder().feed(
        b'data: {"error":{"code":500,"message":"boom","type":"server_error"}}\n\ndata: {not json\n\n')
    assert isinstance(events[0], Failure) and events[0].error.kind == chat.SERVER
    assert "boom" in str(events[0].error.sentence)
    assert isinstance(events[1], Failure) and events[1].error.kind == chat.BAD_REPLY


@pytest.mark.parametrize(("status", "body", "kind", "words"), [
    (401, b'{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}', chat.AUTH, "401"),
    (503, b'{"error":{"message":"Loading model","type":"unavailable_error","code":503}}', chat.LOADING, "loading"),
    (400, b'{"error":{"code":400,"message":"request (600 tokens) exceeds the available context size (512 tokens)",'
          b'"type":"exceed_context_size_error","n_prompt_tokens":600,"n_ctx":512}}', chat.CONTEXT, "600 tokens"),
    (404, b"File Not Found", chat.SERVER, "/v1/chat/completions"),
    (500, b"", chat.SERVER, "HTTP 500"),
])
def test_http_errors_get_a_sentence(status, body, kind, words):
    err = chat.error_of_response(status, body)
    assert err.kind == kind and err.status == status
    assert words in str(err.sentence)


def test_request_body_streams_with_timings_and_honours_options():
    body = chat.request_body([("user", "hi")], Options("Be brief.", 0.0, 64, (("ignore_eos", True),)))
    assert body["stream"] is True and body["timings_per_token"] is True
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert (body["temperature"], body["max_tokens"], body["ignore_eos"]) == (0.0, 64, True)
    plain = chat.request_body([("user", "hi")], Options())
    assert "temperature" not in plain and "max_tokens" not in plain and len(plain["messages"]) == 1



def test_the_chat_never_sends_logit_bias():
    """A request's logit_bias would replace the engine's -l bans for that reply (server-schema.cpp)."""
    body = chat.request_body([("user", "hi")], Options(extra=(("logit_bias", [[5, False]]), ("seed", 1))))
    assert "logit_bias" not in body and body["seed"] == 1
    from pathlib import Path

    # Nor do the stream and the chat's state add one of their own.
    app = Path(chat.__file__).parents[2]
    assert all("logit_bias" not in (app / f).read_text(encoding="utf-8")
               for f in ("services/chat_client.py", "viewmodels/chat.py", "ui/chat_panel.py"))

def test_figures_prefer_the_engines_timings():
    t = chat.timings_from_json(TIMINGS)
    f = chat.figures(t, first_token_s=0.21, counted=19, elapsed_s=1.0, speculative=True)
    assert (f.tokens, f.drafted, f.accepted, f.from_engine) == (20, 51, 12, True)
    line = [str(p) for p in chat.figures_line(f)]
    assert line == ["first token 210 ms", "1097.6 tokens/s", "20 tokens", "drafted 51, accepted 12 (24 %)"]


def test_speculation_on_but_nothing_drafted_is_said():
    t = chat.timings_from_json({"predicted_n": 8, "predicted_ms": 4.0, "predicted_per_second": 2000.0})
    line = [str(p) for p in chat.figures_line(chat.figures(t, first_token_s=1.5, counted=8, elapsed_s=2,
                                                           speculative=True))]
    assert line[-1] == "speculation is on, but nothing was drafted for this reply"
    off = chat.figures(t, first_token_s=1.5, counted=8, elapsed_s=2, speculative=False)
    assert not any("draft" in str(p) for p in chat.figures_line(off))


def test_figures_without_timings_are_counted_here():
    f = chat.figures(None, first_token_s=0.5, counted=10, elapsed_s=1.5, speculative=True)
    assert (f.tokens, f.tokens_per_s, f.from_engine) == (10, 10.0, False)
    assert not any("drafted" in str(p) for p in chat.figures_line(f))


def test_length_says_which_limit():
    t = chat.timings_from_json({"prompt_n": 40, "cache_n": 0, "predicted_n": 472})
    assert "max tokens limit (64)" in str(chat.length_note(64, 64, t))
    assert "filled the model's context (512 tokens)" in str(chat.length_note(None, 472, t))


# ------------------------------------------------------------------ saved chats
def _conversation() -> Conversation:
    return Conversation("c1", 1.0, "sys", [
        Turn("user", "What is MTP?"),
        Turn("assistant", "It **predicts**.", "thinking", ReplyFigures(0.2, 20, 100.0, 10, 5, True, True),
             chat.stopped_note()),
    ])


def test_saved_chats_round_trip(tmp_path: Path):
    path = tmp_path / "chats.json"
    chat_store.save([_conversation(), Conversation("empty", 2.0)], path)
    loaded = chat_store.load(path)
    assert loaded.problem is None and len(loaded.conversations) == 1  # an empty chat is not kept
    c = loaded.conversations[0]
    assert c.system_prompt == "sys" and c.title == "What is MTP?"
    assert c.turns[1].figures == _conversation().turns[1].figures
    assert str(c.turns[1].note) == str(chat.stopped_note()) and c.turns[1].reasoning == "thinking"
    assert not list(tmp_path.glob(".chats.json.*"))  # no temporary file left


@pytest.mark.parametrize(("content", "why"), [
    (b"{not json", "not valid JSON (line 1, column 2)"),
    (b'{"conversations": 3}', "no list of conversations"),
    (b'{"conversations": [{"id": 1}]}', "damaged"),
    (b"\xff\xfe", "not text"),
])
def test_a_corrupt_file_is_set_aside_and_reported(tmp_path: Path, content: bytes, why: str):
    path = tmp_path / "chats.json"
    path.write_bytes(content)
    loaded = chat_store.load(path)
    assert loaded.conversations == [] and why in str(loaded.problem)
    assert loaded.set_aside is not None and loaded.set_aside.read_bytes() == content
    assert loaded.set_aside.name in str(loaded.problem) and not path.exists() and not loaded.save_blocked


# ------------------------------------------------------------------ continuing text (issue 20)
def _text_chunk(text: str, finish: str | None = None, timings: dict | None = None) -> bytes:
    """A /v1/completions stream chunk as the pinned engine writes it (to_json_oaicompat)."""
    obj: dict = {"choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}],
                 "object": "text_completion"}
    if timings is not None:
        obj["timings"] = timings
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def test_a_continuation_stream_reads_like_a_chat_stream():
    stream = _text_chunk(" Paris") + _text_chunk(".", timings={"predicted_n": 2}) \
        + _text_chunk("", finish="length", timings=TIMINGS) + b"data: [DONE]\n\n"
    events = chat.SseDecoder().feed(stream)
    assert [e for e in events if isinstance(e, Delta)] == [Delta(" Paris"), Delta(".")]
    assert Finish("length") in events and events[-1] == Done()
    assert [e for e in events if isinstance(e, Timings)][-1].predicted_n == 20


def test_the_completion_body_is_the_raw_text_with_no_roles_or_template():
    body = chat.completion_body("The capital of France is", Options(system_prompt="Be brief.", temperature=0.5))
    assert body == {"prompt": "The capital of France is", "stream": True, "timings_per_token": True,
                    "max_tokens": chat.WRITE_TOKENS, "temperature": 0.5}
    assert chat.completion_body("x", Options(max_tokens=40))["max_tokens"] == 40
    assert "messages" not in body and "<|im_start|>" not in json.dumps(body)


def test_a_writing_pane_document_joins_the_turns_as_written():
    conv = Conversation("c", 0.0, turns=[Turn("user", "The capital of France is"), Turn("assistant", " Paris.")])
    assert conv.document() == "The capital of France is Paris."
    conv.turns.append(Turn("user", "Its river"))  # typed on: one space, not "Paris.Its"
    assert conv.document() == "The capital of France is Paris. Its river"
    conv.turns += [Turn("assistant", " is the Seine.\n"), Turn("user", "Next line")]
    assert conv.document().endswith("Seine.\nNext line")


def test_a_continuation_stopped_at_its_own_limit_says_how_to_write_on():
    note = chat.length_note(None, chat.WRITE_TOKENS, None, writing=True)
    assert str(note) == f"Wrote {chat.WRITE_TOKENS} tokens; press Continue to write on, or set Max tokens under More."
    assert "context" in str(chat.length_note(None, 12, TIMINGS_OBJ, writing=True))
    assert "max tokens limit (40)" in str(chat.length_note(40, 40, None, writing=True))


TIMINGS_OBJ = chat.timings_from_json(TIMINGS)


def test_a_missing_completion_endpoint_names_it():
    err = chat.error_of_response(404, b"", chat.COMPLETION_PATH)
    assert str(err.sentence) == "This engine has no chat endpoint (/v1/completions)."
