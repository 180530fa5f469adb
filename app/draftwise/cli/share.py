"""`draftwise share`: lend this computer's memory to another Draftwise (an RPC worker).

Listens on 127.0.0.1 unless `--host` names another address, which also needs
`--open-to-network` (the worker has no authentication). Ctrl-C stops it; nothing is left.
"""

from __future__ import annotations

import argparse
import signal
import threading

from draftwise.cli.common import UserError
from draftwise.core.address import LOOPBACK

PEERS_POLL_S = 1.0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from draftwise.core.rpc.workers import DEFAULT_PORT

    p = subparsers.add_parser(
        "share", help="lend this computer's memory to another Draftwise (RPC worker)",
        description="Run ggml-rpc-server so another computer's Draftwise can put part of a model here "
                    "(`--rpc HOST:PORT` there). It has no password: by default only this computer can reach it.",
    )
    p.add_argument("--host", default=LOOPBACK, help=f"address to listen on (default: {LOOPBACK}, this computer only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default: {DEFAULT_PORT})")
    p.add_argument("--threads", type=int, default=None, help="CPU threads the worker uses")
    p.add_argument("--open-to-network", action="store_true",
                   help="confirm that a non-loopback --host is meant: anyone who reaches it can use this computer")
    p.add_argument("--engine", default=None, help="path of the llama-server whose ggml-rpc-server to use")
    p.set_defaults(func=cmd_share)
    return p


def cmd_share(args: argparse.Namespace) -> int:
    from draftwise.core import paths
    from draftwise.core.engines import discovery
    from draftwise.core.errors import FieldError
    from draftwise.core.processes import orphans
    from draftwise.core.rpc import share

    for report in orphans.stop_orphans():
        print(report.message, flush=True)
    try:
        warning = share.check_host(args.host, args.port)
    except FieldError as exc:
        raise UserError(str(exc)) from exc
    if warning is not None and not args.open_to_network:
        raise UserError(f"{warning} To share on {args.host} anyway, add --open-to-network.")
    engine = discovery.find_engines(args.engine)[0] if args.engine else discovery.best_engine()
    if engine is None or not engine.usable:
        raise UserError("No usable llama-server to share with. Run `draftwise engine install`.")
    binary = share.worker_binary(engine.binary)
    if not binary.is_file():
        raise UserError(f"{binary.name} is not installed beside {engine.binary}; run `draftwise engine install --force`.")
    log_path = paths.cache_dir() / "logs" / f"rpc-worker-{args.port}.log"
    try:
        worker = share.start(binary, args.host, args.port, log_path=log_path, threads=args.threads)
    except FieldError as exc:
        raise UserError(str(exc)) from exc
    if warning is not None:
        print(f"warning: {warning}", flush=True)
    print(f"sharing {worker.endpoint}  (on the other computer: draftwise launch MODEL --rpc {worker.endpoint})",
          flush=True)
    stop = threading.Event()
    signals = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    previous = {sig: signal.signal(sig, lambda _s, _f: stop.set()) for sig in signals}
    seen: list[str] = []
    try:
        while not stop.is_set() and worker.process.poll() is None:
            stop.wait(PEERS_POLL_S)
            now = worker.peers()  # the RPC protocol has no names: the worker's sockets say who
            if now != seen:
                print(f"in use by {', '.join(now)}" if now else "no computer connected", flush=True)
                seen = now
    finally:
        code = worker.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not stop.is_set():
        print(f"the worker stopped on its own (exit {code}); its log: {log_path}", flush=True)
        return 1
    return 0
