"""What of the mapped weights in RAM is the working set: the RAM fit counts that, not the file.

The engine maps the model file (`llama_mmap`, MAP_POPULATE and WILLNEED: every page is read
in at load and shows in the process's RSS). Mapped pages are clean file pages: the kernel
drops the ones nobody touches when memory runs short and reads them again on the next touch.
So what the RAM must hold is what each token touches, and the buffer sizes the engine prints
(the plan's `weights`, compared with its lines) are not all of it:

- **Row tables** (`ROW_TABLES`: the token embedding, Gemma 3n's per-layer embeddings): a
  token reads one row of each, a lookup (GET_ROWS), never the whole table. The rows the
  server's contexts can touch at once are at most one per context cell (`n_ctx` over every
  slot; fewer when the vocabulary is smaller), and a row of `b` bytes lies on at most
  `ceil(b / page) + 1` pages. So the table's working set is bounded by

      min(table, min(n_ctx, n_vocab) x (ceil(row bytes / page) + 1) x page)

  (`table_working_set`), the rest of it lazy. Not lazy when the table is also the output
  head that the CPU reads (a tied head on the CPU without a re-laid copy: every token reads
  every row for its logits), nor when the weights are not mapped (`--load-mode none|mlock|
  mmap+mlock|dio`: the loader reads them into memory of its own, or locks them).
- **The mapped file's holes**: the CPU's mapped buffer spans from its first tensor in the file
  to its last, over tensors that went elsewhere (a GPU's blocks, re-laid copies); their pages
  were read once at load and are never touched again.

Gemma 3's 262,144-row table is 170M of the 270M parameters; at 1k cells the bound is 8 MiB of
its 170 MiB when the head has a copy of its own (a GPU, AMX), the whole table when the CPU's
head reads it. Pages the kernel reads ahead around a touched row are not referenced and are
the first it drops; the bound is what must stay. A row looked up after the kernel dropped it
costs a read of the mapping's read-around window (the disk's read_ahead_kb, doubled by the
engine's POSIX_FADV_SEQUENTIAL): I/O for a newly seen token, not memory
(bench/lazy_embeddings.py measures both sides under a memory cgroup).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from draftwise.core.gguf import reader as gguf

PAGE = 4096
APPLE_PAGE = 16384  # Apple silicon's pages
# Row-addressable embedding tables the engine keeps on the CPU and reads one row per token.
ROW_TABLES = ("token_embd.weight", "per_layer_token_embd.weight")
# --load-mode values that keep the weights mapped (the engine's default is auto: mmap).
MAPPED_LOAD_MODES = frozenset({"auto", "mmap"})


def page_size(os_name: str) -> int:
    return APPLE_PAGE if os_name == "Darwin" else PAGE


def table_working_set(table_bytes: int, n_rows: int, cells: int, page: int = PAGE) -> int:
    """The most of a row table the contexts can touch at once (the module's bound)."""
    if table_bytes <= 0 or n_rows <= 0:
        return max(table_bytes, 0)
    row = -(-table_bytes // n_rows)
    pages_per_row = -(-row // page) + 1
    return min(table_bytes, min(max(cells, 0), n_rows) * pages_per_row * page)


@dataclass(frozen=True)
class RowTable:
    name: str
    nbytes: int
    rows: int


def row_tables(tensors: Iterable[tuple[int, gguf.TensorInfo]]) -> list[RowTable]:
    """The row tables in a tensor table (rows: the last dimension, ggml's ne[1])."""
    out = []
    for _fi, t in tensors:
        if t.name in ROW_TABLES and len(t.shape) >= 2:
            out.append(RowTable(t.name, t.nbytes, int(t.shape[-1])))
    return out


def lazy_bytes(tables: Iterable[RowTable], cells: int, *, head_reads_embedding: bool, page: int = PAGE) -> int:
    """Bytes of the row tables outside their working set (0 for the token embedding when
    the CPU's output head reads it whole)."""
    lazy = 0
    for t in tables:
        if t.name == "token_embd.weight" and head_reads_embedding:
            continue
        lazy += t.nbytes - table_working_set(t.nbytes, t.rows, cells, page)
    return lazy
