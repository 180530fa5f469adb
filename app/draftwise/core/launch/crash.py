"""Why an engine stopped, in a sentence and a next step — never a bare exit code.

Pure: exit status and the last log lines in, a Cause out. The lines are the ones measured
on the pinned engine (docs/engine-observations.md; docs/engine-facts.md, "Failure modes").
E lines alone decide nothing: the fit step logs non-fatal errors (`failed to measure the
memory of the extra model`, eagle3/dflash "normal during memory fitting"); fatal lines and
the exit status do.

Also here: lines that mean the engine runs but not as the user thinks (speculation
silently off, GPU silently unused).
"""

from __future__ import annotations

import re
import signal as _signal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.kinds import Switch
from draftwise.core.messages import Message, Text, msg, stored_in_records

# Crash causes and feature fixes were kept as English in the broken-drafter and engine-fix
# records before they kept templates: recognised when read back (core/records.py).
stored_in_records(__name__)

# Cause kinds.
MTP_CONTEXT = "mtp-context"
DRAFT_LOAD = "draft-load"
DRAFTER_CRASH = "drafter-crash"  # the drafter killed an engine that was serving
OUT_OF_MEMORY = "out-of-memory"
ILLEGAL_INSTRUCTION = "illegal-instruction"
ASSERT = "assert"
PORT_IN_USE = "port-in-use"
MISSING_LIBRARY = "missing-library"
TENSOR_COUNT = "tensor-count"
KV_CACHE_TYPE = "kv-cache-type"
MODEL_LOAD = "model-load"
FAILED_TO_START = "failed-to-start"
KILLED = "killed"
SEGFAULT = "segfault"
CLEAN_EXIT = "clean-exit"
WORKER_GONE = "worker-gone"  # an RPC worker stopped answering while the engine used it
WORKER_UNREACHABLE = "worker-unreachable"  # an RPC worker did not answer at start
UNKNOWN = "unknown"

SIGILL = 4
SIGABRT = 6
SIGKILL = 9
SIGSEGV = 11

# Windows NTSTATUS exit codes that mean the same as the Unix signals above.
_WIN_ILLEGAL_INSTRUCTION = 0xC000001D
_WIN_DLL_NOT_FOUND = 0xC0000135
_WIN_ACCESS_VIOLATION = 0xC0000005


@dataclass(frozen=True)
class ExitStatus:
    """How a process ended: an exit code, or the signal that ended it (Unix)."""

    code: int | None = None
    signal: int | None = None

    @classmethod
    def from_returncode(cls, returncode: int) -> ExitStatus:
        """Popen's returncode: negative means killed by that signal."""
        if returncode < 0:
            return cls(None, -returncode)
        return cls(returncode, None)

    @property
    def effective_signal(self) -> int | None:
        """The signal, also when a shell reported it as 128+N."""
        if self.signal is not None:
            return self.signal
        if self.code is not None and 128 < self.code < 160:
            return self.code - 128
        return None

    @property
    def failed(self) -> bool:
        return self.signal is not None or self.code != 0

    def words(self) -> Message:
        sig = self.signal
        if sig is not None:
            name: Text
            try:
                name = _signal.Signals(sig).name
            except ValueError:
                name = msg("signal {number}", number=sig)
            return msg("killed by {signal}", signal=name)
        code = self.code if self.code is not None else "?"
        if isinstance(code, int) and code > 0xC0000000:
            return msg("exit code {code}", code=f"0x{code:08X}")
        return msg("exit code {code}", code=code)


@dataclass(frozen=True)
class Cause:
    """Why the engine ended, for people."""

    kind: str
    sentence: Message
    next_step: Message
    status: ExitStatus | None = None
    evidence: str = ""  # the log line that decided, shown under the sentence
    speculation_related: bool = False  # dropping the drafter may help

    @property
    def message(self) -> Message:
        return msg("{sentence} {next_step}", sentence=self.sentence, next_step=self.next_step)

    def __str__(self) -> str:
        return str(self.message)


