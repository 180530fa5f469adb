"""Gemma 4's MTP assistant's compute buffer: its worst-case graph rebuilt as the pinned engine
builds it (src/models/gemma4-assistant.cpp, llm_graph_context in src/llama-graph.cpp) and
replayed through ggml-alloc (ggml_sim).

Why a replay and not the generic MTP phases (mtp_head.mtp_context): the assistant is a small
model (1024 wide in the corpus) fed by a wide one, and where its input phase puts things
decides its peak. The graph starts with what the MTP heads do not have: the target's hidden
state `inp_h` (the target's width per token, an input), the target's token embedding looked
up at that width and scaled in place, and the two concatenated (2 x the target's width)
before `nextn_proj_pre` brings them to its own width. The inputs are placed first, in the
order the graph reaches them (ggml-alloc: every leaf before the nodes): `inp_h`, then the
two attention masks (the target's cells, full and sliding window, f16), which stay until
the last block's attention. Once the input phase is freed, `inp_h`'s place below the masks
is the only hole under them, and the blocks' FFN (gate, up and their GEGLU, three FFN-wide
rows per token) does not fit in it: at the pinned engine's worst case (the prompt ubatch
against every cell, one output row) the corpus assistant peaks in block 0's FFN with the
block's residual in `inp_h`'s old place, the hole left beside it, the masks, then gate, up
and GEGLU stacked past them (35.00 MiB at 4096 cells, 3.5 MiB of it hole). The assistant
has no K/V of its own (it reads the target's cache: no K/V projections, no cache writes),
so its KV shape says nothing about its masks or heads, and its blocks mix head sizes (256
windowed, 512 on the full-attention block).

What decides the sizes: the assistant's width, heads and head size per block, FFN width per
block, which blocks slide, the target's width (`embedding_length_out`) and vocabulary; the
target's cells (full, window) and the ubatch; with a quantized KV cache the target's
Hadamard rotation (llama-kv-cache.cpp `attn_rot_k`/`attn_rot_v`) adds a rotated copy of the
queries and of the attention output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from draftwise.core.gguf import reader as gguf
from draftwise.core.planning.ggml_sim import F16, F32, I32, Graph, Tensor, peak_bytes

ARCH = "gemma4-assistant"
_UNQUANTIZED_KV = frozenset({"f32", "f16", "bf16"})
_ROT_MIN = 64  # llama-kv-cache.cpp: the smallest Hadamard rotation


@dataclass(frozen=True)
class AssistantDims:
    """What the assistant graph's tensor sizes depend on."""

    n_embd: int
    n_embd_backbone: int  # the target's width (embedding_length_out)
    n_vocab: int
    n_head: tuple[int, ...]  # per block
    head_dim: tuple[int, ...]  # per block: key_length, or key_length_swa on windowed blocks
    ff: tuple[int, ...]  # per block
    swa: tuple[bool, ...]  # per block

    @property
    def n_layer(self) -> int:
        return len(self.ff)


def _per_layer(v: gguf.PerLayer, n: int) -> tuple[int, ...]:
    if isinstance(v, list):
        vals = [int(x) for x in v[:n]]
        return tuple(vals + [vals[-1] if vals else 0] * (n - len(vals)))
    return (int(v or 0),) * n


def dims_of(info: gguf.ModelInfo, kv: Mapping[str, Any]) -> AssistantDims | None:
    """The assistant's dimensions from its header (`kv`: the keys ModelInfo does not keep);
    None for any other architecture. Which blocks slide is the file's pattern (the loader
    reads `sliding_window_pattern` as an array, load_arch_hparams)."""
    if info.architecture != ARCH or not info.block_count:
        return None
    n = info.block_count
    hk = info.key_length or 0
    hk_swa = int(kv.get(f"{ARCH}.attention.key_length_swa") or hk)
    pattern = info.sliding_window_pattern if isinstance(info.sliding_window_pattern, list) else []
    flags = tuple(bool(s) for s in pattern[:n]) + (False,) * max(0, n - len(pattern))
    return AssistantDims(
        n_embd=info.embedding_length or 0, n_embd_backbone=info.embedding_length_out or 0,
        n_vocab=info.tokenizer.vocab_size or 0, n_head=_per_layer(info.head_count, n),
        head_dim=tuple(hk_swa if s else hk for s in flags), ff=_per_layer(info.feed_forward_length, n), swa=flags,
    )  # fmt: skip


