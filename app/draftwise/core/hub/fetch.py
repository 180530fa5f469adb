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


@dataclass(frozen=True)
class Fetched:
    model: Path
    drafter: Path | None = None
    projector: Path | None = None


def fetch(model: RemoteModel, folder: Path, *, drafter: RemoteModel | None = None, projector: bool = True,
          progress: Callable[[download.Progress], None] | None = None,
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
    helpers.remember(draft_path, path)
    return Fetched(path, draft_path, proj_path)
