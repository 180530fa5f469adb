"""`draftwise get`: this computer's starters by speed, search the model hub, list a
repository's GGUF models, download one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from draftwise.cli.common import UserError


def add_parser(sub: argparse._SubParsersAction) -> None:
    g = sub.add_parser(
        "get", help="get a model from the hub (REPO, or REPO:FILE); alone: this computer's starters",
        description="Download a GGUF model into your library. Honours HF_ENDPOINT and HF_TOKEN. With no "
                    "repository: the starter models for this computer, fastest readable first, each with "
                    "its estimated speed here in tokens per second.",
    )
    g.add_argument("what", nargs="?", help="a repository (org/name), or org/name:file.gguf")
    g.add_argument("--json", action="store_true", help="the starters (no repository given) as JSON")
    g.add_argument("--search", metavar="WORDS", help="find GGUF repositories")
    g.add_argument("--list", action="store_true", help="list the repository's models, download nothing")
    g.add_argument("--no-projector", action="store_true",
                   help="do not download a vision model's projector (its repository's mmproj file) with it")
    g.add_argument("--to", metavar="FOLDER", help="library folder (default: your first library folder)")
    g.add_argument("--machine", default=None,
                   help="judge fit and speed for a machine described in a JSON file "
                        "(its processor's speed as \"cpu_read_gbs\": GB a second the engine reads)")
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
            return _starters(args)
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
        projector = None if args.no_projector else files.projector_model(model)
        if projector is not None:  # beside the model: the planner finds it and passes --mmproj
            proj = download.download(projector, folder, progress=_printer(), into=path.parent)
            print(f"\nDownloaded its vision projector {projector.name} ({human_bytes(projector.size)}) to {proj}")
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


def _rate(args: argparse.Namespace):
    """The processor's rate: described in --machine ("cpu_read_gbs"), else measured here
    (with the installed engine once, then kept; core/machine/speed.py)."""
    import json

    from draftwise.core.engines import discovery
    from draftwise.core.machine import speed

    if args.machine:
        try:
            data = json.loads(Path(args.machine).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"--machine: {exc}") from exc
        gbs = data.get("cpu_read_gbs") if isinstance(data, dict) else None
        if gbs is not None:
            if isinstance(gbs, bool) or not isinstance(gbs, (int, float)) or gbs <= 0:
                raise UserError(f"--machine: cpu_read_gbs must be a number of GB a second (got {gbs!r})")
            return speed.Throughput(float(gbs) * 1e9, "described")
    # The engine a launch would use first (configured, bundled, provisioned, on PATH).
    binary = next((e.binary for e in discovery.find_engines() if e.usable), None)
    if binary is not None and speed.recorded(binary) is None:
        print("Measuring how fast this computer runs models (once, a few seconds)…", file=sys.stderr)
    return speed.throughput(binary)


def _starters(args: argparse.Namespace) -> int:
    import json

    from draftwise.core.hub import catalog
    from draftwise.core.machine import speed
    from draftwise.core.readable import human_bytes

    machine = _machine(args)
    rate = _rate(args)
    offers = catalog.starters_for(machine, rate)
    if args.json:
        print(json.dumps({"rate_gbs": round(rate.cpu / 1e9, 1), "measured_by": rate.source,
                          "readable_at_least": speed.READABLE,
                          "starters": [o.to_json() for o in offers]}, indent=2))
        return 0
    how = {"engine": "measured with the engine", "memory": "a first guess from the memory speed",
           "described": "as described"}.get(rate.source, rate.source)
    print(f"Starters for this computer, the largest that writes at least {speed.READABLE:.0f} tokens/s first "
          f"({rate.cpu / 1e9:.1f} GB/s, {how}):")
    for o in offers:
        s, e = o.starter, o.estimate
        slow = "" if e.readable else "  (slow here)"
        draft = "  + draft model" if s.drafter else ""
        print(f"  {s.repo:<40} {s.quant:<7} {human_bytes(s.size):>9}  about {catalog.rate_words(e.tokens_per_s):>4} "
              f"tokens/s{slow}{draft}")
    print("\nGet one: draftwise get REPO (lists its files), then draftwise get REPO:FILE", file=sys.stderr)
    return 0


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
