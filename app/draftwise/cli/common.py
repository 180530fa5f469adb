"""What the `draftwise` subcommands share: the user-error type, and reading the options that
`plan` and `launch` both take into the core's request."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from draftwise.core.address import DEFAULT_PORT

EXIT_USER_ERROR = 2
API_KEY_VARIABLE = "DRAFTWISE_API_KEY"  # the user's own key for `draftwise launch`


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def request_from(args: argparse.Namespace):
    """The core's launch request from the shared options (model, --mtp, --draft, --ctx, --kv,
    --port, --network, engine arguments after --, and plan's --backend/--ngram where given)."""
    from draftwise.core.launch import prepare
    from draftwise.core.planning import planner
    from draftwise.core.speculation import resolver

    try:
        prefs = planner.prefs_from_options(ctx=args.ctx, kv=args.kv)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    port = getattr(args, "port", None)
    return prepare.Request(
        model=Path(args.model).expanduser().resolve(),
        mtp=args.mtp,
        draft=Path(args.draft).expanduser().resolve() if args.draft else None,
        backend=getattr(args, "backend", resolver.LLAMA_CPP),
        extra_args=tuple(args.engine_args),
        ngram_when_no_drafter=getattr(args, "ngram", False),
        prefs=prefs,
        port=DEFAULT_PORT if port is None else port,
        pinned_port=port is not None,
        network=getattr(args, "network", False),
        # The key the user chose for every launch, else a fresh one per launch.
        api_key=os.environ.get(API_KEY_VARIABLE) or None,
    )


def caps_of(binary: Path):
    """What this engine accepts, or a UserError saying it could not be asked."""
    from draftwise.core.engines import capabilities

    try:
        return capabilities.capabilities(binary)
    except (OSError, ValueError) as exc:
        raise UserError(f"Could not ask {binary} what it supports: {exc}") from exc


def with_workers(machine, rpc: str | None, binary: Path | str | None):
    """The machine with the workers of `--rpc host:port,...` probed through `binary`; a
    UserError naming the worker that cannot be used (nothing is started then)."""
    from draftwise.core.machine import workers

    if not rpc:
        return machine
    try:
        endpoints = workers.parse_endpoints(rpc)
    except workers.WorkerError as exc:
        raise UserError(f"--rpc: {exc}") from exc
    if binary is None or not Path(binary).is_file():
        raise UserError("--rpc: workers are asked through the engine, and no llama-server is installed; run "
                        "`draftwise engine install`.")
    try:
        devices = workers.probe_workers(Path(binary), endpoints)
    except workers.WorkerError as exc:
        raise UserError(str(exc)) from exc
    return workers.with_workers(machine, devices)


RPC_HELP = "other computers' ggml-rpc-server workers to split the model across (host:port,...)"
