"""Issue 36, "argv as data": no module in app/ parses argv that Draftwise wrote.

What Draftwise passes the engine (the plan's options, the speculation, fixes, measured
settings, the workers) is data (`Plan.plan_options`, `SpecDecision.lengths`/`p_min`,
`EngineSettings`, `LaunchSpec.options`/`settings`/`workers`), rendered to argv once
(`engine_args.render`); only the user's own extra arguments are read as argv (refused, read
into the plan, read into the launch's options once, in `llamacpp.build_options`). The code
is read for every call of core/engines/args.py's readers, and each must sit in a function
that reads the user's arguments: a new reader fails here until it is named below, with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from draftwise.core.engines import args as engine_args
from draftwise.core.engines.engine_settings import EngineSettings
from draftwise.core.engines.spec_types import DRAFT_N_MAX, DRAFT_P_MIN
from draftwise.core.launch import launch_spec
from draftwise.core.serving import preset
from draftwise.core.speculation import resolver

APP = Path(__file__).resolve().parents[1] / "app" / "draftwise"
READERS = frozenset({"value_of", "sets", "options", "without", "flag_name", "canonical", "_inline_value",
                     "read_options", "engine_form"})
# module:function -> whose argv it reads.
ALLOWED = {
    # The user's extra arguments: refused where they re-specify what a field owns.
    "core.speculation.resolver:check_extra_args": "the user's",
    "core.speculation.resolver:user_spec_type": "the user's",
    "core.speculation.resolver:_split_mode_tensor": "the user's",
    "core.launch.launch_spec:check_owned_flags": "the user's",
    # ... read into the plan's inputs (docs/launch-path.md).
    "core.launch.owned_args:read": "the user's",
    "core.planning.extra_args:_int_arg": "the user's (with_engine_args, trained_context)",
    "core.planning.extra_args:trained_context": "the user's",
    "core.planning.extra_args:engine_inputs": "the user's",
    "core.planning.extra_args:with_engine_args": "the user's",
    "core.launch.prepare:_repack_read": "the user's",
    # ... and left to them: a setting they gave is never doubled.
    "core.launch.prepare:_apply_measurement": "the user's (their flag names, for measured.decide)",
    "core.measurements.measured:_user_sets": "the user's",
    "core.engines.engine_settings:EngineSettings.without": "the user's",
    "core.speculation.field_settings:mtp_setting": "the user's",
    "core.measuring.quick:candidates": "the user's (prepared.extra_args)",
    "core.measuring.quick:second_stage": "the user's (prepared.extra_args)",
    "core.measuring.quick:_ngram_length": "the user's (prepared.extra_args)",
    "core.measuring.sweep:_user_sets": "the user's (prepared.extra_args)",
    "core.measuring.tuning:dimensions": "the user's (prepared.extra_args)",
    # ... and read into options, once, where they join ours (the launch's options are data;
    # the one render of them is engine_args.render).
    "core.launch.llamacpp:build_options": "the user's (read_options)",
}


def _readers_in(module: str, source: str) -> set[str]:
    """module:function for each function of `source` that calls one of engine_args' readers."""
    found: set[str] = set()
    tree = ast.parse(source)
    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               and n.module == "draftwise.core.engines" for a in n.names if a.name == "args"}
    direct = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
              and n.module == "draftwise.core.engines.args" for a in n.names if a.name in READERS}

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, (*scope, child.name))
                continue
            if isinstance(child, ast.Call):
                f = child.func
                if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in aliases
                        and f.attr in READERS) or (isinstance(f, ast.Name) and f.id in direct):
                    found.add(f"{module}:{'.'.join(scope) or '<module>'}")
            visit(child, scope)

    visit(tree, ())
    return found


def _readers_called() -> set[str]:
    found: set[str] = set()
    for path in sorted(APP.rglob("*.py")):
        module = path.relative_to(APP).with_suffix("").as_posix().replace("/", ".")
        if module != "core.engines.args":
            found |= _readers_in(module, path.read_text(encoding="utf-8"))
    return found


