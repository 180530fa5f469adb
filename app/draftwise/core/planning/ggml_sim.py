"""ggml's graph allocator, replayed: the compute buffer of a graph written out node by node.

The compute buffer llama-server prints (`sched_reserve: CPU compute buffer size`) is the
high-water mark of ggml-alloc over the worst-case graph. For most architectures the planner
uses a fitted width per token (compute_buffer.compute_width). Where the peak depends on where
ggml-alloc puts each tensor (holes between the live ones decide it, so it is not monotonic in
the block count: Gemma 3n), the graph is rebuilt here the way the engine builds it and the
allocator is run over it, as the pinned engine's ggml/src/ggml-alloc.c does:

- the graph: `ggml_build_forward_expand` visits sources depth first, left to right; tensors
  without an op are leafs, the rest nodes in visit order (ggml.c ggml_visit_parents_graph);
- the allocator: every leaf first, then per node its sources and itself; a node whose op may
  work in place (`ggml_op_can_inplace`) takes the memory of its first own, non-output source
  of the same layout that has no other consumer left and no views; a tensor is freed when its
  last consumer ran (views hand the count on to the tensor they view; outputs never free);
- the buffer (`ggml_dyn_tallocr`): free blocks sorted by offset, the best-fitting block that
  is not the last one, else the last (end) block, which grows the buffer; freed bytes merge
  with their neighbours; sizes rounded up to the buffer's alignment (32 on the CPU).

Only sizes, shapes and strides are modelled: the values never exist. tests/test_ggml_sim.py
checks the allocator on cases traced from the engine's own allocator.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

F32, F16, I32, I64 = "f32", "f16", "i32", "i64"
TYPE_SIZE = {F32: 4, F16: 2, I32: 4, I64: 8}
CPU_ALIGNMENT = 32  # ggml-impl.h TENSOR_ALIGNMENT, the CPU buffer type's alignment

# ggml-alloc.c ggml_op_can_inplace
INPLACE_OPS = frozenset({
    "FILL", "SCALE", "DIAG_MASK_ZERO", "DIAG_MASK_INF", "ADD", "ADD_ID", "ADD1", "SUB", "MUL", "DIV", "SQR",
    "SQRT", "LOG", "UNARY", "ROPE", "ROPE_BACK", "SILU_BACK", "RMS_NORM", "RMS_NORM_BACK", "CLAMP", "SOFT_MAX",
    "SOFT_MAX_BACK",
})  # fmt: skip


@dataclass(eq=False)
class Tensor:
    """A ggml tensor's metadata: type, ne, nb, its op and sources, and what it views."""

    type: str
    ne: tuple[int, int, int, int]
    nb: tuple[int, int, int, int]
    op: str = "NONE"
    src: tuple[Tensor, ...] = ()
    view_src: Tensor | None = None
    external: bool = False  # has a buffer of its own (weights, the KV cache)
    output: bool = False
    name: str = ""

    @property
    def nbytes(self) -> int:
        """ggml_nbytes for the unquantized types the graph's activations use."""
        if any(n == 0 for n in self.ne):
            return 0
        return TYPE_SIZE[self.type] + sum((n - 1) * b for n, b in zip(self.ne, self.nb, strict=True))

    @property
    def is_view(self) -> bool:
        return self.view_src is not None

    def layout(self) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
        return self.type, self.ne, self.nb


def _contiguous(type_: str, ne: Sequence[int]) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    full = tuple(ne) + (1,) * (4 - len(ne))
    nb = [TYPE_SIZE[type_]]
    for i in range(1, 4):
        nb.append(nb[-1] * full[i - 1])
    return full, tuple(nb)  # type: ignore[return-value]


