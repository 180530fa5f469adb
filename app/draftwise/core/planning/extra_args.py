"""The plan's inputs read from the user's remaining extra arguments (after
core/launch/owned_args.py): the slot cap after RoPE scaling, the draft lengths, the prompt
cache and context checkpoints, the projector and its placement, op offload and the load
mode. The arguments themselves stay in the argv as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from draftwise.core.engines import args as engine_args
from draftwise.core.gguf import reader as gguf
from draftwise.core.planning import context_bytes
from draftwise.core.planning.plan_types import PlanPrefs
from draftwise.core.speculation.resolver import SpecDecision

# ------------------------------------------------------------------ engine arguments the plan reads
_DRAFT_N_MAX = ("--spec-draft-n-max",)
_NGRAM_N_MAX = ("--spec-ngram-mod-n-max",)
# The m-gram lengths of ngram-simple and ngram-map-k (a measured setup passes them).
_NGRAM_SIZE_M = ("--spec-ngram-simple-size-m", "--spec-ngram-map-k-size-m")
_CACHE_RAM = ("--cache-ram", "-cram")
_CHECKPOINTS = ("--ctx-checkpoints", "-ctxcp", "--swa-checkpoints")
_NO_MMPROJ_OFFLOAD = ("--no-mmproj-offload",)
_NO_OP_OFFLOAD = ("--no-op-offload",)
_LOAD_MODE = ("--load-mode", "-lm")


def _int_arg(args: Sequence[str], names: tuple[str, ...]) -> int | None:
    v = engine_args.value_of(args, *names)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None  # the engine refuses it at start, with its own message


def draft_lengths(spec: SpecDecision, prefs: PlanPrefs) -> context_bytes.DraftLength:
    """The draft lengths the engine will run: the user's (PlanPrefs), else the one the decision
    sets (the field's or a measurement's: SpecDecision.lengths), else the engine's default."""
    def of_spec(flags: tuple[str, ...]) -> int:
        return max((spec.length(flag) or 0 for flag in flags), default=0)

    draft = prefs.draft_n_max or of_spec(_DRAFT_N_MAX) or context_bytes.SPEC_DRAFT_N_MAX
    ngram = prefs.ngram_n_max or of_spec(_NGRAM_N_MAX) or context_bytes.NGRAM_MOD_N_MAX
    size_m = of_spec(_NGRAM_SIZE_M) or context_bytes.NGRAM_MAP_SIZE_M
    return context_bytes.DraftLength(draft=max(draft, 0), ngram_mod=max(ngram, 0), ngram_map=size_m)


def trained_context(model: gguf.ModelInfo, args: Sequence[str]) -> int | None:
    """The slot cap after the user's RoPE options, as llama_init_from_model recomputes it:
    YaRN with a frequency scale other than the file's raises `n_ctx_train` to the original
    context / scale; any other setting keeps the file's (None)."""
    scaling = engine_args.value_of(args, "--rope-scaling") or (model.rope_scaling_type or "")
    scale = None
    for i, token in enumerate(args):  # the last of --rope-scale / --rope-freq-scale wins
        name = engine_args.flag_name(token)
        value = engine_args.value_of(args[i:], name) if name in ("--rope-scale", "--rope-freq-scale") else None
        try:
            if name == "--rope-scale" and value:
                scale = 1.0 / float(value)
            elif name == "--rope-freq-scale" and value:
                scale = float(value)
        except (ValueError, ZeroDivisionError):
            return None
    if scaling != "yarn" or not scale:
        return None
    train_scale = 1.0 / model.rope_scaling_factor if model.rope_scaling_factor else 1.0
    if abs(scale - train_scale) < 1e-9:
        return None
    orig = (_int_arg(args, ("--yarn-orig-ctx",)) or model.rope_scaling_original_context
            or model.context_length or 0)  # fmt: skip
    return int(orig / scale) or None


_MMPROJ = ("--mmproj", "-mm")
_NO_MMPROJ = ("--no-mmproj",)


def projector_for(model: gguf.ModelInfo) -> Path | None:
    """The projector (mmproj) that belongs to `model`: a file beside it (ModelInfo.projectors)
    whose projection width is the model's embedding length, the one mtmd accepts."""
    for path in model.projectors:
        try:
            info = gguf.read_projector(path)
        except (OSError, gguf.GGUFError):
            continue
        if info.projection_dim and info.projection_dim == model.embedding_length:
            return path
    return None


def engine_inputs(prefs: PlanPrefs, model: gguf.ModelInfo, args: Sequence[str]) -> tuple[PlanPrefs, tuple[str, ...]]:
    """The plan's inputs from the user's remaining extra arguments (after owned_args):
    `with_engine_args`, and the projector: the user's `--mmproj FILE` is taken out (the plan
    places and passes it), `--no-mmproj` keeps the model text-only, and otherwise the
    projector that belongs to the model is found and planned. Returns (prefs, the rest)."""
    prefs = with_engine_args(prefs, model, args)
    rest: list[str] = []
    given: str | None = None
    for start, end, _name, value in engine_args.options(list(args)):
        if engine_args.flag_name(args[start]) in _MMPROJ:
            given = value or ""
            continue
        rest += args[start:end]
    if given:
        prefs = replace(prefs, projector=Path(given))
    elif prefs.projector is None and not engine_args.sets(args, *_NO_MMPROJ):
        found = projector_for(model)
        if found is not None:
            prefs = replace(prefs, projector=found)
    return prefs, tuple(rest)


def with_engine_args(prefs: PlanPrefs, model: gguf.ModelInfo, args: Sequence[str]) -> PlanPrefs:
    """`prefs` with what the user's remaining extra arguments change in the plan without
    being the planner's to set: RoPE scaling (the slot cap), draft lengths, the prompt cache,
    context checkpoints, projector placement, the load mode (what of the mapped weights is
    resident). The arguments stay in the argv as written."""
    changes: dict[str, Any] = {}
    if (cap := trained_context(model, args)) is not None:
        changes["ctx_train"] = cap
    for field_name, names in (("draft_n_max", _DRAFT_N_MAX), ("ngram_n_max", _NGRAM_N_MAX),
                              ("cache_ram_mib", _CACHE_RAM), ("ctx_checkpoints", _CHECKPOINTS)):
        if (n := _int_arg(args, names)) is not None:
            changes[field_name] = n
    if engine_args.sets(args, *_NO_MMPROJ_OFFLOAD):
        changes["projector_offload"] = False
    if engine_args.sets(args, *_NO_OP_OFFLOAD):
        changes["op_offload"] = False
    if (mode := engine_args.value_of(args, *_LOAD_MODE)) is not None:
        changes["load_mode"] = mode.strip().lower()  # mlock, none, dio: the RAM holds every weight
    return replace(prefs, **changes) if changes else prefs
