"""The layer rule (core -> services -> viewmodels -> ui, no Qt in core) and the other import
rules are import-linter contracts (pyproject.toml), each proved able to fail."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> list[str]:
    exe = Path(sys.executable).with_name("lint-imports")
    return [str(exe)] if exe.exists() else [shutil.which("lint-imports") or "lint-imports"]


def _contracts() -> list[dict]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def _contract(name_start: str) -> dict:
    found = [c for c in _contracts() if c["name"].startswith(name_start)]
    assert len(found) == 1, f"one contract named {name_start!r}..., found {len(found)}"
    return found[0]


def test_import_contracts_hold():
    """Every contract in pyproject.toml is checked and kept (counted from the config, so a
    contract added or dropped cannot leave this test asserting an old number)."""
    out = subprocess.run(_lint_imports(), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    n = len(_contracts())
    assert n >= 7 and f"Contracts: {n} kept, 0 broken" in out.stdout
    text = " ".join(out.stdout.split())  # lint-imports wraps long names
    for contract in _contracts():
        assert f"{contract['name']} KEPT" in text


def _module_names(folder: Path, prefix: str) -> set[str]:
    """The modules and packages directly in `folder`, as dotted names."""
    out = {f"{prefix}.{p.stem}" for p in folder.glob("*.py") if p.stem != "__init__"}
    return out | {f"{prefix}.{p.name}" for p in folder.iterdir() if (p / "__init__.py").is_file()}


def test_core_top_level_modules_are_all_in_the_helper_contract():
    """core/*.py (the shared helpers) sit below every core subpackage; a new top-level module is
    held to that too (the chat is a package, core/chat, at the foot of the layers)."""
    helpers = _contract("Core's top-level modules")
    core = ROOT / "app" / "draftwise" / "core"
    top = {f"draftwise.core.{p.stem}" for p in core.glob("*.py") if p.stem != "__init__"}
    assert set(helpers["source_modules"]) == top
    assert set(helpers["forbidden_modules"]) == _module_names(core, "draftwise.core") - top


def test_every_app_package_is_kept_from_draftwise_testing():
    contract = _contract("App code never imports draftwise.testing")
    app = _module_names(ROOT / "app" / "draftwise", "draftwise") - {"draftwise.testing"}
    assert set(contract["source_modules"]) == app
    assert contract["forbidden_modules"] == ["draftwise.testing"]


def _lint_copy_with(tmp_path: Path, rel: str, text: str) -> subprocess.CompletedProcess[str]:
    """lint-imports on a copy of the tree with one planted file (the checkout stays untouched)."""
    shutil.copytree(ROOT / "app", tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "app" / rel).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "app")}
    return subprocess.run(_lint_imports(), cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env=env)


def test_contract_catches_qt_in_core(tmp_path):
    """A Qt import planted in core must break the contract (the check can fail)."""
    out = _lint_copy_with(tmp_path, "draftwise/core/_planted_qt_import.py",
                          "import PySide6.QtCore  # noqa: F401\n")
    assert out.returncode != 0
    assert "core stays pure Python (no Qt) BROKEN" in out.stdout


def test_contract_catches_an_upward_import_inside_core(tmp_path):
    """The GGUF reader importing the launcher breaks the layers inside core."""
    out = _lint_copy_with(tmp_path, "draftwise/core/gguf/_planted.py",
                          "from draftwise.core.launch import crash  # noqa: F401\n")
    assert out.returncode != 0
    assert "Inside core: each subpackage uses only those below it BROKEN" in out.stdout


def test_measurements_sit_below_launch_and_measuring_above():
    """Measurement is two rooms (issues 28 and 36): core/measurements, what was measured (data
    and stores the launch session reads), below core/launch; core/measuring, the runs that start
    engines through it, above. The other computers (core/rpc) sit between launch and machine."""
    layers = [{name.strip() for name in layer.split("|")}
              for layer in _contract("Inside core: each subpackage uses only those below it")["layers"]]
    level = {name: i for i, layer in enumerate(layers) for name in layer}
    assert level["measuring"] < level["launch"] < level["measurements"] < level["speculation"]
    assert level["launch"] < level["rpc"] < level["machine"]
    core = ROOT / "app" / "draftwise" / "core"
    assert not (core / "measuring" / "records").exists() and not (core / "measuring" / "runs").exists()
    assert {"arms", "sweep", "quick"} <= {p.stem for p in (core / "measuring").glob("*.py")}
    assert {"measured", "measurement", "live_figures"} <= {p.stem for p in (core / "measurements").glob("*.py")}
    moved = {"arms", "measure", "quick", "sweep", "live_figures", "share",
             "measured", "measurement", "sweep_record"}
    assert not moved & {p.stem for p in (core / "launch").glob("*.py")}
    assert not moved & {p.stem for p in (core / "speculation").glob("*.py")}


def test_contract_catches_a_measurement_record_importing_the_launch(tmp_path):
    """A record importing core/launch would cycle with the launch session that reads it."""
    out = _lint_copy_with(tmp_path, "draftwise/core/measurements/_planted.py",
                          "from draftwise.core.launch import prepare  # noqa: F401\n")
    assert out.returncode != 0
    assert "Inside core: each subpackage uses only those below it BROKEN" in out.stdout


def test_contract_catches_the_launch_importing_a_measurement_run(tmp_path):
    out = _lint_copy_with(tmp_path, "draftwise/core/launch/_planted.py",
                          "from draftwise.core.measuring import arms  # noqa: F401\n")
    assert out.returncode != 0
    assert "Inside core: each subpackage uses only those below it BROKEN" in out.stdout


def test_contract_catches_app_code_importing_the_test_helpers(tmp_path):
    """A view-model importing draftwise.testing (tiny models, the hub stand-in) breaks it."""
    out = _lint_copy_with(tmp_path, "draftwise/viewmodels/_planted.py",
                          "from draftwise.testing import tinymodels  # noqa: F401\n")
    assert out.returncode != 0
    assert "App code never imports draftwise.testing BROKEN" in out.stdout


def test_contract_catches_the_chat_importing_a_core_subpackage(tmp_path):
    out = _lint_copy_with(tmp_path, "draftwise/core/chat/protocol.py",
                          (ROOT / "app/draftwise/core/chat/protocol.py").read_text(encoding="utf-8")
                          + "\nfrom draftwise.core.launch import crash  # noqa: E402,F401\n")
    assert out.returncode != 0
    assert "Inside core: each subpackage uses only those below it BROKEN" in out.stdout


def test_contract_catches_the_selftest_importing_the_gui(tmp_path):
    """The self-test gets its window from the caller; importing the GUI breaks the contract."""
    out = _lint_copy_with(tmp_path, "draftwise/selftest.py",
                          (ROOT / "app/draftwise/selftest.py").read_text(encoding="utf-8")
                          + "\nfrom draftwise.gui import create_window  # noqa: E402,F401\n")
    assert out.returncode != 0
    assert "The self-test imports no GUI (its caller hands it the window to paint) BROKEN" in out.stdout


# A widget or view-model module longer than this is doing several jobs: split it (one card,
# one view-model per module; see ui/model_page.py and viewmodels/replan.py).
MAX_MODULE_LINES = 500


def test_no_window_or_viewmodel_module_is_too_long():
    long_ones = {}
    for folder in ("ui", "viewmodels"):
        for path in sorted((ROOT / "app" / "draftwise" / folder).glob("*.py")):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                long_ones[str(path.relative_to(ROOT))] = lines
    assert not long_ones, f"over {MAX_MODULE_LINES} lines: {long_ones}"


# Every module in app/ (core, services, cli, testing too): at most this many lines, split by
# what each part decides (issue 28). The ones still over it may not grow, and leave this list
# once they are split.
MAX_APP_MODULE_LINES = 600
STILL_OVER = {
}


def test_no_app_module_is_over_the_cap_and_none_still_over_grows():
    over = {}
    for path in sorted((ROOT / "app" / "draftwise").rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_APP_MODULE_LINES:
            over[str(path.relative_to(ROOT))] = lines
    new = {k: v for k, v in over.items() if k not in STILL_OVER}
    grown = {k: (v, STILL_OVER[k]) for k, v in over.items() if k in STILL_OVER and v > STILL_OVER[k]}
    split = sorted(set(STILL_OVER) - set(over))
    assert not new, f"over {MAX_APP_MODULE_LINES} lines: {new}"
    assert not grown, f"grew (lines now, allowed): {grown}"
    assert not split, f"under the cap now, take them off STILL_OVER: {split}"


def test_no_shell_and_no_swallowed_errors():
    offenders = []
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for bad in ("shell=True", "os.system(", "except:\n"):
            if bad in text:
                offenders.append(f"{path.relative_to(ROOT)}: {bad!r}")
    assert not offenders, offenders


# ------------------------------------------------------------------ no import cycle
def _runtime_imports(path: Path, module: str, package: str) -> set[str]:
    """Every draftwise module `module` imports when it runs: at the top and inside functions
    (a lazy import still makes a cycle); imports under `if TYPE_CHECKING:` are type hints."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    hints: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            hints |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hints:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([base] if base else [])])
            out |= {base, *(f"{base}.{a.name}" for a in node.names)}
    return {name for name in out if name.startswith("draftwise")} - {module}


def import_cycles(root: Path) -> list[list[str]]:
    """The sets of draftwise modules under `root` that import one another, round and round."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {m for m in map(owner, _runtime_imports(path, name, package)) if m and m != name}
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_import_cycle_not_even_inside_functions():
    assert import_cycles(ROOT / "app" / "draftwise") == []


def test_the_cycle_check_sees_a_lazy_import(tmp_path):
    pkg = tmp_path / "draftwise"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from draftwise import b\n")
    (pkg / "b.py").write_text("def f():\n    from draftwise.a import x\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from draftwise import a\n")
    assert import_cycles(pkg) == [["draftwise.a", "draftwise.b"]]


def test_only_the_launch_session_calls_prepare():
    """core/launch/session.py is the one place a request meets the machine's records; the
    app, the test helpers and the benches plan through it (issue 28: five modules called
    prepare.prepare beside it, one copying the session's engine-fix lookup)."""
    callers = []
    for folder in ("app", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "session.py" and path.parent.name == "launch":
                continue
            if "prepare.prepare(" in path.read_text(encoding="utf-8"):
                callers.append(str(path.relative_to(ROOT)))
    assert callers == [], callers


def test_only_the_launch_flow_writes_an_engines_outcome():
    """core/launch/launch_flow.py is the one writer of a running engine's EngineOutcome (issue
    36), core/serving/serve_flow.py of each served model's: the drivers pass it on, the view-models, the CLI and the UI read it. The outcome is
    frozen, so a writer has to make a new one: EngineOutcome(...) or dataclasses.replace."""
    import ast

    writers = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            replaced = ast.unparse(node.args[0]) if name == "replace" and node.args else ""
            if name == "EngineOutcome" or "outcome" in replaced:
                writers.append(str(path.relative_to(ROOT / "app")))
    # outcome.py makes the one empty outcome (NOTHING: no engine launched); core/serving/
    # serve_flow.py is the one writer of each served model's outcome (one per model, issue 36).
    assert sorted(set(writers)) == ["draftwise/core/launch/launch_flow.py", "draftwise/core/launch/outcome.py",
                                    "draftwise/core/serving/serve_flow.py"], writers


def test_the_engine_stage_has_one_definition():
    """The launch stages are core/launch/outcome.py's `Stage`: no other app module compares
    with, or names, a stage by its word (issue 36: the view-model, the status bar, the tray
    and the theme each spelt them)."""
    import ast

    words = {"idle", "starting", "loading", "ready", "stopping", "stopped", "failed"}
    found = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        if path.name == "outcome.py" and path.parent.name == "launch":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            said: list[ast.expr] = []
            if isinstance(node, ast.Compare):  # x == "ready", x in ("starting", "loading")
                for op, side in zip(node.ops, node.comparators, strict=True):
                    if isinstance(op, (ast.Eq, ast.NotEq)):
                        said += [node.left, side]
                    elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(side, (ast.Tuple, ast.Set, ast.List)):
                        said += side.elts
            elif isinstance(node, ast.Dict):  # a map keyed by the stages (the theme's colours were)
                keys = [k for k in node.keys if isinstance(k, ast.Constant) and k.value in words]
                said += keys if len(keys) >= 3 else []
            elif isinstance(node, ast.Tuple):  # IDLE, STARTING, ... = ("idle", "starting", ...)
                elts = [e for e in node.elts if isinstance(e, ast.Constant) and e.value in words]
                said += elts if len(elts) >= 3 else []
            found += [f"{path.relative_to(ROOT / 'app')}:{n.lineno} {n.value!r}" for n in said
                      if isinstance(n, ast.Constant) and n.value in words]
    assert found == [], found


def _classes_defined_twice(root: Path) -> dict[str, list[str]]:
    """Class name -> the modules defining it, where more than one does (test helpers aside)."""
    where: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel.parts[0] == "testing":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(rel.as_posix())
    return {name: places for name, places in where.items() if len(places) > 1}


def test_every_class_name_is_defined_once(tmp_path):
    """Issue 36: a name read in a traceback or a grep names one class. A copy of the tree with
    a second `Outcome` beside the launch's proves the check can fail."""
    assert _classes_defined_twice(ROOT / "app" / "draftwise") == {}
    (tmp_path / "a.py").write_text("class EngineOutcome:\n    pass\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("class EngineOutcome:\n    pass\n", encoding="utf-8")
    assert _classes_defined_twice(tmp_path) == {"EngineOutcome": ["a.py", "b.py"]}
