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
    g.add_argument("--json", action="store_true",
                   help="as JSON: the starters (no repository given), or the files of REPO --list")
    g.add_argument("--search", metavar="WORDS", help="find GGUF repositories")
    g.add_argument("--list", action="store_true",
                   help="list the repository's models, each judged from its own header; download nothing")
    g.add_argument("--no-projector", action="store_true",
                   help="do not download a vision model's projector (its repository's mmproj file) with it")
    g.add_argument("--to", metavar="FOLDER", help="library folder (default: your first library folder)")
    g.add_argument("--machine", default=None,
                   help="judge fit and speed for a machine described in a JSON file "
                        "(its processor's speed as \"cpu_read_gbs\": GB a second the engine reads)")
    g.set_defaults(func=cmd_get)


def cmd_get(args: argparse.Namespace) -> int:
    import json

    from draftwise.core.hub import client, download, fetch
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
        if args.list or not wanted:
            verdicts = _judge(args, models)
            if args.json:
                print(json.dumps([v.to_json() for v in verdicts], indent=2))
                return 0
            for v in verdicts:
                print(_verdict_line(v))
            for m in models:
                if m.drafter:
                    print(f"{m.name:<56} {m.quant or '?':<8} {human_bytes(m.size):>9}  [drafter: runs beside a model]")
            if not wanted and not args.list:
                print("\nChoose one: draftwise get " + f"{repo}:{models[0].name}", file=sys.stderr)
            return 0
        model = next((m for m in models if m.name == wanted or m.first.path == wanted), None)
        if model is None:
            names = ", ".join(m.name for m in models[:6])
            raise UserError(f"get: {wanted} is not a model in {repo}; it has {names}")
        folder = _folder(args)
        # Judged first (headers only, beside the repository's other files), so the drafter that
        # lands is the one the resolver's search and the engine's pairing rule took for it.
        # A drafter asked for by name (its header says it runs beside a model) comes alone.
        verdict = next(iter(_judge(args, models, model.name)), None)
        if verdict is not None and verdict.error is not None:
            print(f"Note: {verdict.error}", file=sys.stderr)
        elif verdict is not None and verdict.drafter_model is not None:
            print(f"With its drafter {verdict.drafter_name} ({_SPECULATION[verdict.speculation]})")
        got = fetch.fetch(model, folder, drafter=verdict.drafter_model if verdict is not None else None,
                          projector=not args.no_projector, progress=_printer())
        print(f"\nDownloaded {model.name} ({human_bytes(model.size)}) to {got.model}")
        if got.projector is not None:  # beside the model: the planner finds it and passes --mmproj
            print(f"Downloaded its vision projector {got.projector.name} to {got.projector}")
        if got.drafter is not None:
            print(f"Downloaded its drafter {got.drafter.name} beside it: MTP auto runs it")
        if got.problem is not None:
            print(f"warning: {got.problem}", file=sys.stderr)
        _remember_folder(folder)
        return 0
    except client.HubError as exc:
        raise UserError(str(exc)) from exc
    except download.DownloadCancelled:
        print("\nStopped; run the same command again to continue where it stopped.", file=sys.stderr)
        return 130


_FIT = {"fits": "fits", "partial": "fits partly on the GPU", "no": "does NOT fit"}
_SPECULATION = {"mtp": "drafts itself (MTP head)", "mtp-assistant": "drafts with its MTP assistant",
                "draft": "faster with its helper", "ngram": "n-gram drafting", "none": "no drafter"}


def _judge(args: argparse.Namespace, models, only: str | None = None):
    """Each model of the listing (or the one named `only`) judged from its own header beside
    the repository's other files (core/hub/judge.py): the plan `draftwise plan` makes of the
    same file in a folder holding the repository."""
    from draftwise.cli.common import engine_caps
    from draftwise.core.hub import judge
    from draftwise.core.launch.session import Engine

    binary, caps, backend = engine_caps(None)
    machine = _machine(args)
    return judge.Judge(machine, Engine(Path(binary), caps, backend), _rate(args),
                       with_projector=not args.no_projector).judge_listing(models, only)


