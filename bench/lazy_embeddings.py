"""Lazy embeddings under a memory limit (issue 21 item 6): the RAM fit's working set, checked by
the real engine in a memory cgroup (not a test: it needs a cgroup and takes a minute).

The plan counts a mapped row table (the token embedding) as the rows a context can touch,
unless the CPU's output head reads the table itself (core/planning/residency.py). Each case is
planned for this machine's processor (the CPU engine, its own CPU module), then run three
times, each a real chat (`/v1/chat/completions`, greedy, `TOKENS` tokens) with the model's
file pages dropped from the page cache before the start (so the cgroup is charged for them):

1. without a limit: the baseline speed, and the engine's own memory beyond its buffers (its
   code, tokenizer and heap: anonymous memory over the planned KV, compute and output, plus
   the libraries' pages), which is the margin;
2. under `limit = planned RAM working set + margin`: must complete at normal speed (at least
   `NORMAL` of the baseline's tokens/s);
3. under a limit well below it (`BELOW` of the working set, plus the margin): must fail or
   crawl (under `CRAWL` of the baseline), so the bound is not far over what the engine needs.

Cases: the real Gemma 3 270M Q4_K_M (tied head: on this CPU, without AMX, the head's logits
read every row, so the whole table is the working set), and a generated model with an untied
head and Gemma's table shape (262,144 x 1024 Q8_0, 272 MiB, two small blocks): its head has a
matrix of its own, and the table's untouched rows are not the working set.

The limit is a cgroup: a child of this process's memory cgroup (v1 `memory.limit_in_bytes`, v2
`memory.max`); the engine joins it before it starts (`python -c` writes its pid to
`cgroup.procs`, then execs the engine). Without a writable cgroup the script says so and exits
2: `prlimit --as` cannot stand in (it limits the address space, which counts the whole mapped
file, not what is resident).

Exits 1 when a run misses. Run: .venv/bin/python bench/lazy_embeddings.py [--tokens 48] [--ctx 4096]
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
BELOW = 0.6
SLACK = 32 * MiB  # on top of the measured margin: what the heap does between runs
TOKENS = 48
PROMPT = "Write a short paragraph about why the sea is salty."


def _engine_binary() -> Path:
    from draftwise.core.engines import provision

    build = provision.installed("cpu")
    if build is None:
        sys.exit("llama-server is not installed; run `draftwise engine install`")
    return build.binary


BINARY = _engine_binary()  # found before the data dir moves to a scratch folder
SCRATCH = Path(tempfile.mkdtemp(prefix="draftwise-bench-lazy-"))
os.environ["DRAFTWISE_DATA_DIR"] = str(SCRATCH / "data")

from draftwise.core.engines import capabilities  # noqa: E402
from draftwise.core.launch import headless, launch_spec, prepare  # noqa: E402
from draftwise.core.machine import hardware  # noqa: E402
from draftwise.core.planning import planner  # noqa: E402
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

    def reset_peak(self) -> None:
        if not self.v2:
            (self.path / "memory.max_usage_in_bytes").write_text("0")

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError as exc:
            print(f"could not remove {self.path}: {exc}")


def make_cgroup() -> Cgroup | None:
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
    path = base / f"draftwise-lazy-{os.getpid()}"
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
    def ram(self) -> planner.DeviceUse:
        return next(d for d in self.plan.per_device if d.kind == "cpu")

    @property
    def working_set(self) -> int:
        """What the plan says the RAM must hold while a chat runs: the start's working set
        and the checkpoints (the prompt cache is off: --cache-ram 0)."""
        return self.ram.working_set + self.plan.bytes.checkpoints

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
    overhead: int = 0  # the engine's own memory beyond the planned buffers (unlimited run)
    problem: str = ""


def plan_case(name: str, model: Path, ctx: int) -> Case:
    machine = hardware.inventory(BINARY, max_age=0)
    caps = capabilities.capabilities(BINARY)
    request = prepare.Request(model=model, mtp=resolver.MtpMode.OFF, extra_args=("--cache-ram", "0"),
                              prefs=planner.PlanPrefs(ctx=ctx, cpu_only=True))  # fmt: skip
    prepared = prepare.prepare(request, caps, machine)
    spec = prepared.launch(BINARY, port=launch_spec.any_free_port(), engine_backend="cpu")
    return Case(name, model, prepared.plan, spec)


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


def run(case: Case, cg: Cgroup, limit: int | None, tokens: int, timeout: float) -> Outcome:
    drop_file_pages(case.model.resolve())
    cg.limit(limit)
    cg.reset_peak()
    spec = case.spec
    wrapped = (sys.executable, "-c", JOIN, str(cg.procs), *spec.argv)
    server = headless.serve(replace(spec, argv=wrapped), log_dir=SCRATCH)
    out = Outcome(limit, False)
    try:
        server.wait_ready(timeout)
        t0 = time.monotonic()
        status, body = headless.request(server.base_url, server.api_key, "/v1/chat/completions", {
            "messages": [{"role": "user", "content": PROMPT}], "max_tokens": tokens, "temperature": 0,
            "ignore_eos": True}, timeout=timeout)  # fmt: skip
        out.seconds = time.monotonic() - t0
        timings = json.loads(body).get("timings") or {} if status == 200 else {}
        out.tokens_per_s = float(timings.get("predicted_per_second") or 0.0)
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
    return out


def untied_model(folder: Path) -> Path:
    from draftwise.testing.tinymodels import TinyModel, write_tiny_model

    m = TinyModel(name="lazy-untied", n_embd=1024, n_layer=2, n_head=8, n_head_kv=4, n_ff=2048, dtype="Q8_0",
                  n_pieces=262144 - 259, tie_embeddings=False)  # fmt: skip
    return write_tiny_model(folder / "lazy-untied-Q8_0.gguf", m)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--tokens", type=int, default=TOKENS)
    ap.add_argument("--ctx", type=int, default=4096)
    ap.add_argument("--timeout", type=float, default=240.0)
    args = ap.parse_args()
    cg = make_cgroup()
    if cg is None:
        print("No writable memory cgroup: the working set cannot be checked on this machine "
              "(prlimit --as limits the address space, which counts the whole mapped file).")
        return 2
    from draftwise.testing import realmodels

    failed = False
    try:
        cases = [plan_case("gemma-3-270m Q4_K_M (real, tied head)", realmodels.gemma3_270m(), args.ctx),
                 plan_case("untied 262,144 x 1024 Q8_0 (generated)", untied_model(SCRATCH), args.ctx)]
        for case in cases:
            ram = case.ram
            print(f"\n{case.name}: RAM planned {ram.total / MiB:.1f} MiB, lazy {ram.lazy / MiB:.1f} MiB, "
                  f"working set {case.working_set / MiB:.1f} MiB; file {case.model.stat().st_size / MiB:.1f} MiB")
            base = run(case, cg, None, args.tokens, args.timeout)
            if not base.ok:
                print(f"  baseline failed: {base.problem}")
                failed = True
                continue
            margin = base.overhead + SLACK
            print(f"  no limit: {base.tokens_per_s:.1f} tokens/s, peak {base.peak / MiB:.1f} MiB, "
                  f"the engine's own memory {base.overhead / MiB:.1f} MiB -> margin {margin / MiB:.1f} MiB")
            at = case.working_set + margin
            below = int(case.working_set * BELOW) + margin
            for label, limit, want_ok in (("working set + margin", at, True), (f"{BELOW:.0%} of it + margin", below, False)):
                o = run(case, cg, limit, args.tokens, args.timeout)
                ratio = o.tokens_per_s / base.tokens_per_s if o.ok else 0.0
                passed = (o.ok and ratio >= NORMAL) if want_ok else (not o.ok or ratio < CRAWL)
                failed |= not passed
                what = f"{o.tokens_per_s:.1f} tokens/s ({ratio:.2f}x)" if o.ok else o.problem
                print(f"  {'ok  ' if passed else 'MISS'} limit {limit / MiB:.1f} MiB ({label}): {what}, "
                      f"{o.seconds:.1f} s, peak {o.peak / MiB:.1f} MiB")
    finally:
        cg.remove()
        shutil.rmtree(SCRATCH, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
