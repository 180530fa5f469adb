"""The drafter the plan carries (an MTP head, a draft model, Gemma 4's MTP assistant; none
for n-gram drafting) and what keeping it would cost the target: context, KV precision,
slots or GPU layers, as the sentences said when an automatic drafter is left out or the
user's stays.
"""

from __future__ import annotations

from draftwise.core.engines import spec_types
from draftwise.core.gguf import reader as gguf
from draftwise.core.messages import Message, msg
from draftwise.core.planning import gemma4_assistant_graph, model_shape, weight_table
from draftwise.core.planning.fit_search import _Result
from draftwise.core.planning.placement import _Drafter, _Planner
from draftwise.core.readable import human_ctx
from draftwise.core.speculation.resolver import SpecDecision

# KV types from most to least precise, for "did the precision drop?".
_KV_RANK = {"f32": 0, "f16": 1, "bf16": 1, "q8_0": 2, "q5_1": 3, "q5_0": 3, "q4_1": 4,
            "iq4_nl": 4, "q4_0": 4}  # fmt: skip


def _drafter(spec: SpecDecision, model: gguf.ModelInfo, draft: gguf.ModelInfo | None,
             draft_shape: model_shape.Shape | None, draft_weights: weight_table.WeightTable | None) -> _Drafter | None:
    # One model drafter at most, alone or beside an n-gram type ("ngram-mod,draft-mtp").
    types = spec_types.split_types(spec.spec_type)
    st = next((t for t in types if t.startswith("draft-")), "")
    if st == "draft-mtp" and spec.draft is None:
        if not model.has_mtp_head:
            return None
        return _Drafter("mtp", msg("MTP head"))
    if st or spec.draft is not None:
        if draft is None and spec.draft is not None:
            try:
                draft = gguf.read_model(spec.draft)
            except (OSError, gguf.GGUFError):
                draft = None
        if draft is None:
            return None
        shape = draft_shape or model_shape.read_shape(draft)
        wt = draft_weights or weight_table.read_weight_table(draft)
        label = msg("MTP head") if st == "draft-mtp" else msg("draft model")
        return _Drafter("model", label, shape, wt, shares_kv=draft.sidecar_kind == "assistant",
                        assistant=gemma4_assistant_graph.read_dims(draft))
    return None  # ngram types and no speculation cost no memory worth planning



def _drafter_cost(p: _Planner, with_d: _Result, without: _Result, label: Message) -> tuple[Message, Message] | None:
    """What keeping the drafter would cost the target, as the sentences the UI shows:
    (the drafter dropped, the drafter kept because the user chose it)."""
    w, wo = with_d.setup, without.setup
    if wo is None:
        return None
    if w is None:
        return (msg("The {drafter} was left out: with it, the model would not fit at all.", drafter=label),
                msg("The {drafter} stays because you chose it, although the model would not fit at all.",
                    drafter=label))
    if w.ctx < wo.ctx:
        ctx0, ctx = human_ctx(wo.ctx), human_ctx(w.ctx)
        return (msg("The {drafter} was left out: with it, the context would shrink from {ctx0} to {ctx}.",
                    drafter=label, ctx0=ctx0, ctx=ctx),
                msg("The {drafter} stays because you chose it, although the context would shrink from {ctx0} "
                    "to {ctx}.", drafter=label, ctx0=ctx0, ctx=ctx))
    if _KV_RANK.get(w.kv_type, 9) > _KV_RANK.get(wo.kv_type, 9):
        return (msg("The {drafter} was left out: with it, the KV cache would drop from {kv0} to {kv}.",
                    drafter=label, kv0=wo.kv_type, kv=w.kv_type),
                msg("The {drafter} stays because you chose it, although the KV cache would drop from {kv0} "
                    "to {kv}.", drafter=label, kv0=wo.kv_type, kv=w.kv_type))
    if w.slots < wo.slots:
        return (msg("The {drafter} was left out: with it, only {slots} slot instead of {slots0} would fit.",
                    drafter=label, slots=w.slots, slots0=wo.slots),
                msg("The {drafter} stays because you chose it, although only {slots} slot instead of "
                    "{slots0} would fit.", drafter=label, slots=w.slots, slots0=wo.slots))
    if p.gpus and (min(w.ngl, p.n_loaded) < min(wo.ngl, p.n_loaded) or w.n_cpu_moe > wo.n_cpu_moe
                   or w.n_cpu_ffn > wo.n_cpu_ffn):
        return (msg("The {drafter} was left out: with it, part of the model would have to leave the GPU.",
                    drafter=label),
                msg("The {drafter} stays because you chose it, although part of the model would have to "
                    "leave the GPU.", drafter=label))
    return None
