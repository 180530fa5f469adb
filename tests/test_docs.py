"""The repository explains itself: every document the code cites is in docs/, and so is
the section it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_links(doc: Path) -> list[str]:
    """The links of a Markdown file to files of the repository (web links left out)."""
    return [t for t in _LINK.findall(doc.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:", t)]


def _broken_links(docs: list[Path]) -> tuple[int, list[str]]:
    """(how many repository links the documents hold, the ones whose file is not there)."""
    count, broken = 0, []
    for doc in docs:
        for target in _relative_links(doc):
            count += 1
            if not (doc.parent / target.split("#", 1)[0]).is_file():
                broken.append(f"{doc.name} links {target}")
    return count, broken


def _check_links(docs: list[Path], at_least: int) -> None:
    count, broken = _broken_links(docs)
    assert count >= at_least, f"only {count} links found in {[d.name for d in docs]}: the check would prove nothing"
    assert not broken, "\n".join(broken)


def test_the_documents_link_each_other_by_existing_names():
    docs = sorted((ROOT / "docs").glob("*.md"))
    # 21 links between the pages as this was written (launch-path.md, ladder.md, rules.md...).
    _check_links(docs, at_least=15)


def test_the_readme_links_its_pages_and_pictures_by_existing_names():
    # 13 as this was written: docs/*.md pages and the screenshots.
    _check_links([ROOT / "README.md"], at_least=10)


def test_the_link_check_fails_on_no_links_and_on_a_missing_file(tmp_path: Path):
    docs = tmp_path / "pages"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nNo links at all.\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="only 0 links"):
        _check_links([docs / "a.md"], at_least=1)
    (docs / "b.md").write_text("See [A](a.md), [gone](gone.md#x) and [web](https://example.com).\n",
                               encoding="utf-8")
    assert _broken_links([docs / "b.md"]) == (2, ["b.md links gone.md#x"])
    with pytest.raises(AssertionError, match="gone.md"):
        _check_links([docs / "b.md"], at_least=1)
