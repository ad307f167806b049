"""byheart for LangChain and LangGraph: a chat message history and a trimming runnable.

- ``ByheartChatMessageHistory(memory_or_store, session_id)`` is a ``BaseChatMessageHistory``:
  ``messages`` returns every message exactly as added, every type and field, also after a
  store is reopened, while their words are filed in a [`Memory`][yait_byheart.Memory];
  each read reflects what other handles and processes added before it.
- ``byheart_trimmer(source)`` is a runnable that sends the model
  ``Memory.compose()`` instead of the whole history: given a list of messages it returns the
  composed list; given a LangGraph state (``{"messages": [...]}``) it returns
  ``{"llm_input_messages": [...]}``, the shape LangGraph's ``create_react_agent`` takes as
  ``pre_model_hook``. Tool calls and their tool messages stay together; system messages of
  the input lead the output.
- ``ByheartMiddleware(source)`` is a LangChain v1 ``AgentMiddleware`` for
  ``langchain.agents.create_agent(..., middleware=[...])``: each model call is sent
  ``Memory.compose()`` (``wrap_model_call`` / ``awrap_model_call``) while the agent's state
  keeps every message; messages are filed by id, as the trimmer does.

The trimmer and the middleware are keyed by LangGraph's thread id: given a store, one
conversation per thread (``langgraph/<thread id>``); given a Memory or a history, the one
conversation serves the first thread seen and any other thread is refused.

LangChain is imported when a name of this module is first used (``pip install
'.[langchain]'``). See docs/agents.md.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ..memory import Memory
from ..providers._neutral import Call, Result, Text, read_messages
from ..store import StoreConflictError
from ._common import (
    TurnItems,
    catch_up,
    check_source,
    clear_memory,
    conversation_name,
    file_items,
    lazy_classes,
    open_memory,
    stored_messages,
)

# ByheartChatMessageHistory and ByheartMiddleware are made by the module __getattr__ below,
# on first use (they subclass LangChain's classes).
__all__ = ["ByheartChatMessageHistory", "ByheartMiddleware", "byheart_trimmer"]  # noqa: F822

TAG = "langchain"
"""The key of a turn's ``item`` under which the history keeps the messages it filed."""
CALL = "ByheartChatMessageHistory()"
OPEN_THREADS = 256
"""How many threads' conversations a store-backed middleware or trimmer keeps open."""


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
            self._items: TurnItems[Any] | None = None  # the Memory's messages, read fresh
            self._store: Any = None

        @property
        def memory(self) -> Memory:
            """The Memory, its store's conversation opened on first use."""
            return self._opened().memory

        def _opened(self) -> TurnItems[Any]:
            with self._lock:
                if self._items is None:
                    memory, self._store = open_memory(
                        self._source, self.session_id, self._settings, CALL
                    )
                    self._items = TurnItems(memory, TAG, _load, _messages_of)
                return self._items

        def _read(self) -> list[Any]:
            """Every message, caught up with what other handles and processes stored; a
            conversation another handle deleted (its ``clear``) is opened anew, empty."""
            with self._lock:
                try:
                    return self._opened().read()[0]
                except StoreConflictError:
                    if self._store is None:
                        raise
                    self._items = None
                    return self._opened().read()[0]

        @property
        def messages(self) -> list[Any]:  # type: ignore[override]
            return copy.deepcopy(self._read())

        def add_messages(self, messages: Sequence[Any]) -> None:
            """Keep ``messages`` as they are and file their words in the Memory."""
            fresh = [m.model_copy(deep=True) for m in messages]
            if not fresh:
                return
            call = "ByheartChatMessageHistory.add_messages"
            dumped = [_dump(m, call) for m in fresh]
            with self._lock:
                self._read()  # caught up: a conversation deleted elsewhere is reopened first
                items = self._opened()
                items.filed(fresh, file_items(items.memory, fresh, _parts, dumped, TAG, call))

        def clear(self) -> None:
            """Forget every message; a store's conversation is deleted, a Memory's redacted."""
            with self._lock:
                memory = clear_memory(self.memory, self._store, self.session_id, self._settings)
                self._items = TurnItems(memory, TAG, _load, _messages_of)

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
            source: A store (``SQLiteStore``, ``PostgresStore``): one conversation per
                LangGraph thread (``config["configurable"]["thread_id"]``), opened as
                ``langgraph/<thread id>`` (created if absent), so one agent serves many
                threads; a call without a thread id is refused. Or a
                [`Memory`][yait_byheart.Memory] or a ``ByheartChatMessageHistory`` (which
                files; the middleware only composes): one conversation, so the middleware
                serves the first thread it sees and refuses any other.
            **memory_settings: Memory settings (``budget=``, ...) for a store's new
                conversations.

        The middleware files each message of the agent's state it has not filed, by message
        id, before each model call and after it; a conversation opened from a store knows
        the ids it holds, also those another worker filed, so nothing is filed twice.
        ``create_agent(model, tools, middleware=[ByheartMiddleware(store)],
        checkpointer=...)``: the model gets the composed selection (tool calls with their
        tool messages, the newest round last), the agent's state keeps every message.
        ``last_result`` is the latest compose result, of any thread.
        """

        def __init__(self, source: Any, **memory_settings: Any) -> None:
            super().__init__()
            self._threads = _Threads(source, memory_settings, "ByheartMiddleware")

        @property
        def last_result(self) -> Any:
            """The latest ``Memory.compose`` result sent (log its ``size``, ``stable_upto``)."""
            return self._threads.last_result

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            trimmer = self._threads.of(_thread_of(request.runtime))
            return handler(request.override(messages=trimmer.compose(request.messages)))

        async def awrap_model_call(self, request: Any, handler: Any) -> Any:
            trimmer = self._threads.of(_thread_of(request.runtime))
            composed = await asyncio.to_thread(trimmer.compose, request.messages)
            return await handler(request.override(messages=composed))

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            # The model's answer is filed at once, so a store holds a run's last answer too.
            self._threads.of(_thread_of(runtime)).file_all(state["messages"])
            return None

        async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            trimmer = self._threads.of(_thread_of(runtime))
            await asyncio.to_thread(trimmer.file_all, state["messages"])
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
        self.seen: set[str] = set()  # the ids filed, read from the Memory's turns
        self.known = 0  # the Memory's turns read for ids
        self.held: list[Any] = []
        self.last_result: Any = None

    def file(self, messages: Sequence[Any]) -> None:
        # Another worker may have filed this conversation's messages (the thread's previous
        # run): caught up first, so that nothing is filed twice.
        catch_up(self.source)
        if len(self.source) > self.known:
            self.seen |= _filed_ids(self.source, self.known)
            self.known = len(self.source)
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


def _filed_ids(memory: Memory, start: int) -> set[str]:
    """The ids of the messages ``memory``'s turns from ``start`` on hold as filed here."""
    ids: set[str] = set()
    for message in stored_messages(memory, start):
        kept = message.get("item") if message is not None else None
        for raw in kept.get(TAG, ()) if isinstance(kept, dict) else ():
            data = raw.get("data") if isinstance(raw, dict) else None
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                ids.add(data["id"])
    return ids


