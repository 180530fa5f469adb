"""`draftwise serve [PATH …]`: every model of the library through one address, by name.

One engine in router mode (`llama-server --models-preset FILE`, no model): it starts one
instance per model asked for, each with the section written from that file's own plan
(core/serving/), and serves the OpenAI and Anthropic APIs on one port. No proxy of ours: the
clients talk to the engine. Like `launch`: the port, `DRAFTWISE_API_KEY`, the `API key:` and
`ready http://…` lines, `--network`, Ctrl-C/SIGTERM/SIGHUP stop everything and exit 0, bad
input exits 2 with one line. `--json` prints the plan and starts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from pathlib import Path

from draftwise.cli.common import (
    API_KEY_VARIABLE,
    UserError,
    add_address_options,
    add_device_options,
)
from draftwise.core.kinds import MtpMode

EXIT_NOT_READY = 1
WATCH_EVERY_S = 1.0  # how often the router's list of instances is read


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "serve", help="serve every model of the library (or the folders given) through one address, by name",
        description="Start llama-server as a router for every GGUF model in PATH (default: the window's "
                    "library folders). Each model runs the speculation and memory plan `draftwise plan` shows "
                    "for it; clients pick one by its file name (the `model` field). Engine arguments for every "
                    "model go after --. Ctrl-C stops it.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="folders of GGUF models, or GGUF files")
    p.add_argument("--mtp", default=MtpMode.AUTO, choices=[m.value for m in MtpMode],
                   help="speculation for every model: auto (Draftwise decides per model) or off")
    p.add_argument("--ctx", type=int, default=None, help="context size in tokens for every model (default: planned)")
    p.add_argument("--kv", default=None, help="KV cache type for every model (default: planned)")
    add_device_options(p)
    add_address_options(p)
    p.add_argument("--models-max", type=int, default=None, metavar="N",
                   help="at most N models loaded at once (default: as many as fit together, up to 4)")
    p.add_argument("--sleep-idle-seconds", type=int, default=None, metavar="S",
                   help="a model idle this long sleeps (default: 600; -1: never)")
    p.add_argument("--machine", default=None, help="plan for a machine described in a JSON file")
    p.add_argument("--json", action="store_true", help="print the whole plan as JSON and start nothing")
    p.add_argument("--verbose", action="store_true", help="print the engine's log lines")
    p.set_defaults(func=cmd_serve, engine_args=[])
    return p


def _paths(args: argparse.Namespace) -> list[Path]:
    from draftwise.core import settings as settings_mod

    if args.paths:
        return [Path(p).expanduser() for p in args.paths]
    folders = settings_mod.load().settings.model_folders
    if not folders:
        raise UserError("No library folder yet: give a folder of GGUF models (`draftwise serve ~/models`), or add "
                        "one in the window.")
    return [Path(f).expanduser() for f in folders]


def serving_plan(args: argparse.Namespace, *, port: int, api_key: str):
    """(engine binary, ServePlan) for `args`: every model planned by the launch session."""
    from draftwise.cli import learning
    from draftwise.cli.common import caps_of, engine_caps, machine_for, select_machine
    from draftwise.cli.launch import find_engine
    from draftwise.core.launch import prepare
    from draftwise.core.launch.session import Engine, Records
    from draftwise.core.planning import planner
    from draftwise.core.serving import library, serve_plan

    try:
        lib = library.collect(_paths(args))
    except library.LibraryError as exc:
        raise UserError(str(exc)) from exc
    if args.json:
        # The plan alone, like `draftwise plan`: the pinned engine's facts when none is installed.
        binary, caps, backend = engine_caps(getattr(args, "engine", None))
        engine = Engine(Path(binary), caps, backend)
    else:
        found = find_engine(args)
        engine = Engine(found.binary, caps_of(found.binary), found.backend)
    machine = select_machine(args, machine_for(args, engine.binary))
    try:
        prefs = planner.prefs_from_options(ctx=args.ctx, kv=args.kv)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    request = prepare.Request(model=lib.models[0].path, mtp=MtpMode(args.mtp), extra_args=tuple(args.engine_args),
                              prefs=prefs, port=port, pinned_port=args.port is not None, network=args.network,
                              api_key=api_key)
    try:
        # With consent each model's instance logs its requests' prompts (learning from use).
        plan = serve_plan.plan_library(lib, request, engine, machine, Records.load(machine), port=port,
                                       api_key=api_key, models_max=args.models_max,
                                       log_prompts=learning.consent())
    except prepare.PrepareError as exc:
        raise UserError(str(exc)) from exc
    return engine.binary, plan


def copy_lines(url: str, key_shown: str, model_id: str) -> list[str]:
    """Ready-to-paste lines for Claude Code, an OpenAI-compatible client and curl, as printed
    (the lines themselves are core/serving/copy_lines.py's, shared with the window)."""
    from draftwise.core.serving import copy_lines as lines

    return [f"  {line.client}:  {line.text}" for line in lines.copy_lines(url, key_shown, model_id)]


def cmd_serve(args: argparse.Namespace) -> int:
    from draftwise.core import paths
    from draftwise.core.address import DEFAULT_PORT, LOOPBACK
    from draftwise.core.launch import launch_spec
    from draftwise.core.processes import orphans
    from draftwise.core.serving import serve_plan

    if args.network and os.environ.get(API_KEY_VARIABLE) == "":
        raise UserError(f"--network needs an API key; unset {API_KEY_VARIABLE} or give it a value.")
    api_key = os.environ.get(API_KEY_VARIABLE) or launch_spec.new_api_key()
    host = launch_spec.ALL_INTERFACES if args.network else LOOPBACK
    port_note = None
    if args.json:
        port = DEFAULT_PORT if args.port is None else args.port
    else:
        for report in orphans.stop_orphans():
            print(report.message, flush=True)
        try:
            port, port_note = launch_spec.choose_port(DEFAULT_PORT if args.port is None else args.port,
                                                      pinned=args.port is not None, host=host)
        except launch_spec.LaunchError as exc:
            raise UserError(str(exc)) from exc
    binary, plan = serving_plan(args, port=port, api_key=api_key)
    if args.json:
        print(json.dumps(plan.to_json(), indent=2, default=str))
        return 0
    sleep = serve_plan.SLEEP_IDLE_S if args.sleep_idle_seconds is None else args.sleep_idle_seconds
    notes = (port_note,) if port_note else ()
    router, preset_path = serve_plan.write_router(binary, plan, paths.cache_dir() / "serve", port=port,
                                                  api_key=api_key, network=args.network, sleep_idle_s=sleep,
                                                  pinned_port=args.port is not None, notes=notes)
    _say_plan(plan, preset_path)
    return _run(router, plan, preset_path, binary, verbose=args.verbose)


def _say_plan(plan, preset_path: Path) -> None:
    from draftwise.core.readable import human_bytes, human_ctx

    for m in plan.models:
        label = m.section.as_dict().get("spec-type", "none")
        sizes = ", ".join(f"{d} {human_bytes(b)}" for d, b in
                          _device_bytes(m.planned.prepared.plan.per_device).items())
        print(f"model: {m.id}  ({m.path})", flush=True)
        print(f"  speculation {label}, context {human_ctx(m.planned.prepared.plan.ctx)} tokens, {sizes}",
              flush=True)
        for note in m.notes:
            print(f"  - {note}", flush=True)
    for x in plan.left_out:
        print(f"left out: {x.why}", flush=True)
    for w in plan.budget.words:
        print(f"  - {w}", flush=True)
    print(f"preset: {preset_path}", flush=True)


def _device_bytes(per_device) -> dict[str, int]:
    from draftwise.core.serving import together

    return together.device_bytes(per_device)


def _run(router, plan, preset_path: Path, binary: Path, *, verbose: bool) -> int:
    from draftwise.core.launch import headless
    from draftwise.core.launch import launch_flow as lf

    print(f"engine: {router.binary} (router: {len(plan.models)} models, up to {plan.budget.models_max} loaded "
          f"together)", flush=True)
    for note in router.notes:
        print(f"  - {note}", flush=True)
    if API_KEY_VARIABLE not in os.environ:
        print(f"API key: {router.api_key}  (send `Authorization: Bearer <key>` or `x-api-key: <key>`; set "
              f"{API_KEY_VARIABLE} to choose it)", flush=True)
    from draftwise.core import paths

    run = headless.HeadlessLaunch(router, log_path=paths.cache_dir() / "logs" / f"serve-{router.port}.log")
    outcome = {"ready": False, "stopped_by_user": False}

    def show(action) -> None:
        if isinstance(action, lf.StageChanged) and action.stage not in (lf.READY,):
            print(f"stage: {action.stage}", flush=True)
        elif isinstance(action, lf.Ready):
            outcome["ready"] = True
            print(f"ready {action.url}  ({action.seconds:.2f} s)", flush=True)
            key_shown = f"${API_KEY_VARIABLE}" if API_KEY_VARIABLE in os.environ else router.api_key
            print(f"models: {', '.join(m.id for m in plan.models)}", flush=True)
            for line in copy_lines(action.url, key_shown, plan.models[0].id):
                print(line, flush=True)
        elif isinstance(action, lf.Crashed):
            print(f"crashed: {action.cause.sentence}", flush=True)
            print(f"  next step: {action.cause.next_step}", flush=True)
            if action.cause.evidence:
                print(f"  engine said: {action.cause.evidence}", flush=True)
        elif isinstance(action, lf.Notice):
            print(f"warning: {action.text}", flush=True)

    run.on_action = show
    from draftwise.core.serving.served_usage import ServedUsage

    served = ServedUsage.from_plan(plan)  # each model's requests, for learning from use
    watcher = _Instances(run, plan, preset_path, binary, served)

    def on_lines(lines: list[str]) -> None:
        watcher.add(lines)
        served.lines(lines)
        if verbose:
            print("\n".join(f"  | {x}" for x in lines), flush=True)

    run.on_lines = on_lines
    stop = threading.Event()

    def on_signal(signum, _frame) -> None:
        outcome["stopped_by_user"] = True
        stop.set()

    signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {sig: signal.signal(sig, on_signal) for sig in signals}
    prompts = _Prompts(plan)
    try:
        prompts.ingest()  # what was logged before (a launch of one of these models, an earlier serve)
        run.start()
        next_watch = 0.0
        while not run.flow.ended:
            if stop.is_set():
                run.stop()
                break
            run.pump()
            if run.flow.is_ready and time.monotonic() >= next_watch:
                next_watch = time.monotonic() + WATCH_EVERY_S
                watcher.poll()
                prompts.ingest()
                prompts.say(served.save())
    finally:
        if not run.flow.ended:
            run.stop()
        prompts.ingest(final=True)
        prompts.say(served.save(final=True))
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if outcome["stopped_by_user"]:
        return 0
    if run.flow.cause is not None and run.log_path is not None:
        print(f"engine log: {run.log_path}", flush=True)
    return 0 if outcome["ready"] and run.flow.cause is None else EXIT_NOT_READY


class _Prompts:
    """The prompts each model's instance logs (with consent), taken in as they come: the newest
    kept per model, the files deleted (core/measurements/prompt_log.py). A failure is said once."""

    def __init__(self, plan) -> None:
        self.plan = plan
        self.said = False

    def ingest(self, *, final: bool = False) -> None:
        from draftwise.cli import learning
        from draftwise.core.serving import serve_plan

        self.say(serve_plan.ingest_prompts(self.plan, keep=learning.consent(), final=final))

    def say(self, problem) -> None:
        """A failure to keep what was logged (the prompts, the requests' figures), said once."""
        if problem is not None and not self.said:
            self.said = True
            print(f"warning: {problem}", flush=True)


class _Instances:
    """Reads the router's list of instances and does what core/serving/serve_flow.py says
    about each model's failures (its fallback, its ladder rung): this only asks the router,
    writes the preset and prints."""

    def __init__(self, run, plan, preset_path: Path, binary: Path, served=None) -> None:
        from draftwise.core.serving import serve_flow

        self.run, self.plan, self.preset_path = run, plan, preset_path
        self.served = served  # served_usage.ServedUsage: a model's requests after its fallback are none's
        self.flow = serve_flow.ServeFlow.from_plan(plan, Path(binary))

    def add(self, lines: list[str]) -> None:
        self.flow.add_lines(lines)

    def poll(self) -> None:
        from draftwise.core.launch import headless
        from draftwise.core.serving import instances

        try:
            status, body = headless.request(self.run.url, self.run.spec.api_key, "/models", None, 2.0)
        except OSError:
            return  # busy or going away: the next poll asks again
        if status != 200:
            return
        self._drop_deleted()
        self._do(self.flow.models(instances.read(body)))

    def _do(self, actions) -> None:
        from draftwise.core.serving import instances
        from draftwise.core.serving import serve_flow as sf

        for a in actions:
            if isinstance(a, sf.StateChanged):
                inst = a.instance
                if inst.state == instances.FAILED:
                    print(f"model {inst.id}: failed (exit code {inst.exit_code})", flush=True)
                else:
                    print(f"model {inst.id}: {inst.state}", flush=True)
            elif isinstance(a, sf.ModelClimbed):
                print(f"ladder: {a.id}: {self.flow.outcomes[a.id].ladder_reason}", flush=True)
            elif isinstance(a, sf.ModelFellBack):
                print(f"fallback: {a.id} is loaded again without speculation (its drafter made it stop at start; "
                      f"`draftwise broken clear` lets auto try it again later)", flush=True)
                if self.served is not None and (problem := self.served.fell_back(a.id)) is not None:
                    print(f"warning: {problem}", flush=True)
            elif isinstance(a, sf.Failed):
                print(f"model {a.id}: {a.problem}", flush=True)
            elif isinstance(a, sf.ModelNotice):
                print(f"  - {a.text}", flush=True)
            elif isinstance(a, sf.Rewrite):
                self._rewrite(a)

    def _rewrite(self, action) -> None:
        from draftwise.core.launch import headless

        self.preset_path.write_text(action.text, encoding="utf-8")
        try:
            headless.request(self.run.url, self.run.spec.api_key, "/models?reload=1", None, 10.0)
            if action.load is not None:
                headless.request(self.run.url, self.run.spec.api_key, "/models/load", {"model": action.load}, 10.0)
        except OSError as exc:
            print(f"warning: the engine did not read its model list again: {exc}", flush=True)

    def _drop_deleted(self) -> None:
        """A model file deleted while served leaves the list: the preset is written without it
        and the router reads it again (an instance running from it is stopped by the engine)."""
        for m in self.plan.models:
            if m.id in self.flow.sections and not m.path.exists():
                print(f"removed: {m.path} was deleted, so {m.id} is no longer served; put the file back and start "
                      f"`draftwise serve` again to serve it.", flush=True)
                self._do(self.flow.removed(m.id))