# (kind, substrings any of which decides, speculation_related), in the order they are tried:
# the most specific first, so an OOM while loading a draft reads as a draft failure.
_PATTERNS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    (MISSING_LIBRARY, ("error while loading shared libraries", "Library not loaded", "image not found"), False),
    (PORT_IN_USE, ("couldn't bind HTTP server socket", "Address already in use"), False),
    (MTP_CONTEXT, ("context type MTP requested but model doesn't contain MTP layers",
                   "failed to create MTP context", "MTP block missing"), True),
    (DRAFT_LOAD, ("failed to load draft model",), True),
    (TENSOR_COUNT, ("wrong number of tensors",), False),
    # ggml-rpc.cpp: a send or receive to a worker failed (RPC_STATUS_ASSERT), or the first
    # connection did; before the OOM needles, which an RPC abort's backtrace may contain.
    (WORKER_GONE, ("Remote RPC server crashed or returned malformed response",), False),
    (WORKER_UNREACHABLE, ("Failed to connect to", "RPC handshake failed for"), False),
    (KV_CACHE_TYPE, ("does not divide n_embd_head",), False),
    (OUT_OF_MEMORY, ("out of memory", "ErrorOutOfDeviceMemory", "ErrorOutOfHostMemory",
                     "cudaMalloc failed", "hipMalloc failed", "Device memory allocation of size",
                     "failed to allocate", "unable to allocate", "std::bad_alloc",
                     # ggml_aligned_malloc (ggml/src/ggml.c) when posix_memalign says ENOMEM; the
                     # GGML_ASSERT(ctx->mem_buffer != NULL) that follows must not read as a bug.
                     "insufficient memory (attempted to allocate",
                     "Cannot allocate memory", "kIOGPUCommandBufferCallbackErrorOutOfMemory"), False),
    (ASSERT, ("GGML_ASSERT(", "GGML_ABORT"), False),
    (MODEL_LOAD, ("error loading model", "failed to load model"), False),
)

_OOM_INDEX = next(i for i, p in enumerate(_PATTERNS) if p[0] == OUT_OF_MEMORY)

# ROCm first: HIP builds run ggml's CUDA code, so their lines say "cuda" too.
_OOM_DEVICE = (
    ("ROCm", ("hipMalloc", "ROCm", "HIP error")),
    ("CUDA", ("cuda",)),
    ("Vulkan", ("vulkan", "vk::", "OutOfDeviceMemory")),
    ("Metal", ("metal", "kIOGPU")),
)

_LOADING_DRAFT = ("loading draft model", "creating MTP draft context")

# The abort when the model emits a token the draft's vocabulary lacks (common/common.cpp,
# common_batch::get_sub_batch): the draft's batch refuses the id. Measured on the pinned
# engine with a 900-token model and an 800-token draft: ready, then this on the first reply.
_SUB_BATCH = re.compile(r"get_sub_batch: failed to add token (\d+)")
# Backtrace frames as the engine prints them: through gdb ("#4  0x... in fn(...) () from
# lib"), glibc's backtrace_symbols ("lib(fn+0x1c) [0x...]"), macOS ("4  lib  0x...  fn + 28").
_FRAME = re.compile(
    r"^\s*#\d+\s+0x[0-9a-fA-F]+ in (?P<gdb>.+)"
    r"|\((?P<glibc>[^()+\s]+)\+0x[0-9a-fA-F]+\)\s*\[0x[0-9a-fA-F]+\]"
    r"|^\s*\d+\s+\S+\s+0x[0-9a-fA-F]+\s+(?P<mac>\S+)\s+\+\s+\d+"
)
_ASSERT_TEXT = re.compile(r"GGML_ASSERT\((.*)\) failed|GGML_ABORT\(?\"?(.*)")


def _find(lines: Sequence[str], needles: Iterable[str]) -> str | None:
    """The last line containing one of `needles` (the latest says most)."""
    needles = tuple(needles)
    for line in reversed(lines):
        if any(n in line for n in needles):
            return line.strip()
    return None


