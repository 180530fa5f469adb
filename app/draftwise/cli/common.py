"""What the `draftwise` subcommands share: the user-error type, and reading the options that
`plan` and `launch` both take into the core's request."""

from __future__ import annotations

import argparse
from pathlib import Path

EXIT_USER_ERROR = 2


class UserError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def request_from(args: argparse.Namespace):
    """The core's launch request from the shared options (model, --mtp, --draft, --ctx, --kv,
    engine arguments after --, and plan's --backend/--ngram where given)."""
    from draftwise.core.launch import prepare
    from draftwise.core.planning import planner
    from draftwise.core.speculation import resolver

    try:
        prefs = planner.prefs_from_options(ctx=args.ctx, kv=args.kv)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    return prepare.Request(
        model=Path(args.model).expanduser().resolve(),
        mtp=args.mtp,
        draft=Path(args.draft).expanduser().resolve() if args.draft else None,
        backend=getattr(args, "backend", resolver.LLAMA_CPP),
        extra_args=tuple(args.engine_args),
        ngram_when_no_drafter=getattr(args, "ngram", False),
        prefs=prefs,
    )


def caps_of(binary: Path):
    """What this engine accepts, or a UserError saying it could not be asked."""
    from draftwise.core.engines import capabilities

    try:
        return capabilities.capabilities(binary)
    except (OSError, ValueError) as exc:
        raise UserError(f"Could not ask {binary} what it supports: {exc}") from exc
