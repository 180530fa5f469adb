"""How fast a model would write split with other computers (RPC workers), and whether a worker
pays (issue 29, items 2 and 3). Pure: no network, no process.

A single sequence runs its layers one device after the other, so a token's time is the sum of
each device's part and of what crosses the links (ggml-backend.cpp `graph_compute_async`: each
split waits for its inputs; ggml-rpc.cpp: SET_TENSOR and GRAPH_COMPUTE/RECOMPUTE are sent
without waiting, and the next reader's GET_TENSOR waits for the worker's answer):

    seconds a token = this computer's part (speed.estimate less the layers the workers take)
                      + per worker: its layers' bytes at its rate (+ the output head's if it
                        holds it) and their blocks' BLOCK_SECONDS
                      + per hop: one round trip (a hop is a run of the token's graph on one
                        worker: its input goes out, its output is waited for)
                      + the bytes that cross at the link's bandwidth: n_embd x 4 (F32
                        activations) into each run, and out of it n_embd x 4 to the next
                        device, or the logits, n_vocab x 4, when the worker holds the output
                        head (llama-context reads them back every token)

A worker's rate is its part's own when given, else this computer's measured rate times the
ratio its link measured (link.Link.rate_ratio: the same matrix-times-vector product on the
worker's first device and on this processor, core/rpc/worker_rate.py), else this
computer's rate: on the bench both run on the same processor, and without a figure from there
it is the best guess.
Hops: one per run of layers on a worker, which in the engine's token graph is one split on
the worker's backend (`sched_reserve: graph: nodes = N, splits = S`: this computer's split,
then the worker's, in turn: S = 2 x runs, or 2 x runs + 1 when the head comes back here).
`hops_from_splits` reads it that way; bench/rpc_network.py prints both.

Small inputs that also cross (the position, the attention masks: a few KiB) and a graph sent
whole when the engine cannot reuse the last one (every 256 tokens of context, 296 bytes a
tensor) are not counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from draftwise.core.kinds import DeviceKind
from draftwise.core.machine import speed
from draftwise.core.machine.machine_types import Machine
from draftwise.core.rpc.link import Link

# A layout with workers is chosen over one with fewer only when predicted this much faster:
# the bench's rounds spread a few percent, and a worker is a second computer to keep running.
NOISE = 0.10
ACTIVATION_BYTES = 4  # F32 per value of the hidden state and of the logits


@dataclass(frozen=True)
class SplitWork:
    """What the split needs of a model beyond speed.Workload: its blocks' and its output
    head's bytes read a token (by type), its width and vocabulary."""

    work: speed.Workload
    blocks: tuple[tuple[str, int], ...]  # (type, bytes) of every block together
    head: tuple[tuple[str, int], ...]  # (type, bytes) of the output head and its norm
    n_embd: int
    vocab: int

    @property
    def n_blocks(self) -> int:
        return max(self.work.blocks, 1)


def split_work(path: Path) -> SplitWork:
    """A downloaded model's SplitWork from its header (raises what read_header raises)."""
    from draftwise.core.gguf import reader as gguf

    header = gguf.read_header(path)
    info = gguf.read_model(path)
    names = {t.name for t in header.tensors}
    head_name = "output.weight" if "output.weight" in names else "token_embd.weight"  # tied: the embedding
    blocks: dict[str, int] = {}
    head: dict[str, int] = {}
    for t in header.tensors:
        if t.name.startswith("blk."):
            blocks[t.type_name] = blocks.get(t.type_name, 0) + t.nbytes
        elif t.name in (head_name, "output_norm.weight"):
            head[t.type_name] = head.get(t.type_name, 0) + t.nbytes
    return SplitWork(speed.workload_of(path), tuple(blocks.items()), tuple(head.items()),
                     int(info.embedding_length or 0), int(info.tokenizer.vocab_size or 0))


@dataclass(frozen=True)
class WorkerPart:
    """One worker's share of a layout: its blocks and whether it holds the output head."""

    endpoint: str
    layers: int
    output: bool = False
    rate: float | None = None  # Q4_K bytes a second there; None: from its link's ratio, else this computer's


@dataclass(frozen=True)
class SplitEstimate:
    tokens_per_s: float
    hops: int
    here_s: float  # seconds a token on this computer
    workers_s: float  # on the workers
    link_s: float  # round trips and bytes over the links
    crossing_bytes: int  # bytes over the links a token

    def to_json(self) -> dict[str, Any]:
        return {"tokens_per_s": round(self.tokens_per_s, 1), "hops": self.hops,
                "here_ms": round(self.here_s * 1000, 2), "workers_ms": round(self.workers_s * 1000, 2),
                "link_ms": round(self.link_s * 1000, 2), "crossing_bytes": self.crossing_bytes}


def _seconds(by_type: Sequence[tuple[str, int]], rate: float, share: float = 1.0) -> float:
    return sum(nbytes * share / (rate * speed.type_efficiency(name)) for name, nbytes in by_type)


