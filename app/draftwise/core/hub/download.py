"""Download a model into the library folder: resumable, checked, never half-finished.

Each file goes to `<name>.part` beside its final name and is renamed only once its size and
sha256 match what the hub lists. A cancel, a crash or a dropped connection leaves the `.part`
file, and the next download continues from its end (an HTTP Range request). huggingface_hub
gives the URL, the authentication headers and the HTTP session; the transfer loop is ours,
because its own download throws a partial file away when it is interrupted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from draftwise.core.hub import client
from draftwise.core.hub.client import HubError
from draftwise.core.hub.files import HubFile, RemoteModel
from draftwise.core.messages import msg
from draftwise.core.readable import human_bytes

CHUNK = 1 << 20
# Left free on the disk after the download: the system and the engine's own files need room.
DISK_MARGIN = 256 << 20
RETRIES = 5  # dropped connections resumed in one download before giving up
RETRY_WAIT_S = 0.5
BAD_SUFFIX = ".bad-checksum"


class DownloadCancelled(Exception):
    """The person stopped the download; what arrived is kept for the next try."""


@dataclass(frozen=True)
class DownloadProgress:
    file: str
    done: int  # bytes of the whole model on disk
    total: int
    speed: float  # bytes per second, recent
    eta_s: float | None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0


def destination(folder: Path, model: RemoteModel, into: Path | None = None) -> Path:
    """Where the model's first file lands: <library>/<publisher>/<repository>/<file>, or
    `into` (a drafter goes into its target model's folder, where the resolver finds it)."""
    return (into or folder.joinpath(*model.repo.split("/"))) / Path(model.first.path).name


def part_path(final: Path) -> Path:
    return final.with_name(final.name + ".part")


def bytes_on_disk(folder: Path, model: RemoteModel, into: Path | None = None) -> int:
    base = destination(folder, model, into).parent
    total = 0
    for f in model.files:
        final = base / Path(f.path).name
        if final.is_file():
            total += f.size
        elif part_path(final).is_file():
            total += min(part_path(final).stat().st_size, f.size)
    return total


def check_disk(folder: Path, model: RemoteModel, into: Path | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    need = model.size - bytes_on_disk(folder, model, into)
    free = shutil.disk_usage(folder).free
    if need + DISK_MARGIN > free:
        raise HubError("folder", msg(
            "Not enough disk space in {folder}: {name} needs {need} more, {free} is free. "
            "Free some space or choose another library folder.",
            folder=str(folder), name=model.name, need=human_bytes(need + DISK_MARGIN),
            free=human_bytes(free),
        ))


def download(
    model: RemoteModel,
    folder: Path,
    *,
    progress: Callable[[DownloadProgress], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    revision: str = "main",
    into: Path | None = None,
) -> Path:
    """Download every file of `model` into `folder` (or `into`); the path of its first file."""
    check_disk(folder, model, into)
    first = destination(folder, model, into)
    first.parent.mkdir(parents=True, exist_ok=True)
    meter = _Meter(model, bytes_on_disk(folder, model, into), progress)
    for f in model.files:
        final = first.parent / Path(f.path).name
        if final.is_file() and final.stat().st_size == f.size:
            continue
        _fetch(model.repo, f, final, revision, meter, cancelled)
    return first


class _Meter:
    def __init__(self, model: RemoteModel, done: int, report: Callable[[DownloadProgress], None] | None):
        self.total, self.done, self.report = model.size, done, report
        self.window: list[tuple[float, int]] = [(time.monotonic(), done)]
        self.file = model.name
        self.last = 0.0

    def add(self, n: int, *, force: bool = False) -> None:
        self.done += n
        now = time.monotonic()
        if self.report is None or (not force and now - self.last < 0.2):
            return
        self.last = now
        self.window = [*self.window[-20:], (now, self.done)]
        t0, d0 = self.window[0]
        speed = (self.done - d0) / (now - t0) if now > t0 else 0.0
        eta = (self.total - self.done) / speed if speed > 0 else None
        self.report(DownloadProgress(self.file, self.done, self.total, speed, eta))


def _fetch(repo: str, f: HubFile, final: Path, revision: str, meter: _Meter,
           cancelled: Callable[[], bool]) -> None:  # fmt: skip
    from huggingface_hub import hf_hub_url
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    url = hf_hub_url(repo, f.path, revision=revision, endpoint=client.endpoint())
    part = part_path(final)
    digest = hashlib.sha256()
    have = _hash_existing(part, digest, f.size)
    meter.file = Path(f.path).name
    tries = 0
    while have < f.size:
        headers = build_hf_headers(token=client.token())
        if have:
            headers["Range"] = f"bytes={have}-"
        try:
            with get_session().stream("GET", url, headers=headers, follow_redirects=True, timeout=30) as r:
                if r.status_code >= 400:
                    r.read()
                    hf_raise_for_status(r)
                if have and r.status_code != 206:
                    # The server ignored the range: start the file again.
                    have, digest = 0, hashlib.sha256()
                with part.open("r+b" if have else "wb") as out:
                    out.seek(have)
                    out.truncate()
                    for chunk in r.iter_bytes(CHUNK):
                        if cancelled():
                            raise DownloadCancelled(str(part))
                        out.write(chunk)
                        digest.update(chunk)
                        have += len(chunk)
                        meter.add(len(chunk))
                        tries = 0
        except DownloadCancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - a dropped connection is resumed, the rest explained
            if transient(exc) and tries < RETRIES:
                tries += 1
                time.sleep(RETRY_WAIT_S)
                continue
            raise client.translate_error(exc, f"{repo}/{f.path}") from exc
        if have < f.size:
            # The stream ended early without an error: resume, but not forever.
            tries += 1
            if tries > RETRIES:
                break
    meter.add(0, force=True)
    if have != f.size or (f.sha256 and digest.hexdigest() != f.sha256):
        bad = final.with_name(final.name + BAD_SUFFIX)
        os.replace(part, bad)
        raise HubError("file", msg(
            "{name} arrived damaged (its checksum does not match the hub's); it was set aside as "
            "{bad}. Download it again; if this repeats, the network or the mirror changes data.",
            name=final.name, bad=bad.name,
        ))
    os.replace(part, final)


def _hash_existing(part: Path, digest: hashlib._Hash, size: int) -> int:
    """Bytes already downloaded (hashed into `digest`); a part longer than the file restarts."""
    try:
        have = part.stat().st_size
    except FileNotFoundError:
        return 0
    if have > size:
        part.unlink()
        return 0
    with part.open("rb") as src:
        for chunk in iter(lambda: src.read(CHUNK), b""):
            digest.update(chunk)
    return have


def transient(exc: BaseException) -> bool:
    """A dropped or timed-out connection (worth retrying), as the HTTP client raises it."""
    import httpx2

    return isinstance(exc, (httpx2.TransportError, ConnectionError, TimeoutError))
