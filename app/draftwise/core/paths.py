"""Where Draftwise keeps things on this machine.

One place for every folder, so tests (and portable installs) can move them all with
environment variables instead of patching platformdirs in many modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import platformdirs

APP_NAME = "draftwise"


def _dir(env_var: str, default: Callable[[], str]) -> Path:
    # The platform's folder is only asked for without an override (it costs more than the
    # rest of the call, and a launch asks for the data folder several times).
    override = os.environ.get(env_var)
    return Path(override) if override else Path(default())


def data_dir() -> Path:
    """Provisioned engines, the broken-drafter record: things worth keeping."""
    return _dir("DRAFTWISE_DATA_DIR", lambda: platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Engine sources and build trees, generated models: things that can be rebuilt."""
    return _dir("DRAFTWISE_CACHE_DIR", lambda: platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    """Settings the user made."""
    return _dir("DRAFTWISE_CONFIG_DIR", lambda: platformdirs.user_config_dir(APP_NAME, appauthor=False))


def engines_dir() -> Path:
    return data_dir() / "engines"


def models_dir() -> Path:
    """Where downloaded models go unless the person chose a library folder."""
    return _dir("DRAFTWISE_MODELS_DIR", lambda: str(data_dir() / "models"))
