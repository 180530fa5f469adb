"""HTTP to the engines Draftwise runs on this computer: the one client, never through a proxy.

urllib's default opener sends a request through the proxy the environment names
(`http_proxy`, `HTTP_PROXY`) unless `no_proxy` lists the host. Behind a proxy, a request to
127.0.0.1 would then go to the proxy and fail: the speed probe, which posted with a bare
`urllib.request.urlopen`, quietly fell back to the memory scan that way (issue 36). Every
request core makes to its own engines (the launch's readiness, the speed probe, the
measurements, the machine check, the CLI's live figures) goes through `OPENER`, which has no
proxy at all; the window's Qt client keeps loopback from proxies the same way
(services/engine_process.py, `QNetworkProxy.NoProxy`).

Below every other core package (beside the process owner), so any part of core that talks
to an engine it started uses this one client. The model hub is no engine of ours: it goes
through huggingface_hub, which honours the user's proxy, as it should.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

# No proxy, whatever the environment names: the engines listen on this computer.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def health_status(url: str, api_key: str = "", timeout: float = 1.0) -> int | None:
    """HTTP status of GET url, or None while nothing answers."""
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    try:
        with OPENER.open(req, timeout=timeout) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, urllib.error.URLError):
        return None


def request(base_url: str, api_key: str, path: str, body: dict | None = None,
            timeout: float = 5.0) -> tuple[int, bytes]:
    """(status, body) of a GET (`body` None) or a JSON POST to `base_url + path`; OSError when
    nothing answers."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data)
    req.add_header("Authorization", f"Bearer {api_key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()
