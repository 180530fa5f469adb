"""Lazy embeddings under a memory limit (issue 21 item 6): the RAM fit's working set, checked by
the real engine in a memory cgroup (not a test: it needs a cgroup and takes minutes).

The plan counts a mapped row table (the token embedding) as the rows a context can touch,
unless the CPU's output head reads the table itself (core/planning/residency.py). Each case is
planned for this machine's processor (the CPU engine, its own CPU module; no prompt cache and
no context checkpoints, which grow later), then run as a real chat (`/v1/chat/completions`,
greedy, `TOKENS` tokens), each run in a fresh cgroup with every case's file dropped from the
page cache first (so the run is charged for the pages it reads):

1. without a limit: the baseline speed, and the engine's own memory beyond its buffers (its
   code, tokenizer and heap: anonymous memory over the planned KV, compute and output, plus
   the libraries' pages); that plus `SLACK` is the margin;
2. under `limit = planned RAM working set + margin`: must complete at normal speed (the median
   over the rounds of its speed over the unlimited run's in the same round at least `NORMAL`,
   by the wall clock or by the engine's processor time per token) reading back from storage
   no more than the rows it looks up (at
   most one read-around window per token, `/proc/PID/io`; see `read_around`);
3. under `BELOW` of the working set plus the margin: must fail or crawl (under `CRAWL` of the
   baseline's speed, or over two windows read back per token), so the bound is not far over
   the need.

The arms are interleaved for `--rounds` rounds and compared round by round: the machine is
shared and its wall-clock speed swings several-fold from minute to minute; the bytes read
back do not.

Cases: the real Gemma 3 270M Q4_K_M (tied head: on this CPU, without AMX, the head's logits
read every row, so the whole table is the working set), and a generated model with an untied
head and Gemma's table shape (262,144 x 1024 Q8_0, 272 MiB, two small blocks): its head has a
matrix of its own, and the table's untouched rows are not the working set.

The limit is a cgroup: a child of this process's memory cgroup (v1 `memory.limit_in_bytes`, v2
`memory.max`); the engine joins it before it starts (`python -c` writes its pid to
`cgroup.procs`, then execs the engine). Without a writable cgroup the script says so and exits
2: `prlimit --as` cannot stand in (it limits the address space, which counts the whole mapped
file, not what is resident).

Exits 1 when a run misses. Run: .venv/bin/python bench/lazy_embeddings.py [--tokens 64] [--ctx 4096] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

MiB = 1 << 20
NORMAL = 0.8
CRAWL = 0.5
# A row that is not resident is read back with the kernel's read-around of a mapped file: one
# window around the fault, the disk's read_ahead_kb doubled by the engine's
# POSIX_FADV_SEQUENTIAL (src/llama-mmap.cpp); 16 MiB on this VM's disk. So a reply that
# reads back only the rows it looks up reads at most one window per token; one whose
# working set does not fit reads its weights again every token, more than two.
def read_around(path: Path) -> int:
    st = path.stat()
    block = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}").resolve()
    for q in (block / "queue", block.parent / "queue"):  # a disk, or a partition of one
        try:
            return 2 * int((q / "read_ahead_kb").read_text()) * 1024
        except (OSError, ValueError):
            continue
    return 2 * 128 * 1024  # the kernel's default
BELOW = 0.6
SLACK = 32 * MiB  # on top of the engine's own memory: what its heap does from run to run
TOKENS = 64
PROMPT = "Write a short paragraph about why the sea is salty."


from installed import cpu_engine  # noqa: E402 (bench/installed.py)

BINARY = cpu_engine()  # found before the data dir moves to a scratch folder
SCRATCH = Path(tempfile.mkdtemp(prefix="draftwise-bench-lazy-"))
os.environ["DRAFTWISE_DATA_DIR"] = str(SCRATCH / "data")

from draftwise.core.engines import capabilities  # noqa: E402
from draftwise.core.launch import headless, launch_spec, prepare, session  # noqa: E402
from draftwise.core.machine import hardware  # noqa: E402
from draftwise.core.planning import plan_types, planner  # noqa: E402
from draftwise.core.speculation import resolver  # noqa: E402


# ------------------------------------------------------------------ the cgroup
@dataclass
class Cgroup:
    path: Path
    v2: bool

    @property
    def procs(self) -> Path:
        return self.path / "cgroup.procs"

    def limit(self, nbytes: int | None) -> None:
        name = "memory.max" if self.v2 else "memory.limit_in_bytes"
        value = ("max" if self.v2 else "-1") if nbytes is None else str(nbytes)
        (self.path / name).write_text(value)

    def peak(self) -> int:
        name = "memory.peak" if self.v2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text())
        except (OSError, ValueError):
            return 0

    def major_faults(self) -> int:
        """Page faults of the group that had to read from the file (a page not resident)."""
        try:
            for line in (self.path / "memory.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "pgmajfault":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        try:
            if not self.v2:
                # The page cache this group was charged for goes with it, not to the parent.
                (self.path / "memory.force_empty").write_text("0")
            self.path.rmdir()
        except OSError as exc:
            print(f"could not remove {self.path}: {exc}")


def make_cgroup(tag: str = "probe") -> Cgroup | None:
    """A child of this process's memory cgroup, or None where none can be made."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _hid, controllers, rel = line.split(":", 2)
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / rel.lstrip("/")
            v2 = False
            break
    else:
        rel = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), None)
        if rel is None:
            return None
        base, v2 = Path("/sys/fs/cgroup") / rel.lstrip("/"), True
    path = base / f"draftwise-lazy-{os.getpid()}-{tag}"
    try:
        path.mkdir()
        cg = Cgroup(path, v2)
        cg.limit(None)
        return cg
    except OSError as exc:
        print(f"no memory cgroup here ({base}: {exc})")
        try:
            path.rmdir()
        except OSError:
            pass
        return None


