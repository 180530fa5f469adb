"""How fast a model would write here, before it is downloaded: tokens per second from what is
measured on this computer and what is known of the model.

Writing one token reads every weight the token passes through once (for a mixture of experts
only the active experts), so decode speed is about

    seconds per token = sum over tensor types of bytes read / (rate x type efficiency)
                        + blocks x BLOCK_SECONDS + vocabulary x VOCAB_SECONDS + TOKEN_SECONDS

where `rate` is how many weight bytes per second the engine decodes on the device the model
runs on. On the processor the rate is **measured** here, once per computer and engine build,
and kept in the data folder (`speed-probe.json`):

- with the engine itself (`probe_engine` in core/launch/speed_probe.py): a generated model of three llama-7B-shaped blocks
  of Q4_K zeros (300 MB, bigger than any processor cache), 48 tokens, the engine's own
  `predicted_per_second`. Q4_K because it is what a Q4_K_M file (every starter) mostly holds,
  and because decoding it on a few cores is limited by the arithmetic as much as by the
  memory: an F32 probe times the memory alone. On the 2-core machine this was measured on,
  eight alternating pairs read the F32 probe at 18-29 GB/s and Q4_K at 14.6-17.9, their
  ratio wandering from 0.61 to 0.81, so no one efficiency turned the one into the other
  (issue 27: 2.7 tokens/s estimated for a 7B the engine ran at 4.3). A few seconds.
- without an engine yet (`probe_memory`): one thread of the standard library scanning 128 MiB
  (`bytes.find`, a SIMD memchr), scaled for the cores the engine would use (`MEMORY_SCALE`).
  A third of a second; less certain, and said so.

The probe model, the rate behind its tokens a second, the record and its one writer
(`measured_once`, with the rule for a figure taken on a busy processor) and the estimate live
here, below the planner and the hub that read them. The engine probe itself starts an
engine, which only the launch path does (a LaunchSpec run by HeadlessLaunch and its process
owner); core/machine may not import core/launch (pyproject.toml's layers), so it lives there,
in core/launch/speed_probe.py, beside `throughput`, the figure everyone asks for.

Other tensor types decode at another rate per byte than Q4_K: `TYPE_EFFICIENCY`, measured on
the pinned engine at the launch's defaults (bench/speed_estimate.py --constants, docs/
get-models.md "Speed before download"). A graphics card's rate is its memory bandwidth, from
a table of known cards (`GPU_BANDWIDTH`), times `GPU_EFFICIENCY` (published llama.cpp decode
figures; no GPU was at hand to measure). A model that does not fit the card runs partly on
the processor and pays both. Each block costs a little time whatever its size
(`BLOCK_SECONDS`: the engine's per-operation work and thread hand-offs), sampling from the
vocabulary costs time per entry (`VOCAB_SECONDS`), and each token a little more whatever the
model (`TOKEN_SECONDS`).

"Readable" is at least `READABLE` (8) tokens a second: slower than that, a reply comes more
slowly than most people read.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from draftwise.core import identity, paths
from draftwise.core.gguf.writer import TensorSpec, write_gguf
from draftwise.core.kinds import Backend
from draftwise.core.machine import cores as cores_mod
from draftwise.core.machine.gpu_speed import GPU_EFFICIENCY, gpu_bandwidth
from draftwise.core.machine.machine_types import GB, Gpu, Machine
from draftwise.core.messages import Message, Text, msg
from draftwise.core.records import JsonRecord, keyed_record, write_error

log = logging.getLogger(__name__)

READABLE = 8.0  # tokens a second: at least this and a reply keeps up with reading
RECORD = "speed-probe.json"
RECORD_VERSION = 1
# What the kept figures measure, in their keys: "q4_k", the probe decoding Q4_K. Entries of
# the F32 probe (keys without it) were memory reading rates, which the estimate no longer
# reads: they are never found, so each computer measures again once, and are dropped at the
# next write.
PROBE_KIND = "q4_k"

# Per tensor type, the bytes a second the engine decodes it at on the processor over what it
# decodes the probe's Q4_K at. Measured on the pinned engine, 2-core AMD EPYC (Zen 3, AVX2)
# VM, at the launch's defaults (weights repacked where the CPU has a layout: Q4_0 and Q4_K on
# AVX2; repacked Q4_K decoded as fast as the probe's plain one there, 1.02), with one-type
# llamas of 2048-wide blocks, each right after a probe: bench/speed_estimate.py --constants,
# the median of 6-11 quiet pairs over four runs (pairs spread about ±10 %; docs/
# get-models.md "Speed before download"). On two cores every quantized type runs out of
# arithmetic before memory, so these are ratios of the kernels' speeds; F32 and F16 have the
# least arithmetic a byte. With more cores every type comes closer to the memory's speed,
# where the ratios approach 1.
TYPE_EFFICIENCY = {"F32": 1.6, "F16": 1.4, "BF16": 1.35, "Q8_0": 1.12, "Q6_K": 1.18, "Q5_K": 0.94,
                   "Q4_K": 1.0, "Q5_0": 0.9, "Q4_0": 1.08}
# A type not measured (IQ*, Q2_K, Q3_K, MXFP4, ...): as slow as the slowest measured, so the
# figure errs slow.
OTHER_TYPE_EFFICIENCY = min(TYPE_EFFICIENCY.values())
# Beyond its weights' bytes, each block of a model costs this much a token (its twenty-odd
# operations' dispatch, the threads' hand-offs, the norms, RoPE and attention over its
# width), each vocabulary entry this much (the logits' copy and the sampler chain over every
# entry), and each token this much whatever the model (the server's own work for it).
# Measured on the same machine (bench/speed_estimate.py --constants): a token and an entry
# with narrow llamas (64 wide, next to nothing to read) of 2 blocks and of 49,152 and
# 262,144 entries, the medians over its runs (39-55 us a token, 5.6-10.5 ns an entry: a VM's
# scheduler shows in microseconds; Gemma 3's 262,144 entries cost 2 ms a token). A block
# costs 21-45 us in the narrow llamas but more at a real width: BLOCK_SECONDS is the figure
# that brings the real geometries' medians closest to 1, the worst counted (Gemma 3 270M
# mapped and unmapped, SmolLM2-135M and -360M, Qwen2.5-7B: 55 quiet pairs over four runs,
# the bench's fit_block_seconds).
BLOCK_SECONDS = 76e-6
VOCAB_SECONDS = 7.7e-9
TOKEN_SECONDS = 47e-6
# A gated delta net block (Qwen3.5's, Qwen3-Next's linear attention) keeps a state of
# inner_size x state_size F32 values and passes over it several times a token (decay, read,
# update, output) in ggml's CPU kernel: counted as that many bytes at the probe's rate.
# Fitted on Qwen3.5-0.8B (18 such blocks of 1 MiB; 0.76 measured/estimated without it over 3
# quiet pairs of bench/speed_estimate.py, 1.03-1.06 with it). Mamba-2 blocks (Granite
# 4.0-H-Tiny: 36 of 1.5 MiB) cost no more than their weights and BLOCK_SECONDS: 1.42-1.53
# with the same term, so theirs is not counted.
STATE_PASSES = 8.0
# A block with one of these is a gated delta net (qwen35/qwen35moe: alpha and beta; qwen3next: ba).
_DELTA_NET = (".ssm_beta.", ".ssm_ba.")
# The memory probe reads with one thread; the engine decodes with all its threads. Measured
# here (2 cores): the engine's Q4_K probe over the one-thread scan, 0.82-1.13 over four runs
# of bench/speed_estimate.py --constants. Machines with more cores decode faster with more
# threads, up to what the memory gives; without the engine to ask, Draftwise assumes a
# modest gain per extra core (capped), which is what laptops and desktops with two memory
# channels show, and says the figure is less certain.
MEMORY_SCALE_FIRST = 0.9
MEMORY_SCALE_PER_CORE = 0.1
MEMORY_SCALE_CAP = 1.8
GPU_MARGIN = GB // 2  # room a card keeps beside the weights (context, compute buffers)

PROBE_TOKENS = 48
MEMORY_PROBE_BYTES = 128 << 20


# ------------------------------------------------------------------ measured rates
@dataclass(frozen=True)
class Throughput:
    """How many weight bytes a second the engine decodes on this computer's processor."""

    cpu: float  # bytes per second of Q4_K weights (other types pay TYPE_EFFICIENCY)
    source: str  # "engine": measured with the engine | "memory": the standard-library scan | "described"
    threads: int = 0  # the processor threads the engine used
    when: str = ""
    # Taken while other work held the processor (busy_now()): never kept (measured_once).
    busy: bool = False
    # Why a figure measured now could not be kept in `speed-probe.json` (records.write_error:
    # a newer Draftwise's file, a full disk): used for now like a busy one, and said where the
    # speed is shown (`shown_note`). Never written.
    not_kept: Text | None = field(default=None, compare=False)

    @property
    def certain(self) -> bool:
        """Measured with the engine (or given), not scaled from a one-thread scan."""
        return self.source != "memory"

    def to_json(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "source": self.source, "threads": self.threads, "when": self.when,
                "busy": self.busy}

    @classmethod
    def from_json(cls, data: Any) -> Throughput | None:
        if not isinstance(data, dict):
            return None
        cpu, source = data.get("cpu"), data.get("source")
        if not isinstance(cpu, (int, float)) or isinstance(cpu, bool) or cpu <= 0 or not isinstance(source, str):
            return None
        threads = data.get("threads")
        return cls(float(cpu), source, int(threads) if isinstance(threads, int) else 0, str(data.get("when", "")),
                   busy=data.get("busy") is True)


