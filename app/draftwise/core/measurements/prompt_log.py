"""The engine's own log of the prompts it serves, turned into the user's kept prompts.

With the user's consent (`Settings.keep_prompts`, the chat's box), every engine Draftwise
starts for the user — `draftwise launch`, the window's launch, each model `serve` runs — gets
`--log-prompts-dir FOLDER` (core/launch/llamacpp.py `build_options`, Draftwise's own option),
FOLDER being `folder(store, model)`: `prompt-log/<model key>` (usage.PROMPT_LOG) beside the prompts record. The
pinned engine then writes, for every completion and chat request, one file `%012d.txt` holding
the prompt as the model gets it — a chat request after its chat template, the rendered text
(tools/server/server-context.cpp `handle_completions_impl`; the number is `ggml_time_ms()`, a
monotonic clock, so the files are ordered by their time of writing, not by that number across
engine starts). So requests from any program through the API — an editor, an agent, a
script, the served library — are kept as the window chat's are, and measured on
(core/measuring/learn.py) as the model really saw them.

The engine never deletes those files: `ingest` does. It reads the newest `KEEP_PROMPTS` (each
its last `FILE_BYTES` only: the size cap, enough for `PROMPT_CHARS` characters), keeps them
(`UsageRecords.add_prompts`: the last 20 per model, each cut to PROMPT_CHARS) and deletes every
file it saw, read or not, so the folder holds at most what came since the last ingestion. It
runs when requests finish (the launch's `usage.Keeper`), when a launch starts and when it ends
(`serve`: on its watch of the router, and at its start and end). With consent withdrawn it
deletes without reading. Nothing here sends anything anywhere.

`clear` deletes the folders: `draftwise prompts --clear`, and unticking the box
(`usage.forget_all_prompts`, which also deletes the kept prompts; the next launch no longer passes the option, and an engine started
before cannot write into a folder that is gone).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import identity
from draftwise.core.measurements.usage import KEEP_PROMPTS, PROMPT_CHARS, UsageRecords, remove_tree
from draftwise.core.messages import Message, msg
from draftwise.core.records import write_error

log = logging.getLogger(__name__)

SUFFIX = ".txt"  # the engine's `%012d.txt`
# The size cap: the most of one file read, its end (what the model continues from). A UTF-8
# character is at most 4 bytes, so the last PROMPT_CHARS characters lie within it.
FILE_BYTES = PROMPT_CHARS * 4
# A file written this recently may be one the engine is still writing (another request
# arriving as one finishes): left for the next ingestion, unless the engine has stopped.
SETTLE_S = 1.0
# The engine writes a prompt that is not text (token ids, several prompts, a multimodal
# object) as JSON indented by 2 (`prompt.dump(2)`): "[\n" or "{\n" first.
_JSON_DUMP = (b"[\n", b"{\n")
_TOKEN_IDS = re.compile(r"^[\s\d,\[\]-]*$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def root(store: UsageRecords) -> Path:
    """The folder of every model's prompt log: beside the prompts record."""
    return store.prompt_log


def key(model: Path | str) -> str:
    """A stable folder name per model: its file name made safe (to read it), and a hash of its
    path (`identity.path_key`, as the kept prompts are filed) so that two files of one name differ.
    Only letters, digits, `.`, `_`, `-`: the name goes into an engine argument and a preset file."""
    path = identity.path_key(model)
    stem = _UNSAFE.sub("-", Path(path).stem).strip("-.")[:40] or "model"
    return f"{stem}-{hashlib.sha256(path.encode('utf-8')).hexdigest()[:12]}"


def folder(store: UsageRecords, model: Path | str) -> Path:
    """Where the engine logs `model`'s prompts."""
    return root(store) / key(model)


def _read(path: Path) -> tuple[str, ...]:
    """The prompt(s) one logged file holds: its last FILE_BYTES as text; a JSON dump read whole
    for its text prompts (token ids are no text to measure on)."""
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        start = max(0, size - FILE_BYTES)
        f.seek(0)
        first = f.read(2)
        f.seek(start)
        data = f.read(FILE_BYTES)
    if first in _JSON_DUMP:
        if start > 0:
            return ()  # a dump too large to read whole: no text prompt to keep either way
        try:
            value = json.loads(data)
        except ValueError:
            value = data.decode("utf-8", errors="ignore")
        items = value if isinstance(value, list) else [value]
        texts = (i if isinstance(i, str) else i.get("prompt_string") if isinstance(i, dict) else None for i in items)
        return tuple(t[-PROMPT_CHARS:] for t in texts if isinstance(t, str))
    text = data.decode("utf-8", errors="ignore")  # a character cut at the start is dropped
    return () if _TOKEN_IDS.match(text) else (text[-PROMPT_CHARS:],)


def ingest(store: UsageRecords, model: Path | str, *, keep: bool, final: bool = False,
           now: float | None = None) -> int:
    """Keep the newest logged prompts of `model` (none when `keep` is False) and delete every
    logged file seen; the number of prompts kept. `final`: the engine has stopped, so even a
    file written a moment ago is complete. OSError when the kept prompts cannot be written
    (the files are deleted all the same: the folder must not grow)."""
    where = folder(store, model)
    try:
        with os.scandir(where) as found:
            entries = [e for e in found if e.name.endswith(SUFFIX) and e.is_file(follow_symlinks=False)]
    except FileNotFoundError:
        return 0
    files: list[tuple[int, str, Path]] = []
    settled = ((time.time() if now is None else now) - SETTLE_S) * 1e9
    for e in entries:
        try:
            written = e.stat(follow_symlinks=False).st_mtime_ns
        except FileNotFoundError:
            continue
        if final or written <= settled:
            files.append((written, e.name, Path(e.path)))
    files.sort()  # oldest first: the kept prompts end with the latest
    texts: list[str] = []
    try:
        for _written, _name, path in files[-KEEP_PROMPTS:] if keep else ():
            try:
                texts += _read(path)
            except OSError as exc:
                log.info("a logged prompt could not be read (%s): %s", path, exc)
        # Each once, at its latest place: a client sending one prompt again moves it last.
        texts = list(reversed(dict.fromkeys(reversed(texts))))[-KEEP_PROMPTS:]
        if texts:
            store.add_prompts(model, tuple(texts))
    finally:
        for _written, _name, path in files:
            try:
                path.unlink(missing_ok=True)
            except OSError as exc:  # the engine still has it open (Windows): the next ingestion
                log.info("a logged prompt could not be deleted yet (%s): %s", path, exc)
    return len(texts)


def clear(store: UsageRecords, model: Path | str | None = None) -> None:
    """Delete the prompt log of `model`, or every model's (None). OSError when it cannot be."""
    remove_tree(folder(store, model) if model is not None else root(store))


def not_kept(exc: OSError) -> Message:
    """Said (once) when the logged prompts could not be kept."""
    return msg("Your prompts could not be kept for measuring on your own work ({error}).", error=write_error(exc))


@dataclass(frozen=True)
class Ingest:
    """One launch's ingestion, for its `usage.Keeper` (made only where the launch's engine logs
    into Draftwise's folder, `LaunchSpec.prompt_log`): the store, the model, and the user's
    consent as it is now (asked each time: the box may be unticked while the engine runs)."""

    store: UsageRecords
    model: Path
    consent: Callable[[], bool]

    def __call__(self, final: bool) -> Message | None:
        """Ingest; the sentence to say once when the kept prompts cannot be written."""
        try:
            ingest(self.store, self.model, keep=self.consent(), final=final)
        except OSError as exc:
            return not_kept(exc)
        return None
