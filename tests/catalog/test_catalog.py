"""The catalog is one contract: codes, doc pages and the shared case corpus must agree with it."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from trainwell.catalog import CATALOG, RUNTIME, STATIC

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "cases"
CORPUS = REPO / "tests" / "corpus" / "correct"
RULES = REPO / "src" / "trainwell" / "catalog" / "rules"
SHARED_CATALOG = REPO.parent / "shared" / "bug-catalog.md"

SECTIONS = ["What it detects", "Why it is silent", "Example", "Use instead", "Fix safety", "PyTorch facts"]
OPTIONAL_SECTIONS = ["Runtime detection"]
MARKER = re.compile(r"#\s*(error|static|runtime):\s*(TW\d{3}(?:\s*,\s*TW\d{3})*)")
CASE_KIND = re.compile(r"#\s*case:\s*(\S+)")
CODE = re.compile(r"^TW\d{3}$")


def case_files() -> list[Path]:
    return sorted(CASES.glob("TW*/*.py"))


def markers(path: Path) -> list[tuple[int, str, str]]:
    """(line, kind, code) for every `# error:` / `# static:` / `# runtime:` comment in ``path``."""
    found = []
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT:
            continue
        for kind, codes in MARKER.findall(tok.string):  # `# static: TW204  # runtime: TW602`: two markers in one comment
            for code in codes.split(","):
                found.append((tok.start[0], kind, code.strip()))
    return found


def sections(page: str) -> list[str]:
    return [line[3:].strip() for line in page.splitlines() if line.startswith("## ")]


def section_body(page: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", page, flags=re.S | re.M)
    assert match, title
    return match.group(1)


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_codes_are_unique_and_well_formed():
    assert all(CODE.match(code) and entry.code == code for code, entry in CATALOG.items())
    names = [entry.name for entry in CATALOG.values()]
    assert len(set(names)) == len(names)
    assert all(entry.detectors and entry.detectors <= {STATIC, RUNTIME} for entry in CATALOG.values())


def test_codes_match_the_shared_catalog():
    if not SHARED_CATALOG.exists():
        pytest.skip("the shared bug catalog (shared/bug-catalog.md) is not beside this checkout")
    rows = re.findall(r"^\|\s*(TW\d{3})\s*\|\s*([a-z0-9-]+)\s*\|", SHARED_CATALOG.read_text(encoding="utf-8"), flags=re.M)
    assert dict(rows) == {code: entry.name for code, entry in CATALOG.items()}


@pytest.mark.parametrize("code", sorted(CATALOG))
def test_every_code_has_a_page_with_the_fixed_sections(code):
    entry = CATALOG[code]
    assert (RULES / entry.page_name).is_file(), f"missing doc page {entry.page_name}"
    page = entry.page()
    assert page.splitlines()[0] == f"# {code}: {entry.name}"
    found = sections(page)
    assert [s for s in found if s in SECTIONS] == SECTIONS, found
    assert set(found) <= set(SECTIONS + OPTIONAL_SECTIONS), found
    for title in SECTIONS:
        assert section_body(page, title).strip(), f"{code}: empty section {title!r}"
    for title in ("Example", "Use instead"):
        blocks = python_blocks(section_body(page, title))
        assert len(blocks) == 1, f"{code}: {title} needs exactly one python block"
        ast.parse(blocks[0])


def test_no_page_without_a_code():
    pages = {p.name for p in RULES.glob("*.md")}
    assert pages == {entry.page_name for entry in CATALOG.values()}


@pytest.mark.parametrize("code", sorted(CATALOG))
def test_every_code_has_enough_cases(code):
    folder = CASES / code
    needed = 3 if STATIC in CATALOG[code].detectors else 2
    bad = sorted(folder.glob("bad_*.py"))
    good = sorted(folder.glob("good_*.py"))
    assert len(bad) >= needed and len(good) >= needed, (code, len(bad), len(good))


@pytest.mark.parametrize("path", case_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_markers_name_catalog_codes_their_detectors_handle(path):
    assert path.parent.name in CATALOG and path.name.startswith(("bad_", "good_"))
    found = markers(path)
    for line, kind, code in found:
        assert code in CATALOG, f"{path.name}:{line} names unknown code {code!r}"
        detectors = CATALOG[code].detectors
        if kind != "error":
            assert kind in detectors, f"{path.name}:{line}: `# {kind}:` marker for {code}, which {kind} does not detect"
    if path.name.startswith("good_"):
        assert not found, f"good case {path.name} carries markers"
    else:
        own = [(kind, code) for _, kind, code in found if code == path.parent.name]
        assert own, f"bad case {path.name} has no marker for {path.parent.name}"


@pytest.mark.parametrize("path", case_files() + sorted(CORPUS.glob("*.py")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_case_and_corpus_files_parse_and_declare_their_kind_on_line_one(path):
    source = path.read_text(encoding="utf-8")
    ast.parse(source, filename=str(path))
    for number, line in enumerate(source.splitlines(), start=1):
        kind = CASE_KIND.match(line.strip())
        if kind:
            assert number == 1, f"{path.name}:{number}: `# case:` must be the first line"
            assert kind.group(1) in {"static-only", "runtime-only"}


def test_static_only_cases_are_checked_by_the_static_detector():
    for path in case_files():
        if path.read_text(encoding="utf-8").startswith("# case: static-only") and path.name.startswith("bad_"):
            own = [kind for _, kind, code in markers(path) if code == path.parent.name]
            assert STATIC in CATALOG[path.parent.name].detectors and set(own) & {"error", "static"}, path


def test_corpus_has_the_promised_scripts():
    names = {p.stem for p in CORPUS.glob("*.py")}
    assert len(names) >= 6
    for path in CORPUS.glob("*.py"):
        assert not markers(path), f"correct corpus file {path.name} carries markers"


@pytest.mark.parametrize("code", sorted(c for c, e in CATALOG.items() if STATIC in e.detectors))
def test_static_page_examples_fire_and_corrections_stay_silent(code):
    """STYLE habit 6: the page's Example makes the static checker report its code, and only it;
    its "Use instead" block produces nothing (default codes plus this one enabled)."""
    from trainwell.lint import runner
    from trainwell.catalog import enabled_codes

    page = CATALOG[code].page()
    select = sorted(enabled_codes() | {code})
    example = python_blocks(section_body(page, "Example"))[0]
    fixed = python_blocks(section_body(page, "Use instead"))[0]
    assert {f.code for f in runner.check(example, select=select)} == {code}
    assert [(f.code, f.line) for f in runner.check(fixed, select=select)] == []
