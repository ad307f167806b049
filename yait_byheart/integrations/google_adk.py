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
import json
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ..bm25 import BM25
from ..memory import Memory
from ._common import (
    ModelInput,
    Neutral,
    check_store,
    conversation_keys,
    conversation_name,
    file_items,
    lazy_classes,
    stored_messages,
)

# The three classes subclass ADK's and are made by the module __getattr__ on first use.
__all__ = ["ByheartMemoryService", "ByheartPlugin", "ByheartSessionService"]  # noqa: F822

TAG = "google_adk"
"""The key of a turn's ``item`` under which the integration keeps what ADK made."""
Pending = list[tuple[str, str]]  # the open calls of the latest model content: (name, id)


def _dump(obj: Any) -> Any:
    return obj.model_dump(mode="json", exclude_none=True)


def _neutral(content: Any, pending: Pending, prefix: str) -> tuple[str, list[dict[str, Any]]]:
    """A ``types.Content`` as a neutral role and parts. A call without an id (ADK strips its
    own ids before a model call) gets ``prefix`` and its place; a response without an id
    answers the first open call of its name, as Gemini pairs them."""
    role = "assistant" if content.role == "model" else "user"
    texts, tools = [], []
    calls: Pending = []
    for k, part in enumerate(content.parts or ()):
        if part.text is not None and not part.thought:
            texts.append(part.text)
        elif part.function_call is not None:
            call = part.function_call
            ident = call.id or f"{prefix}.{k}"
            calls.append((call.name or "", ident))
            arguments = json.dumps(call.args or {}, ensure_ascii=False)
            tools.append(
                {"type": "tool_call", "id": ident, "name": call.name or "", "arguments": arguments}
            )
        elif part.function_response is not None:
            got = part.function_response
            ident = got.id or next((i for n, i in pending if n == got.name), f"{prefix}.{k}")
            pending[:] = [(n, i) for n, i in pending if i != ident]
            output = json.dumps(got.response or {}, ensure_ascii=False, default=str)
            tools.append({"type": "tool_result", "id": ident, "output": output})
    if role == "assistant":
        pending[:] = calls
    text = "\n\n".join(t for t in texts if t)
    parts = [{"type": "text", "text": text}] if text.strip() else []
    return role, (parts + tools if role == "assistant" else tools + parts)


