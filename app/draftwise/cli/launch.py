"""`draftwise launch MODEL`: run the engine headless on the same core as the window.

Prints the stages, a `ready http://127.0.0.1:PORT` line, fallback and crash messages; with
`--verbose` the engine's lines and, once ready, the plan beside what the engine allocated
(the buffer lines of the start that became ready, never a sum over relaunches).
Ctrl-C or SIGTERM stops the engine (its whole process group) and exits 0; a launch that
never became ready exits 1; bad input exits 2 with one line, like the other commands.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading

from draftwise.cli import learning
from draftwise.cli.common import (
    API_KEY_VARIABLE,
    UserError,
    add_address_options,
    add_request_options,
    caps_of,
    request_from,
    select_machine,
    with_workers,
)
from draftwise.core.address import LOOPBACK
from draftwise.core.kinds import EngineKind

EXIT_NOT_READY = 1


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "launch", help="start the engine for a model (speculation set up) and keep it running",
        description="Start llama-server for MODEL with speculative decoding set up automatically. "
                    "Engine arguments go after --. Ctrl-C stops it.",
    )
    add_request_options(p)
    add_address_options(p)
    p.add_argument("--verbose", action="store_true",
                   help="print the engine's log lines, and the planned memory beside what it allocated")
    p.add_argument("--full", action="store_true",
                   help="try the full settings again: forget the lowered settings remembered after running "
                        "out of memory")
    p.set_defaults(func=cmd_launch)
    return p


def cmd_launch(args: argparse.Namespace) -> int:
    from draftwise.core.launch.lost_worker import worker_relaunch

    # A UserError from _prepare reaches the CLI's main(): one line, exit code 2.
    run, watch = _prepare(args)
    while True:
        code = _run(run, watch, verbose=args.verbose)
        # A worker went away: the launch flow's one rule, as in the window (the same launch
        # on the workers that are left, when the model fits on them).
        relaunch = worker_relaunch(run.outcome)
        if relaunch is None:
            return code
        args.rpc = ",".join(relaunch.rest) or None
        gone = relaunch.gone
        try:
            run, watch = _prepare(args, learn=False)  # at once: no measuring before this relaunch
        except UserError as exc:
            print(f"  without {gone}: {exc}", flush=True)
            print(f"  next step: start ggml-rpc-server on {gone} again, then launch again.", flush=True)
            return code
        print(f"relaunch: {gone} went away; running without it"
              f"{' on ' + ', '.join(relaunch.rest) if relaunch.rest else ' on this computer alone'} "
              "(the model fits there).", flush=True)


def _prepare(args: argparse.Namespace, *, learn: bool = True):
    """The headless run and its figures watch for `args`, planned by the launch session
    (core/launch/session.py) like every other path; nothing is started."""
    from draftwise.core import paths
    from draftwise.core.launch import headless, ladder, launch_spec, prepare
    from draftwise.core.measuring import quick
    from draftwise.core.processes import orphans

    for report in orphans.stop_orphans():
        print(report.message, flush=True)
    engine, machine, planned = planned_launch(args, full=getattr(args, "full", False))
    learning.ingest_prompts(planned)  # the prompts logged since the last launch: measured on next
    if learn and learning.learn_before_launch(planned):  # measured again on the user's prompts: plan with it
        engine, machine, planned = planned_launch(args)
    for problem in planned.problems:
        print(f"warning: {problem}", flush=True)
    if machine.cpu_variant:
        print(f"  - CPU module: {machine.cpu_variant} (the best of this engine's CPU variants for this CPU)",
              flush=True)
    if not planned.fixes.default:
        print(f"  - after an earlier crash with this engine: {planned.fixes.label()}", flush=True)
    if not planned.start.empty:
        print(f"lowered: {ladder.started_lower(planned.start)}", flush=True)
    prepared, request = planned.prepared, planned.request
    try:
        if not prepared.plan.fits:
            raise UserError(" ".join(map(str, prepared.plan.reasons[-1:])) or "The model does not fit this machine.")
        port, port_note = launch_spec.choose_port(
            request.port, pinned=request.pinned_port,
            host=launch_spec.ALL_INTERFACES if request.network else LOOPBACK,
        )
        # With consent the engine logs each request's prompt (learning from use: every client's).
        launch = planned.spec(port, notes=(*prepared.plan.reasons, *prepared.plan.settings_notes,
                                           *((port_note,) if port_note else ())), log_prompts=learning.consent())
    except (prepare.PrepareError, launch_spec.LaunchError) as exc:
        raise UserError(str(exc)) from exc
    log_path = paths.cache_dir() / "logs" / f"engine-{port}.log"
    records = planned.records
    run = headless.HeadlessLaunch(launch, broken=records.broken, ladder=planned.ladder(launch),
                                  fixes=records.fixes, log_path=log_path)
    watch = quick.watch_for(prepared)
    # The requests' figures, kept per model and setup, and the prompts the engine logged.
    watch.usage = learning.keeper_for(planned, launch)
    return run, watch


def find_engine(args: argparse.Namespace):
    """The engine the user named (--engine), or an error: never another one in its place;
    else the best installed one."""
    from draftwise.core.engines import discovery

    if getattr(args, "engine", None):
        named = discovery.find_engines(args.engine)[0]
        if not named.usable:
            raise UserError(named.problem)
        return named
    engine = discovery.best_engine()
    if engine is None:
        found = discovery.find_engines(getattr(args, "engine", None))
        why = "; ".join(str(e.problem) for e in found) or "none is installed"
        raise UserError(f"No usable llama-server ({why}). Run `draftwise engine install`.")
    return engine


def planned_launch(args: argparse.Namespace, *, full: bool = False, ignore_measurements: bool = False):
    """(engine found, machine selected with its workers, PlannedLaunch) for `launch` and
    `measure`: the session with the user's records, on the devices and workers asked for."""
    from draftwise.core.launch import prepare
    from draftwise.core.launch.session import Engine, Records, plan_launch
    from draftwise.core.machine import hardware

    request = request_from(args)
    if request.backend != EngineKind.LLAMA_CPP:
        # The headless run, its crash explanations, ladder and figures are llama-server's.
        raise UserError(f"--backend {request.backend}: `draftwise {args.command}` runs llama.cpp's llama-server "
                        f"only; {request.backend} is started from the window's engine picker, and `draftwise plan "
                        f"--backend {request.backend} MODEL` shows its command.")
    found = find_engine(args)
    engine = Engine(found.binary, caps_of(found.binary), found.backend)
    machine = with_workers(select_machine(args, hardware.inventory(found.binary)), getattr(args, "rpc", None),
                           found.binary)
    try:
        planned = plan_launch(request, engine, machine, Records.load(machine), full=full,
                              ignore_measurements=ignore_measurements)
    except prepare.PrepareError as exc:
        raise UserError(str(exc)) from exc
    return found, machine, planned


