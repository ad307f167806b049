"""Nothing under eval/ edits sys.path: the harness is a package, run with `python -m eval ...`,
and its helper processes run as modules (`python -m eval.concurrency_worker`)."""

from __future__ import annotations

import ast
from pathlib import Path

EVAL = Path(__file__).resolve().parent.parent / "eval"


def path_uses(source: str) -> list[int]:
    """Lines that touch `sys.path` (`sys.path.insert`, `sys.path[:0] = ...`, `from sys import
    path`): an import that works only after one is an import that breaks elsewhere."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "path"
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            lines.extend(node.lineno for a in node.names if a.name == "path")
    return sorted(lines)


def test_the_check_finds_each_way_of_editing_the_path() -> None:
    source = (
        "import sys\nsys.path.insert(0, 'x')\nsys.path.append('y')\n"
        "sys.path[:0] = ['z']\nfrom sys import path\nprint('sys.path is fine in a string')\n"
    )
    assert path_uses(source) == [2, 3, 4, 5]


def test_nothing_under_eval_edits_sys_path() -> None:
    found = [
        f"{p.relative_to(EVAL.parent)}:{line}"
        for p in sorted(EVAL.rglob("*.py"))
        for line in path_uses(p.read_text(encoding="utf-8"))
    ]
    assert found == [], "run helpers as modules (python -m eval.x) instead of editing sys.path"
