"""The ladder rung that worked, remembered per (model, machine, engine build).

After the out-of-memory ladder (core/launch/ladder.py) reaches ready on a rung, the rung's
concessions are written here so the next launch of the same model on the same machine with
the same engine starts there instead of crashing first. "Try full settings again" forgets
the entry. The keys:

- model: the file's path, size and mtime (a re-download is a new model);
- machine: total RAM and each GPU's name and total memory, in MiB (free memory changes from
  minute to minute and would never match; what is installed does not);
- engine: the binary's identity as the broken-drafter record keys it (a new build gets the
  full settings again).

Small versioned JSON in paths.data_dir(), written atomically; a corrupt file is set aside
(renamed, never deleted) and reported once through `problem`, as core/speculation/broken.py does.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.launch.ladder import Concessions
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, msg
from draftwise.core.settings import move_aside, write_atomic
from draftwise.core.speculation.broken import engine_identity

log = logging.getLogger(__name__)

FILE_NAME = "ladder-rungs.json"
VERSION = 1
_MiB = 1 << 20


def model_identity(model: Path) -> str:
    try:
        st = model.stat()
        return f"{model.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    except OSError:
        return str(model)


def machine_identity(machine: Machine) -> str:
    gpus = ",".join(f"{g.device or g.backend}:{g.name}:{g.total_bytes // _MiB}" for g in machine.gpus)
    return f"ram={machine.ram_total // _MiB}|gpus={gpus}|unified={int(machine.unified_memory)}"


@dataclass(frozen=True)
class RungEntry:
    model: str
    machine: str
    engine: str
    concessions: Concessions
    reason: str
    when: str

    def to_json(self) -> dict[str, object]:
        return {"model": self.model, "machine": self.machine, "engine": self.engine,
                "concessions": self.concessions.to_json(), "reason": self.reason, "when": self.when}


class LadderRecord:
    """The persistent record. Cheap to create; reads the file on each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / FILE_NAME
        self.problem: Message | None = None  # set when the file could not be read or was set aside

    @staticmethod
    def key(model: Path, machine: Machine, binary: Path) -> tuple[str, str, str]:
        return model_identity(model), machine_identity(machine), engine_identity(binary)

    def entries(self) -> list[RungEntry]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            self.problem = msg("Could not read the record of lowered settings {path}: {error}.",
                               path=str(self.path), error=exc.strerror or str(exc))
            log.warning("%s", self.problem)
            return []
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
                raise ValueError("no entries list")
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
            return [RungEntry(str(e["model"]), str(e["machine"]), str(e["engine"]),
                              Concessions.from_json(e["concessions"]), str(e.get("reason", "")),
                              str(e.get("when", "")))
                    for e in data["entries"]]
        except (ValueError, KeyError, TypeError) as exc:
            self._set_aside(exc)
            return []

    def _set_aside(self, exc: Exception) -> None:
        try:
            aside = move_aside(self.path)
            self.problem = msg("The record of lowered settings was damaged ({error}); it was set aside as {name}, "
                               "and the next launch starts with the full settings.", error=str(exc), name=aside.name)
        except OSError as move_exc:
            self.problem = msg("The record of lowered settings {path} is damaged ({error}) and could not be moved: "
                               "{move_error}.", path=str(self.path), error=str(exc), move_error=str(move_exc))
        log.warning("%s", self.problem)

    def lookup(self, model: Path, machine: Machine, binary: Path) -> Concessions:
        """The rung to start at (empty: the full settings)."""
        key = self.key(model, machine, binary)
        for e in self.entries():
            if (e.model, e.machine, e.engine) == key:
                return e.concessions
        return Concessions()

    def record(self, model: Path, machine: Machine, binary: Path, concessions: Concessions, reason: str) -> None:
        key = self.key(model, machine, binary)
        entries = [e for e in self.entries() if (e.model, e.machine, e.engine) != key]
        entries.append(RungEntry(*key, concessions, reason, time.strftime("%Y-%m-%dT%H:%M:%S")))
        self._write(entries)

    def forget(self, model: Path | None = None, machine: Machine | None = None, binary: Path | None = None) -> int:
        """Drop the entry for this model (on this machine and engine when given); all when
        nothing is given. Returns how many went."""
        m = model_identity(model) if model is not None else None
        h = machine_identity(machine) if machine is not None else None
        b = engine_identity(binary) if binary is not None else None
        old = self.entries()
        keep = [e for e in old if not ((m is None or e.model == m) and (h is None or e.machine == h)
                                       and (b is None or e.engine == b))]
        if len(keep) != len(old):
            self._write(keep)
        return len(old) - len(keep)

    def _write(self, entries: list[RungEntry]) -> None:
        # Readers see the old file or the new one, never half of one.
        write_atomic(self.path, json.dumps({"version": VERSION, "entries": [e.to_json() for e in entries]}, indent=1))


def remember(record: LadderRecord, model: Path, machine: Machine,
             binary: Path) -> Callable[[Concessions, Message], list[Message]]:
    """A Ladder.on_success that writes the rung; a write failure is a notice, not a failure."""

    def on_success(c: Concessions, reason: Message) -> list[Message]:
        try:
            record.record(model, machine, binary, c, str(reason))
        except OSError as exc:
            return [msg("Could not remember the lowered settings ({error}); the next launch will try the full "
                        "settings first.", error=exc.strerror or str(exc))]
        return [msg("The engine started with {given_up}; the next launch of this model starts there (Try full "
                    "settings again undoes it).", given_up=c.summary())]

    return on_success
