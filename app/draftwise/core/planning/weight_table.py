"""What the weights take: a model's resident weight bytes, grouped the way llama-server places
them on devices (per block, routed experts apart, the input embedding, the head, the MTP
blocks).

Pure arithmetic on the GGUF header, written against the pinned engine's source (11434): the
tensor table, exact (`load_tensors: <BUF> model buffer size`), every shard; estimated from
the file size when a header cannot be read. What the weights that stay on the CPU allocate
there (the mapped ranges, the AMX and repack copies) is cpu_buffers.py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from draftwise.core.gguf import reader as gguf
from draftwise.core.planning.identity_cache import IdentityCache


@dataclass(frozen=True)
class WeightTable:
    """Resident weight bytes, grouped the way the engine places them on devices.

    `layers[i]` is block i without routed experts, `experts[i]` its routed experts (what
    --n-cpu-moe keeps in RAM). `input` is token_embd (always on the CPU), `output` the head:
    output.weight and output_norm (see `tied`). `nextn` are the blocks of an MTP head
    (loaded only with --spec-type draft-mtp).
    """

    layers: tuple[int, ...]
    experts: tuple[int, ...]
    input: int
    output: int
    other: int = 0  # tensors outside blocks that are not input/output (rope freqs, ...)
    nextn: tuple[int, ...] = ()  # bytes per MTP block, included in layers' tail
    # The head is token_embd itself (no output.weight). Measured with a GPU device (Vulkan,
    # Gemma 3): the head stays on the CPU with the input, a second copy only where a CPU extra
    # buffer (AMX) takes it; the planner does so when it has the tensor table. `head(on_gpu=
    # True)` keeps the older, larger estimate (a copy on the GPU) for tables estimated from
    # the file size.
    tied: bool = False
    exact: bool = True  # False: estimated from the file size (no tensor table)
    # The tensor table (per file: (file index, TensorInfo)), for the CPU's extra buffers.
    tensors: tuple[tuple[int, gguf.TensorInfo], ...] = field(default=(), repr=False, compare=False)
    alignment: int = 32

    @property
    def n_layer(self) -> int:
        return len(self.layers)

    def layer_total(self, il: int) -> int:
        return self.layers[il] + self.experts[il]

    def head(self, on_gpu: bool) -> int:
        """Bytes of the output head on its device."""
        return self.output + (self.input if self.tied and on_gpu else 0)

    def total(self, with_nextn: bool = True) -> int:
        """Every resident byte on one device (a tied head counted once, as the mmap does)."""
        n = len(self.layers) - (0 if with_nextn else len(self.nextn))
        return sum(self.layers[:n]) + sum(self.experts[:n]) + self.input + self.output + self.other

    def scaled(self, factor: float) -> WeightTable:
        """The same layout with every size times `factor` (tests describe big models so)."""
        def s(x: int) -> int:
            return int(x * factor)
        return replace(
            self, layers=tuple(map(s, self.layers)), experts=tuple(map(s, self.experts)),
            input=s(self.input), output=s(self.output), other=s(self.other),
            nextn=tuple(map(s, self.nextn)),
        )


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def weight_table(
    tensors: Iterable[gguf.TensorInfo], n_layer_all: int, n_nextn: int = 0, alignment: int = 32
) -> WeightTable:
    """Group a tensor table by block. Sizes are padded to the file's alignment, as the
    mapped buffer spans them."""
    layers = [0] * n_layer_all
    experts = [0] * n_layer_all
    inp = out = other = 0
    names = set()
    tied = True
    for t in tensors:
        names.add(t.name)
        size = _align(t.nbytes, alignment)
        if t.name.startswith("blk."):
            try:
                il = int(t.name.split(".", 2)[1])
            except ValueError:
                other += size
                continue
            if il >= n_layer_all:
                other += size
            elif "_exps." in t.name or t.name.endswith("_exps"):
                experts[il] += size
            else:
                layers[il] += size
        elif t.name == "token_embd.weight":
            inp += size
        elif t.name.startswith("output"):
            out += size
            if t.name == "output.weight":
                tied = False
        else:
            other += size
    nextn = tuple(layers[i] + experts[i] for i in range(n_layer_all - n_nextn, n_layer_all))
    return WeightTable(tuple(layers), tuple(experts), inp, out, other, nextn,
                       tied=tied and "token_embd.weight" in names)


def estimated_weight_table(info: gguf.ModelInfo) -> WeightTable:
    """A table from the file size alone, for a model whose tensor table cannot be read:
    an embedding and a head of n_vocab x n_embd each at the model's average bits per
    weight, the rest spread evenly over the blocks."""
    n = info.block_count or 1
    total = info.tensor_bytes or info.size_bytes
    per_param = total / info.parameters if info.parameters else 0.0
    vocab = info.tokenizer.vocab_size or 0
    embd = int(vocab * (info.embedding_length or 0) * per_param)
    body = max(total - 2 * embd, 0)
    per_layer = body // n
    experts = (0,) * n
    layers = (per_layer,) * n
    if info.expert_count:
        # Routed experts are most of a MoE block (about 95% in Qwen3-30B-A3B, Mixtral).
        experts = (int(per_layer * 0.95),) * n
        layers = (per_layer - experts[0],) * n
    nextn = layers[n - (info.nextn_predict_layers or 0):] if info.nextn_predict_layers else ()
    return WeightTable(layers, experts, embd, embd, 0, nextn, tied=False, exact=False)


# A few models' tables (a folder's model and drafters).
_tables = IdentityCache(16)


def read_weight_table(info: gguf.ModelInfo) -> WeightTable:
    """The model's weight table from its files' tensor tables (every shard); estimated
    from the file size when a header cannot be read."""
    n_all = info.block_count or 0
    try:
        headers = tuple(gguf.read_header(p) for p in info.files)
    except (OSError, gguf.GGUFError):
        return estimated_weight_table(info)
    if not any(h.tensors for h in headers):
        return estimated_weight_table(info)

    def make() -> WeightTable:
        tensors = [t for h in headers for t in h.tensors]
        table = weight_table(tensors, n_all, info.nextn_predict_layers or 0, headers[0].alignment)
        return replace(table, tensors=tuple((i, t) for i, h in enumerate(headers) for t in h.tensors),
                       alignment=headers[0].alignment)

    return _tables.get(headers, (n_all, info.nextn_predict_layers or 0), make)


def tensor_bytes(path: Path) -> int:
    """Total tensor bytes of a file (a projector)."""
    h = gguf.read_header(path)
    return sum(_align(t.nbytes, h.alignment) for t in h.tensors)
