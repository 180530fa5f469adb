"""The engine's speed settings measured on this machine, the rule that calls one faster, and
the record auto launches with.

The settings stage (core/measuring/tuning.py) tries repack, threads, flash attention and
the prompt batch sizes on the setup the measurement chose; what it found is remembered here
per model file, engine build and machine (`key_for`: core/identity.py's keys, the drafter left
out, because none of these settings is the drafter's), with the tokens/s it gave, and the
launch session passes it (core/launch/session.py) unless the user's own arguments or a
remembered engine fix set that option: theirs win.

**The rule** (issue 30, part 3). A setting is judged by the time of one reference request:
reading a prompt of `REFERENCE_PROMPT` tokens and writing an answer of `REFERENCE_ANSWER`,
`seconds = prompt / prompt tokens/s + answer / generated tokens/s`; it is faster when that
time is shorter beyond the noise of both measurements (their errors weighed by each part's
share of the time, combined as the quick measurement combines two arms, at least
`NOISE_FLOOR`). Why a request and why one as long as its answer: that is what the user waits
for, and rewriting a text (Draftwise's own use) reads about as much as it writes. Decode then
weighs most where prompts are read several times faster than answers are written (the CPU),
so a 12 % faster decode wins; but a setting that halves prompt speed for a few per cent of
decode loses, because the request takes longer. The prompt batch sizes do not change decoding
(one token, or a draft of a few, is far below any batch), so they are judged on prompt speed
alone (`prompt_only`).

**Faults.** A setting that made the engine crash in the settings stage (an illegal
instruction, a segfault, an abort) is recorded once per machine and engine build
(`record_fault`, filed like the CPU's engine fixes: `engine_build_key` and `host_key`), and no
later measurement on this machine tries it again.

`engine-settings.json` in paths.data_dir(), one `records.JsonRecord` (docs/records.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftwise.core import identity, paths
from draftwise.core.engines.engine_settings import DEFAULTS, FLAGS, EngineSettings
from draftwise.core.measurements.measurement import NOISE_FLOOR, Combination
from draftwise.core.messages import Message, Text, msg
from draftwise.core.records import JsonRecord, Store, sentence_from_json, sentence_to_json

FILE_NAME = "engine-settings.json"
VERSION = 1

# The reference request the rule times: a prompt read and an answer written as long as it.
REFERENCE_PROMPT = 256
REFERENCE_ANSWER = 256


# ------------------------------------------------------------------ the rule
@dataclass(frozen=True)
class Speed:
    """What one set of settings measured: generated and read tokens/s, each with the relative
    standard error of its mean (the spread between rounds over √rounds)."""

    decode: float
    prompt: float = 0.0  # 0: not measured (judged on decode alone)
    decode_error: float = 0.0
    prompt_error: float = 0.0

    def seconds(self, *, prompt_only: bool = False) -> float:
        """The reference request's time (`prompt_only`: reading its prompt alone)."""
        read = REFERENCE_PROMPT / self.prompt if self.prompt > 0 else 0.0
        if prompt_only:
            return read
        return read + (REFERENCE_ANSWER / self.decode if self.decode > 0 else math.inf)

    def error(self, *, prompt_only: bool = False) -> float:
        """The relative error of `seconds`: each part's error weighed by its share of the time."""
        total = self.seconds(prompt_only=prompt_only)
        if not math.isfinite(total) or total <= 0:
            return 0.0
        read = REFERENCE_PROMPT / self.prompt if self.prompt > 0 else 0.0
        write = 0.0 if prompt_only else total - read
        return math.hypot(read / total * self.prompt_error, write / total * self.decode_error)

    def to_json(self) -> dict[str, float]:
        return {"decode": self.decode, "prompt": self.prompt, "decode_error": self.decode_error,
                "prompt_error": self.prompt_error}

    @classmethod
    def from_json(cls, data: Any) -> Speed:
        if not isinstance(data, dict):
            raise ValueError("a speed is not an object")
        return cls(float(data["decode"]), float(data.get("prompt", 0.0)), float(data.get("decode_error", 0.0)),
                   float(data.get("prompt_error", 0.0)))


def gain(speed: Speed, base: Speed, *, prompt_only: bool = False) -> float:
    """How much faster than `base` the reference request is: 0.12 for 12 % (its time's ratio)."""
    mine = speed.seconds(prompt_only=prompt_only)
    if mine <= 0 or not math.isfinite(mine):
        return -1.0
    return base.seconds(prompt_only=prompt_only) / mine - 1.0


def faster(speed: Speed, base: Speed, *, prompt_only: bool = False) -> bool:
    """Faster than `base` beyond the noise of both (at least NOISE_FLOOR)."""
    bound = max(math.hypot(speed.error(prompt_only=prompt_only), base.error(prompt_only=prompt_only)), NOISE_FLOOR)
    return (1.0 + gain(speed, base, prompt_only=prompt_only)) * (1.0 - bound) > 1.0


