"""Judged before download (issue 27 item 7): every corpus model served from a loopback hub,
its header read over HTTP ranges (core/hub/remote.py) and judged (core/hub/judge.py), set
beside the local plan of the same file.

The corpus (app/draftwise/testing/corpus: published geometries as sparse GGUF files with the
real converter's and llama-quantize's headers) is served by `HubStub`, one repository per
model as the hub names them (`<publisher>/<model>-GGUF`; the family drafters under the
repositories `core/hub/catalog.py` looks them up in, the Gemma 4 assistant beside its model),
plus a 10-file repository: gemma-3-12b-it in ten quantizations (the largest vocabulary among
the families with a drafter, so the drafter's token list is read and compared too), and the
real Gemma 3 270M download where the tests fetched it before (never fetched here). The plans
use the engine `draftwise plan` finds (cli/main.py `_engine_caps`). Printed, measured side
by side in one run:

- per file: header bytes read over the network / file size; target ≤ 1 % for every file of
  100 MB or more. A file whose header alone is over 1 % of it (a small model with a big
  vocabulary) is listed as what it is, with its header's own size;
- the time to judge the 10-file repository over loopback (listing, headers, family drafter,
  ten plans): cold (empty header cache, parsed headers forgotten) and warm (a second run);
- that each verdict is the local plan of the same file: the corpus files of its repository
  in one folder, with the family's draft model (catalog.drafter_for) and the projector the
  verdict chose beside them, planned by `session.plan_launch`; `Prepared.to_json()` compared
  after the folders are normalised, and planned bytes, context, fit, speculation kind and
  drafter.

The measured header sizes are in docs/get-models.md ("Judged before download: header sizes").
The machine is described (64 GB of RAM, no GPU) and the data, config and cache folders are
a temporary home's, so neither this computer nor the user's records change a verdict.

    .venv/bin/python bench/hub_judge.py [--only NAME ...] [--rounds 3] [--json OUT]

Exit status 1 when a verdict differs from the local plan, when a file of 100 MB or more has
more than 1 % of it fetched while its header is under 1 %, or when judging the 10-file
repository cold takes more than 10 s (the median of the rounds).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from draftwise.testing.corpus import build, registry
from draftwise.testing.corpus.spec import ModelSpec

MB = 1_000_000
BIG = 100 * MB  # files this large are held to the 1 % target
SHARE = 0.01
COLD_S = 10.0
# The 10-file repository: one model in the quantizations a quants repository publishes.
QUANTS_MODEL = "gemma-3-12b-it"
QUANTS_REPO = "bench/gemma-3-12b-it-GGUF"
QUANTS = ("Q2_K", "Q3_K_M", "Q3_K_L", "Q4_0", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "Q8_0")
REAL_REPO = "bench/gemma-3-270m-it-real-GGUF"
MACHINE = {"ram_gb": 64, "gpus": []}


@dataclasses.dataclass
class Served:
    """One corpus file on the stand-in hub."""

    label: str  # the corpus model (and quant)
    repo: str
    path: str  # its name in the repository
    source: Path  # the local sparse corpus file
    stub: Any = None  # its StubFile (bytes served)


def hub_repo(spec: ModelSpec) -> str:
    """Where the hub publishes the model's GGUF; a family drafter where catalog looks for it."""
    from draftwise.core.hub import catalog

    for d in (catalog.QWEN25_DRAFT, catalog.GEMMA3_DRAFT):
        if d.repo.split("/")[1].removesuffix("-GGUF").lower() == spec.name.lower():
            return d.repo
    owner = registry.get(spec.companion_of) if spec.companion_of else spec
    return f"{owner.repo.split('/')[0]}/{owner.name}-GGUF"


