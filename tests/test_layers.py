"""The package's folders form layers: each imports only from its own layer or lower ones.

docs/architecture.md draws the same picture; a change that makes a lower folder reach up (or
two folders import each other) fails here before it tangles the import graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "yait_byheart"

# Lowest first. A module's layer is that of its first path component under the package.
LAYERS: list[set[str]] = [
    {"_dates", "_text"},
    {"_turns"},
    {"_retrieval"},
    {"_compose"},
    {"_record"},
    {"protocols"},
    {"_follow"},
    {"memory"},
    {"__init__", "bm25", "store", "providers", "semantic", "integrations"},
    {"mcp_server"},
    {"cli", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _component(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py") if len(rel.parts) == 1 else rel.parts[0]


def _imported(path: Path) -> set[str]:
    """First components (under the package) of what `path` imports, relative or absolute."""
    rel = path.relative_to(PACKAGE)
    here = list(rel.parts[:-1])  # the package a relative import starts from
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                parts = [*base, *(node.module.split(".") if node.module else [])]
                if not parts:  # `from . import x` at the top: x names the component
                    found.update(a.name for a in node.names)
                else:
                    found.add(parts[0])
            elif node.module and node.module.startswith("yait_byheart."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(
                a.name.split(".")[1] for a in node.names if a.name.startswith("yait_byheart.")
            )
    return found


def test_every_module_belongs_to_a_layer() -> None:
    components = {_component(p) for p in PACKAGE.rglob("*.py")}
    assert components - set(RANK) == set(), "add the new folder or module to LAYERS"


def test_imports_never_reach_up() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        me = _component(path)
        for other in _imported(path) - {me, "__version__"}:
            if other in RANK and RANK[other] > RANK[me]:
                upward.append(f"{path.relative_to(PACKAGE)} imports {other}")
    assert upward == []


def test_folders_do_not_import_each_other_within_a_layer() -> None:
    edges = {
        (_component(p), other)
        for p in PACKAGE.rglob("*.py")
        for other in _imported(p)
        if other in RANK and other != _component(p)
    }
    assert {(a, b) for a, b in edges if (b, a) in edges} == set()
