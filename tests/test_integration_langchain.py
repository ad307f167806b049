"""byheart with LangChain and LangGraph: a ReAct agent whose fake chat model calls a tool on
every run, with byheart_trimmer as pre_model_hook, and ByheartChatMessageHistory in a hand
written tool loop and in RunnableWithMessageHistory. No network."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from yait_byheart import Memory
from yait_byheart.integrations.langchain import ByheartChatMessageHistory, byheart_trimmer
from yait_byheart.store import SQLiteStore

RUNS = 10
NOTE = " The forecast office adds its usual long note about wind and humidity." * 3


class ToolCallingFake(FakeMessagesListChatModel):
    """LangChain's scripted chat model, able to be bound to tools, recording what it is sent."""

    sent: list[list[BaseMessage]] = []  # noqa: RUF012 (a pydantic field, reset per test)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.sent.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}.{NOTE}"


def script(runs: int) -> list[BaseMessage]:
    out: list[BaseMessage] = []
    for k in range(runs):
        call = {"name": "get_weather", "args": {"city": f"City{k}"}, "id": f"call_{k}"}
        out += [AIMessage("", tool_calls=[call]), AIMessage(f"In City{k} it is sunny.")]
    return out


def question(k: int) -> str:
    return f"What is the weather in City{k}? Asking about trip {k}."


def chars(messages: list[BaseMessage]) -> int:
    n = sum(len(str(m.content)) for m in messages if m.type != "system")
    return n + sum(len(str(c["args"])) for m in messages for c in getattr(m, "tool_calls", []))


def check_pairs(messages: list[BaseMessage]) -> None:
    """Every AI tool call is answered by tool messages right after it, and no tool message
    answers anything else (what OpenAI-style providers require)."""
    pending: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in pending
            pending.discard(m.tool_call_id)
            continue
        assert not pending, pending
        pending = {c["id"] for c in getattr(m, "tool_calls", [])}
    assert not pending


