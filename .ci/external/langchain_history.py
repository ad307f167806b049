"""byheart's stand-in for ``InMemoryChatMessageHistory`` in langchain-core's own history tests.

``.ci/external_suites.py`` copies this file to ``tests/_byheart.py`` of the extracted suite and
turns every ``InMemoryChatMessageHistory(...)`` call into ``byheart_history(...)``: each history
is a ``ByheartChatMessageHistory`` on a conversation of its own in one SQLite store, opened as
an application would open it (once, before any event loop runs); the tests' assertions are
kept as LangChain wrote them.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Sequence
from typing import Any

from yait_byheart.integrations.langchain import ByheartChatMessageHistory
from yait_byheart.store import SQLiteStore


class StoreHistory(ByheartChatMessageHistory):  # type: ignore[misc, valid-type]
    """Equal to another when its messages are, as ``InMemoryChatMessageHistory`` (a pydantic
    model whose one field is ``messages``) compares."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.messages == other.messages  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]


STORE = SQLiteStore(os.path.join(tempfile.mkdtemp(prefix="byheart-history-"), "history.db"))
_IDS = itertools.count()


def byheart_history(messages: Sequence[Any] = ()) -> StoreHistory:
    """A new history (no I/O here: the conversation opens on first use, in a worker thread
    when that use is async, which is what LangChain's blocking-call guard checks)."""
    history = StoreHistory(STORE, f"history-{next(_IDS)}")
    if messages:
        history.add_messages(messages)
    return history
