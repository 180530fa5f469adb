"""`draftwise` — the command-line twin of the window, on the same core.

User errors exit 2 with one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from draftwise import __version__
from draftwise.cli.common import (
    EXIT_USER_ERROR,
    UserError,
    add_address_options,
    add_request_options,
    engine_caps,
    machine_for,
    request_from,
    select_machine,
    with_workers,
)
from draftwise.core.kinds import BUILD_BACKENDS, Backend, DeviceKind, SpecSource
from draftwise.core.readable import command_line, human_bytes, human_ctx, human_params


# ---------------------------------------------------------------- inspect
def cmd_inspect(args: argparse.Namespace) -> int:
    from draftwise.core.gguf import reader as gguf

    try:
        info = gguf.read_model(Path(args.path))
    except gguf.GGUFError as exc:
        raise UserError(str(exc)) from exc
    data = gguf.model_info_json(info)
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(render_model(data))
    return 0


def render_model(d: dict) -> str:
    tok = d.get("tokenizer") or {}
    lines = [
        f"{d.get('name') or Path(str(d.get('path', ''))).stem}",
        f"  architecture   {d.get('architecture')}",
        f"  quantization   {d.get('quant') or d.get('file_type')}",
        f"  parameters     {human_params(d.get('parameters'))}",
        f"  size on disk   {human_bytes(d.get('size_bytes'))}"
        + (f" in {d['shards']} files" if (d.get("shards") or 1) > 1 else ""),
        f"  layers         {d.get('block_count')}",
        f"  context        {d.get('context_length')} tokens (trained)",
        f"  embedding      {d.get('embedding_length')}",
        f"  heads          {d.get('head_count')} (KV {d.get('head_count_kv')})",
    ]
    if d.get("sliding_window"):
        lines.append(f"  sliding window {d['sliding_window']} tokens")
    if d.get("expert_count"):
        lines.append(f"  experts        {d['expert_count']} ({d.get('expert_used_count')} used per token)")
    nextn = d.get("nextn_predict_layers")
    if nextn:
        head = "present" if d.get("mtp_head_present") else "declared but stripped from this file"
        lines.append(f"  MTP head       {nextn} layer(s), {head}")
    if d.get("sidecar_kind"):
        lines.append(f"  drafter file   {d['sidecar_kind']}")
    lines.append(
        f"  tokenizer      {tok.get('model')}/{tok.get('pre')}, {tok.get('vocab_size')} tokens"
    )
    missing = d.get("missing_shards") or []
    if missing:
        lines.append(f"  MISSING        {', '.join(missing)} — download the missing part(s) again")
    return "\n".join(lines)


# ---------------------------------------------------------------- plan
# The engine `plan` (and `get`'s judge) plans for: cli/common.py, one place for both.
_engine_caps = engine_caps


def cmd_plan(args: argparse.Namespace) -> int:
    from draftwise.cli import learning
    from draftwise.core.launch import ladder, launch_spec, prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch

    binary, caps, backend = _engine_caps(getattr(args, "engine", None))
    request = request_from(args)
    machine = with_workers(select_machine(args, machine_for(args, binary)), args.rpc, binary)
    try:
        # The launch session `launch` and the window plan with: the same remembered fixes,
        # rung, broken drafters and measurements, so plan never promises what launch skips.
        planned = plan_launch(request, Engine(Path(binary), caps, backend), machine, Records.load(machine))
        # The LaunchSpec `launch` and the window would start for this request (on the port
        # asked for: whether it is free is decided at launch time).
        spec = planned.spec(log_prompts=learning.consent())
    except (prepare.PrepareError, launch_spec.LaunchError) as exc:
        raise UserError(str(exc)) from exc
    prepared = planned.prepared
    if not planned.start.empty and not args.json:
        print(f"lowered: {ladder.started_lower(planned.start)}")
    if not planned.fixes.default and not args.json:
        print(f"after an earlier crash with this engine: {planned.fixes.label()}")
    argv = list(spec.argv)
    if args.json:
        print(json.dumps({**prepared.to_json(), "argv": argv, "launch": spec.to_json(),
                          "remembered": {"fixes": list(planned.fixes.argv()), "rung": planned.start.rung,
                                         "settings": list(planned.settings.argv())}},
                         indent=2, default=str))
        return 0
    print(render_plan(prepared, argv, cpu_variant=machine.cpu_variant))
    return 0


def render_plan(prepared, argv: list[str], cpu_variant: str | None = None) -> str:
    """The plan in words, as the window's "why" lines say it."""

    model, spec, plan = prepared.model, prepared.spec, prepared.plan
    lines = [
        f"{model.path.name}: {model.architecture}, {human_params(model.parameters)} parameters, "
        f"{human_bytes(model.size_bytes)}",
    ]
    label = spec.source if spec.source in (SpecSource.OFF, SpecSource.NONE) else spec.spec_type or "none"
    lines.append(f"Speculation: {label}  (decided by: {spec.source})")
    lines += [f"  - {note}" for note in spec.notes]
    lines += [f"  ! {warning}" for warning in spec.warnings]
    verdict = {"fits": "fits", "partial": "fits partly on the GPU", "no": "does NOT fit"}[plan.fit_state]
    lines.append(
        f"Memory: {verdict} — context {human_ctx(plan.ctx)} tokens, KV cache {plan.kv_type}, "
        f"{plan.slots} slot{'s' if plan.slots != 1 else ''}, total {human_bytes(plan.bytes.total)}"
    )
    for dev in plan.per_device:
        if dev.total or dev.kind != DeviceKind.CPU:
            lines.append(f"  {dev.name:<24} {human_bytes(dev.total):>9} of {human_bytes(dev.capacity)}"
                         f"  (weights {human_bytes(dev.weights)}, context {human_bytes(dev.kv)}"
                         + (f", drafter {human_bytes(dev.drafter)}" if dev.drafter else "")
                         + f", work {human_bytes(dev.compute + dev.output)})")
    lines += [f"  - {reason}" for reason in (*plan.reasons, *plan.settings_notes)]
    lines += [f"  ! {warning}" for warning in plan.warnings]
    if cpu_variant:
        # A build with one CPU module per x86-64 level loads the best this CPU runs.
        lines.append(f"CPU module: {cpu_variant} (libggml-cpu-{cpu_variant})")
    lines.append("Engine command:")
    lines.append("  " + command_line(argv))
    return "\n".join(lines)



