"""The search for the first setup that fits, in the order of concessions (docs/rules.md,
"Planner"): the KV types this model may use, the context wanted and its floor, then fewer
slots, q8_0 KV, a smaller context, and a partial offload (experts to RAM, whole blocks, or
a dense model's FFN weights on the CPU, whichever is faster), each concession a sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import Switch
from draftwise.core.messages import Message, msg
from draftwise.core.planning import ffn_offload, kv_cache
from draftwise.core.planning.placement import _Planner, _Setup
from draftwise.core.planning.plan_types import DEFAULT_CTX, PlanPrefs, human_bytes
from draftwise.core.readable import human_ctx

# Families where users report visible quality loss with a quantized (q8_0) KV cache: the
# planner shrinks the context instead. Small and conservative; a user's explicit --kv wins.
KV_QUANT_AVOID = frozenset({"qwen2", "qwen2moe", "qwen2vl", "gemma2", "gemma3", "gemma3n"})
_UNQUANTIZED_KV = ("f32", "f16", "bf16")



def _head_sizes(model: gguf.ModelInfo) -> set[int]:
    sizes = {model.key_length, model.value_length}
    if not any(sizes):
        heads = model.head_count if isinstance(model.head_count, int) else max(model.head_count or [0])
        if heads and model.embedding_length:
            sizes = {model.embedding_length // heads}
    return {n for n in sizes if n}


def kv_types_for(model: gguf.ModelInfo) -> list[str]:
    """KV cache types the engine accepts for this model: a quantized cache needs every head
    size to be a multiple of its block (32), or the context fails to start
    ("K cache type q8_0 with block size 32 does not divide n_embd_head_k")."""
    sizes = _head_sizes(model)
    return [t for t, (block, _size) in kv_cache.KV_TYPES.items() if all(n % block == 0 for n in sizes)]


def _kv_choices(model: gguf.ModelInfo, prefs: PlanPrefs) -> list[str]:
    valid = kv_types_for(model)
    if prefs.flash_attn == Switch.OFF:
        # llama_init_from_model refuses a quantized V cache with flash attention disabled.
        valid = [t for t in valid if t in _UNQUANTIZED_KV]
    if prefs.kv_type:
        if prefs.kv_type not in kv_cache.KV_TYPES:
            raise ValueError(f"unknown KV type {prefs.kv_type!r} (known: {', '.join(kv_cache.KV_TYPES)})")
        if prefs.flash_attn == Switch.OFF and prefs.kv_type not in _UNQUANTIZED_KV:
            raise FieldError("kv_type", msg(
                "KV cache {kv} needs flash attention, and -fa off turns it off. "
                "Remove -fa off or set the KV cache to Auto or f16.", kv=prefs.kv_type,
            ))
        if prefs.kv_type not in valid:
            raise FieldError("kv_type", msg(
                "KV cache {kv} does not work with this model: its attention heads hold {sizes} values, "
                "not a multiple of 32. Set the KV cache to Auto or f16.",
                kv=prefs.kv_type, sizes=", ".join(map(str, sorted(_head_sizes(model)))),
            ))
        return [prefs.kv_type]
    if (model.architecture or "") in KV_QUANT_AVOID or "q8_0" not in valid:
        return ["f16"]
    return ["f16", "q8_0"]



# ------------------------------------------------------------------ search
def slot_cap(model: gguf.ModelInfo, prefs: PlanPrefs) -> int:
    """The most context one slot can use (server-context.cpp `n_ctx_slot`): the trained
    length, or what the user's YaRN scaling makes it (`trained_context`); 0: unknown."""
    return prefs.ctx_train or model.context_length or 0


def _ctx_target(model: gguf.ModelInfo, prefs: PlanPrefs) -> tuple[int, int, list[Message]]:
    """(wanted context, floor, notes)."""
    notes = []
    trained = slot_cap(model, prefs)
    if prefs.ctx == 0 and trained:
        # `-c 0` is the trained context (llama_context: n_ctx 0 -> n_ctx_train), chosen by the user.
        prefs = replace(prefs, ctx=trained)
    if prefs.ctx:
        want = prefs.ctx
        if trained and want > trained:
            # The engine would allocate the larger cache but cap every slot at the trained
            # length: planning it would buy memory no reply can use.
            notes.append(msg("The context is {trained} instead of {want}: the engine stops each conversation at the "
                             "{trained} this model was trained for (RoPE scaling, e.g. --rope-scaling yarn "
                             "--rope-scale 2, raises that).", want=human_ctx(want), trained=human_ctx(trained)))
            want = trained
    else:
        want = min(DEFAULT_CTX, trained) if trained else DEFAULT_CTX
    floor = min(prefs.ctx_floor, want, trained or want)
    return max(want, 256), max(floor, 256), notes


def _ctx_step(ctx: int) -> int:
    return 1024 if ctx >= 4096 else 256


