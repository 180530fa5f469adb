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
def add_device_options(p: argparse.ArgumentParser, *, engine: bool = True) -> None:
    """--device, --engine and the per-device memory limit, shared by `plan` and `launch`."""
    p.add_argument("--device", action="append", default=None, metavar="NAME",
                   help="the GPU to use, as the engine names it (e.g. Vulkan0); repeat or separate with "
                        "commas for several. Default: Draftwise chooses (never a software device)")
    if engine:
        p.add_argument("--engine", default=None, help="path of the llama-server to use")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--keep-free", type=float, default=None, metavar="GB",
                       help="keep this much memory free on each GPU used (default: 1 GB)")
    limit.add_argument("--use-at-most", type=float, default=None, metavar="GB",
                       help="use at most this much memory of each GPU used")


def devices_of(args: argparse.Namespace) -> list[str]:
    return [d.strip() for item in (getattr(args, "device", None) or []) for d in item.split(",") if d.strip()]


def select_machine(args: argparse.Namespace, machine):
    """The machine one launch sees: the chosen devices (--device, else the settings' choice),
    and the memory limits (--keep-free / --use-at-most for the GPUs used, over the ones
    stored in the settings)."""
    from draftwise.core import settings as settings_mod
    from draftwise.core.machine import hardware

    stored = settings_mod.load().settings
    limits = hardware.limits_from(stored.device_limits)
    devices = devices_of(args) or ([stored.device] if stored.device else [])
    cli_limit = None
    try:
        if getattr(args, "keep_free", None) is not None:
            cli_limit = hardware.DeviceLimit(keep_free=int(args.keep_free * hardware.GB))
        elif getattr(args, "use_at_most", None) is not None:
            cli_limit = hardware.DeviceLimit(at_most=int(args.use_at_most * hardware.GB))
    except ValueError as exc:
        raise UserError(f"--keep-free/--use-at-most: {exc}") from exc
    if cli_limit is not None:
        limits.update({g.key: cli_limit for g in machine.gpus})
    try:
        return hardware.select(machine, devices, limits)
    except hardware.DeviceChoiceError as exc:
        if devices_of(args):
            raise UserError(f"--device: {exc}") from exc
        # The window's stored choice is not on this engine: let Draftwise choose.
        return hardware.select(machine, None, limits)