# ------------------------------------------------------------------ what a stage found
@dataclass(frozen=True)
class Row:
    """One set of settings the stage ran (the engine's defaults the first)."""

    settings: EngineSettings
    speed: Speed
    rounds: int
    stopped: bool = False  # its dimension stopped widening here (beyond the noise and falling)
    fault: str = ""  # why the engine could not run it (the crash sentence), "" when it ran
    final: Speed | None = None  # measured again beside the defaults (several settings changed)

    def to_json(self) -> dict[str, Any]:
        return {"settings": self.settings.to_json(), "speed": self.speed.to_json(), "rounds": self.rounds,
                "stopped": self.stopped, "fault": self.fault,
                "final": self.final.to_json() if self.final is not None else None}

    @classmethod
    def from_json(cls, data: Any) -> Row:
        if not isinstance(data, dict):
            raise ValueError("a row is not an object")
        final = data.get("final")
        return cls(EngineSettings.from_json(data["settings"]), Speed.from_json(data["speed"]), int(data["rounds"]),
                   bool(data.get("stopped", False)), str(data.get("fault", "")),
                   Speed.from_json(final) if final is not None else None)


@dataclass(frozen=True)
class Tuned:
    """The settings kept for one model, engine build and machine, and why."""

    combination: Combination  # `key_for`: the drafter left empty
    settings: EngineSettings  # what auto passes (the defaults: nothing)
    speed: Speed  # what they gave
    base: Speed  # the engine's defaults beside them
    rows: tuple[Row, ...] = ()
    on: str = ""  # the setup they were measured on ("ngram-mod 32", "no speculation")
    prompt_only: tuple[str, ...] = ()  # the fields judged on prompt speed alone (the batch sizes)
    seconds: float = 0.0
    when: str = ""

    @property
    def gain(self) -> float:
        return gain(self.speed, self.base)

    def _row(self, name: str) -> Row | None:
        """The row that changed `name` alone to the kept value (its own evidence)."""
        wanted = EngineSettings(**{name: getattr(self.settings, name)})
        return next((r for r in self.rows if r.settings == wanted), None)

    def notes(self, passed: EngineSettings | None = None) -> list[Message]:
        """The plan's lines: each setting kept and why, with the figures it was kept on.
        `passed`: the part a launch passes (the user's own arguments and the engine fixes
        win over the rest), default all of them."""
        passed = self.settings if passed is None else passed
        out: list[Message] = []
        # Each setting against the defaults measured in the same stage as it.
        base = next((r.speed for r in self.rows if r.settings == DEFAULTS), self.base)
        for name in passed.changed():
            row = self._row(name)
            speed, against = (row.speed, base) if row is not None else (self.speed, self.base)
            what = setting_words(name, getattr(passed, name))
            if name in self.prompt_only:
                out.append(msg("{setting}: prompts read {pct} % faster here, measured ({prompt} against {base} "
                               "tokens/s)", setting=what, pct=_pct(gain(speed, against, prompt_only=True)),
                               prompt=f"{speed.prompt:.0f}", base=f"{against.prompt:.0f}"))
                continue
            out.append(msg("{setting}: {pct} % faster here, measured ({decode} against {base_decode} tokens/s "
                           "written, {prompt} against {base_prompt} read)", setting=what,
                           pct=_pct(gain(speed, against)), decode=f"{speed.decode:.1f}",
                           base_decode=f"{against.decode:.1f}", prompt=f"{speed.prompt:.0f}",
                           base_prompt=f"{against.prompt:.0f}"))
        if len(passed.changed()) > 1 and passed == self.settings:
            out.append(msg("Together: {pct} % faster than the engine's own settings, measured side by side.",
                           pct=_pct(self.gain)))
        others = [r.settings.label() for r in self.rows if r.settings != DEFAULTS]
        if not out and others and passed == self.settings:
            # Not "the fastest": a setting ahead within the noise, or on some prompts only, is not
            # kept by the rule either (the quick measurement's `-nr` read 69.4 against 65.8 once).
            out.append(msg("Engine settings: the engine's own are kept; {others} did not beat them beyond the "
                           "noise on most prompts here.", others=", ".join(others)))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"combination": self.combination.to_json(), "settings": self.settings.to_json(),
                "speed": self.speed.to_json(), "base": self.base.to_json(), "rows": [r.to_json() for r in self.rows],
                "on": self.on, "prompt_only": list(self.prompt_only), "seconds": self.seconds, "when": self.when}

    @classmethod
    def from_json(cls, data: Any) -> Tuned:
        if not isinstance(data, dict):
            raise ValueError("an entry is not an object")
        combo = Combination(*(str(data["combination"][k]) for k in ("model", "drafter", "engine", "machine")))
        return cls(combo, EngineSettings.from_json(data["settings"]), Speed.from_json(data["speed"]),
                   Speed.from_json(data["base"]), tuple(Row.from_json(r) for r in data.get("rows", ())),
                   str(data.get("on", "")), tuple(str(n) for n in data.get("prompt_only", ())),
                   float(data.get("seconds", 0.0)), str(data.get("when", "")))


