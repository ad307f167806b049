"""byheart for Strands Agents: the model's input composed, and sessions kept in a store.

- ``ByheartMiddleware(memory_or_store, session_id)`` is model-input middleware:
  ``agent.add_middleware(InvokeModelStage.Input, ByheartMiddleware(...))``. Before each model
  call it files the agent's new messages (Bedrock Converse dicts: ``text``, ``toolUse``,
  ``toolResult`` blocks) in a [`Memory`][yait_byheart.Memory] and sends
  ``Memory.compose()`` instead of every message: a composed message that is a whole filed
  message is that message as the agent holds it, and every ``toolUse`` and ``toolResult``
  block sent is the agent's own; the agent's ``messages`` keep everything.
- ``ByheartSessionRepository(store)`` is a Strands ``SessionRepository`` (for
  ``RepositorySessionManager``): a session, its agents and multi-agent states in one
  conversation of the store, each agent's messages in another, one turn per message keeping
  the ``SessionMessage`` exactly; SQLite or PostgreSQL.

Strands is imported when a name of this module is first used (``pip install
'.[strands]'``). See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from typing import Any

from ..memory import Memory
from ..store import StoreConflictError
from ._common import (
    ModelInput,
    Neutral,
    TurnItems,
    catch_up,
    check_store,
    conversation_name,
    file_items,
    lazy_classes,
    open_memory,
    stored_messages,
)

# ByheartSessionRepository subclasses Strands' SessionRepository: made by __getattr__.
__all__ = ["ByheartMiddleware", "ByheartSessionRepository"]  # noqa: F822

TAG = "strands"
"""The key of a turn's ``item`` under which the integration keeps what Strands made."""
Message = dict[str, Any]
# Conversations a repository keeps open (sessions and their agents), the least recently used
# dropped first.
OPEN_AT_MOST = 256


def _output(result: dict[str, Any]) -> str:
    """A ``toolResult``'s content as text: its text blocks, JSON blocks as JSON."""
    out = []
    for block in result.get("content") or []:
        if "text" in block:
            out.append(str(block["text"]))
        elif "json" in block:
            out.append(json.dumps(block["json"], ensure_ascii=False, default=str))
    return "\n\n".join(out)


def _neutral(message: Message) -> Neutral:
    """A Converse message's neutral role and parts (reasoning, images, documents and other
    blocks are kept in the message, not filed)."""
    role = "assistant" if message.get("role") == "assistant" else "user"
    texts: list[str] = []
    tools: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            arguments = json.dumps(use.get("input") or {}, ensure_ascii=False, default=str)
            tools.append({"type": "tool_call", "id": str(use.get("toolUseId", "")),
                          "name": str(use.get("name", "")), "arguments": arguments})  # fmt: skip
        elif "toolResult" in block:
            got = block["toolResult"]
            part: dict[str, Any] = {"type": "tool_result", "output": _output(got),
                                    "id": str(got.get("toolUseId", ""))}  # fmt: skip
            if got.get("status") == "error":
                part["is_error"] = True
            tools.append(part)
    text = "\n\n".join(t for t in texts if t)
    said = [{"type": "text", "text": text}] if text.strip() else []
    return role, (said + tools if role == "assistant" else tools + said)


def _dump(message: Any) -> Any:
    from strands.types.session import encode_bytes_values

    return json.loads(json.dumps(encode_bytes_values(message), default=str))


class _Input(ModelInput[Message]):
    tag, call = TAG, "ByheartMiddleware"

    def dump(self, message: Message) -> Any:
        return _dump(message)

    def load(self, data: Any) -> Message:
        from strands.types.session import decode_bytes_values

        loaded: Message = decode_bytes_values(data)
        return loaded

    def neutral(self, message: Message) -> Neutral:
        return _neutral(message)

    def tool_parts(self, message: Message, parts: list[dict[str, Any]]) -> dict[Any, Any]:
        found: dict[tuple[str, str], Any] = {}
        for block in message.get("content") or []:
            if "toolUse" in block:
                found["call", str(block["toolUse"].get("toolUseId", ""))] = block
            elif "toolResult" in block:
                found["result", str(block["toolResult"].get("toolUseId", ""))] = block
        return found

    def build(self, role: str, parts: list[Any]) -> Message:
        content = [{"text": p["text"]} if p.get("type") == "text" else p for p in parts]
        return {"role": role, "content": content}

    def parts_of(self, message: Message) -> list[Any]:
        return list(message.get("content") or [])


