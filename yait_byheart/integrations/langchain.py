"""byheart for LangChain and LangGraph: a chat message history and a trimming runnable.

- ``ByheartChatMessageHistory(memory_or_store, session_id)`` is a ``BaseChatMessageHistory``:
  ``messages`` returns every message exactly as added, every type and field, also after a
  store is reopened, while their words are filed in a [`Memory`][yait_byheart.Memory].
- ``byheart_trimmer(memory_or_history)`` is a runnable that sends the model
  ``Memory.compose()`` instead of the whole history: given a list of messages it returns the
  composed list; given a LangGraph state (``{"messages": [...]}``) it returns
  ``{"llm_input_messages": [...]}``, the shape LangGraph's ``create_react_agent`` takes as
  ``pre_model_hook``. Tool calls and their tool messages stay together; system messages of
  the input lead the output.
- ``ByheartMiddleware(memory_or_history)`` is a LangChain v1 ``AgentMiddleware`` for
  ``langchain.agents.create_agent(..., middleware=[...])``: each model call is sent
  ``Memory.compose()`` (``wrap_model_call`` / ``awrap_model_call``) while the agent's state
  keeps every message; messages are filed by id, as the trimmer does.

LangChain is imported when a name of this module is first used (``pip install
'.[langchain]'``). See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import warnings
from collections.abc import Sequence
from typing import Any

from ..memory import Memory
from ..providers._neutral import Call, Result, Text, read_messages
from ._common import (
    check_source,
    clear_memory,
    file_items,
    lazy_classes,
    open_memory,
    stored_items,
    stored_messages,
)

# ByheartChatMessageHistory and ByheartMiddleware are made by the module __getattr__ below,
# on first use (they subclass LangChain's classes).
__all__ = ["ByheartChatMessageHistory", "ByheartMiddleware", "byheart_trimmer"]  # noqa: F822

TAG = "langchain"
"""The key of a turn's ``item`` under which the history keeps the messages it filed."""
CALL = "ByheartChatMessageHistory()"


def _text(content: object) -> str:
    """A message's text: its string content, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            b if isinstance(b, str) else b.get("text")
            for b in content
            if isinstance(b, (str, dict))
        ]
        return "\n\n".join(t for t in texts if isinstance(t, str) and t)
    return ""


# A streamed message's chunk reads as the message it is part of.
_CHUNKS = {"HumanMessageChunk": "human", "AIMessageChunk": "ai", "ToolMessageChunk": "tool"}


def _parts(message: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """A LangChain message's neutral role and parts; None for messages byheart does not file."""
    kind = getattr(message, "type", "")
    kind = _CHUNKS.get(kind, kind)
    text = _text(getattr(message, "content", ""))
    if kind == "human":
        return ("user", [{"type": "text", "text": text}]) if text.strip() else None
    if kind == "ai":
        parts = [{"type": "text", "text": text}] if text.strip() else []
        for call in getattr(message, "tool_calls", None) or []:
            parts.append(
                {"type": "tool_call", "id": str(call.get("id") or ""), "name": call["name"],
                 "arguments": json.dumps(call.get("args") or {}, ensure_ascii=False)}
            )  # fmt: skip
        return "assistant", parts
    if kind == "tool":
        result = {"type": "tool_result", "id": message.tool_call_id, "output": text}
        if getattr(message, "status", "success") == "error":
            result["is_error"] = True
        return "user", [result]
    return None  # system messages and others: kept, not filed


def _to_langchain(result: Any, head: Sequence[Any]) -> list[Any]:
    """A compose result as LangChain messages (tool messages right after their call), led by
    ``head`` (the input's system messages)."""
    from langchain_core import messages as lm

    out: list[Any] = list(head)
    for role, parts in read_messages(result, "byheart_trimmer", open_end=True).messages:
        texts = "\n\n".join(p.text for p in parts if isinstance(p, Text))
        if role == "assistant":
            calls = [
                {"name": p.name, "args": json.loads(p.arguments), "id": p.id, "type": "tool_call"}
                for p in parts
                if isinstance(p, Call)
            ]
            out.append(lm.AIMessage(content=texts, tool_calls=calls))
            continue
        for p in parts:
            if isinstance(p, Result):
                status = "error" if p.is_error else "success"
                out.append(lm.ToolMessage(p.output, tool_call_id=p.id, name=p.name, status=status))
        if texts:
            out.append(lm.HumanMessage(texts))
    return out


def _messages_of(message: dict[str, Any]) -> list[Any]:
    """A stored neutral message back as LangChain messages (for a reopened store)."""
    from langchain_core import messages as lm

    texts = "\n\n".join(p["text"] for p in message["parts"] if p["type"] == "text")
    if message["role"] == "assistant":
        calls = [
            {
                "name": p["name"],
                "args": json.loads(p["arguments"]),
                "id": p["id"],
                "type": "tool_call",
            }
            for p in message["parts"]
            if p["type"] == "tool_call"
        ]
        return [lm.AIMessage(content=texts, tool_calls=calls)]
    out: list[Any] = [
        lm.ToolMessage(
            p["output"], tool_call_id=p["id"], status="error" if p.get("is_error") else "success"
        )
        for p in message["parts"]
        if p["type"] == "tool_result"
    ]
    return [*out, lm.HumanMessage(texts)] if texts else out


