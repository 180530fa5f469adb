"""The engine's speed settings a measurement tries and auto passes: repack, threads, flash
attention, prompt batch sizes.

None of them changes what the model answers, only how fast the engine computes it, and the
best depends on the processor: on the 2-core Xeon VM this was written on, the engine loads
its AMX module and repacking faults there (core/launch/crash.py, an engine fix forces `-nr`);
on other CPUs repacking Q4_K made the real Gemma 3 270M 4-19 % slower (issue 30). So they are
measured, not guessed (core/measuring/tuning.py), remembered per model, engine build and
machine (core/measurements/tuned.py), and passed by the launch session.

Pure data: each field None is the engine's own default, so `EngineSettings()` passes nothing
and a record from before these settings reads as the defaults. The flags are the pinned
engine's (common/arg.cpp, 11434); `known_by` drops what a build's `--help` does not list, so
a setting the build does not know is never passed.

The same type carries every engine option Draftwise adds on its own to a launch — the engine
fixes remembered after a crash (core/launch/fixes.py, `-fa off`, `-nr`), a fix found while
starting (core/launch/crash.py), the measured settings — as data, never as argv read back
(docs/launch-path.md "Draftwise's own options"): the plan takes `PLANNED` as its inputs and
writes them itself, and `beside_plan().options()` join the launch's options after the user's
arguments, rendered once (core/launch/prepare.py `Prepared.launch`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from draftwise.core.engines import args as engine_args
from draftwise.core.kinds import Switch

# Each field's spellings (common/arg.cpp): the first is the one passed. `--repack` is the
# switch's positive form (the engine's default), listed so a user's `--repack` counts as set.
FLAGS: dict[str, tuple[str, ...]] = {
    "repack": ("-nr", "--no-repack", "--repack"),
    "threads": ("-t", "--threads"),
    "threads_batch": ("-tb", "--threads-batch"),
    "flash_attn": ("-fa", "--flash-attn"),
    "batch": ("-b", "--batch-size"),
    "ubatch": ("-ub", "--ubatch-size"),
}
# The fields the memory plan takes as inputs and writes into its own arguments (plan_args):
# flash attention, the batch and the prompt batch. The rest is passed beside the plan.
PLANNED = ("flash_attn", "batch", "ubatch")
# The engine's own defaults (common/common.h, llama-context.cpp): what None means.
DEFAULT_BATCH = 2048
DEFAULT_UBATCH = 512


@dataclass(frozen=True)
class EngineSettings:
    repack: bool | None = None  # False: -nr (the CPU keeps every weight in the mapped file)
    threads: int | None = None  # -t (None: the engine's, its physical cores)
    threads_batch: int | None = None  # -tb (None: the same as -t)
    flash_attn: Switch | None = None  # -fa on|off (None: auto, which is on for the CPU)
    batch: int | None = None  # -b (None: 2048)
    ubatch: int | None = None  # -ub (None: 512)

    def __post_init__(self) -> None:
        for name in ("threads", "threads_batch", "batch", "ubatch"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
                raise ValueError(f"{name} {value!r} is not a positive whole number")
        if self.flash_attn is not None:
            object.__setattr__(self, "flash_attn", Switch(self.flash_attn))
        if self.repack is True:
            object.__setattr__(self, "repack", None)  # on is the engine's default: one form

    @property
    def default(self) -> bool:
        """Nothing set: the engine runs its own defaults."""
        return self == DEFAULTS

    def changed(self) -> tuple[str, ...]:
        """The fields set, in FLAGS order."""
        return tuple(name for name in FLAGS if getattr(self, name) is not None)

    def options(self) -> tuple[engine_args.Option, ...]:
        """What is set, as engine options (the launch renders them: core/launch/llamacpp.py)."""
        out: list[engine_args.Option] = []
        if self.repack is False:
            out.append(engine_args.option(FLAGS["repack"][0]))
        for name in ("threads", "threads_batch", "flash_attn", "batch", "ubatch"):
            value = getattr(self, name)
            if value is not None:
                out.append(engine_args.option(FLAGS[name][0], str(value)))
        return tuple(out)

    def argv(self) -> tuple[str, ...]:
        return engine_args.render(self.options())

    def known_by(self, has_flag: Any) -> EngineSettings:
        """Without the settings whose flag this engine build does not list (`has_flag`:
        `EngineCaps.has_flag`): never passed, so never refused at start."""
        drop = {name: None for name in self.changed() if not has_flag(FLAGS[name][0])}
        return replace(self, **drop) if drop else self

    def without(self, args: Sequence[str]) -> EngineSettings:
        """Without the settings `args` already give (the user's own, a remembered engine fix):
        theirs win, and no option is passed twice."""
        drop = {name: None for name in self.changed() if engine_args.sets(args, *FLAGS[name])}
        return replace(self, **drop) if drop else self

    def merged(self, other: EngineSettings) -> EngineSettings:
        """These settings with what `other` sets on top."""
        return replace(self, **{name: getattr(other, name) for name in other.changed()})

    def less(self, other: EngineSettings) -> EngineSettings:
        """Without the fields `other` sets (a remembered fix outranks a measured setting)."""
        drop = {name: None for name in other.changed() if getattr(self, name) is not None}
        return replace(self, **drop) if drop else self

    def beside_plan(self) -> EngineSettings:
        """The fields the plan does not write (`PLANNED` aside): passed after the user's arguments."""
        return replace(self, **dict.fromkeys(PLANNED))

    def label(self) -> str:
        """Short and technical, for tables and progress: "-nr -t 1 -fa off"; "engine defaults"."""
        return " ".join(self.argv()) or "engine defaults"

    def to_json(self) -> dict[str, Any]:
        """Only what is set (a reader from before a field finds nothing it does not know)."""
        return {name: (str(v) if isinstance(v, Switch) else v) for name in self.changed()
                if (v := getattr(self, name)) is not None}

    @classmethod
    def from_json(cls, data: Any) -> EngineSettings:
        if data is None:
            return DEFAULTS
        if not isinstance(data, dict):
            raise ValueError("engine settings are not an object")
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            if name not in known:
                raise ValueError(f"unknown engine setting {name!r}")
            if name == "repack":
                if value is not None and not isinstance(value, bool):
                    raise ValueError(f"repack is {value!r}")
            elif name == "flash_attn":
                if value is not None and value not in tuple(Switch):
                    raise ValueError(f"flash_attn is {value!r}")
            elif value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"{name} is {value!r}")
            kwargs[name] = value
        return cls(**kwargs)


DEFAULTS = EngineSettings()