JOIN = "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); os.execv(sys.argv[2], sys.argv[2:])"


def drop_file_pages(path: Path) -> None:
    """The model's clean pages out of the page cache, so this run's cgroup is charged for them."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


# ------------------------------------------------------------------ one case
@dataclass
class Case:
    name: str
    model: Path
    plan: planner.Plan
    spec: launch_spec.LaunchSpec

    @property
    def ram(self) -> plan_types.DeviceUse:
        return next(d for d in self.plan.per_device if d.kind == "cpu")

    @property
    def working_set(self) -> int:
        """What the plan says the RAM must hold while a chat runs (the prompt cache and the
        checkpoints are off)."""
        return self.ram.working_set

    @property
    def buffers_anon(self) -> int:
        """The planned buffers that are the engine's own (not the mapped file)."""
        r = self.ram
        return r.kv + r.compute + r.output + sum(self.plan.bytes.cpu_extra.values()) + self.plan.bytes.checkpoints


@dataclass
class Outcome:
    limit: int | None
    ok: bool
    tokens_per_s: float = 0.0
    seconds: float = 0.0
    peak: int = 0
    faults: int = 0  # major page faults while the reply was written (pages read back in)
    read: int = 0  # bytes the engine fetched from storage meanwhile (/proc/PID/io read_bytes)
    cpu_s: float = 0.0  # the engine's processor time meanwhile (every thread)
    tokens: int = 0
    overhead: int = 0  # the engine's own memory beyond the planned buffers (unlimited run)
    problem: str = ""

    @property
    def faults_per_token(self) -> float:
        return self.faults / max(self.tokens, 1)

    @property
    def read_per_token(self) -> float:
        return self.read / max(self.tokens, 1)

    @property
    def cpu_per_token(self) -> float:
        return self.cpu_s / max(self.tokens, 1)


def _io_and_cpu(pid: int) -> tuple[int, float]:
    """(bytes fetched from storage, processor seconds) of `pid` so far."""
    read = 0
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("read_bytes:"):
                read = int(line.split()[1])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return read, 0.0
    return read, cpu


def plan_case(name: str, model: Path, ctx: int) -> Case:
    machine = hardware.inventory(BINARY, max_age=0)
    caps = capabilities.capabilities(BINARY)
    # No prompt cache and no context checkpoints: what one chat needs, nothing that grows later.
    request = prepare.Request(model=model, mtp=resolver.MtpMode.OFF,
                              extra_args=("--cache-ram", "0", "--ctx-checkpoints", "0"),
                              prefs=planner.PlanPrefs(ctx=ctx, cpu_only=True))  # fmt: skip
    planned = session.plan_launch(request, session.Engine(BINARY, caps), machine, session.Records.none())
    return Case(name, model, planned.prepared.plan, planned.spec(launch_spec.any_free_port()))