def predict(sw: SplitWork, parts: Sequence[WorkerPart], tp: speed.Throughput, *,
            links: Mapping[str, Link] | None = None, machine: Machine | None = None) -> SplitEstimate:
    """Tokens a second with `parts` on the workers and the rest here. A part whose link is
    not in `links` costs no link time (the caller says so: it could not be measured)."""
    links = links or {}
    here_machine = machine or Machine(0, 0)
    alone = 1.0 / speed.estimate(sw.work, here_machine, tp).tokens_per_s
    taken = workers = link_s = 0.0
    crossing = hops = 0
    for p in parts:
        if p.layers <= 0 and not p.output:
            continue
        share = p.layers / sw.n_blocks
        # What the layers would have cost on this processor, taken off this computer's part.
        taken += _seconds(sw.blocks, tp.cpu, share) + p.layers * speed.BLOCK_SECONDS
        lk = links.get(p.endpoint)
        rate = p.rate or (lk.rate(tp.cpu) if lk is not None else None) or tp.cpu
        workers += _seconds(sw.blocks, rate, share) + p.layers * speed.BLOCK_SECONDS
        if p.output:
            taken += _seconds(sw.head, tp.cpu)
            workers += _seconds(sw.head, rate)
        sent = sw.n_embd * ACTIVATION_BYTES
        back = (sw.vocab if p.output else sw.n_embd) * ACTIVATION_BYTES
        hops += 1
        crossing += sent + back
        if lk is not None:
            link_s += lk.rtt_ms / 1000 + (sent + back) * 8 / (max(lk.mbit_s, 1e-3) * 1e6)
    # Sampling and the server's own work stay here whatever the workers take.
    floor = sw.work.vocab * speed.VOCAB_SECONDS + speed.TOKEN_SECONDS
    here = max(alone - taken, floor)
    total = here + workers + link_s
    return SplitEstimate(1.0 / max(total, 1e-9), hops, here, workers, link_s, crossing)


def hops_from_splits(splits: int) -> int:
    """Runs on a worker in the engine's token graph: its splits alternate between this
    computer (first: the embedding lookup) and a worker, the head's split either way."""
    return splits // 2


def parts_of(per_device: Sequence[Any], gpu_layers: int, n_layers: int) -> list[WorkerPart]:
    """The workers' parts of a plan (planner.Plan.per_device, the engine's device order):
    each worker's blocks, and the output head on the last offload device with layers when
    the plan offloads every layer (llama.cpp puts layer n_layer, the head, on the device
    the split gives that index: the last one)."""
    offload = [d for d in per_device if getattr(d, "kind", DeviceKind.CPU) != DeviceKind.CPU and d.layers]
    head_on = offload[-1] if offload and gpu_layers >= n_layers else None
    return [WorkerPart(d.worker, d.layers, d is head_on) for d in per_device if getattr(d, "worker", None)
            and (d.layers or d is head_on)]


def layout_from_argv(argv: Sequence[str], sw: SplitWork) -> list[WorkerPart]:
    """The bench's layout: one worker (`--rpc ep`) with the last `-ngl` layers (`all`: every
    block and the head), as the engine places them without a GPU here."""
    if "--rpc" not in argv:
        return []
    ep = argv[argv.index("--rpc") + 1].split(",")[0]
    ngl = argv[argv.index("-ngl") + 1] if "-ngl" in argv else "0"
    n_layers = sw.n_blocks + 1
    n = n_layers if ngl == "all" else min(int(ngl), n_layers)
    return [WorkerPart(ep, min(n, sw.n_blocks), n >= n_layers)]


# ------------------------------------------------------------------ the choice
@dataclass(frozen=True)
class Alternative:
    workers: tuple[str, ...]
    tokens_per_s: float | None  # None: not predicted (no rate, or it does not fit)
    fits: bool

    def to_json(self) -> dict[str, Any]:
        return {"workers": list(self.workers), "fits": self.fits,
                "tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 1)}


@dataclass(frozen=True)
class SpeedChoice:
    """`plan.speed`: the chosen layout's speed, the alternatives weighed, the links."""

    tokens_per_s: float | None
    chosen: tuple[str, ...]
    alternatives: tuple[Alternative, ...]
    links: tuple[Link, ...] = ()
    notes: tuple[Any, ...] = field(default=(), compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"tokens_per_s": None if self.tokens_per_s is None else round(self.tokens_per_s, 1),
                "workers": list(self.chosen), "alternatives": [a.to_json() for a in self.alternatives],
                "link": [lk.to_json() for lk in self.links]}


def choose(alternatives: Sequence[Alternative]) -> Alternative | None:
    """`auto`: the alternatives go from fewest workers to most; the first that fits, then a
    later one only where predicted faster beyond NOISE. None when none fits."""
    chosen: Alternative | None = None
    for alt in alternatives:
        if not alt.fits:
            continue
        if chosen is None:
            chosen = alt
        elif alt.tokens_per_s is not None and chosen.tokens_per_s is not None \
                and alt.tokens_per_s > chosen.tokens_per_s * (1 + NOISE):
            chosen = alt
    return chosen
