"""A hub file's GGUF header without downloading the file: HTTP range requests, then a local
copy that the reader, the resolver and the planner take like any file on disk.

The reader walks the header through `RangeFile` (seek and readinto over ranges of the
file's resolve URL, through huggingface_hub's session and authentication headers, so
`HF_ENDPOINT` and `HF_TOKEN` hold). Ranges grow as the walk goes on: `FIRST_RANGE` first,
then a quarter of what was read so far (at most `MAX_RANGE`), never past 1 % of the file
before the reader needs it, so a header of n bytes costs about log(n) requests and reads at
most a quarter more than itself (or the first range, for a header smaller than that); numeric
arrays (scores, token types) are stepped over by arithmetic and never fetched. Once the header parses, its
bytes are written into `<cache>/hub-headers/<repo>/<revision>/<file>` as a **sparse file of
the file's full size**: the header, then a hole where the tensor data is. The reader checks
every tensor's offset against that size exactly as it checks a downloaded file, and every
later question (a re-plan, a drafter's token list for the pairing rule) reads the copy. A
meta file beside it keeps the hub's sha256 and size: a changed file on the hub is read
again. A header copy takes its header's bytes on disk (a few MB), however large the model.

Header sizes are set by the vocabulary: its strings come before the tensor table and have to
be walked (docs/get-models.md lists real ones: 0.76 MB for Mistral 7B's 32k tokens, 5.95 MB for
Qwen2.5's 151k tokens and merges, 6.5 MB for Gemma 3's 262k tokens, 15.8 MB for Gemma 4's).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from draftwise.core import paths
from draftwise.core.gguf import reader as gguf
from draftwise.core.hub import client, download
from draftwise.core.hub.client import HubError
from draftwise.core.hub.files import HubFile
from draftwise.core.messages import msg
from draftwise.core.readable import human_bytes

FIRST_RANGE = 256 << 10
MAX_RANGE = 8 << 20
# No real header comes near this (Gemma 4's, 262k tokens with merges, is 15.8 MB): past it a
# file is judged by downloading it, and a server that ignores Range is not read further.
HEADER_CAP = 48 << 20
# The reader's window over the network: what it asks for at once beyond the bytes it needs.
WINDOW = 64 << 10
TIMEOUT_S = 20.0
RETRIES = 3
HEADERS_DIR = "hub-headers"
META_SUFFIX = ".header.json"


@dataclass(frozen=True)
class HeaderCopy:
    """A hub file's header as a local sparse copy of the file's size."""

    path: Path
    size: int  # the file's size on the hub
    header_bytes: int  # the header's own length (where the tensor data starts)
    fetched: int  # bytes read over the network to read it (when it was read)
    kept: bool = False  # found in the cache: nothing was read this time


def headers_dir() -> Path:
    return paths.cache_dir() / HEADERS_DIR


def copy_path(repo: str, revision: str, file: str) -> Path:
    return headers_dir().joinpath(*repo.split("/"), revision, *file.split("/"))


class _Ranges:
    """The bytes of one hub file fetched so far, and how to fetch more."""

    def __init__(self, repo: str, file: HubFile, revision: str, cap: int) -> None:
        self.repo, self.file, self.revision, self.cap = repo, file, revision, cap
        self.data = bytearray()  # bytes 0..len(data) of the file, as fetched
        self.fetched = 0
        self.requests = 0
        self.where = f"{repo}/{file.path}"
        # A server that ignores Range answers with the whole file: its one answer is read on
        # as the header needs, never past the cap, and closed at the end.
        self._whole = None
        self.ignored_range = False

    def close(self) -> None:
        if self._whole is not None:
            cm, self._whole = self._whole[0], None
            cm.__exit__(None, None, None)

    def ensure(self, end: int) -> None:
        """Fetch until bytes [0, end) are held (or the file ends)."""
        end = min(end, self.file.size)
        while len(self.data) < end:
            have = len(self.data)
            if have >= self.cap:
                if self.ignored_range:
                    raise _ignored_range(self.where, have)
                raise HubError("file", msg(
                    "{file}: its header is larger than {cap}, which no GGUF model's is; it cannot be judged "
                    "before download. Download it to see its plan.", file=self.where, cap=human_bytes(self.cap)))
            grow = min(MAX_RANGE, max(FIRST_RANGE, have // 4))
            want = have + grow
            # Below 1 % of the file, a range never reaches past it unless the reader needs the
            # bytes: a header just under 1 % is then read within 1 %.
            budget = max(FIRST_RANGE, self.file.size // 100)
            if have < budget:
                want = min(want, budget)
            stop = min(self.file.size, self.cap, max(end, want))
            self._get(stop)
            if len(self.data) == have:
                raise HubError("file", msg(
                    "{file} on the hub is shorter than its listing says ({size}): it ended after {got}. "
                    "Refresh the list; if it repeats, the repository's file is damaged.",
                    file=self.where, size=human_bytes(self.file.size), got=human_bytes(have)))

    def _get(self, stop: int) -> None:
        from huggingface_hub import hf_hub_url
        from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

        if self._whole is not None:
            self._read(self._whole[1], stop)
            return
        url = hf_hub_url(self.repo, self.file.path, revision=self.revision, endpoint=client.endpoint())
        tries = 0
        while True:
            have = len(self.data)
            headers = build_hf_headers(token=client.token())
            headers["Range"] = f"bytes={have}-{stop - 1}"
            try:
                self.requests += 1
                cm = get_session().stream("GET", url, headers=headers, follow_redirects=True, timeout=TIMEOUT_S)
                r = cm.__enter__()
                keep = False
                try:
                    if r.status_code == 416:  # nothing at this offset: the file ends before it
                        return
                    if r.status_code >= 400:
                        r.read()
                        hf_raise_for_status(r)
                    if r.status_code != 206:
                        if have:  # the whole file again, from its start: not what was asked
                            raise _ignored_range(self.where, have)
                        self.ignored_range, keep = True, True
                        self._whole = (cm, r.iter_bytes(WINDOW))
                        self._read(self._whole[1], stop)
                        return
                    self._read(r.iter_bytes(WINDOW), stop)
                    return
                finally:
                    if not keep:
                        cm.__exit__(None, None, None)
            except HubError:
                raise
            except Exception as exc:  # noqa: BLE001 - a dropped connection is retried, the rest explained
                if download.transient(exc) and tries < RETRIES and self._whole is None:
                    tries += 1
                    time.sleep(0.2 * tries)
                    continue
                if download.transient(exc):
                    raise HubError("network", msg(
                        "The connection to the hub kept dropping while reading {file}'s header ({error}); "
                        "check the network and try again.", file=self.where, error=type(exc).__name__)) from exc
                raise client.translate_error(exc, self.where) from exc

    def _read(self, chunks, stop: int) -> None:
        """Take chunks until `stop` bytes are held or the answer ends."""
        for chunk in chunks:
            take = chunk[: stop - len(self.data)]
            self.data += take
            self.fetched += len(chunk)
            if len(self.data) >= stop:
                if len(take) < len(chunk):  # a whole-file answer overshot: keep the rest (to the cap)
                    self.data += chunk[len(take):][: max(0, self.cap - len(self.data))]
                return


def _ignored_range(where: str, have: int) -> HubError:
    # "file", not "network": the hub answered; only this way of reading it is refused.
    return HubError("file", msg(
        "The hub (or a proxy) ignores partial requests (HTTP Range), so {file} cannot be judged before "
        "download; Draftwise stopped after {got}. Download it to see its plan.", file=where, got=human_bytes(have)))


class RangeFile(io.RawIOBase):
    """A read-only file over `_Ranges`: what the reader's seek and readinto see."""

    def __init__(self, ranges: _Ranges) -> None:
        super().__init__()
        self.ranges = ranges
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.ranges.file.size}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, b) -> int:  # type: ignore[override]
        n = min(len(b), self.ranges.file.size - self.pos)
        if n <= 0:
            return 0
        self.ranges.ensure(self.pos + n)
        got = max(0, min(n, len(self.ranges.data) - self.pos))
        b[:got] = self.ranges.data[self.pos : self.pos + got]
        self.pos += got
        return got


