"""Saved chats: one JSON file in the data folder, only when the user opts in.

Written atomically like the settings (`records.write_atomic`). A file that cannot be read
is never overwritten: it is set aside as `chats.json.corrupt-<timestamp>` and the problem is
said in words, so the user's old chats can still be recovered by hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from draftwise.core import paths, records
from draftwise.core.chat.protocol import Conversation
from draftwise.core.messages import Message, msg

FILE_NAME = "chats.json"
VERSION = 1


def chats_path() -> Path:
    return paths.data_dir() / FILE_NAME


@dataclass
class Loaded:
    conversations: list[Conversation] = field(default_factory=list)
    problem: Message | None = None
    set_aside: Path | None = None
    # The unreadable file is still in place: saving would overwrite it.
    save_blocked: bool = False


def load(path: Path | None = None, *, now: float | None = None) -> Loaded:
    path = path or chats_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Loaded()
    except OSError as exc:
        return Loaded(problem=msg("Your saved chats in {path} could not be read ({error}).",
                                  path=str(path), error=exc.strerror or str(exc)), save_blocked=True)
    why: Message | None = None
    items: list[Conversation] = []
    try:
        data = json.loads(raw.decode("utf-8"))
        entries = data.get("conversations") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            why = msg("it holds no list of conversations")
        else:
            parsed = [Conversation.from_json(e) for e in entries]
            if any(c is None for c in parsed):
                why = msg("a conversation in it is damaged")
            items = [c for c in parsed if c is not None]
    except UnicodeDecodeError:
        why = msg("it is not text")
    except json.JSONDecodeError as exc:
        why = msg("it is not valid JSON (line {line}, column {column})", line=exc.lineno, column=exc.colno)
    if why is None:
        return Loaded(items)
    aside = records.set_aside(path, now)
    if aside is None:
        return Loaded(problem=msg("Your saved chats could not be read: {why}. The file could not be moved aside; "
                                  "new chats are not saved over it.", why=why), save_blocked=True)
    return Loaded(problem=msg("Your saved chats could not be read: {why}. The file was set aside as {name}.",
                              why=why, name=aside.name), set_aside=aside)


def save(conversations: Sequence[Conversation], path: Path | None = None) -> Path:
    """Raises OSError when the data folder cannot be written."""
    path = path or chats_path()
    data = {"version": VERSION, "conversations": [c.to_json() for c in conversations if c.turns]}
    records.write_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def save_failed(path: Path, error: OSError) -> Message:
    return msg("Your chats could not be saved to {path}: {error}", path=str(path), error=error.strerror or str(error))
