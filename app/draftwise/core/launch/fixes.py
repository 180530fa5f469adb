"""Engine features that crashed, switched off from then on, at the scope of their cause.

A fault the engine cannot survive is classified by `crash.feature_fix`; the launch flow
starts the engine once more without the feature, and on success the fix is recorded here.
The next launch adds the same arguments from the start (`args_for`), so the crash is paid
once — for the scope the fault belongs to:

- the machine and the engine build, whatever the model (`MACHINE_WIDE`): the AMX kernels
  that stop with an illegal instruction in some virtual machines are the CPU's, so every
  quantized model would meet them. Keyed by the engine build and the machine as the ladder
  record names it (core/launch/ladder_record.py), without its GPUs: which GPUs a launch uses
  does not change what the CPU can run;
- one model on the same devices and engine build: a GPU driver fault with flash attention
  (lavapipe segfaults on the first request of Gemma-like models).

A record of a machine-wide fix written per model (before they were machine-wide) is still
read for that model, as is one filed under the earlier model key (path and size). A store
that was not told the machine files every fix per model, as before.

A fix is kept as the arguments it renders to (`["-fa", "off"]`, readable in the file and by
an earlier Draftwise) and handed to a launch as data (`settings_for`: crash.FIXES looks the
kept arguments up; an entry this version never wrote is left out, logged), so the launch
session adds it to the plan's inputs, not to the argv.

The keys are core/identity.py's: `engine_build_key`, the model's `file_key`, the
`device_key` of the launch's selected devices (`identity.launch_devices`: the session reads
under them before the plan, and the launch writes under the same, `LaunchSpec.fix_devices`),
and for machine-wide fixes `host_key`. `engine-fixes.json` in paths.data_dir(), one
`records.JsonRecord` (docs/records.md); the reason is kept as a message beside its English.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftwise.core import identity, paths
from draftwise.core.engines.engine_settings import DEFAULTS, EngineSettings
from draftwise.core.launch import crash
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Text, msg
from draftwise.core.records import JsonRecord, Store, sentence_from_json, sentence_to_json

FILE_NAME = "engine-fixes.json"
VERSION = 1
log = logging.getLogger(__name__)


# Faults of this computer's CPU, not of a model or a GPU driver: remembered machine-wide.
MACHINE_WIDE: frozenset[tuple[str, ...]] = frozenset({crash.NO_REPACK})


def key(binary: Path, model: Path, devices: Sequence[str]) -> str:
    """A fix for one model on these devices with this engine build."""
    return f"{identity.engine_build_key(binary)}#{identity.file_key(model)}#{identity.device_key(devices)}"


def _earlier_key(binary: Path, model: Path, devices: Sequence[str]) -> str:
    """`key` as it was written before core/identity.py (the model by path and size)."""
    return (f"{identity.engine_build_key(binary)}#{identity.legacy_fix_file_key(model)}"
            f"#{identity.device_key(devices)}")


def machine_wide_key(binary: Path, machine: Machine) -> str:
    """A fix for every model on this machine with this engine build (its CPU's fault)."""
    return f"{identity.engine_build_key(binary)}#machine={identity.host_key(machine)}"


@dataclass(frozen=True)
class Fix:
    key: str
    args: tuple[str, ...]
    reason: Text
    when: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "args": list(self.args), **sentence_to_json(self.reason), "when": self.when}

    @classmethod
    def from_json(cls, e: Any) -> Fix:
        args = e["args"]
        if not isinstance(args, list):
            raise ValueError("a fix's arguments are not a list")
        return cls(str(e["key"]), tuple(str(a) for a in args), sentence_from_json(e), str(e.get("when", "")))


def _parse(entries: Any, _version: int) -> list[Fix]:
    if not isinstance(entries, list):
        raise ValueError("no entries list")
    return [Fix.from_json(e) for e in entries]


class EngineFixes(Store):
    """The persistent record. `machine`: the machine launches run on, for the machine-wide
    fixes (without it every fix is filed per model)."""

    def __init__(self, path: Path | None = None, machine: Machine | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("record of engine fixes"), VERSION,
                                      parse=_parse, dump=lambda fs: [f.to_json() for f in fs], empty=list)
        self.machine = machine


    def for_machine(self, machine: Machine | None) -> EngineFixes:
        """The same record, told the machine (machine-wide fixes found and filed)."""
        return EngineFixes(self.path, machine)

    def entries(self) -> list[Fix]:
        return self.record_file.read()

    def _keys(self, binary: Path, model: Path, devices: Sequence[str]) -> set[str]:
        """Where the fixes for this model on these devices are filed, and this machine's."""
        keys = {key(binary, model, devices), _earlier_key(binary, model, devices)}
        if self.machine is not None:
            keys.add(machine_wide_key(binary, self.machine))
        return keys

    def args_for(self, binary: Path, model: Path, devices: Sequence[str]) -> tuple[str, ...]:
        """The fixes for this model on these devices, and this machine's (each once), as kept."""
        keys = self._keys(binary, model, devices)
        found: list[tuple[str, ...]] = []
        for e in self.entries():
            if e.key in keys and e.args not in found:
                found.append(e.args)
        return tuple(a for args in found for a in args)

    def settings_for(self, binary: Path, model: Path, devices: Sequence[str]) -> EngineSettings:
        """`args_for` as data: the fixes for this model on these devices and this machine's,
        together. The user's own arguments win over them (`EngineSettings.without`, the
        launch session's)."""
        out = DEFAULTS
        keys = self._keys(binary, model, devices)
        for e in self.entries():
            if e.key not in keys:
                continue
            fix = crash.FIXES.get(e.args)
            if fix is None:
                log.warning("engine fix %s under %s is not one this Draftwise makes: not applied", e.args, e.key)
                continue
            out = out.merged(fix)
        return out

    def key_for(self, binary: Path, model: Path, devices: Sequence[str], args: Sequence[str]) -> str:
        """Where a fix of `args` is filed: machine-wide when it is the CPU's and the machine is known."""
        if tuple(args) in MACHINE_WIDE and self.machine is not None:
            return machine_wide_key(binary, self.machine)
        return key(binary, model, devices)

    def record(self, binary: Path, model: Path, devices: Sequence[str], args: Sequence[str], reason: Text) -> None:
        """Remember `args` for the scope `key_for` gives (in place of the same fix filed under
        this key or its earlier form). `devices`: the launch's `fix_devices`."""
        k = self.key_for(binary, model, devices, args)
        same = {k, _earlier_key(binary, model, devices)}
        fix = Fix(k, tuple(args), reason, time.strftime("%Y-%m-%dT%H:%M:%S"))
        self.record_file.update(lambda old: [*(e for e in old if not (e.key in same and e.args == fix.args)), fix])

    def forget(self) -> int:
        """Drop every fix; returns how many went."""
        gone = 0

        def change(old: list[Fix]) -> list[Fix] | None:
            nonlocal gone
            gone = len(old)
            return [] if old else None

        self.record_file.update(change)
        return gone
