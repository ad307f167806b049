"""byheart as a LlamaIndex memory: every message kept, the agent given a composed selection.

``ByheartMemory`` is a ``BaseMemory`` (``llama_index.core.memory``): ``put`` keeps each
``ChatMessage`` exactly as given in the turns of a [`Memory`][yait_byheart.Memory] (and so in
its store) and files its words, tool calls (``ToolCallBlock`` or OpenAI-style
``additional_kwargs["tool_calls"]``) and tool results (``role="tool"`` messages) included;
``get`` returns ``Memory.compose()`` as chat messages, each whole message as it was put, a
tool call always next to its results; ``get_all`` returns every message. ``FunctionAgent(
memory=ByheartMemory.from_defaults(...))`` puts the user message, then gets, on each run.

LlamaIndex is imported when ``ByheartMemory`` is first used (``pip install
'.[llama-index]'``). See docs/agents.md.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Sequence
from typing import Any

from ..memory import Memory
from ._common import (
    clear_memory,
    file_items,
    lazy_classes,
    message_key,
    open_memory,
    stored_items,
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
    mem._memory, mem._store = open_memory(source, session_id, settings, "ByheartMemory")
    mem._settings = settings
    mem._kept, mem._turns = stored_items(mem._memory, TAG, _load, _from_parts)


def _file(mem: Any, fresh: list[Any]) -> None:
    """`ByheartMemory.put_messages`' work, under its lock: keep `fresh`, file its words."""
    dumped = [_dump(m) for m in fresh]
    mem._turns += file_items(mem._memory, fresh, _parts, dumped, TAG, CALL + ".put")
    mem._kept += fresh


def _cleared(mem: Any) -> None:
    """`ByheartMemory.reset`'s work, under its lock: no message kept, none filed."""
    mem._memory = clear_memory(mem._memory, mem._store, mem.session_id, mem._settings)
    mem._kept, mem._turns = [], []


def _selection(mem: Any, question: str | None) -> list[Any]:
    """`ByheartMemory.get`'s work, under its lock: the first system message put, then the
    composed selection as the ChatMessages put (copies)."""
    head = [m for m in mem._kept if _parts(m) is None and m.role == "system"][:1]
    if not question and all(_parts(m) is None for m in mem._kept):
        return copy.deepcopy(head)  # nothing said yet: nothing to compose
    mem.last_result = mem._memory.compose(question if question else None)
    whole, tools = _originals(mem._kept, mem._turns, mem._memory)
    made = with_originals(mem.last_result, whole, tools, _build)
    return copy.deepcopy([*head, *(m for group in made for m in group)])


def _beyond_kept(mem: Any, messages: list[Any]) -> list[Any]:
    """What `ByheartMemory.set` must put: the messages after those kept when they begin
    with them, else all of them after a reset."""
    kept = [_dump(m) for m in mem._kept]
    if [_dump(m) for m in messages[: len(kept)]] != kept:
        mem.reset()
        return list(messages)
    return list(messages[len(kept) :])


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
        _memory: Memory = PrivateAttr()
        _store: Any = PrivateAttr(default=None)
        _settings: dict[str, Any] = PrivateAttr(default_factory=dict)
        _kept: list[Any] = PrivateAttr(default_factory=list)
        _turns: list[int] = PrivateAttr(default_factory=list)
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
            return self._memory

        def get(self, input: str | None = None, **kwargs: Any) -> list[Any]:
            """The composed selection as ChatMessages (``input``: the new question, if it
            was not put), led by the first system message put."""
            with self._lock:
                return _selection(self, input)

        def get_all(self) -> list[Any]:
            with self._lock:
                return copy.deepcopy(self._kept)

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

    return ByheartMemory


__getattr__ = lazy_classes(__name__, {"ByheartMemory": _make_memory_class})
