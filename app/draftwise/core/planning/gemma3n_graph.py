"""Gemma 3n's compute buffer: its worst-case graph rebuilt as the pinned engine builds it
(src/models/gemma3n.cpp, llm_graph_context in src/llama-graph.cpp) and replayed through
ggml-alloc (ggml_sim).

What makes Gemma 3n's peak: the per-layer token embeddings are looked up for every block at
once before block 0 (`inp_per_layer_selected`, n_layer x 256 floats per token) and projected
inside block 0 (`project_per_layer_inputs`), the four AltUp streams are live through every
block (`predictions`, 4 x n_embd), LAuReL's output waits beside the FFN, and the first ten
blocks' activation-sparsity FFN holds a third FFN-wide tensor (`gaussian_topk`). Where these
land in the buffer (and which holes they leave) decides the peak, so it is replayed rather
than summed: E2B at a 4096 context peaks at 119.03 MiB with 100 MiB live.

The engine's constants for the architecture (llama-hparams.h, models.h): 4 AltUp streams,
the active one 0, LAuReL rank 64, 256 floats per layer and token of per-layer input, the
first 10 blocks sparse, KV in the first 20 blocks (`n_layer_kv_from_start`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from draftwise.core.planning.ggml_sim import F16, F32, I32, I64, Graph, Tensor, peak_bytes

N_ALTUP, I_ALTUP_ACT, LAUREL_RANK, N_EMBD_ALTUP = 4, 0, 64, 256
N_LAYER_SPARSITY = 10
N_LAYER_KV_FROM_START = 20


@dataclass(frozen=True)
class Gemma3nDims:
    """What the graph's tensor sizes depend on."""

    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    ff: tuple[int, ...]  # per block
    swa: tuple[bool, ...]  # per block
    n_vocab: int

    @property
    def n_layer(self) -> int:
        return len(self.ff)


