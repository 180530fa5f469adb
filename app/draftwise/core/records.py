"""One JSON record in the data folder, read and written the same way for every store.

The stores — broken drafters (core/speculation/broken.py), speed measurements
(core/measurements/measured.py), ladder rungs (core/launch/ladder_record.py), engine fixes
(core/launch/fixes.py) and the processor speed (core/machine/speed.py) — each keep
`{"version": N, "entries": …}` in `paths.data_dir()` and differ only in what an entry is and
which keys (core/identity.py) they file it under. What happens to the file is decided here,
once (docs/records.md):

- **missing**: no entries; the first write creates it.
- **unreadable** (permissions, a folder in its place): no entries, the file is left alone and
  nothing is written over it; `problem` says so.
- **damaged** (not UTF-8 JSON, no version or entries, an entry this version cannot read): set
  aside as `NAME.corrupt-<time>` — never deleted, never overwritten, the name the settings
  file uses (`move_aside`) — and a new one is started; `problem` names the copy.
- **from a newer Draftwise** (a higher version): left untouched and never overwritten, so that
  version finds it again; nothing is read from it (its entries may mean something else now);
  `problem` says so, and a write raises `NotWritten`.
- **from an older version**: the store's `parse` gets the version and reads it (the place for
  a migration; every store is at version 1 so far).
- **writes**: atomic (`write_atomic`: a temporary file in the same folder, flushed and synced,
  renamed over the old one), so a reader sees the old file or the new one, never half.

Problems are `Message`s, shown translated at the edge. Sentences kept in entries (why a fix
or a rung was needed, why a drafter is on the broken list) are stored as message data beside
their English (`sentence_to_json` / `sentence_from_json`); an entry written before that holds
the English only, and reads back as the message it came from when a known template gives
exactly that English (messages.from_english), else as the text.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

from draftwise.core.messages import Message, Text, from_data, from_english, msg, to_data

log = logging.getLogger(__name__)

T = TypeVar("T")


class NotWritten(OSError):
    """A record that must not be written over (a newer version's, an unreadable one).
    An OSError, so every caller that already turns a failed write into a notice does so."""

    def __init__(self, message: Message) -> None:
        super().__init__(str(message))
        self.message = message


def write_error(exc: OSError) -> Text:
    """What a failed record write says, for a notice: the message of a record that must not be
    written over, else the system's words."""
    return exc.message if isinstance(exc, NotWritten) else exc.strerror or str(exc)


class JsonRecord(Generic[T]):
    """One versioned JSON file of entries.

    `what`: the record in words, for its problems (`msg("broken-drafter record")`);
    `parse(entries, version)` turns the stored entries into the store's value and raises
    ValueError/KeyError/TypeError for what it cannot read (the file is then damaged);
    `dump(value)` gives the JSON entries back; `empty()` is the value of no file.
    `container`: the key the entries are under (`entries`; the helper record says `helpers`)."""

    def __init__(self, path: Path, what: Message, version: int, *, parse: Callable[[Any, int], T],
                 dump: Callable[[T], Any], empty: Callable[[], T], container: str = "entries") -> None:
        self.path = path
        self.what = what
        self.version = version
        self.container = container
        self._parse, self._dump, self._empty = parse, dump, empty
        self.problem: Message | None = None  # the last read's, until one reads well
        self._keep: Message | None = None  # why the file must not be written over, when it must not

    def read(self) -> T:
        """The entries (empty when there is no usable file; see the policy above)."""
        self._keep = None
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return self._empty()
        except OSError as exc:
            self.problem = self._keep = msg("Could not read the {what} {path}: {error}.", what=self.what,
                                            path=str(self.path), error=exc.strerror or str(exc))
            log.warning("%s", self.problem)
            return self._empty()
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("it does not hold an object")
            version = data.get("version")
            if not isinstance(version, int) or isinstance(version, bool):
                raise ValueError(f"no version number ({version!r})")
            if version > self.version:
                self.problem = self._keep = msg(
                    "The {what} {path} was written by a newer Draftwise (version {found}; this one reads {known}): "
                    "it is left as it is and not used. Update Draftwise to use it again.",
                    what=self.what, path=str(self.path), found=version, known=self.version)
                log.warning("%s", self.problem)
                return self._empty()
            if self.container not in data:
                raise ValueError(f"no {self.container}")
            value = self._parse(data[self.container], version)
        except UnicodeDecodeError:
            return self._set_aside(msg("it is not text"))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return self._set_aside(str(exc) or type(exc).__name__)
        self.problem = None
        return value

    def update(self, change: Callable[[T], T | None]) -> T:
        """Read, change, write back atomically; `change` returning None writes nothing.
        Raises OSError when the file cannot be written, NotWritten when it must not be."""
        value = self.read()
        new = change(value)
        if new is None:
            return value
        if self._keep is not None:
            raise NotWritten(self._keep)
        write_atomic(self.path, json.dumps({"version": self.version, self.container: self._dump(new)}, indent=1,
                                           ensure_ascii=False) + "\n")
        return new

    def _set_aside(self, why: Text) -> T:
        try:
            aside = move_aside(self.path)
        except OSError as exc:
            self.problem = self._keep = msg(
                "The {what} {path} is damaged ({error}) and could not be moved: {move_error}.", what=self.what,
                path=str(self.path), error=why, move_error=exc.strerror or str(exc))
        else:
            self.problem = msg("The {what} was damaged ({error}); it was set aside as {name} and a new one is "
                               "started.", what=self.what, error=why, name=aside.name)
        log.warning("%s", self.problem)
        return self._empty()


def _keyed_entries(entries: Any, _version: int) -> dict[str, Any]:
    if not isinstance(entries, dict):
        raise ValueError("no entries object")
    return entries


def keyed_record(path: Path, what: Message, version: int) -> JsonRecord[dict[str, Any]]:
    """A record whose entries are one JSON object keyed by a string (the speed probe's, the
    workers' links): an entry the store cannot read is measured again, not a damaged file."""
    return JsonRecord(path, what, version, parse=_keyed_entries, dump=lambda entries: entries, empty=dict)


class Store:
    """What every store on one JsonRecord answers the same way: its file, and what could not
    be read of it. A store sets `record_file` in its constructor."""

    record_file: JsonRecord[Any]

    @property
    def path(self) -> Path:
        return self.record_file.path

    @property
    def problem(self) -> Message | None:
        """Set when the file could not be read, was set aside, or is a newer version's."""
        return self.record_file.problem


# ------------------------------------------------------------------ sentences in entries
def sentence_to_json(text: Text) -> dict[str, Any]:
    """The fields an entry keeps for a sentence: `reason` in English (for people reading the
    file, and for an earlier Draftwise), `reason_message` to show it translated."""
    out: dict[str, Any] = {"reason": str(text)}
    if isinstance(text, Message):
        out["reason_message"] = to_data(text)
    return out


def sentence_from_json(entry: dict[str, Any]) -> Text:
    """The sentence an entry keeps: its message, or (an entry from before messages were
    stored) the English, recognised as its message when a known template gives exactly it.
    ValueError for a stored message that is not one."""
    stored = entry.get("reason_message")
    if stored is not None:
        m = from_data(stored)
        if isinstance(m, Message):
            return m
    return from_english(str(entry.get("reason", "")))


# ------------------------------------------------------------------ files
def write_atomic(path: Path, text: str) -> None:
    """A temporary file in the same folder, flushed, renamed over `path`: a crash mid-write
    never leaves half a file. Raises OSError when the folder cannot be written. The one
    atomic write of Draftwise's own files (records, settings, chats, run files, caches)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            log.debug("could not remove %s", tmp)
        raise


def move_aside(path: Path, now: float | None = None) -> Path:
    """Move an unreadable file out of the way as `NAME.corrupt-<timestamp>` (a `-2`, `-3`…
    suffix rather than overwrite an earlier one the user may want back). Raises OSError when
    it cannot be moved."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(time.time() if now is None else now))
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, target)
    return target


def set_aside(path: Path, now: float | None = None) -> Path | None:
    """`move_aside`, or None when the file could not be moved (logged)."""
    try:
        return move_aside(path, now)
    except OSError as exc:
        log.warning("could not set aside %s: %s", path, exc)
        return None
