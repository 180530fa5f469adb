"""llama-server's command line, built from the decisions (never by editing an old one).

`build_options` is the only place a llama-server command is assembled, as options (data:
`engine_args.Option`); `engine_args.render` writes them as argv, and nothing reads that argv
back (tests/test_own_argv.py). The window, `draftwise plan` and `launch`, `serve`'s preset,
the self-test and the machine check all reach it through core/launch/prepare.py
(docs/launch-path.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from draftwise.core.address import DEFAULT_PORT, LOOPBACK
from draftwise.core.engines import args as engine_args
from draftwise.core.engines.args import Option
from draftwise.core.engines.engine_settings import DEFAULTS as ENGINE_DEFAULTS
from draftwise.core.engines.engine_settings import EngineSettings
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
# The engine writes each completion or chat request's prompt, as the model gets it, into this
# folder (server-context.cpp handle_completions_impl): Draftwise's own option, with the user's
# consent, for learning from use (core/measurements/prompt_log.py).
LOG_PROMPTS = "--log-prompts-dir"


def build_options(
    model: gguf.ModelInfo | Path,
    spec: SpecDecision,
    *,
    extra_args: Sequence[str] = (),
    host: str = LOOPBACK,
    port: int = DEFAULT_PORT,
    plan_options: Sequence[Option] = (),
    engine: EngineSettings = ENGINE_DEFAULTS,
    prompt_log: Path | None = None,
) -> tuple[Option, ...]:
    """The whole command, binary aside, as options in order: the model and address, the
    planner's options (`plan_options`: context/KV/offload), the speculation, the user's extra
    arguments (read here, the one place they meet ours) and Draftwise's own engine settings
    beside the plan (`engine`: fixes, measured settings), then the folder the engine logs the
    prompts into (`prompt_log`, unless the user's arguments name their own). `extra_args` must
    not repeat an option set here (prepare() has read the planner's into the plan)."""
    path = model.path if isinstance(model, gguf.ModelInfo) else Path(model)
    user = engine_args.read_options(extra_args)
    own = engine.options()
    out = [engine_args.option("-m", str(path)), engine_args.option("--host", host),
           engine_args.option("--port", str(port))]
    if engine_args.find(user, "--metrics") is None:
        out.append(engine_args.option("--metrics"))  # live figures (core/measurements/live_figures.py)
    if engine_args.find([*user, *own, *plan_options], *_VERBOSITY_OPTIONS) is None:
        # First: the engine loads its backends while it parses some options (-ngl all,
        # --fit-target), and only what it prints after -lv says which CPU variant and which
        # GPU it found ("ggml_vulkan: No devices found") — the GPU verdict reads those lines.
        out.append(engine_args.option(*VERBOSITY))
    out += plan_options
    # The speculation as data (each option once: engine_args.OwnOptions).
    speculative = spec.options().items()
    out += speculative
    if speculative:
        out += ban_options(spec.bans)
    # MTP with more than one slot was unreliable (docs/launch-path.md): one slot unless the plan says.
    if spec.spec_type == DRAFT_MTP and engine_args.find([*user, *own, *plan_options], "--parallel") is None:
        out.append(engine_args.option("-np", "1"))
    # The user's arguments, in the only form the engine reads (`--flag value`), then ours.
    out += user
    out += own
    if prompt_log is not None and engine_args.find(user, LOG_PROMPTS) is None:
        out.append(engine_args.option(LOG_PROMPTS, str(prompt_log)))  # the user's own folder wins
    check_no_duplicates(out)
    return tuple(out)


def logs_prompts_into(options: Sequence[Option], prompt_log: Path | None) -> Path | None:
    """`prompt_log` when the command (`build_options`' own) logs the prompts there, else None
    (not asked, or the user's own --log-prompts-dir won: that folder is theirs, never read)."""
    found = engine_args.find(options, LOG_PROMPTS)
    return prompt_log if prompt_log is not None and found is not None and found.value == str(prompt_log) else None


def build_argv(
    binary: Path | str,
    model: gguf.ModelInfo | Path,
    spec: SpecDecision,
    *,
    extra_args: Sequence[str] = (),
    host: str = LOOPBACK,
    port: int = DEFAULT_PORT,
    plan_options: Sequence[Option] = (),
    engine: EngineSettings = ENGINE_DEFAULTS,
) -> list[str]:
    """The full argv: `build_options` rendered after the binary."""
    options = build_options(model, spec, extra_args=extra_args, host=host, port=port, plan_options=plan_options,
                            engine=engine)
    return [str(binary), *engine_args.render(options)]


def ban_options(bans: Sequence[int]) -> tuple[Option, ...]:
    """`-l ID-inf` for each id the drafter cannot take (core/speculation/pairing.py): the
    model never samples it, so the draft never meets it. The pinned engine takes one id per
    `--logit-bias` (common/arg.cpp: "TOKEN_ID(+/-)BIAS", `std::stof` reads "inf"), no ranges;
    the pairing rule allows at most 128 of them (the engine's size limit)."""
    return tuple(engine_args.option("-l", f"{token_id}-inf") for token_id in bans)


def ban_args(bans: Sequence[int]) -> list[str]:
    """`ban_options` as the engine reads them."""
    return list(engine_args.render(ban_options(bans)))


def check_no_duplicates(options: Sequence[Option]) -> None:
    """An option twice means the engine runs the last one, not what was planned and shown.

    The speculation cannot repeat an option (engine_args.OwnOptions refuses a second value),
    so what this finds is the user's extra arguments repeating one of ours (or of the plan's),
    named to them."""
    names = Counter(o.name for o in options if o.name in engine_args.KNOWN and o.name not in engine_args.REPEATABLE)
    twice = sorted(n for n, count in names.items() if count > 1)
    if twice:
        raise FieldError("extra_args", msg(  # type: ignore[arg-type]  # FieldError takes Text
            "The engine command would set {flags} twice; remove it from the extra arguments.",
            flags=", ".join(twice)))