def _dump(message: Any, call: str) -> Any:
    """A message as JSON data (LangChain's own ``message_to_dict``): what a turn keeps.

    A field that is not JSON (an artifact object, bytes) is kept as its text, with a
    warning: this process still returns the message itself, a reopened store its JSON form.
    """
    from langchain_core.messages import message_to_dict

    data = message_to_dict(message)
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        warnings.warn(
            f"{call}: a {message.type} message holds data that "
            f"is not JSON ({exc}); it is returned as given while this history lives, stored "
            "with that data as text; keep artifacts and metadata JSON-safe to store them exactly",
            stacklevel=4,
        )
        return json.loads(json.dumps(data, default=str))


def _load(raw: Any) -> Any:
    from langchain_core.messages import messages_from_dict

    return messages_from_dict([raw])[0]


def _make_history_class() -> type:
    from langchain_core.chat_history import BaseChatMessageHistory

    class ByheartChatMessageHistory(BaseChatMessageHistory):
        """A LangChain chat message history backed by byheart.

        Args:
            memory_or_store: A [`Memory`][yait_byheart.Memory], or a store (``SQLiteStore``,
                ``PostgresStore``) whose conversation ``session_id`` is opened (created if
                absent) on first use, in a worker thread when that use is async.
            session_id: The conversation's id.
            **memory_settings: Memory settings (``budget=``, ...) for a store's new
                conversation.

        ``messages`` returns every message as added, every type and field (system and chat
        messages, ids, names, ``additional_kwargs``, ``response_metadata``, artifacts,
        content blocks), also from a history reopened from a store: each Memory turn keeps
        the messages it was filed from (``message_to_dict``), and the Memory indexes the
        words it reads from them. The async methods run the store's work in a worker
        thread, off the event loop.
        """

        def __init__(self, memory_or_store: Any, session_id: str, **memory_settings: Any) -> None:
            check_source(memory_or_store, session_id, memory_settings, CALL)
            self._source = memory_or_store
            self.session_id = session_id
            self._settings = dict(memory_settings)
            self._lock = threading.RLock()
            self._memory: Memory | None = None
            self._store: Any = None
            self._kept: list[Any] = []

        @property
        def memory(self) -> Memory:
            """The Memory, its store's conversation opened on first use."""
            with self._lock:
                if self._memory is None:
                    self._memory, self._store = open_memory(
                        self._source, self.session_id, self._settings, CALL
                    )
                    self._kept, _ = stored_items(self._memory, TAG, _load, _messages_of)
                return self._memory

        @property
        def messages(self) -> list[Any]:  # type: ignore[override]
            with self._lock:
                _ = self.memory
                return copy.deepcopy(self._kept)

        def add_messages(self, messages: Sequence[Any]) -> None:
            """Keep ``messages`` as they are and file their words in the Memory."""
            fresh = [m.model_copy(deep=True) for m in messages]
            if not fresh:
                return
            call = "ByheartChatMessageHistory.add_messages"
            dumped = [_dump(m, call) for m in fresh]
            with self._lock:
                file_items(self.memory, fresh, _parts, dumped, TAG, call)
                self._kept.extend(fresh)

        def clear(self) -> None:
            """Forget every message; a store's conversation is deleted, a Memory's redacted."""
            with self._lock:
                self._memory = clear_memory(
                    self.memory, self._store, self.session_id, self._settings
                )
                self._kept = []

        async def aget_messages(self) -> list[Any]:
            return await asyncio.to_thread(lambda: self.messages)

        async def aadd_messages(self, messages: Sequence[Any]) -> None:
            await asyncio.to_thread(self.add_messages, messages)

        async def aclear(self) -> None:
            await asyncio.to_thread(self.clear)

    return ByheartChatMessageHistory


def _make_middleware_class() -> type:
    # The ignores hold only where langchain is absent (CI's dev extra installs it).
    from langchain.agents.middleware import (  # type: ignore[import-not-found,unused-ignore]
        AgentMiddleware,
    )

    class ByheartMiddleware(AgentMiddleware):  # type: ignore[misc,unused-ignore]
        """A LangChain v1 agent middleware sending each model call ``Memory.compose()``.

        Args:
            memory_or_history: A [`Memory`][yait_byheart.Memory] (the middleware files each
                message of the agent's state it has not filed, by message id, before each
                model call and after it; a Memory opened from a store knows the ids it holds,
                so a reopened conversation files nothing twice) or a
                ``ByheartChatMessageHistory`` (which files; the middleware only composes).

        ``create_agent(model, tools, middleware=[ByheartMiddleware(memory)])``: the model gets
        the composed selection (tool calls with their tool messages, the newest round last),
        the agent's state keeps every message. ``last_result`` is the latest compose result.
        """

        def __init__(self, memory_or_history: Any) -> None:
            super().__init__()
            self._trimmer = _trimmer_of(memory_or_history, "ByheartMiddleware")

        @property
        def last_result(self) -> Any:
            """The latest ``Memory.compose`` result sent (log its ``size``, ``stable_upto``)."""
            return self._trimmer.last_result

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(messages=self._trimmer.compose(request.messages)))

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            composed = await asyncio.to_thread(self._trimmer.compose, request.messages)
            return await handler(request.override(messages=composed))

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            # The model's answer is filed at once, so a store holds a run's last answer too.
            self._trimmer.file_all(state["messages"])
            return None

        async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            await asyncio.to_thread(self._trimmer.file_all, state["messages"])
            return None

    return ByheartMiddleware