class ByheartMiddleware:
    """Strands model-input middleware sending ``Memory.compose()`` to the model.

    Args:
        memory_or_store: A [`Memory`][yait_byheart.Memory], or a store (``SQLiteStore``,
            ``PostgresStore``) whose conversation ``session_id`` is opened (created if absent).
        session_id: The conversation's id (default ``"strands"``).
        **memory_settings: Memory settings (``budget=``, ...) for a store's new conversation.

    Register it with ``agent.add_middleware(InvokeModelStage.Input, middleware)``; the
    store's work runs in a worker thread. ``last_result`` holds the latest compose result.
    """

    def __init__(
        self, memory_or_store: Any, session_id: str = "strands", **memory_settings: Any
    ) -> None:
        memory, _ = open_memory(memory_or_store, session_id, memory_settings, "ByheartMiddleware()")
        self._input = _Input(memory)
        self._lock = threading.Lock()

    @property
    def memory(self) -> Memory:
        """The Memory the agent's messages are filed in."""
        return self._input.memory

    @property
    def last_result(self) -> Any:
        return self._input.last_result

    def compose(self, messages: list[Message]) -> list[Message]:
        """File the messages not seen yet and return what to send instead of ``messages``."""
        with self._lock:
            return self._input.compose(list(messages))

    async def __call__(self, context: Any) -> Any:
        """The ``InvokeModelStage.Input`` handler: the context with the composed messages."""
        sent = await asyncio.to_thread(self.compose, context.messages)
        return context.replace(messages=sent)


# -- sessions ------------------------------------------------------------------------------


