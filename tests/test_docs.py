"""The repository explains itself: every document the code cites is in docs/, and so is
the section it names."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p for d in ("app", "tests", "bench") for p in sorted((ROOT / d).rglob("*.py"))]
# `docs/rules.md ("Planner")`, `docs/rules.md, "Launch and the startup fallback"`: a section
# may follow, quoted, possibly after a line break inside the comment or docstring.
_CITE = re.compile(r'docs/([\w.-]+\.md)(?:[,\s#]*\(?\s*"([^"]+)")?')
_BARE = re.compile(r"(?<![\w/.-])(rules|engine-facts|architecture|ui-sketch)\.md")


def _headings(doc: Path) -> list[str]:
    return [ln.lstrip("#").strip() for ln in doc.read_text(encoding="utf-8").splitlines() if ln.startswith("#")]


def _citations() -> list[tuple[Path, str, str | None]]:
    found = []
    for path in SOURCES:
        # Comment continuation marks are dropped so a citation broken across lines reads whole.
        text = re.sub(r"\n\s*#\s*", " ", path.read_text(encoding="utf-8"))
        found += [(path, m.group(1), " ".join(m.group(2).split()) if m.group(2) else None)
                  for m in _CITE.finditer(text)]
    return found


def test_cited_documents_and_sections_exist():
    cites = _citations()
    assert len(cites) >= 10, "the code cites its documents (docs/rules.md, docs/engine-facts.md, ...)"
    missing = []
    for path, name, section in cites:
        doc = ROOT / "docs" / name
        if not doc.is_file():
            missing.append(f"{path.relative_to(ROOT)}: docs/{name} does not exist")
        elif section and not any(h.startswith(section) for h in _headings(doc)):
            missing.append(f"{path.relative_to(ROOT)}: docs/{name} has no section {section!r}")
    assert not missing, "\n".join(missing)


def test_no_document_is_cited_outside_the_repository():
    """`rules.md` alone (or `shared/docs/...`) points at files a stranger does not have."""
    bad = []
    for path in SOURCES:
        if path.name == "test_docs.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "shared/docs" in line or _BARE.search(re.sub(r"docs/[\w.-]+\.md", "", line)):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_the_documents_link_each_other_by_existing_names():
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for target in re.findall(r"\]\(([\w.-]+\.md)\)", doc.read_text(encoding="utf-8")):
            assert (ROOT / "docs" / target).is_file(), f"{doc.name} links {target}"