def _pct(value: float) -> str:
    return f"{value * 100:.0f}"


def setting_words(name: str, value: object) -> Message:
    """One setting in words, for the plan's lines and the measurement's table."""
    if name == "repack":
        return msg("weights not repacked (-nr)") if value is False else msg("weights repacked")
    if name == "threads":
        return msg("engine threads {n} (-t)", n=value)
    if name == "threads_batch":
        return msg("engine threads for prompts {n} (-tb)", n=value)
    if name == "flash_attn":
        return msg("flash attention {state} (-fa)", state=str(value))
    if name == "ubatch":
        return msg("prompt batch {n} (-ub)", n=value)
    return msg("{flag} {value}", flag=FLAGS[name][0], value=value)


def key_for(model: Path | str, engine: Path | str, machine: identity.MachineLike) -> Combination:
    """The model, engine build and machine (as selected) settings are kept for."""
    return Combination(model=identity.file_key(model), drafter="", engine=identity.engine_build_key(engine),
                       machine=identity.machine_key(machine))


def fault_key(engine: Path | str, machine: identity.MachineLike) -> str:
    """A crash of a setting is this processor's with this engine build, whatever the model or GPUs."""
    return f"{identity.engine_build_key(engine)}#machine={identity.host_key(machine)}"


# ------------------------------------------------------------------ the record
@dataclass(frozen=True)
class Fault:
    key: str
    settings: EngineSettings
    reason: Text
    when: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "settings": self.settings.to_json(), **sentence_to_json(self.reason),
                "when": self.when}

    @classmethod
    def from_json(cls, data: Any) -> Fault:
        if not isinstance(data, dict):
            raise ValueError("a fault is not an object")
        return cls(str(data["key"]), EngineSettings.from_json(data["settings"]), sentence_from_json(data),
                   str(data.get("when", "")))


@dataclass(frozen=True)
class _Entries:
    kept: tuple[Tuned, ...] = ()
    faults: tuple[Fault, ...] = ()


def _parse(entries: Any, _version: int) -> _Entries:
    if not isinstance(entries, dict):
        raise ValueError("no entries object")
    return _Entries(tuple(Tuned.from_json(e) for e in entries.get("kept", ())),
                    tuple(Fault.from_json(f) for f in entries.get("faults", ())))


def _dump(value: _Entries) -> dict[str, Any]:
    return {"kept": [t.to_json() for t in value.kept], "faults": [f.to_json() for f in value.faults]}


class TunedRecords(Store):
    """The persistent record (core/records.py's policy). Cheap to create; reads the file on
    each question."""

    def __init__(self, path: Path | None = None) -> None:
        self.record_file = JsonRecord(path or paths.data_dir() / FILE_NAME, msg("record of engine settings"),
                                      VERSION, parse=_parse, dump=_dump, empty=_Entries)

    def entries(self) -> tuple[Tuned, ...]:
        return self.record_file.read().kept

    def get(self, combination: Combination) -> Tuned | None:
        return next((t for t in self.entries() if combination.covers(t.combination)), None)

    def record(self, tuned: Tuned) -> None:
        """Keep `tuned`, in place of the settings kept before for its combination."""
        self.record_file.update(lambda old: _Entries(
            (*(t for t in old.kept if not tuned.combination.covers(t.combination)), tuned), old.faults))

    def forget(self, *, model: Path | str | None = None) -> int:
        """Drop the settings kept for a model (every model without one); faults stay: they are
        the machine's."""
        gone = 0

        def change(old: _Entries) -> _Entries | None:
            nonlocal gone
            keep = tuple(t for t in old.kept if model is not None and not t.combination.matches_model(model))
            gone = len(old.kept) - len(keep)
            return _Entries(keep, old.faults) if gone else None

        self.record_file.update(change)
        return gone

    def faults_for(self, engine: Path | str, machine: identity.MachineLike) -> tuple[EngineSettings, ...]:
        key = fault_key(engine, machine)
        return tuple(f.settings for f in self.record_file.read().faults if f.key == key)

    def record_fault(self, engine: Path | str, machine: identity.MachineLike, settings: EngineSettings,
                     reason: Text) -> None:
        fault = Fault(fault_key(engine, machine), settings, reason, time.strftime("%Y-%m-%dT%H:%M:%S"))
        self.record_file.update(lambda old: _Entries(old.kept, (
            *(f for f in old.faults if (f.key, f.settings) != (fault.key, fault.settings)), fault)))


def applicable(tuned: Tuned, has_flag: Any, given: Sequence[str]) -> EngineSettings:
    """The kept settings a launch passes: what this build knows (`has_flag`), less what
    `given` (the user's own arguments) already sets; the launch session then leaves out what a
    remembered engine fix sets (`EngineSettings.less`)."""
    return tuned.settings.known_by(has_flag).without(given) if tuned.settings != DEFAULTS else DEFAULTS