def _thread_of(runtime: Any) -> str | None:
    """The LangGraph thread id of the run ``runtime`` belongs to (None: the run has none)."""
    thread = getattr(getattr(runtime, "execution_info", None), "thread_id", None)
    if thread is None:  # no checkpointer: the id, if any, is still in the run's config
        from langgraph.config import get_config

        try:
            thread = (get_config().get("configurable") or {}).get("thread_id")
        except RuntimeError:  # called outside a run
            return None
    return None if thread is None else str(thread)


_UNBOUND = object()


class _Threads:
    """The trimmer of each LangGraph thread: a store's conversation per thread id, or the one
    Memory (or history) given, bound to the first thread it serves."""

    def __init__(self, source: Any, settings: dict[str, Any], call: str) -> None:
        self.call = call
        self.store = source if _is_store(source) else None
        if self.store is None and not _composes_from(source):
            raise TypeError(
                f"{call}(source): pass a store (SQLiteStore, PostgresStore), a "
                f"yait_byheart.Memory or a ByheartChatMessageHistory, got {type(source).__name__}"
            )
        self.settings = settings
        # A history files its messages itself: a trimmer on one only composes.
        files = isinstance(source, Memory)
        self.one = None if self.store is not None else _Trimmer(source, files=files)
        if self.one is not None and settings:
            raise TypeError(
                f"{call}: Memory settings ({', '.join(settings)}) apply only when a store is "
                "given; set them on the Memory you pass"
            )
        self.bound: object = _UNBOUND  # the thread the one Memory serves
        self.by_thread: OrderedDict[str, _Trimmer] = OrderedDict()  # most recent last
        self.lock = threading.Lock()
        self.last: _Trimmer | None = None

    @property
    def last_result(self) -> Any:
        return None if self.last is None else self.last.last_result

    def of(self, thread: str | None) -> _Trimmer:
        """The trimmer of ``thread``; ValueError where that would mix two threads."""
        with self.lock:
            self.last = self.one if self.one is not None else self._opened(thread)
            if self.one is not None:
                self.bound = thread if self.bound is _UNBOUND else self.bound
                if self.bound != thread:
                    raise ValueError(
                        f"{self.call}: thread {thread!r} called a middleware whose Memory "
                        f"holds the conversation of thread {self.bound!r}; one Memory holds one "
                        f"conversation, so one thread's words would reach another. Pass a "
                        f"store, {self.call}(store), for one conversation per thread id, or "
                        f"make one middleware (and agent) per thread"
                    )
            return self.last

    def _opened(self, thread: str | None) -> _Trimmer:
        if thread is None:
            raise ValueError(
                f"{self.call}: the run has no thread id, and a store-backed middleware keeps "
                "one conversation per thread; pass config={'configurable': {'thread_id': "
                "...}} to invoke (and a checkpointer to create_agent), or give the "
                "middleware a Memory for one conversation"
            )
        if thread not in self.by_thread:
            name = conversation_name("langgraph", thread)
            memory = self.store.open(name, **self.settings)  # type: ignore[union-attr]
            self.by_thread[thread] = _Trimmer(memory, files=True)
            # A server meets threads without end: the least recent are closed here (their
            # conversations stay in the store, reopened if the thread comes back).
            if len(self.by_thread) > OPEN_THREADS:
                self.by_thread.popitem(last=False)
        self.by_thread.move_to_end(thread)
        return self.by_thread[thread]


