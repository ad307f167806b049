"""Every Python example in docs/store.md runs as written; the PostgreSQL one needs a server
(BYHEART_TEST_PG_DSN, set by `.ci/postgres.sh`) and skips without one unless it is required."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "store.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
PG_REQUIRED = (
    os.environ.get("BYHEART_TEST_PG_REQUIRED") == "1" or os.environ.get("CI", "").lower() == "true"
)


def test_the_page_shows_both_stores_and_vectors() -> None:
    text = "\n".join(BLOCKS)
    for needed in ("SQLiteStore(", "PostgresStore(", "store.vectors(", "get_many", "set_many"):
        assert needed in text


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.splitlines()[-1].strip()[:40])
def test_example_runs(block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if "PostgresStore(" in block:
        if not os.environ.get("BYHEART_TEST_PG_DSN"):
            if PG_REQUIRED:
                pytest.fail("PostgreSQL is required here but BYHEART_TEST_PG_DSN is not set")
            pytest.skip("BYHEART_TEST_PG_DSN is not set (bash .ci/postgres.sh sets it)")
        pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)  # the examples write chats.db and vectors.db
    for _ in range(2):  # a reader runs an example again in the same folder (issue 45)
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_example"})


def test_the_module_table_names_files_that_exist() -> None:
    """docs/store.md's "How the code is laid out" names the store's modules as they are."""
    section = DOC.read_text().split("## How the code is laid out", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"`(_?[a-z_]+\.py)`", section)
    store = DOC.parents[1] / "yait_byheart" / "store"
    assert len(named) >= 10
    assert [name for name in named if not (store / name).exists()] == []