# ---------------------------------------------------------------- engine
def cmd_engine_install(args: argparse.Namespace) -> int:
    from draftwise.core.engines import provision

    last_fraction = [-1.0]

    def progress(line: str, fraction: float | None) -> None:
        if fraction is not None and fraction < 1.0:
            # One line per percent, so a 20-minute build shows life without a flood.
            if fraction > last_fraction[0]:
                last_fraction[0] = fraction
                print(f"  {fraction * 100:3.0f}%  {line[:100]}", flush=True)
        elif not line.startswith(("--", "[", "gmake", "make[", "make:")) or args.verbose:
            print(line, flush=True)

    try:
        backends = [b for item in args.backend or [Backend.CPU] for b in item.split(",") if b]
        builds = provision.install_many(backends, jobs=args.jobs, progress=progress, force=args.force)
    except provision.ProvisionError as exc:
        raise UserError(str(exc)) from exc
    for build in builds.values():
        secs = build.build_seconds
        when = f" on {build.built_at[:10]}" if build.built_at else ""
        took = "" if secs is None else f" (its build took {secs / 60:.1f} min{when})" if secs >= 60 else ""
        print(f"llama-server {build.source_version} ({build.backend}) ready{took}: {build.binary}")
    return 0


def cmd_engine_list(args: argparse.Namespace) -> int:
    from draftwise.core.engines import discovery

    engines = discovery.find_engines(args.configured)
    if args.json:
        print(json.dumps([e.to_json() for e in engines], indent=2))
        return 0
    if not engines:
        print("No llama-server found. Run `draftwise engine install` to build one (about 20 minutes).")
        return 0
    for e in engines:
        state = e.problem if e.problem else f"version {e.version}"
        print(f"{e.source:<12} {e.backend:<7} {state}\n             {e.binary}")
    return 0