def _is_store(source: Any) -> bool:
    return callable(getattr(source, "open", None)) and callable(
        getattr(source, "conversations", None)
    )


def _composes_from(source: Any) -> bool:
    return isinstance(source, Memory) or isinstance(getattr(source, "memory", None), Memory)


def byheart_trimmer(source: Any, **memory_settings: Any) -> Any:
    """A runnable sending the model ``Memory.compose()`` instead of the whole history.

    Args:
        source: As ``ByheartMiddleware`` takes it: a store (one conversation per LangGraph
            thread id, ``langgraph/<thread id>``; a run without one is refused), or a
            [`Memory`][yait_byheart.Memory] or ``ByheartChatMessageHistory`` (one
            conversation: the first thread the runnable serves, any other refused). The
            runnable files each message it has not seen, by message id (an id-less message
            by identity), then composes; given a history it only composes from its Memory.
        **memory_settings: Memory settings for a store's new conversations.

    Returns:
        A ``RunnableLambda``: messages in, composed messages out; a LangGraph state in,
        ``{"llm_input_messages": [...]}`` out (``create_react_agent(pre_model_hook=...)``).
        Its ``trimmer`` attribute holds ``last_result``, the latest compose result.
    """
    from langchain_core.runnables import RunnableLambda

    threads = _Threads(source, memory_settings, "byheart_trimmer")

    def trim(value: Any, config: Any) -> Any:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        return threads.of(None if thread is None else str(thread))(value)

    runnable = RunnableLambda(trim, name="byheart_trimmer")
    runnable.trimmer = threads  # type: ignore[attr-defined]
    return runnable