def _smaps_rss(pid: int, model: Path) -> tuple[int, int, int]:
    """(anonymous, the model file's, other files') resident bytes of `pid`."""
    anon = model_rss = other = 0
    current = ""
    try:
        text = Path(f"/proc/{pid}/smaps").read_text()
    except OSError:
        return 0, 0, 0
    for line in text.splitlines():
        parts = line.split()
        if parts and not parts[0].endswith(":"):
            current = parts[5] if len(parts) > 5 else ""
        elif parts[:1] == ["Rss:"]:
            n = int(parts[1]) * 1024
            if not current or current.startswith("["):
                anon += n
            elif Path(current).name == model.name:
                model_rss += n
            else:
                other += n
    return anon, model_rss, other


def run(case: Case, limit: int | None, tokens: int, timeout: float, files: list[Path]) -> Outcome:
    """One chat in a fresh cgroup (none of an earlier run's page cache charged to it), with
    every case's file out of the page cache first."""
    for f in files:
        drop_file_pages(f.resolve())
    cg = make_cgroup(f"{int(time.monotonic() * 1000)}")
    if cg is None:
        return Outcome(limit, False, problem="no cgroup")
    cg.limit(limit)
    spec = case.spec
    wrapped = (sys.executable, "-c", JOIN, str(cg.procs), *spec.argv)
    server = headless.serve(replace(spec, argv=wrapped), log_dir=SCRATCH)
    out = Outcome(limit, False)
    try:
        server.wait_ready(timeout)
        faults0 = cg.major_faults()
        read0, cpu0 = _io_and_cpu(server.process.pid)
        t0 = time.monotonic()
        status, body = headless.request(server.base_url, server.api_key, "/v1/chat/completions", {
            "messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens, "temperature": 0,
            "ignore_eos": True}, timeout=timeout)  # fmt: skip
        out.seconds = time.monotonic() - t0
        out.faults = cg.major_faults() - faults0
        read1, cpu1 = _io_and_cpu(server.process.pid)
        out.read, out.cpu_s = read1 - read0, cpu1 - cpu0
        timings = json.loads(body).get("timings") or {} if status == 200 else {}
        out.tokens_per_s = float(timings.get("predicted_per_second") or 0.0)
        out.tokens = int(timings.get("predicted_n") or 0) + int(timings.get("prompt_n") or 0)
        out.ok = status == 200 and out.tokens_per_s > 0
        if not out.ok:
            out.problem = f"HTTP {status}"
        if limit is None:
            anon, _model, other = _smaps_rss(server.process.pid, case.model.resolve())
            out.overhead = max(anon - case.buffers_anon, 0) + other
    except (headless.EngineError, OSError, ValueError) as exc:
        code = server.process.poll()
        out.problem = f"{type(exc).__name__}: exit {code}" if code is not None else f"{type(exc).__name__}: {exc}"[:200]
        if "timed out" in str(exc):
            out.problem = f"no reply in {timeout:.0f} s (crawling)"
    finally:
        out.peak = cg.peak()
        server.stop()
        cg.remove()
    return out


def untied_model(folder: Path) -> Path:
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    m = TinyModel(name="lazy-untied", n_embd=1024, n_layer=2, n_head=8, n_head_kv=4, n_ff=2048, dtype="Q8_0",
                  n_pieces=262144 - 259, tie_embeddings=False)  # fmt: skip
    return write_tiny_model(folder / "lazy-untied-Q8_0.gguf", m)[0]


