"""LangChain and LangGraph deployed as agents run: one agent serving many threads, several
workers on one store, two Python threads at once. No thread's words in another thread's
model call, no message filed twice, no stale read; on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import PrivateAttr

from tests._stores import Stores, stores_fixture  # noqa: F401 (the fixture)
from yait_byheart import Memory
from yait_byheart.integrations.langchain import (
    ByheartChatMessageHistory,
    ByheartMiddleware,
    byheart_trimmer,
)

PIN = "My bank PIN is 90210."


class Recorder(BaseChatModel):
    """Answers every call at once and records what each call was sent (thread-safe)."""

    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _received: list[list[Any]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recorder"

    @property
    def received(self) -> list[str]:
        """Each call's messages as one text."""
        with self._lock:
            return ["\n".join(str(m.content) for m in call) for call in self._received]

    def bind_tools(self, tools: Any, **kwargs: Any) -> Recorder:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatResult:
        with self._lock:
            self._received.append(list(messages))
        asked = [m for m in messages if m.type == "human"][-1].content
        answer = AIMessage(f"Noted ({str(asked)[:30]}).")
        return ChatResult(generations=[ChatGeneration(message=answer)])


def agent_of(middleware: Any, model: Recorder, saver: InMemorySaver) -> Any:
    return create_agent(model, [], middleware=[middleware], checkpointer=saver)


def ask(agent: Any, thread: str, text: str) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return agent.invoke({"messages": [HumanMessage(text)]}, config)  # type: ignore[no-any-return]


def test_one_middleware_on_a_store_keeps_each_thread_to_itself(stores: Stores) -> None:
    store = stores.open()
    model = Recorder()
    agent = agent_of(ByheartMiddleware(store, budget=2_000), model, InMemorySaver())
    ask(agent, "alice", PIN)
    ask(agent, "bob", "What is my bank PIN?")
    assert "90210" not in model.received[-1]
    ask(agent, "alice", "What is my bank PIN?")
    assert "90210" in model.received[-1]  # alice's own words still reach alice's calls
    assert sorted(store.conversations()) == ["langgraph/alice", "langgraph/bob"]
    assert "90210" not in str(store.open("langgraph/bob").to_dict())


def test_the_trimmer_on_a_store_keeps_each_thread_to_itself(stores: Stores) -> None:
    hook = byheart_trimmer(stores.open())
    alice = {"configurable": {"thread_id": "alice"}}
    bob = {"configurable": {"thread_id": "bob"}}
    hook.invoke({"messages": [HumanMessage(PIN, id="a1")]}, alice)
    sent = hook.invoke({"messages": [HumanMessage("My PIN?", id="b1")]}, bob)
    assert "90210" not in str(sent)


def test_a_middleware_on_one_memory_refuses_a_second_thread() -> None:
    memory = Memory()
    model = Recorder()
    agent = agent_of(ByheartMiddleware(memory), model, InMemorySaver())
    ask(agent, "alice", PIN)
    with pytest.raises(ValueError, match=r"thread 'bob' called a middleware .* Pass a store"):
        ask(agent, "bob", "What is my bank PIN?")
    assert len(model.received) == 1  # bob's call never reached the model
    hook = byheart_trimmer(memory)  # the trimmer too: bound to the first thread it serves
    hook.invoke([HumanMessage("hi", id="z")], {"configurable": {"thread_id": "alice"}})
    with pytest.raises(ValueError, match=r"thread 'bob' called"):
        hook.invoke([HumanMessage("PIN?", id="w")], {"configurable": {"thread_id": "bob"}})


def test_a_store_middleware_refuses_a_run_without_a_thread_id(stores: Stores) -> None:
    agent = create_agent(Recorder(), [], middleware=[ByheartMiddleware(stores.open())])
    with pytest.raises(ValueError, match=r"no thread id.*thread_id"):
        agent.invoke({"messages": [HumanMessage("hello")]})


def test_two_python_threads_at_once_share_nothing(stores: Stores) -> None:
    model = Recorder()
    agent = agent_of(ByheartMiddleware(stores.open(), budget=4_000), model, InMemorySaver())

    def talk(who: str) -> None:
        for k in range(6):
            ask(agent, who, f"{who} note {k}: my locker code is {who}-{k}{k}{k}.")

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(talk, ["alice", "bob"]))
    assert len(model.received) == 12
    for sent in model.received:
        assert ("alice-" in sent) != ("bob-" in sent), sent  # one thread's words per call
    for who in ("alice", "bob"):
        assert len(stores.open().open(f"langgraph/{who}")) == 12  # 6 questions, 6 answers


def test_two_workers_alternating_on_one_thread_file_each_message_once(stores: Stores) -> None:
    # Two workers of one app (two store handles, one shared checkpointer): the thread's runs
    # alternate between them; each worker's middleware must see what the other filed.
    saver = InMemorySaver()
    workers = []
    for _ in range(2):
        model = Recorder()
        memory = stores.open().open("langgraph/t1", budget=4_000)
        workers.append((agent_of(ByheartMiddleware(memory), model, saver), model))
    for k in range(5):
        agent, model = workers[k % 2]
        out = ask(agent, "t1", f"Question {k}: what about the orchid number {k}?")
        assert f"orchid number {k - 1}" in model.received[-1] or k == 0
    assert len(out["messages"]) == 10
    assert len(stores.open().open("langgraph/t1")) == 10  # nothing filed twice