class _Builder:
    def __init__(self, d: Gemma3nDims, n_tokens: int, n_kv: int, n_kv_swa: int, n_outputs: int) -> None:
        self.g, self.d, self.T = Graph(), d, n_tokens
        self.n_kv, self.n_kv_swa, self.n_outputs = n_kv, n_kv_swa, n_outputs

    # llm_graph_context helpers
    def norm(self, x: Tensor, w: Tensor | None = None) -> Tensor:
        cur = self.g.same("RMS_NORM", x)
        return self.g.same("MUL", cur, w) if w is not None else cur

    def mm(self, w_ne: tuple[int, ...], x: Tensor) -> Tensor:
        return self.g.mul_mat(self.g.weight(*w_ne), x)

    def w(self, *ne: int) -> Tensor:
        return self.g.weight(*ne)

    def slice2d(self, x: Tensor, idx: int) -> Tensor:  # gemma3n_view_2d_slice
        return self.g.view(x, (x.ne[0], x.ne[1]), (x.nb[1],))

    def magnitude(self, x: Tensor) -> Tensor:  # calc_magnitude
        g = self.g
        return g.same("SQRT", g.rows_reduce("SUM_ROWS", g.same("SQR", x)))

    def build(self) -> Graph:
        g, d, T = self.g, self.d, self.T
        e, nl = d.n_embd, d.n_layer
        # build_inp_embd: the token rows, the raw embeddings and the mixed path, all in the graph
        # (ggml_build_forward_select), then the scale rows.
        tok_embd = self.w(e, d.n_vocab)
        inp_tokens = g.new(I32, T, name="inp_tokens")
        inps = [g.get_rows(tok_embd, inp_tokens), g.new(F32, e, T, name="inp_embd")]
        mixed_tokens, mixed_slots = g.new(I32, T), g.new(I64, T)
        mixed_embd = g.new(F32, e, T)
        inps.append(g.set_rows(g.same("DUP", mixed_embd), g.get_rows(tok_embd, mixed_tokens), mixed_slots))
        for t in inps:
            g.expand(t)
        inp_l = g.same("MUL", inps[0], g.new(F32, 1, T), name="inp_scaled")
        g.expand(inp_l)
        inp_pos = g.new(I32, T)
        masks = {False: g.new(F16, self.n_kv, T), True: g.new(F16, self.n_kv_swa, T)}
        idxs = {swa: (g.new(I64, T), g.new(I64, T)) for swa in (False, True)}
        # build_inp_per_layer, expanded before the blocks
        ple = g.get_rows(self.w(N_EMBD_ALTUP * nl, d.n_vocab), g.new(I32, T))
        inp_per_layer = g.same("SCALE", g.reshape(ple, N_EMBD_ALTUP, nl, T), name="inp_per_layer_selected")
        g.expand(inp_per_layer)
        inp_per_layer = self.project_per_layer_inputs(inp_l, inp_per_layer)
        # the other AltUp streams
        target = self.magnitude(inp_l)
        added = g.mul_mat(self.w(e, e, N_ALTUP - 1), g.repeat(inp_l, e, T, N_ALTUP - 1, 1))
        added = g.same("DIV", g.same("MUL", added, target), self.magnitude(added))
        cur = g.concat(inp_l, added, 2, name="inp_stacked")
        for il in range(nl):
            cur = self.block(il, cur, inp_per_layer, inp_pos, masks[d.swa[il]], idxs[d.swa[il]])
        # merge the streams, the head
        target = self.magnitude(self.slice2d(cur, I_ALTUP_ACT))
        alt = g.view(cur, (e, T, N_ALTUP - 1), (cur.nb[1], cur.nb[2]))
        unembd = g.mul_mat(self.w(e, e, N_ALTUP - 1), alt)
        unembd = g.same("DIV", g.same("MUL", unembd, target), self.magnitude(unembd))
        out = self.slice2d(cur, 0)
        for i in range(N_ALTUP - 1):
            out = g.same("ADD", out, self.slice2d(unembd, i))
        out = g.same("SCALE", out)
        out = g.get_rows(out, g.new(I32, self.n_outputs, name="out_ids"))
        embd = self.norm(out, self.w(e))
        embd.output = True  # res->t_embd
        logits = g.mul_mat(tok_embd, embd)
        logits = g.same("SCALE", g.same("UNARY", g.same("SCALE", logits)))  # final soft-capping
        logits.output = True
        g.expand(logits)
        return g

    def project_per_layer_inputs(self, inp_batch: Tensor, inp_per_layer: Tensor) -> Tensor:
        g, nl = self.g, self.d.n_layer
        proj = g.same("SCALE", self.mm((self.d.n_embd, N_EMBD_ALTUP * nl), inp_batch))
        proj = self.norm(g.reshape(proj, N_EMBD_ALTUP, nl, self.T), self.w(N_EMBD_ALTUP))
        out = g.same("SCALE", g.same("ADD", proj, inp_per_layer))
        return g.cont(g.permute(out, 0, 2, 1, 3))

    def router(self, x: Tensor) -> Tensor:  # altup_compute_router_modalities
        g = self.g
        r = g.same("SCALE", self.norm(x, self.w(self.d.n_embd)))
        return g.same("UNARY", self.mm((self.d.n_embd, N_ALTUP), r))

    def block(self, il: int, inp: Tensor, inp_per_layer: Tensor, inp_pos: Tensor, mask: Tensor,
              idxs: tuple[Tensor, Tensor]) -> Tensor:  # fmt: skip
        g, d, T, e = self.g, self.d, self.T, self.d.n_embd
        # altup_predict
        modalities = self.router(self.slice2d(inp, I_ALTUP_ACT))
        coefs = g.reshape(self.mm((N_ALTUP, N_ALTUP * N_ALTUP), modalities), N_ALTUP, N_ALTUP, T)
        permuted = g.cont(g.permute(inp, 1, 2, 0, 3))
        pred = g.cont(g.permute(g.mul_mat(permuted, coefs), 0, 2, 1, 3))
        pred = g.same("ADD", pred, inp, name=f"predictions-{il}")
        active = self.slice2d(pred, I_ALTUP_ACT)
        cur = self.norm(active, self.w(e))
        # laurel (visited after the attention: its output is first needed there)
        laurel = self.norm(self.mm((LAUREL_RANK, e), self.mm((e, LAUREL_RANK), cur)), self.w(e))
        laurel = g.same("ADD", laurel, cur)
        attn = self.attention(il, cur, inp_pos, mask, idxs)
        attn = g.same("ADD", self.norm(attn, self.w(e)), active)
        attn_laurel = g.same("SCALE", g.same("ADD", attn, laurel), name=f"attn_laurel-{il}")
        # the FFN, the first blocks with activation sparsity (gaussian_topk)
        x = self.norm(attn_laurel, self.w(e))
        ff = d.ff[il]
        up, gate = self.mm((e, ff), x), self.mm((e, ff), x)
        if il < N_LAYER_SPARSITY:
            mean = g.rows_reduce("MEAN", gate)
            var = g.rows_reduce("SUM_ROWS", g.same("SQR", g.same("SUB", gate, mean)))
            std = g.same("SQRT", g.same("SCALE", var))
            cutoff = g.same("ADD", mean, g.same("SCALE", std))
            gate = g.same("UNARY", g.same("SUB", gate, cutoff))  # relu
        gate = g.same("UNARY", gate)  # gelu
        ffn = self.mm((ff, e), g.same("MUL", up, gate))
        ffn = g.same("ADD", self.norm(ffn, self.w(e)), attn_laurel)
        # altup_correct
        modalities = self.router(ffn)
        innovation = g.same("SUB", ffn, self.slice2d(pred, I_ALTUP_ACT))
        coefs = g.same("SCALE", self.mm((N_ALTUP, N_ALTUP), modalities))
        coefs = g.cont(g.transpose(coefs), 1, T, N_ALTUP)
        corrected = g.same("MUL", g.repeat(innovation, e, T, N_ALTUP, 1), coefs)
        corrected = g.same("ADD", corrected, pred)
        # the per-layer input of this block
        first = g.same("MUL", self.slice2d(corrected, I_ALTUP_ACT), self.w(e))
        first = g.same("UNARY", self.mm((e, N_EMBD_ALTUP), first))
        first = g.same("MUL", first, self.slice2d(inp_per_layer, il))
        first = self.norm(self.mm((N_EMBD_ALTUP, e), first), self.w(e))
        rest = g.view(corrected, (e, T, N_ALTUP - 1), (corrected.nb[1], corrected.nb[2]))
        return g.concat(self.slice2d(corrected, 0), g.same("ADD", rest, first), 2, name=f"l_out-{il}")

    def attention(self, il: int, cur: Tensor, inp_pos: Tensor, mask: Tensor, idxs: tuple[Tensor, Tensor]) -> Tensor:
        g, d, T = self.g, self.d, self.T
        hd, nh, nkv = d.head_dim, d.n_head, d.n_head_kv
        q = g.reshape(self.mm((d.n_embd, hd * nh), cur), hd, nh, T)
        q = g.same("ROPE", self.norm(q, self.w(hd)), inp_pos)
        g.expand(q)
        cache_k = g.new(F16, hd * nkv, self.n_kv_swa if d.swa[il] else self.n_kv, external=True)
        cache_v = g.new(F16, hd * nkv, cache_k.ne[1], external=True)
        if il < N_LAYER_KV_FROM_START:
            k = g.reshape(self.mm((d.n_embd, hd * nkv), cur), hd, nkv, T)
            k = g.same("ROPE", self.norm(k, self.w(hd)), inp_pos)
            v = g.same("RMS_NORM", g.reshape(self.mm((d.n_embd, hd * nkv), cur), hd, nkv, T))
            g.expand(k)
            g.expand(v)
            g.expand(g.set_rows(cache_k, g.view(k, (hd * nkv, T), (k.nb[2],)), idxs[0]))
            g.expand(g.set_rows(cache_v, g.view(v, (hd * nkv, T), (v.nb[2],)), idxs[1]))
        # build_attn_mha, flash attention (the CPU's `auto`)
        qv = g.permute(g.view(q, (hd, nh, T, 1), (q.nb[1], q.nb[2], q.nb[2] * T)), 0, 2, 1, 3)
        kv_ne = (hd, nkv, cache_k.ne[1], 1)
        kv_nb = (hd * 2, hd * nkv * 2, hd * nkv * 2 * cache_k.ne[1])
        k_view = g.permute(g.view(cache_k, kv_ne, kv_nb), 0, 2, 1, 3)
        v_view = g.permute(g.view(cache_v, kv_ne, kv_nb), 0, 2, 1, 3)
        out = g.flash_attn_ext(qv, k_view, v_view, mask)
        out = g.reshape(out, out.ne[0] * out.ne[1], out.ne[2] * out.ne[3])
        return self.mm((hd * nh, d.n_embd), out)


@lru_cache(maxsize=64)
def compute_bytes(d: Gemma3nDims, n_tokens: int, n_kv: int, n_kv_swa: int, n_outputs: int) -> int:
    """The CPU compute buffer of the worst-case graph: the prompt batch (`n_tokens`, the
    ubatch) against every cell; the one-token graph the engine also reserves is smaller."""
    big = _Builder(d, n_tokens, n_kv, n_kv_swa, min(n_outputs, n_tokens)).build()
    one = _Builder(d, 1, n_kv, n_kv_swa, 1).build()
    return max(peak_bytes(big), peak_bytes(one))
