"""Which files Draftwise downloaded as another model's drafter ("Get the draft model too").

The library labels such a file "helper", whatever its own header says (a small chat model
such as Gemma 3 270M reads as "chat" on its own): it is there because Draftwise fetched it
for a bigger model. One small record in the data folder, `helpers.json`:
`{"version": 1, "helpers": {"<drafter path>": "<model path>"}}`, one `records.JsonRecord`
(docs/records.md: a damaged record is set aside and starts empty, a newer one left alone). A
record that cannot be written costs only the label (the library still pairs the files by
folder and family, core/speculation/tags.py), and, as for every record, the user is told
(core/hub/fetch.py names it): `remember` raises, it never swallows the error.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from draftwise.core import paths
from draftwise.core.messages import msg
from draftwise.core.records import JsonRecord

RECORD = "helpers.json"
VERSION = 1
log = logging.getLogger(__name__)


def record_path() -> Path:
    return paths.data_dir() / RECORD


def _parse(helpers: Any, _version: int) -> dict[str, str]:
    if not isinstance(helpers, dict):
        raise ValueError("no helpers object")
    return {str(k): str(v) for k, v in helpers.items() if isinstance(k, str) and isinstance(v, str)}


def record_file(path: Path | None = None) -> JsonRecord[dict[str, str]]:
    return JsonRecord(path or record_path(), msg("record of helper drafters"), VERSION, parse=_parse,
                      dump=lambda helpers: helpers, empty=dict, container="helpers")


def recorded(path: Path | None = None) -> dict[str, str]:
    """drafter path -> the model it was fetched for; {} when there is no readable record."""
    return record_file(path).read()


def remember(drafter: Path, model: Path, path: Path | None = None) -> None:
    """Record that `drafter` was fetched as `model`'s helper. OSError when it could not be
    written (records.NotWritten for a record that must not be), for the caller to name."""
    record_file(path).update(lambda helpers: {**helpers, str(drafter): str(model)})