class _Repository:
    """What ``ByheartSessionRepository`` does: the session's conversation
    ``strands/<session>`` holds item-only turns (``{"strands": {"session" | "agent" |
    "multi_agent": ...}}``, the latest of each id wins); ``strands/<session>/<agent>`` one
    turn per message (``{"strands": [SessionMessage.to_dict()]}``), a message updated
    (redacted) by redacting its turn and filing the new one.

    Each step here takes the lock and does all its work itself: the repository's public
    methods never call one another, so a caller counting (or patching) one public method sees
    only its own calls."""

    def __init__(self, store: Any, settings: dict[str, Any]) -> None:
        self.store = store
        self.settings = settings
        self.lock = threading.RLock()
        # The conversations used last (every read catches up with the store, so one dropped
        # here is only reopened): a server's sessions do not pile up in memory.
        self.open: OrderedDict[str, Memory] = OrderedDict()
        self.views: dict[str, TurnItems[Any]] = {}  # an agent's message records, read fresh

    def memory(self, name: str, create: bool = False) -> Memory | None:
        """The conversation ``name``, caught up with what other handles and processes stored
        (None if absent and not ``create``)."""
        memory = self.open.get(name)
        if memory is not None:
            try:
                catch_up(memory)
                self.open.move_to_end(name)
                return memory
            except StoreConflictError:  # deleted through another handle: looked up anew
                del self.open[name]
        if not create and name not in self.store.conversations():
            return None
        opened: Memory = self.store.open(name, **self.settings)
        self.open[name] = opened
        while len(self.open) > OPEN_AT_MOST:
            dropped, _ = self.open.popitem(last=False)
            self.views.pop(dropped, None)
        return opened

    def records(self, session_id: str, kind: str) -> dict[str, Any]:
        """The latest record of each id of ``kind`` in the session (None: no session)."""
        memory = self.memory(conversation_name("strands", session_id))
        out: dict[str, Any] = {}
        for message in stored_messages(memory) if memory is not None else []:
            kept = (message or {}).get("item", {}).get(TAG, {})
            if isinstance(kept, dict) and kind in kept:
                out[kept.get("id", "")] = kept[kind]
        return out

    def record(self, session_id: str, kind: str, key: str, value: Any, must: bool) -> None:
        """File a record; ``must``: the session must exist (else SessionException)."""
        from strands.types.exceptions import SessionException

        memory = self.memory(conversation_name("strands", session_id), create=not must)
        if memory is None:
            raise SessionException(f"Session {session_id} does not exist")
        item = {TAG: {kind: value, "id": key}}
        memory.append_message({"role": "user", "parts": [], "item": item})

    def agent_messages(self, session_id: str, agent_id: str) -> dict[int, tuple[int, Any]]:
        """An agent's message records by message id, with the turn of each, as stored now."""
        name = conversation_name("strands", session_id, agent_id)
        memory = self.memory(name)
        if memory is None:
            return {}
        view = self.views.get(name)
        if view is None or view.memory is not memory:
            view = self.views[name] = TurnItems(memory, TAG, _same, _none)
        items, turns = view.read()
        return {
            record["message_id"]: (turn, record) for record, turn in zip(items, turns, strict=True)
        }

    def add_session(self, session: Any) -> Any:
        """File a new session (SessionException if it exists); the session."""
        from strands.types.exceptions import SessionException

        with self.lock:
            if self.records(session.session_id, "session"):
                raise SessionException(f"Session {session.session_id} already exists")
            self.record(session.session_id, "session", "", session.to_dict(), False)
            return session

    def put_agent(self, session_id: str, session_agent: Any, new: bool) -> None:
        """File an agent, `new` (SessionException if it exists) or updated (if it does not;
        its creation time is kept)."""
        from strands.types.exceptions import SessionException

        agent_id = session_agent.agent_id
        with self.lock:
            before = self.records(session_id, "agent").get(agent_id)
            if new and before is not None:
                raise SessionException(f"Agent {agent_id} already exists in session {session_id}")
            if not new and before is None:
                raise SessionException(f"Agent {agent_id} in session {session_id} does not exist")
            if before is not None:
                session_agent.created_at = before["created_at"]
            self.record(session_id, "agent", agent_id, session_agent.to_dict(), True)

    def put_message(self, session_id: str, agent_id: str, message: Any, new: bool) -> None:
        """File a message of an agent that exists, `new` or updated (if it exists; its
        creation time is kept); SessionException otherwise."""
        from strands.types.exceptions import SessionException

        with self.lock:
            if new and agent_id not in self.records(session_id, "agent"):
                raise SessionException(f"Agent {agent_id} does not exist in {session_id}")
            if not new:
                before = self.agent_messages(session_id, agent_id).get(message.message_id)
                if before is None:
                    raise SessionException(f"Message {message.message_id} does not exist")
                message.created_at = before[1]["created_at"]
            self.file_message(session_id, agent_id, message)

    def put_multi_agent(self, session_id: str, multi_agent: Any, new: bool) -> None:
        """File a multi-agent's state, new or updated (SessionException if it does not
        exist)."""
        from strands.types.exceptions import SessionException

        with self.lock:
            if not new and multi_agent.id not in self.records(session_id, "multi_agent"):
                raise SessionException(
                    f"MultiAgent state {multi_agent.id} in session {session_id} does not exist"
                )
            state = multi_agent.serialize_state()
            self.record(session_id, "multi_agent", multi_agent.id, state, True)

    def found(self, session_id: str, kind: str, key: str) -> Any:
        """The latest record of `kind` and id `key` in the session (None if none)."""
        with self.lock:
            return self.records(session_id, kind).get(key)

    def messages_of(
        self, session_id: str, agent_id: str, offset: int = 0, limit: int | None = None
    ) -> list[Any]:
        """An agent's message records in id order: `limit` of them (None: all) from
        `offset`."""
        with self.lock:
            known = self.agent_messages(session_id, agent_id)
            ids = sorted(known)[offset:]
            return [known[i][1] for i in (ids if limit is None else ids[:limit])]

    def message(self, session_id: str, agent_id: str, message_id: int) -> Any:
        """One message's record (None if the agent has no such message)."""
        with self.lock:
            found = self.agent_messages(session_id, agent_id).get(message_id)
            return None if found is None else found[1]

    def agent_memory(self, session_id: str, agent_id: str) -> Memory | None:
        """The Memory holding an agent's messages (None if it has none)."""
        with self.lock:
            return self.memory(conversation_name("strands", session_id, agent_id))

    def file_message(self, session_id: str, agent_id: str, session_message: Any) -> None:
        name = conversation_name("strands", session_id, agent_id)
        memory = self.memory(name, create=True)
        assert memory is not None
        known = self.agent_messages(session_id, agent_id)
        before = known.get(session_message.message_id)
        if before is not None:
            memory.redact(before[0])
        dumped = json.loads(json.dumps(session_message.to_dict(), default=str))
        neutral = _neutral(session_message.to_message())
        file_items(memory, [session_message], lambda _: neutral, [dumped], TAG,
                   "ByheartSessionRepository")  # fmt: skip


