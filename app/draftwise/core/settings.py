"""The user's settings: one versioned JSON file in `paths.config_dir()`.

Pure Python (no Qt). Written atomically (`records.write_atomic`: a temporary file in the same
folder, flushed, then renamed over the old one), so a crash mid-write never leaves half a file. A file that cannot
be read as settings is never overwritten in place: it is set aside as
`settings.json.corrupt-<timestamp>`, the defaults are used, and `LoadResult.problem` says so
in words for the window to show. A field of the wrong type falls back to its default alone;
keys this version does not know are kept and written back, so an older Draftwise does not
wipe what a newer one stored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.address import DEFAULT_PORT, LOOPBACK, RPC_PORT
from draftwise.core.identity import path_key
from draftwise.core.kinds import MtpMode
from draftwise.core.messages import Message, msg
from draftwise.core.records import move_aside, set_aside, write_atomic

__all__ = [
    "FILE_NAME",
    "LANGUAGES",
    "SCHEMA_VERSION",
    "LoadResult",
    "ModelOverrides",
    "Profile",
    "Settings",
    "load",
    "move_aside",
    "save",
    "set_aside",
    "settings_path",
    "write_atomic",
]

FILE_NAME = "settings.json"
SCHEMA_VERSION = 1
LANGUAGES = ("system", "en", "ja")
CLOSE_ACTIONS = ("ask", "stop", "tray")
SERVE_SLEEP_IDLE_S = 600  # 10 minutes: what `draftwise serve` uses without --sleep-idle-seconds


@dataclass
class ModelOverrides:
    """What the user changed for one model; None means "decide for me"."""

    context: int | None = None
    kv_type: str | None = None
    mtp: MtpMode | None = None  # auto | off
    draft: str | None = None  # a file path
    extra_args: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return (
            self.context is None
            and self.kv_type is None
            and self.mtp is None
            and self.draft is None
            and not self.extra_args
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "context": self.context,
            "kv_type": self.kv_type,
            "mtp": self.mtp,
            "draft": self.draft,
            "extra_args": list(self.extra_args),
        }

    @classmethod
    def from_json(cls, data: Any) -> ModelOverrides:
        if not isinstance(data, dict):
            return cls()
        context = data.get("context")
        mtp = data.get("mtp")
        return cls(
            context=context if isinstance(context, int) and not isinstance(context, bool) and context > 0 else None,
            kv_type=_str_or_none(data.get("kv_type")),
            mtp=MtpMode(mtp) if mtp in tuple(MtpMode) else None,
            draft=_str_or_none(data.get("draft")),
            extra_args=_str_list(data.get("extra_args")),
        )


@dataclass
class Profile:
    """A named set of overrides the user can apply to any model."""

    name: str
    overrides: ModelOverrides = field(default_factory=ModelOverrides)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "overrides": self.overrides.to_json()}

    @classmethod
    def from_json(cls, data: Any) -> Profile | None:
        if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
            return None
        return cls(data["name"], ModelOverrides.from_json(data.get("overrides")))


@dataclass
class Settings:
    version: int = SCHEMA_VERSION
    model_folders: list[str] = field(default_factory=list)
    model_files: list[str] = field(default_factory=list)  # single files opened or dropped
    last_model: str | None = None
    # Keyed by the model's resolved path.
    overrides: dict[str, ModelOverrides] = field(default_factory=dict)
    profiles: list[Profile] = field(default_factory=list)
    language: str = "system"
    engine_binary: str | None = None  # the engine the user chose; None: the best one found
    port: int = DEFAULT_PORT
    network: bool = False  # listen on all interfaces (other computers may connect, with the key)
    api_key: str | None = None
    close_action: str = "ask"
    # Other computers (RPC workers, "host:port") the model may be split across; checked when
    # used (core/rpc/workers.py), kept as typed so a bad entry can be shown and fixed.
    workers: list[str] = field(default_factory=list)
    # Use them even when this computer alone is predicted faster (`--use-workers always`);
    # False: auto, only when the model does not fit without them or they pay.
    workers_always: bool = False
    # Share this computer (ggml-rpc-server): where it listens. Loopback unless the user picks
    # another address (core/rpc/share.py warns); the worker stops with the app.
    share_host: str = LOOPBACK
    share_port: int = RPC_PORT
    # Window state from Qt (saveGeometry/saveState), base64 text.
    geometry: str | None = None
    window_state: str | None = None
    splitter: str | None = None
    logs_visible: bool = False
    advanced_visible: bool = False
    chat_save: bool = False  # keep chats in the data folder (opt-in: they may be private)
    # Keep the last prompts per model (core/measurements/usage.py) so speed can be measured
    # again on the user's own work: the chat's, and every request the engines Draftwise starts
    # log (core/measurements/prompt_log.py). On by default, shown beside the box above, and
    # turning it off deletes them: only the last 20 per model, and nothing ever sends them.
    keep_prompts: bool = True
    # Measure the speed-up after the first launch of a new (model, drafter, engine, machine)
    # without asking first.
    measure_automatically: bool = False
    # The GPU the user chose (its engine name, "Vulkan0"); None: Draftwise chooses.
    device: str | None = None
    # Per GPU (hardware.Gpu.key): {"keep_free_gb": N} or {"max_gb": N}, the user's limit.
    device_limits: dict[str, dict[str, float]] = field(default_factory=dict)
    # "Serve my models" (core/serving/): a served model idle this long sleeps (the router's
    # --sleep-idle-seconds; -1 never), and whether serving starts when the user logs in (the
    # entry itself is core/serving/autostart.py's; this remembers the choice).
    serve_sleep_idle_s: int = SERVE_SLEEP_IDLE_S
    serve_at_login: bool = False
    # Keys this version does not know, kept so they survive a round trip.
    unknown: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---------------------------------------------------------------- per model
    def overrides_for(self, model_path: str | Path) -> ModelOverrides:
        """The overrides for a model (a fresh empty one when there are none; not stored)."""
        found = self.overrides.get(path_key(model_path))
        return ModelOverrides(**found.to_json()) if found else ModelOverrides()

    def set_overrides(self, model_path: str | Path, overrides: ModelOverrides) -> None:
        key = path_key(model_path)
        if overrides.is_empty():
            self.overrides.pop(key, None)
        else:
            self.overrides[key] = overrides

    def add_folder(self, folder: str | Path) -> bool:
        text = str(Path(folder).expanduser())
        if text in self.model_folders:
            return False
        self.model_folders.append(text)
        return True

    def remove_folder(self, folder: str | Path) -> bool:
        text = str(Path(folder).expanduser())
        if text not in self.model_folders:
            return False
        self.model_folders.remove(text)
        return True

    def profile(self, name: str) -> Profile | None:
        return next((p for p in self.profiles if p.name == name), None)

    def save_profile(self, name: str, overrides: ModelOverrides) -> None:
        self.profiles = [p for p in self.profiles if p.name != name]
        self.profiles.append(Profile(name, ModelOverrides(**overrides.to_json())))

    def delete_profile(self, name: str) -> None:
        self.profiles = [p for p in self.profiles if p.name != name]

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.unknown)
        data.update(
            {
                "version": SCHEMA_VERSION,
                "model_folders": list(self.model_folders),
                "model_files": list(self.model_files),
                "last_model": self.last_model,
                "overrides": {k: v.to_json() for k, v in sorted(self.overrides.items())},
                "profiles": [p.to_json() for p in self.profiles],
                "language": self.language,
                "engine_binary": self.engine_binary,
                "port": self.port,
                "network": self.network,
                "api_key": self.api_key,
                "close_action": self.close_action,
                "workers": list(self.workers),
                "workers_always": self.workers_always,
                "share_host": self.share_host,
                "share_port": self.share_port,
                "geometry": self.geometry,
                "window_state": self.window_state,
                "splitter": self.splitter,
                "logs_visible": self.logs_visible,
                "advanced_visible": self.advanced_visible,
                "chat_save": self.chat_save,
                "keep_prompts": self.keep_prompts,
                "measure_automatically": self.measure_automatically,
                "device": self.device,
                "device_limits": {k: dict(v) for k, v in sorted(self.device_limits.items())},
                "serve_sleep_idle_s": self.serve_sleep_idle_s,
                "serve_at_login": self.serve_at_login,
            }
        )
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        """Tolerant: each field of the wrong type falls back to its default."""
        s = cls()
        known = {f.name for f in fields(cls)} - {"unknown"}
        s.unknown = {k: v for k, v in data.items() if k not in known}
        s.version = data.get("version", SCHEMA_VERSION) if isinstance(data.get("version"), int) else SCHEMA_VERSION
        s.model_folders = _unique(_str_list(data.get("model_folders")))
        s.model_files = _unique(_str_list(data.get("model_files")))
        s.last_model = _str_or_none(data.get("last_model"))
        overrides = data.get("overrides")
        if isinstance(overrides, dict):
            for k, v in overrides.items():
                o = ModelOverrides.from_json(v)
                if isinstance(k, str) and not o.is_empty():
                    s.overrides[k] = o
        profiles = data.get("profiles")
        if isinstance(profiles, list):
            for item in profiles:
                p = Profile.from_json(item)
                if p is not None and s.profile(p.name) is None:
                    s.profiles.append(p)
        if data.get("language") in LANGUAGES:
            s.language = data["language"]
        s.engine_binary = _str_or_none(data.get("engine_binary"))
        port = data.get("port")
        if isinstance(port, int) and not isinstance(port, bool) and 1 <= port <= 65535:
            s.port = port
        s.api_key = _str_or_none(data.get("api_key"))
        s.workers = _unique(_str_list(data.get("workers")))
        s.workers_always = data.get("workers_always") is True
        if isinstance(data.get("share_host"), str) and data["share_host"].strip():
            s.share_host = data["share_host"].strip()
        share_port = data.get("share_port")
        if isinstance(share_port, int) and not isinstance(share_port, bool) and 1 <= share_port <= 65535:
            s.share_port = share_port
        if data.get("close_action") in CLOSE_ACTIONS:
            s.close_action = data["close_action"]
        for name in ("geometry", "window_state", "splitter"):
            setattr(s, name, _str_or_none(data.get(name)))
        s.device = _str_or_none(data.get("device"))
        limits = data.get("device_limits")
        if isinstance(limits, dict):
            for k, v in limits.items():
                limit = _limit(v)
                if isinstance(k, str) and limit is not None:
                    s.device_limits[k] = limit
        sleep = data.get("serve_sleep_idle_s")
        if isinstance(sleep, int) and not isinstance(sleep, bool) and (sleep > 0 or sleep == -1):
            s.serve_sleep_idle_s = sleep
        for name in ("logs_visible", "advanced_visible", "network", "chat_save", "keep_prompts",
                     "measure_automatically", "serve_at_login"):
            if isinstance(data.get(name), bool):
                setattr(s, name, data[name])
        return s


@dataclass
class LoadResult:
    settings: Settings
    path: Path
    problem: Message | None = None  # in words, for the window; None when all was well
    set_aside: Path | None = None  # where an unreadable file was moved


def settings_path() -> Path:
    return paths.config_dir() / FILE_NAME


def load(path: Path | None = None, *, now: float | None = None) -> LoadResult:
    """Read the settings; a missing file gives the defaults, a corrupt one is set aside."""
    path = path or settings_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return LoadResult(Settings(), path)
    except OSError as exc:
        # Unreadable (permissions): use defaults, but do not move a file we could not read.
        return LoadResult(
            Settings(), path,
            problem=msg("Your settings in {path} could not be read ({error}); defaults are used for now.",
                        path=str(path), error=exc.strerror or str(exc)),
        )
    why: Message | None = None
    data: Any = None
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict):
            why = msg("it does not hold a settings object")
    except UnicodeDecodeError:
        why = msg("it is not text")
    except json.JSONDecodeError as exc:
        why = msg("it is not valid JSON (line {line}, column {column})", line=exc.lineno, column=exc.colno)
    if why is None:
        settings = Settings.from_json(data)
        problem = None
        if settings.version > SCHEMA_VERSION:
            problem = msg(
                "Your settings were written by a newer Draftwise; the parts this version "
                "understands are used and the rest is kept."
            )
        return LoadResult(settings, path, problem=problem)
    aside = set_aside(path, now)
    if aside:
        problem = msg("Your settings file could not be read: {why}. It was set aside as {name} and the defaults "
                      "are used.", why=why, name=aside.name)
    else:
        problem = msg("Your settings file could not be read: {why}. It could not be moved aside and the defaults "
                      "are used.", why=why)
    return LoadResult(
        Settings(), path,
        problem=problem,
        set_aside=aside,
    )


def save(settings: Settings, path: Path | None = None) -> Path:
    """Write atomically; raises OSError when the folder cannot be written."""
    path = path or settings_path()
    write_atomic(path, json.dumps(settings.to_json(), indent=2, ensure_ascii=False) + "\n")
    return path


# ---------------------------------------------------------------- helpers
def _limit(v: Any) -> dict[str, float] | None:
    """One device limit as stored: exactly one of keep_free_gb / max_gb, a positive number."""
    if not isinstance(v, dict):
        return None
    good = {k: float(x) for k, x in v.items() if k in ("keep_free_gb", "max_gb")
            and isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0}  # fmt: skip
    if len(good) != 1 or good.get("max_gb", 1) <= 0:
        return None
    return good


def _str_or_none(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _str_list(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
