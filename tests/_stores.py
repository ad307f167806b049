"""Stores for the integrations' deployment-shaped tests: one location that several store
handles (workers) and child processes open, on SQLite and on PostgreSQL.

``stores`` is a fixture (a test module imports ``stores_fixture``): ``stores.open()`` is a
new store handle on the location (closed at the end of the test), ``stores.args`` what a
child process needs to open one (``open_store(*args)``). PostgreSQL runs as in
tests/test_store.py: each test its own schema, a missing server a failure in CI.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_store import PG_DSN, PG_REQUIRED, pg_unavailable

ROOT = str(Path(__file__).resolve().parents[1])


def open_store(kind: str, location: str, schema: str) -> Any:
    """A store handle on a test location (what ``Stores.args`` names)."""
    from yait_byheart.store import PostgresStore, SQLiteStore

    if kind == "sqlite":
        return SQLiteStore(location)
    return PostgresStore(location, schema=schema)


class Stores:
    """One store location; every ``open`` is another handle on it."""

    def __init__(self, kind: str, location: str, schema: str = "") -> None:
        self.kind, self.location, self.schema = kind, location, schema
        self.handles: list[Any] = []

    @property
    def args(self) -> list[str]:
        return [self.kind, self.location, self.schema or "-"]

    def open(self) -> Any:
        store = open_store(self.kind, self.location, self.schema)
        self.handles.append(store)
        return store

    def child_env(self) -> dict[str, str]:
        """The environment of a child process that imports this checkout."""
        path = [p for p in (os.environ.get("PYTHONPATH"), ROOT) if p]
        return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}

    def close(self) -> None:
        for store in self.handles:
            store.close()


@pytest.fixture(params=["sqlite", "postgres"], name="stores")
def stores_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "sqlite":
        made = Stores("sqlite", str(tmp_path / "chats.db"))
        yield made
        made.close()
        return
    reason = pg_unavailable()
    if reason:
        if PG_REQUIRED:
            pytest.fail(f"PostgreSQL is required here (BYHEART_TEST_PG_REQUIRED=1) but {reason}")
        pytest.skip(reason)
    made = Stores("postgres", PG_DSN, "t_" + uuid.uuid4().hex[:12])
    yield made
    made.close()
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {made.schema} CASCADE")
