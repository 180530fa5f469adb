"""One engine launch as data: argv, environment, address, key, and the fallback command.

Everything here is decided before a process exists, so `draftwise plan` can print it and
tests can compare it with docs/engine-facts.md. The services line (engine_process.py) and the
headless runner only execute a LaunchSpec; they never edit its argv.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from draftwise.core import paths
from draftwise.core.address import ALL_INTERFACES, LOOPBACK
from draftwise.core.engines import args as engine_args
from draftwise.core.engines import provision
from draftwise.core.engines.args import Option
from draftwise.core.engines.engine_settings import DEFAULTS as ENGINE_DEFAULTS
from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.errors import FieldError
from draftwise.core.gguf import reader as gguf
from draftwise.core.kinds import Backend, EngineKind
from draftwise.core.launch import llamacpp
from draftwise.core.machine.hardware import Gpu
from draftwise.core.messages import Message, Text, msg
from draftwise.core.processes import process_group
from draftwise.core.rpc.upload import Upload
from draftwise.core.speculation.resolver import NO_SPECULATION, SpecDecision

# Environment variables the engine reads as command-line options (common/arg.cpp: every
# option's `set_env("LLAMA_ARG_...")`, and the LLAMA_ARG_NO_ negations): a stray one in the
# user's shell would change what runs behind the plan's back, so none reaches the engine.
# MTMD_BACKEND_DEVICE is the one option variable without the prefix.
ENGINE_OPTION_PREFIX = "LLAMA_ARG_"
_ENGINE_OPTION_VARIABLES = frozenset({"MTMD_BACKEND_DEVICE"})

# Extra arguments that would move the engine away from what we poll and protect. The key
# must stay out of argv (ps shows argv to every user); host and port have their own fields.
_OWNED_FLAGS = {
    "--host": msg("Use the network setting instead of --host."),
    "--port": msg("Use the Port field instead of --port."),
    "--api-key": msg("Keys on the command line are visible to every user (ps); Draftwise passes its key in the "
                     "environment."),
}

# ROCm: gfx targets without kernels in common builds that run on a close target's kernels
# (docs/engine-facts.md, "GPU environment per backend"). Value: HSA_OVERRIDE_GFX_VERSION.
HSA_OVERRIDES = {
    "gfx1103": "11.0.0",
    "gfx1031": "10.3.0",
    "gfx1032": "10.3.0",
    "gfx1034": "10.3.0",
    "gfx1035": "10.3.0",
    "gfx1036": "10.3.0",
}
# The target whose kernels an override version runs on.
_OVERRIDE_TARGET = {"11.0.0": "gfx1100", "10.3.0": "gfx1030"}


class LaunchError(FieldError):
    """A launch setting that cannot work."""


# ------------------------------------------------------------------ GPU environment
@dataclass(frozen=True)
class GpuEnv:
    env: dict[str, str]
    notes: tuple[Message, ...] = ()


def gpu_env(
    backend: str,
    gpus: Sequence[Gpu] = (),
    *,
    chosen: Sequence[int] | None = None,
    kernel_targets: Collection[str] | None = None,
    platform: str = sys.platform,
) -> GpuEnv:
    """Environment that shows the engine the right GPUs, from recorded device facts.

    `chosen`: indexes the user picked (None: let Draftwise decide). `kernel_targets`: the
    ROCm gfx targets the build has kernels for, when known.
    """
    if backend == Backend.CUDA:
        # Without PCI_BUS_ID, CUDA numbers the fastest GPU first and indexes stop matching
        # nvidia-smi (and our inventory).
        env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
        if chosen is not None:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in chosen)
        return GpuEnv(env)
    if backend == Backend.ROCM:
        return _rocm_env(gpus, chosen, kernel_targets, platform)
    if backend == Backend.VULKAN:
        visible, notes = _visible(gpus, chosen, lambda g: True)
        if not visible:
            # Nothing chosen (only software devices, which only a person picks): the engine's
            # own choice skips them the same way and says "No devices found"; an empty
            # variable would silence that line.
            return GpuEnv({}, notes)
        return GpuEnv({"GGML_VK_VISIBLE_DEVICES": ",".join(str(g.index) for g in visible)}, notes)
    # Metal shares memory with the CPU and needs nothing; a CPU build uses no GPU.
    return GpuEnv({})


def _visible(gpus, chosen, usable) -> tuple[list[Gpu] | None, tuple[Message, ...]]:
    """GPUs to show, or None when every GPU may be shown (nothing to set)."""
    notes: list[Message] = []
    if chosen is not None:
        by_index = {g.index: g for g in gpus}
        picked = [by_index.get(i, Gpu(i, Backend.UNKNOWN, "")) for i in chosen]
        keep = [g for g in picked if usable(g)]
        for g in picked:
            if g not in keep:
                notes.append(msg("GPU {index} ({name}) has no kernels in this engine build; it is left out.",
                                 index=g.index, name=g.name or g.gfx_target))
        return keep, tuple(notes)
    keep = [g for g in gpus if usable(g)]
    for g in gpus:
        if g not in keep:
            notes.append(msg("GPU {index} ({name}) has no kernels in this engine build; it is hidden from the engine.",
                             index=g.index, name=g.name or g.gfx_target))
    if any(not g.integrated for g in keep) and any(g.integrated for g in keep):
        for g in keep:
            if g.integrated:
                notes.append(msg("The integrated GPU {index} ({name}) is hidden: the dedicated GPU is faster and the "
                                 "pair often fails to start.", index=g.index, name=g.name or g.gfx_target))
        keep = [g for g in keep if not g.integrated]
    if not keep:
        if gpus:
            notes.append(msg("This engine build has kernels for none of these GPUs; install a build for them."))
        return None, tuple(notes)
    if len(keep) == len(gpus):
        return None, tuple(notes)
    return keep, tuple(notes)


def _override(gpu: Gpu, kernel_targets: Collection[str] | None) -> str | None:
    if kernel_targets is not None and gpu.gfx_target in kernel_targets:
        return None
    return HSA_OVERRIDES.get(gpu.gfx_target)


def _rocm_usable(gpu: Gpu, kernel_targets: Collection[str] | None) -> bool:
    if kernel_targets is None or not gpu.gfx_target or gpu.gfx_target in kernel_targets:
        return True
    override = HSA_OVERRIDES.get(gpu.gfx_target)
    return override is not None and _OVERRIDE_TARGET[override] in kernel_targets


def _rocm_env(gpus, chosen, kernel_targets, platform) -> GpuEnv:
    visible, notes_t = _visible(gpus, chosen, lambda g: _rocm_usable(g, kernel_targets))
    notes = list(notes_t)
    shown = visible if visible is not None else list(gpus)
    # One HSA_OVERRIDE_GFX_VERSION applies to every visible GPU, so GPUs needing different
    # overrides cannot run together: keep the group of the largest GPU.
    groups: dict[str | None, list[Gpu]] = {}
    for g in shown:
        groups.setdefault(_override(g, kernel_targets), []).append(g)
    if len(groups) > 1:
        biggest = max(shown, key=lambda g: (g.total_bytes, not g.integrated, -g.index))
        keep_key = _override(biggest, kernel_targets)
        for g in shown:
            if _override(g, kernel_targets) != keep_key:
                notes.append(msg("GPU {index} ({target}) needs a different gfx override than GPU {other}; it is hidden.",
                                 index=g.index, target=g.gfx_target, other=biggest.index))
        visible = groups[keep_key]
        shown = visible
    env: dict[str, str] = {}
    if visible is not None:
        physical = ",".join(str(g.index) for g in visible)
        if platform.startswith("linux"):
            # ROCR filters first and HIP numbers what is left, so HIP gets 0..n-1; setting
            # both to the physical list would point HIP at devices that no longer exist.
            env["ROCR_VISIBLE_DEVICES"] = physical
            env["HIP_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(len(visible)))
        else:
            env["HIP_VISIBLE_DEVICES"] = physical
    overrides = {_override(g, kernel_targets) for g in shown} - {None}
    if overrides:
        version = overrides.pop()
        env["HSA_OVERRIDE_GFX_VERSION"] = version
        targets = ", ".join(sorted({g.gfx_target or "?" for g in shown}))
        notes.append(msg("{targets} runs on the kernels of {kernels} (HSA_OVERRIDE_GFX_VERSION={version}).",
                         targets=targets, kernels=_OVERRIDE_TARGET[version], version=version))
    return GpuEnv(env, tuple(notes))


# ------------------------------------------------------------------ address and key
def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        if sys.platform != "win32":
            # Mirror the engine's own bind (SO_REUSEADDR): a TIME_WAIT leftover is no conflict.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def any_free_port(host: str = LOOPBACK) -> int:
    return process_group.free_port(host)


def choose_port(wanted: int | None, *, pinned: bool = False, host: str = LOOPBACK) -> tuple[int, Message | None]:
    """(port, note). A taken port is replaced by a free one unless the user pinned it."""
    if wanted is None:
        return any_free_port(host), None
    if not 0 < wanted < 65536:
        raise LaunchError("port", msg("Port {port} is not a TCP port; choose one between 1 and 65535.", port=wanted))
    if port_is_free(wanted, host):
        return wanted, None
    if pinned:
        raise LaunchError(
            "port",
            msg("Port {port} is in use by another program; choose another port or stop that program.", port=wanted),
        )
    port = any_free_port(host)
    return port, msg("Port {port} is in use; the engine listens on {other} instead.", port=wanted, other=port)


def new_api_key() -> str:
    return secrets.token_urlsafe(24)


def lan_addresses() -> list[str]:
    """This computer's IPv4 addresses that other computers on the network can reach (read
    from the interfaces, no traffic sent); loopback and link-local ones are left out."""
    import ipaddress

    import psutil

    found: list[str] = []
    for addrs in psutil.net_if_addrs().values():
        for a in addrs:
            if a.family != socket.AF_INET:
                continue
            ip = ipaddress.ip_address(a.address)
            if not (ip.is_loopback or ip.is_link_local) and a.address not in found:
                found.append(a.address)
    return found


def network_note(port: int, addresses: Sequence[str]) -> Message | None:
    """Where other computers reach the engine, for the user to give them."""
    if not addresses:
        return None
    return msg("Other computers reach it at {urls}.", urls=", ".join(f"http://{a}:{port}/v1" for a in addresses))


def network_warning(port: int) -> Message:
    return msg(
        "The engine accepts connections from other computers on port {port}. "
        "Anyone on your network who has the API key can use it; keep the key private.", port=port,
    )


# ------------------------------------------------------------------ the launch
@dataclass(frozen=True)
class LaunchSpec:
    """Everything needed to start one engine, and to restart it without speculation."""

    kind: EngineKind  # llama.cpp | vllm | mlx
    binary: Path  # the program started (for vllm/mlx: the Python interpreter)
    model_path: Path
    argv: tuple[str, ...]
    env: Mapping[str, str]  # additions to the parent's environment
    host: str  # where the engine listens
    port: int
    api_key: str
    spec: SpecDecision
    # Rebuilt from scratch without speculation (never cut from `argv`); None when the
    # decision may not be dropped (docs/rules.md, "Launch and the startup fallback").
    fallback_argv: tuple[str, ...] | None = None
    backend: Backend = Backend.CPU  # the build's GPU backend: cpu | cuda | rocm | vulkan | metal
    pinned_port: bool = False
    health_path: str = "/health"
    notes: tuple[Text, ...] = ()
    warnings: tuple[Text, ...] = field(default=())
    # Engine devices the plan put layers on, or the user asked for (`Vulkan0`): what the
    # GPU verdict checks the engine's own lines against.
    expected_devices: tuple[str, ...] = ()
    # The devices a per-model engine fix found on this launch is filed under: the machine's
    # selected GPUs (identity.launch_devices), as the launch session reads the fixes.
    fix_devices: tuple[str, ...] = ()
    # Each worker's share of the weights the engine sends it while it loads (core/machine/
    # upload.py: the progress the window and `launch` show); () without workers.
    uploads: tuple[Upload, ...] = ()
    # The engine settings this command runs with (flash attention, re-laid weights, threads...:
    # the plan's inputs, the user's read into them, the fixes and measured settings), as data:
    # what a crash's one fix checks (crash.feature_fix), never read back from `argv`.
    settings: EngineSettings = ENGINE_DEFAULTS
    # The RPC workers the command uses (the plan's `--rpc`, host:port each), as data: the ones
    # the launch flow asks after a worker fault.
    workers: tuple[str, ...] = ()
    # `argv` (binary aside) and `fallback_argv` as the options they were rendered from
    # (llamacpp.build_options): what reads the command as data reads these (serve's preset
    # sections), never the argv. Empty (None) for a launch not built from options.
    options: tuple[Option, ...] = ()
    fallback_options: tuple[Option, ...] | None = None
    # The folder Draftwise told the engine to log each request's prompt into (learning from
    # use, with consent: core/measurements/prompt_log.py), as data: what the launch's usage
    # keeper ingests, and what the ladder's rungs pass again. None: not logged into ours.
    prompt_log: Path | None = None

    @property
    def fallback_eligible(self) -> bool:
        return self.fallback_argv is not None

    def environment(self, parent: Mapping[str, str] | None = None) -> dict[str, str]:
        """The whole environment of the engine process: the parent's without the variables
        the engine reads as options, plus `env` (see `engine_option_variable`)."""
        parent = os.environ if parent is None else parent
        kept = {k: v for k, v in parent.items() if not engine_option_variable(k)}
        return {**kept, **self.env}

    @property
    def drafter_key(self) -> str | None:
        return self.spec.drafter_key

    @property
    def url(self) -> str:
        """Where Draftwise (and the user's tools on this machine) talk to the engine."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def network(self) -> bool:
        return self.host != LOOPBACK

    def to_json(self) -> dict[str, object]:
        """Printable form; the key is redacted (it is a secret, argv never holds it)."""
        return {
            "kind": self.kind,
            "argv": list(self.argv),
            "fallback_argv": list(self.fallback_argv) if self.fallback_argv else None,
            "env": {k: ("***" if k.endswith("API_KEY") else v) for k, v in self.env.items()},
            "host": self.host,
            "port": self.port,
            "url": self.url,
            "backend": self.backend,
            "speculative": self.spec.to_json(),
            "notes": [str(n) for n in self.notes],
            "warnings": [str(w) for w in self.warnings],
            "expected_devices": list(self.expected_devices),
        }


def require_no_speculation(spec: SpecDecision, kind: str) -> None:
    """Other engines run their own speculation settings; ours would be silently wrong."""
    if spec.argv:
        raise LaunchError("mtp", msg("Speculative settings are for llama.cpp; {kind} decides speculation itself.",
                                     kind=kind))


def check_owned_flags(extra_args: Sequence[str]) -> None:
    for token in extra_args:
        name = engine_args.flag_name(token)
        if name in _OWNED_FLAGS:
            raise LaunchError("extra_args", msg("Extra engine arguments may not contain {flag}. {why}", flag=name,
                                                why=_OWNED_FLAGS[name]))


def engine_option_variable(name: str) -> bool:
    """True for an environment variable llama-server would read as a command-line option."""
    upper = name.upper()  # Windows names are case-insensitive
    return upper.startswith(ENGINE_OPTION_PREFIX) or upper in _ENGINE_OPTION_VARIABLES


def engine_config_home() -> Path:
    """The folder the engine is told is the user's configuration folder: Draftwise's own,
    which holds no llama.cpp/config.ini, so the user's file never changes a launch."""
    return paths.data_dir() / "engine-config"


def config_home_env(platform: str = sys.platform) -> dict[str, str]:
    """The variable that moves the engine's user-level config.ini (common.cpp
    fs_get_config_directory: %APPDATA% on Windows, else ${XDG_CONFIG_HOME:-~/.config})."""
    return {"APPDATA" if platform == "win32" else "XDG_CONFIG_HOME": str(engine_config_home())}


def system_config_files(platform: str = sys.platform, environ: Mapping[str, str] | None = None) -> list[Path]:
    """The system-wide config.ini files the engine applies before its command line
    (arg.cpp common_params_apply_system_config) that exist here. Draftwise cannot move them."""
    environ = os.environ if environ is None else environ
    if platform == "win32":
        program_data = environ.get("PROGRAMDATA")
        candidates = [Path(program_data) / "llama.cpp" / "config.ini"] if program_data else []
    else:
        candidates = [Path("/etc/llama.cpp/config.ini")]
    return [p for p in candidates if p.is_file()]


def system_config_warnings(files: Sequence[Path] | None = None) -> list[Message]:
    found = system_config_files() if files is None else files
    return [msg("{path} exists: llama.cpp applies it to every launch before the command line, so any setting "
                "in it that Draftwise does not set itself changes what runs. Remove it or empty it.",
                path=str(p)) for p in found]


def engine_env(
    engine_folder: Path,
    api_key: str,
    *,
    backend: str = Backend.CPU,
    gpus: Sequence[Gpu] = (),
    chosen_gpus: Sequence[int] | None = None,
    kernel_targets: Collection[str] | None = None,
    key_variable: str = "LLAMA_API_KEY",
) -> tuple[dict[str, str], tuple[Message, ...]]:
    """(environment additions, notes) for one llama-server start."""
    gpu = gpu_env(backend, gpus, chosen=chosen_gpus, kernel_targets=kernel_targets)
    env = {
        # Libraries beside the binary (LD_LIBRARY_PATH; on Windows the folder first on PATH).
        **provision.library_env(engine_folder),
        **gpu.env,
        # A failed GGML_ASSERT attaches gdb for a backtrace when it is installed: seconds
        # of delay before the fallback and pages of noise in the log the user sees.
        "GGML_NO_BACKTRACE": "1",
        # The user's llama.cpp/config.ini would be applied before our argv: point the
        # engine at a folder of ours instead (docs/launch-path.md).
        **config_home_env(),
        key_variable: api_key,
    }
    return env, gpu.notes


def llamacpp_launch(
    binary: Path,
    model: gguf.ModelInfo | Path,
    spec: SpecDecision,
    *,
    port: int,
    extra_args: Sequence[str] = (),
    plan_options: Sequence[Option] = (),
    fallback_plan_options: Sequence[Option] | None = None,
    engine: EngineSettings = ENGINE_DEFAULTS,
    network: bool = False,
    api_key: str | None = None,
    backend: str = Backend.CPU,
    gpus: Sequence[Gpu] = (),
    chosen_gpus: Sequence[int] | None = None,
    kernel_targets: Collection[str] | None = None,
    pinned_port: bool = False,
    notes: Sequence[Text] = (),
    expected_devices: Sequence[str] = (),
    fix_devices: Sequence[str] = (),
    settings: EngineSettings = ENGINE_DEFAULTS,
    prompt_log: Path | None = None,
) -> LaunchSpec:
    """The llama-server launch for a resolved decision and (later) the planner's args.

    `plan_options` are the planner's context/KV/offload options; `fallback_plan_options` its
    plan without the drafter (defaults to `plan_options`); `engine` Draftwise's own settings
    beside the plan (fixes, measured settings), passed after the user's `extra_args`;
    `settings` the whole of what the command runs with, as data; `prompt_log` the folder the
    engine logs the prompts into, unless the user's arguments name their own.
    """
    check_owned_flags(extra_args)
    if network and api_key is not None and not api_key:
        raise LaunchError("api_key", msg("An engine open to the network needs an API key; leave the key field to "
                                         "Draftwise or enter one."))
    key = api_key or new_api_key()
    host = ALL_INTERFACES if network else LOOPBACK
    options = llamacpp.build_options(model, spec, extra_args=extra_args, host=host, port=port,
                                     plan_options=plan_options, engine=engine, prompt_log=prompt_log)
    fallback_options = None
    if spec.fallback_eligible and spec.options():
        fallback_options = llamacpp.build_options(
            model, NO_SPECULATION, extra_args=extra_args, host=host, port=port,
            plan_options=plan_options if fallback_plan_options is None else fallback_plan_options, engine=engine,
            prompt_log=prompt_log,
        )
    argv = (str(binary), *engine_args.render(options))
    fallback = None if fallback_options is None else (str(binary), *engine_args.render(fallback_options))
    # The machine's inventory lists every GPU any driver reports; this build sees its own.
    gpus = [g for g in gpus if g.backend == backend]
    env, gpu_notes = engine_env(
        Path(binary).parent, key, backend=backend, gpus=gpus, chosen_gpus=chosen_gpus,
        kernel_targets=kernel_targets,
    )
    warnings: list[Text] = list(spec.warnings)
    if network:
        warnings.append(network_warning(port))
        reach = network_note(port, lan_addresses())
        if reach:
            # Beside the warning, where the window's banner and the CLI show it.
            warnings.append(reach)
    return LaunchSpec(
        kind=EngineKind.LLAMA_CPP, binary=Path(binary), model_path=model.path if isinstance(model, gguf.ModelInfo) else Path(model),
        argv=argv, env=env, options=options, fallback_options=fallback_options,
        host=host, port=port, api_key=key, spec=spec, fallback_argv=fallback, backend=backend, settings=settings,
        pinned_port=pinned_port, notes=(*notes, *spec.notes, *gpu_notes), warnings=tuple(warnings),
        expected_devices=tuple(expected_devices), fix_devices=tuple(fix_devices),
        prompt_log=llamacpp.logs_prompts_into(options, prompt_log),
    )
