"""Where ``google_adk``'s session and memory services keep ADK's sessions in a store, and how
every read stays current with what other handles and processes wrote.

A session is conversation ``adk/<app>/<user>/<session>``: its first turn the session's
creation (``{"google_adk": {"session": ...}}``), then one turn per event keeping the event
verbatim (keyed by the event's id, so that adding it again stores nothing). App and user state
are the deltas filed in ``adk-state/<app>[/<user>]``; a session that
``ByheartMemoryService.add_session_to_memory`` was given and the store does not keep is
copied, its events only, to ``adk-memory/<app>/<user>/<session>``.

One rule for every read: it reflects every write acknowledged before it, through any handle
or process. Open Memories are cached, and a cached one is followed before it is trusted: one
query when nothing changed, then only the turns other writers stored; a conversation deleted
since (by anyone) is dropped from the cache and read again, or found gone.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ..bm25 import BM25
from ..memory import Memory
from ..store import StoreConflictError, UnknownConversationError
from ._adk_content import TAG, Pending, dump, neutral
from ._common import catch_up, conversation_keys, conversation_name, stored_messages

SESSION, STATE, COPY, INPUT = "adk", "adk-state", "adk-memory", "adk-input"
"""The kinds of conversation: a session, app or user state, a session copied for memory,
the plugin's model input of a session."""
HEAD_KEY = "adk-session"  # the idempotency key of a session's first turn


def followed(memory: Memory) -> bool:
    """Catch ``memory`` up with what other handles and processes stored (one query when they
    stored nothing); False if its conversation was deleted since it was opened."""
    try:
        catch_up(memory)
    except StoreConflictError:
        return False
    return True


def event_key(event: Any) -> str | None:
    return f"adk-event/{event.id}" if event.id else None


def file_event(memory: Memory, event: Any, call: str) -> None:
    """File one event as one turn keeping its dump (its words for selection and recall). An
    event whose id is filed already stores nothing; a function response whose call the
    Memory never saw is kept without parts (kept, never sent)."""
    pending: Pending = []
    role, parts = "user", list[dict[str, Any]]()
    if event.content is not None:
        role, parts = neutral(event.content, pending, f"adk-call-{len(memory)}")
    message = {"role": role, "parts": parts, "item": {TAG: [dump(event)]}}
    key = event_key(event)
    try:
        memory.append_message(message, key=key)
    except ValueError:
        if not parts:
            raise
        memory.append_message({"role": role, "parts": [], "item": message["item"]}, key=key)


def kept_events(memory: Memory) -> list[dict[str, Any]]:
    """The events ``memory`` keeps, as their dumps, oldest first."""
    out = []
    for message in stored_messages(memory):
        kept = (message or {}).get("item", {}).get(TAG)
        if isinstance(kept, list) and kept:
            out.append(kept[0])
    return out


