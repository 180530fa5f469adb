"""Extra engine arguments that set what the memory plan decides: read into the plan, or refused.

The planner writes context, KV type, slots, GPU placement and batch sizes into the command
line (`Plan.plan_args`). A user's `--ctx-size=512` appended after them would make the engine
run something else than the plan shows (the memory bar, the fit badge, the drafter decision).
So every planner-owned option in the extra arguments is taken out and becomes an input of the
plan (planned, shown, and emitted once, by the planner), or the launch is refused with a
message naming the option and the field to use instead. docs/launch-path.md lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from draftwise.core.engines import args as engine_args
from draftwise.core.errors import FieldError
from draftwise.core.kinds import Switch
from draftwise.core.messages import Message, msg
from draftwise.core.planning import plan_types, planner
from draftwise.core.planning.kv_cache import KV_TYPES

# Options the planner decides but cannot take as an input: what to use instead.
REFUSED: dict[str, Callable[[str], Message]] = {
    "--tensor-split": lambda flag: msg("Draftwise splits the model across GPUs by their free memory; remove {flag}.", flag=flag),
    # The planner writes -ot itself (the FFN weights it keeps on the CPU, ffn_offload.py).
    "--override-tensor": lambda flag: msg(
        "Draftwise places the model's tensors itself (it writes -ot for the feed-forward weights it keeps on "
        "the CPU) and cannot plan {flag}; remove it (use -ngl, --n-cpu-moe or --n-cpu-ffn to keep part of the "
        "model off the GPU).", flag=flag),
    "--no-kv-offload": lambda flag: msg(
        "Draftwise keeps the KV cache beside the layers it belongs to and cannot plan {flag}; remove it.", flag=flag),
    "--kv-unified": lambda flag: msg(
        "Draftwise plans one KV cache per slot and cannot plan {flag}; remove it.", flag=flag),
    "--fit": lambda flag: msg(
        "Draftwise decides the GPU offload itself and sets --fit; remove {flag} "
        "(use -ngl or --n-cpu-moe to fix the split yourself).", flag=flag),
    "--fit-target": lambda flag: msg(
        "Draftwise sets the memory left free on each GPU (--fit-target); remove {flag}.", flag=flag),
    "--fit-ctx": lambda flag: msg(
        "Draftwise plans the context itself; remove {flag} and use the Context field (--ctx).", flag=flag),
    "--fit-print": lambda flag: msg("Draftwise shows the memory plan itself; remove {flag}.", flag=flag),
    "--spec-draft-device": lambda flag: msg(
        "Draftwise keeps the draft model on this computer; remove {flag}.", flag=flag),
    "--rpc": lambda flag: msg(
        "Draftwise asks the other computers and plans for them itself: remove {flag} and list them under "
        "Other computers (draftwise launch --rpc host:port,...).", flag=flag),
    # Placement: the plan decides which devices hold what.
    "--device": lambda flag: msg(
        "Draftwise chooses the devices and plans for them; remove {flag} and pick the device in the Device "
        "field (draftwise launch --device NAME).", flag=flag),
    "--main-gpu": lambda flag: msg(
        "Draftwise chooses the GPUs; remove {flag} and pick the device in the Device field "
        "(draftwise launch --device NAME).", flag=flag),
    "--kv-unified-per-slot": lambda flag: msg(
        "Draftwise plans one KV cache per slot and cannot plan {flag}; remove it and set the context per slot "
        "in the Context field.", flag=flag),
}
# The drafter's KV type and placement follow the main model's, which the plan decides.
for _name in ("--spec-draft-type-k", "--spec-draft-type-v"):
    REFUSED[_name] = lambda flag: msg(
        "The drafter's KV cache follows the KV cache field; remove {flag} and use the KV cache field (--kv).",
        flag=flag)
for _name in ("--spec-draft-ngl", "--spec-draft-override-tensor", "--spec-draft-cpu-moe", "--spec-draft-n-cpu-moe"):
    REFUSED[_name] = lambda flag: msg("Draftwise places the draft model with the main model; remove {flag}.", flag=flag)
# Options that fetch a model from elsewhere: the library is where models come from.
for _name in ("--hf-repo", "--hf-file", "--hf-token", "--model-url", "--docker-repo", "--spec-draft-hf",
              "--mmproj-url"):
    REFUSED[_name] = lambda flag: msg(
        "Draftwise runs the models in your library, so the engine downloads nothing; remove {flag}, get the "
        "model with Get models… (draftwise get REPO) and choose it.", flag=flag)
# --split-mode: `layer`, the engine's default, is what the plan assumes; the others are not planned.
_SPLIT_MODES = {
    "none": lambda flag: msg(
        "Draftwise plans the layer split across the GPUs it uses; to use one GPU, remove {flag} none and pick "
        "it in the Device field (draftwise launch --device NAME).", flag=flag),
    "row": lambda flag: msg("Draftwise plans the layer split and cannot plan {flag} row; remove it.", flag=flag),
    "tensor": lambda flag: msg(
        "Draftwise fits the model with the engine's --fit, which aborts with {flag} tensor "
        "(common/fit.cpp: not implemented for it); remove it.", flag=flag),
}
# Options read into PlanPrefs (see `read`).
READ = frozenset({
    "--ctx-size", "--parallel", "--cache-type-k", "--cache-type-v", "--flash-attn", "--swa-full",
    "--n-gpu-layers", "--n-cpu-moe", "--cpu-moe", "--n-cpu-ffn", "--batch-size", "--ubatch-size", "--split-mode",
})
OWNED = READ | frozenset(REFUSED)

# common/arg.cpp is_truthy / is_falsey / is_autoy, for -fa.
_FA_WORDS = {"on": Switch.ON, "enabled": Switch.ON, "true": Switch.ON, "1": Switch.ON,
             "off": Switch.OFF, "disabled": Switch.OFF, "false": Switch.OFF, "0": Switch.OFF,
             "auto": Switch.AUTO, "-1": Switch.AUTO}  # fmt: skip


class OwnedArgError(FieldError):
    """An extra argument that sets what the plan decides, and cannot be planned."""


@dataclass(frozen=True)
class PlanInputs:
    prefs: planner.PlanPrefs  # the request's, with what the extra arguments set
    rest: tuple[str, ...]  # the extra arguments without the planner-owned ones
    taken: tuple[str, ...] = ()  # the options read into the plan, as the user wrote them


def _error(text: Message) -> OwnedArgError:
    return OwnedArgError("extra_args", text)


def _int(flag: str, value: str | None, least: int) -> int:
    try:
        n = int(value or "")
    except ValueError:
        raise _error(msg("{flag} needs a whole number, not '{value}'.", flag=flag, value=value or "")) from None
    if n < least:
        raise _error(msg("{flag} must be at least {least}.", flag=flag, least=least))
    return n


def _twice(flag: str, field: str, given: object, planned: object) -> OwnedArgError:
    return _error(msg("{flag} {given} in the extra arguments and {planned} in the {field} field disagree; "
                      "clear one of them.", flag=flag, given=given, planned=planned, field=field))


def read(extra_args: Sequence[str], prefs: planner.PlanPrefs, *, n_ctx_train: int | None = None) -> PlanInputs:
    """Take the planner-owned options out of `extra_args` into `prefs`; OwnedArgError for one
    that cannot be planned or that contradicts a field. `n_ctx_train`: the model's trained
    context, which `-c 0` means (the engine's own reading: src/llama-context.cpp)."""
    found: dict[str, tuple[str, str | None]] = {}  # canonical → (as written, value)
    rest: list[str] = []
    taken: list[str] = []
    for start, end, name, value in engine_args.options(list(extra_args)):
        token = extra_args[start]
        if name not in OWNED:
            rest += extra_args[start:end]
            continue
        if name in REFUSED:
            flag = token.split("=", 1)[0]
            raise _error(msg("Extra engine arguments may not contain {flag}. {why}",
                             flag=flag, why=REFUSED[name](flag)))
        if name in found and found[name][1] != value:
            raise _error(msg("{flag} is given twice with different values ({a} and {b}); keep one.",
                             flag=name, a=found[name][1] or "", b=value or ""))
        found[name] = (token.split("=", 1)[0], value)
        taken += extra_args[start:end]

    changes: dict[str, object] = {}

    def val(name: str) -> tuple[str, str | None]:
        return found[name]

    if "--parallel" in found:
        flag, v = val("--parallel")
        slots = _int(flag, v, 1)
        if prefs.slots is not None and prefs.slots != slots:
            raise _twice(flag, "Slots", slots, prefs.slots)
        changes["slots"] = slots
    slots = int(changes.get("slots") or prefs.slots or 1)
    if "--ctx-size" in found:
        flag, v = val("--ctx-size")
        if (v or "").strip() == "0":
            # The engine reads 0 as the model's trained context.
            if not n_ctx_train:
                raise _error(msg("{flag} 0 means the model's trained context, which this file does not state; "
                                 "give the context as a number.", flag=flag))
            v = str(n_ctx_train)
        total = _int(flag, v, 256)
        # -c is the whole context; each of the slots gets its share (llama-server's rule).
        per_slot = max(total // slots, 256)
        if prefs.ctx is not None and prefs.ctx != per_slot:
            raise _twice(flag, "Context", per_slot, prefs.ctx)
        changes["ctx"] = per_slot
    if "--cache-type-k" in found or "--cache-type-v" in found:
        k = found.get("--cache-type-k", ("", None))
        v = found.get("--cache-type-v", ("", None))
        if k[1] is None or v[1] is None:
            have, missing = (k[0], "-ctv") if k[1] is not None else (v[0], "-ctk")
            raise _error(msg("{flag} alone cannot be planned: Draftwise gives the K and V caches one type. "
                             "Use the KV cache field (--kv), or give {missing} the same type.",
                             flag=have, missing=missing))
        if k[1] != v[1]:
            raise _error(msg("-ctk {k} and -ctv {v} differ: Draftwise gives the K and V caches one type. "
                             "Use the KV cache field (--kv).", k=k[1], v=v[1]))
        if k[1] not in KV_TYPES:
            raise _error(msg("{flag} {value} is not a KV cache type; use one of {known}.",
                             flag=k[0], value=k[1], known=", ".join(KV_TYPES)))
        if prefs.kv_type is not None and prefs.kv_type != k[1]:
            raise _twice(k[0], "KV cache", k[1], prefs.kv_type)
        changes["kv_type"] = k[1]
    if "--flash-attn" in found:
        flag, v = val("--flash-attn")
        word = _FA_WORDS.get((v or "").lower())
        if word is None:
            raise _error(msg("{flag} takes on, off or auto, not '{value}'.", flag=flag, value=v or ""))
        changes["flash_attn"] = word
    if "--swa-full" in found:
        changes["swa_full"] = True
    if "--n-gpu-layers" in found:
        flag, v = val("--n-gpu-layers")
        if v == "all":
            changes["gpu_layers"] = plan_types.ALL_LAYERS
        elif v != Switch.AUTO:  # auto: the engine fits by itself, which is the planner's job here
            changes["gpu_layers"] = _int(flag, v, 0)
    if "--cpu-moe" in found:
        changes["n_cpu_moe"] = plan_types.ALL_LAYERS
    if "--n-cpu-moe" in found:
        flag, v = val("--n-cpu-moe")
        n = _int(flag, v, 0)
        if "--cpu-moe" in found:
            raise _error(msg("--cpu-moe and {flag} {n} both set where the experts go; keep one.", flag=flag, n=n))
        changes["n_cpu_moe"] = n
    if "--n-cpu-ffn" in found:
        # The FFN weights of the first N blocks in RAM: planned as given and written as -ot.
        flag, v = val("--n-cpu-ffn")
        changes["n_cpu_ffn"] = _int(flag, v, 0)
    if "--split-mode" in found:
        flag, v = val("--split-mode")
        mode = (v or "").strip().lower()
        if mode in _SPLIT_MODES:
            raise _error(msg("Extra engine arguments may not contain {flag}. {why}",
                             flag=flag, why=_SPLIT_MODES[mode](flag)))
        if mode != "layer":
            raise _error(msg("{flag} takes none, layer, row or tensor, not '{value}'.", flag=flag, value=v or ""))
        # `layer` is the engine's default and what the plan assumes: planned, not passed.
    for name, field_name in (("--batch-size", "batch"), ("--ubatch-size", "ubatch")):
        if name in found:
            flag, v = val(name)
            changes[field_name] = _int(flag, v, 1)
    return PlanInputs(replace(prefs, **changes), tuple(rest), tuple(taken))  # type: ignore[arg-type]
