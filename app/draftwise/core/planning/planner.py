"""The memory plan: context, KV type, slots, offload and the drafter, for one machine.

`plan()` sizes every buffer llama-server will allocate (the byte formulas beside it: the
weights in weight_table.py and cpu_buffers.py, the model's geometry in model_shape.py, the KV
cache in kv_cache.py, a context's KV, recurrent state and output in context_bytes.py, its
compute buffer in compute_buffer.py, the MTP head's context in mtp_head.py, the context
checkpoints in context_checkpoints.py; checked against the engine's own buffer lines by
bench/plan_accuracy.py), places them on devices the way the engine does, and picks the
largest setup that fits. When something has to give, the concessions come in the order of
docs/rules.md ("Planner"):

1. fewer slots (parallel sequences);
2. q8_0 KV cache (not for families known to degrade);
3. a smaller context, never below the floor;
4. part of the model off the GPU (experts first for MoE, then whole blocks);
5. refuse, saying what would make it fit.

A drafter the product chose (`spec.source in AUTO_SOURCES`) is left out when keeping it
would cost the target any of that (context, KV precision, GPU layers); one the user chose
stays. Every concession is a sentence in `Plan.reasons`.

The parts live beside this module: the plan's data (plan_types.py), the devices and where
one setup's buffers go on them (placement.py), the search in the order of concessions
(fit_search.py), the drafter and its cost (drafter_fit.py), the inputs read from the user's
extra arguments (extra_args.py), the plan's engine arguments and host cache (plan_args.py),
and the plan beside the engine's buffers (planned_vs_actual.py). `PlanPrefs` and `Plan`, the
entry point's input and answer, are used in very many places and stay importable from here
(re-exported, `__all__`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from draftwise.core.engines.args import Option
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import AUTO_SOURCES, DeviceKind
from draftwise.core.machine.hardware import Machine
from draftwise.core.messages import Message, clause, msg
from draftwise.core.planning import ffn_offload, kv_cache, model_shape, residency, weight_table
from draftwise.core.planning.drafter_fit import _drafter, _drafter_cost
from draftwise.core.planning.extra_args import draft_lengths
from draftwise.core.planning.fit_search import _ctx_target, _kv_choices, _Result, _search, slot_cap
from draftwise.core.planning.placement import _devices, _Drafter, _Planner, _Setup
from draftwise.core.planning.plan_args import _args, _host_cache
from draftwise.core.planning.plan_types import NO_FIT, DeviceUse, Plan, PlanPrefs, human_bytes
from draftwise.core.readable import human_ctx
from draftwise.core.speculation.resolver import SpecDecision

__all__ = ["Plan", "PlanPrefs", "fit_state", "plan", "plan_json", "prefs_from_options"]

MiB = 1 << 20


# ------------------------------------------------------------------ entry points
def plan(
    model: gguf.ModelInfo,
    spec: SpecDecision,
    machine: Machine,
    prefs: PlanPrefs | None = None,
    draft: gguf.ModelInfo | None = None,
    *,
    shape: model_shape.Shape | None = None,
    weights: weight_table.WeightTable | None = None,
    draft_shape: model_shape.Shape | None = None,
    draft_weights: weight_table.WeightTable | None = None,
) -> Plan:
    """Plan one launch. `shape`/`weights` (and the draft's) default to the files' headers;
    tests pass them to describe models that are not on disk."""
    prefs = prefs or PlanPrefs()
    shape = shape or model_shape.read_shape(model)
    wt = weights or weight_table.read_weight_table(model)
    drafter = _drafter(spec, model, draft, draft_shape, draft_weights)
    gpus, ram, device_notes = _devices(machine, prefs)
    projector = 0
    if prefs.projector is not None:
        try:
            projector = gguf.read_projector(prefs.projector).tensor_bytes
        except (OSError, gguf.GGUFError):
            projector = prefs.projector.stat().st_size if prefs.projector.exists() else 0
    want, floor, ctx_notes = _ctx_target(model, prefs)
    kv_choices = _kv_choices(model, prefs)
    slots = max(prefs.slots or 1, 1)
    notes = device_notes + ctx_notes
    if spec.spec_type == "draft-mtp" and slots > 1:
        notes.append(msg("MTP runs with one slot: more were unreliable in this engine."))
        slots = 1

    # The CPU's extra buffers exist only when the engine sees no GPU at all (mmap on).
    cpu_variant = None
    if not machine.gpus and not machine.workers and not machine.unified_memory and not prefs.no_repack:
        cpu_variant = machine.cpu_variant

    lengths = draft_lengths(spec, prefs)

    repack = cpu_variant is not None  # the CPU re-lays weights; False once the plan turns it off

    def run(d: _Drafter | None) -> tuple[_Planner, _Result]:
        pl = _Planner(model, shape, wt, d, gpus, ram, prefs, spec.spec_type, projector)
        pl.lengths = lengths
        pl.cpu_variant = cpu_variant if repack else None
        pl.head_variant = None if prefs.no_repack or (cpu_variant is not None and not repack) else machine.cpu_variant
        pl.no_repack_arg = cpu_variant is not None and not repack
        pl.rates = ffn_offload.rates(machine, [g.name for g in gpus], prefs.cpu_rate, model.quant)
        pl.page = residency.page_size(machine.os)
        return pl, _search(pl, kv_choices, want, floor, slots)

    p_with, r_with = run(drafter)
    if repack and (r_with.setup is None or r_with.reasons):
        # Without the re-laid copies (-nr) the weights stay in the mapped file only: where the
        # copies cost the fit (or a concession), the plan turns them off before anything else.
        repack = False
        p_flat, r_flat = run(drafter)
        if _repack_concedes(r_with, r_flat, kv_choices):
            notes.insert(0, _no_repack_reason(p_with, p_flat, r_with, kv_choices, floor))
            p_with, r_with = p_flat, r_flat
        else:
            repack = True
    if drafter is None:
        return _finish(p_with, r_with, prefs, machine, want, floor, notes, None, None)
    p_without, r_without = run(None)
    fallback = _args(p_without, r_without.setup, prefs, False) if r_without.setup else ()
    cost = _drafter_cost(p_with, r_with, r_without, drafter.label)
    if cost and spec.source in AUTO_SOURCES:
        result = _finish(p_without, r_without, prefs, machine, want, floor, notes, None, fallback)
        result.drop_drafter = True
        result.drop_reason = cost[0]
        result.reasons.insert(0, cost[0])
        return result
    if cost:
        notes.append(cost[1])
    return _finish(p_with, r_with, prefs, machine, want, floor, notes, drafter.label, fallback)



def _repack_concedes(with_copies: _Result, flat: _Result, kv_choices: list[str]) -> bool:
    """Whether the plan without re-laid copies fits where the one with them does not, or with
    fewer concessions (more slots, a finer KV type, more context)."""
    if flat.setup is None:
        return False
    if with_copies.setup is None:
        return True

    def rank(s: _Setup) -> tuple[int, int, int]:
        return s.slots, -kv_choices.index(s.kv_type), s.ctx

    return rank(flat.setup) > rank(with_copies.setup)


def _no_repack_reason(p: _Planner, flat: _Planner, r: _Result, kv_choices: list[str], floor: int) -> Message:
    """Why the plan turned the re-laid copies off: what they would add to the memory needed
    (their bytes less the mapped pages they leave unread: core/planning/residency.py)."""
    setup = r.setup or _Setup(1, kv_choices[-1], floor, 0)

    def need(pl: _Planner) -> int:
        return sum(d.working_set for d in pl.evaluate(setup)[0])

    size = human_bytes(need(p) - need(flat))
    if r.setup is None:
        return msg("Weights not repacked (-nr): re-laying them for the CPU's faster kernels would take {size} more "
                   "memory, and the model would not fit; without that it fits.", size=size)
    why = r.reasons[-1] if r.reasons else msg("a smaller setup")
    return msg("Weights not repacked (-nr): re-laying them for the CPU's faster kernels would take {size} more "
               "memory and cost the plan a concession ({why}); without that it needs none.", size=size, why=clause(why))


def _finish(p: _Planner, r: _Result, prefs: PlanPrefs, machine: Machine, want: int, floor: int,
            notes: list[Message], drafter: Message | None, fallback: tuple[Option, ...] | None) -> Plan:  # fmt: skip
    setup = r.setup
    fits = setup is not None
    if setup is None:
        # Report the smallest setup, to say by how much it misses.
        kv = _kv_choices(p.model, prefs)[-1]
        setup = _Setup(1, kv, floor, 0 if not p.unified else p.full_ngl)
    devices, b = p.evaluate(setup)
    reasons = list(r.reasons)
    if not fits:
        reasons.append(_refusal(p, devices, setup, machine))
    reasons += notes
    host = _host_cache(p, setup, prefs)
    if fits:
        pool = devices[0] if p.unified else next(d for d in devices if d.kind == DeviceKind.CPU)
        pool.host_cache = host.checkpoints_total + host.prompt_cache
        b.checkpoints, b.prompt_cache = host.checkpoints_total, host.prompt_cache
        if host.reason is not None:
            reasons.append(host.reason)
    args = _args(p, setup, prefs, drafter is not None) if fits else ()
    c = kv_cache.cells(setup.ctx, setup.slots, p.shape.n_swa, prefs.swa_full, batch=prefs.batch,
                  ubatch=prefs.ubatch)
    warnings = list(p.shape.notes)
    if not p.wt.exact:
        warnings.append(msg("The weights are estimated from the file size: the tensor table could not be read."))
    return Plan(
        ctx=setup.ctx, n_ctx=c.n_ctx, kv_type=setup.kv_type, slots=setup.slots,
        gpu_layers=min(setup.ngl, p.full_ngl) if p.gpus else 0, n_layers=p.full_ngl,
        n_cpu_moe=setup.n_cpu_moe, n_cpu_ffn=setup.n_cpu_ffn if p.gpus else 0,
        layouts=p.layouts.get((setup.slots, setup.kv_type, setup.ctx), []) if fits else [],
        drop_drafter=False, fits=fits, bytes=b, per_device=devices,
        reasons=reasons, plan_options=args,
        fallback_plan_options=fallback if fallback is not None else args,
        target_plan_options=(_args(p, setup, prefs, False) if fits else ()) if drafter is not None else None,
        max_context=slot_cap(p.model, prefs) or max(prefs.ctx or 0, want),
        drafter=drafter, warnings=warnings, estimated_weights=not p.wt.exact,
        ctx_checkpoints=host.checkpoints, cache_ram_mib=host.prompt_cache // MiB if fits else 0,
        no_repack=fits and p.no_repack_arg,
    )  # fmt: skip


def _refusal(p: _Planner, devices: Sequence[DeviceUse], s: _Setup, machine: Machine) -> Message:
    need = sum(d.working_set for d in devices)
    have = sum(d.capacity for d in devices)
    short = max(need - have, 0)
    where = msg("RAM") if not p.gpus else msg("GPU memory and RAM together")
    if p.unified:
        where = msg("the memory the GPU may use")
    weights = p.wt.total(with_nextn=p.mtp)
    facts = {"ctx": human_ctx(s.ctx), "kv": s.kv_type, "need": human_bytes(need), "have": human_bytes(have),
             "where": where, "short": human_bytes(short)}
    if weights > short:
        return msg("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
                   "{have} of {where} is free. To run it, close other apps to free about {short} or pick a "
                   "smaller quantization of this model (one under about {weights}).",
                   **facts, weights=human_bytes(max(weights - short, 0)))
    return msg("It does not fit: even with a {ctx} context and a {kv} KV cache it needs about {need}, and "
               "{have} of {where} is free. To run it, close other apps to free about {short}.", **facts)


def plan_json(
    model: gguf.ModelInfo,
    spec: SpecDecision,
    machine: Machine,
    prefs: PlanPrefs | None = None,
    draft: gguf.ModelInfo | None = None,
) -> dict[str, Any]:
    """`draftwise plan --json`'s "plan" object."""
    return plan(model, spec, machine, prefs, draft).to_json()


def prefs_from_options(ctx: int | None = None, kv: str | None = None, slots: int | None = None,
                       swa_full: bool = False, cpu_only: bool = False) -> PlanPrefs:  # fmt: skip
    """PlanPrefs from CLI options (`--ctx N`, `--kv TYPE`); ValueError for bad values."""
    if ctx is not None and ctx < 256:
        raise ValueError("--ctx must be at least 256 tokens")
    if kv is not None and kv not in kv_cache.KV_TYPES:
        raise ValueError(f"--kv must be one of {', '.join(kv_cache.KV_TYPES)}")
    if slots is not None and slots < 1:
        raise ValueError("slots must be at least 1")
    return PlanPrefs(ctx=ctx, kv_type=kv, slots=slots, swa_full=swa_full, cpu_only=cpu_only)


def fit_state(model: gguf.ModelInfo, machine: Machine) -> str:
    """The library's badge: fits / partial / no, for the model alone at default settings."""
    from draftwise.core.speculation.resolver import NONE  # noqa: PLC0415 - a constant

    spec = SpecDecision(None, None, NONE, False)
    try:
        return plan(model, spec, machine).fit_state
    except (OSError, ValueError):
        return NO_FIT
