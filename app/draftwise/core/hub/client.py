"""The model hub through huggingface_hub: search GGUF repositories, list a repository's files.

`HF_ENDPOINT` (a mirror, or the tests' loopback stand-in) and `HF_TOKEN` (gated models) are
read at each call, not at import, so a setting changed while the app runs takes effect.
"""

from __future__ import annotations

import os
import socket
import urllib.parse
from dataclasses import dataclass

from draftwise.core.errors import FieldError
from draftwise.core.hub.files import HubFile, RemoteModel, group_models
from draftwise.core.messages import Message, msg

DEFAULT_ENDPOINT = "https://huggingface.co"
SEARCH_LIMIT = 30


class HubError(FieldError):
    """The hub refused or could not be reached; the message says what to do."""

    def __init__(self, field_name: str, message: Message) -> None:
        super().__init__(field_name, message)  # FieldError keeps the Message; str(exc) is its English


@dataclass(frozen=True)
class RepoHit:
    repo: str
    downloads: int = 0
    likes: int = 0
    gated: bool = False


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def token() -> str | None:
    return os.environ.get("HF_TOKEN") or None


CONNECT_TIMEOUT_S = 3.0


def _api():
    from huggingface_hub import HfApi  # imported late: the window starts without it

    _check_reachable()
    return HfApi(endpoint=endpoint(), token=token())


def _check_reachable() -> None:
    """One quick connection first: huggingface_hub retries an unreachable host with backoff
    for about 20 seconds, far too long to wait for the sentence "no network"."""
    url = urllib.parse.urlsplit(endpoint())
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname or "", port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise translate_error(exc, endpoint()) from exc


def search(query: str, limit: int = SEARCH_LIMIT) -> list[RepoHit]:
    """GGUF repositories matching `query`, most downloaded first."""
    try:
        hits = _api().list_models(search=query or None, filter="gguf", sort="downloads", limit=limit)
        return [RepoHit(h.id, int(h.downloads or 0), int(h.likes or 0), bool(h.gated)) for h in hits]
    except HubError:
        raise  # already the sentence (the reachability check's)
    except Exception as exc:  # noqa: BLE001 - every hub failure becomes one sentence
        raise translate_error(exc, query) from exc


def list_models(repo: str, revision: str | None = None) -> list[RemoteModel]:
    """The GGUF models in `repo` (shards grouped), with sizes and sha256 from the hub."""
    try:
        entries = _api().list_repo_tree(repo, recursive=True, revision=revision)
        files = [
            HubFile(e.path, int(e.size), e.lfs.sha256 if getattr(e, "lfs", None) else None)
            for e in entries
            if hasattr(e, "size")
        ]
    except HubError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise translate_error(exc, repo) from exc
    models = group_models(repo, files)
    if not models:
        raise HubError("repo", msg(
            "{repo} has no GGUF model files; choose a repository whose name ends in -GGUF.",
            repo=repo,
        ))
    return models


def translate_error(exc: BaseException, what: str) -> HubError:
    """huggingface_hub's and the network's exceptions as a sentence with the next step."""
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return HubError("repo", msg(
            "{repo} is gated: open its page on the hub, accept the terms, then set an access "
            "token (HF_TOKEN) and try again.", repo=what,
        ))
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError("repo", msg(
            "{repo} was not found on the hub (or it is private): check the name; for a private "
            "repository set an access token (HF_TOKEN).", repo=what,
        ))
    if isinstance(exc, errors.RemoteEntryNotFoundError):
        return HubError("file", msg("{what} is not in the repository any more; refresh the list.", what=what))
    if isinstance(exc, errors.HfHubHTTPError):
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (401, 403):
            return HubError("repo", msg(
                "The hub refused access to {repo} (HTTP {status}): check your access token (HF_TOKEN).",
                repo=what, status=status,
            ))
        return HubError("repo", msg("The hub answered with an error for {repo}: {error}", repo=what, error=str(exc)))
    return HubError("network", msg(
        "Could not reach the model hub at {endpoint} ({error}); check the network connection.",
        endpoint=endpoint(), error=type(exc).__name__ + (f": {exc}" if str(exc) else ""),
    ))
