"""Every Python block of the README runs (issue 15): the example a newcomer copies cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def test_the_readme_has_a_python_example() -> None:
    assert BLOCKS, "README.md lost its ```python example"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(
    index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a block may write files (a store): keep them out of the tree
    code = compile(BLOCKS[index], f"README.md python block {index + 1}", "exec")
    exec(code, {"__name__": "__readme__"})


def test_readme_installs_by_path_and_names_the_other_package() -> None:
    text = README.read_text(encoding="utf-8")
    assert "pip install dist/yait_byheart-" in text and "0.1.1" in text
    assert "python -m yait_byheart demo" in text and "python -m pytest" in text
    # The long description is read on the package index: no relative links.
    assert not re.search(r"\]\((?!https?://)[^)]*\)", text)


def test_one_version_everywhere() -> None:
    import yait_byheart

    pyproject = (README.parent / "pyproject.toml").read_text(encoding="utf-8")
    version = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    assert version and version.group(1) == yait_byheart.__version__
    assert f"yait_byheart-{yait_byheart.__version__}-py3-none-any.whl" in README.read_text("utf-8")
