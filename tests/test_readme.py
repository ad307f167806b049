"""Every Python block of the README and of the site's newcomer pages runs (issue 15): the
examples a newcomer copies cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *(ROOT / "docs" / f for f in ("getting-started.md", "languages.md"))]
BLOCKS = [
    (page.name, block)
    for page in PAGES
    for block in re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
]


def test_every_page_has_a_python_example() -> None:
    assert {name for name, _ in BLOCKS} == {page.name for page in PAGES}


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_python_block_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a block may write files (a store): keep them out of the tree
    name, block = BLOCKS[index]
    exec(compile(block, f"{name}, python block {index + 1}", "exec"), {"__name__": "__doc__"})


def test_readme_installs_by_path_and_names_the_other_package() -> None:
    text = README.read_text(encoding="utf-8")
    assert "pip install dist/yait_byheart-" in text and "0.1.1" in text
    assert "python -m yait_byheart demo" in text and "python -m pytest" in text
    # Links into the repository are relative (no project site is served yet): each must
    # lead to a file or folder of this checkout.
    for target in re.findall(r"\]\((?!https?://)([^)#]*)[^)]*\)", text):
        assert (ROOT / target).exists(), target
