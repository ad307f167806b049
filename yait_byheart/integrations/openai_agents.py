"""byheart as an OpenAI Agents SDK ``Session``: every item kept, the model sent a selection.

``ByheartSession`` implements the SDK's ``Session`` protocol (``get_items``, ``add_items``,
``pop_item``, ``clear_session``). It keeps the items the SDK gives it exactly as given, tool
items included, and files their words in a [`Memory`][yait_byheart.Memory] (messages, function
calls and their outputs; reasoning and other items are kept but not filed). Pass
``session.session_input_callback`` as ``RunConfig(session_input_callback=...)`` and each run
starts from ``Memory.compose(new input)`` instead of the whole history: the stretches the new
input needs under the Memory's budget, with the prefix kept stable for the provider's cache.

The SDK is not imported here (the protocol needs no base class): ``pip install
'.[openai-agents]'`` for the SDK itself. See docs/agents.md.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Mapping
from typing import Any

from ..providers import to_openai_responses
from ._common import clear_memory, file_messages, group_messages, open_memory, stored_messages

__all__ = ["ByheartSession"]

Item = dict[str, Any]


def _text(content: object) -> str:
    """The text of a message item's content: a string, or the texts of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") or p.get("refusal") for p in content if isinstance(p, Mapping)]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t)
    return ""


def _parts(item: Item) -> tuple[str, list[dict[str, Any]]] | None:
    """The neutral role and parts of one SDK item, or None for items byheart does not file."""
    kind = item.get("type", "message")
    if kind == "function_call":
        return "assistant", [
            {
                "type": "tool_call",
                "id": str(item.get("call_id", "")),
                "name": str(item.get("name", "")),
                "arguments": item.get("arguments") or "{}",
            }
        ]
    if kind == "function_call_output":
        output = item.get("output", "")
        text = output if isinstance(output, str) else _text(output) or json.dumps(output)
        return "user", [{"type": "tool_result", "id": str(item.get("call_id", "")), "output": text}]
    role = item.get("role")
    if kind != "message" or role not in ("user", "assistant"):
        return None  # system/developer prompts, reasoning, hosted tools: kept, not filed
    text = _text(item.get("content"))
    return (role, [{"type": "text", "text": text}]) if text.strip() else None


def _items_of(message: dict[str, Any]) -> list[Item]:
    """A stored neutral message back as input items (for a conversation reopened from a store)."""
    out: list[Item] = []
    for p in message["parts"]:
        if p["type"] == "text":
            out.append({"role": message["role"], "content": p["text"]})
        elif p["type"] == "tool_call":
            out.append(
                {"type": "function_call", "call_id": p["id"], "name": p["name"],
                 "arguments": p["arguments"]}
            )  # fmt: skip
        else:
            out.append({"type": "function_call_output", "call_id": p["id"], "output": p["output"]})
    return out


def _key(item: object) -> str:
    return json.dumps(item, sort_keys=True, default=str)


