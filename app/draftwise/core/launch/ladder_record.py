"""The ladder rung that worked, remembered per (model, machine, engine build).

After the out-of-memory ladder (core/launch/ladder.py) reaches ready on a rung, the rung's
concessions are written here so the next launch of the same model on the same machine with
the same engine starts there instead of crashing first. "Try full settings again" forgets
the entry. The keys are core/identity.py's:

- model: `file_key`, the file's path, size and mtime (a re-download is a new model);
- machine: `machine_key` of the machine as selected: total RAM and each GPU's name and total
  memory, in MiB (free memory changes from minute to minute and would never match; what is
  installed does not);
- engine: `engine_build_key` (a new build gets the full settings again).

`ladder-rungs.json` in paths.data_dir(), one `records.JsonRecord` (docs/records.md: a damaged
file set aside, a newer one left alone, atomic writes), problems through `problem`; the
reason is kept as a message beside its English.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftwise.core import identity, paths
from draftwise.core.launch.ladder import Concessions
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, Text, msg
from draftwise.core.records import (
    JsonRecord,
    Store,
    sentence_from_json,
    sentence_to_json,
    write_error,
)

FILE_NAME = "ladder-rungs.json"
VERSION = 1


@dataclass(frozen=True)
class RungEntry:
    model: str
    machine: str
    engine: str
    concessions: Concessions
    reason: Text
    when: str

    def to_json(self) -> dict[str, object]:
        return {"model": self.model, "machine": self.machine, "engine": self.engine,
                "concessions": self.concessions.to_json(), **sentence_to_json(self.reason), "when": self.when}

    @classmethod
    def from_json(cls, e: Any) -> RungEntry:
        return cls(str(e["model"]), str(e["machine"]), str(e["engine"]), Concessions.from_json(e["concessions"]),
                   sentence_from_json(e), str(e.get("when", "")))


def _parse(entries: Any, _version: int) -> list[RungEntry]:
    if not isinstance(entries, list):
        raise ValueError("no entries list")
    return [RungEntry.from_json(e) for e in entries]


class LadderRecord(Store):
    """The persistent record. Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("record of lowered settings"),
                                      VERSION, parse=_parse, dump=lambda es: [e.to_json() for e in es], empty=list)


    @staticmethod
    def key(model: Path, machine: Machine, binary: Path) -> tuple[str, str, str]:
        return identity.file_key(model), identity.machine_key(machine), identity.engine_build_key(binary)

    def entries(self) -> list[RungEntry]:
        return self.record_file.read()

    def lookup(self, model: Path, machine: Machine, binary: Path) -> Concessions:
        """The rung to start at (empty: the full settings)."""
        key = self.key(model, machine, binary)
        for e in self.entries():
            if (e.model, e.machine, e.engine) == key:
                return e.concessions
        return Concessions()

    def record(self, model: Path, machine: Machine, binary: Path, concessions: Concessions, reason: Text) -> None:
        key = self.key(model, machine, binary)
        entry = RungEntry(*key, concessions, reason, time.strftime("%Y-%m-%dT%H:%M:%S"))
        self.record_file.update(lambda old: [*(e for e in old if (e.model, e.machine, e.engine) != key), entry])

    def forget(self, model: Path | None = None, machine: Machine | None = None, binary: Path | None = None) -> int:
        """Drop the entry for this model (on this machine and engine when given); all when
        nothing is given. Returns how many went."""
        m = identity.file_key(model) if model is not None else None
        h = identity.machine_key(machine) if machine is not None else None
        b = identity.engine_build_key(binary) if binary is not None else None
        gone = 0

        def change(old: list[RungEntry]) -> list[RungEntry] | None:
            nonlocal gone
            keep = [e for e in old if not ((m is None or e.model == m) and (h is None or e.machine == h)
                                           and (b is None or e.engine == b))]
            gone = len(old) - len(keep)
            return keep if gone else None

        self.record_file.update(change)
        return gone


def remember(record: LadderRecord, model: Path, machine: Machine,
             binary: Path) -> Callable[[Concessions, Message], list[Message]]:
    """A Ladder.on_success that writes the rung; a write failure is a notice, not a failure."""

    def on_success(c: Concessions, reason: Message) -> list[Message]:
        try:
            record.record(model, machine, binary, c, reason)
        except OSError as exc:
            return [msg("Could not remember the lowered settings ({error}); the next launch will try the full "
                        "settings first.", error=write_error(exc))]
        return [msg("The engine started with {given_up}; the next launch of this model starts there (Try full "
                    "settings again undoes it).", given_up=c.summary())]

    return on_success
