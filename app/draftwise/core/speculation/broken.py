"""Drafters that made an engine fail at startup, remembered across runs.

After a startup fallback the drafter is recorded here, keyed by the engine build
(`identity.engine_build_key`: a new build gets a new chance) and the resolver's drafter key
(path, size, mtime of the drafter and how it is used). The next launch passes
`broken_for(binary)` as `SpecOptions.broken`, so auto-detection leaves the drafter out
without crashing first. A drafter the user forced is never recorded (docs/rules.md,
"Launch and the startup fallback").

`broken-drafters.json` in paths.data_dir(), one `records.JsonRecord` (docs/records.md: a
damaged file set aside, a newer one left alone, atomic writes). The reason is kept as a
message beside its English.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.identity import engine_build_key
from draftwise.core.messages import Text, msg
from draftwise.core.records import JsonRecord, Store, sentence_from_json, sentence_to_json

log = logging.getLogger(__name__)

FILE_NAME = "broken-drafters.json"
VERSION = 1


@dataclass(frozen=True)
class BrokenDrafter:
    engine: str
    drafter: str
    reason: Text
    when: str

    def to_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "drafter": self.drafter, **sentence_to_json(self.reason), "when": self.when}

    @classmethod
    def from_json(cls, e: Any) -> BrokenDrafter:
        return cls(str(e["engine"]), str(e["drafter"]), sentence_from_json(e), str(e.get("when", "")))


def _parse(entries: Any, _version: int) -> list[BrokenDrafter]:
    if not isinstance(entries, list):
        raise ValueError("no entries list")
    return [BrokenDrafter.from_json(e) for e in entries]


class BrokenDrafters(Store):
    """The persistent record. Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("broken-drafter record"), VERSION,
                                      parse=_parse, dump=lambda es: [e.to_json() for e in es], empty=list)


    def entries(self) -> list[BrokenDrafter]:
        return self.record_file.read()

    def broken_for(self, binary: Path) -> frozenset[str]:
        """Drafter keys to pass as SpecOptions.broken for this engine binary."""
        engine = engine_build_key(binary)
        return frozenset(e.drafter for e in self.entries() if e.engine == engine)

    def record(self, binary: Path, drafter_key: str, reason: Text) -> None:
        engine = engine_build_key(binary)
        entry = BrokenDrafter(engine, drafter_key, reason, time.strftime("%Y-%m-%dT%H:%M:%S"))
        self.record_file.update(
            lambda old: [*(e for e in old if not (e.engine == engine and e.drafter == drafter_key)), entry])

    def forget(self, binary: Path | None = None, drafter_key: str | None = None) -> int:
        """Drop matching entries (all when both are None); returns how many went."""
        engine = engine_build_key(binary) if binary is not None else None
        gone = 0

        def change(old: list[BrokenDrafter]) -> list[BrokenDrafter] | None:
            nonlocal gone
            keep = [e for e in old if not ((engine is None or e.engine == engine)
                                           and (drafter_key is None or e.drafter == drafter_key))]
            gone = len(old) - len(keep)
            return keep if gone else None

        self.record_file.update(change)
        return gone