def _tool_parts(content: Any, parts: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
    """The ``Part`` objects of ``content``'s calls and responses, by their neutral ids."""
    calls = [p for p in content.parts or () if p.function_call is not None]
    results = [p for p in content.parts or () if p.function_response is not None]
    ids = [p["id"] for p in parts if p["type"] == "tool_call"]
    done = [p["id"] for p in parts if p["type"] == "tool_result"]
    found = {("call", i): p for i, p in zip(ids, calls, strict=False)}
    found.update({("result", i): p for i, p in zip(done, results, strict=False)})
    return found


def _file(memory: Memory, obj: Any, neutral: Neutral, dumped: Any, call: str) -> None:
    """File one ADK object (a Content, an Event) as one turn keeping its dump."""
    file_items(memory, [obj], lambda _: neutral, [dumped], TAG, call)


class _Input(ModelInput[Any]):
    """One ADK session's model input: ``Content`` objects filed and composed."""

    tag, call = TAG, "ByheartPlugin"

    def __init__(self, memory: Memory) -> None:
        self.pending: Pending = []
        super().__init__(memory)

    def _remember(self, key: str, message: Any, neutral: Neutral) -> None:
        # Also on reopening: the calls still open after the filed turns.
        super()._remember(key, message, neutral)
        role, parts = neutral
        if role == "assistant":
            self.pending = [(p["name"], p["id"]) for p in parts if p["type"] == "tool_call"]
        else:
            answered = {p["id"] for p in parts if p["type"] == "tool_result"}
            self.pending = [(n, i) for n, i in self.pending if i not in answered]

    def dump(self, message: Any) -> Any:
        return _dump(message)

    def load(self, data: Any) -> Any:
        from google.genai import types

        return types.Content.model_validate(data)

    def neutral(self, message: Any) -> Neutral:
        return _neutral(message, list(self.pending), f"adk-call-{len(self.memory)}")

    def tool_parts(self, message: Any, parts: list[dict[str, Any]]) -> dict[tuple[str, str], Any]:
        return _tool_parts(message, parts)

    def build(self, role: str, parts: list[Any]) -> Any:
        from google.genai import types

        made = [types.Part(text=p["text"]) if isinstance(p, dict) else p for p in parts]
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
            key = conversation_name("adk-input", session.app_name, session.user_id, session.id)
            self.last_conversation = key
            if key not in self._inputs:
                if isinstance(self._source, Memory):
                    if self._inputs:
                        raise ValueError(
                            f"ByheartPlugin: a Memory serves one session, and session "
                            f"{session.id!r} is a second; pass a store to serve several"
                        )
                    memory = self._source
                else:
                    memory = self._source.open(key, user=session.user_id, **self._settings)
                self._inputs[key] = _Input(memory)
            return self._inputs[key]

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


def _deltas(state: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    from google.adk.sessions import _session_util

    return _session_util.extract_state_delta(dict(state or {}))


def _scopes(app: str, user: str) -> list[tuple[str, str, str | None]]:
    """ADK's shared state scopes: each one's name, conversation and store user."""
    return [("app", conversation_name("adk-state", app), None),
            ("user", conversation_name("adk-state", app, user), user)]  # fmt: skip


class _Sessions:
    """What ``ByheartSessionService`` does, synchronously (its async methods run this in a
    worker thread): a session is conversation ``adk/<app>/<user>/<session>``, its first turn
    the session's creation (``{"google_adk": {"session": ...}}``), then one turn per event;
    app and user state are the deltas filed in ``adk-state/<app>[/<user>]``."""

    def __init__(self, store: Any, settings: dict[str, Any]) -> None:
        self.store = store
        self.settings = settings
        self.lock = threading.RLock()
        self.open: dict[str, Memory] = {}

    def memory(self, name: str, user: str | None, create: bool = True) -> Memory | None:
        with self.lock:
            if name not in self.open:
                if not create and name not in self.store.conversations(user=user):
                    return None
                self.open[name] = self.store.open(name, user=user, **self.settings)
            return self.open[name]

    def file_state(self, app: str, user: str, state: Mapping[str, Any] | None) -> dict[str, Any]:
        """File ``state``'s app and user deltas; its session part."""
        deltas = _deltas(state)
        for scope, name, owner in _scopes(app, user):
            if deltas[scope]:
                memory = self.memory(name, owner)
                assert memory is not None
                item = {TAG: {"state": deltas[scope]}}
                memory.append_message({"role": "user", "parts": [], "item": item})
        return deltas["session"]

    def scoped(self, app: str, user: str) -> dict[str, Any]:
        """App and user state, prefixed as ADK merges them into a session's."""
        out: dict[str, Any] = {}
        for scope, name, owner in _scopes(app, user):
            prefix = scope + ":"
            memory = self.memory(name, owner, create=False)
            for message in stored_messages(memory) if memory is not None else []:
                for key, value in (message or {}).get("item", {}).get(TAG, {}).items():
                    out.update({prefix + k: v for k, v in value.items()} if key == "state" else {})
        return out

    def create(self, app: str, user: str, state: Any, session_id: str | None) -> Any:
        from google.adk.errors.already_exists_error import AlreadyExistsError

        sid = (session_id or "").strip() or str(uuid.uuid4())
        name = conversation_name("adk", app, user, sid)
        with self.lock:
            if name in self.store.conversations(user=user):
                raise AlreadyExistsError(f"Session with id {sid} already exists.")
            own = self.file_state(app, user, state)
            memory = self.memory(name, user)
            assert memory is not None
            head = {"session": {"state": own, "created": time.time()}}
            memory.append_message({"role": "user", "parts": [], "item": {TAG: head}})
        return self.read(app, user, sid, None)

    def read(self, app: str, user: str, sid: str, config: Any) -> Any:
        from google.adk.events.event import Event
        from google.adk.sessions import Session

        memory = self.memory(conversation_name("adk", app, user, sid.strip()), user, create=False)
        if memory is None:
            return None
        state: dict[str, Any] = {}
        created, events = 0.0, []
        for message in stored_messages(memory):
            kept = (message or {}).get("item", {}).get(TAG)
            if isinstance(kept, dict) and "session" in kept:
                state.update(kept["session"]["state"])
                created = kept["session"]["created"]
            elif isinstance(kept, list):
                event = Event.model_validate(kept[0])
                events.append(event)
                if event.actions and event.actions.state_delta:
                    state.update(_deltas(event.actions.state_delta)["session"])
        updated = events[-1].timestamp if events else created
        state.update(self.scoped(app, user))
        session = Session(app_name=app, user_id=user, id=sid.strip(), state=state,
                          last_update_time=updated)  # fmt: skip
        session.events = _window(events, config)
        return session

    def names(self, app: str, user: str | None) -> list[list[str]]:
        """The (app, user, session) keys of the app's sessions (of ``user`` when given)."""
        found = self.store.conversations(user=user) if user else self.store.conversations()
        head = conversation_name("adk", app) + "/"
        return [conversation_keys(n) for n in found if n.startswith(head)]

    def listed(self, app: str, user: str | None) -> list[Any]:
        """The sessions of `app` (of `user`, or of every user), without their events."""
        found = [self.read(a, u, sid, None) for a, u, sid in self.names(app, user)]
        for session in found:
            session.events = []
        return sorted(found, key=lambda s: (s.last_update_time, s.user_id, s.id))

    def delete(self, app: str, user: str, sid: str) -> None:
        """Delete session `sid` of `user` in `app` (nothing if there is none)."""
        name = conversation_name("adk", app, user, sid.strip())
        with self.lock:
            self.open.pop(name, None)
            if name in self.store.conversations(user=user):
                self.store.delete(name)

    def require(self, session: Any) -> Memory:
        """The session's Memory; SessionNotFoundError if there is no such session."""
        from google.adk.errors.session_not_found_error import SessionNotFoundError

        name = conversation_name("adk", session.app_name, session.user_id, session.id)
        memory = self.memory(name, session.user_id, create=False)
        if memory is None:
            raise SessionNotFoundError(f"Session {session.id} not found.")
        return memory

    def append(self, session: Any, event: Any) -> None:
        memory = self.require(session)
        dumped = _dump(event)
        pending: Pending = []
        content = event.content
        if content is not None:
            role, parts = _neutral(content, pending, f"adk-call-{len(memory)}")
        else:
            role, parts = "user", []
        _file(memory, event, (role, parts), dumped, "ByheartSessionService.append_event")
        if event.actions and event.actions.state_delta:
            self.file_state(session.app_name, session.user_id, event.actions.state_delta)


def _window(events: list[Any], config: Any) -> list[Any]:
    """The events ``GetSessionConfig`` asks for, as ADK's in-memory service reads them."""
    if config is None:
        return events
    if config.num_recent_events is not None:
        events = events[-config.num_recent_events :] if config.num_recent_events else []
    if config.after_timestamp is not None:
        events = [e for e in events if e.timestamp >= config.after_timestamp]
    return events


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
        """

        def __init__(self, store: Any, **memory_settings: Any) -> None:
            check_store(store, "ByheartSessionService()")
            self._sessions = _Sessions(store, memory_settings)

        def memory(self, *, app_name: str, user_id: str, session_id: str) -> Memory | None:
            """The session's Memory (None if there is no such session)."""
            name = conversation_name("adk", app_name, user_id, session_id)
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


def _recall(sessions: _Sessions, app: str, user: str, query: str, limit: int) -> list[Any]:
    """The ``limit`` events of ``user``'s sessions of ``app`` that best match ``query``
    (BM25 over each event's words), verbatim, best first. Kept apart so that a store-wide
    recall can replace it."""
    from google.adk.events.event import Event

    found: list[tuple[str, str, Any]] = []  # (session id, words, event dump)
    for _, owner, sid in sessions.names(app, user):
        if owner != user:
            continue
        memory = sessions.memory(conversation_name("adk", app, owner, sid), owner, create=False)
        for message in stored_messages(memory) if memory is not None else []:
            kept = (message or {}).get("item", {}).get(TAG)
            words = " ".join(p.get("text") or p.get("output") or "" for p in message["parts"]) \
                if message else ""  # fmt: skip
            if isinstance(kept, list) and words.strip() and kept[0].get("content"):
                found.append((sid, words, kept[0]))
    if not found or not query.strip():
        return []
    scores = BM25().fit([w for _, w, _ in found]).scores(query)
    best = sorted((k for k in range(len(found)) if scores[k] > 0), key=lambda k: -scores[k])
    return [(found[k][0], Event.model_validate(found[k][2])) for k in best[:limit]]


def _make_memory_service() -> type:
    from google.adk.memory import BaseMemoryService
    from google.adk.memory.base_memory_service import SearchMemoryResponse
    from google.adk.memory.memory_entry import MemoryEntry

    class ByheartMemoryService(BaseMemoryService):
        """ADK memory from a byheart store: the same user's sessions, verbatim.

        Args:
            store_or_sessions: The ``ByheartSessionService`` whose sessions to recall
                from, or a store (its sessions are those a ``ByheartSessionService`` on it
                keeps, and those ``add_session_to_memory`` files).
            limit: How many events ``search_memory`` returns at most (default 5).
        """

        def __init__(self, store_or_sessions: Any, *, limit: int = 5) -> None:
            got = getattr(store_or_sessions, "_sessions", None)
            if not isinstance(got, _Sessions):
                check_store(store_or_sessions, "ByheartMemoryService()")
                got = _Sessions(store_or_sessions, {})
            if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
                raise ValueError(
                    f"ByheartMemoryService(): limit must be an int >= 1, got {limit!r}"
                )
            self._sessions, self.limit = got, limit

        async def add_session_to_memory(self, session: Any) -> None:
            """File a session kept elsewhere (a session of the store is there already)."""

            def add() -> None:
                keys = (session.app_name, session.user_id, session.id)
                with self._sessions.lock:
                    if self._sessions.read(*keys, None) is not None:
                        return
                    self._sessions.create(*keys[:2], dict(session.state), session.id)
                    for event in session.events:
                        if not event.partial:
                            self._sessions.append(session, event)

            await asyncio.to_thread(add)

        async def search_memory(self, *, app_name: str, user_id: str, query: str) -> Any:
            """The events of ``user_id``'s sessions of ``app_name`` that match ``query``."""
            found = await asyncio.to_thread(
                _recall, self._sessions, app_name, user_id, query, self.limit
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