def test_a_history_reads_what_another_worker_wrote(stores: Stores) -> None:
    a = ByheartChatMessageHistory(stores.open(), "s1")
    b = ByheartChatMessageHistory(stores.open(), "s1")
    a.add_messages([HumanMessage("first", id="1")])
    assert [m.content for m in b.messages] == ["first"]
    a.add_messages([AIMessage("second", id="2")])
    assert [m.content for m in b.messages] == ["first", "second"]  # not stale
    b.add_messages([HumanMessage("third", id="3")])
    assert [m.content for m in a.messages] == ["first", "second", "third"]
    a.clear()  # the conversation deleted by one worker: the other reads it empty
    assert b.messages == []
    b.add_messages([HumanMessage("fresh", id="4")])
    assert [m.content for m in a.messages] == ["fresh"]


def test_a_history_read_by_two_threads_while_written(stores: Stores) -> None:
    writer = ByheartChatMessageHistory(stores.open(), "s1")
    reader = ByheartChatMessageHistory(stores.open(), "s1")
    seen: list[int] = []

    def read() -> None:
        for _ in range(20):
            seen.append(len(reader.messages))

    with ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(read), pool.submit(read)]
        for k in range(10):
            writer.add_messages([HumanMessage(f"m{k}", id=f"m{k}")])
        [job.result() for job in jobs]
    assert [m.content for m in reader.messages] == [f"m{k}" for k in range(10)]
    assert all(0 <= n <= 10 for n in seen)


def test_async_runs_keep_each_thread_to_itself(stores: Stores) -> None:
    import asyncio

    model = Recorder()
    agent = agent_of(ByheartMiddleware(stores.open()), model, InMemorySaver())

    async def both() -> None:
        await agent.ainvoke({"messages": [HumanMessage(PIN)]}, {"configurable": {"thread_id": "a"}})
        await agent.ainvoke(
            {"messages": [HumanMessage("My PIN?")]}, {"configurable": {"thread_id": "b"}}
        )

    asyncio.run(both())
    assert "90210" in model.received[0] and "90210" not in model.received[1]


def test_a_thread_whose_conversation_was_closed_comes_back_whole(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yait_byheart.integrations import langchain

    monkeypatch.setattr(langchain, "OPEN_THREADS", 2)
    store = stores.open()
    model = Recorder()
    agent = agent_of(ByheartMiddleware(store), model, InMemorySaver())
    ask(agent, "alice", PIN)
    ask(agent, "bob", "hello")
    ask(agent, "carol", "hello")  # alice's conversation is closed here
    ask(agent, "alice", "What is my bank PIN?")
    assert "90210" in model.received[-1]
    assert len(store.open("langgraph/alice")) == 4  # reopened: nothing filed twice


CHILD = """
import sys
from langchain_core.messages import HumanMessage
from tests._stores import open_store
from yait_byheart.integrations.langchain import byheart_trimmer
hook = byheart_trimmer(open_store(*sys.argv[1:4]).open("langgraph/t1"))
messages = [HumanMessage(f"m{k}", id=f"m{k}") for k in range(int(sys.argv[4]))]
hook.invoke({"messages": messages}, {"configurable": {"thread_id": "t1"}})
"""


def test_a_worker_files_nothing_another_process_filed(stores: Stores) -> None:
    # Two processes serve thread t1 and share its checkpointer: each hands its trimmer the
    # thread's whole state; what the other process filed must not be filed again.
    import subprocess
    import sys

    hook = byheart_trimmer(stores.open().open("langgraph/t1"))
    config = {"configurable": {"thread_id": "t1"}}
    state = [HumanMessage(f"m{k}", id=f"m{k}") for k in range(6)]
    hook.invoke({"messages": state[:2]}, config)
    child = [sys.executable, "-c", CHILD, *stores.args, "4"]
    subprocess.run(child, check=True, env=stores.child_env(), timeout=120)
    sent = hook.invoke({"messages": state}, config)["llm_input_messages"]
    assert [m.content for m in sent] == [f"m{k}" for k in range(6)]
    assert len(stores.open().open("langgraph/t1")) == 6


HISTORY_CHILD = """
import sys
from langchain_core.messages import HumanMessage
from tests._stores import open_store
from yait_byheart.integrations.langchain import ByheartChatMessageHistory
history = ByheartChatMessageHistory(open_store(*sys.argv[1:4]), "s1")
history.add_messages([HumanMessage(f"m{k}", id=f"m{k}") for k in range(1, 4)])
"""


def test_a_history_reads_what_another_process_added(stores: Stores) -> None:
    import subprocess
    import sys

    history = ByheartChatMessageHistory(stores.open(), "s1")
    history.add_messages([HumanMessage("m0", id="m0")])
    assert [m.content for m in history.messages] == ["m0"]
    child = [sys.executable, "-c", HISTORY_CHILD, *stores.args]
    subprocess.run(child, check=True, env=stores.child_env(), timeout=120)
    assert [m.content for m in history.messages] == ["m0", "m1", "m2", "m3"]
