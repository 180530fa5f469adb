"""The engine's own lines for every corpus row, kept in the repository as text.

`bench/real_models.py --record` writes one file per judged start into
tests/data/corpus-engine/: `<spec>-<mode>.log`, a few header lines (`# key: value`: the spec,
the mode, the engine build, the CPU and the CPU features the engine ran with, the described
machine the plan was made for, the engine's arguments) and then the lines of its log that
the judgement reads (`judge.relevant_lines`: buffer sizes per device, the KV cache's shape,
the draft context's start, the speculative implementations added, `build:` and
`system_info:`). `engine.json` beside them holds each mode's engine capabilities (its
`--help`, what the plan reads) and the build.

tests/test_corpus_recorded.py plans every row again, without the engine, against those
lines (`judge.replan`). `write` also writes the starts other tests read beside the rows
(engine_lines.py, tests/data/engine-lines/), with the same header.
"""

from __future__ import annotations

import json
import platform
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from draftwise.core.engines import capabilities
from draftwise.core.machine.hardware import Machine

RECORD_DIR = Path(__file__).resolve().parents[4] / "tests" / "data" / "corpus-engine"
ENGINE_FILE = "engine.json"
_HEADER = re.compile(r"^# (?P<key>[\w-]+): (?P<value>.*)$")
TITLE = "draftwise corpus-engine log: the engine's own lines for one corpus row (bench/real_models.py --record)"


@dataclass
class Recorded:
    spec: str  # the corpus spec iterated (the assistant's name for the target beside it)
    mode: str
    model: str  # the run's model ("gemma-4-26B-A4B-it + assistant")
    build: str
    machine: Machine
    lines: list[str]
    header: dict[str, str]
    path: Path


def file_name(spec_name: str, mode: str) -> str:
    return f"{spec_name}-{mode}.log"


def cpu_model() -> str:
    try:
        for ln in Path("/proc/cpuinfo").read_text().splitlines():
            if ln.startswith("model name"):
                return ln.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _system_info(lines: list[str]) -> str:
    return next((ln.split("system_info:", 1)[1].strip() for ln in lines if "system_info:" in ln), "")


def _build(lines: list[str]) -> str:
    return next((ln.split("print_info: ", 1)[1].strip() for ln in lines if "print_info: build " in ln), "")


def _machine_json(machine: Machine) -> dict[str, Any]:
    return {**machine.to_json(), "visible": list(machine.visible) if machine.visible is not None else None,
            "requested": list(machine.requested)}  # fmt: skip


def _machine(data: dict[str, Any]) -> Machine:
    visible, requested = data.pop("visible", None), data.pop("requested", [])
    return replace(Machine.from_json(data), visible=tuple(visible) if visible is not None else None,
                   requested=tuple(requested))  # fmt: skip


def write(folder: Path, spec_name: str, run: Any, engine: Path, *, name: str | None = None,
          title: str = TITLE, extra: dict[str, str] | None = None) -> Path:  # fmt: skip
    """One judged start's lines (`run`: a judge.Run with its engine_lines and machine), as
    `<spec>-<mode>.log` or `name`.log; `extra`: header lines after the argv (engine_lines.py
    says which test reads the start and at which geometry)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = list(run.engine_lines)
    header = {
        "spec": spec_name, "mode": run.mode, "model": run.model,
        "build": f"{engine.parent.name} (the engine says: {_build(lines) or '?'})",
        "cpu": f"{cpu_model()}; engine CPU module {run.cpu_variant}",
        "cpu-features": _system_info(lines) or "?",
        "machine": json.dumps(_machine_json(run.machine), sort_keys=True),
        "argv": " ".join(run.argv[1:]),
        **({"faulted": run.faulted} if getattr(run, "faulted", "") else {}),
        **(extra or {}),
    }  # fmt: skip
    text = f"# {title}\n"
    text += "".join(f"# {k}: {v}\n" for k, v in header.items()) + "".join(ln + "\n" for ln in lines)
    path = folder / (f"{name}.log" if name else file_name(spec_name, run.mode))
    path.write_text(text, encoding="utf-8")
    return path


def write_engine(folder: Path, caps: dict[str, capabilities.EngineCaps], engines: dict[str, Path]) -> Path:
    """Each mode's engine capabilities (what the plan reads from `--help`) and its build."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ENGINE_FILE
    # A refresh of some modes keeps the others' entries.
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    data.update({mode: {"engine": engines[mode].parent.name, "caps": c.to_json()} for mode, c in caps.items()})
    data = dict(sorted(data.items()))
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read(path: Path) -> Recorded:
    header: dict[str, str] = {}
    lines: list[str] = []
    for ln in path.read_text(encoding="utf-8").splitlines():
        m = _HEADER.match(ln)
        if m and not lines:
            header[m["key"]] = m["value"]
        elif not ln.startswith("# "):
            lines.append(ln)
    machine = _machine(json.loads(header["machine"]))
    return Recorded(header["spec"], header["mode"], header.get("model", header["spec"]), header["build"],
                    machine, lines, header, path)  # fmt: skip


def read_all(folder: Path = RECORD_DIR) -> list[Recorded]:
    return [read(p) for p in sorted(folder.glob("*.log"))]


def engine_caps(folder: Path = RECORD_DIR) -> dict[str, capabilities.EngineCaps]:
    data = json.loads((folder / ENGINE_FILE).read_text(encoding="utf-8"))
    out = {}
    for mode, d in data.items():
        c = d["caps"]
        out[mode] = capabilities.EngineCaps(frozenset(c["flags"]), frozenset(c["removed"]), tuple(c["spec_types"]),
                                            frozenset(c["mtp_archs"]))  # fmt: skip
    return out