class Graph:
    """A ggml context and graph in one: ops create tensors, `expand` adds them to the graph."""

    def __init__(self) -> None:
        self.nodes: list[Tensor] = []
        self.leafs: list[Tensor] = []
        self._seen: set[int] = set()

    # -------------------------------------------------------------- tensors
    def new(self, type_: str, *ne: int, name: str = "", external: bool = False) -> Tensor:
        full, nb = _contiguous(type_, ne)
        return Tensor(type_, full, nb, name=name, external=external)

    def weight(self, *ne: int, name: str = "") -> Tensor:
        """A model tensor: in the weights' buffer, never in the compute buffer."""
        return self.new(F32, *ne, name=name, external=True)

    def _op(self, op: str, type_: str, ne: Sequence[int], *src: Tensor, name: str = "") -> Tensor:
        full, nb = _contiguous(type_, ne)
        return Tensor(type_, full, nb, op=op, src=tuple(src), name=name)

    def _view(self, op: str, a: Tensor, ne: Sequence[int], nb: Sequence[int], *src: Tensor) -> Tensor:
        full = tuple(ne) + (1,) * (4 - len(ne))
        strides = list(nb)
        while len(strides) < 4:  # ggml_view_Nd: the strides past the last given one
            strides.append(strides[-1] * full[len(strides) - 1])
        return Tensor(a.type, full, tuple(strides), op=op, src=src or (a,),  # type: ignore[arg-type]
                      view_src=a.view_src or a)

    # -------------------------------------------------------------- ops (ggml.c shapes)
    def same(self, op: str, a: Tensor, *rest: Tensor, name: str = "") -> Tensor:
        """Element-wise ops whose result is ggml_dup_tensor(a): add, mul, sub, div, scale, norms,
        unary ops, rope, dup, cont."""
        return self._op(op, a.type, a.ne, a, *rest, name=name)

    def mul_mat(self, w: Tensor, b: Tensor, name: str = "") -> Tensor:
        return self._op("MUL_MAT", F32, (w.ne[1], b.ne[1], b.ne[2], b.ne[3]), w, b, name=name)

    def get_rows(self, a: Tensor, ids: Tensor, name: str = "") -> Tensor:
        type_ = I32 if a.type == I32 else F32
        return self._op("GET_ROWS", type_, (a.ne[0], ids.ne[0], ids.ne[1], ids.ne[2]), a, ids, name=name)

    def rows_reduce(self, op: str, a: Tensor, name: str = "") -> Tensor:
        """sum_rows, mean: one value per row."""
        return self._op(op, a.type, (1, a.ne[1], a.ne[2], a.ne[3]), a, name=name)

    def repeat(self, a: Tensor, *ne: int, name: str = "") -> Tensor:
        return self._op("REPEAT", a.type, ne, a, name=name)

    def concat(self, a: Tensor, b: Tensor, dim: int, name: str = "") -> Tensor:
        ne = list(a.ne)
        ne[dim] += b.ne[dim]
        return self._op("CONCAT", a.type, ne, a, b, name=name)

    def cont(self, a: Tensor, *ne: int, name: str = "") -> Tensor:
        return self._op("CONT", a.type, ne or a.ne, a, name=name)

    def flash_attn_ext(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor, name: str = "") -> Tensor:
        return self._op("FLASH_ATTN_EXT", F32, (v.ne[0], q.ne[2], q.ne[1], q.ne[3]), q, k, v, mask, name=name)

    def set_rows(self, dst: Tensor, rows: Tensor, idxs: Tensor) -> Tensor:
        """A view of `dst` (the cache), sources in ggml's order (rows, idxs, dst)."""
        return self._view("SET_ROWS", dst, dst.ne, dst.nb, rows, idxs, dst)

    def view(self, a: Tensor, ne: Sequence[int], nb: Sequence[int]) -> Tensor:
        """ggml_view_Nd: `nb` are nb[1..]; nb[0] is the element size."""
        return self._view("VIEW", a, ne, (TYPE_SIZE[a.type], *nb))

    def reshape(self, a: Tensor, *ne: int) -> Tensor:
        full, nb = _contiguous(a.type, ne)
        return self._view("RESHAPE", a, full, nb)

    def permute(self, a: Tensor, *axes: int) -> Tensor:
        ne, nb = [0] * 4, [0] * 4
        for i, ax in enumerate(axes):
            ne[ax], nb[ax] = a.ne[i], a.nb[i]
        return self._view("PERMUTE", a, ne, nb)

    def transpose(self, a: Tensor) -> Tensor:
        return self.permute(a, 1, 0, 2, 3)

    # -------------------------------------------------------------- graph
    def expand(self, t: Tensor) -> None:
        """ggml_build_forward_expand: sources first, depth first, left to right."""
        stack: list[tuple[Tensor, int]] = [(t, 0)]
        while stack:
            node, i = stack.pop()
            if i == 0:
                if id(node) in self._seen:
                    continue
                self._seen.add(id(node))
            if i < len(node.src):
                stack.append((node, i + 1))
                if id(node.src[i]) not in self._seen:
                    stack.append((node.src[i], 0))
                continue
            (self.leafs if node.op == "NONE" else self.nodes).append(node)


