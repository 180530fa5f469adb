"""Which files Draftwise downloaded as another model's drafter ("Get the draft model too").

The library labels such a file "helper", whatever its own header says (a small chat model
such as Gemma 3 270M reads as "chat" on its own): it is there because Draftwise fetched it
for a bigger model. One small record in the data folder, `helpers.json`:
`{"version": 1, "helpers": {"<drafter path>": "<model path>"}}`. A damaged record is set
aside and starts empty; a record that cannot be written costs only the label (the library
still pairs the files by folder and family, core/speculation/tags.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from draftwise.core import paths, settings

RECORD = "helpers.json"
VERSION = 1
log = logging.getLogger(__name__)


def record_path() -> Path:
    return paths.data_dir() / RECORD


def recorded(path: Path | None = None) -> dict[str, str]:
    """drafter path -> the model it was fetched for; {} when there is no readable record."""
    path = path or record_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        settings.set_aside(path)
        return {}
    helpers = data.get("helpers") if isinstance(data, dict) else None
    if not isinstance(helpers, dict):
        settings.set_aside(path)
        return {}
    return {str(k): str(v) for k, v in helpers.items() if isinstance(k, str) and isinstance(v, str)}


def remember(drafter: Path, model: Path, path: Path | None = None) -> bool:
    """Record that `drafter` was fetched as `model`'s helper; False when it could not be written."""
    path = path or record_path()
    helpers = recorded(path)
    helpers[str(drafter)] = str(model)
    try:
        settings.write_atomic(path, json.dumps({"version": VERSION, "helpers": helpers}, indent=2) + "\n")
    except OSError as exc:
        log.warning("could not record %s as a helper: %s", drafter, exc)
        return False
    return True