def _short(line: str) -> str:
    """A log line without its time/level/component prefix."""
    parts = line.split(None, 3)
    if len(parts) == 4 and parts[0].count(".") == 3 and len(parts[1]) == 1:
        return parts[3]
    return line


def classify(status: ExitStatus | None, lines: Sequence[str], *, speculation: bool = False,
             after_ready: bool = False) -> Cause:
    """The cause of an engine's end from its exit status and last log lines.

    `speculation`: the launch carried speculative flags (wording of generic failures).
    `after_ready`: it had been serving (a crash then is never the drafter's startup).
    """
    for kind, needles, spec_related in _PATTERNS:
        if kind == TENSOR_COUNT and speculation and after_ready:
            # After the drafter's own loading errors, before generic aborts and asserts:
            # a serving engine that dies inside speculative code died of its drafter.
            drafter = drafter_crash(lines)
            if drafter is not None:
                return drafter_cause(status, drafter)
        line = _find(lines, needles)
        if line is not None:
            return _cause(kind, status, lines, line, spec_related)
    return _by_status(status, lines, speculation, after_ready)


def drafter_crash(lines: Sequence[str]) -> str | None:
    """The line that shows a crash of a serving engine was the drafter's, else None: the
    missing-token abort, or the first backtrace frame that runs through speculative code."""
    line = _find(lines, ("get_sub_batch: failed to add token",))
    if line is not None:
        return line
    for raw in lines:
        m = _FRAME.search(raw)
        if m is not None and "speculative" in (m.group("gdb") or m.group("glibc") or m.group("mac") or "").lower():
            return raw.strip()
    return None


def drafter_cause(status: ExitStatus | None, line: str) -> Cause:
    """The cause for a drafter that killed the engine while it was serving."""
    missing = _SUB_BATCH.search(line)
    if missing:
        sentence = msg("The engine stopped while writing a reply: the model wrote token {id}, "
                       "which the draft's vocabulary lacks.", id=missing.group(1))
    else:
        sentence = msg("The engine stopped while writing a reply, inside its speculative decoding (the drafter).")
    return Cause(DRAFTER_CRASH, sentence,
                 msg("Start without this drafter, or choose a draft model whose vocabulary covers the model's."),
                 status, _short(line.split(": ", 1)[-1] if missing else line), True)