def read_dims(info: gguf.ModelInfo) -> AssistantDims | None:
    """`dims_of` with the header read from the file (None for another architecture)."""
    if info.architecture != ARCH:
        return None
    try:
        kv = gguf.read_header(info.path).kv
    except (OSError, gguf.GGUFError):
        kv = {}
    return dims_of(info, kv)


def _rotation(head_dim: int) -> int:
    """n_rot_k of a cache whose blocks all have `head_dim` (llama_kv_cache's constructor:
    64, doubled while the head size stays a multiple of twice it)."""
    n = _ROT_MIN
    while head_dim % (2 * n) == 0:
        n *= 2
    return n


class _AssistantGraphBuilder:
    def __init__(self, d: AssistantDims, n_tokens: int, n_kv: int, n_kv_swa: int, n_outputs: int,
                 kv_types: tuple[str, str]) -> None:  # fmt: skip
        self.g, self.d, self.T = Graph(), d, n_tokens
        self.n_outputs = n_outputs
        self.n_kv = {False: n_kv, True: n_kv_swa}
        # The target's caches rotate when quantized and its head size (the full blocks')
        # is a multiple of 64: K by the size its blocks' heads allow, V by 64.
        full = next((h for h, s in zip(d.head_dim, d.swa, strict=True) if not s), d.head_dim[-1])
        sliding = next((h for h, s in zip(d.head_dim, d.swa, strict=True) if s), full)
        rotates = full % _ROT_MIN == 0
        k_quant, v_quant = (t not in _UNQUANTIZED_KV for t in kv_types)
        self.rot_k = {False: _rotation(full), True: _rotation(sliding)} if k_quant and rotates else {}
        self.rot_v = {False: _ROT_MIN, True: _ROT_MIN} if v_quant and rotates else {}

    def norm(self, x: Tensor, w: Tensor) -> Tensor:  # build_norm, LLM_NORM_RMS with a weight
        return self.g.same("MUL", self.g.same("RMS_NORM", x), w)

    def mm(self, w_ne: tuple[int, ...], x: Tensor) -> Tensor:
        return self.g.mul_mat(self.g.weight(*w_ne), x)

    def hadamard(self, cur: Tensor, rot: Tensor) -> Tensor:  # llama-impl.h llama_mul_mat_hadamard
        g, n = self.g, rot.ne[0]
        elems = cur.ne[0] * cur.ne[1] * cur.ne[2] * cur.ne[3]
        res = g.reshape(cur, n, elems // n)  # contiguous here: rope output, attention output
        return g.reshape(g.mul_mat(rot, res), *cur.ne)

    def build(self) -> Graph:
        g, d, T = self.g, self.d, self.T
        e, eb = d.n_embd, d.n_embd_backbone
        inp_tokens = g.new(I32, T, name="inp_tokens")
        inp_h = g.new(F32, eb, T, name="inp_h")
        # The target's token embedding, scaled, beside its hidden state.
        x = g.same("SCALE", g.get_rows(g.weight(eb, d.n_vocab), inp_tokens), name="inp_embd_target")
        xh = g.concat(x, inp_h, 0, name="inp_xh")
        cur = self.mm((2 * eb, e), xh)
        # build_attn_inp_kv_iswa: the masks (the K/V row indices are never read: no K/V is
        # written), the rotations of a quantized cache; build_inp_pos, build_inp_out_ids.
        masks = {swa: g.new(F16, self.n_kv[swa], T, name=f"kq_mask{'_swa' if swa else ''}") for swa in (False, True)}
        k_rot = {swa: g.new(F32, n, n) for swa, n in self.rot_k.items()}
        v_rot = {swa: g.new(F32, n, n) for swa, n in self.rot_v.items()}
        inp_pos = g.new(I32, T, name="inp_pos")
        out_ids = g.new(I32, self.n_outputs, name="out_ids")
        inp = cur
        for il in range(d.n_layer):
            swa = d.swa[il]
            hd, nh = d.head_dim[il], d.n_head[il]
            cur = self.norm(inp, g.weight(e))
            q = g.reshape(self.mm((e, hd * nh), cur), hd, nh, T)
            q = self.norm(q, g.weight(hd))
            rope_src = (inp_pos,) if swa else (inp_pos, g.weight(hd // 2))  # freq factors on full blocks
            q = g.same("ROPE", q, *rope_src)
            cur = self.attention(q, hd, nh, masks[swa], k_rot.get(swa), v_rot.get(swa), swa)
            if il == d.n_layer - 1:
                cur = g.get_rows(cur, out_ids)
                inp = g.get_rows(inp, out_ids)
            cur = self.norm(cur, g.weight(e))
            attn_out = g.same("ADD", cur, inp)
            cur = self.norm(attn_out, g.weight(e))
            # build_ffn: GELU, parallel gate -> ggml_geglu_split(gate, up), then down
            up = self.mm((e, d.ff[il]), cur)
            gate = self.mm((e, d.ff[il]), cur)
            cur = self.mm((d.ff[il], e), g.same("GLU", gate, up))
            cur = self.norm(cur, g.weight(e))
            cur = g.same("ADD", cur, attn_out)
            inp = g.same("MUL", cur, g.weight(1), name=f"out_scaled-{il}")
        cur = self.norm(inp, g.weight(e))
        logits = self.mm((e, d.n_vocab), cur)
        h_next = self.mm((e, eb), cur)
        logits.output = h_next.output = True  # llm_graph_result::set_outputs
        g.expand(logits)
        g.expand(h_next)
        return g

    def attention(self, q: Tensor, hd: int, nh: int, mask: Tensor, k_rot: Tensor | None, v_rot: Tensor | None,
                  swa: bool) -> Tensor:  # fmt: skip
        """build_attn (the iswa input, no K/V of its own) and build_attn_mha with flash attention."""
        g, T = self.g, self.T
        if k_rot is not None:
            q = self.hadamard(q, k_rot)
        g.expand(q)
        n_kv = self.n_kv[swa]
        # The target's cache (external): its views as get_k/get_v make them; their head
        # count does not change any size here, one head stands for them.
        cache = g.new(F16, hd, n_kv, external=True)
        kv_ne, kv_nb = (hd, 1, n_kv, 1), (hd * 2, hd * 2, hd * 2 * n_kv)
        k = g.permute(g.view(cache, kv_ne, kv_nb), 0, 2, 1, 3)
        v = g.permute(g.view(cache, kv_ne, kv_nb), 0, 2, 1, 3)
        qv = g.permute(g.view(q, (hd, nh, T, 1), (q.nb[1], q.nb[2], q.nb[2] * T)), 0, 2, 1, 3)
        out = g.flash_attn_ext(qv, k, v, mask)
        out = g.reshape(out, out.ne[0] * out.ne[1], out.ne[2] * out.ne[3])
        g.expand(out)
        if v_rot is not None:
            out = self.hadamard(out, v_rot)
        return self.mm((hd * nh, self.d.n_embd), out)


@lru_cache(maxsize=64)
def compute_bytes(d: AssistantDims, n_tokens: int, n_kv: int, n_kv_swa: int, n_seq: int,
                  kv_types: tuple[str, str] = ("f16", "f16")) -> int:  # fmt: skip
    """The CPU compute buffer the assistant's context reserves (llama_context::sched_reserve,
    one output row per sequence: common_speculative's n_outputs_max): the prompt graph
    (`n_tokens`, the ubatch, against every cell of the target's caches) and the generation
    graph (one token per sequence), the larger of the two. `kv_types`: the cache's K and V."""
    big = _AssistantGraphBuilder(d, n_tokens, n_kv, n_kv_swa, min(n_seq, n_tokens), kv_types).build()
    one = _AssistantGraphBuilder(d, n_seq, n_kv, n_kv_swa, n_seq, kv_types).build()
    return max(peak_bytes(big), peak_bytes(one))