# A processor whose one-minute load average per logical CPU is above this is busy with other
# work: a probe then measures what is left over, not what a model will get.
BUSY_LOAD_PER_CPU = 0.5


def busy_now(loadavg: Callable[[], tuple[float, float, float]] | None = None) -> bool:
    """Whether other work holds the processor now (False where the OS keeps no load
    average, as on Windows)."""
    try:
        one_minute = (loadavg or os.getloadavg)()[0]
    except (AttributeError, OSError):
        return False
    return one_minute / max(1, os.cpu_count() or 1) > BUSY_LOAD_PER_CPU


def cores() -> int:
    """The processor threads the engine uses: its default, the physical cores (core/machine/cores.py)."""
    return cores_mod.physical()


def memory_scale(n_cores: int) -> float:
    return min(MEMORY_SCALE_CAP, MEMORY_SCALE_FIRST + MEMORY_SCALE_PER_CORE * max(0, n_cores - 1))


def probe_memory(size: int = MEMORY_PROBE_BYTES, repeats: int = 3,
                 clock: Callable[[], float] = time.perf_counter) -> float:  # fmt: skip
    """One thread's reading speed, bytes per second: the fastest of `repeats` scans of `size`
    bytes for a byte that is not there. The buffer is written first, so its pages are real
    memory (a fresh zero buffer maps one shared page and would read from the cache)."""
    data = b"\x02" * size
    best = float("inf")
    for _ in range(repeats):
        t = clock()
        data.find(b"\x01")
        best = min(best, clock() - t)
    return size / max(best, 1e-9)


