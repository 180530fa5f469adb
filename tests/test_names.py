"""Names over strings (core/kinds.py): no comparison with a mode, engine kind, backend or
source written as a string literal comes back in app code, the enums keep their text in JSON
and argv, and `plan`, `launch` and `measure` read the same request options."""

from __future__ import annotations

import ast
import enum
import inspect
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from draftwise.cli import common
from draftwise.cli.main import build_parser, main
from draftwise.core import kinds
from draftwise.core.address import DEFAULT_PORT
from draftwise.core.kinds import Backend, EngineKind, MtpMode
from draftwise.core.settings import ModelOverrides

APP = Path(__file__).resolve().parents[1] / "app" / "draftwise"
KINDS = APP / "core" / "kinds.py"
REQUEST_COMMANDS = ("plan", "launch", "measure")


def _enum_words() -> dict[str, str]:
    """Every word of kinds.py's enums -> the enum it belongs to (one of them, for the message)."""
    words: dict[str, str] = {}
    for name, value in vars(kinds).items():
        if inspect.isclass(value) and issubclass(value, enum.StrEnum) and value.__module__ == kinds.__name__:
            for member in value:
                words.setdefault(member.value, f"{name}.{member.name}")
    return words


WORDS = _enum_words()


def _literals(node: ast.AST) -> list[str]:
    """The string constants a comparison side holds: itself, or the items of a tuple, list,
    set or frozenset literal (`x in ("cpu", "unknown")`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set") \
            and node.args:
        return _literals(node.args[0])
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def literal_comparisons(source: str, name: str = "<source>") -> list[str]:
    """`file:line: 'word' (Enum.MEMBER)` for each comparison (==, !=, in, not in, `case`) of a
    value with one of the enums' words written as a string."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
        elif isinstance(node, ast.MatchValue):
            sides = [node.value]
        else:
            continue
        for side in sides:
            for word in _literals(side):
                if word in WORDS:
                    found.append(f"{name}:{node.lineno}: {word!r} (use {WORDS[word]})")
    return found


def test_the_scan_catches_each_way_a_literal_comparison_can_come_back():
    planted = '''
if request.backend == "vllm": pass
if gpu.backend != "cpu": pass
if build_backend in ("cpu", "unknown", ""): pass
if spec.source in frozenset({"auto-mtp"}): pass
match mode:
    case "off": pass
'''
    hits = literal_comparisons(planted)
    assert [h.split(": ", 1)[1] for h in hits] == [
        "'vllm' (use EngineKind.VLLM)", "'cpu' (use Backend.CPU)", "'cpu' (use Backend.CPU)",
        "'unknown' (use Backend.UNKNOWN)", "'auto-mtp' (use SpecSource.AUTO_MTP)", "'off' (use MtpMode.OFF)",
    ]
    # Names, other words, and the words outside a comparison are fine.
    assert literal_comparisons('if m == MtpMode.OFF or kind == "mtp": x = {"cpu": 1}\nargv = ["-fa", "off"]') == []


def test_no_comparison_with_a_mode_backend_or_source_literal_in_app_code():
    assert WORDS.keys() >= {"auto", "off", "llama.cpp", "vllm", "mlx", "cpu", "cuda", "rocm", "vulkan", "metal",
                            "rpc", "auto-mtp", "auto-companion", "auto-ngram", "configured", "bundled"}
    found = []
    for path in sorted(APP.rglob("*.py")):
        if path != KINDS:
            found += literal_comparisons(path.read_text(encoding="utf-8"), str(path.relative_to(APP)))
    assert not found, "compare with core/kinds.py's names instead:\n" + "\n".join(found)


def test_kinds_imports_nothing_of_draftwise():
    """Every layer imports it, so it may import none (like core's other shared helpers)."""
    tree = ast.parse(KINDS.read_text(encoding="utf-8"))
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported and not [m for m in imported if m.startswith("draftwise")]


