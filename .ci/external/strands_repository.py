"""byheart's stand-in for ``MockedSessionRepository`` in Strands' own repository session tests.

``.ci/external_suites.py`` copies this file to ``tests/_byheart.py`` of the extracted suite and
turns every ``MockedSessionRepository(...)`` call into ``byheart_repository(...)``; the tests'
assertions are kept as Strands wrote them.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from yait_byheart.integrations.strands import ByheartSessionRepository
from yait_byheart.store import SQLiteStore


def byheart_repository() -> Any:
    """A ByheartSessionRepository on a SQLite store of its own (a fresh file per test)."""
    path = os.path.join(tempfile.mkdtemp(prefix="byheart-strands-"), "sessions.db")
    return ByheartSessionRepository(SQLiteStore(path))