def test_only_the_users_arguments_and_the_renderers_output_are_read_as_argv():
    called = _readers_called()
    assert called - ALLOWED.keys() == set(), "a new reader of argv: is it Draftwise's own? carry it as data"
    assert ALLOWED.keys() - called == set(), "a reader named here is gone: drop it from ALLOWED"


def test_the_scan_finds_a_reader_of_our_own_argv():
    """The check itself: the parse of a decision's argv the planner had (issue 36) is found,
    in the function it sits in, whichever way the reader is imported."""
    source = ("from draftwise.core.engines import args as engine_args\n"
              "from draftwise.core.engines.args import value_of\n"
              "def draft_lengths(spec):\n    return engine_args.value_of(spec.argv, '--spec-draft-n-max')\n"
              "class Watch:\n    def n_max(self, argv):\n        return value_of(argv, '--spec-draft-n-max')\n"
              "def section(spec):\n    return engine_args.read_options(spec.argv[1:])\n")
    assert _readers_in("core.planning.extra_args", source) == {
        "core.planning.extra_args:draft_lengths", "core.planning.extra_args:Watch.n_max",
        "core.planning.extra_args:section"}


def test_a_decision_renders_each_of_its_options_once_and_refuses_a_second():
    """The renderer cannot write one of our options twice: `Options` refuses the second."""
    head = resolver.SpecDecision("draft-mtp", None, resolver.AUTO_MTP, True, lengths=((DRAFT_N_MAX, 2),), p_min=0.75)
    assert head.argv == ("--spec-type", "draft-mtp", "--spec-draft-n-max", "2", "--spec-draft-p-min", "0.75")
    o = engine_args.OwnOptions()
    o.set("--spec-draft-p-min", "0.5")
    with pytest.raises(ValueError, match=f"^{DRAFT_P_MIN} is set twice$"):
        o.set("--draft-p-min", "0.75")  # another spelling of the same option
    assert o.argv() == ("--spec-draft-p-min", "0.5")


def test_the_launch_carries_its_command_as_options_and_renders_them_once():
    """The plan's options, the speculation, the user's arguments (engine form) and Draftwise's
    own settings after them, in that order; the argv is those options written out (hand-written
    here), and serve's section reads the same options, never the argv."""
    head = resolver.SpecDecision("draft-mtp", None, resolver.AUTO_MTP, True, lengths=((DRAFT_N_MAX, 2),), p_min=0.75)
    spec = launch_spec.llamacpp_launch(
        Path("llama-server"), Path("/m/a.gguf"), head, port=8123, plan_options=(engine_args.option("-c", "512"),),
        extra_args=("--no-mmap", "--threads_batch=3"), engine=EngineSettings(repack=False, threads=2))
    assert spec.argv == ("llama-server", "-m", "/m/a.gguf", "--host", "127.0.0.1", "--port", "8123", "--metrics",
                         "-lv", "4", "-c", "512", "--spec-type", "draft-mtp", "--spec-draft-n-max", "2",
                         "--spec-draft-p-min", "0.75", "-np", "1", "--no-mmap", "--threads_batch", "3", "-nr", "-t", "2")
    assert spec.argv[1:] == engine_args.render(spec.options)
    assert spec.fallback_argv == ("llama-server", "-m", "/m/a.gguf", "--host", "127.0.0.1", "--port", "8123",
                                  "--metrics", "-lv", "4", "-c", "512", "--no-mmap", "--threads_batch", "3", "-nr",
                                  "-t", "2")
    assert spec.fallback_options is not None and spec.fallback_argv[1:] == engine_args.render(spec.fallback_options)
    # Canonical names: ALIASES' first spelling; `--threads_batch` as the engine reads it;
    # `-t` and `-nr` are their own (not in ALIASES), so the preset's keys are `t` and `nr`.
    assert [o.name for o in spec.options if o.name in ("--parallel", "--threads-batch", "-t")] == [
        "--parallel", "--threads-batch", "-t"]
    assert preset.section("a", spec.options).as_dict() == {
        "model": "/m/a.gguf", "metrics": "true", "verbosity": "4", "ctx-size": "512", "spec-type": "draft-mtp",
        "spec-draft-n-max": "2", "spec-draft-p-min": "0.75", "parallel": "1", "no-mmap": "true",
        "threads-batch": "3", "nr": "true", "t": "2"}
