"""byheart's stand-in for ``SQLiteSession`` in the Agents SDK's own session tests.

``.ci/external_suites.py`` copies this file to ``tests/_byheart.py`` of the extracted suite and
turns every ``SQLiteSession(...)`` call into ``byheart_session(...)``; the tests' assertions are
kept as the SDK wrote them.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from yait_byheart.integrations.openai_agents import ByheartSession
from yait_byheart.store import SQLiteStore


class StoreSession(ByheartSession):
    """A ByheartSession on a store of its own, closed with the session as SQLiteSession is."""

    def __init__(self, store: SQLiteStore, session_id: str, **settings: Any) -> None:
        self.own_store = store
        super().__init__(store, session_id, **settings)

    def close(self) -> None:
        self.own_store.close()


def byheart_session(
    session_id: str,
    db_path: str | Path = ":memory:",
    sessions_table: str = "agent_sessions",
    messages_table: str = "agent_messages",
    session_settings: Any = None,
) -> StoreSession:
    """``SQLiteSession``'s signature; the table names have no byheart equivalent (a store
    keeps its own schema), ``":memory:"`` becomes a fresh file of its own."""
    if str(db_path) == ":memory:":
        db_path = os.path.join(tempfile.mkdtemp(prefix="byheart-session-"), "session.db")
    return StoreSession(SQLiteStore(db_path), session_id, session_settings=session_settings)