# ------------------------------------------------------------------ the allocator
@dataclass
class _Buffer:
    """ggml_dyn_tallocr with one chunk (the CPU buffer type has no size limit)."""

    alignment: int
    free: list[list[int]] = field(default_factory=lambda: [[0, 1 << 62]])  # [offset, size], by offset
    max_size: int = 0

    def _align(self, n: int) -> int:
        return -(-n // self.alignment) * self.alignment

    def alloc(self, size: int) -> int:
        size = self._align(size)
        best, best_size = -1, None
        for i, (_off, sz) in enumerate(self.free[:-1]):
            if sz >= size and (best_size is None or sz <= best_size):
                best, best_size = i, sz
        if best < 0:
            best = len(self.free) - 1  # the last block: virtually endless
        block = self.free[best]
        off = block[0]
        block[0] += size
        block[1] -= size
        if block[1] == 0:
            del self.free[best]
        self.max_size = max(self.max_size, off + size)
        return off

    def release(self, off: int, size: int) -> None:
        size = self._align(size)
        for i, block in enumerate(self.free):
            if block[0] + block[1] == off:
                block[1] += size
                if i + 1 < len(self.free) and block[0] + block[1] == self.free[i + 1][0]:
                    block[1] += self.free[i + 1][1]
                    del self.free[i + 1]
                return
            if off + size == block[0]:
                block[0] = off
                block[1] += size
                if i > 0 and self.free[i - 1][0] + self.free[i - 1][1] == block[0]:
                    self.free[i - 1][1] += block[1]
                    del self.free[i]
                return
        pos = next((i for i, b in enumerate(self.free) if b[0] >= off), len(self.free))
        self.free.insert(pos, [off, size])


def peak_bytes(graph: Graph, alignment: int = CPU_ALIGNMENT) -> int:
    """The compute buffer ggml-alloc reserves for `graph` (ggml_gallocr_alloc_graph_impl)."""
    buf = _Buffer(alignment)
    children: dict[int, int] = {}
    views: dict[int, int] = {}
    addr: dict[int, int] = {}  # own (allocated here) tensors -> offset

    def own(t: Tensor) -> bool:
        return id(t) in addr

    def allocate(t: Tensor) -> None:
        if t.external or t.is_view or own(t):
            return
        if t.op in INPLACE_OPS:
            for p in t.src:
                if own(p) and not p.output and p.layout() == t.layout() \
                        and children.get(id(p), 0) == 1 and views.get(id(p), 0) == 0:  # fmt: skip
                    addr[id(t)] = addr.pop(id(p))  # the parent is not freed: its memory moved on
                    return
        addr[id(t)] = buf.alloc(t.nbytes)

    def free(t: Tensor) -> None:
        if t.output or not own(t):
            return
        buf.release(addr.pop(id(t)), t.nbytes)

    for leaf in graph.leafs:
        allocate(leaf)
    for node in graph.nodes:
        if node.is_view:
            views[id(node.view_src)] = views.get(id(node.view_src), 0) + 1
        for s in node.src:
            children[id(s)] = children.get(id(s), 0) + 1
    for node in graph.nodes:
        for s in node.src:
            allocate(s)
        allocate(node)
        for s in node.src:
            children[id(s)] -= 1
            if children[id(s)] or views.get(id(s), 0):
                continue
            if s.is_view:
                vs = s.view_src
                assert vs is not None
                views[id(vs)] -= 1
                if not views[id(vs)] and not children.get(id(vs), 0):
                    free(vs)
            else:
                free(s)
    return buf.max_size


def reserve(graphs: Iterable[Graph], alignment: int = CPU_ALIGNMENT) -> int:
    """ggml_gallocr_reserve keeps the largest of the graphs it was given."""
    return max((peak_bytes(g, alignment) for g in graphs), default=0)


# ------------------------------------------------------------------ a Vulkan split, replayed
# ggml-vulkan's buffer alignment on the measured device (lavapipe: the 4-byte out_ids took 16).
VULKAN_ALIGNMENT = 16


def vulkan_block_peak(order: str, *, n_embd: int, q: int, k: int, v: int, ff: int, ubatch: int,
                      masks: Sequence[int], n_layer: int, outs: int = 1) -> int:  # fmt: skip
    """The compute buffer of the one Vulkan device that runs a dense attention model's whole
    graph, replayed from the engine's allocation trace (ggml-alloc.c with AT_PRINTF; the
    buffer's own allocations, in order, each block's alike).

    The split starts (ggml_backend_sched_split_graph: an input of a split from another backend
    gets a copy, allocated at the split's start in the order the graph uses them) with copies of
    the CPU's embedding rows: the mixed path's input, its token rows, their slots, the token
    rows the batch uses (`build_inp_embd`: all three branches stay in the graph), Gemma's row
    scales, the positions, per KV cache (the first block's first) its K and V row indexes and
    f16 mask, the output ids. The raw-embeddings input `inp_embd` has no consumer in a token
    batch and is never copied (on the CPU it lies under the whole graph: one n_embd per token
    more there). The mixed path's copy (`ggml_dup`) stays live to the end. Then the blocks in
    ggml_vk_graph_optimize's order (`order`): "qvk" (llama, qwen2, qwen3: the Q, V and K
    projections together, the roped or normed Q, then K) or "gemma3" (Q, K, V, the scaled
    embeddings in place). Element-wise ops, norms and ropes that work in place are left out:
    they move nothing. The last block, whose FFN runs on the output rows only, is not played.
    Widths are per token (q: heads x key length, k/v: KV heads x key/value length; the
    attention's output is heads x value length); sizes in bytes."""
    T = ubatch
    e, ffb = n_embd * T * 4, ff * T * 4
    qb, kb, vb = q * T * 4, k * T * 4, v * T * 4
    fa = (q * v // k if k else q) * T * 4
    buf = _Buffer(VULKAN_ALIGNMENT)
    at: dict[str, tuple[int, int]] = {}

    def alloc(name: str, size: int) -> None:
        at[name] = (buf.alloc(size), size)

    def free(name: str) -> None:
        buf.release(*at.pop(name))

    gemma = order == "gemma3"
    alloc("mixed", e)
    alloc("mixed_rows", e)
    alloc("mixed_slots", T * 8)
    alloc("embd", e)
    if gemma:
        alloc("scale_rows", T * 4)
    alloc("pos", T * 4)
    for i, mask in enumerate(masks):
        alloc(f"k_idxs{i}", T * 8)
        alloc(f"v_idxs{i}", T * 8)
        alloc(f"mask{i}", mask)
    alloc("out_ids", outs * 4)
    alloc("mixed_dup", e)
    free("mixed")
    if gemma:
        free("scale_rows")
    res = "embd"
    for il in range(n_layer - 1):
        if gemma and il == 0:
            free("mixed_rows")
            free("mixed_slots")
        alloc("attn_norm", e)
        if not gemma and il == 0:
            free("mixed_rows")
            free("mixed_slots")
        alloc("Q", qb)
        alloc("K" if gemma else "V", kb if gemma else vb)
        alloc("V" if gemma else "K", vb if gemma else kb)
        free("attn_norm")
        alloc("Qr", qb)
        free("Q")
        if not gemma:
            free("V")
        alloc("Kr", kb)
        free("K")
        free("Kr")
        if gemma:
            free("V")
        alloc("fa", fa)
        free("Qr")
        alloc("ffn_inp", e)  # the attention output; the residual add works in place
        free("fa")
        free(res)
        alloc("ffn_norm", e)
        alloc("gate", ffb)
        alloc("up", ffb)
        free("ffn_norm")
        alloc("glu", ffb)
        free("gate")
        free("up")
        alloc("l_out", e)
        free("glu")
        free("ffn_inp")
        at["res"] = at.pop("l_out")
        res = "res"
    return buf.max_size
