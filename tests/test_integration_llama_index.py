"""byheart with LlamaIndex: a FunctionAgent whose mock function-calling LLM (LlamaIndex's own
``MockFunctionCallingLLM``, its replies scripted) calls a tool on every run, with
ByheartMemory as its memory on a SQLite store, reopened midway. No network."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM

from yait_byheart import Memory
from yait_byheart.integrations.llama_index import ByheartMemory
from yait_byheart.store import SQLiteStore

NOTE = " The forecast office adds its usual long note about wind and humidity." * 3
SETTINGS = {"budget": 600, "chunk": 300, "ceiling": 1.5}
LIMIT = SETTINGS["budget"] * SETTINGS["ceiling"]


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}.{NOTE}"


def question(k: int) -> str:
    return f"What is the weather in City{k}? Asking about trip {k}."


class Script:
    """The LLM's replies: a tool call for the city asked about, then an answer; records what
    the LLM was sent on every call."""

    def __init__(self) -> None:
        self.sent: list[list[ChatMessage]] = []

    def __call__(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.sent.append([m.model_copy(deep=True) for m in messages])
        last = messages[-1]
        if last.role == "tool":
            city = json.loads(messages[-2].blocks[-1].model_dump_json())["tool_kwargs"]["city"]
            return ChatMessage(role="assistant", content=f"In {city} it is sunny.")
        k = int(last.content.split("trip ")[1].rstrip("."))
        call = ToolCallBlock(tool_call_id=f"call_{k}", tool_name="get_weather",
                             tool_kwargs={"city": f"City{k}"})  # fmt: skip
        return ChatMessage(role="assistant", blocks=[call])


def chars(messages: list[ChatMessage]) -> int:
    n = 0
    for m in messages:
        if m.role == "system":
            continue
        for b in m.blocks:
            n += len(b.text) if isinstance(b, TextBlock) else 0
            n += len(json.dumps(b.tool_kwargs)) if isinstance(b, ToolCallBlock) else 0
    return n


def check_sendable(messages: list[ChatMessage]) -> None:
    """System first if any, then a user message; every tool message answers a call of the
    assistant message right before it; every call is answered."""
    rest = [m for m in messages if m.role != "system"]
    assert rest[0].role == "user"
    pending: set[str] = set()
    for m in rest:
        if m.role == "tool":
            assert m.additional_kwargs["tool_call_id"] in pending
            pending.discard(m.additional_kwargs["tool_call_id"])
            continue
        assert not pending, pending
        pending = {b.tool_call_id for b in m.blocks if isinstance(b, ToolCallBlock)}
        pending |= {c["id"] for c in m.additional_kwargs.get("tool_calls", [])}
    assert not pending


async def runs(memory: Any, script: Script, ks: range) -> None:
    llm = MockFunctionCallingLLM(response_generator=script)
    agent = FunctionAgent(tools=[get_weather], llm=llm, system_prompt="Be brief.")
    for k in ks:
        out = await agent.run(question(k), memory=memory)
        assert str(out) == f"In City{k} it is sunny."


def check_calls(script: Script, first: int) -> None:
    for n, sent in enumerate(script.sent):
        check_sendable(sent)
        assert sent[0].role == "system" and sent[0].content == "Be brief."
        k = first + n // 2
        # FunctionAgent asks its memory once per run, then adds the run's own tool round (its
        # scratchpad) after what the memory gave: the hard limit bounds the memory's part.
        assert chars(sent[: -2 if n % 2 else None]) <= LIMIT
        if n % 2:  # after the tool round: the call and its result, native, last
            assert sent[-2].blocks[-1].tool_call_id == f"call_{k}"
            assert sent[-1].role == "tool" and sent[-1].content == get_weather(f"City{k}")
        else:
            assert sent[-1].role == "user" and sent[-1].content == question(k)


def test_function_agent_across_a_reopened_store(tmp_path: Path) -> None:
    path = tmp_path / "li.db"
    with SQLiteStore(path) as store:
        memory = ByheartMemory.from_defaults(store, "trip", **SETTINGS)
        script = Script()
        asyncio.run(runs(memory, script, range(6)))
        check_calls(script, 0)
        before = memory.get_all()
        assert len(before) == 24 and memory.last_result["mode"] == "assembled"
        assert chars(before) > 2 * LIMIT  # the history outgrew the hard limit
        assert [m.role for m in before[:4]] == ["user", "assistant", "tool", "assistant"]
    with SQLiteStore(path) as store:
        memory = ByheartMemory.from_defaults(store, "trip")
        assert memory.get_all() == before  # every message, exactly
        script = Script()
        asyncio.run(runs(memory, script, range(6, 8)))
        check_calls(script, 6)
        assert len(memory.get_all()) == 32 and len(memory.memory) == 32


def test_get_returns_the_messages_put_and_an_old_round_when_asked() -> None:
    memory = ByheartMemory.from_defaults(budget=5_000)
    call = ChatMessage(role="assistant", blocks=[
        TextBlock(text="Checking."),
        ToolCallBlock(tool_call_id="c1", tool_name="get_weather", tool_kwargs={"city": "Oslo"}),
    ], additional_kwargs={"kept": True})  # fmt: skip
    result = ChatMessage(role="tool", content="4 C", additional_kwargs={"tool_call_id": "c1"})
    put = [ChatMessage(role="system", content="Be brief."),
           ChatMessage(role="user", content="Weather in Oslo?"), call, result]  # fmt: skip
    memory.put_messages(put)
    got = memory.get()
    assert got == put  # passthrough: each message as it was put
    assert got[2] is not call  # copies
    memory.set([*put, ChatMessage(role="assistant", content="4 C.")])
    assert len(memory.memory) == 4  # set with the same start added only the new message
    memory.set([ChatMessage(role="user", content="New topic.")])
    assert [m.content for m in memory.get_all()] == ["New topic."]
    memory.reset()
    assert memory.get_all() == [] and memory.get() == []


def test_openai_style_tool_calls_are_filed_as_calls() -> None:
    memory = ByheartMemory.from_defaults(Memory(budget=5_000), "x")
    calls = [{"id": "c9", "type": "function",
              "function": {"name": "lookup", "arguments": '{"q": "oven"}'}}]  # fmt: skip
    memory.put_messages([
        ChatMessage(role="user", content="Price of the oven?"),
        ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": calls}),
        ChatMessage(role="tool", content="18,900 euro", additional_kwargs={"tool_call_id": "c9"}),
    ])  # fmt: skip
    parts = memory.memory.to_dict()["turns"][1]["tools"]
    assert parts == [{"type": "tool_call", "id": "c9", "name": "lookup",
                      "arguments": '{"q": "oven"}'}]  # fmt: skip
    check_sendable(memory.get())


def test_bad_source_names_the_call() -> None:
    with pytest.raises(TypeError, match="ByheartMemory"):
        ByheartMemory.from_defaults("chats.db")


@st.composite
def chat_histories(draw: st.DrawFn) -> list[ChatMessage]:
    """Messages as a FunctionAgent puts them: questions, rounds of (parallel) tool calls and
    their tool messages, answers; long texts to outgrow the budget."""
    words = st.text(alphabet="abcdefgh ", min_size=1, max_size=400)
    out: list[ChatMessage] = []
    for r in range(draw(st.integers(1, 6))):
        out.append(ChatMessage(role="user", content=f"q{r} " + draw(words)))
        for c in range(draw(st.integers(0, 2))):
            ids = [f"t{r}.{c}.{k}" for k in range(draw(st.integers(1, 3)))]
            calls = [
                ToolCallBlock(tool_call_id=i, tool_name="wx", tool_kwargs={"q": i}) for i in ids
            ]
            out.append(ChatMessage(role="assistant", blocks=calls))
            out += [ChatMessage(role="tool", content=draw(words),
                                additional_kwargs={"tool_call_id": i}) for i in ids]  # fmt: skip
        out.append(ChatMessage(role="assistant", content=f"a{r} " + draw(words)))
    return out


@settings(max_examples=40)
@given(chat_histories())
def test_random_histories_come_back_sendable_within_the_limit(messages: list[ChatMessage]) -> None:
    memory = ByheartMemory.from_defaults(**SETTINGS)
    for message in messages:
        memory.put(message)
        if message.role != "user":
            continue
        got = memory.get()
        check_sendable(got)
        assert memory.last_result["size"] <= LIMIT
        assert got[-1] == message  # the question last, as it was put
    assert memory.get_all() == messages


# -- pickles, workflow Contexts, several workers and threads ---------------------------------

import pickle  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

from workflows import Context  # noqa: E402
from workflows.context.serializers import PickleSerializer  # noqa: E402

from tests._stores import Stores, stores_fixture  # noqa: E402, F401 (the fixture)


def contents(memory: Any) -> list[str]:
    return [m.content for m in memory.get_all()]


def test_a_memory_pickles_and_the_copy_goes_on() -> None:
    memory = ByheartMemory.from_defaults(**SETTINGS)
    memory.put(ChatMessage(role="user", content="My locker code is 4471."))
    copy = pickle.loads(pickle.dumps(memory))
    assert copy.get_all() == memory.get_all() and copy.memory.budget == SETTINGS["budget"]
    copy.put(ChatMessage(role="assistant", content="Noted."))
    assert contents(copy) == ["My locker code is 4471.", "Noted."]
    assert "4471" in str([m.content for m in copy.get("What is my locker code?")])


def test_a_store_memory_pickles_as_its_conversation(stores: Stores) -> None:
    memory = ByheartMemory.from_defaults(stores.open(), "s1")
    memory.put(ChatMessage(role="user", content="first"))
    copy = pickle.loads(pickle.dumps(memory))
    copy.put(ChatMessage(role="assistant", content="second"))
    assert contents(memory) == contents(copy) == ["first", "second"]


@pytest.mark.parametrize("serializer", [None, PickleSerializer()], ids=["json", "pickle"])
def test_a_context_round_trip_keeps_the_memory(stores: Stores, serializer: Any) -> None:
    memory = ByheartMemory.from_defaults(stores.open(), "trip", **SETTINGS)
    script = Script()
    llm = MockFunctionCallingLLM(response_generator=script)
    agent = FunctionAgent(tools=[get_weather], llm=llm, system_prompt="Be brief.")

    async def two_runs() -> Any:
        ctx = Context(agent)
        await agent.run(question(0), ctx=ctx, memory=memory)
        kept = ctx.to_dict() if serializer is None else ctx.to_dict(serializer=serializer)
        restored = (
            Context.from_dict(agent, kept)
            if serializer is None
            else Context.from_dict(agent, kept, serializer=serializer)
        )
        return await agent.run(question(1), ctx=restored)

    assert str(asyncio.run(two_runs())) == "In City1 it is sunny."
    assert question(0) in str(script.sent[-1])  # the restored memory is the conversation
    assert len(ByheartMemory.from_defaults(stores.open(), "trip").get_all()) == 8


def test_from_dict_restores_or_says_what_to_do() -> None:
    with pytest.raises(ValueError, match=r"from_dict: the data holds no byheart memory"):
        ByheartMemory.from_dict({"session_id": "s1", "class_name": "ByheartMemory"})
    saved = {"session_id": "s1", "byheart": {"store": "SQLiteStore:/nowhere/chats.db"}}
    with pytest.raises(ValueError, match=r"open that store and pass ByheartMemory.from_defaults"):
        ByheartMemory.from_dict(saved)


def test_every_read_reflects_another_handles_writes(stores: Stores) -> None:
    a = ByheartMemory.from_defaults(stores.open(), "s1")
    b = ByheartMemory.from_defaults(stores.open(), "s1")
    a.put(ChatMessage(role="user", content="first"))
    assert contents(b) == ["first"]
    a.put(ChatMessage(role="assistant", content="second"))
    assert contents(b) == ["first", "second"]  # 2 of 2, not stale
    assert [m.content for m in b.get()] == ["first", "second"]
    b.put(ChatMessage(role="user", content="third"))
    assert contents(a) == ["first", "second", "third"]
    a.reset()  # deleted through one handle: the other reads it empty, then goes on
    assert b.get_all() == []
    b.put(ChatMessage(role="user", content="fresh"))
    assert contents(a) == ["fresh"]


CHILD = """
import sys
from llama_index.core.base.llms.types import ChatMessage
from tests._stores import open_store
from yait_byheart.integrations.llama_index import ByheartMemory
memory = ByheartMemory.from_defaults(open_store(*sys.argv[1:4]), "s1")
for k in range(int(sys.argv[4]), int(sys.argv[5])):
    memory.put(ChatMessage(role="user", content=f"m{k}"))
"""


def test_a_memory_reads_what_another_process_wrote(stores: Stores) -> None:
    memory = ByheartMemory.from_defaults(stores.open(), "s1")
    memory.put(ChatMessage(role="user", content="m0"))
    assert contents(memory) == ["m0"]
    child = [sys.executable, "-c", CHILD, *stores.args, "1", "4"]
    subprocess.run(child, check=True, env=stores.child_env(), timeout=120)
    assert contents(memory) == ["m0", "m1", "m2", "m3"]
    assert "m3" in str([m.content for m in memory.get()])


def test_two_threads_put_through_one_memory_another_reads(stores: Stores) -> None:
    writer = ByheartMemory.from_defaults(stores.open(), "s1")
    reader = ByheartMemory.from_defaults(stores.open(), "s1")

    def put(who: str) -> None:
        for k in range(8):
            writer.put(ChatMessage(role="user", content=f"{who}-{k}"))
            reader.get_all()  # reads while the other thread writes

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(put, ["x", "y"]))
    got = contents(reader)
    assert sorted(got) == sorted(f"{w}-{k}" for w in "xy" for k in range(8))
    assert [c for c in got if c.startswith("x")] == [f"x-{k}" for k in range(8)]
    assert got == contents(writer)
