"""Every Python example in docs/agents.md runs as written (offline: the frameworks' test
models stand in for real ones); an example whose framework is not installed is skipped."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_page_has_an_example_per_framework() -> None:
    needs = [re.match(r"# needs: (\S+)", b).group(1) for b in BLOCKS]  # type: ignore[union-attr]
    assert {
        "nothing",
        "agents",
        "pydantic_ai",
        "langgraph",
        "langchain_core",
        "langchain",
        "google.adk",
        "llama_index",
        "strands",
    } <= set(needs)


def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # "google.adk" when google itself is absent
        return False


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.splitlines()[0])
def test_example_runs(block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need = re.match(r"# needs: (\S+)", block)
    assert need, "each example says what it needs on its first line"
    if need.group(1) != "nothing" and not installed(need.group(1)):
        pytest.skip(f"{need.group(1)} is not installed")
    monkeypatch.chdir(tmp_path)  # examples may write chats.db
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # create_react_agent's notice
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})
