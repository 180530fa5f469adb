"""What the `draftwise` subcommands share: the user-error type, the request options that
`plan`, `launch` and `measure` all take (`add_request_options`), and reading them into the
core's request."""

from __future__ import annotations

import argparse
import os
from enum import StrEnum
from pathlib import Path
from typing import Any

from draftwise.core.address import DEFAULT_PORT
from draftwise.core.kinds import EngineKind, MtpMode, WorkerUse

EXIT_USER_ERROR = 2
API_KEY_VARIABLE = "DRAFTWISE_API_KEY"  # the user's own key for `draftwise launch`


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def words_of(kind: type[StrEnum]) -> dict[str, Any]:
    """argparse keywords for an option whose words are `kind`'s (core/kinds.py): the value
    arrives as the member, and a wrong word gets argparse's own line naming the right ones
    ("invalid choice: 'on' (choose from 'auto', 'off')")."""

    def word(text: str) -> StrEnum | str:
        try:
            return kind(text)
        except ValueError:
            return text  # not a member: the choices check below refuses it by name

    word.__name__ = kind.__name__
    return {"type": word, "choices": [k.value for k in kind]}


def add_request_options(p: argparse.ArgumentParser) -> None:
    """The options of one launch request, the same for `plan`, `launch` and `measure`: the
    model, speculation (--mtp, --draft, --ngram, --backend), memory (--ctx, --kv), the devices
    (--device, --engine, the per-device limit), other computers (--rpc), and engine arguments
    after --. `request_from` reads them."""
    p.add_argument("model")
    p.add_argument("--mtp", default=MtpMode.AUTO, **words_of(MtpMode),
                   help="speculation: auto (Draftwise decides) or off (default: auto)")
    p.add_argument("--draft", default=None, help="a draft model file (GGUF)")
    p.add_argument("--ngram", action="store_true", help="n-gram speculation when no drafter is found")
    p.add_argument("--backend", default=EngineKind.LLAMA_CPP, **words_of(EngineKind),
                   help="the server program that runs the model (default: llama.cpp)")
    p.add_argument("--ctx", type=int, default=None, help="context size in tokens (default: planned)")
    p.add_argument("--kv", default=None, help="KV cache type (f16, q8_0, q4_0, ...; default: planned)")
    add_device_options(p)
    p.add_argument("--rpc", default=None, metavar="HOST:PORT,...", help=RPC_HELP)
    p.add_argument("--use-workers", default=WorkerUse.AUTO, **words_of(WorkerUse),
                   help="auto: use the --rpc workers only when the model does not fit without them or they make "
                        "it faster over their links (default); always: use every worker listed")
    p.set_defaults(engine_args=[])  # filled from what follows -- (cli/main.py)


def add_address_options(p: argparse.ArgumentParser) -> None:
    """Where the engine listens, for the commands that plan or start a serving engine
    (`plan`, `launch`; `measure` starts its own engines on free ports)."""
    p.add_argument("--port", type=int, default=None,
                   help=f"listen on this port and fail if it is taken (default: {DEFAULT_PORT}, or a free one)")
    p.add_argument("--network", action="store_true",
                   help="accept connections from other computers (an API key is always required)")


def request_from(args: argparse.Namespace):
    """The core's launch request from the request options (`add_request_options`) and, where
    the command has them, the address options (--port, --network)."""
    from draftwise.core.launch import prepare
    from draftwise.core.planning import planner

    try:
        prefs = planner.prefs_from_options(ctx=args.ctx, kv=args.kv)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    port = getattr(args, "port", None)
    return prepare.Request(
        model=Path(args.model).expanduser().resolve(),
        mtp=MtpMode(args.mtp),
        draft=Path(args.draft).expanduser().resolve() if args.draft else None,
        backend=EngineKind(args.backend),
        extra_args=tuple(args.engine_args),
        ngram_when_no_drafter=args.ngram,
        prefs=prefs,
        port=DEFAULT_PORT if port is None else port,
        pinned_port=port is not None,
        network=getattr(args, "network", False),
        # The key the user chose for every launch, else a fresh one per launch.
        api_key=os.environ.get(API_KEY_VARIABLE) or None,
        use_workers=WorkerUse(getattr(args, "use_workers", WorkerUse.AUTO)),
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
    from draftwise.core.rpc import workers

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


def add_device_options(p: argparse.ArgumentParser) -> None:
    """--device, --engine and the per-device memory limit (part of the request options)."""
    p.add_argument("--device", action="append", default=None, metavar="NAME",
                   help="the GPU to use, as the engine names it (e.g. Vulkan0); repeat or separate with "
                        "commas for several. Default: Draftwise chooses (never a software device)")
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
    from draftwise.core.machine import device_choice, hardware

    stored = settings_mod.load().settings
    limits = device_choice.limits_from(stored.device_limits)
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
        return device_choice.select(machine, devices, limits)
    except device_choice.DeviceChoiceError as exc:
        if devices_of(args):
            raise UserError(f"--device: {exc}") from exc
        # The window's stored choice is not on this engine: let Draftwise choose.
        return device_choice.select(machine, None, limits)


def engine_caps(configured: str | None = None):
    """(binary, caps, GPU backend) of the best engine here (the named one with --engine), or
    the pinned engine's facts when none is (a CPU build named llama-server)."""
    from draftwise.core.engines import capabilities, discovery
    from draftwise.core.kinds import Backend

    if configured:
        named = discovery.find_engines(configured)[0]
        if not named.usable:
            raise UserError(f"--engine: {named.problem}")
        return named.binary, caps_of(named.binary), named.backend
    engine = discovery.best_engine(configured)
    if engine is None:
        return "llama-server", capabilities.pinned_caps(), Backend.CPU
    return engine.binary, caps_of(engine.binary), engine.backend


def machine_for(args: argparse.Namespace, engine_binary: Path | str | None):
    """The machine to plan for: a described one (--machine FILE.json) or this one."""
    from draftwise.core.machine import hardware, machine_types

    if getattr(args, "machine", None):
        try:
            return machine_types.load_machine(args.machine)
        except ValueError as exc:
            raise UserError(f"--machine: {exc}") from exc
    binary = Path(engine_binary) if engine_binary and Path(engine_binary).is_file() else None
    return hardware.inventory(binary)