def _verdict_line(v) -> str:
    from draftwise.core.hub import catalog
    from draftwise.core.hub.files import Drafting
    from draftwise.core.readable import human_bytes

    m = v.model
    parts = f", {len(m.files)} parts" if len(m.files) > 1 else ""
    head = f"{m.name:<56} {m.quant or '?':<8} {human_bytes(m.size):>9}{parts}"
    if v.error is not None:
        return f"{head}  not judged: {v.error}"
    speed = ""
    if v.estimate is not None:
        slow = " (slow here)" if not v.estimate.readable else ""
        speed = f", about {catalog.rate_words(v.estimate.tokens_per_s)} tokens/s{slow}"
    spec = _SPECULATION.get(v.speculation, v.speculation)
    if v.drafter_name and v.speculation != Drafting.MTP:
        spec += f" ({v.drafter_name})"
    return (f"{head}  {_FIT[v.fit_state]}: context {v.context:,}, {human_bytes(v.planned_bytes)} planned"
            f"{speed}; {spec}")


def _machine(args: argparse.Namespace):
    from draftwise.core.machine import hardware, machine_types

    if args.machine:
        try:
            return machine_types.load_machine(args.machine)
        except (OSError, ValueError) as exc:
            raise UserError(f"--machine: {exc}") from exc
    return hardware.inventory()


def _rate(args: argparse.Namespace):
    """The processor's rate: described in --machine ("cpu_read_gbs"), else measured here
    (with the installed engine once, then kept; core/launch/speed_probe.py)."""
    import json

    from draftwise.core.engines import discovery
    from draftwise.core.launch import speed_probe
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
    rate = speed_probe.throughput(binary)
    note = speed.shown_note(rate)  # taken while busy, or measured and not kept: used for now, said so
    if note is not None:
        print(str(note), file=sys.stderr)
    return rate


def _starters(args: argparse.Namespace) -> int:
    import json

    from draftwise.cli.common import engine_caps
    from draftwise.core.hub import catalog, starters
    from draftwise.core.hub.judge import Judge
    from draftwise.core.launch.session import Engine
    from draftwise.core.machine import speed
    from draftwise.core.readable import human_bytes

    machine = _machine(args)
    rate = _rate(args)
    binary, caps, backend = engine_caps(None)
    found = starters.starters_for(machine, rate, Judge(machine, Engine(Path(binary), caps, backend), rate))
    if args.json:
        print(json.dumps({"rate_gbs": round(rate.cpu / 1e9, 1), "measured_by": rate.source,
                          "readable_at_least": speed.READABLE, "offline": str(found.offline) if found.offline else None,
                          "starters": [o.to_json() for o in found.offers],
                          "left_out": [{"title": t, "why": str(w)} for t, w in found.left_out]}, indent=2))
        return 0
    how = {"engine": "measured with the engine", "memory": "a first guess from the memory speed",
           "described": "as described"}.get(rate.source, rate.source)
    print(f"Starters for this computer: those that write at least {speed.READABLE:.0f} tokens/s first, the ones "
          f"that draft themselves before the others ({rate.cpu / 1e9:.1f} GB/s, {how}):")
    if found.offline is not None:
        print(f"  ({found.offline})")
    for o in found.offers:
        e = o.estimate
        slow = "" if e.readable else "  (slow here)"
        drafts = _SPECULATION[o.verdict.speculation if o.verdict else o.starter.drafts]
        where = f"{o.repo}:{o.model.name}" if o.model is not None else f"{o.starter.title} {o.starter.quant}"
        size = human_bytes(o.size) if o.verdict is not None else f"~{human_bytes(o.size)}"
        print(f"  {where:<64} {size:>9}  about {catalog.rate_words(e.tokens_per_s):>4} tokens/s{slow}; {drafts}")
    for _title, why in found.left_out:
        print(f"  not offered: {why}")
    if found.offline is None:
        print("\nGet one: draftwise get REPO:FILE (REPO --list shows its other files)", file=sys.stderr)
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
