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
read for that model. A store that was not told the machine (`EngineFixes()`) files every fix
per model, as before.

Small JSON in paths.data_dir(), written atomically; a damaged file is set aside.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from draftwise.core import paths
from draftwise.core.engines import args as engine_args
from draftwise.core.launch import crash
from draftwise.core.launch.ladder_record import machine_identity
from draftwise.core.machine.hardware import Machine
from draftwise.core.settings import move_aside, write_atomic
from draftwise.core.speculation.broken import engine_identity

log = logging.getLogger(__name__)

FILE_NAME = "engine-fixes.json"
_ALIASES = {"-fa": ("--flash-attn",), "-nr": ("--no-repack",)}
VERSION = 1


def _model_identity(model: Path) -> str:
    try:
        st = model.stat()
        return f"{model.resolve()}|{st.st_size}"
    except OSError:
        return str(model)


# Faults of this computer's CPU, not of a model or a GPU driver: remembered machine-wide.
MACHINE_WIDE: frozenset[tuple[str, ...]] = frozenset({crash.NO_REPACK})


def key(binary: Path, model: Path, devices: Sequence[str]) -> str:
    """A fix for one model on these devices with this engine build."""
    return f"{engine_identity(binary)}#{_model_identity(model)}#{','.join(devices) or 'CPU'}"


def machine_key(binary: Path, machine: Machine) -> str:
    """A fix for every model on this machine with this engine build (its CPU's fault)."""
    return f"{engine_identity(binary)}#machine={machine_identity(replace(machine, gpus=[], workers=[]))}"


@dataclass(frozen=True)
class Fix:
    key: str
    args: tuple[str, ...]
    reason: str
    when: str


class EngineFixes:
    """The persistent record. `machine`: the machine launches run on, for the machine-wide
    fixes (without it every fix is filed per model)."""

    def __init__(self, path: Path | None = None, machine: Machine | None = None) -> None:
        self.path = path or paths.data_dir() / FILE_NAME
        self.machine = machine
        self.problem: str | None = None

    def for_machine(self, machine: Machine | None) -> EngineFixes:
        """The same record, told the machine (machine-wide fixes found and filed)."""
        return EngineFixes(self.path, machine)

    def entries(self) -> list[Fix]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [Fix(str(e["key"]), tuple(str(a) for a in e["args"]), str(e.get("reason", "")),
                        str(e.get("when", ""))) for e in data["entries"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as exc:
            try:
                move_aside(self.path)
            except OSError:
                log.warning("could not set aside %s", self.path)
            self.problem = f"The record of engine fixes was damaged ({exc}); a new one is started."
            return []

    def args_for(self, binary: Path, model: Path, devices: Sequence[str]) -> tuple[str, ...]:
        """The fixes for this model on these devices, and this machine's (each once)."""
        keys = {key(binary, model, devices)}
        if self.machine is not None:
            keys.add(machine_key(binary, self.machine))
        found: list[tuple[str, ...]] = []
        for e in self.entries():
            if e.key in keys and e.args not in found:
                found.append(e.args)
        return tuple(a for args in found for a in args)

    @staticmethod
    def applicable(remembered: Sequence[str], extra_args: Sequence[str]) -> tuple[str, ...]:
        """The remembered arguments whose option the user did not set already (theirs win)."""
        out: list[str] = []
        i = 0
        while i < len(remembered):
            flag = remembered[i]
            value = remembered[i + 1:i + 2] if flag in ("-fa", "--flash-attn") else []
            if not engine_args.sets(extra_args, flag, *_ALIASES.get(flag, ())) and flag not in out:
                out += [flag, *value]
            i += 1 + len(value)
        return tuple(out)

    def key_for(self, binary: Path, model: Path, devices: Sequence[str], args: Sequence[str]) -> str:
        """Where a fix of `args` is filed: machine-wide when it is the CPU's and the machine is known."""
        if tuple(args) in MACHINE_WIDE and self.machine is not None:
            return machine_key(binary, self.machine)
        return key(binary, model, devices)

    def record(self, binary: Path, model: Path, devices: Sequence[str], args: Sequence[str], reason: str) -> None:
        k = self.key_for(binary, model, devices, args)
        entries = [e for e in self.entries() if not (e.key == k and e.args == tuple(args))]
        entries.append(Fix(k, tuple(args), reason, time.strftime("%Y-%m-%dT%H:%M:%S")))
        write_atomic(self.path, json.dumps(
            {"version": VERSION, "entries": [{**e.__dict__, "args": list(e.args)} for e in entries]}, indent=1))

    def forget(self) -> int:
        n = len(self.entries())
        try:
            self.path.unlink()
        except FileNotFoundError:
            return 0
        return n