def _cause(kind: str, status: ExitStatus | None, lines: Sequence[str], line: str, spec_related: bool) -> Cause:
    evidence = _short(line)
    if kind == MISSING_LIBRARY:
        lib = re.search(r"libraries: ([^:]+):|Library not loaded: (\S+)", line)
        name: Text = next((g for g in lib.groups() if g), "") if lib else ""
        return Cause(kind, msg("The engine cannot start: the shared library {name} is missing.",
                               name=name or msg("a library")),
                     msg("Install the engine's runtime (GPU driver or toolkit), or reinstall the engine with "
                         "`draftwise engine install --force`."),
                     status, evidence)
    if kind == PORT_IN_USE:
        port = re.search(r"port: (\d+)", line)
        where = msg("port {port}", port=port.group(1)) if port else msg("its port")
        return Cause(kind, msg("The engine could not listen on {where}: another program uses it.", where=where),
                     msg("Choose another port, or stop the program that uses it."), status, evidence)
    if kind == MTP_CONTEXT:
        if "MTP block missing" in line:
            sentence = msg("The model's MTP head is incomplete (its tensors were stripped), so the engine crashed "
                           "building the MTP graph.")
        else:
            sentence = msg("The engine was asked to run MTP, but this model has no MTP layers it can use.")
        return Cause(kind, sentence, msg("Start without speculation (MTP off), or use a file that includes the MTP head."),
                     status, evidence, spec_related)
    if kind == DRAFT_LOAD:
        path = re.search(r"failed to load draft model, '([^']*)'", line)
        name: Text = path.group(1).rsplit("/", 1)[-1].rsplit("\\", 1)[-1] if path else msg("the draft model")
        detail = _find(lines, ("check_tensor_dims:", "error loading model:"))
        if _find(lines, ("out of memory", "failed to allocate", "cudaMalloc failed")):
            sentence = msg("The engine could not load the draft model {name} because memory ran out.", name=name)
        elif detail:
            sentence = msg("The engine could not load the draft model {name} ({detail}).", name=name,
                           detail=_short(detail).split("error loading model: ", 1)[-1])
        else:
            sentence = msg("The engine could not load the draft model {name}.", name=name)
        return Cause(kind, sentence, msg("Choose another draft model from the same family, or start without one."),
                     status, evidence, spec_related)
    if kind == TENSOR_COUNT:
        return Cause(kind, msg("The model file is inconsistent: its metadata declares more tensors than it holds."),
                     msg("Download the model again, or a different quantization of it."), status, evidence)
    if kind == KV_CACHE_TYPE:
        kv = re.search(r"cache type (\w+)", line)
        sentence = (msg("The compressed KV cache ({kv}) does not fit this model's attention heads.", kv=kv.group(1))
                    if kv else msg("The compressed KV cache does not fit this model's attention heads."))
        return Cause(kind, sentence, msg("Set the KV cache back to Auto (or f16) and start again."), status, evidence)
    if kind == OUT_OF_MEMORY:
        lower = line.lower()
        device = next((name for name, keys in _OOM_DEVICE if any(k.lower() in lower for k in keys)), None)
        if device is None:
            # The last failure ("failed to allocate buffer for kv cache") often names no device;
            # the backend's own line before it does ("failed to allocate Vulkan0 buffer",
            # "ggml_vulkan: Device memory allocation ... failed").
            oom_lines = [x.lower() for x in lines[-50:] if any(n in x for n in _PATTERNS[_OOM_INDEX][1])]
            device = next((name for name, keys in _OOM_DEVICE
                           if any(k.lower() in x for x in oom_lines for k in keys)), None)
        where = msg("{device} GPU memory", device=device) if device else msg("memory")
        if device is None and any(k in line for k in ("std::bad_alloc", "Cannot allocate memory", "ErrorOutOfHostMemory")):
            where = msg("system memory (RAM)")
        return Cause(kind, msg("The engine ran out of {where} while loading.", where=where),
                     msg("Use a smaller context, fewer GPU layers, a smaller quantization, or close other programs "
                         "that use the GPU."),
                     status, evidence)
    if kind == WORKER_GONE:
        return Cause(kind, msg("A worker computer went away: the engine lost its connection to one of the other "
                               "computers it was using."),
                     msg("Start ggml-rpc-server there again, or launch without that computer."), status, evidence)
    if kind == WORKER_UNREACHABLE:
        ep = re.search(r"(?:Failed to connect to|RPC handshake failed for) (\S+)", line)
        worker = ep.group(1) if ep else "?"
        return Cause(kind, msg("The worker {worker} did not answer when the engine started.", worker=worker),
                     msg("Start ggml-rpc-server there again, or launch without that computer."), status, evidence)
    if kind == ASSERT:
        text = _ASSERT_TEXT.search(line)
        what = next((g for g in text.groups() if g), "").strip() if text else ""
        sentence = (msg("The engine stopped on an internal check ({what}).", what=what) if what
                    else msg("The engine stopped on an internal check."))
        return Cause(kind, sentence,
                     msg("This is an engine bug or an unusual model; try without extra engine arguments, or update "
                         "the engine."),
                     status, evidence)
    # MODEL_LOAD
    detail = _find(lines, ("error loading model:",))
    why = _short(detail).split("error loading model: ", 1)[-1] if detail else evidence
    return Cause(MODEL_LOAD, msg("The engine could not load the model: {why}.", why=why),
                 msg("Check that the file is a complete GGUF model (download it again if unsure)."), status, evidence)