FIGURES_EVERY_S = 3.0  # how often /metrics is read while the engine serves


def _poll_figures(run, watch) -> None:
    """Print the drafting figures when new tokens were generated, and each warning once."""
    from draftwise.core.launch import headless

    try:
        if watch.speculative is None and watch.speculating:
            status, body = headless.request(run.url, run.spec.api_key, "/slots", None, 2.0)
            warning = watch.slots(body) if status == 200 else None
            if warning is not None:
                print(f"warning: {warning}", flush=True)
        status, body = headless.request(run.url, run.spec.api_key, "/metrics", None, 2.0)
    except OSError:
        return  # busy or going away: the next poll asks again
    if status != 200:
        return
    changed, warning = watch.metrics(body.decode(errors="replace"))
    if changed:
        print(str(watch.figures.text()), flush=True)
        by_type = watch.types_text()  # a combined --spec-type: which type drafted how much
        if by_type is not None:
            print(f"  {by_type}", flush=True)
    if warning is not None:
        print(f"warning: {warning}", flush=True)
        print("  (`draftwise launch --mtp off MODEL` starts it without speculation)", flush=True)


def _print_memory(run, lines: list[str]) -> None:
    """The plan of the start that became ready beside the buffers it allocated."""
    from draftwise.core.planning import logparse, planned_vs_actual
    from draftwise.core.readable import human_bytes

    prepared = run.flow.ladder.prepared if run.flow.ladder is not None else None
    actual = logparse.parse_lines(lines)
    if prepared is None or not actual.lines:
        return
    print("memory: planned / allocated by the engine", flush=True)
    for row in planned_vs_actual.compare(prepared.plan, actual):
        if row["planned"] or row["actual"]:
            got = human_bytes(row["actual"]) if row["actual"] else "-"
            print(f"  {row['component']:<8} {human_bytes(row['planned']):>10} / {got}", flush=True)


class _UploadLines:
    """`upload: …` lines while the engine sends the workers their weights (core/machine/
    upload.py), one every UPLOAD_LINE_EVERY_S at most."""

    def __init__(self, planned) -> None:
        import time

        from draftwise.core.rpc import upload

        now = time.monotonic()
        self.watch = upload.UploadWatch(planned, now) if planned else None
        self.next_read = 0.0
        self.next_line = now + UPLOAD_LINE_EVERY_S  # a load that takes a moment says nothing
        self.last = ""

    def poll(self, pid: int) -> None:
        import time

        from draftwise.core.rpc import upload

        now = time.monotonic()
        if self.watch is None or now < self.next_read:
            return
        self.next_read = now + upload.SAMPLE_EVERY_S
        progress = self.watch.update(now, upload.read_sent(pid, self.watch.peers))
        line = str(progress.text())
        if line != self.last and (now >= self.next_line or progress.done):
            self.last, self.next_line = line, now + UPLOAD_LINE_EVERY_S
            print(f"upload: {line}", flush=True)


