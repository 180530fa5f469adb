"""Drafters that made an engine fail at startup, remembered across runs.

After a startup fallback the drafter is recorded here, keyed by the engine binary's
identity (path, size, mtime: a new build gets a new chance) and the resolver's drafter key
(path, size, mtime of the drafter and how it is used). The next launch passes
`broken_for(binary)` as `SpecOptions.broken`, so auto-detection leaves the drafter out
without crashing first. A drafter the user forced is never recorded (docs/rules.md,
"Launch and the startup fallback").

The file is small JSON in paths.data_dir(), written atomically. A corrupt file is set
aside (renamed, not deleted) and reported once through `problem`.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.messages import Message, msg
from draftwise.core.settings import move_aside, write_atomic

log = logging.getLogger(__name__)

FILE_NAME = "broken-drafters.json"
VERSION = 1


def engine_identity(binary: Path) -> str:
    """Path, size and mtime of the engine binary: what a rebuild or update changes."""
    try:
        st = binary.stat()
        return f"{binary.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        return str(binary)


@dataclass(frozen=True)
class BrokenDrafter:
    engine: str
    drafter: str
    reason: str
    when: str


class BrokenDrafters:
    """The persistent record. Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / FILE_NAME
        self.problem: Message | None = None  # set when a corrupt file was set aside

    def entries(self) -> list[BrokenDrafter]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = msg("Could not read the broken-drafter record {path}: {error}.", path=str(self.path),
                               error=exc.strerror or str(exc))
            log.warning("%s", self.problem)
            return []
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
                raise ValueError("no entries list")
            return [BrokenDrafter(str(e["engine"]), str(e["drafter"]), str(e.get("reason", "")), str(e.get("when", "")))
                    for e in data["entries"]]
        except (ValueError, KeyError, TypeError) as exc:
            self._set_aside(exc)
            return []

    def _set_aside(self, exc: Exception) -> None:
        try:
            aside = move_aside(self.path)
            self.problem = msg("The broken-drafter record was damaged ({error}); it was set aside as {name} and a "
                               "new one is started.", error=str(exc), name=aside.name)
        except OSError as move_exc:
            self.problem = msg("The broken-drafter record {path} is damaged ({error}) and could not be moved: "
                               "{move_error}.", path=str(self.path), error=str(exc), move_error=str(move_exc))
        log.warning("%s", self.problem)

    def broken_for(self, binary: Path) -> frozenset[str]:
        """Drafter keys to pass as SpecOptions.broken for this engine binary."""
        engine = engine_identity(binary)
        return frozenset(e.drafter for e in self.entries() if e.engine == engine)

    def record(self, binary: Path, drafter_key: str, reason: str) -> None:
        engine = engine_identity(binary)
        entries = [e for e in self.entries() if not (e.engine == engine and e.drafter == drafter_key)]
        entries.append(BrokenDrafter(engine, drafter_key, reason, time.strftime("%Y-%m-%dT%H:%M:%S")))
        self._write(entries)

    def forget(self, binary: Path | None = None, drafter_key: str | None = None) -> int:
        """Drop matching entries (all when both are None); returns how many went."""
        engine = engine_identity(binary) if binary is not None else None
        old = self.entries()
        keep = [e for e in old if not ((engine is None or e.engine == engine)
                                       and (drafter_key is None or e.drafter == drafter_key))]
        if len(keep) != len(old):
            self._write(keep)
        return len(old) - len(keep)

    def _write(self, entries: list[BrokenDrafter]) -> None:
        # Readers see the old file or the new one, never half of one.
        write_atomic(self.path, json.dumps({"version": VERSION, "entries": [e.__dict__ for e in entries]}, indent=1))