def _by_status(status: ExitStatus | None, lines: Sequence[str], speculation: bool, after_ready: bool) -> Cause:
    last = next((_short(x.strip()) for x in reversed(lines) if x.strip()), "")
    if status is None:
        return Cause(UNKNOWN, msg("The engine ended for an unknown reason."), msg("Look at the log for details."),
                     status, last)
    sig = status.effective_signal
    code = status.code
    if sig == SIGILL or code == _WIN_ILLEGAL_INSTRUCTION:
        return Cause(ILLEGAL_INSTRUCTION,
                     msg("The engine uses processor instructions this computer lacks (illegal instruction)."),
                     msg("Install the portable CPU build of the engine (`draftwise engine install --force`)."),
                     status, last)
    if code == _WIN_DLL_NOT_FOUND or code == 127:
        return Cause(MISSING_LIBRARY, msg("The engine cannot start: a library it needs is missing."),
                     msg("Install the engine's runtime (GPU driver or toolkit), or reinstall the engine."), status, last)
    if sig == SIGKILL:
        return Cause(KILLED, msg("The engine was killed from outside (by another program, or by the system when "
                                 "memory ran out)."),
                     msg("If memory is short, use a smaller context or model; then start it again."), status, last)
    if sig == SIGSEGV or code == _WIN_ACCESS_VIOLATION:
        return Cause(SEGFAULT, msg("The engine crashed (segmentation fault)."),
                     msg("Check that the model file is a complete model and not a drafter or MTP-only file; try "
                         "without extra engine arguments."),
                     status, last, speculation and not after_ready)
    if code == 0 and sig is None:
        return Cause(CLEAN_EXIT, msg("The engine exited on its own."),
                     msg("Start it again; look at the log if it keeps exiting."), status, last)
    words = status.words()
    hint = (msg("Try without speculation or extra engine arguments; the log has the details.") if speculation
            else msg("Try without extra engine arguments; the log has the details."))
    sentence = (msg("The engine stopped unexpectedly ({status}): {last}.", status=words, last=last) if last
                else msg("The engine stopped unexpectedly ({status}).", status=words))
    return Cause(UNKNOWN, sentence, hint, status, last, speculation and not after_ready)


def port_taken(port: int) -> Cause:
    """Another program already listens on the engine's port (found before the start: its
    answers to /health would otherwise pass for the engine's)."""
    return Cause(PORT_IN_USE, msg("The engine could not listen on {where}: another program uses it.",
                                  where=msg("port {port}", port=port)),
                 msg("Choose another port, or stop the program that uses it."))


def failed_to_start(program: str, reason: str) -> Cause:
    """The program could not be started at all (missing, not executable)."""
    return Cause(FAILED_TO_START, msg("The engine {program} could not be started: {reason}.", program=program,
                                      reason=reason),
                 msg("Install the engine with `draftwise engine install`, or choose the llama-server file again."))


# ------------------------------------------------------------------ running, but not as meant
VOCAB_MISMATCH = "the target and draft vocabs are not compatible"
SPEC_INIT_FAILED = "failed to initialize speculative decoding context"
SPECULATION_OFF_WARNING = msg(
    "The draft model's vocabulary does not match the model's: the engine serves without "
    "speculation although it was asked for it. Choose a draft model from the same family."
)

def speculation_warning(line: str) -> Message | None:
    """The warning for a line that says speculation was silently switched off."""
    if VOCAB_MISMATCH in line or SPEC_INIT_FAILED in line:
        return SPECULATION_OFF_WARNING
    return None



# ------------------------------------------------------------------ features that crash
# The fixes, as data (what a launch plans with: core/launch/ladder.py `with_fix`, the launch
# session), and as the arguments they render to: what engine-fixes.json keeps and what rides
# on a running command that cannot be planned again.
FA_OFF_FIX = EngineSettings(flash_attn=Switch.OFF)
NO_REPACK_FIX = EngineSettings(repack=False)
FA_OFF = FA_OFF_FIX.argv()  # ("-fa", "off")
NO_REPACK = NO_REPACK_FIX.argv()  # ("-nr",)
# A fix's arguments, as kept, to the fix: a lookup of the fixes this module gives, not a reading.
FIXES: dict[tuple[str, ...], EngineSettings] = {FA_OFF: FA_OFF_FIX, NO_REPACK: NO_REPACK_FIX}
_GPU_DEVICE_LINE = re.compile(r"using device (?:Vulkan|CUDA|ROCm|MTL)\d+")
_AMX_VARIANT = re.compile(r"loaded CPU backend from \S*ggml-cpu-sapphirerapids")
# The CPU's re-laid copies were made (load_tensors: "CPU_REPACK model buffer size = ...").
_REPACK_BUFFER = re.compile(r"\bCPU_REPACK model buffer size")


