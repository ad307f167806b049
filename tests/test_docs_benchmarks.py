"""docs/benchmarks.md holds the current figures, each beside its command (issue 22): every
section the code and the pages point to exists, every command and script it cites runs from
a clone, and the README's language table shows the baseline benchmarks.md shows."""

from __future__ import annotations

import re
from pathlib import Path

from eval.__main__ import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
HEADINGS = re.findall(r"^#{2,3} (.+)$", BENCHMARKS, re.M)
# A section is named in quotes after "benchmarks.md" (a comment, a docstring, a page).
POINTER = re.compile(r"benchmarks\.md\)?[`,]?\s*(?:section\s+)?\"([A-Z][^\"]{2,60})\"")


def _flat(text: str) -> str:
    """Line breaks and comment markers gone, so a name wrapped over two lines reads whole."""
    return re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)


def pointers() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    files = [*(ROOT / "yait_byheart").rglob("*.py"), *(ROOT / "eval").rglob("*.py")]
    files += [*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    for path in files:
        text = _flat(path.read_text(encoding="utf-8"))
        names = set(POINTER.findall(text))
        if path.name == "settings.py":  # Tuning's fields name their section in parentheses
            names |= set(re.findall(r"\(\"([A-Z][^\"]{2,40})\"\)", text))
        for name in names:
            found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_section_pointed_to_exists() -> None:
    found = pointers()
    assert {"Retrieval ablations", "Live replay", "Speed", "A custom retriever"} <= set(found)
    missing = {
        name: sorted(where)
        for name, where in found.items()
        if not any(h.startswith(name) for h in HEADINGS)
    }
    assert not missing, f"sections named but not in docs/benchmarks.md: {missing}"


def test_every_command_and_script_cited_exists() -> None:
    # Removed scripts and commands are cited only in history.md, with the commit they ran at.
    for name in re.findall(r"python -m eval[ .]([a-z][\w-]*)", BENCHMARKS):
        module = name.replace("-", "_")
        assert name in COMMANDS or (ROOT / "eval" / f"{module}.py").exists(), name
    for script in re.findall(r"(?<![\w/])eval/(\w+)\.py", BENCHMARKS):
        assert (ROOT / "eval" / f"{script}.py").exists(), script


def test_each_section_names_its_command() -> None:
    sections = re.split(r"^## ", BENCHMARKS, flags=re.M)[1:]
    for section in sections:
        title = section.splitlines()[0]
        assert "python -m eval" in section or "(figures to come" in section, title
    longmemeval = BENCHMARKS.split("## LongMemEval\n", 1)[1].split("\n## ", 1)[0]
    assert "`python -m eval longmemeval`" in longmemeval and "turn-bm25" in longmemeval


def test_readme_language_table_has_the_baseline_benchmarks_shows() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (byheart|BM25, single paragraphs) \| 4,000 \|(.+)\|$",
                           BENCHMARKS, re.M))  # fmt: skip
    assert set(rows) == {"byheart", "BM25, single paragraphs"}
    for name, cells in rows.items():
        assert f"| {name} |{cells}|" in readme, name
