"""byheart as an OpenAI Agents SDK ``Session``: every item kept, the model sent a selection.

``ByheartSession`` implements the SDK's ``Session`` protocol (``get_items``, ``add_items``,
``pop_item``, ``clear_session``) as the SDK's ``SQLiteSession`` does. It keeps the items the
SDK gives it exactly as given, every item type, in the turns of a
[`Memory`][yait_byheart.Memory] (and so in its store), and files their words for selection
(messages, function calls and their outputs; reasoning and hosted-tool items ride along). Pass
``session.session_input_callback`` as ``RunConfig(session_input_callback=...)`` and each run
starts from ``Memory.compose(new input)`` instead of the whole history: the stretches the new
input needs under the Memory's budget, with the prefix kept stable for the provider's cache.

The SDK is not imported here (the protocol needs no base class): ``pip install
'.[openai-agents]'`` for the SDK itself. See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..providers import to_openai_responses
from ._common import clear_memory, file_items, open_memory, stored_items

__all__ = ["ByheartSession"]

Item = dict[str, Any]
TAG = "openai_agents"
"""The key of a turn's ``item`` under which this session keeps the SDK items it filed."""


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


def _as_json(item: Mapping[str, Any], call: str) -> Item:
    """A copy of ``item`` as plain JSON data, as a store keeps it (so what ``get_items``
    returns is the same whether or not the session was reopened)."""
    try:
        copied: Item = json.loads(json.dumps(item, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{call}: an item is not JSON data ({exc}); add input items as the SDK makes "
            "them (dicts of str, numbers, lists and dicts)"
        ) from None
    return copied


def _settings(value: Any) -> Any:
    """``session_settings`` as ``SQLiteSession`` takes it: None for the defaults, a dict
    normalized (unknown fields raise TypeError), a ``SessionSettings`` kept."""
    from agents.memory.session_settings import SessionSettings, coerce_session_settings

    return SessionSettings() if value is None else coerce_session_settings(value)


def _window(items: list[Item], limit: int | None) -> list[Item]:
    """The latest ``limit`` items, as the SDK's SQLite session reads them: None or a
    negative limit gives all, 0 none."""
    if limit is None or limit < 0:
        return items
    return items[-limit:] if limit > 0 else []


class ByheartSession:
    """An Agents SDK ``Session`` backed by byheart.

    Args:
        memory_or_store: A [`Memory`][yait_byheart.Memory], or a store (``SQLiteStore``,
            ``PostgresStore``) whose conversation ``session_id`` is opened (created if absent).
        session_id: The session's id (the store's conversation id).
        session_settings: The SDK's ``SessionSettings`` or a dict of its fields (e.g.
            ``{"limit": 20}``: ``get_items()`` returns the latest 20); default
            ``SessionSettings()``.
        **memory_settings: Memory settings (``budget=``, ...) for a store's new conversation.

    ``get_items`` returns the items exactly as added (``==``, every field, every item type:
    messages of any role, reasoning, hosted-tool items, images, ids and ``status``), also
    from a session reopened from a store: each Memory turn keeps the items it was filed from
    (``Memory.append_message(item=...)``), and the Memory indexes the words it reads from
    them (message texts, function calls and their outputs).
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
        self.session_settings = _settings(session_settings)
        self._settings = dict(memory_settings)
        self._lock = threading.Lock()
        self._composed: list[str] = []  # keys of the items the callback just built, in order
        self.last_result: dict[str, Any] | None = None
        """The latest ``Memory.compose`` result the callback sent (log its ``stable_upto``)."""
        self._items, self._turn = stored_items(self.memory, TAG, dict, _items_of)

    def _follow(self) -> None:
        """On a store, read the items again: other session objects and processes may have
        added or popped some (the Memory follows the store; SQLiteSession reads its rows)."""
        if self._store is not None:
            self.memory._follow()  # what the Memory does before each append and compose
            self._items, self._turn = stored_items(self.memory, TAG, dict, _items_of)

    # -- the Session protocol ------------------------------------------------------------

    async def get_items(self, limit: int | None = None) -> list[Item]:
        """The latest ``limit`` items (default ``session_settings.limit``; None or negative:
        all; 0: none), oldest first, as they were added."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(
                f"ByheartSession.get_items: limit must be an int or None, got {limit!r}"
            )
        if limit is None:
            limit = self.session_settings.limit
        return await asyncio.to_thread(self._get, limit)

    def _get(self, limit: int | None) -> list[Item]:
        with self._lock:
            self._follow()
            return copy.deepcopy(_window(self._items, limit))

    async def add_items(self, items: list[Item]) -> None:
        """Keep ``items`` verbatim and file their words in the Memory.

        The SDK offers back the items ``session_input_callback`` composed from the Memory, as
        if new, ahead of the run's input in the first call after it (less those it matched to
        history): those are recognised, in their order, and not kept twice. The store's
        writes run in a worker thread, off the event loop.
        """
        call = "ByheartSession.add_items"
        for item in items:
            if not isinstance(item, Mapping):
                raise TypeError(
                    f"{call}: items must be dicts (input items), got {type(item).__name__}"
                )
        fresh = [_as_json(item, call) for item in items]
        await asyncio.to_thread(self._add, fresh)

    def _add(self, items: list[Item]) -> None:
        with self._lock:
            self._follow()
            expect, self._composed = self._composed, []
            fresh: list[Item] = []
            for item in items:
                key = _key(item)
                if not fresh and key in expect:  # still in the leading echo
                    del expect[: expect.index(key) + 1]
                    continue
                fresh.append(item)
            if not fresh:
                return
            dumped = copy.deepcopy(fresh)
            turns = file_items(self.memory, fresh, _parts, dumped, TAG, "ByheartSession.add_items")
            self._items.extend(fresh)
            self._turn.extend(turns)

    async def pop_item(self) -> Item | None:
        """Remove and return the latest item, and only it: its Memory turn is redacted and
        the other items that turn held (text beside a call, calls of one round) are filed
        again as a new turn, so they stay listed, stored and searchable."""
        return await asyncio.to_thread(self._pop)

    def _pop(self) -> Item | None:
        with self._lock:
            self._follow()
            if not self._items:
                return None
            item, turn = self._items.pop(), self._turn.pop()
            rest = [k for k, t in enumerate(self._turn) if t == turn]
            self.memory.redact(turn)
            if rest:
                kept = [self._items[k] for k in rest]
                again = file_items(
                    self.memory, kept, _parts, copy.deepcopy(kept), TAG, "ByheartSession.pop_item"
                )
                for k, t in zip(rest, again, strict=True):
                    self._turn[k] = t
            return item

    async def clear_session(self) -> None:
        """Forget every item; a store's conversation is deleted, a Memory's turns redacted."""
        await asyncio.to_thread(self._clear)

    def _clear(self) -> None:
        with self._lock:
            self.memory = clear_memory(self.memory, self._store, self.session_id, self._settings)
            self._items, self._turn = [], []
            self._composed = []

    # -- compaction ------------------------------------------------------------------------

    async def _get_compaction_snapshot(
        self, limit: int, *, prune_prefix: Callable[[Item], bool] | None = None
    ) -> Any:
        """The SDK's compaction hook (``OpenAIResponsesCompactionSession`` and the encrypted
        session look it up on the session they wrap, as on its own SQLite, SQLAlchemy and
        async SQLite sessions): the latest ``limit`` items whatever ``session_settings.limit``
        says, whether they are all, and a ``replace_suffix(start, output)`` that swaps the
        items from ``start`` on for the compacted ``output`` if they are still the newest.

        It is private to the SDK (no public hook lets a session hand compaction its retained
        history); None, so compaction skips as for any other session, where it has gone."""
        try:
            from agents.memory.session import _await_mutation, _CompactionSnapshot
        except ImportError:  # a version without the hook: compaction treats us as before
            return None
        items = await asyncio.to_thread(self._get, None)
        window = items[-limit:] if limit > 0 else []

        async def replace_suffix(start: int, output: list[Item]) -> bool:
            expected = window[start:]
            fresh = [_as_json(item, "ByheartSession compaction") for item in output]
            return bool(
                await _await_mutation(
                    asyncio.to_thread(self._replace_suffix, expected, fresh, prune_prefix)
                )
            )

        make: Any = _CompactionSnapshot  # its items are the SDK's typed dicts; ours are plain
        return make(window, len(window) == len(items), replace_suffix)

    def _replace_suffix(
        self, expected: list[Item], output: list[Item], prune: Callable[[Item], bool] | None
    ) -> bool:
        """Redact the turns holding ``expected`` (the newest items, unchanged since read) and
        the oldest items ``prune`` calls expired, then file ``output``; live items sharing a
        redacted turn with the suffix are filed again first."""
        with self._lock:
            self._follow()
            n = len(expected)
            if not n or len(self._items) < n or self._items[-n:] != expected:
                return False
            cut = len(self._items) - n
            gone = set(self._turn[cut:])
            end = _expired(self._items[:cut], self._turn, gone, prune)
            again = [self._items[k] for k in range(end, cut) if self._turn[k] in gone]
            for turn in sorted(gone.union(self._turn[:end])):
                self.memory.redact(turn)
            new = again + output
            if new:
                call = "ByheartSession compaction"
                file_items(self.memory, new, _parts, copy.deepcopy(new), TAG, call)
            self._items, self._turn = stored_items(self.memory, TAG, dict, _items_of)
            self._composed = []
            return True

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


def _expired(
    before: list[Item], turns: list[int], gone: set[int], prune: Callable[[Item], bool] | None
) -> int:
    """How many of the oldest items ``prune`` calls expired (in a row), less those of a
    turn that also holds a live item and is kept (a turn is redacted whole)."""
    end = 0
    while prune is not None and end < len(before) and prune(before[end]):
        end += 1
    if 0 < end < len(before) and turns[end] not in gone:
        while end and turns[end - 1] == turns[end]:
            end -= 1
    return end


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
