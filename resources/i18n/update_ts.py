"""Keep `draftwise_ja.ts` in step with the code, and compile it to `draftwise_ja.qm`.

    .venv/bin/python resources/i18n/update_ts.py          # update the .ts, compile the .qm
    .venv/bin/python resources/i18n/update_ts.py --check  # exit 1 when a string lacks a translation

Strings are every literal passed to `tr()` or `N_()` in the window's code, and every
template literal passed to `msg()` anywhere in the app (core's sentences as data,
docs/messages.md), in one context, "Draftwise". Translations already in the .ts are kept;
new strings are added as unfinished for a translator (Qt Linguist opens the file); strings
gone from the code are marked obsolete. `--check` also fails when a translation's `{fields}`
differ from its source's (the window would fall back to English). The .qm is compiled with
`pyside6-lrelease` from the venv.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import string
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The window's code: strings marked with tr() / N_().
SOURCES = [ROOT / "app/draftwise/gui.py", *sorted((ROOT / "app/draftwise/ui").glob("*.py")),
           *sorted((ROOT / "app/draftwise/viewmodels").glob("*.py"))]
# Everywhere: message templates, msg("..."), core's sentences above all.
MESSAGE_SOURCES = sorted((ROOT / "app/draftwise").rglob("*.py"))
CONTEXT = "Draftwise"
LANGS = ("ja",)
WINDOW_CALLS = ("tr", "N_")
MESSAGE_CALLS = ("msg",)


def strings_in(text: str, filename: str, calls: tuple[str, ...]) -> list[tuple[str, int]]:
    """(literal, line) of each call to one of `calls` whose first argument is a string literal."""
    out = []
    for node in ast.walk(ast.parse(text, filename)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name not in calls:
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append((arg.value, node.lineno))
    return out


def extract(paths: list[Path] | None = None, message_paths: list[Path] | None = None) -> dict[str, tuple[str, int]]:
    """source text -> (file, line) of its first use."""
    found: dict[str, tuple[str, int]] = {}
    for group, calls in ((SOURCES if paths is None else paths, WINDOW_CALLS),
                         (MESSAGE_SOURCES if message_paths is None else message_paths, MESSAGE_CALLS)):
        for path in group:
            rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
            for text, line in strings_in(path.read_text(encoding="utf-8"), str(path), calls):
                found.setdefault(text, (rel, line))
    return found


def fields(template: str) -> list[tuple[str, str, str]] | None:
    """The `{name!conv:spec}` fields of a format template, sorted; None when it does not parse."""
    try:
        return sorted((name, conv or "", spec or "") for _lit, name, spec, conv in string.Formatter().parse(template)
                      if name is not None)
    except ValueError:
        return None


def problems(sources: dict[str, object], translations: dict[str, tuple[str, str | None]]) -> list[str]:
    """Sources without a translation, and translations whose fields differ from the source's."""
    out = []
    for src in sources:
        text = translations.get(src, ("", None))[0]
        if not text:
            out.append(f"untranslated: {src!r}")
        elif fields(text) != fields(src):
            out.append(f"fields differ: {src!r} -> {text!r}")
    return out


def read_ts(path: Path) -> dict[str, tuple[str, str | None]]:
    """source -> (translation, type attribute) from an existing .ts."""
    if not path.exists():
        return {}
    out = {}
    for msg in ET.parse(path).getroot().iter("message"):
        src = msg.findtext("source") or ""
        t = msg.find("translation")
        out[src] = ((t.text or "") if t is not None else "", t.get("type") if t is not None else None)
    return out


def write_ts(path: Path, lang: str, sources: dict[str, tuple[str, int]], old: dict[str, tuple[str, str | None]]) -> None:
    ts = ET.Element("TS", version="2.1", language=lang, sourcelanguage="en")
    ctx = ET.SubElement(ts, "context")
    ET.SubElement(ctx, "name").text = CONTEXT
    for src, (file, line) in sorted(sources.items(), key=lambda kv: (kv[1][0], kv[1][1])):
        msg = ET.SubElement(ctx, "message")
        ET.SubElement(msg, "location", filename=f"../../{file}", line=str(line))
        ET.SubElement(msg, "source").text = src
        text, _kind = old.get(src, ("", None))
        t = ET.SubElement(msg, "translation")
        if text:
            t.text = text
        else:
            t.set("type", "unfinished")
    for src, (text, _kind) in sorted(old.items()):
        if src not in sources and text:
            msg = ET.SubElement(ctx, "message")
            ET.SubElement(msg, "source").text = src
            t = ET.SubElement(msg, "translation", type="vanished")
            t.text = text
    ET.indent(ts)
    body = ET.tostring(ts, encoding="unicode")
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8")


def lrelease(ts: Path) -> Path:
    qm = ts.with_suffix(".qm")
    tool = Path(sys.executable).with_name("pyside6-lrelease")
    exe = str(tool) if tool.exists() else shutil.which("pyside6-lrelease") or shutil.which("lrelease")
    if exe is None:
        raise SystemExit("pyside6-lrelease not found; install PySide6 in this Python")
    subprocess.run([exe, "-silent", str(ts), "-qm", str(qm)], check=True)
    return qm


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--check", action="store_true")
    args = p.parse_args(argv)
    sources = extract()
    status = 0
    for lang in LANGS:
        ts = HERE / f"draftwise_{lang}.ts"
        old = read_ts(ts)
        missing = [s for s in sources if not old.get(s, ("", None))[0]]
        if args.check:
            found = problems(sources, old)
            for line in found:
                print(f"{lang}: {line}")
            status |= bool(found)
            continue
        write_ts(ts, lang, sources, old)
        qm = lrelease(ts)
        print(f"{ts.name}: {len(sources)} strings, {len(missing)} untranslated -> {qm.name}")
    return status


if __name__ == "__main__":
    sys.exit(main())