def test_an_enum_keeps_its_word_in_json_argv_and_the_settings():
    assert json.dumps({Backend.VULKAN: [MtpMode.OFF, EngineKind.LLAMA_CPP]}) == '{"vulkan": ["off", "llama.cpp"]}'
    assert f"{Backend.CUDA}:0" == "cuda:0" and " ".join(["-fa", kinds.Switch.OFF]) == "-fa off"
    stored = json.loads(json.dumps(ModelOverrides(mtp=MtpMode.OFF).to_json()))
    assert stored["mtp"] == "off" and ModelOverrides.from_json(stored).mtp is MtpMode.OFF
    assert ModelOverrides.from_json({"mtp": "on"}).mtp is None  # a word that is no mode is dropped
    assert Backend.named("Vulkan") is Backend.VULKAN and Backend.named("npu") is Backend.UNKNOWN
    assert Backend.named(None) is Backend.UNKNOWN


# ------------------------------------------------------------------ the request options
def _subparser(command: str):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices[command]


def _request_actions():
    """The options `add_request_options` adds, by dest (the reference the commands share)."""
    import argparse

    reference = argparse.ArgumentParser()
    common.add_request_options(reference)
    return {a.dest: a for a in reference._actions if a.dest != "help"}, reference


def test_plan_launch_and_measure_take_the_same_request_options():
    wanted, reference = _request_actions()
    assert {"model", "mtp", "draft", "ngram", "backend", "ctx", "kv", "device", "engine", "keep_free",
            "use_at_most", "rpc"} <= wanted.keys()
    for command in REQUEST_COMMANDS:
        have = {a.dest: a for a in _subparser(command)._actions}
        for dest, ref in wanted.items():
            assert dest in have, f"{command} lacks {ref.option_strings or dest}"
            got = have[dest]
            assert (got.option_strings, got.choices, got.default, got.nargs) == \
                   (ref.option_strings, ref.choices, ref.default, ref.nargs), (command, dest)
        assert _subparser(command).get_default("engine_args") == []  # what follows -- is the engine's


def test_the_same_request_flags_make_the_same_request_everywhere(tmp_path, monkeypatch):
    monkeypatch.delenv(common.API_KEY_VARIABLE, raising=False)
    model, draft = tmp_path / "m.gguf", tmp_path / "d.gguf"
    flags = ["--mtp", "off", "--draft", str(draft), "--ngram", "--backend", "vllm", "--ctx", "4096", "--kv", "q8_0",
             "--device", "Vulkan0", "--keep-free", "2", "--rpc", "10.0.0.2:50052"]
    parser = build_parser()
    parsed = {c: parser.parse_args([c, str(model), *flags]) for c in REQUEST_COMMANDS}
    requests = {c: common.request_from(ns) for c, ns in parsed.items()}
    assert requests["plan"] == requests["launch"] == requests["measure"]
    r = requests["plan"]
    assert (r.mtp, r.backend, r.draft, r.ngram_when_no_drafter, r.port) == \
           (MtpMode.OFF, EngineKind.VLLM, draft.resolve(), True, DEFAULT_PORT)
    assert type(r.mtp) is MtpMode and type(r.backend) is EngineKind
    assert (r.prefs.ctx, r.prefs.kv_type) == (4096, "q8_0")
    machine_side = {c: (ns.device, ns.engine, ns.keep_free, ns.use_at_most, ns.rpc) for c, ns in parsed.items()}
    assert machine_side["plan"] == machine_side["launch"] == machine_side["measure"] == \
           (["Vulkan0"], None, 2.0, None, "10.0.0.2:50052")


@pytest.mark.parametrize("command", REQUEST_COMMANDS)
def test_a_wrong_word_is_refused_naming_the_right_ones(command):
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, "m.gguf", "--mtp", "on"])
    assert exc.value.code == 2
    assert "argument --mtp: invalid choice: 'on' (choose from 'auto', 'off')" in err.getvalue()


@pytest.mark.parametrize("command", ["launch", "measure"])
def test_launch_and_measure_refuse_a_server_other_than_llama_cpp_in_one_line(command, tmp_path, capsys):
    assert main([command, str(tmp_path / "m.gguf"), "--backend", "vllm"]) == common.EXIT_USER_ERROR
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"draftwise: --backend vllm: `draftwise {command}` runs llama.cpp's llama-server only")
    assert "draftwise plan --backend vllm MODEL" in err