class ByheartSession:
    """An Agents SDK ``Session`` backed by byheart.

    Args:
        memory_or_store: A [`Memory`][yait_byheart.Memory], or a store (``SQLiteStore``,
            ``PostgresStore``) whose conversation ``session_id`` is opened (created if absent).
        session_id: The session's id (the store's conversation id).
        session_settings: The SDK's ``SessionSettings`` (e.g. a default ``limit``), or None.
        **memory_settings: Memory settings (``budget=``, ...) for a store's new conversation.

    Items come back from ``get_items`` exactly as added while this object lives. A session
    reopened from a store rebuilds them from the stored turns in input-item form (messages as
    role and content, function calls and outputs with their call ids); reasoning items and
    SDK-assigned item ids are not stored.
    """

    def __init__(
        self,
        memory_or_store: Any,
        session_id: str,
        *,
        session_settings: Any = None,
        **memory_settings: Any,
    ) -> None:
        call = "ByheartSession()"
        self.memory, self._store = open_memory(memory_or_store, session_id, memory_settings, call)
        self.session_id = session_id
        self.session_settings = session_settings
        self._settings = dict(memory_settings)
        self._lock = threading.Lock()
        self._items: list[Item] = []
        self._turn: list[int | None] = []  # the Memory turn filing each item, if any
        self._composed: list[str] = []  # keys of the items the callback just built, in order
        self.last_result: dict[str, Any] | None = None
        """The latest ``Memory.compose`` result the callback sent (log its ``stable_upto``)."""
        for index, message in enumerate(stored_messages(self.memory)):
            for item in _items_of(message) if message else []:
                self._items.append(item)
                self._turn.append(index)

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The latest ``limit`` items (all when None), oldest first, as they were added."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(
                f"ByheartSession.get_items: limit must be an int or None, got {limit!r}"
            )
        with self._lock:
            chosen = self._items if limit is None else self._items[-limit:] if limit > 0 else []
            return copy.deepcopy(chosen)

    async def add_items(self, items: list[Item]) -> None:
        """Keep ``items`` verbatim and file their words in the Memory.

        The SDK offers back the items ``session_input_callback`` composed from the Memory, as
        if new, ahead of the run's input in the first call after it (less those it matched to
        history): those are recognised, in their order, and not kept twice.
        """
        for item in items:
            if not isinstance(item, Mapping):
                raise TypeError(
                    "ByheartSession.add_items: items must be dicts (input items), got "
                    f"{type(item).__name__}"
                )
        with self._lock:
            expect, self._composed = self._composed, []
            fresh: list[Item] = []
            for item in items:
                key = _key(item)
                if not fresh and key in expect:  # still in the leading echo
                    del expect[: expect.index(key) + 1]
                    continue
                fresh.append(copy.deepcopy(dict(item)))
            messages, owner = group_messages(fresh, _parts)
            turns = file_messages(self.memory, messages, "ByheartSession.add_items")
            self._items.extend(fresh)
            self._turn.extend(None if k is None else turns[k] for k in owner)

    async def pop_item(self) -> Item | None:
        """Remove and return the latest item; its Memory turn is redacted (a turn shared with
        other items of a parallel tool round is redacted whole; those items stay listed)."""
        with self._lock:
            if not self._items:
                return None
            item, turn = self._items.pop(), self._turn.pop()
            if turn is not None:
                self.memory.redact(turn)
                self._turn = [None if t == turn else t for t in self._turn]
            return item

    async def clear_session(self) -> None:
        """Forget every item; a store's conversation is deleted, a Memory's turns redacted."""
        with self._lock:
            self.memory = clear_memory(self.memory, self._store, self.session_id, self._settings)
            self._items, self._turn = [], []
            self._composed = []

    # -- composing the input -------------------------------------------------------------

    def session_input_callback(self, history: list[Item], new_input: list[Item]) -> list[Item]:
        """``RunConfig(session_input_callback=...)``: the Memory's selection, then the new input.

        ``history`` (the SDK's full copy) is not used: the Memory composes what to send by
        the new input's text under its budget (``Memory.compose``), converted with
        [`to_openai_responses`][]; the new items follow unchanged,
        so the SDK still saves exactly them.
        """
        query = "\n\n".join(
            t for t in (_text(i.get("content")) for i in new_input if i.get("role") == "user") if t
        )
        with self._lock:
            result = self.memory.compose(query if query.strip() else None)
            self.last_result = dict(result)
            items = to_openai_responses(result)["input"]
            if query.strip():
                _drop_query(items, query)
            self._composed = [_key(i) for i in items]
        return [*items, *new_input]


def _drop_query(items: list[Item], query: str) -> None:
    """Remove the query compose placed (the SDK sends the new input items themselves)."""
    for k in range(len(items) - 1, -1, -1):
        item = items[k]
        if item.get("type") != "message" or item.get("role") != "user":
            continue
        content = item["content"]
        at = [j for j, block in enumerate(content) if block.get("text") == query]
        if at:
            content.pop(at[-1])
            if not content:
                items.pop(k)
            return