def _largest_ctx(fits: Any, lo: int, hi: int) -> int | None:
    """Largest context in [lo, hi] (on the 256/1024 grid) for which fits(ctx) holds."""
    if not fits(lo):
        return None
    if fits(hi):
        return hi
    grid = sorted({lo, hi} | {x for x in range(_round_up(lo, 256), hi, 256)
                              if x % _ctx_step(x) == 0})  # fmt: skip
    a, b = 0, len(grid) - 1  # grid[a] fits, grid[b] does not
    while b - a > 1:
        m = (a + b) // 2
        if fits(grid[m]):
            a = m
        else:
            b = m
    return grid[a]


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass
class _Result:
    setup: _Setup | None
    reasons: list[Message]


def _search(p: _Planner, kv_choices: list[str], want: int, floor: int, slots: int) -> _Result:
    """The first setup that fits, in the order of concessions."""
    reasons: list[Message] = []
    kv0 = kv_choices[0]
    full = p.full_ngl if p.gpus else 0
    # Placement the user fixed (-ngl, --n-cpu-moe, --cpu-moe, --n-cpu-ffn): planned as given, never moved.
    fixed = p.prefs.gpu_layers is not None or p.prefs.n_cpu_moe is not None or p.prefs.n_cpu_ffn is not None
    if p.prefs.gpu_layers is not None:
        full = min(max(p.prefs.gpu_layers, 0), p.full_ngl) if p.gpus else 0
    moe0 = min(max(p.prefs.n_cpu_moe, 0), p.n_loaded) if p.prefs.n_cpu_moe is not None else 0
    ffn0 = min(max(p.prefs.n_cpu_ffn, 0), p.shape.n_layer) if p.prefs.n_cpu_ffn is not None and p.gpus else 0
    where = msg("the GPU") if p.gpus else msg("memory")
    if p.unified:
        where = msg("the GPU's share of memory")

    def s(slots_: int, kv: str, ctx: int, ngl: int = full, moe: int = moe0) -> _Setup:
        return _Setup(slots_, kv, ctx, ngl, moe, ffn0)

    # 1-3: everything on the GPU (or in RAM without one): slots, KV type, context.
    if p.fits(s(slots, kv0, want)):
        return _Result(s(slots, kv0, want), reasons)
    slot_options = [slots] if slots == 1 else [slots, 1]
    for sl in slot_options[1:]:
        if p.fits(s(sl, kv0, want)):
            reasons.append(msg("One slot instead of {slots}: {slots} parallel conversations would not fit in {where}.",
                               slots=slots, where=where))
            return _Result(s(sl, kv0, want), reasons)
    sl = 1
    slot_reason = ([msg("One slot instead of {slots}: more would not fit in {where}.", slots=slots, where=where)]
                   if slots > 1 else [])
    for kv in kv_choices[1:]:
        if p.fits(s(sl, kv, want)):
            return _Result(s(sl, kv, want), slot_reason + [
                msg("The KV cache is stored as {kv} instead of {kv0} so the {ctx} context fits in {where}.",
                    kv=kv, kv0=kv0, ctx=human_ctx(want), where=where)])  # fmt: skip
    kv_last = kv_choices[-1]
    best = _largest_ctx(lambda x: p.fits(s(sl, kv_last, x)), floor, want)
    if best is not None:
        if kv_last != kv0:
            why = msg("The context is {ctx} instead of {want} with a {kv} KV cache: that is what fits in {where}.",
                      ctx=human_ctx(best), want=human_ctx(want), kv=kv_last, where=where)
        else:
            why = msg("The context is {ctx} instead of {want}: that is what fits in {where}.",
                      ctx=human_ctx(best), want=human_ctx(want), where=where)
        return _Result(s(sl, kv_last, best), [*slot_reason, why])

    if not p.gpus or p.unified or fixed:
        return _Result(None, slot_reason)

    # 4: part of the model off the GPU. The context no longer buys a full offload, so the
    # setup goes back to what the user wanted, conceding again only if RAM runs out.
    for sl2 in slot_options:
        for kv in kv_choices:
            r = _offload(p, s(sl2, kv, want))
            if r is not None:
                return _Result(r, _offload_reasons(p, r, slots, kv0, want))
    best = _largest_ctx(lambda x: _offload(p, s(1, kv_last, x)) is not None, floor, want)
    if best is not None:
        r = _offload(p, s(1, kv_last, best))
        assert r is not None
        return _Result(r, _offload_reasons(p, r, slots, kv0, want))
    return _Result(None, slot_reason)


def _offload(p: _Planner, s: _Setup) -> _Setup | None:
    """The partial offload for this slots/KV/context: whole layers on the CPU, or for a dense
    model the faster of that and its FFN weights on the CPU (ffn_offload.py's cost model);
    both layouts are kept for Plan.layouts."""
    layers = _offload_layers(p, s)
    if p.ffn is None:
        return layers
    k = ffn_offload.smallest_k(lambda n: p.gpus_fit(replace(s, ngl=p.full_ngl, n_cpu_ffn=n)), p.shape.n_layer)
    ffn = replace(s, ngl=p.full_ngl, n_cpu_ffn=k) if k is not None else None
    if ffn is not None and not p.fits(ffn):
        ffn = None
    found = [_layout(p, r, name) for r, name in ((layers, ffn_offload.LAYERS), (ffn, ffn_offload.FFN))
             if r is not None]  # fmt: skip
    if not found:
        return None
    best = found[0]
    if len(found) == 2 and ffn_offload.faster(found[1], found[0]):
        best = found[1]
    best.chosen = True
    p.layouts[(s.slots, s.kv_type, s.ctx)] = found
    return layers if best.name == ffn_offload.LAYERS else ffn


