"""byheart as a LlamaIndex memory: every message kept, the agent given a composed selection.

``ByheartMemory`` is a ``BaseMemory`` (``llama_index.core.memory``): ``put`` keeps each
``ChatMessage`` exactly as given in the turns of a [`Memory`][yait_byheart.Memory] (and so in
its store) and files its words, tool calls (``ToolCallBlock`` or OpenAI-style
``additional_kwargs["tool_calls"]``) and tool results (``role="tool"`` messages) included;
``get`` returns ``Memory.compose()`` as chat messages, each whole message as it was put, a
tool call always next to its results; ``get_all`` returns every message. ``FunctionAgent(
memory=ByheartMemory.from_defaults(...))`` puts the user message, then gets, on each run.

One memory is one conversation, the store's conversation named by LlamaIndex's session id.
Every read (``get``, ``get_all``) first catches up with what other handles and processes
stored in it. ``to_dict`` / ``from_dict`` (a workflow ``Context``'s round trip) and pickling
keep a store's conversation by the store's file or schema and the session id (reopened in a
store a ByheartMemory of the process is built on; refused, saying what to do, where none is)
and a plain Memory whole.

LlamaIndex is imported when ``ByheartMemory`` is first used (``pip install
'.[llama-index]'``). See docs/agents.md.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from ..memory import Memory
from ..store import StoreConflictError
from ._common import (
    TurnItems,
    clear_memory,
    file_items,
    lazy_classes,
    message_key,
    open_memory,
    stored_messages,
    with_originals,
)

# ByheartMemory subclasses LlamaIndex's BaseMemory: made by the module __getattr__.
__all__ = ["ByheartMemory"]  # noqa: F822

TAG = "llama_index"
"""The key of a turn's ``item`` under which the memory keeps the messages it filed."""
CALL = "ByheartMemory"


def _text(message: Any) -> str:
    texts = [getattr(b, "text", None) for b in message.blocks]
    return "\n\n".join(t for t in texts if isinstance(t, str) and t)


def _calls(message: Any) -> list[dict[str, Any]]:
    """A message's tool calls as neutral parts: its ``ToolCallBlock``s, else the OpenAI-style
    calls some LLM classes leave in ``additional_kwargs["tool_calls"]``."""
    out = []
    for b in message.blocks:
        if getattr(b, "block_type", "") == "tool_call":
            args = b.tool_kwargs if isinstance(b.tool_kwargs, str) else json.dumps(b.tool_kwargs)
            out.append({"type": "tool_call", "id": b.tool_call_id or "", "name": b.tool_name,
                        "arguments": args})  # fmt: skip
    for c in [] if out else message.additional_kwargs.get("tool_calls") or []:
        c = c if isinstance(c, dict) else getattr(c, "model_dump", lambda: {})()
        f = c.get("function") or {}
        out.append({"type": "tool_call", "id": c.get("id") or "", "name": f.get("name", ""),
                    "arguments": f.get("arguments") or "{}"})  # fmt: skip
    return out


