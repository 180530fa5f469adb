"""llama-server's command line, built from the decisions (never by editing an old one).

`build_argv` is the only place a llama-server argv is assembled: the window, `draftwise plan`
and `launch`, the self-test and the machine check all reach it through core/launch/prepare.py
(docs/launch-path.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from draftwise.core.address import DEFAULT_PORT, LOOPBACK
from draftwise.core.engines import args as engine_args
from draftwise.core.engines.spec_types import DRAFT_MTP
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import msg
from draftwise.core.speculation.resolver import SpecDecision

# The memory lines (model/KV/compute buffer sizes) come at verbosity 4: the window shows them
# next to the plan ("planned vs actual"), and crash causes read them. Every launch path gets
# the same level, so `draftwise plan` prints what the window runs.
VERBOSITY = ("-lv", "4")
_VERBOSITY_OPTIONS = ("--verbosity", "--verbose", "--log-disable")


def build_argv(
    binary: Path | str,
    model: gguf.ModelInfo | Path,
    spec: SpecDecision,
    *,
    extra_args: Sequence[str] = (),
    host: str = LOOPBACK,
    port: int = DEFAULT_PORT,
    plan_args: Sequence[str] = (),
) -> list[str]:
    """The full argv. `plan_args` carries the planner's context/KV/offload tokens; `extra_args`
    must not repeat an option set here (prepare() has read the planner's into the plan)."""
    path = model.path if isinstance(model, gguf.ModelInfo) else Path(model)
    argv = [str(binary), "-m", str(path), "--host", host, "--port", str(port)]
    argv += [] if engine_args.sets(extra_args, "--metrics") else ["--metrics"]  # live figures (core/measurements/live_figures.py)
    user = engine_args.engine_form(extra_args)
    if not any(engine_args.canonical(t) in _VERBOSITY_OPTIONS for t in [*user, *plan_args]):
        # First: the engine loads its backends while it parses some options (-ngl all,
        # --fit-target), and only what it prints after -lv says which CPU variant and which
        # GPU it found ("ggml_vulkan: No devices found") — the GPU verdict reads those lines.
        argv += VERBOSITY
    argv += list(plan_args)
    # The speculation as data, rendered here once (each option once: engine_args.OwnOptions).
    speculative = spec.options().argv()
    argv += speculative
    if speculative:
        argv += ban_args(spec.bans)
    # MTP with more than one slot was unreliable (docs/launch-path.md): one slot unless the plan says.
    if spec.spec_type == DRAFT_MTP and not engine_args.sets([*extra_args, *plan_args], "-np", "--parallel"):
        argv += ["-np", "1"]
    # The user's arguments last, in the only form the engine reads (`--flag value`).
    argv += user
    check_no_duplicates(argv)
    return argv


def ban_args(bans: Sequence[int]) -> list[str]:
    """`-l ID-inf` for each id the drafter cannot take (core/speculation/pairing.py): the
    model never samples it, so the draft never meets it. The pinned engine takes one id per
    `--logit-bias` (common/arg.cpp: "TOKEN_ID(+/-)BIAS", `std::stof` reads "inf"), no ranges;
    the pairing rule allows at most 128 of them (the engine's size limit)."""
    return [t for token_id in bans for t in ("-l", f"{token_id}-inf")]


def check_no_duplicates(argv: Sequence[str]) -> None:
    """An option twice means the engine runs the last one, not what was planned and shown.

    The renderer checking the command it assembled: the speculation cannot repeat an option
    (engine_args.OwnOptions refuses a second value), so what this finds is the user's extra
    arguments repeating one of ours (or of the plan's tokens), named to them."""
    names = Counter(name for _s, _e, name, _v in engine_args.options(list(argv[1:]))
                    if name in engine_args.KNOWN and name not in engine_args.REPEATABLE)
    twice = sorted(n for n, count in names.items() if count > 1)
    if twice:
        raise FieldError("extra_args", msg(  # type: ignore[arg-type]  # FieldError takes Text
            "The engine command would set {flags} twice; remove it from the extra arguments.",
            flags=", ".join(twice)))