def with_drafters(specs: list[ModelSpec]) -> list[ModelSpec]:
    """`specs` and what a download puts beside them: a companion (the Gemma 4 assistant) and
    the family's drafter (catalog.drafter_for), so `--only` judges them as the whole corpus does."""
    from draftwise.core.hub import catalog

    out, names = list(specs), {s.name for s in specs}
    for s in specs:
        family = catalog.drafter_for(hub_repo(s), s.name)
        for x in registry.all_models():
            if x.name not in names and (x.companion_of == s.name or (family and hub_repo(x) == family.repo)):
                out.append(x)
                names.add(x.name)
    return out


def generate_all(specs: list[ModelSpec], quants: bool) -> tuple[list[Served], list[str]]:
    """The corpus files (and the 10 quants), generated into the corpus cache; what could not be."""
    served: list[Served] = []
    failed: list[str] = []
    for spec in specs:
        try:
            path = build.generate(spec)
        except Exception as exc:  # noqa: BLE001 - a model that cannot be written is reported, not judged
            failed.append(f"{spec.name}: {type(exc).__name__}: {exc}")
            continue
        served.append(Served(spec.name, hub_repo(spec), f"{spec.file_stem}.gguf", path))
    if quants:
        base = registry.get(QUANTS_MODEL)
        for q in QUANTS:
            spec = dataclasses.replace(base, quant=q)
            try:
                path = build.generate(spec)
            except Exception as exc:  # noqa: BLE001
                failed.append(f"{spec.name} {q}: {type(exc).__name__}: {exc}")
                continue
            served.append(Served(f"{spec.name} {q}", QUANTS_REPO, f"{spec.file_stem}.gguf", path))
    # The real Gemma 3 270M download, where the tests fetched it once (never fetched here): its
    # header against the corpus file's of the same model.
    from draftwise.testing import realmodels

    real = realmodels.cache_dir() / realmodels.GEMMA3_FILE
    if real.is_file():
        served.append(Served("gemma-3-270m-it (the real download)", REAL_REPO, "gemma-3-270m-it-Q4_K_M.gguf", real))
    return served, failed


def own_home(root: Path) -> None:
    """Data, config, cache, models and huggingface_hub's folders under `root` (tests/conftest.py
    `_own_folders`), and HOME/XDG with them; the corpus cache stays where it is."""
    from draftwise.testing import realmodels

    os.environ["DRAFTWISE_REAL_MODELS"] = str(realmodels.cache_dir())
    for var, name in (("DRAFTWISE_DATA_DIR", "data"), ("DRAFTWISE_CONFIG_DIR", "config"),
                      ("DRAFTWISE_CACHE_DIR", "cache"), ("DRAFTWISE_MODELS_DIR", "models"),
                      ("HF_HOME", "huggingface"), ("XDG_DATA_HOME", "xdg-data"),
                      ("XDG_CONFIG_HOME", "xdg-config"), ("XDG_CACHE_HOME", "xdg-cache")):  # fmt: skip
        os.environ[var] = str(root / name)
    os.environ["HOME"] = str(root)
    os.environ.pop("HF_TOKEN", None)


def _place(src: Path, dest: Path) -> None:
    """The corpus file under its hub name: a hard link, else a sparse copy (header, then hole)."""
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.hub import remote

    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        remote.copy_sparse(src, dest, gguf.read_header(src).data_offset)


def _normalised(value: Any, folders: dict[str, str]) -> Any:
    if isinstance(value, str):
        for folder, name in folders.items():
            value = value.replace(folder, name)
        return value
    if isinstance(value, dict):
        return {k: _normalised(v, folders) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalised(v, folders) for v in value]
    return value