def paired(arm: list[Outcome], base: list[Outcome], per_token: bool = False) -> float:
    """The median over rounds of the arm's speed over the baseline's in the same round (the
    machine is shared and its speed swings several-fold from minute to minute; runs next to
    each other see the same load). `per_token`: by the engine's processor time per token."""
    ratios = []
    for a, b in zip(arm, base, strict=False):
        if not a.ok:
            ratios.append(0.0)
        elif per_token:
            ratios.append(b.cpu_per_token / a.cpu_per_token if a.cpu_per_token else 0.0)
        else:
            ratios.append(a.tokens_per_s / b.tokens_per_s if b.tokens_per_s else 0.0)
    ratios.sort()
    return ratios[len(ratios) // 2] if ratios else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tokens", type=int, default=TOKENS)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the three runs")
    ap.add_argument("--timeout", type=float, default=240.0)
    args = ap.parse_args()
    probe = make_cgroup()
    if probe is None:
        print("No writable memory cgroup: the working set cannot be checked on this machine "
              "(prlimit --as limits the address space, which counts the whole mapped file).")
        return 2
    probe.remove()
    from draftwise.testing import realmodels

    failed = False
    try:
        # A private copy: another process mapping the shared file would keep its pages resident
        # and charged elsewhere, and the limit would not see them.
        gemma = SCRATCH / realmodels.GEMMA3_FILE
        shutil.copyfile(realmodels.gemma3_270m(), gemma)
        cases = [plan_case("gemma-3-270m Q4_K_M (real, tied head)", gemma, args.ctx),
                 plan_case("untied 262,144 x 1024 Q8_0 (generated)", untied_model(SCRATCH), args.ctx)]
        files = [c.model for c in cases]
        window = read_around(SCRATCH)
        print(f"read-around of a mapped file here: {window / MiB:.0f} MiB")
        for case in cases:
            ram = case.ram
            print(f"\n{case.name}, {args.ctx} cells: RAM planned {ram.total / MiB:.1f} MiB (weights "
                  f"{ram.weights / MiB:.1f}), lazy {ram.lazy / MiB:.1f} MiB, working set {case.working_set / MiB:.1f} "
                  f"MiB; file {case.model.stat().st_size / MiB:.1f} MiB")
            base = run(case, None, args.tokens, args.timeout, files)
            if not base.ok:
                print(f"  baseline failed: {base.problem}")
                failed = True
                continue
            margin = base.overhead + SLACK
            at = case.working_set + margin
            below = int(case.working_set * BELOW) + margin
            arms: dict[str, list[Outcome]] = {"none": [base], "at": [], "below": []}
            for r in range(args.rounds):
                if r:
                    arms["none"].append(run(case, None, args.tokens, args.timeout, files))
                arms["at"].append(run(case, at, args.tokens, args.timeout, files))
                arms["below"].append(run(case, below, args.tokens, args.timeout, files))
            speeds = ", ".join(f"{x.tokens_per_s:.1f}" for x in arms["none"])
            print(f"  no limit: {speeds} tokens/s, peak {base.peak / MiB:.1f} MiB, the engine's own memory "
                  f"{base.overhead / MiB:.1f} MiB -> margin {margin / MiB:.1f} MiB")
            for key, label, limit, want_ok in (("at", "working set + margin", at, True),
                                               ("below", f"{BELOW:.0%} of it + margin", below, False)):
                done = [x for x in arms[key] if x.ok]
                ratio = paired(arms[key], arms["none"])
                cpu_ratio = paired(arms[key], arms["none"], per_token=True)
                reads = max((x.read_per_token for x in done), default=0.0)
                if want_ok:
                    passed = len(done) == len(arms[key]) and reads <= window and (ratio >= NORMAL or cpu_ratio >= NORMAL)
                else:
                    passed = not done or ratio < CRAWL or min(x.read_per_token for x in done) > 2 * window
                failed |= not passed
                runs = "; ".join(f"{x.tokens_per_s:.1f} tokens/s, {x.read_per_token / 1024:.0f} KiB/token" if x.ok
                                 else x.problem or "failed" for x in arms[key])  # fmt: skip
                peak = max((x.peak for x in arms[key]), default=0)
                print(f"  {'ok  ' if passed else 'MISS'} limit {limit / MiB:.1f} MiB ({label}): {ratio:.2f}x the "
                      f"unlimited speed ({cpu_ratio:.2f}x by processor time), at most {reads / 1024:.0f} KiB read "
                      f"back per token [{runs}], peak {peak / MiB:.1f} MiB")
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