# These classes subclass LangChain's, so they are made when first asked for.
__getattr__ = lazy_classes(
    __name__,
    {
        "ByheartChatMessageHistory": _make_history_class,
        "ByheartMiddleware": _make_middleware_class,
    },
)


class _Trimmer:
    """What ``byheart_trimmer`` and ``ByheartMiddleware`` run: file unseen messages, compose."""

    def __init__(self, source: Any, files: bool) -> None:
        self.source = source  # the Memory, or the history whose Memory may be replaced on clear
        self.files = files  # False when a ByheartChatMessageHistory files the messages
        self.lock = threading.Lock()
        self.seen: set[str] | None = None  # the ids filed: read from the Memory on first use
        self.held: list[Any] = []
        self.last_result: Any = None

    def file(self, messages: Sequence[Any]) -> None:
        if self.seen is None:
            self.seen = _filed_ids(self.source)
        fresh = []
        for m in messages:
            # By id (LangGraph gives every message one); an id-less message by the object
            # itself, kept referenced so its identity is never reused.
            key = m.id if m.id is not None else f"object-{id(m)}"
            if key not in self.seen:
                self.seen.add(key)
                if m.id is None:
                    self.held.append(m)
                fresh.append(m)
        if fresh:
            dumped = [_dump(m, "byheart_trimmer") for m in fresh]
            file_items(self.source, fresh, _parts, dumped, TAG, "byheart_trimmer")

    def file_all(self, messages: Sequence[Any]) -> None:
        """File what is new in ``messages`` (when this trimmer files at all)."""
        if self.files:
            with self.lock:
                self.file(messages)

    def compose(self, messages: Sequence[Any]) -> list[Any]:
        """File what is new in ``messages``, then the composed messages, led by the first
        system message of ``messages`` if there is one."""
        with self.lock:
            if self.files:
                self.file(messages)
            memory = self.source if self.files else self.source.memory
            self.last_result = memory.compose()
            head = [m for m in messages if getattr(m, "type", "") == "system"][:1]
            return _to_langchain(self.last_result, head)

    def __call__(self, value: Any) -> Any:
        state = isinstance(value, dict)
        out = self.compose(value["messages"] if state else value)
        return {"llm_input_messages": out} if state else out


def _filed_ids(memory: Memory) -> set[str]:
    """The ids of the messages ``memory``'s turns hold as filed here (a reopened store)."""
    ids: set[str] = set()
    for message in stored_messages(memory):
        kept = message.get("item") if message is not None else None
        for raw in kept.get(TAG, ()) if isinstance(kept, dict) else ():
            data = raw.get("data") if isinstance(raw, dict) else None
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                ids.add(data["id"])
    return ids


def _trimmer_of(memory_or_history: Any, call: str) -> _Trimmer:
    if isinstance(memory_or_history, Memory):
        return _Trimmer(memory_or_history, files=True)
    if isinstance(getattr(memory_or_history, "memory", None), Memory):
        return _Trimmer(memory_or_history, files=False)
    raise TypeError(
        f"{call}(memory_or_history): pass a yait_byheart.Memory or a "
        f"ByheartChatMessageHistory, got {type(memory_or_history).__name__}"
    )


def byheart_trimmer(memory_or_history: Any) -> Any:
    """A runnable sending the model ``Memory.compose()`` instead of the whole history.

    Args:
        memory_or_history: A [`Memory`][yait_byheart.Memory] (the runnable files each message
            it has not seen, by message id (an id-less message by identity), then composes)
            or a ``ByheartChatMessageHistory`` (which files; the runnable only composes from
            its Memory).

    Returns:
        A ``RunnableLambda``: messages in, composed messages out; a LangGraph state in,
        ``{"llm_input_messages": [...]}`` out (``create_react_agent(pre_model_hook=...)``).
        Its ``trimmer`` attribute holds ``last_result``, the latest compose result.
    """
    from langchain_core.runnables import RunnableLambda

    trimmer = _trimmer_of(memory_or_history, "byheart_trimmer")
    runnable = RunnableLambda(trimmer, name="byheart_trimmer")
    runnable.trimmer = trimmer  # type: ignore[attr-defined]
    return runnable
