"""What the wheel ships and says about itself (issue 15): the package only, one version,
a licence, and no project URL that leads nowhere (issue 22)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import yait_byheart

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def listed(key: str) -> list[str]:
    # Up to the "]" that ends a line: a requirement's extras ("x[python]") hold one too.
    found = re.search(rf"^{key} = \[(.*?)\]$", PYPROJECT, re.M | re.S)
    assert found, f"pyproject.toml has no {key}"
    return re.findall(r'"([^"]+)"', found.group(1))


def test_the_wheel_ships_the_package_and_nothing_else() -> None:
    setuptools = pytest.importorskip("setuptools")
    include = listed("include")
    assert include == ["yait_byheart", "yait_byheart.*"]
    shipped = set(setuptools.find_packages(str(ROOT), include=include))
    # Every package directory with an __init__.py ships; tests/ and eval/ never do.
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "yait_byheart").rglob("__init__.py")
    }
    assert shipped == on_disk


def test_one_version_everywhere() -> None:
    version = re.search(r'^version = "([^"]+)"', PYPROJECT, re.M)
    assert version and version.group(1) == yait_byheart.__version__
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"yait_byheart-{yait_byheart.__version__}-py3-none-any.whl" in readme


def test_licence_and_python_versions_are_declared() -> None:
    assert "Copyright (c) 2026 the byheart authors" in (ROOT / "LICENSE").read_text("utf-8")
    # No project URL until something is served there (tests/test_install_lines.py).
    assert "[project.urls]" not in PYPROJECT
    classifiers = listed("classifiers")
    floor = re.search(r'^requires-python = ">=3\.(\d+)"', PYPROJECT, re.M)
    assert floor and f"Programming Language :: Python :: 3.{floor.group(1)}" in classifiers
    assert "Typing :: Typed" in classifiers and "Operating System :: OS Independent" in classifiers


# What each module a test may skip for is installed by (its distribution's name).
_DISTRIBUTION = {
    "numpy": "numpy", "langchain_core": "langchain-core", "langgraph": "langgraph",
    "agents": "openai-agents", "pydantic_ai": "pydantic-ai-slim", "mcp": "mcp",
    "anthropic": "anthropic", "openai": "openai", "google": "google-genai",
    "google.adk": "google-adk", "llama_index": "llama-index-core",
    "mkdocs": "mkdocs", "mkdocstrings": "mkdocstrings",
}  # fmt: skip
# Provided elsewhere: psycopg by .ci/postgres.sh with the server, tomllib by Python 3.11+,
# setuptools by the build (pip brings it), strands by an environment of its own (.ci/run: it
# pins an older mcp than the dev extra).
_ELSEWHERE = {"psycopg", "tomllib", "setuptools", "strands"}


def test_the_ci_extras_install_everything_a_test_would_skip_for() -> None:
    # CI installs the dev and docs extras before the tests (.ci/run).
    dev = {re.split(r"[<>=!~\[ ]", r)[0].lower() for r in [*listed("dev"), *listed("docs")]}
    skipped_for = {
        name if name in _DISTRIBUTION else name.split(".")[0]
        for test in (ROOT / "tests").glob("*.py")
        for name in re.findall(r'importorskip\("([\w.]+)"', test.read_text(encoding="utf-8"))
    }
    assert "numpy" in skipped_for  # the scan finds what it is for
    missing = sorted(
        name for name in skipped_for - _ELSEWHERE if _DISTRIBUTION.get(name, name) not in dev
    )
    assert not missing, f"add to the dev extra in pyproject.toml: {missing}"


def test_ci_runs_the_strands_tests_in_their_own_environment() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "'.[strands,test,postgres]'" in run and "tests/test_integration_strands.py" in run
    assert "external_suites.py strands-agents" in run