def _deltas(state: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    from google.adk.sessions import _session_util

    return _session_util.extract_state_delta(dict(state or {}))


def _scopes(app: str, user: str) -> list[tuple[str, str, str | None]]:
    """ADK's shared state scopes: each one's name, conversation and store user."""
    return [("app", conversation_name(STATE, app), None),
            ("user", conversation_name(STATE, app, user), user)]  # fmt: skip


def window(events: list[Any], config: Any) -> list[Any]:
    """The events ``GetSessionConfig`` asks for, as ADK's in-memory service reads them."""
    if config is None:
        return events
    if config.num_recent_events is not None:
        events = events[-config.num_recent_events :] if config.num_recent_events else []
    if config.after_timestamp is not None:
        events = [e for e in events if e.timestamp >= config.after_timestamp]
    return events


class Sessions:
    """What ``ByheartSessionService`` does, synchronously (its async methods run this in a
    worker thread), and what ``ByheartMemoryService`` reads."""

    def __init__(self, store: Any, settings: dict[str, Any]) -> None:
        self.store = store
        self.settings = settings
        self.lock = threading.RLock()
        self.open: dict[str, Memory] = {}

    def memory(self, name: str, user: str | None, create: bool = True) -> Memory | None:
        """The conversation's Memory, current (None if there is none and not ``create``)."""
        with self.lock:
            cached = self.open.get(name)
            if cached is not None and followed(cached):
                return cached
            self.open.pop(name, None)  # deleted by another handle, perhaps made anew since
            try:
                got: Memory = self.store.open(name, user=user, create=create, **self.settings)
            except UnknownConversationError:
                return None
            self.open[name] = got
            return got

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
        taken = AlreadyExistsError(f"Session with id {sid} already exists.")
        with self.lock:
            memory = self.memory(conversation_name(SESSION, app, user, sid), user)
            assert memory is not None
            if len(memory):
                raise taken
            own = _deltas(state)["session"]
            head = {"session": {"state": own, "created": time.time()}}
            try:  # keyed: of two workers creating one id at once, the second is refused
                memory.append_message(
                    {"role": "user", "parts": [], "item": {TAG: head}}, key=HEAD_KEY
                )
            except ValueError:
                raise taken from None
            self.file_state(app, user, state)
        return self.read(app, user, sid, None)

    def read(self, app: str, user: str, sid: str, config: Any) -> Any:
        from google.adk.events.event import Event
        from google.adk.sessions import Session

        memory = self.memory(conversation_name(SESSION, app, user, sid.strip()), user, False)
        if memory is None:
            return None
        state: dict[str, Any] = {}
        created, events = None, []
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
        if created is None:
            return None  # being created by another worker: not acknowledged yet
        updated = events[-1].timestamp if events else created
        state.update(self.scoped(app, user))
        session = Session(app_name=app, user_id=user, id=sid.strip(), state=state,
                          last_update_time=updated)  # fmt: skip
        session.events = window(events, config)
        return session

    def names(self, app: str, user: str | None, kind: str = SESSION) -> list[list[str]]:
        """The (app, user, session) keys of the app's sessions (of ``user`` when given)."""
        found = self.store.conversations(user=user) if user else self.store.conversations()
        head = conversation_name(kind, app) + "/"
        return [conversation_keys(n) for n in found if n.startswith(head)]

    def listed(self, app: str, user: str | None) -> list[Any]:
        """The sessions of `app` (of `user`, or of every user), without their events."""
        found = [self.read(a, u, sid, None) for a, u, sid in self.names(app, user)]
        sessions = [s for s in found if s is not None]  # deleted since it was listed
        for session in sessions:
            session.events = []
        return sorted(sessions, key=lambda s: (s.last_update_time, s.user_id, s.id))

    def delete(self, app: str, user: str, sid: str) -> None:
        """Delete session `sid` of `user` in `app` and the plugin's model input of it, if on
        this store (nothing if there is none)."""
        for kind in (SESSION, INPUT):
            name = conversation_name(kind, app, user, sid.strip())
            with self.lock:
                self.open.pop(name, None)
                # Absent: never made, or another worker deleted it first.
                with contextlib.suppress(UnknownConversationError):
                    self.store.delete(name)

    def require(self, session: Any) -> Memory:
        """The session's Memory; SessionNotFoundError if there is no such session."""
        from google.adk.errors.session_not_found_error import SessionNotFoundError

        name = conversation_name(SESSION, session.app_name, session.user_id, session.id)
        memory = self.memory(name, session.user_id, create=False)
        if memory is None or not len(memory):
            raise SessionNotFoundError(f"Session {session.id} not found.")
        return memory

    def append(self, session: Any, event: Any) -> None:
        """File ``event`` in the session and its app and user state deltas; a session deleted
        by another worker meanwhile raises ADK's SessionNotFoundError, storing nothing."""
        from google.adk.errors.session_not_found_error import SessionNotFoundError

        with self.lock:
            memory = self.require(session)
            try:
                file_event(memory, event, "ByheartSessionService.append_event")
            except StoreConflictError:
                self.open.pop(conversation_name(SESSION, session.app_name, session.user_id,
                                                session.id), None)  # fmt: skip
                raise SessionNotFoundError(f"Session {session.id} not found.") from None
            if event.actions and event.actions.state_delta:
                self.file_state(session.app_name, session.user_id, event.actions.state_delta)

    def add_copy(self, session: Any) -> None:
        """Ingest the events of ``session`` that the store does not have yet: into the
        session itself when the store keeps it, else into its copy for memory. Never files
        app or user state: that belongs to the service that keeps the session."""
        keys = (session.app_name, session.user_id, session.id)
        with self.lock:
            memory = self.memory(conversation_name(SESSION, *keys), session.user_id, False)
            if memory is None or not len(memory):
                memory = self.memory(conversation_name(COPY, *keys), session.user_id)
                assert memory is not None
            have = {e.get("id") for e in kept_events(memory)}
            for event in session.events:
                if not event.partial and event.id not in have:
                    file_event(memory, event, "ByheartMemoryService.add_session_to_memory")


def _candidates(sessions: Sessions, app: str, user: str) -> list[tuple[str, str, Any]]:
    """Each event with words of ``user``'s sessions of ``app`` (those the store keeps, then
    those copied for memory; an event in both once): (session id, words, event dump)."""
    found: list[tuple[str, str, Any]] = []
    seen: set[str] = set()
    for kind in (SESSION, COPY):
        for _, owner, sid in sessions.names(app, user, kind):
            memory = sessions.memory(conversation_name(kind, app, owner, sid), owner, False)
            for message in stored_messages(memory) if memory is not None and owner == user else []:
                kept = (message or {}).get("item", {}).get(TAG)
                if message is None or not isinstance(kept, list) or not kept[0].get("content"):
                    continue
                words = " ".join(p.get("text") or p.get("output") or "" for p in message["parts"])
                if words.strip() and kept[0].get("id") not in seen:
                    seen.add(kept[0].get("id"))
                    found.append((sid, words, kept[0]))
    return found


def recall(sessions: Sessions, app: str, user: str, query: str, limit: int) -> list[Any]:
    """The ``limit`` events of ``user``'s sessions of ``app`` that best match ``query``
    (BM25 over each event's words), verbatim, best first, as (session id, event). Kept apart
    so that a store-wide recall can replace it."""
    from google.adk.events.event import Event

    found = _candidates(sessions, app, user)
    if not found or not query.strip():
        return []
    scores = BM25().fit([w for _, w, _ in found]).scores(query)
    best = sorted((k for k in range(len(found)) if scores[k] > 0), key=lambda k: -scores[k])
    return [(found[k][0], Event.model_validate(found[k][2])) for k in best[:limit]]
