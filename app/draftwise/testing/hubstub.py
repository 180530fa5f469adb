"""A loopback stand-in for the model hub, for tests and demos: the real huggingface_hub
client talks to it through `HF_ENDPOINT`.

It serves the few routes Draftwise uses, shaped like the hub's answers:
- `GET /api/models?search=…&filter=gguf` — repository search,
- `GET /api/models/<repo>/tree/<rev>` — the file list with sizes and LFS sha256,
- `GET|HEAD /<repo>/resolve/<rev>/<file>` — the bytes, with `Range` support,
and the hub's error shapes (`X-Error-Code: GatedRepo` with 401, `RepoNotFound` with 404).
Faults are switched on per file: `drop_after` closes the connection once after N bytes,
`corrupt` serves bytes that differ from the listed sha256. Bound to 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class StubFile:
    data: bytes
    drop_after: int | None = None  # close the connection once after this many bytes
    corrupt: bool = False  # serve different bytes than the sha256 says
    listed_size: int | None = None  # the size the listing claims (demos: a 4 GB file, no bytes)
    requests: list[str] = field(default_factory=list)  # Range headers seen ("" for none)
    # A file on disk served in place of `data` (a sparse file of a real model's size: its
    # header, then a hole), with the sha256 the listing gives (hashing gigabytes of hole
    # would only slow the tests; give the real one where a test downloads the file).
    source: Path | None = None
    sha256: str | None = None
    ignore_range: bool = False  # answer every request with the whole file (200), as some proxies do
    cut_at: int | None = None  # serve only this many bytes, whatever the listing says
    served: int = 0  # bytes sent

    @property
    def size(self) -> int:
        if self.listed_size is not None:
            return self.listed_size
        return self.source.stat().st_size if self.source is not None else len(self.data)

    @property
    def real_size(self) -> int:
        real = self.source.stat().st_size if self.source is not None else len(self.data)
        return real if self.cut_at is None else min(real, self.cut_at)

    def digest(self) -> str:
        if self.sha256 is not None:
            return self.sha256
        if self.source is not None:
            h = hashlib.sha256()
            with self.source.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            self.sha256 = h.hexdigest()
            return self.sha256
        return hashlib.sha256(self.data).hexdigest()

    def read(self, start: int, stop: int) -> bytes:
        stop = min(stop, self.real_size)
        if self.source is None:
            return self.data[start:stop]
        with self.source.open("rb") as f:
            f.seek(start)
            return f.read(max(0, stop - start))


@dataclass
class StubRepo:
    files: dict[str, StubFile] = field(default_factory=dict)
    gated: bool = False
    downloads: int = 0


class HubStub:
    def __init__(self, port: int = 0) -> None:
        self.repos: dict[str, StubRepo] = {}
        self.token: str | None = None  # the token a gated repo accepts
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def add_file(self, repo: str, path: str, data: bytes | Path, **faults) -> StubFile:
        body = data.read_bytes() if isinstance(data, Path) else data
        f = StubFile(body, **faults)
        self.repos.setdefault(repo, StubRepo()).files[path] = f
        return f

    def add_sparse(self, repo: str, path: str, source: Path, **faults) -> StubFile:
        """A file served from disk as it is (a sparse real-geometry model: no bytes held)."""
        f = StubFile(b"", source=source, **faults)
        self.repos.setdefault(repo, StubRepo()).files[path] = f
        return f

    def __enter__(self) -> HubStub:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(hub: HubStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args) -> None:  # quiet in tests
            return

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
                  ctype: str = "application/json") -> None:  # fmt: skip
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(status, json.dumps({"error": message}).encode(),
                       {"X-Error-Code": code, "X-Error-Message": message})

        def _repo(self, name: str) -> StubRepo | None:
            repo = hub.repos.get(name)
            if repo is None:
                self._error(404, "RepoNotFound", "Repository not found")
                return None
            if repo.gated and self.headers.get("Authorization") != f"Bearer {hub.token}":
                self._error(401, "GatedRepo", "Access to this model is restricted.")
                return None
            return repo

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            parsed = urllib.parse.urlparse(self.path)
            parts = [urllib.parse.unquote(p) for p in parsed.path.strip("/").split("/")]
            if parts[:2] == ["api", "models"] and len(parts) == 2:
                return self._search(urllib.parse.parse_qs(parsed.query))
            if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
                return self._tree("/".join(parts[2:4]))
            if len(parts) >= 5 and parts[2] == "resolve":
                return self._file("/".join(parts[:2]), "/".join(parts[4:]))
            self._error(404, "EntryNotFound", "no such route")

        def _search(self, query: dict[str, list[str]]) -> None:
            words = (query.get("search") or [""])[0].lower()
            hits = [
                {"id": name, "modelId": name, "downloads": r.downloads, "likes": 0,
                 "gated": "auto" if r.gated else False, "tags": ["gguf"], "private": False}
                for name, r in hub.repos.items() if words in name.lower()
            ]
            hits.sort(key=lambda h: -h["downloads"])
            self._send(200, json.dumps(hits).encode())

        def _tree(self, name: str) -> None:
            repo = self._repo(name)
            if repo is None:
                return
            items = []
            for path, f in repo.files.items():
                sha = f.digest()
                size = f.size
                items.append({"type": "file", "path": path, "size": size,
                              "oid": hashlib.sha1(sha.encode()).hexdigest(),
                              "lfs": {"oid": sha, "size": size, "pointerSize": 134}})
            self._send(200, json.dumps(items).encode())

        def _file(self, name: str, path: str) -> None:
            repo = self._repo(name)
            if repo is None:
                return
            f = repo.files.get(path)
            if f is None:
                return self._error(404, "EntryNotFound", f"{path} does not exist")
            total = f.size
            sha = f.digest()
            common = {"X-Repo-Commit": "0" * 40, "ETag": f'"{sha}"', "X-Linked-Etag": f'"{sha}"',
                      "X-Linked-Size": str(total), "Accept-Ranges": "bytes"}
            rng = self.headers.get("Range", "")
            if self.command == "GET":
                f.requests.append(rng)
            start, stop = 0, total
            if rng.startswith("bytes=") and not f.ignore_range:
                first, _, last = rng.removeprefix("bytes=").partition("-")
                start = int(first)
                stop = min(total, int(last) + 1) if last else total
            ranged = bool(rng) and not f.ignore_range
            # A file shorter than its listing (cut_at) answers honestly for the bytes it has.
            stop = min(stop, f.real_size)
            if ranged and start >= stop:
                return self._error(416, "RangeNotSatisfiable", f"bytes {start}- are past the end of {path}")
            status = 206 if ranged else 200
            if ranged:
                common["Content-Range"] = f"bytes {start}-{stop - 1}/{total}"
            length = stop - start
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(length))
            for k, v in common.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "GET":
                return
            cut = None
            if f.drop_after is not None and length > f.drop_after:
                cut, f.drop_after = f.drop_after, None
            pos, end = start, stop if cut is None else start + cut
            chunk = b""
            try:
                while pos < end:
                    chunk = f.read(pos, min(end, pos + (1 << 20)))
                    if not chunk:
                        break  # a file cut short: less than Content-Length, then the line closes
                    if f.corrupt:
                        chunk = bytes(b ^ 0xFF for b in chunk)
                    # Counted before it is sent: the client may read it (and a test compare the
                    # count) before this thread runs again.
                    f.served += len(chunk)
                    self.wfile.write(chunk)
                    pos += len(chunk)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                # The client had what it wanted (a header read) and hung up: the chunk that
                # failed was not sent.
                f.served -= len(chunk) if pos < end else 0
            if pos < stop:
                self.close_connection = True

    return Handler
