"""`draftwise get`: search the model hub, list a repository's GGUF models, download one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from draftwise.cli.common import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "get", help="get a model from the hub (REPO, or REPO:FILE)",
        description="Download a GGUF model into your library. Honours HF_ENDPOINT and HF_TOKEN.",
    )
    g.add_argument("what", nargs="?", help="a repository (org/name), or org/name:file.gguf")
    g.add_argument("--search", metavar="WORDS", help="find GGUF repositories")
    g.add_argument("--list", action="store_true", help="list the repository's models, download nothing")
    g.add_argument("--to", metavar="FOLDER", help="library folder (default: your first library folder)")
    g.add_argument("--machine", default=None, help="judge fit for a machine described in a JSON file")
    g.set_defaults(func=cmd_get)


def cmd_get(args: argparse.Namespace) -> int:
    from draftwise.core.hub import client, download, files
    from draftwise.core.readable import human_bytes

    try:
        if args.search is not None:
            for hit in client.search(args.search):
                gated = "  (gated)" if hit.gated else ""
                print(f"{hit.repo:<60} {hit.downloads:>10,} downloads{gated}")
            return 0
        if not args.what:
            raise UserError("get: name a repository (org/name or org/name:file.gguf), or use --search WORDS")
        repo, _, wanted = args.what.partition(":")
        if repo.count("/") != 1:
            raise UserError(f"get: {args.what!r} is not org/name or org/name:file.gguf")
        models = client.list_models(repo)
        machine = _machine(args)
        if args.list or not wanted:
            for m in models:
                fit = files.judge_fit(m.size, machine)
                parts = f", {len(m.files)} parts" if len(m.files) > 1 else ""
                tag = "  [draft]" if m.drafter else ""
                print(f"{m.name:<56} {m.quant or '?':<8} {human_bytes(m.size):>9}{parts}  {_FIT[fit.level]}{tag}")
            if not wanted and not args.list:
                print("\nChoose one: draftwise get " + f"{repo}:{models[0].name}", file=sys.stderr)
            return 0
        model = next((m for m in models if m.name == wanted or m.first.path == wanted), None)
        if model is None:
            names = ", ".join(m.name for m in models[:6])
            raise UserError(f"get: {wanted} is not a model in {repo}; it has {names}")
        folder = _folder(args)
        path = download.download(model, folder, progress=_printer())
        print(f"\nDownloaded {model.name} ({human_bytes(model.size)}) to {path}")
        _remember_folder(folder)
        return 0
    except client.HubError as exc:
        raise UserError(str(exc)) from exc
    except download.DownloadCancelled:
        print("\nStopped; run the same command again to continue where it stopped.", file=sys.stderr)
        return 130


_FIT = {"fits": "fits this machine", "gpu-partly": "fits, partly on the CPU", "too-big": "too big for this machine"}


def _machine(args: argparse.Namespace):
    from draftwise.core.machine import hardware

    if args.machine:
        try:
            return hardware.load_machine(args.machine)
        except (OSError, ValueError) as exc:
            raise UserError(f"--machine: {exc}") from exc
    return hardware.inventory()


def _folder(args: argparse.Namespace) -> Path:
    from draftwise.core import paths, settings

    if args.to:
        return Path(args.to).expanduser().resolve()
    folders = settings.load().settings.model_folders
    return Path(folders[0]) if folders else paths.models_dir()


def _remember_folder(folder: Path) -> None:
    """The library shows what was downloaded: its folder joins the library folders."""
    from draftwise.core import settings

    loaded = settings.load()
    if loaded.settings.add_folder(folder):
        settings.save(loaded.settings)


def _printer():
    from draftwise.core.readable import human_bytes, human_duration

    def show(p) -> None:
        eta = f", {human_duration(p.eta_s)} left" if p.eta_s is not None else ""
        print(f"\r  {p.fraction * 100:5.1f}%  {human_bytes(p.done)} of {human_bytes(p.total)}"
              f"  {human_bytes(p.speed)}/s{eta}   ", end="", flush=True)

    return show