@dataclass(frozen=True)
class FeatureFix:
    """Arguments that switch off the feature that crashed, and the sentence for the user."""

    args: tuple[str, ...]
    message: Message

    @property
    def settings(self) -> EngineSettings:
        """The fix as data (one of `FIXES`)."""
        return FIXES[tuple(self.args)]


def feature_fix(status: ExitStatus | None, lines: Sequence[str], running: EngineSettings, *,
                after_ready: bool) -> FeatureFix | None:  # fmt: skip
    """The one relaunch that may save a crash the model file is not to blame for. `running`:
    the engine settings the crashed command ran with, as data (LaunchSpec.settings and a fix
    riding on it): a fix already in effect is not offered again.

    - A GPU driver fault after ready (a segfault or an abort on a GPU device) with flash
      attention not already off: lavapipe segfaults so on the first request of Gemma-like
      models. Relaunch with `-fa off`.
    - An illegal instruction from the AMX CPU variant (sapphirerapids): some virtual machines
      report AMX but do not run it. Relaunch with `-nr` (no re-laid weights, so no AMX
      kernels); remembered for the machine, not the model (core/launch/fixes.py).
    - An illegal instruction, or a segfault before ready, of an engine that re-laid weights
      for the CPU (a CPU_REPACK buffer in its log): the repack kernels are the CPU module's,
      so the fault is this computer's like AMX's. Relaunch with `-nr`, remembered for the
      machine (the settings stage's repack dimension then stays off here too).
    """
    if status is None:
        return None
    sig = status.effective_signal
    code = status.code
    segfault = sig in (SIGSEGV, SIGABRT) or code == _WIN_ACCESS_VIOLATION
    illegal = sig == SIGILL or code == _WIN_ILLEGAL_INSTRUCTION
    on_gpu = any(_GPU_DEVICE_LINE.search(x) for x in lines)
    if segfault and after_ready and on_gpu and running.flash_attn != Switch.OFF:
        return FeatureFix(FA_OFF, msg(
            "The GPU driver crashed while answering with flash attention on; the engine starts again "
            "with flash attention off, and this model keeps it off on this device."))
    if illegal and any(_AMX_VARIANT.search(x) for x in lines) and running.repack is not False:
        return FeatureFix(NO_REPACK, msg(
            "The CPU's AMX kernels stopped with an illegal instruction on this computer; the engine "
            "starts again without them (-nr) and keeps them off on this computer, for every model."))
    if (illegal or (segfault and not after_ready)) and not on_gpu and any(_REPACK_BUFFER.search(x) for x in lines) \
            and running.repack is not False:
        return FeatureFix(NO_REPACK, msg(
            "The engine stopped ({status}) in the CPU's kernels for re-laid weights (CPU_REPACK) on this computer; "
            "it starts again without them (-nr) and keeps them off on this computer, for every model.",
            status=status.words()))
    return None


def name_gone_workers(cause: Cause, gone: Sequence[str]) -> Cause:
    """A WORKER_GONE cause naming the workers that no longer answer (the engine's line does
    not say which; the caller tries each address after the crash)."""
    if cause.kind != WORKER_GONE or not gone:
        return cause
    return Cause(cause.kind, msg("A worker computer went away: {workers} stopped answering while the engine used "
                                 "it.", workers=", ".join(gone)),
                 msg("Start ggml-rpc-server there again, or launch without it."), cause.status, cause.evidence)