def memory_throughput(n_cores: int | None = None) -> Throughput:
    n = n_cores or cores()
    return Throughput(probe_memory() * memory_scale(n), "memory", n, _now())


# The probe model: three blocks shaped as llama 2 7B's (4096 wide, 32 heads, 8 KV heads, an
# 11008-wide feed-forward: real models' matrix sizes, 300 MB of Q4_K in all, more than any
# processor cache holds), and a vocabulary of the 3 specials and 256 byte tokens. Its
# matrices are Q4_K zeros (the kernels do the same work whatever the values); the norms are
# F32 ones.
_E, _HEADS, _KV_HEADS, _FF, _BLOCKS = 4096, 32, 8, 11008, 3
_PROBE_VOCAB = 3 + 256


def write_probe_model(path: Path) -> Path:
    """Write the engine probe's model (300 MB; the probe writes it into the cache folder and removes it after)."""
    head = _E // _HEADS
    kv = _KV_HEADS * head
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256  # unknown, control, control, byte (llama_token_attr)
    meta: list[tuple[str, Any]] = [
        ("general.architecture", "llama"), ("general.name", "draftwise-speed-probe"), ("general.file_type", 15),
        ("llama.context_length", 4096), ("llama.embedding_length", _E), ("llama.block_count", _BLOCKS),
        ("llama.feed_forward_length", _FF), ("llama.attention.head_count", _HEADS),
        ("llama.attention.head_count_kv", _KV_HEADS), ("llama.attention.layer_norm_rms_epsilon", 1e-5),
        ("llama.rope.dimension_count", head), ("llama.rope.freq_base", 10000.0),
        ("tokenizer.ggml.model", "llama"), ("tokenizer.ggml.pre", "default"),
        ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.scores", [0.0] * len(tokens)),
        ("tokenizer.ggml.token_type", types), ("tokenizer.ggml.bos_token_id", 1),
        ("tokenizer.ggml.eos_token_id", 2), ("tokenizer.ggml.unknown_token_id", 0),
        ("tokenizer.ggml.add_bos_token", True),
    ]  # fmt: skip

    def q4k(name: str, *dims: int) -> TensorSpec:
        return TensorSpec(name, dims, "zeros", PROBE_TYPE)

    def ones(name: str) -> TensorSpec:
        return TensorSpec(name, (_E,), "ones")

    tensors = [q4k("token_embd.weight", _E, _PROBE_VOCAB), ones("output_norm.weight"),
               q4k("output.weight", _E, _PROBE_VOCAB)]
    for i in range(_BLOCKS):
        b = f"blk.{i}."
        tensors += [
            ones(b + "attn_norm.weight"), q4k(b + "attn_q.weight", _E, _E), q4k(b + "attn_k.weight", _E, kv),
            q4k(b + "attn_v.weight", _E, kv), q4k(b + "attn_output.weight", _E, _E), ones(b + "ffn_norm.weight"),
            q4k(b + "ffn_gate.weight", _E, _FF), q4k(b + "ffn_up.weight", _E, _FF), q4k(b + "ffn_down.weight", _FF, _E),
        ]  # fmt: skip
    return write_gguf(path, meta, tensors)


