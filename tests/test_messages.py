"""Sentences as data: core's English stays byte for byte, every template has a Japanese entry
(found by scanning the code), and the scan itself fails when one is missing."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from draftwise.core.errors import FieldError
from draftwise.core.messages import Message, clause, msg
from draftwise.testing.sentences import core_sentences, english

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).with_name("data") / "core_english.txt"
TS = ROOT / "resources" / "i18n" / "draftwise_ja.ts"

pytestmark = pytest.mark.timeout(120)


def _update_ts():
    spec = importlib.util.spec_from_file_location("update_ts", ROOT / "resources" / "i18n" / "update_ts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _templates(m: object) -> set[str]:
    """The template of a message and of every message nested in its arguments."""
    if not isinstance(m, Message):
        return set()
    out = {m.template}
    for _k, v in m.args:
        out |= _templates(v)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[object], Path]:
    folder = tmp_path_factory.mktemp("sentences")
    return core_sentences(folder), folder


# ------------------------------------------------------------------ the English
def test_english_is_byte_for_byte_what_it_was(corpus) -> None:
    """tests/data/core_english.txt was written from the f-strings before the move to messages."""
    items, folder = corpus
    old = [line.replace("\\n", "\n").replace("\\\\", "\\")
           for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    new = english(items, folder)
    assert len(new) == len(old) > 250
    diffs = [(o, n) for o, n in zip(old, new, strict=True) if o != n]
    assert not diffs, "\n".join(f"- {o}\n+ {n}" for o, n in diffs[:10])


def test_core_hands_out_messages_not_strings(corpus) -> None:
    items, _folder = corpus
    strings = [s for s in items if not isinstance(s, Message)]
    assert not strings, strings[:5]
    assert len({m.template for m in items}) > 100  # type: ignore[union-attr]
    assert len(set().union(*(_templates(m) for m in items))) > 130


def test_message_renders_nested_parts_and_clauses() -> None:
    part = msg("port {port}", port=8080)
    m = msg("The engine could not listen on {where}: another program uses it.", where=part)
    assert str(m) == "The engine could not listen on port 8080: another program uses it."
    ja = {"port {port}": "ポート {port}",
          "The engine could not listen on {where}: another program uses it.": "{where} で待ち受けできませんでした。"}
    assert m.render(lambda t: ja.get(t, t)) == "ポート 8080 で待ち受けできませんでした。"
    c = clause(msg("The engine crashed (segmentation fault)."))
    outer = msg("It failed ({cause}); again.", cause=c)
    assert str(outer) == "It failed (The engine crashed (segmentation fault)); again."
    assert outer.render(lambda t: t.replace(".", "。")) == "It failed (The engine crashed (segmentation fault)); again。"
    assert clause("plain text.") == "plain text"


def test_field_errors_carry_the_message_and_read_as_english() -> None:
    m = msg("Port {port} is not a TCP port; choose one between 1 and 65535.", port=70000)
    exc = FieldError("port", m)
    assert exc.message is m and exc.field == "port"
    assert str(exc) == "Port 70000 is not a TCP port; choose one between 1 and 65535."
    assert str(FieldError("x", "plain")) == "plain"


def test_json_output_holds_the_english(tmp_path: Path) -> None:
    import json

    from draftwise.core.engines import capabilities
    from draftwise.core.gguf import reader as gguf
    from draftwise.core.machine.hardware import Machine
    from draftwise.core.planning import planner
    from draftwise.core.speculation import resolver
    from draftwise.testing.tinymodels import write_tiny_model

    model = gguf.read_model(write_tiny_model(tmp_path / "m.gguf")[0])
    d = resolver.resolve(model, resolver.SpecOptions(), capabilities.pinned_caps())
    p = planner.plan(model, d, Machine(64 * 2**20, 64 * 2**20, [], "Linux"), planner.PlanPrefs())
    text = json.dumps({"spec": d.to_json(), "plan": p.to_json()})
    back = json.loads(text)
    assert back["spec"]["notes"] == [str(n) for n in d.notes] and back["spec"]["notes"]
    assert back["plan"]["reasons"][-1].startswith("It does not fit")


# ------------------------------------------------------------------ the catalog
def test_every_msg_template_in_the_code_has_a_japanese_entry_with_the_same_fields() -> None:
    ts = _update_ts()
    sources = ts.extract()
    templates = {s for p in ts.MESSAGE_SOURCES for s, _line in ts.strings_in(p.read_text(encoding="utf-8"), str(p), ("msg",))}
    assert len(templates) > 150 and templates <= set(sources)
    problems = ts.problems(sources, ts.read_ts(TS))
    assert not problems, "\n".join(problems)


def test_every_template_core_emitted_on_the_fixtures_is_in_the_catalog(corpus) -> None:
    """Runtime check of the scan: nested parts included, nothing built from a non-literal."""
    items, _folder = corpus
    catalog = {src for src, (text, _kind) in _update_ts().read_ts(TS).items() if text}
    used = set().union(*(_templates(m) for m in items))
    assert not sorted(used - catalog)


def test_the_coverage_check_fails_for_a_missing_or_mismatched_entry(tmp_path: Path) -> None:
    ts = _update_ts()
    source = ('from draftwise.core.messages import msg\n'
              'def f(x):\n'
              '    return msg("A template nobody translated: {x}.", x=x), msg("Speculation is off, as you chose.")\n')
    found = dict(ts.strings_in(source, "planted.py", ("msg",)))
    assert set(found) == {"A template nobody translated: {x}.", "Speculation is off, as you chose."}
    catalog = ts.read_ts(TS)
    assert ts.problems(found, catalog) == ["untranslated: 'A template nobody translated: {x}.'"]
    # A planted module in a folder of its own, through the same extraction the tool runs.
    planted = tmp_path / "planted.py"
    planted.write_text(source, encoding="utf-8")
    sources = ts.extract(paths=[], message_paths=[planted])
    assert "untranslated: 'A template nobody translated: {x}.'" in ts.problems(sources, catalog)
    # A translation that drops or renames a field is refused too.
    wrong = {"Port {port} is in use; the engine listens on {other} instead.": ("ポート {port} は使用中です。", None)}
    assert ts.problems(dict.fromkeys(wrong), wrong)[0].startswith("fields differ")


def test_msg_templates_are_literals() -> None:
    """The scan can only find literal templates: a computed one would escape the catalog."""
    bad = []
    for path in sorted((ROOT / "app" / "draftwise").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "msg"
                    and not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, bad