def _diff(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (the first few)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for k in sorted(set(a) | set(b)):
            out += _diff(a.get(k), b.get(k), f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _diff(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: judged {a!r} / local {b!r}"]


def local_check(verdict, by_hub: dict[tuple[str, str], Served], layout: Path, engine, machine) -> list[str]:
    """The verdict against the local plan of the same corpus file in a folder holding its
    repository's files and the family's draft model (what a download may put beside it); the
    differences (none when they agree)."""
    from draftwise.core.errors import FieldError
    from draftwise.core.hub import catalog, judge
    from draftwise.core.launch import prepare, session

    m = verdict.model
    folder = layout.joinpath(*m.repo.split("/"), m.name.removesuffix(".gguf"))
    shutil.rmtree(folder, ignore_errors=True)
    model_path = folder / m.name
    own = [(repo, path) for repo, path in by_hub if repo == m.repo]
    families = {d.repo for d in (catalog.drafter_for(m.repo, path) for _, path in own) if d is not None}
    laid = [*own, *((r, p) for r, p in by_hub if r in families)]
    for repo, path in laid:
        _place(by_hub[(repo, path)].source, folder / path.rsplit("/", 1)[-1])
    d = verdict.drafter_model
    if d is not None and (d.repo, d.first.path) not in laid:
        return [f"the drafter {d.repo}:{d.first.path} is not in the repository's folder"]
    if verdict.projector is not None:
        p = verdict.projector
        _place(by_hub[(m.repo, p.path)].source, folder / p.path.rsplit("/", 1)[-1])
    folders = {str(folder): "<folder>"}
    if verdict.local is not None:
        folders[str(verdict.local.parent)] = "<folder>"
    try:
        planned = session.plan_launch(prepare.Request(model=model_path), engine, machine, session.Records.none())
    except FieldError as exc:
        if verdict.error is not None and _normalised(str(exc.message), folders) == _normalised(str(verdict.error),
                                                                                               folders):
            return []
        return [f"local plan refused: {exc.message}; judged: {verdict.error or 'planned'}"]
    if verdict.error is not None:
        return [f"judged refused: {verdict.error}; the local plan planned it"]
    prepared = planned.prepared
    plan, spec = prepared.plan, prepared.spec
    out = _diff(_normalised(verdict.plan_json, folders), _normalised(prepared.to_json(), folders), "to_json")
    for what, judged, local in (("planned_bytes", verdict.planned_bytes, plan.bytes.total),
                                ("context", verdict.context, plan.ctx), ("fits", verdict.fits, plan.fits),
                                ("fit_state", verdict.fit_state, plan.fit_state),
                                ("speculation", verdict.speculation, judge.speculation_kind(spec)),
                                ("drafter", verdict.drafter_model.first.path.rsplit("/", 1)[-1]
                                 if verdict.drafter_model else None, Path(spec.draft).name if spec.draft else None)):  # fmt: skip
        if judged != local:
            out.append(f"{what}: judged {judged!r} / local {local!r}")
    return out


def clear_caches() -> None:
    """An empty header cache and no parsed headers: a first judgement."""
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.hub import judge, remote

    shutil.rmtree(remote.headers_dir(), ignore_errors=True)
    shutil.rmtree(judge.judged_dir(), ignore_errors=True)
    gguf.clear_header_cache()


def _pct(x: float) -> str:
    return f"{x:.2%}" if x >= 0.0001 else f"{x:.4%}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="corpus models whose name contains one of these words")
    ap.add_argument("--rounds", type=int, default=3, help="cold and warm judgements of the 10-file repository")
    ap.add_argument("--json", type=Path, help="write the verdicts and measurements here")
    args = ap.parse_args(argv)

    t_all = time.monotonic()
    specs = [s for s in registry.all_models() if not args.only or any(w in s.name for w in args.only)]
    specs = with_drafters(specs)
    quants = not args.only or any(w in QUANTS_MODEL for w in args.only)
    g0 = time.monotonic()
    served, failed = generate_all(specs, quants)
    gen_s = time.monotonic() - g0

    # The engine as `draftwise plan` finds it, found before the home moves (its folder is there).
    from draftwise.cli.main import _engine_caps

    binary, caps, backend = _engine_caps(None)
    home = Path(tempfile.mkdtemp(prefix="draftwise-hub-judge-"))
    layout = Path(tempfile.mkdtemp(prefix="hub-judge-layout-", dir=build.corpus_dir()))
    own_home(home)
    try:
        return _run(args, served, failed, gen_s, binary, caps, backend, layout, quants, t_all)
    finally:
        shutil.rmtree(layout, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)


def _run(args, served: list[Served], failed: list[str], gen_s: float, binary, caps, backend, layout: Path,
         quants: bool, t_all: float) -> int:  # fmt: skip
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.hub import client, judge
    from draftwise.core.launch import session
    from draftwise.core.machine import machine_types, speed
    from draftwise.testing.hubstub import HubStub

    machine_file = Path(os.environ["HOME"]) / "machine.json"
    machine_file.write_text(json.dumps(MACHINE), encoding="utf-8")
    machine = machine_types.load_machine(machine_file)
    engine = session.Engine(Path(binary), caps, backend)
    rate = speed.Throughput(20e9, "described", 4)
    misses: list[str] = []
    report: dict[str, Any] = {"machine": MACHINE, "engine": str(binary), "not_generated": failed}

    with HubStub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        for s in served:
            size = s.source.stat().st_size
            # A stand-in sha256 (hashing hundreds of GB of hole would only slow the bench).
            sha = hashlib.sha256(f"{s.source.name}:{size}".encode()).hexdigest()
            s.stub = hub.add_sparse(s.repo, s.path, s.source, sha256=sha)
        by_hub = {(s.repo, s.path): s for s in served}
        repos = list(dict.fromkeys(s.repo for s in served))
        print(f"{len(served)} files in {len(repos)} repositories on {hub.url} (generated or found in "
              f"{gen_s:.1f} s); engine {binary} ({backend}); machine {MACHINE}")  # fmt: skip

        # -- the 10-file repository, cold then warm, in rounds
        timings: list[tuple[float, float]] = []
        warm_bytes = 0  # fetched by a warm run (the header copies are kept: none)
        load = os.getloadavg()[0]
        if quants and any(s.repo == QUANTS_REPO for s in served):
            for _ in range(max(1, args.rounds)):
                clear_caches()
                t0 = time.perf_counter()
                cold = judge.Judge(machine, engine, rate).judge_listing(client.list_models(QUANTS_REPO))
                t1 = time.perf_counter()
                sent = sum(s.stub.served for s in served)
                warm = judge.Judge(machine, engine, rate).judge_listing(client.list_models(QUANTS_REPO))
                t2 = time.perf_counter()
                timings.append((t1 - t0, t2 - t1))
                warm_bytes = max(warm_bytes, sum(s.stub.served for s in served) - sent)
                if [v.to_json() for v in cold] != [v.to_json() for v in warm]:
                    misses.append(f"{QUANTS_REPO}: the warm verdicts differ from the cold ones")

        # -- every repository, from an empty header cache: each file's header fetched once
        clear_caches()
        for s in served:
            s.stub.served, s.stub.requests[:] = 0, []
        verdicts = []
        for repo in repos:
            verdicts += judge.Judge(machine, engine, rate).judge_listing(client.list_models(repo))

    # -- bytes per file
    print(f"\n{'file':48} {'size':>10} {'header':>9} {'fetched':>9} {'req':>4} {'hdr/file':>9} "
          f"{'fetched/file':>12}")  # fmt: skip
    over_by_header: list[str] = []
    rows = []
    for s in served:
        size = s.source.stat().st_size
        header = gguf.read_header(s.source).data_offset
        fetched, reqs = s.stub.served, len(s.stub.requests)
        state = ""
        if size >= BIG and fetched > SHARE * size:
            if header > SHARE * size:
                state = "header alone over 1 %"
                over_by_header.append(f"{s.label} ({size / MB:.0f} MB): header {header / MB:.2f} MB = "
                                      f"{header / size:.2%} of the file")  # fmt: skip
            else:
                state = "MISS: fetch overshoots"
                misses.append(f"{s.label}: fetched {fetched / MB:.2f} MB = {fetched / size:.2%} of {size / MB:.0f} MB "
                              f"(header {header / size:.2%})")  # fmt: skip
        elif size < BIG:
            state = "(under 100 MB)"
        rows.append({"file": f"{s.repo}/{s.path}", "size": size, "header": header, "fetched": fetched,
                     "requests": reqs})  # fmt: skip
        print(f"{s.label:48} {size / 2**30:6.2f} GiB {header / MB:6.2f} MB {fetched / MB:6.2f} MB {reqs:4} "
              f"{_pct(header / size):>9} {_pct(fetched / size):>12}  {state}")  # fmt: skip
    report["files"] = rows

    # -- verdicts against the local plans
    print(f"\n{'model':48} {'fits':>8} {'context':>8} {'planned':>10} {'speculation':14} local plan")
    same = 0
    out_verdicts = []
    for v in verdicts:
        own = sum(by_hub[(v.model.repo, f.path)].stub.served for f in v.model.files)
        problems = local_check(v, by_hub, layout, engine, machine)
        if v.header_bytes != own:
            problems.append(f"header_bytes {v.header_bytes} but the hub served {own}")
        label = by_hub[(v.model.repo, v.model.first.path)].label
        spec = v.speculation + (f" ({v.drafter_name})" if v.drafter_name else "")
        if v.error is not None:
            line = f"{label:48} not judged: {v.error}"
        else:
            line = (f"{label:48} {v.fit_state:>8} {v.context:8} {v.planned_bytes / 2**30:6.2f} GiB "
                    f"{spec:14}")  # fmt: skip
        print(f"{line} {'identical' if not problems else 'DIFFERS'}")
        for p in problems[:6]:
            print(f"    {p}")
        if problems:
            misses.append(f"{label}: the verdict differs from the local plan ({problems[0]})")
        else:
            same += 1
        out_verdicts.append({**v.to_json(), "repo": v.model.repo, "local_plan": "identical" if not problems
                             else problems})  # fmt: skip
    report["verdicts"] = out_verdicts

    # -- summary
    kinds = [v.speculation for v in verdicts if v.error is None]
    print(f"\n{same} of {len(verdicts)} verdicts identical to the local plan of the same file ("
          + ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))) + ")")
    big = [r for r in rows if r["size"] >= BIG]
    if big:
        worst = max(big, key=lambda r: r["fetched"] / r["size"])
        print(f"{len(big)} files of 100 MB or more: worst fetched/file {worst['fetched'] / worst['size']:.2%} "
              f"({worst['file']}); fetched/header {min(r['fetched'] / r['header'] for r in big):.2f}-"
              f"{max(r['fetched'] / r['header'] for r in big):.2f}×")  # fmt: skip
    print(f"files of 100 MB or more whose header alone is over 1 % of them: {len(over_by_header) or 'none'}")
    for line in over_by_header:
        print(f"  {line}")
    if timings:
        cold_s = statistics.median(t[0] for t in timings)
        warm_s = statistics.median(t[1] for t in timings)
        print(f"judging {QUANTS_REPO} (10 files, cold: empty header cache): median {cold_s:.2f} s of "
              f"{len(timings)} ({', '.join(f'{t[0]:.2f}' for t in timings)}); warm: median {warm_s:.2f} s "
              f"({', '.join(f'{t[1]:.2f}' for t in timings)}), {warm_bytes} bytes fetched; load average "
              f"{load:.1f} before")  # fmt: skip
        if warm_bytes:
            misses.append(f"{QUANTS_REPO}: a warm run fetched {warm_bytes} bytes again")
        report["ten_file_repo"] = {"cold_s": [t[0] for t in timings], "warm_s": [t[1] for t in timings]}
        if cold_s > COLD_S:
            misses.append(f"{QUANTS_REPO}: judged cold in {cold_s:.2f} s (target {COLD_S:.0f} s)")
    elif quants:
        misses.append(f"{QUANTS_REPO}: not served (its files could not be generated)")
    for f in failed:
        print(f"not generated: {f}")
    print(f"{time.monotonic() - t_all:.0f} s in all; {len(misses)} missed")
    for m in misses:
        print(f"  missed: {m}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
