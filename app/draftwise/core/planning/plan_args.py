"""The plan as llama-server options, as data (`_args`: -c, -np, the KV types, -ngl or --fit, the
overrides, the drafter's options), and the host cache the running server may fill:
context checkpoints and the prompt cache, sized from the RAM the plan leaves free.
"""

from __future__ import annotations

from dataclasses import dataclass

from draftwise.core.engines.args import Option, option
from draftwise.core.kinds import DeviceKind, Switch
from draftwise.core.messages import Message, msg
from draftwise.core.planning import context_checkpoints, cpu_buffers, ffn_offload, kv_cache
from draftwise.core.planning.placement import _Planner, _Setup
from draftwise.core.planning.plan_types import PlanPrefs, human_bytes

MiB = 1 << 20


# ------------------------------------------------------------------ argv
def _args(p: _Planner, r: _Setup, prefs: PlanPrefs, with_drafter: bool) -> tuple[Option, ...]:
    c = kv_cache.cells(r.ctx, r.slots, p.shape.n_swa, prefs.swa_full, batch=prefs.batch, ubatch=prefs.ubatch)
    # The workers first: the engine connects to them while it reads its command line.
    args = [option("--rpc", ",".join(p.workers))] if p.workers else []
    args += [option("-c", str(c.n_ctx)), option("-np", str(r.slots)), option("-ctk", r.kv_type), option("-ctv", r.kv_type)]
    if prefs.swa_full:
        args.append(option("--swa-full"))
    if prefs.flash_attn:
        args.append(option("-fa", prefs.flash_attn))
    if prefs.batch:
        args.append(option("-b", str(prefs.batch)))
    if prefs.ubatch:
        args.append(option("-ub", str(prefs.ubatch)))
    if p.no_repack_arg:
        args.append(option(cpu_buffers.NO_REPACK_FLAGS[0]))
    args += _host_cache(p, r, prefs).args
    if prefs.projector is not None:
        args.append(option("--mmproj", str(prefs.projector)))
    partial = p.gpus and not p.unified and (0 < r.ngl < p.full_ngl or r.n_cpu_moe)
    fixed = prefs.gpu_layers is not None or prefs.n_cpu_moe is not None or prefs.n_cpu_ffn is not None
    if partial and prefs.engine_fit and not fixed:
        # The engine measures exactly and splits layers/experts itself; our margin is its
        # target. -c is set, so it will not touch the context.
        targets = ",".join(str(d.margin // MiB) for d in p.gpus)
        args += [option("--fit", Switch.ON), option("--fit-target", targets)]
    else:
        args.append(option("-ngl", "all" if r.ngl >= p.full_ngl else str(r.ngl)))
        if r.n_cpu_moe:
            args.append(option("--n-cpu-moe", str(r.n_cpu_moe)))
        args += ffn_offload.override_options(r.n_cpu_ffn)
        args.append(option("--fit", Switch.OFF))
    if with_drafter and p.drafter is not None:
        if r.kv_type != "f16":
            args += [option("--spec-draft-type-k", r.kv_type), option("--spec-draft-type-v", r.kv_type)]
        if p.drafter.kind == "model":
            on_gpu = bool(p.local) and r.ngl >= p.full_ngl
            args.append(option("--spec-draft-ngl", "all" if on_gpu else "0"))
            if p.workers:
                # The draft model runs every token: over the network it would cost more than it
                # saves. It follows --device by default, which includes the workers.
                local = [p.gpus[i].buffer for i in p.local]
                args.append(option("--spec-draft-device", ",".join(local) if on_gpu and local else "none"))
    return tuple(args)


@dataclass(frozen=True)
class _HostCache:
    checkpoints: int  # per slot
    checkpoint_bytes: int  # one checkpoint of one slot (target and drafter)
    checkpoints_total: int  # every slot's at their most
    prompt_cache: int  # bytes (--cache-ram)
    args: tuple[Option, ...]
    reason: Message | None = None


def _host_cache(p: _Planner, r: _Setup, prefs: PlanPrefs) -> _HostCache:
    """Context checkpoints and the prompt cache, from the RAM the plan leaves free.

    Both live in host memory and grow while the server runs (server-context.cpp
    create_checkpoint, server-task.cpp server_prompt_cache): up to --ctx-checkpoints (32)
    checkpoints per slot, each the slot's partial state
    (`context_checkpoints.partial_state_bytes`), one more for a recurrent model's speculative
    rollback, and up to --cache-ram (8 GiB) of saved prompts. Checkpoints come first (they spare re-reading a long prompt on each turn
    of a chat with a sliding-window or recurrent model); the prompt cache gets the rest."""
    devices, _b = p.evaluate(r)
    pool = devices[0] if p.unified else next(d for d in devices if d.kind == DeviceKind.CPU)
    headroom = max(pool.capacity - pool.working_set - pool.host_cache, 0)
    shape = p.shape
    c = kv_cache.cells(r.ctx, r.slots, shape.n_swa, prefs.swa_full, batch=prefs.batch, ubatch=prefs.ubatch)
    size = 0
    if context_checkpoints.makes_checkpoints(shape, prefs.swa_full):
        size = context_checkpoints.partial_state_bytes(shape, c, r.kv_type)
        d = p.drafter
        if d is not None and d.kind == "mtp":
            size += context_checkpoints.partial_state_bytes(shape, c, r.kv_type, shape.head)
        elif d is not None and d.shape is not None:
            size += context_checkpoints.partial_state_bytes(d.shape, kv_cache.cells(c.per_stream, c.n_stream, d.shape.n_swa), r.kv_type)
    speculative = p.drafter is not None and any(ly.recurrent for ly in shape.trunk)
    per_slot = size * r.slots
    reason = None
    if not size:
        n = 0
    elif prefs.ctx_checkpoints is not None:
        n = max(prefs.ctx_checkpoints, 0)
    else:
        n = min(context_checkpoints.CTX_CHECKPOINTS, max(headroom // per_slot - int(speculative), 0))
        if n < context_checkpoints.CTX_CHECKPOINTS:
            reason = msg("Each conversation keeps {n} context checkpoints instead of 32 (each {size}), so they "
                         "fit in RAM; a long chat may then re-read more of its prompt.",
                         n=n, size=human_bytes(size))
    total = per_slot * (n + int(speculative)) if size else 0
    if prefs.cache_ram_mib is not None:
        cache = headroom if prefs.cache_ram_mib < 0 else prefs.cache_ram_mib * MiB
        args: tuple[Option, ...] = ()
    else:
        cache = min(context_checkpoints.CACHE_RAM_MIB * MiB, max(headroom - total, 0)) // MiB * MiB
        args = (option("--cache-ram", str(cache // MiB)),)
    if reason is not None:
        args += (option("--ctx-checkpoints", str(n)),)
    return _HostCache(n, size, total, cache, args, reason)
