"""The names of Draftwise's choices and origins: one `StrEnum` for each set of words.

Code compares these names, never the strings (tests/test_names.py fails when a comparison
with one of these values as a string literal comes back outside this module). Each member
is its own text (`str` subclass), so JSON files, argv and the CLI's flags keep their words:
`json.dumps(MtpMode.OFF)` is `"off"`, and `MtpMode("off")` reads one back.

Pure Python, importing nothing of Draftwise: every layer may use it.
"""

from __future__ import annotations

from enum import StrEnum


class MtpMode(StrEnum):
    """The speculation setting (`--mtp`, the window's MTP switch, a profile's and the
    settings' `mtp`): auto, Draftwise decides; off, no speculation at all."""

    AUTO = "auto"
    OFF = "off"


class EngineKind(StrEnum):
    """The server program that runs the model (`--backend`, `Request.backend`,
    `LaunchSpec.kind`): only llama.cpp gets speculative flags (docs/rules.md rule 1)."""

    LLAMA_CPP = "llama.cpp"
    VLLM = "vllm"
    MLX = "mlx"


class Backend(StrEnum):
    """The compute backend of an engine build or of one device (`Gpu.backend`,
    `EngineInfo.backend`, `draftwise engine install --backend`)."""

    CPU = "cpu"
    CUDA = "cuda"
    ROCM = "rocm"
    VULKAN = "vulkan"
    METAL = "metal"
    RPC = "rpc"  # another computer's device, lent by its ggml-rpc-server (core/rpc/workers.py)
    UNKNOWN = "unknown"  # a build whose libraries do not say

    @classmethod
    def named(cls, text: str | None) -> Backend:
        """The backend a file or an engine names, UNKNOWN for a word this version lacks (a
        build facts file from a newer Draftwise) or none."""
        try:
            return cls(str(text).lower()) if text else cls.UNKNOWN
        except ValueError:
            return cls.UNKNOWN


# The GPU backends a machine's graphics card can have (a machine file's `backend`).
GPU_BACKENDS = (Backend.CUDA, Backend.ROCM, Backend.VULKAN, Backend.METAL)
# What `draftwise engine install` builds: the processor's, or one GPU backend besides it.
BUILD_BACKENDS = (Backend.CPU, *GPU_BACKENDS)


class DeviceKind(StrEnum):
    """Where a plan puts memory (`plan_types.DeviceUse.kind`): main memory, a graphics card's
    own, or memory both share (Apple silicon)."""

    CPU = "cpu"
    GPU = "gpu"
    UNIFIED = "unified"


class SpecSource(StrEnum):
    """Where the speculative decision (the drafter) came from. Only the auto sources may be
    dropped by the launcher's startup fallback: what the user chose stays theirs."""

    OFF = "off"
    USER_ARGS = "user-args"
    EXPLICIT = "explicit"
    AUTO_MTP = "auto-mtp"
    AUTO_COMPANION = "auto-companion"
    AUTO_NGRAM = "auto-ngram"
    NONE = "none"


AUTO_SOURCES = frozenset({SpecSource.AUTO_MTP, SpecSource.AUTO_COMPANION, SpecSource.AUTO_NGRAM})


class EngineSource(StrEnum):
    """Where an engine came from (core/engines/discovery.py, in the order the app prefers
    them), and a Python environment's server (vLLM, MLX)."""

    CONFIGURED = "configured"  # the path the user chose
    BUNDLED = "bundled"  # inside the frozen app
    PROVISIONED = "provisioned"  # built by `draftwise engine install`
    PATH = "path"  # `llama-server` on PATH
    PYTHON = "python"  # a Python package's server module


class Switch(StrEnum):
    """The engine's on|off|auto option words (`-fa`, `--fit`)."""

    ON = "on"
    OFF = "off"
    AUTO = "auto"


class WorkerUse(StrEnum):
    """Whether the other computers listed are used (`--use-workers`, core/launch/session.py):
    auto: only when the model does not fit without them or they make it faster; always."""

    AUTO = "auto"
    ALWAYS = "always"
