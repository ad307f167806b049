"""ByheartMiddleware in real LangChain v1 agent loops (``langchain.agents.create_agent``): a
scripted chat model calls a tool on every run; on every model call what it receives must be
sendable (system prompt, then a user message first, no orphan tool message, no call left
unanswered, no two AI messages in a row), end with the newest round native, and stay within
the Memory's limit, while the agent's state keeps every message. Two runs, then the
conversation reopened from a SQLite store. No network."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from yait_byheart import Memory
from yait_byheart.integrations.langchain import ByheartMiddleware, byheart_trimmer
from yait_byheart.store import SQLiteStore

PAD = "The forecast office adds its usual long note about wind, humidity and pressure. " * 4


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"4 C in {city}. {PAD}"


class ScriptedChat(FakeMessagesListChatModel):
    """Answers from a script and records every list of messages it is sent."""

    received: list[list[Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        self.received.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def script(first: int, runs: int) -> ScriptedChat:
    responses: list[Any] = []
    for k in range(first, first + runs):
        call = {"name": "get_weather", "args": {"city": f"City{k}"}, "id": f"call_{k}"}
        responses += [AIMessage("", tool_calls=[call]), AIMessage(f"It is 4 C in City{k}.")]
    return ScriptedChat(responses=responses, received=[])


def chars(messages: list[Any]) -> int:
    return sum(len(str(m.content)) for m in messages)


def question(k: int) -> str:
    return f"What is the weather in City{k}? I plan a trip about topic {k} soon."


def check_sendable(sent: list[Any], state_tail: Any) -> None:
    """System first, then a user message; tool messages right after the AI message that
    called them, every call answered; no two AI messages in a row; the newest round last."""
    assert isinstance(sent[0], SystemMessage) and sent[0].content == "Be brief."
    body = sent[1:]
    assert isinstance(body[0], HumanMessage)
    open_calls: set[str] = set()
    for before, message in zip([None, *body], body, strict=False):
        if isinstance(message, ToolMessage):
            assert message.tool_call_id in open_calls, "orphan tool message"
            open_calls.discard(message.tool_call_id)
            continue
        assert not open_calls, "a tool call left unanswered"
        assert not (isinstance(message, AIMessage) and isinstance(before, AIMessage))
        if isinstance(message, AIMessage):
            open_calls = {c["id"] for c in message.tool_calls}
    assert not open_calls
    if isinstance(state_tail, ToolMessage):  # mid-turn: the newest call and its result last
        assert isinstance(sent[-1], ToolMessage)
        assert sent[-1].tool_call_id == state_tail.tool_call_id
        assert [c["id"] for c in sent[-2].tool_calls] == [state_tail.tool_call_id]
        assert sent[-1].content == state_tail.content
    else:
        assert isinstance(sent[-1], HumanMessage) and sent[-1].content.endswith(state_tail.content)


def agent_for(memory: Memory, model: ScriptedChat, saver: InMemorySaver) -> tuple[Any, Any]:
    middleware = ByheartMiddleware(memory)
    agent = create_agent(
        model, [get_weather], system_prompt="Be brief.", middleware=[middleware],
        checkpointer=saver,
    )  # fmt: skip
    return agent, middleware


def run(agent: Any, k: int, thread: str, use_async: bool) -> dict[str, Any]:
    inputs = {"messages": [HumanMessage(question(k))]}
    config = {"configurable": {"thread_id": thread}}
    if use_async:
        return asyncio.run(agent.ainvoke(inputs, config))
    return agent.invoke(inputs, config)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_two_runs_then_a_reopened_store(tmp_path: Path, use_async: bool) -> None:
    path = tmp_path / "chats.db"
    saver = InMemorySaver()
    with SQLiteStore(path) as store:
        memory = store.open("user-42", budget=1_500)
        model = script(0, 2)
        agent, middleware = agent_for(memory, model, saver)
        states = []
        for k in range(2):
            out = run(agent, k, "t1", use_async)
            states.append(out["messages"])
            assert len(out["messages"]) == 4 * (k + 1)  # the state keeps every message
        assert len(model.received) == 4  # two model calls a run: the call, the answer
        for n, sent in enumerate(model.received):
            state = states[n // 2][: 4 * (n // 2) + 1 + 2 * (n % 2)]  # what the state held
            check_sendable(sent, state[-1])
        assert len(memory) == 8  # each message filed once, the last answer too
        assert middleware.last_result["size"] <= memory.ceiling * memory.budget
    with SQLiteStore(path) as store:  # a new process: the store and the checkpointer
        memory = store.open("user-42")
        assert len(memory) == 8
        model = script(2, 1)
        agent, middleware = agent_for(memory, model, saver)
        out = run(agent, 2, "t1", use_async)
        assert len(out["messages"]) == 12
        assert len(memory) == 12  # nothing filed twice after reopening
        check_sendable(model.received[0], out["messages"][8])
        check_sendable(model.received[1], out["messages"][10])
        # A fresh thread (an empty state): the store still gives the model the past runs.
        model = script(3, 1)
        agent, _ = agent_for(memory, model, saver)
        out = run(agent, 3, "t2", use_async)
        assert len(out["messages"]) == 4
        sent = "\n".join(str(m.content) for m in model.received[0])
        assert "City1" in sent or "City0" in sent or "City2" in sent
        check_sendable(model.received[1], out["messages"][2])


def test_a_long_conversation_is_composed_within_the_limit_every_call() -> None:
    memory = Memory(budget=1_500)
    model = script(0, 12)
    agent, middleware = agent_for(memory, model, InMemorySaver())
    for k in range(12):
        out = run(agent, k, "t1", False)
    assert len(out["messages"]) == 48 and len(memory) == 48
    assert len(model.received) == 24
    for n, sent in enumerate(model.received):
        at = 4 * (n // 2) + 2 * (n % 2)  # the run's question or the tool's result
        check_sendable(sent, out["messages"][at])
    # By the end the history is well over the budget: a selection is sent, not all of it.
    assert middleware.last_result["mode"] == "assembled"
    assert chars(model.received[-1]) < chars(out["messages"][:-1]) - 1_000
    assert middleware.last_result["size"] <= memory.ceiling * memory.budget


def test_the_middleware_refuses_what_it_cannot_compose_from() -> None:
    with pytest.raises(TypeError, match=r"ByheartMiddleware\(source\): pass a"):
        ByheartMiddleware("not a memory")


def test_the_trimmer_files_nothing_twice_after_a_reopen(tmp_path: Path) -> None:
    messages = [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")]
    with SQLiteStore(tmp_path / "c.db") as store:
        byheart_trimmer(store.open("s")).invoke(messages)
    with SQLiteStore(tmp_path / "c.db") as store:
        memory = store.open("s")
        byheart_trimmer(memory).invoke([*messages, HumanMessage("again", id="h2")])
        assert len(memory) == 3