def _parts(message: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """A ChatMessage's neutral role and parts; None for messages byheart does not file."""
    role = str(getattr(message.role, "value", message.role))
    text = _text(message)
    if role == "user":
        return ("user", [{"type": "text", "text": text}]) if text.strip() else None
    if role == "assistant":
        said = [{"type": "text", "text": text}] if text.strip() else []
        return "assistant", said + _calls(message)
    if role == "tool":
        ident = message.additional_kwargs.get("tool_call_id") or ""
        return "user", [{"type": "tool_result", "id": ident, "output": text}]
    return None  # system, developer and others: kept, not filed


def _dump(message: Any) -> Any:
    return json.loads(json.dumps(message.model_dump(mode="json"), default=str))


def _load(raw: Any) -> Any:
    from llama_index.core.base.llms.types import ChatMessage

    return ChatMessage.model_validate(raw)


def _from_parts(message: dict[str, Any]) -> list[Any]:
    """A turn filed without an item (plain ``append_message``) as ChatMessages."""
    return _build(message["role"], message["parts"])


def _build(role: str, parts: list[Any]) -> list[Any]:
    """Neutral parts as ChatMessages, tool parts kept where they are LlamaIndex's own (a
    ``ToolCallBlock``, a tool message); tool results first, each its own message."""
    from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock

    texts = "\n\n".join(p["text"] for p in parts if isinstance(p, dict) and p["type"] == "text")
    if role == "assistant":
        blocks: list[Any] = [TextBlock(text=texts)] if texts else []
        for p in parts:
            if isinstance(p, ToolCallBlock) or p["type"] == "tool_call":
                blocks.append(p if isinstance(p, ToolCallBlock) else ToolCallBlock(
                    tool_call_id=p["id"], tool_name=p["name"],
                    tool_kwargs=json.loads(p["arguments"])))  # fmt: skip
        return [ChatMessage(role="assistant", blocks=blocks)]
    out = [
        p if isinstance(p, ChatMessage) else ChatMessage(
            role="tool", content=p["output"], additional_kwargs={"tool_call_id": p["id"]})
        for p in parts if not isinstance(p, dict) or p["type"] == "tool_result"
    ]  # fmt: skip
    return [*out, ChatMessage(role="user", content=texts)] if texts else out


def _originals(kept: list[Any], turns: list[int], memory: Memory) -> tuple[dict[str, Any], Any]:
    """The kept messages by the neutral message of their turn, and their tool parts by id."""
    by_turn: dict[int, list[Any]] = {}
    for message, turn in zip(kept, turns, strict=True):
        by_turn.setdefault(turn, []).append(message)
    whole: dict[str, Any] = {}
    tools: dict[tuple[str, str], Any] = {}
    for turn, neutral in enumerate(stored_messages(memory)):
        if neutral is None or not neutral["parts"] or turn not in by_turn:
            continue
        messages = [m for m in by_turn[turn] if _parts(m) is not None]
        whole[message_key(neutral["role"], neutral["parts"])] = messages
        for m in messages:
            for b in m.blocks:
                if getattr(b, "block_type", "") == "tool_call" and b.tool_call_id:
                    tools["call", b.tool_call_id] = b
            if str(getattr(m.role, "value", m.role)) == "tool":
                tools["result", m.additional_kwargs.get("tool_call_id") or ""] = m
    return whole, tools


def _attach(mem: Any, memory_or_store: Any, session_id: str, settings: dict[str, Any]) -> None:
    """`ByheartMemory.from_defaults`' work: its Memory (a new one, the one given, or the
    store's conversation `session_id`) and the messages it already holds."""
    if memory_or_store is None:
        source, settings = Memory(**settings), {}
    else:
        source = memory_or_store
    memory, mem._store = open_memory(source, session_id, settings, "ByheartMemory")
    mem._settings = settings
    mem._items = TurnItems(memory, TAG, _load, _from_parts)
    if mem._store is not None:  # so that from_dict (a Context, a pickle) can reopen it here
        _STORES[_store_key(mem._store)] = mem._store


def _read(mem: Any) -> tuple[list[Any], list[int]]:
    """Every message put and the turn of each, caught up with what other handles and
    processes stored; a conversation another handle deleted (its reset) is opened anew."""
    try:
        return mem._items.read()  # type: ignore[no-any-return]
    except StoreConflictError:
        if mem._store is None:
            raise
        memory = mem._store.open(mem.session_id, **mem._settings)
        mem._items = TurnItems(memory, TAG, _load, _from_parts)
        return mem._items.read()  # type: ignore[no-any-return]


def _file(mem: Any, fresh: list[Any]) -> None:
    """`ByheartMemory.put_messages`' work, under its lock: keep `fresh`, file its words."""
    dumped = [_dump(m) for m in fresh]
    _read(mem)  # caught up: a conversation deleted elsewhere is reopened first
    turns = file_items(mem._items.memory, fresh, _parts, dumped, TAG, CALL + ".put")
    mem._items.filed(fresh, turns)


def _cleared(mem: Any) -> None:
    """`ByheartMemory.reset`'s work, under its lock: no message kept, none filed."""
    memory = clear_memory(mem._items.memory, mem._store, mem.session_id, mem._settings)
    mem._items = TurnItems(memory, TAG, _load, _from_parts)


def _selection(mem: Any, question: str | None) -> list[Any]:
    """`ByheartMemory.get`'s work, under its lock: the first system message put, then the
    composed selection as the ChatMessages put (copies)."""
    kept, turns = _read(mem)
    head = [m for m in kept if _parts(m) is None and m.role == "system"][:1]
    if not question and all(_parts(m) is None for m in kept):
        return copy.deepcopy(head)  # nothing said yet: nothing to compose
    memory = mem._items.memory
    mem.last_result = memory.compose(question if question else None)
    whole, tools = _originals(kept, turns, memory)
    made = with_originals(mem.last_result, whole, tools, _build)
    return copy.deepcopy([*head, *(m for group in made for m in group)])


def _beyond_kept(mem: Any, messages: list[Any]) -> list[Any]:
    """What `ByheartMemory.set` must put: the messages after those kept when they begin
    with them, else all of them after a reset."""
    kept = [_dump(m) for m in _read(mem)[0]]
    if [_dump(m) for m in messages[: len(kept)]] != kept:
        mem.reset()
        return list(messages)
    return list(messages[len(kept) :])


# The stores ByheartMemory objects were built on in this process, by `_store_key`: what
# `ByheartMemory.from_dict` reopens a saved memory's conversation in.
_STORES: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def _store_key(store: Any) -> str:
    """A store's name in saved data: its kind and file, or its server, database and schema
    (never a password)."""
    if isinstance(getattr(store, "path", None), str):
        return f"{type(store).__name__}:{os.path.abspath(store.path)}"
    try:  # the connection's own account of where it is (psycopg's ConnectionInfo)
        info = store._conn.info
        where = f"{info.host}:{info.port}/{info.dbname}"
    except Exception:  # another store class, or a closed connection: the schema alone
        where = ""
    return f"{type(store).__name__}:{where}/{getattr(store, 'schema', '')}"


def _saved(mem: Any) -> dict[str, Any]:
    """What `ByheartMemory.to_dict` adds: how `from_dict` gets this memory back (a store's
    name and the session id, or a plain Memory's whole record)."""
    if mem._store is not None:
        return {"store": _store_key(mem._store)}
    return {"memory": mem._items.memory.to_dict()}


def _restored(cls: Any, data: dict[str, Any]) -> Any:
    """`ByheartMemory.from_dict`'s work: the memory `data` describes, or an error that says
    how to get it; never a memory that silently holds nothing."""
    call = "ByheartMemory.from_dict"
    saved, session_id = data.get("byheart"), data.get("session_id", "chat_history")
    if not isinstance(saved, dict) or not isinstance(session_id, str):
        raise ValueError(
            f"{call}: the data holds no byheart memory (not saved by ByheartMemory.to_dict); "
            "build one with ByheartMemory.from_defaults(store, session_id)"
        )
    if isinstance(saved.get("memory"), dict):
        return cls.from_defaults(Memory.from_dict(saved["memory"]), session_id)
    store = _STORES.get(str(saved.get("store")))
    if store is None:
        raise ValueError(
            f"{call}: conversation {session_id!r} is kept in {saved.get('store')}, which no "
            f"ByheartMemory in this process is built on; open that store and pass "
            f"ByheartMemory.from_defaults(store, {session_id!r}) (to agent.run(..., "
            f"memory=...)), or build one on it before restoring"
        )
    return cls.from_defaults(store, session_id)


def _unpickled(data: dict[str, Any]) -> Any:
    from . import llama_index

    return llama_index.ByheartMemory.from_dict(data)


def _make_memory_class() -> type:
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.memory.types import BaseMemory

    class ByheartMemory(BaseMemory):
        """A LlamaIndex ``BaseMemory`` backed by byheart.

        Build it with ``ByheartMemory.from_defaults(memory_or_store=None,
        session_id="chat_history", chat_history=None, **memory_settings)``: a
        [`Memory`][yait_byheart.Memory], or a store (``SQLiteStore``, ``PostgresStore``)
        whose conversation ``session_id`` is opened (created if absent), or None for a new
        ``Memory(**memory_settings)``.

        ``get`` returns the composed selection (``last_result`` holds the compose result);
        ``get_all`` every message exactly as put, also from a store reopened; ``reset``
        forgets them (a store's conversation is deleted, a Memory's turns redacted). The
        async forms run in a worker thread (LlamaIndex's defaults).
        """

        session_id: str = "chat_history"
        _items: TurnItems[Any] = PrivateAttr()
        _store: Any = PrivateAttr(default=None)
        _settings: dict[str, Any] = PrivateAttr(default_factory=dict)
        _lock: Any = PrivateAttr(default_factory=threading.RLock)
        last_result: Any = None

        @classmethod
        def class_name(cls) -> str:
            return "ByheartMemory"

        @classmethod
        def from_defaults(
            cls, memory_or_store: Any = None, session_id: str = "chat_history",
            chat_history: Sequence[Any] | None = None, **memory_settings: Any,
        ) -> ByheartMemory:  # fmt: skip
            """A memory on ``memory_or_store`` (None: a new Memory), ``chat_history`` put."""
            made = cls(session_id=session_id)
            _attach(made, memory_or_store, session_id, memory_settings)
            if chat_history:
                made.put_messages(list(chat_history))
            return made

        @property
        def memory(self) -> Memory:
            """The Memory the messages are filed in."""
            return self._items.memory

        def to_dict(self, **kwargs: Any) -> dict[str, Any]:
            """The memory as JSON data (a workflow ``Context``'s ``to_dict``, a pickle):
            a store's conversation by the store's file or schema and the session id (the
            messages stay in the store), a plain Memory with its whole record."""
            data: dict[str, Any] = super().to_dict(**kwargs)
            data.pop("last_result", None)
            with self._lock:
                data["byheart"] = _saved(self)
            return data

        @classmethod
        def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> ByheartMemory:
            """The memory ``to_dict`` saved: a store's conversation reopened by session id
            (in a store a ByheartMemory of this process is built on), a plain Memory
            rebuilt; ValueError saying what to do otherwise."""
            return _restored(cls, {**data, **kwargs})  # type: ignore[no-any-return]

        def __reduce__(self) -> Any:
            return _unpickled, (self.to_dict(),)

        def get(self, input: str | None = None, **kwargs: Any) -> list[Any]:
            """The composed selection as ChatMessages (``input``: the new question, if it
            was not put), led by the first system message put."""
            with self._lock:
                return _selection(self, input)

        def get_all(self) -> list[Any]:
            """Every message put, through any handle or process, as put."""
            with self._lock:
                return copy.deepcopy(_read(self)[0])

        def put(self, message: Any) -> None:
            self.put_messages([message])

        def put_messages(self, messages: list[Any]) -> None:
            """Keep ``messages`` as they are and file their words (one batch: a call round's
            results become one turn)."""
            fresh = [m.model_copy(deep=True) for m in messages]
            if fresh:
                with self._lock:
                    _file(self, fresh)

        def set(self, messages: list[Any]) -> None:
            """Replace every message with ``messages`` (those that begin with the messages
            kept only add the rest: an agent handing its whole history back files nothing
            twice)."""
            with self._lock:
                self.put_messages(_beyond_kept(self, messages))

        def reset(self) -> None:
            with self._lock:
                _cleared(self)

    ByheartMemory.__qualname__ = "ByheartMemory"  # found as the module's own name
    ByheartMemory.__module__ = __name__
    return ByheartMemory


__getattr__ = lazy_classes(__name__, {"ByheartMemory": _make_memory_class})