PROBE_TYPE = "Q4_K"
PROBE_FILE = "probe-q4_k.gguf"  # not the F32 probe's name: a model left by an older one is not taken
_Q4K_BLOCK, _Q4K_BYTES = 256, 144  # elements and bytes of one Q4_K block (ggml-common.h block_q4_K)


def probe_model_bytes() -> int:
    """The weight bytes the engine reads per token of the probe model (every matrix but the
    input embedding, of which a token reads one row)."""
    kv = _KV_HEADS * (_E // _HEADS)
    weights = _BLOCKS * (2 * _E * _E + 2 * _E * kv + 3 * _E * _FF) + _E * _PROBE_VOCAB
    return weights // _Q4K_BLOCK * _Q4K_BYTES


def probe_rate(tokens_per_s: float) -> float:
    """The Q4_K bytes a second behind the probe's tokens a second: its time a token less what
    the estimate counts beside the bytes (the token's, its blocks' and its vocabulary's), so
    that `estimate` of the probe model gives back the probe's speed."""
    seconds = 1.0 / tokens_per_s - TOKEN_SECONDS - _BLOCKS * BLOCK_SECONDS - _PROBE_VOCAB * VOCAB_SECONDS
    return probe_model_bytes() / max(seconds, 1e-6)


# ------------------------------------------------------------------ the record
def _key(binary: Path | None) -> str:
    """This processor (identity.processor_key) and what measured it: the engine build, or the
    memory scan."""
    what = identity.engine_build_key(binary) if binary is not None else "memory"
    return f"{identity.processor_key()}#{what}#{PROBE_KIND}"


def record_path() -> Path:
    return paths.data_dir() / RECORD


def record_file(path: Path | None = None) -> JsonRecord[dict[str, Any]]:
    """`speed-probe.json`, one records.JsonRecord (docs/records.md); an entry that does not
    read as a Throughput is measured again, not a damaged file."""
    return keyed_record(path or record_path(), msg("record of this computer's speed"), RECORD_VERSION)


def recorded(binary: Path | None, path: Path | None = None) -> Throughput | None:
    return Throughput.from_json(record_file(path).read().get(_key(binary)))


def remember(binary: Path | None, tp: Throughput, path: Path | None = None) -> None:
    _keep(_key(binary), tp, path)


def record_key(binary: Path) -> str:
    """The key the engine probe's figure for `binary` is kept under."""
    return _key(binary)


def _keep(key: str, tp: Throughput, path: Path | None) -> None:
    """The one write of `speed-probe.json`. A failed write raises (OSError; records.NotWritten
    for a file that must not be written over), as every store's does: the caller keeps the
    figure for now and names the error (`measured_once`, `memory_rate`: `Throughput.not_kept`)."""
    def add(entries: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in entries.items() if k.endswith("#" + PROBE_KIND)}  # an older probe's: dropped
        return {**kept, key: tp.to_json()}

    record_file(path).update(add)


def _kept(key: str, tp: Throughput, path: Path | None) -> Throughput:
    """`tp` kept under `key`; where the write fails, `tp` with why (`not_kept`), held for this
    process as a busy figure is (the next call after BUSY_RETRY_S measures and tries again)."""
    try:
        _keep(key, tp, path)
    except OSError as exc:
        log.warning("could not keep the speed measurement: %s", exc)
        tp = replace(tp, not_kept=write_error(exc))
        _busy_figures[key] = (time.monotonic() + BUSY_RETRY_S, tp)
    return tp


# A figure taken while other work held the processor is not kept (it would rank every
# starter "slow" for good): it stands for this process until then, and the next call after
# it measures again.
BUSY_RETRY_S = 600.0
_busy_figures: dict[str, tuple[float, Throughput]] = {}


def busy_note() -> Message:
    """What a busy figure means for the speeds shown beside it."""
    return msg("This computer was busy when its speed was measured, so these speeds may be low; Draftwise "
               "measures again when it is quieter.")


def not_kept_note(error: Text) -> Message:
    """What a figure measured but not kept means for the speeds shown beside it."""
    return msg("This computer's speed was measured but could not be kept ({error}); the speeds use it for now, "
               "and Draftwise measures again next time.", error=error)


def shown_note(tp: Throughput) -> Message | None:
    """The sentence that goes where `tp`'s speeds are shown (`draftwise get`, the Get models
    window): why it could not be kept, else that it was taken while busy; None for a kept,
    quiet figure."""
    if tp.not_kept is not None:
        return not_kept_note(tp.not_kept)
    return busy_note() if tp.busy else None


def measured_once(key: str, take: Callable[[], Throughput | None], *, measure: bool = True,
                  path: Path | None = None) -> Throughput | None:
    """The figure kept under `key` in `speed-probe.json`, else `take()`'s, kept: the one rule
    for every probe that writes the record (the engine probe, core/launch/speed_probe.py; this
    computer's figure for a worker's product, worker_rate.here). A figure taken while other
    work held the processor (`busy_now`, asked before `take` starts anything: its own loading
    would count) comes back with `busy` set and is not kept: it stands for this process for
    BUSY_RETRY_S, and the next call after that measures again. `measure=False` (a model is
    running and would share the processor) takes nothing and keeps nothing. None when nothing
    is kept and `take` found nothing; what `take` raises goes through, nothing kept. A figure
    the record cannot take comes back with `not_kept` (why) and is used like a busy one."""
    hit = Throughput.from_json(record_file(path).read().get(key))
    if hit is not None and not hit.busy:
        return hit
    held = _busy_figures.get(key)
    if held is not None and time.monotonic() < held[0]:
        return held[1]
    if measure:
        busy = busy_now()
        tp = take()
        if tp is not None:
            tp = replace(tp, busy=busy, when=tp.when or _now())
            if busy:
                _busy_figures[key] = (time.monotonic() + BUSY_RETRY_S, tp)
                log.info("speed probe: the processor was busy (%.1f GB/s); not kept, measured again later",
                         tp.cpu / 1e9)
                return tp
            _busy_figures.pop(key, None)
            return _kept(key, tp, path)
    if held is not None:
        return held[1]
    return hit  # an earlier version's busy entry: better than nothing


def memory_rate(*, measure: bool = True) -> Throughput:
    """The memory scan's figure, kept per computer (`measure=False`: scanned, not kept): what
    stands in while no engine has measured this computer."""
    hit = recorded(None)
    if hit is not None:
        return hit
    tp = memory_throughput()
    return _kept(_key(None), tp, None) if measure else tp


def speed_here(model: Path, machine: Machine, binary: Path | None) -> float | None:
    """Tokens a second `model` would get here, from the figure already kept for `binary`
    (nothing is measured for it); None without one, or when the header does not read."""
    from draftwise.core.gguf.reader import GGUFError

    tp = recorded(binary) if binary is not None else None
    if tp is None:
        return None
    try:
        return estimate(workload_of(model), machine, tp).tokens_per_s
    except (OSError, GGUFError):
        return None


# ------------------------------------------------------------------ the estimate
@dataclass(frozen=True)
class Workload:
    """What one token costs a model: the weight bytes it reads (a mixture of experts: only
    the active experts; the input embedding is a lookup, not read whole, unless it is also
    the output head; an MTP head's blocks only when drafting), the bytes that must fit
    somewhere, its vocabulary and quantization. From a header also those bytes by tensor type
    (`by_type`) and the blocks a token passes (`blocks`); a starter known by its published
    size has neither, and its file's type stands for every byte."""

    active: int
    resident: int
    vocab: int = 0
    quant: str | None = None
    by_type: tuple[tuple[str, int], ...] = ()  # (ggml type name, bytes read a token), largest first
    blocks: int = 0
    state_bytes: int = 0  # the gated delta nets' state (F32), passed over STATE_PASSES times a token


@dataclass(frozen=True)
class Estimate:
    tokens_per_s: float
    device: str  # "cpu" | "gpu" | "split" (part on the graphics card, the rest on the processor)
    certain: bool  # the processor's rate was measured with the engine (or described)

    @property
    def readable(self) -> bool:
        return self.tokens_per_s >= READABLE

    def to_json(self) -> dict[str, Any]:
        return {"tokens_per_s": round(self.tokens_per_s, 1), "device": self.device, "certain": self.certain,
                "readable": self.readable}


_BLOCK = re.compile(r"^blk\.(\d+)\.")


def workload_of(path: Path) -> Workload:
    """A downloaded model's workload from its header: every tensor but an input embedding
    that is not also the output head (a token reads one row of it); a mixture of experts
    reads its used experts only. An MTP head's blocks (the last `nextn_predict_layers`
    blocks of a file that holds the trunk too) are left out: the engine runs them only to
    draft, and the estimate does not count a drafter's help, so it leaves out its cost too.
    Raises what `read_header` raises."""
    from draftwise.core.gguf import reader as gguf

    header = gguf.read_header(path)
    info = gguf.read_model(path)
    names = {t.name for t in header.tensors}
    tied = "output.weight" not in names
    first_nextn = None
    if info.nextn_predict_layers and info.block_count and "blk.0.attn_norm.weight" in names:
        first_nextn = info.block_count - info.nextn_predict_layers
    by_type: dict[str, int] = {}
    blocks: set[int] = set()
    recurrent: set[int] = set()
    for t in header.tensors:
        if t.name == "token_embd.weight" and not tied:
            continue
        m = _BLOCK.match(t.name)
        if m is not None:
            if first_nextn is not None and int(m.group(1)) >= first_nextn:
                continue
            blocks.add(int(m.group(1)))
            if any(k in t.name for k in _DELTA_NET):
                recurrent.add(int(m.group(1)))
        nbytes = t.nbytes
        if "_exps." in t.name and info.expert_count and info.expert_used_count:
            nbytes = nbytes * info.expert_used_count // info.expert_count
        by_type[t.type_name] = by_type.get(t.type_name, 0) + nbytes
    ordered = tuple(sorted(by_type.items(), key=lambda kv: (-kv[1], kv[0])))
    arch = header.get("general.architecture")
    state = 4 * int(header.get(f"{arch}.ssm.inner_size") or 0) * int(header.get(f"{arch}.ssm.state_size") or 0)
    return Workload(sum(by_type.values()), sum(t.nbytes for t in header.tensors), info.tokenizer.vocab_size or 0,
                    info.quant, ordered, len(blocks), state * len(recurrent))


def type_efficiency(type_name: str) -> float:
    """TYPE_EFFICIENCY of one tensor type (OTHER_TYPE_EFFICIENCY when not measured)."""
    return TYPE_EFFICIENCY.get(type_name.upper(), OTHER_TYPE_EFFICIENCY)


def quant_efficiency(quant: str | None) -> float:
    """The efficiency of a file's quantization, by the type most of its bytes are in (Q4_K_M
    and Q4_K_S: Q4_K, Q8_0: Q8_0); an unknown one counts as the slowest measured type."""
    q = (quant or "").upper()
    for name in sorted(TYPE_EFFICIENCY, key=len, reverse=True):
        if q == name or q.startswith(name + "_"):
            return TYPE_EFFICIENCY[name]
    return OTHER_TYPE_EFFICIENCY


def cpu_seconds(work: Workload, rate: float) -> float:
    """Seconds a token spends on the processor's weights at `rate` (bytes a second of Q4_K):
    each type's bytes at its efficiency, or every byte at the file's (a starter)."""
    if work.by_type:
        return sum(nbytes / (rate * type_efficiency(name)) for name, nbytes in work.by_type)
    return work.active / (rate * quant_efficiency(work.quant))


def _gpus(machine: Machine) -> list[Gpu]:
    """The cards the model would run on: discrete ones (software devices never), or Apple's
    GPU, which shares the fast unified memory."""
    cards = [g for g in machine.automatic_gpus if not g.software and g.backend != Backend.RPC]
    return [g for g in cards if not g.integrated or g.backend == Backend.METAL]


def estimate(work: Workload, machine: Machine, tp: Throughput) -> Estimate:
    """Tokens a second for `work` here: on the graphics cards as far as it fits (in order),
    the rest on the processor, plus the token's, the blocks' and the vocabulary's share."""
    left = max(work.resident, 1)
    seconds = 0.0
    used_gpu = False
    for g in _gpus(machine):
        room = max(0, (g.free_bytes or g.total_bytes) - GPU_MARGIN)
        part = min(left, room)
        if part <= 0:
            continue
        seconds += work.active * (part / work.resident) / (gpu_bandwidth(g) * GPU_EFFICIENCY)
        left -= part
        used_gpu = True
        if left <= 0:
            break
    on_cpu = max(0, left) / max(work.resident, 1) if used_gpu else 1.0
    # The blocks' own cost was measured on the processor; a graphics card's (its kernel
    # launches) is not counted. Sampling and the server's own work run on the processor
    # wherever the weights are.
    seconds += (cpu_seconds(work, tp.cpu) + work.blocks * BLOCK_SECONDS
                + work.state_bytes * STATE_PASSES / tp.cpu) * on_cpu
    seconds += work.vocab * VOCAB_SECONDS + TOKEN_SECONDS
    device = "cpu" if not used_gpu else ("gpu" if on_cpu <= 0 else "split")
    return Estimate(1.0 / max(seconds, 1e-9), device, tp.certain)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")
