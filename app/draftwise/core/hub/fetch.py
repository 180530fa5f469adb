"""One model fetched with what goes beside it: its vision projector and the drafter its
verdict named (core/hub/judge.py), both into the model's folder, where the reader finds the
projector and the resolver the drafter. The window's Get models and `draftwise get` fetch
through here, so what was judged before download is what lands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.hub import download, helpers
from draftwise.core.hub.files import RemoteModel, projector_model
from draftwise.core.messages import Message, msg
from draftwise.core.records import write_error


@dataclass(frozen=True)
class Fetched:
    model: Path
    drafter: Path | None = None
    projector: Path | None = None
    problem: Message | None = None  # the drafter landed but could not be recorded as the helper


def fetch(model: RemoteModel, folder: Path, *, drafter: RemoteModel | None = None, projector: bool = True,
          progress: Callable[[download.DownloadProgress], None] | None = None,
          cancelled: Callable[[], bool] = lambda: False) -> Fetched:  # fmt: skip
    """Download `model` into `folder`, then its projector (`projector`) and `drafter` beside it.
    A drafter is remembered as the model's helper (the library labels it so)."""
    path = download.download(model, folder, progress=progress, cancelled=cancelled)
    proj = projector_model(model) if projector else None
    proj_path = download.download(proj, folder, progress=progress, cancelled=cancelled,
                                  into=path.parent) if proj is not None else None  # fmt: skip
    if drafter is None:
        return Fetched(path, None, proj_path)
    draft_path = download.download(drafter, folder, progress=progress, cancelled=cancelled, into=path.parent)
    try:
        helpers.remember(draft_path, path)
    except OSError as exc:
        # The files are in place; only the library's "helper" label is lost. Said, not swallowed.
        return Fetched(path, draft_path, proj_path, msg(
            "Could not remember {name} as the helper of {model} ({error}); the library may list it as a model "
            "of its own.", name=draft_path.name, model=path.name, error=write_error(exc)))
    return Fetched(path, draft_path, proj_path)
