"""Install lines install this project, and links lead somewhere (issue 22).

The `yait-byheart` project on the package index is an older, unrelated design: a
`pip install` that names it, with or without an extra, installs that one. byheart is installed
by path, from a clone (`pip install -e ".[postgres]"`) or from a wheel file. And no page links
an address where nothing is served (a documentation site or repository URL kept as a
placeholder).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Tools' caches too: hypothesis adds and deletes its example files while the suite runs.
SKIP_DIRS = {".git", ".venv", "venv", "__pycache__", "site", "build", "dist", "node_modules",
             ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache"}  # fmt: skip
TEXT_SUFFIXES = {".md", ".py", ".toml", ".yml", ".yaml", ".txt", ".cfg", ".sh", ".json", ""}


def _files(*tops: str) -> list[Path]:
    found = []
    for top in tops:
        path = ROOT / top
        for f in [path] if path.is_file() else path.rglob("*"):
            parts = set(f.relative_to(ROOT).parts)
            skipped = parts & SKIP_DIRS or any(p.endswith(".egg-info") for p in parts)
            if f.is_file() and f.suffix in TEXT_SUFFIXES and not skipped and f.stat().st_size < 2e6:
                found.append(f)
    return found


# Where a reader copies an install line from: the pages, the package's own messages and
# docstrings, the benchmarks' and examples' instructions, the build and CI files.
INSTALL_SOURCES = _files(
    "README.md", "docs", "yait_byheart", "eval", "examples", ".ci", "pyproject.toml", "mkdocs.yml"
)
# A pip argument that asks the index for the project by name, extras or version included.
BY_NAME = re.compile(r"yait[-_.]?byheart(?:\[[^\]]*\])?(?:[<>=!~;].*)?", re.I)
PIP = re.compile(r"pip3? install\b([^\n`]*)(?:\n[ \t]*(?:#[ \t]*)?([^\n`]*))?")


def named_installs(text: str) -> list[str]:
    """The `pip install` commands in `text` with an argument that names the project rather
    than a path or a file. A command wrapped right after its options (a docstring's line
    break) continues on the next line.

    >>> named_installs('run ``pip install\\n   "yait-byheart[postgres]"`` first')
    ['pip install "yait-byheart[postgres]"']
    >>> named_installs("pip install -e '.[postgres]' or pip install dist/yait_byheart-0.2.0.whl")
    []
    >>> named_installs("pip install -q --upgrade pip\\npython -m yait_byheart demo")
    []
    """
    found = []
    for m in PIP.finditer(text):
        args = m.group(1).split()
        if all(a.startswith("-") for a in args) and m.group(2):
            args += m.group(2).split()  # wrapped: the package is on the next line
        if any(BY_NAME.fullmatch(a.strip("\"',.;:()")) for a in args):
            found.append(" ".join(["pip install", *args]))
    return found


@pytest.mark.parametrize("path", INSTALL_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_install_line_names_the_index_package(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    assert not named_installs(text), (
        f"{path.relative_to(ROOT)}: {named_installs(text)} installs the unrelated `yait-byheart` "
        "from the package index; install by path: pip install -e '.[extra]' from a clone"
    )


def test_the_scan_reads_the_files_that_had_such_lines() -> None:
    names = {str(p.relative_to(ROOT)) for p in INSTALL_SOURCES}
    assert {"README.md", "docs/store.md", "docs/semantic.md", "yait_byheart/store/__init__.py"} <= (
        names
    )


# Hosts that served nothing for this project: a documentation site and a repository, both
# written as placeholders. (Spelled in two halves so this file does not match itself.)
PLACEHOLDERS = ("yait-byheart" + ".github.io", "github.com/" + "yait-byheart")
EVERY_FILE = _files(".")


def test_no_placeholder_address_anywhere() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {host}"
        for path in EVERY_FILE
        for host in PLACEHOLDERS
        if host in path.read_text(encoding="utf-8", errors="replace").lower()
    ]
    assert len(EVERY_FILE) > 100 and not found, found