def read_remote_header(repo: str, file: HubFile, revision: str = "main", *,
                       cap: int = HEADER_CAP) -> HeaderCopy:  # fmt: skip
    """The header of `file` in `repo`, as a sparse local copy (fetched once per sha256).

    HubError, with the next step, for what the hub or the network refused and for a file
    that is not a GGUF model or whose header is cut short."""
    dest = copy_path(repo, revision, file.path)
    kept = _kept(dest, file)
    if kept is not None:
        return kept
    ranges = _Ranges(repo, file, revision, cap)
    try:
        header = gguf.read_header_stream(RangeFile(ranges), file.size, file.path, window=WINDOW)
    except gguf.GGUFError as exc:
        where = msg(" (at byte {offset})", offset=exc.offset) if exc.offset is not None else ""
        raise HubError("file", msg(
            "{file} cannot be read as a GGUF model: {problem}{where}. Choose another file of the repository.",
            file=ranges.where, problem=exc.reason, where=where)) from exc
    finally:
        ranges.close()
    _write_copy(dest, bytes(ranges.data[: header.data_offset]), file, ranges.fetched)
    return HeaderCopy(dest, file.size, header.data_offset, ranges.fetched)


def _kept(dest: Path, file: HubFile) -> HeaderCopy | None:
    meta = dest.with_name(dest.name + META_SUFFIX)
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
        if (data.get("size") == file.size and data.get("sha256") == file.sha256
                and dest.stat().st_size == file.size):  # fmt: skip
            return HeaderCopy(dest, file.size, int(data["header_bytes"]), int(data["fetched"]), kept=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not kept (or damaged): read again
    return None


def _write_copy(dest: Path, header: bytes, file: HubFile, fetched: int) -> None:
    """The header, then a hole to the file's size; written beside and renamed, so a copy is
    whole or absent. The meta goes last: a copy without it is read again."""
    _write_sparse(dest, header, file.size)
    meta = dest.with_name(dest.name + META_SUFFIX)
    meta.write_text(json.dumps({"size": file.size, "sha256": file.sha256, "header_bytes": len(header),
                                "fetched": fetched}), encoding="utf-8")


def copy_sparse(src: Path, dest: Path, header_bytes: int) -> None:
    """Another sparse copy of a header copy (where a hard link cannot be made)."""
    with src.open("rb") as f:
        header = f.read(header_bytes)
    _write_sparse(dest, header, src.stat().st_size)


def _write_sparse(dest: Path, header: bytes, size: int) -> None:
    """Written under a name of its own and renamed: two readers of one header (the window's
    starters and a listing) each write a whole copy, and the last rename wins."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            _make_sparse(f)
            f.write(header)
            f.truncate(size)
        os.replace(name, dest)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _make_sparse(f) -> None:
    """On Windows a file is sparse only when marked so (NTFS would allocate the hole)."""
    if os.name != "nt":
        return
    import ctypes
    import msvcrt
    from ctypes import wintypes

    fsctl_set_sparse = 0x900C4
    handle = msvcrt.get_osfhandle(f.fileno())
    returned = wintypes.DWORD()
    ctypes.windll.kernel32.DeviceIoControl(  # type: ignore[attr-defined]
        wintypes.HANDLE(handle), fsctl_set_sparse, None, 0, None, 0, ctypes.byref(returned), None)