UPLOAD_LINE_EVERY_S = 3.0


def _run(run, watch=None, *, verbose: bool) -> int:
    import time

    from draftwise.core.launch import launch_flow as lf

    spec = run.spec
    print(f"model: {spec.model_path}", flush=True)
    for note in spec.notes:
        print(f"  - {note}", flush=True)
    for warning in spec.warnings:
        print(f"warning: {warning}", flush=True)
    if API_KEY_VARIABLE not in os.environ:
        print(f"API key: {spec.api_key}  (send `Authorization: Bearer <key>`; set DRAFTWISE_API_KEY to choose it)",
              flush=True)

    seen = {"became_ready": False, "stopped_by_user": False}
    attempt_lines: list[str] = []  # the running start's lines until it is ready (--verbose)

    def show(action: lf.Action) -> None:
        if isinstance(action, lf.Spawn):
            attempt_lines.clear()  # a relaunch: what it allocates is its own, not added to the last
        if isinstance(action, lf.StageChanged) and action.stage not in (lf.READY,):
            print(f"stage: {action.stage}", flush=True)
        elif isinstance(action, lf.Ready):
            seen["became_ready"] = True
            print(f"ready {action.url}  ({action.seconds:.2f} s)", flush=True)
            if verbose:
                _print_memory(run, attempt_lines)
        elif isinstance(action, lf.FellBack):
            print(f"fallback: {action.reason}", flush=True)
            if watch is not None and watch.usage is not None and (problem := watch.usage.ran_without_speculation()):
                print(f"warning: {problem}", flush=True)
            print(f"  because: {action.cause.sentence}", flush=True)
            print("  (once it is ready without it, `draftwise broken clear` lets auto try it again later)",
                  flush=True)
        elif isinstance(action, lf.Climbed):
            print(f"ladder: {action.reason}", flush=True)
        elif isinstance(action, lf.Crashed):
            cause = action.cause  # a lost worker is named in it (launch_flow)
            print(f"crashed: {cause.sentence}", flush=True)
            if not run.outcome.workers_lost:  # else cmd_launch says what comes next
                print(f"  next step: {cause.next_step}", flush=True)
            if action.cause.evidence:
                print(f"  engine said: {action.cause.evidence}", flush=True)
        elif isinstance(action, lf.GpuChecked):
            print(f"gpu: {action.verdict.message}", flush=True)
        elif isinstance(action, lf.Relaunched):
            print(f"relaunch: {action.fix.message}", flush=True)
            if action.cause.evidence:
                print(f"  engine said: {action.cause.evidence}", flush=True)
        elif isinstance(action, lf.Notice):
            if run.flow.gpu_verdict is not None and str(action.text) == str(run.flow.gpu_verdict.message):
                return  # printed as the gpu: line
            if run.flow.fix is not None and str(action.text) == str(run.flow.fix.message):
                return  # printed as the relaunch: line
            print(f"warning: {action.text}", flush=True)
        elif isinstance(action, lf.Stalled):
            print(f"warning: no output for {action.seconds:.0f} s and not ready yet; press Ctrl-C to stop.",
                  flush=True)

    run.on_action = show

    def on_lines(lines: list[str]) -> None:
        if watch is not None:
            watch.lines(lines)  # finished requests, counted exactly (core/measurements/live_figures.py)
            if watch.usage is not None:
                watch.usage.lines(lines)
        if verbose:
            if not seen["became_ready"]:
                attempt_lines.extend(lines)
            print("\n".join(f"  | {x}" for x in lines), flush=True)

    run.on_lines = on_lines

    stop = threading.Event()

    def on_signal(signum, _frame) -> None:
        seen["stopped_by_user"] = True
        stop.set()

    # SIGHUP too: closing the terminal must stop the engine, which runs in its own session.
    signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {sig: signal.signal(sig, on_signal) for sig in signals}
    sending = _UploadLines(spec.uploads)
    try:
        run.start()
        next_poll = 0.0
        while not run.flow.ended:
            if stop.is_set():
                run.stop()
                break
            run.pump()
            if not run.flow.is_ready and run.pids:
                sending.poll(run.pids[-1])
            if watch is not None and run.flow.is_ready and time.monotonic() >= next_poll:
                next_poll = time.monotonic() + FIGURES_EVERY_S
                _poll_figures(run, watch)
                if watch.usage is not None and (problem := watch.usage.save()) is not None:
                    print(f"warning: {problem}", flush=True)
    finally:
        if not run.flow.ended:
            run.stop()
        if watch is not None and watch.usage is not None and (problem := watch.usage.save(final=True)) is not None:
            print(f"warning: {problem}", flush=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if seen["stopped_by_user"]:
        return 0
    if run.flow.cause is not None and run.log_path is not None:
        print(f"engine log: {run.log_path}", flush=True)
    return 0 if seen["became_ready"] and run.flow.cause is None else EXIT_NOT_READY