def _layout(p: _Planner, r: _Setup, name: str) -> ffn_offload.Layout:
    """One layout's bytes per device and what a token reads where (dense blocks: all their
    weights, every KV byte, the head; a tied head is the whole table)."""
    devices, b = p.evaluate(r)
    trunk = sum(p.wt.layers[: p.shape.n_layer])
    total_read = trunk + sum(d.kv for d in devices) + p.wt.output + (p.wt.input if p.wt.tied else 0)
    cpu_read, gpu_read = ffn_offload.token_reads(devices, total_read)
    return ffn_offload.Layout(name, min(r.ngl, p.full_ngl), r.n_cpu_ffn, devices, cpu_read, gpu_read,
                              ffn_offload.seconds(cpu_read, gpu_read, p.rates))


def _offload_layers(p: _Planner, s: _Setup) -> _Setup | None:
    """The most GPU use that fits for this slots/KV/context: MoE experts go to RAM first
    (they are the bulk and the least used per token), then whole blocks, last first.

    GPU use only grows with -ngl (and shrinks with --n-cpu-moe) while RAM use does the
    opposite, so the search finds the most the GPUs hold, then checks RAM there."""
    n = p.n_loaded
    if any(p.wt.experts[:n]):
        if p.gpus_fit(replace(s, n_cpu_moe=n)):
            lo, hi = 0, n  # smallest n_cpu_moe whose GPU share fits
            while lo < hi:
                m = (lo + hi) // 2
                if p.gpus_fit(replace(s, n_cpu_moe=m)):
                    hi = m
                else:
                    lo = m + 1
            r = replace(s, n_cpu_moe=hi)
            return r if p.fits(r) else None
        s = replace(s, n_cpu_moe=n)
    lo, hi = 0, p.full_ngl  # largest -ngl whose GPU share fits (0 always does)
    while lo < hi:
        m = (lo + hi + 1) // 2
        if p.gpus_fit(replace(s, ngl=m)):
            lo = m
        else:
            hi = m - 1
    r = replace(s, ngl=lo)
    return r if p.fits(r) else None


def _offload_reasons(p: _Planner, r: _Setup, slots: int, kv0: str, want: int) -> list[Message]:
    out = []
    if r.slots < slots:
        out.append(msg("One slot instead of {slots}: more would not fit.", slots=slots))
    if r.kv_type != kv0:
        out.append(msg("The KV cache is stored as {kv} instead of {kv0} to fit in memory.", kv=r.kv_type, kv0=kv0))
    if r.ctx < want:
        out.append(msg("The context is {ctx} instead of {want}: that is what fits in {where}.",
                       ctx=human_ctx(r.ctx), want=human_ctx(want), where=msg("memory")))
    blocks = p.n_loaded
    if r.ngl >= p.full_ngl and r.n_cpu_ffn:
        out.append(_ffn_reason(p, r))
    elif r.ngl >= p.full_ngl and r.n_cpu_moe:
        out.append(msg("The experts of {n} of {blocks} layers stay in RAM (the model does not fit on the GPU even "
                       "with the smallest context); the rest runs on the GPU.", n=r.n_cpu_moe, blocks=blocks))
    elif r.ngl == 0:
        out.append(msg("The model runs on the CPU: not even one layer fits on the GPU next to the context."))
    else:
        on_gpu = sum(1 for i in p.layer_devices(r.ngl)[:blocks] if i >= 0)
        out.append(msg("{on_gpu} of {blocks} layers run on the GPU and the rest on the CPU (slower): the model does "
                       "not fit on the GPU even with the smallest context.", on_gpu=on_gpu, blocks=blocks))
        if r.n_cpu_moe:
            out.append(msg("The experts of {n} layers stay in RAM.", n=r.n_cpu_moe))
    return out


def _ffn_reason(p: _Planner, r: _Setup) -> Message:
    blocks = p.shape.n_layer
    lays = p.layouts.get((r.slots, r.kv_type, r.ctx), [])
    other = next((lay for lay in lays if lay.name == ffn_offload.LAYERS), None)
    chosen = next((lay for lay in lays if lay.name == ffn_offload.FFN), None)
    if other is None or chosen is None:
        return msg("Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of "
                   "{blocks} layers on the CPU (slower): the model does not fit on the GPU even with the smallest "
                   "context.", n=r.n_cpu_ffn, blocks=blocks)
    return msg("Attention and the KV cache of every layer run on the GPU, the feed-forward weights of {n} of {blocks} "
               "layers on the CPU (slower): the model does not fit on the GPU even with the smallest context. Each "
               "token reads {ffn} from RAM this way, against {layers} with whole layers on the CPU.",
               n=r.n_cpu_ffn, blocks=blocks, ffn=human_bytes(chosen.cpu_read), layers=human_bytes(other.cpu_read))