# ---------------------------------------------------------------- broken drafters
def cmd_broken(args: argparse.Namespace) -> int:
    from draftwise.core.launch import session
    from draftwise.core.speculation.drafter_key import DrafterKey

    store = session.Records.load().broken
    if store.problem:
        print(f"warning: {store.problem}", file=sys.stderr)
    entries = store.entries()
    if args.broken_command == "list":
        if not entries:
            print("No drafter is on the broken list: auto tries every drafter it finds.")
        for e in entries:
            key = DrafterKey.parse(e.drafter)
            print(f"{key.path}  ({key.kind}, since {e.when})\n    {e.reason}")
        return 0
    wanted = None
    if args.path:
        path = str(Path(args.path).expanduser().resolve())
        wanted = [e for e in entries if DrafterKey.parse(e.drafter).path == path]
        if not wanted:
            raise UserError(f"{path} is not on the broken list; `draftwise broken list` shows what is.")
    removed = sum(store.forget(drafter_key=e.drafter) for e in wanted) if wanted else store.forget()
    print(f"Removed {removed} drafter(s) from the broken list: auto will try them again.")
    return 0


# ---------------------------------------------------------------- check
def cmd_check(args: argparse.Namespace) -> int:
    from draftwise.core.check.machine_check import run_check

    ok = True
    for step in run_check(prompt=args.prompt):
        mark = {"ok": "ok ", "fail": "!! ", "info": "-- "}[step.status]
        print(f"{mark} {step.title}: {step.detail}", flush=True)
        ok = ok and step.status != "fail"
    return 0 if ok else 1


# ---------------------------------------------------------------- main
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="draftwise", description="Run a local LLM with speculative decoding set up for you.",
        epilog="Engine arguments go after --, e.g. draftwise plan model.gguf -- --spec-draft-n-max 4",
    )
    p.add_argument("--version", action="version", version=f"draftwise {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    ins = sub.add_parser("inspect", help="show what is inside a GGUF model")
    ins.add_argument("path")
    ins.add_argument("--json", action="store_true")
    ins.set_defaults(func=cmd_inspect)

    pl = sub.add_parser("plan", help="decide speculation and memory for a model: what `launch` would run")
    add_request_options(pl)
    add_address_options(pl)
    pl.add_argument("--machine", default=None, help="plan for a machine described in a JSON file")
    pl.add_argument("--json", action="store_true")
    pl.set_defaults(func=cmd_plan)

    eng = sub.add_parser("engine", help="install or list llama-server engines")
    esub = eng.add_subparsers(dest="engine_command", required=True)
    inst = esub.add_parser("install", help="build llama-server from the pinned source")
    inst.add_argument(
        "--backend", action="append", metavar="|".join(BUILD_BACKENDS),
        help="the engine(s) to install; repeat or separate with commas to build them in one go "
        "(default cpu)",
    )
    inst.add_argument("--jobs", type=int, default=None)
    inst.add_argument("--force", action="store_true", help="rebuild even when installed")
    inst.add_argument("--verbose", action="store_true")
    inst.set_defaults(func=cmd_engine_install)
    lst = esub.add_parser("list", help="show every llama-server found")
    lst.add_argument("--json", action="store_true")
    lst.add_argument("--configured", default=None, help="a llama-server path to include")
    lst.set_defaults(func=cmd_engine_list)

    from draftwise.cli import get, launch, learning, measure, serve, share

    launch.add_parser(sub)
    serve.add_parser(sub)
    share.add_parser(sub)
    get.add_parser(sub)
    measure.add_parser(sub)
    learning.add_parser(sub)

    brk = sub.add_parser("broken", help="drafters that made the engine fail, which auto leaves out")
    bsub = brk.add_subparsers(dest="broken_command", required=True)
    bsub.add_parser("list", help="show them").set_defaults(func=cmd_broken)
    clr = bsub.add_parser("clear", help="let auto try them again (all, or one file)")
    clr.add_argument("path", nargs="?", default=None)
    clr.set_defaults(func=cmd_broken)

    chk = sub.add_parser("check", help="check this machine on a tiny generated model")
    chk.add_argument("--prompt", default="Hello")
    chk.set_defaults(func=cmd_check)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after `--` belongs to the engine, untouched (argparse would parse it).
    engine_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, engine_args = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if engine_args and not hasattr(args, "engine_args"):
        parser.error(f"{args.command} takes no engine arguments after --")
    if hasattr(args, "engine_args"):
        args.engine_args = engine_args
    try:
        return int(args.func(args))
    except UserError as exc:
        print(f"draftwise: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
