"""Engine features that crashed, switched off for one model, device and engine build.

A driver fault the engine cannot survive (lavapipe segfaults on the first request with flash
attention on Gemma-like models; AMX kernels that stop with an illegal instruction in some
virtual machines) is classified by `crash.feature_fix`; the launch flow starts the engine
once more without the feature, and on success the fix is recorded here. The next launch of
the same model on the same devices and engine build adds the same arguments from the start
(`args_for`), so the crash is paid once.

Small JSON in paths.data_dir(), written atomically; a damaged file is set aside.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.engines import args as engine_args
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


def key(binary: Path, model: Path, devices: Sequence[str]) -> str:
    return f"{engine_identity(binary)}#{_model_identity(model)}#{','.join(devices) or 'CPU'}"


@dataclass(frozen=True)
class Fix:
    key: str
    args: tuple[str, ...]
    reason: str
    when: str


class EngineFixes:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / FILE_NAME
        self.problem: str | None = None

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
        k = key(binary, model, devices)
        out: list[str] = []
        for e in self.entries():
            if e.key == k:
                out += e.args
        return tuple(out)

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

    def record(self, binary: Path, model: Path, devices: Sequence[str], args: Sequence[str], reason: str) -> None:
        k = key(binary, model, devices)
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
