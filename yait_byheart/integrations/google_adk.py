"""byheart for Google's Agent Development Kit (ADK): model input, sessions and memory.

- ``ByheartPlugin(memory_or_store)`` is a ``BasePlugin``: before each model call it files the
  request's new ``Content`` objects in a [`Memory`][yait_byheart.Memory] (one conversation
  per ADK session on a store) and replaces ``llm_request.contents`` with ``Memory.compose()``:
  the selected memory, then the open round as ADK made it. A composed message that is a whole
  filed ``Content`` is that very object, and every function call and response sent is the
  ``Part`` ADK made (ids and responses as they were, never re-wrapped).
- ``ByheartSessionService(store)`` is a ``BaseSessionService``: each session a conversation
  of the store, each event a turn keeping the event verbatim (``Event.model_dump``), app and
  user state in conversations of their own; SQLite or PostgreSQL.
- ``ByheartMemoryService(store)`` is a ``BaseMemoryService``: ``search_memory`` ranks the
  events of the same user's sessions of the app (BM25) and returns them verbatim, never
  another user's.

ADK is imported when a name of this module is first used (``pip install
'.[google-adk]'``). See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ..memory import Memory
from ._adk_content import TAG, Pending, dump, neutral, part, tool_parts
from ._adk_store import INPUT, SESSION, Sessions, recall
from ._common import (
    ModelInput,
    Neutral,
    check_store,
    conversation_name,
    lazy_classes,
)

# The three classes subclass ADK's and are made by the module __getattr__ on first use.
__all__ = ["ByheartMemoryService", "ByheartPlugin", "ByheartSessionService"]  # noqa: F822


class _Input(ModelInput[Any]):
    """One ADK session's model input: ``Content`` objects filed and composed.

    Before each call it takes in the turns other workers filed in the session's conversation
    (another plugin on another store handle or process serving the same session), so that
    what they filed is known as filed: never filed twice, its tool parts sent as ADK's."""

    tag, call = TAG, "ByheartPlugin"

    def __init__(self, memory: Memory) -> None:
        self.pending: Pending = []
        self.names: dict[str, str] = {}  # call id -> function name, for a rebuilt response
        super().__init__(memory)

    def _remember(self, key: str, message: Any, neutral: Neutral) -> None:
        # Also on reopening: the calls still open after the filed turns.
        super()._remember(key, message, neutral)
        role, parts = neutral
        self.names.update({p["id"]: p["name"] for p in parts if p["type"] == "tool_call"})
        if role == "assistant":
            self.pending = [(p["name"], p["id"]) for p in parts if p["type"] == "tool_call"]
        else:
            answered = {p["id"] for p in parts if p["type"] == "tool_result"}
            self.pending = [(n, i) for n, i in self.pending if i not in answered]

    def dump(self, message: Any) -> Any:
        return dump(message)

    def load(self, data: Any) -> Any:
        from google.genai import types

        return types.Content.model_validate(data)

    def neutral(self, message: Any) -> Neutral:
        return neutral(message, list(self.pending), f"adk-call-{len(self.memory)}")

    def tool_parts(self, message: Any, parts: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
        return tool_parts(message, parts)

    def build(self, role: str, parts: list[Any]) -> Any:
        from google.genai import types

        # A call filed by other means (plain append_message) has no ADK Part: made here, its
        # name kept for the response after it, which a neutral result lacks.
        self.names.update({p["id"]: p["name"] for p in parts
                           if isinstance(p, dict) and p["type"] == "tool_call"})  # fmt: skip
        made = [part(p, self.names) if isinstance(p, dict) else p for p in parts]
        return types.Content(role="model" if role == "assistant" else "user", parts=made)

    def parts_of(self, message: Any) -> list[Any]:
        return list(message.parts or [])


def _make_plugin() -> type:
    from google.adk.plugins.base_plugin import BasePlugin

    class ByheartPlugin(BasePlugin):
        """An ADK plugin that sends each model call ``Memory.compose()``.

        Args:
            memory_or_store: A [`Memory`][yait_byheart.Memory] (one session: a second
                session's call raises ValueError), or a store whose conversation
                ``adk-input/<app>/<user>/<session>`` each session's input is filed in.
            name: The plugin's name (default ``"byheart"``).
            **memory_settings: Memory settings (``budget=``, ...) for a store's new
                conversations.

        ``last_result`` holds the latest compose result (log its ``size``, ``stable_upto``).
        """

        def __init__(
            self, memory_or_store: Any, *, name: str = "byheart", **memory_settings: Any
        ) -> None:
            super().__init__(name=name)
            check_store(memory_or_store, "ByheartPlugin()", allow_memory=True)
            if isinstance(memory_or_store, Memory) and memory_settings:
                raise TypeError(
                    "ByheartPlugin(): Memory settings apply only when a store is given; set "
                    "them on the Memory you pass"
                )
            self._source = memory_or_store
            self._settings = memory_settings
            self._inputs: dict[str, _Input] = {}
            self._lock = threading.Lock()
            self.last_result: Any = None
            self.last_conversation = ""
            """The store conversation of the latest call's session."""

        def _input(self, session: Any) -> _Input:
            """The session's input, current with what other workers filed: a session is
            ``(app, user, session id)``, ADK's own key, and one conversation of the store."""
            key = conversation_name(INPUT, session.app_name, session.user_id, session.id)
            self.last_conversation = key
            got = self._inputs.get(key)
            if got is not None and (got.refresh() or isinstance(self._source, Memory)):
                return got
            if isinstance(self._source, Memory):
                if self._inputs:
                    raise ValueError(
                        f"ByheartPlugin: a Memory serves one session, and session "
                        f"{session.id!r} is a second; pass a store to serve several"
                    )
                memory = self._source
            else:  # new here, or deleted (with its session) since: opened anew
                memory = self._source.open(key, user=session.user_id, **self._settings)
            self._inputs[key] = got = _Input(memory)
            return got

        def _compose(self, session: Any, contents: list[Any]) -> list[Any]:
            with self._lock:
                got = self._input(session)
                sent = got.compose(contents)
                self.last_result = got.last_result
                return sent

        async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
            """Replace ``llm_request.contents`` with the composed selection (in a worker
            thread: a store's writes stay off the event loop)."""
            session = callback_context.session
            contents = list(llm_request.contents or [])
            if contents:
                llm_request.contents = await asyncio.to_thread(self._compose, session, contents)

    return ByheartPlugin


# -- sessions ------------------------------------------------------------------------------


def _make_session_service() -> type:
    from google.adk.sessions import BaseSessionService
    from google.adk.sessions.base_session_service import ListSessionsResponse

    class ByheartSessionService(BaseSessionService):
        """An ADK session service whose sessions live in a byheart store.

        Args:
            store: A ``SQLiteStore`` or ``PostgresStore``.
            **memory_settings: Memory settings (``budget=``, ...) for new conversations.

        Every event is kept exactly (``get_session`` returns events equal to those
        appended, also after the store is reopened), and its words are filed in the
        session's Memory (``memory(...)``). The store's work runs in a worker thread.

        Any number of these services, on store handles of one file or database, in one
        process or many, act as one: each read reflects every write acknowledged before it
        through any of them (a session another one created, appended to or deleted), and an
        event appended to a session another one deleted raises ADK's
        ``SessionNotFoundError``.
        """

        def __init__(self, store: Any, **memory_settings: Any) -> None:
            check_store(store, "ByheartSessionService()")
            self._sessions = Sessions(store, memory_settings)

        def memory(self, *, app_name: str, user_id: str, session_id: str) -> Memory | None:
            """The session's Memory (None if there is no such session)."""
            name = conversation_name(SESSION, app_name, user_id, session_id)
            return self._sessions.memory(name, user_id, create=False)

        async def create_session(
            self, *, app_name: str, user_id: str, state: dict[str, Any] | None = None,
            session_id: str | None = None,
        ) -> Any:  # fmt: skip
            return await asyncio.to_thread(
                self._sessions.create, app_name, user_id, state, session_id
            )

        async def get_session(
            self, *, app_name: str, user_id: str, session_id: str, config: Any = None
        ) -> Any:
            return await asyncio.to_thread(
                self._sessions.read, app_name, user_id, session_id, config
            )

        async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> Any:
            found = await asyncio.to_thread(self._sessions.listed, app_name, user_id)
            return ListSessionsResponse(sessions=found)

        async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
            await asyncio.to_thread(self._sessions.delete, app_name, user_id, session_id)

        async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
            scoped = await asyncio.to_thread(self._sessions.scoped, app_name, user_id)
            return {k[5:]: v for k, v in scoped.items() if k.startswith("user:")}

        async def append_event(self, session: Any, event: Any) -> Any:
            if event.partial:
                return event
            await asyncio.to_thread(self._sessions.require, session)
            # ADK's own step first: temp state applied to the session, then trimmed from the
            # event, so that what is stored holds none of it.
            event = await super().append_event(session, event)
            await asyncio.to_thread(self._sessions.append, session, event)
            session.last_update_time = event.timestamp
            return event

    return ByheartSessionService


# -- memory --------------------------------------------------------------------------------


def _make_memory_service() -> type:
    from google.adk.memory import BaseMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry

    class ByheartMemoryService(BaseMemoryService):
        """ADK memory from a byheart store: the same user's sessions, verbatim.

        Args:
            store_or_sessions: The ``ByheartSessionService`` whose sessions to recall
                from, or a store (its sessions are those a ``ByheartSessionService`` on it
                keeps, and those ``add_session_to_memory`` copies).
            limit: How many events ``search_memory`` returns at most (default 5).

        ``search_memory`` recalls from one user's sessions of one app (ADK's key for
        memory), as the store holds them when it is called, through any handle.
        """

        def __init__(self, store_or_sessions: Any, *, limit: int = 5) -> None:
            got = getattr(store_or_sessions, "_sessions", None)
            if not isinstance(got, Sessions):
                check_store(store_or_sessions, "ByheartMemoryService()")
                got = Sessions(store_or_sessions, {})
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(
                    f"ByheartMemoryService(): limit must be an int >= 1, got {limit!r}"
                )
            self._sessions, self.limit = got, limit

        async def add_session_to_memory(self, session: Any) -> None:
            """Ingest the session's events the store does not have yet; adding a session
            again (ADK allows it any number of times) ingests exactly those appended since.
            A session the store keeps gets nothing twice; one kept by another service is
            copied for memory, its events only: its app and user state are never written
            to the store's."""
            await asyncio.to_thread(self._sessions.add_copy, session)

        async def search_memory(self, *, app_name: str, user_id: str, query: str) -> Any:
            """The events of ``user_id``'s sessions of ``app_name`` that match ``query``."""
            found = await asyncio.to_thread(
                recall, self._sessions, app_name, user_id, query, self.limit
            )
            return SearchMemoryResponse(memories=[
                MemoryEntry(content=event.content, author=event.author, id=event.id,
                            timestamp=_iso(event.timestamp),
                            custom_metadata={"session_id": sid})
                for sid, event in found
            ])  # fmt: skip

    return ByheartMemoryService


def _iso(stamp: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(stamp, tz=timezone.utc).isoformat()


__getattr__ = lazy_classes(
    __name__,
    {
        "ByheartPlugin": _make_plugin,
        "ByheartSessionService": _make_session_service,
        "ByheartMemoryService": _make_memory_service,
    },
)