def _same(record: Any) -> Any:
    return record


def _none(message: dict[str, Any]) -> list[Any]:
    return []  # a turn not filed by the repository holds no SessionMessage


def _made(kind: Any, record: Any) -> Any:
    """`kind.from_dict(record)`, or None for no record."""
    return None if record is None else kind.from_dict(record)


def _make_repository() -> type:
    from strands.session.session_repository import SessionRepository
    from strands.types.session import Session, SessionAgent, SessionMessage

    class ByheartSessionRepository(SessionRepository):  # type: ignore[misc]
        """A Strands ``SessionRepository`` in a byheart store.

        Args:
            store: A ``SQLiteStore`` or ``PostgresStore``.
            **memory_settings: Memory settings (``budget=``, ...) for new conversations.

        Use it as ``RepositorySessionManager(session_id=..., session_repository=...)``.
        Every ``SessionMessage`` is read back equal to the one written, also after the
        store is reopened, and each agent's messages are filed for selection in the Memory
        ``memory(session_id, agent_id)`` returns.
        """

        def __init__(self, store: Any, **memory_settings: Any) -> None:
            check_store(store, "ByheartSessionRepository()")
            self._repo = _Repository(store, memory_settings)

        def memory(self, session_id: str, agent_id: str) -> Memory | None:
            """The Memory holding an agent's messages (None if it has none)."""
            return self._repo.agent_memory(session_id, agent_id)

        def create_session(self, session: Any, **kwargs: Any) -> Any:
            return self._repo.add_session(session)

        def read_session(self, session_id: str, **kwargs: Any) -> Any:
            return _made(Session, self._repo.found(session_id, "session", ""))

        def create_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
            self._repo.put_agent(session_id, session_agent, new=True)

        def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> Any:
            return _made(SessionAgent, self._repo.found(session_id, "agent", agent_id))

        def update_agent(self, session_id: str, session_agent: Any, **kwargs: Any) -> None:
            self._repo.put_agent(session_id, session_agent, new=False)

        def create_message(
            self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any
        ) -> None:
            self._repo.put_message(session_id, agent_id, session_message, new=True)

        def read_message(
            self, session_id: str, agent_id: str, message_id: int, **kwargs: Any
        ) -> Any:
            return _made(SessionMessage, self._repo.message(session_id, agent_id, message_id))

        def update_message(
            self, session_id: str, agent_id: str, session_message: Any, **kwargs: Any
        ) -> None:
            self._repo.put_message(session_id, agent_id, session_message, new=False)

        def list_messages(
            self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0,
            **kwargs: Any,
        ) -> list[Any]:  # fmt: skip
            found = self._repo.messages_of(session_id, agent_id, offset, limit)
            return [SessionMessage.from_dict(record) for record in found]

        def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
            self._repo.put_multi_agent(session_id, multi_agent, new=True)

        def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> Any:
            return self._repo.found(session_id, "multi_agent", multi_agent_id)

        def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
            self._repo.put_multi_agent(session_id, multi_agent, new=False)

    return ByheartSessionRepository


__getattr__ = lazy_classes(__name__, {"ByheartSessionRepository": _make_repository})