def test_react_agent_with_byheart_pre_model_hook() -> None:
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    mem = Memory(budget=600, chunk=300, ceiling=1.5)
    hook = byheart_trimmer(mem)
    model = ToolCallingFake(responses=script(RUNS), sent=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated for langchain.agents
        agent = create_react_agent(
            model,
            [get_weather],
            pre_model_hook=hook,
            checkpointer=InMemorySaver(),
            prompt="Be brief.",
        )
    config = {"configurable": {"thread_id": "trip"}}
    for k in range(RUNS):
        out = agent.invoke({"messages": [("user", question(k))]}, config)
        assert out["messages"][-1].content == f"In City{k} it is sunny."
        assert len(out["messages"]) == 4 * (k + 1)  # the graph's own state keeps everything
    assert len(mem) == 4 * RUNS - 1  # the last answer is filed on the next call
    limit = mem.ceiling * mem.budget
    for sent in model.sent:
        check_pairs(sent)
        assert sent[0] == SystemMessage("Be brief.")
        assert chars(sent) <= limit
    assert RUNS * len(f"sunny in City0.{NOTE}") > 2 * limit  # the history outgrew the limit
    assert hook.trimmer.last_result["mode"] == "assembled"
    last = model.sent[-1]
    assert last[-2].tool_calls[0]["id"] == f"call_{RUNS - 1}"  # this run's call, native
    assert isinstance(last[-1], ToolMessage) and last[-1].tool_call_id == f"call_{RUNS - 1}"


def run_loop(history: Any, model: ToolCallingFake, runs: int, trimmer: Any = None) -> list[Any]:
    """The tool loop LangChain's docs write by hand: ask, run the tool calls, ask again.
    Returns every message added, in order."""
    added: list[Any] = []

    def add(messages: list[Any]) -> None:
        added.extend(m.model_copy(deep=True) for m in messages)
        history.add_messages(messages)

    for k in range(runs):
        add([HumanMessage(question(k))])
        while True:
            sent = trimmer.invoke(history.messages) if trimmer else history.messages
            reply = model.invoke(sent)
            add([reply])
            if not reply.tool_calls:
                break
            add([get_weather.invoke(c) for c in reply.tool_calls])
    return added


def test_history_keeps_messages_exactly_and_the_trimmer_composes_from_it() -> None:
    mem = Memory(budget=600, chunk=300, ceiling=1.5)
    history = ByheartChatMessageHistory(mem, "trip")
    model = ToolCallingFake(responses=script(RUNS), sent=[])
    added = run_loop(history, model, RUNS, byheart_trimmer(history))
    assert history.messages == added  # verbatim, tool calls and tool messages included
    assert {type(m) for m in added} == {HumanMessage, AIMessage, ToolMessage}
    assert len(mem) == 4 * RUNS
    limit = mem.ceiling * mem.budget
    for sent in model.sent:
        check_pairs(sent)
        assert chars(sent) <= limit
    assert chars(history.messages) > 2 * limit
    kept = history.messages
    kept[0].content = "changed"
    assert history.messages[0].content == question(0)  # callers get copies


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # deprecated, still widely used
def test_runnable_with_message_history_stores_through_byheart(tmp_path: Path) -> None:
    from langchain_core.runnables.history import RunnableWithMessageHistory

    path = tmp_path / "lc.db"
    with SQLiteStore(path) as store:
        model = ToolCallingFake(responses=[AIMessage("Noted."), AIMessage("55 euro.")], sent=[])
        chain = RunnableWithMessageHistory(
            model, lambda sid: ByheartChatMessageHistory(store, sid, budget=2000)
        )
        config = {"configurable": {"session_id": "conv-7"}}
        chain.invoke([HumanMessage("we decided on 55 euro a month")], config)
        chain.invoke([HumanMessage("what price did we decide?")], config)
        assert [m.content for m in model.sent[-1]] == [
            "we decided on 55 euro a month",
            "Noted.",
            "what price did we decide?",
        ]
    with SQLiteStore(path) as store:
        again = ByheartChatMessageHistory(store, "conv-7")
        assert [(m.type, m.content) for m in again.messages] == [
            ("human", "we decided on 55 euro a month"),
            ("ai", "Noted."),
            ("human", "what price did we decide?"),
            ("ai", "55 euro."),
        ]
        assert again.memory.budget == 2000
        again.clear()
        assert again.messages == [] and len(again.memory) == 0


def test_store_reopen_returns_the_tool_loop_exactly(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "t.db") as store:
        history = ByheartChatMessageHistory(store, "c")
        run_loop(history, ToolCallingFake(responses=script(2), sent=[]), 2)
        before = history.messages
    with SQLiteStore(tmp_path / "t.db") as store:
        after = ByheartChatMessageHistory(store, "c").messages
    assert after == before and [type(m) for m in after] == [type(m) for m in before]
    check_pairs(after)


def every_message_type() -> list[BaseMessage]:
    """One message of each type langchain-core defines, with the fields a provider fills."""
    from langchain_core import messages as lm

    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    return [
        SystemMessage("Be brief.", id="s1", additional_kwargs={"cache": True}),
        HumanMessage([{"type": "text", "text": "What is in it?"}, image], id="h1", name="ann"),
        AIMessage(
            "Let me look.",
            id="a1",
            tool_calls=[{"name": "look", "args": {"q": 1}, "id": "c1", "type": "tool_call"}],
            invalid_tool_calls=[
                {
                    "name": "g",
                    "args": "{oops",
                    "id": "c2",
                    "error": "bad",
                    "type": "invalid_tool_call",
                }
            ],
            usage_metadata={"input_tokens": 3, "output_tokens": 4, "total_tokens": 7},
            response_metadata={"model_name": "m-1", "finish_reason": "tool_calls"},
        ),
        ToolMessage(
            [{"type": "text", "text": "a cat"}, image],
            tool_call_id="c1",
            name="look",
            artifact={"boxes": [[1, 2, 3, 4]]},
            status="error",
            id="t1",
        ),
        lm.ChatMessage("Fine by me.", role="critic", id="ch1"),
        lm.FunctionMessage("42", name="calc", id="f1"),
        lm.AIMessageChunk("partial", id="ac1"),
        lm.HumanMessageChunk("typing"),
        lm.SystemMessageChunk("sys part"),
        lm.ChatMessageChunk("chat part", role="critic"),
        lm.FunctionMessageChunk("fn part", name="calc"),
        lm.ToolMessageChunk("tool part", tool_call_id="c9"),
        AIMessage("It is a cat."),
    ]


def test_every_message_type_and_field_survives_a_store(tmp_path: Path) -> None:
    given_messages = every_message_type()
    with SQLiteStore(tmp_path / "all.db") as store:
        history = ByheartChatMessageHistory(store, "c")
        with pytest.warns(UserWarning, match="kept but not filed.*'c9'"):  # answers no call
            history.add_messages(given_messages)
        assert history.messages == given_messages
    with SQLiteStore(tmp_path / "all.db") as store:
        again = ByheartChatMessageHistory(store, "c")
        after = again.messages
        assert after == given_messages
        assert [type(m) for m in after] == [type(m) for m in given_messages]
        # The words byheart can read are filed; the rest rides along, never sent.
        sent = str(again.memory.compose("cat")["messages"])
        assert "What is in it?" in sent and "a cat" in sent and "base64" not in sent
        again.clear()
        assert again.messages == []


def test_a_history_opens_its_store_on_first_use_and_async_off_the_loop(tmp_path: Path) -> None:
    import asyncio
    import threading

    opened: list[str] = []

    class Watched(SQLiteStore):
        def open(self, conversation: str, **settings: Any) -> Memory:
            opened.append(threading.current_thread().name)
            return super().open(conversation, **settings)

    with Watched(tmp_path / "w.db") as store:
        history = ByheartChatMessageHistory(store, "c")
        assert opened == []  # building it touches nothing: safe inside an event loop

        async def use() -> list[BaseMessage]:
            await history.aadd_messages([HumanMessage("hi")])
            return await history.aget_messages()

        assert [m.content for m in asyncio.run(use())] == ["hi"]
        assert len(opened) == 1 and opened[0] != threading.main_thread().name


def test_clear_on_a_plain_memory_redacts_every_turn() -> None:
    mem = Memory()
    history = ByheartChatMessageHistory(mem, "s")
    history.add_messages([HumanMessage("my code is 4471"), AIMessage("ok")])
    history.clear()
    assert history.messages == []
    assert "4471" not in str(mem.to_dict())


@pytest.mark.parametrize("bad", [None, "memory", {"messages": []}])
def test_trimmer_needs_a_memory_or_history(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"byheart_trimmer\(source\): pass a"):
        byheart_trimmer(bad)


SAY = st.text(alphabet="abcdefgh ijklmnop", min_size=1, max_size=50).filter(
    lambda t: t.strip() != ""
)


@st.composite
def threads(draw: st.DrawFn) -> list[list[BaseMessage]]:
    """Graph turns: a question, tool rounds (parallel calls, tool messages in any order),
    an answer; each list is what one model call adds to the state."""
    turns: list[list[BaseMessage]] = []
    n = 0
    for _ in range(draw(st.integers(1, 6))):
        turns.append([HumanMessage(draw(SAY), id=f"h{len(turns)}")])
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                calls.append({"name": "get_weather", "args": {"city": draw(SAY)}, "id": f"c{n}"})
            said = draw(st.sampled_from(["", draw(SAY)]))
            answers = [
                ToolMessage(
                    draw(SAY) * draw(st.integers(1, 6)), tool_call_id=c["id"], id=f"t{c['id']}"
                )
                for c in draw(st.permutations(calls))
            ]
            turns.append([AIMessage(said, tool_calls=calls, id=f"a{n}"), *answers])
        turns.append([AIMessage(draw(SAY), id=f"ans{len(turns)}")])
    return turns


@settings(max_examples=60, deadline=None)
@given(threads(), st.integers(150, 800))
def test_trimmer_on_random_threads_sends_no_orphan_and_files_once(
    turns: list[list[BaseMessage]], budget: int
) -> None:
    mem = Memory(budget=budget, chunk=200)
    hook = byheart_trimmer(mem)
    state: list[BaseMessage] = [SystemMessage("Be brief.")]
    for added in turns:
        state += added
        if state[-1].type == "ai":
            continue  # the model is called after a question or after tool messages
        out = hook.invoke({"messages": list(state)})["llm_input_messages"]
        check_pairs(out)
        assert out[0] == SystemMessage("Be brief.")
    hook.invoke({"messages": list(state)})  # files the last answer
    # One turn per question and answer; a tool round is two (the calls, then all their results).
    assert len(mem) == sum(2 if isinstance(added[-1], ToolMessage) else 1 for added in turns)
