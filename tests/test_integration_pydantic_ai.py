"""byheart_history in real Pydantic AI agent runs: a FunctionModel calls a tool on every run;
the Memory must file every message once, and each request must carry tool call / return pairs
together and stay within the Memory's limit while the conversation outgrows it. No network."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai import messages as pm
from pydantic_ai.models.function import AgentInfo, FunctionModel

from yait_byheart import Memory
from yait_byheart.integrations.pydantic_ai import byheart_history

RUNS = 10
NOTE = " The forecast office adds its usual long note about wind and humidity." * 3
SYSTEM = "You are a weather bot."


def question(k: int) -> str:
    return f"What is the weather in City{k}? Asking about trip {k}."


class Weather:
    """A scripted model: asks for the weather of the city in the newest question, then
    answers from the tool's return; records every request it is sent."""

    def __init__(self) -> None:
        self.sent: list[list[pm.ModelMessage]] = []

    def __call__(self, messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        self.sent.append(messages)
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, pm.ToolReturnPart)]
        if returns:
            return pm.ModelResponse(parts=[pm.TextPart(f"Answer: {returns[0].content[:30]}")])
        asked = [p.content for p in last.parts if isinstance(p, pm.UserPromptPart)]
        city = re.findall(r"weather in (City\d+)", " ".join(map(str, asked)))[-1]
        call_id = f"call_{len(self.sent)}"
        return pm.ModelResponse(parts=[pm.ToolCallPart("get_weather", {"city": city}, call_id)])


def make_agent(model: Weather, processor: Any, spelling: str) -> Agent[None, str]:
    if spelling == "capabilities":
        from pydantic_ai.capabilities import ProcessHistory

        agent: Agent[None, str] = Agent(
            FunctionModel(model), system_prompt=SYSTEM, capabilities=[ProcessHistory(processor)]
        )
    else:
        agent = Agent(FunctionModel(model), system_prompt=SYSTEM, history_processors=[processor])  # type: ignore[call-arg]

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"sunny in {city}.{NOTE}"

    return agent


def spellings() -> list[str]:
    """Each way the installed Pydantic AI registers a processor."""
    params = inspect.signature(Agent.__init__).parameters
    out = [s for s in ("capabilities", "history_processors") if s in params]
    if "capabilities" in out:
        pytest.importorskip("pydantic_ai.capabilities")
    return out


def chars(messages: list[pm.ModelMessage]) -> int:
    n = 0
    for m in messages:
        for p in m.parts:
            if isinstance(p, (pm.UserPromptPart, pm.TextPart, pm.ToolReturnPart)):
                n += len(str(p.content))
            elif isinstance(p, pm.ToolCallPart):
                n += len(p.args_as_json_str())
    return n


def check_pairs(messages: list[pm.ModelMessage]) -> None:
    """Every tool call is returned in the next request, every return follows its call."""
    for i, m in enumerate(messages):
        calls = {p.tool_call_id for p in m.parts if isinstance(p, pm.ToolCallPart)}
        returns = {p.tool_call_id for p in m.parts if isinstance(p, pm.ToolReturnPart)}
        before = messages[i - 1].parts if i else []
        assert returns <= {p.tool_call_id for p in before if isinstance(p, pm.ToolCallPart)}
        if calls:
            after = messages[i + 1].parts
            assert calls == {p.tool_call_id for p in after if isinstance(p, pm.ToolReturnPart)}
    assert isinstance(messages[-1], pm.ModelRequest)


@pytest.mark.parametrize("spelling", spellings())
def test_history_is_filed_once_and_requests_stay_within_the_limit(spelling: str) -> None:
    mem = Memory(budget=600, chunk=300, ceiling=1.5)
    processor = byheart_history(mem)
    model = Weather()
    agent = make_agent(model, processor, spelling)
    history: list[pm.ModelMessage] | None = None
    for k in range(RUNS):
        result = agent.run_sync(question(k), message_history=history)
        assert result.output.startswith(f"Answer: sunny in City{k}.")
        history = result.all_messages()
    # Each run files its question, the call, the return and (on the next run) the answer.
    assert len(mem) == 4 * RUNS - 1
    filed = json.dumps([t["text"] for t in mem.to_dict()["turns"]])  # the words, not the items
    assert all(filed.count(question(k)) == 1 for k in range(RUNS))
    limit = mem.ceiling * mem.budget
    for messages in model.sent:
        check_pairs(messages)
        assert chars(messages) <= limit
        first = messages[0].parts[0]
        assert isinstance(first, pm.SystemPromptPart) and first.content == SYSTEM
    total = sum(len(question(k)) + len(f"sunny in City{k}.{NOTE}") for k in range(RUNS))
    assert total > 2 * limit  # the conversation outgrew what any request carried
    assert processor.last_result["mode"] == "assembled"  # type: ignore[attr-defined]
    # The second request of the last run continues natively: its call, then its return.
    last = model.sent[-1]
    assert isinstance(last[-2].parts[-1], pm.ToolCallPart)
    assert isinstance(last[-1].parts[0], pm.ToolReturnPart)


def test_an_old_tool_return_comes_back_when_asked_about() -> None:
    mem = Memory(budget=600, chunk=300, ceiling=1.5)
    model = Weather()
    agent = make_agent(model, byheart_history(mem), spellings()[0])
    history: list[pm.ModelMessage] | None = None
    for k in range(RUNS):
        history = agent.run_sync(question(k), message_history=history).all_messages()
    agent.run_sync("Back to City2: what is the weather in City2 again?", message_history=history)
    first_request = json.dumps([repr(m) for m in model.sent[-2]])
    assert "sunny in City2." in first_request
    shown = [k for k in range(RUNS) if f"sunny in City{k}." in first_request]
    assert len(shown) < RUNS / 2, shown


def test_processor_needs_a_memory() -> None:
    with pytest.raises(TypeError, match=r"byheart_history\(memory\): memory must be"):
        byheart_history({"budget": 10})  # type: ignore[arg-type]


def test_retries_and_failed_tools_are_filed_as_error_results() -> None:
    """A tool retry (bad arguments) answers its call as an error result, so the pair stays
    whole in Memory and in what is composed."""
    mem = Memory(budget=2000)
    processor = byheart_history(mem)
    call = pm.ToolCallPart("get_weather", {"town": "Oslo"}, tool_call_id="c1")
    retry = pm.ToolReturnPart(
        tool_name="get_weather",
        content="unknown field 'town'",
        tool_call_id="c1",
        outcome="retried",
    )
    messages: list[Any] = [
        pm.ModelRequest(parts=[pm.SystemPromptPart(SYSTEM), pm.UserPromptPart("Weather in Oslo?")]),
        pm.ModelResponse(parts=[pm.TextPart("Let me check."), call]),
        pm.ModelRequest(parts=[retry]),
    ]
    out = processor(messages)
    stored = mem.to_dict()["turns"]
    assert [t["role"] for t in stored] == ["user", "assistant", "user"]
    assert stored[2]["tools"][0]["is_error"] is True
    assert "unknown field" in stored[2]["tools"][0]["output"]
    check_pairs(out)
    assert out[0].parts[0] == messages[0].parts[0]  # the system prompt leads
    assert [p.part_kind for p in out[1].parts] == ["text", "tool-call"]
    assert out[-1].parts[0].tool_call_id == "c1"
    # Calling again with the same messages files nothing twice.
    processor(out)
    assert len(mem) == 3


SAY = st.text(alphabet="abcdefgh ijklmnop", min_size=1, max_size=50).filter(
    lambda t: t.strip() != ""
)


@st.composite
def runs(draw: st.DrawFn) -> list[list[pm.ModelMessage]]:
    """What each model step adds: a question; a response of calls (parallel) then a request
    of returns in any order; an answer."""
    steps: list[list[pm.ModelMessage]] = []
    n = 0
    for _ in range(draw(st.integers(1, 6))):
        steps.append([pm.ModelRequest(parts=[pm.UserPromptPart(draw(SAY))])])
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                n += 1
                calls.append(pm.ToolCallPart("get_weather", {"city": draw(SAY)}, f"c{n}"))
            said = [pm.TextPart(draw(SAY))] if draw(st.booleans()) else []
            returns = [
                pm.ToolReturnPart(
                    "get_weather", draw(SAY) * draw(st.integers(1, 6)), c.tool_call_id
                )
                for c in draw(st.permutations(calls))
            ]
            steps.append([pm.ModelResponse(parts=[*said, *calls]), pm.ModelRequest(parts=returns)])
        steps.append([pm.ModelResponse(parts=[pm.TextPart(draw(SAY))])])
    return steps


@settings(max_examples=60, deadline=None)
@given(runs(), st.integers(150, 800))
def test_random_histories_are_filed_once_and_sent_without_orphans(
    steps: list[list[pm.ModelMessage]], budget: int
) -> None:
    mem = Memory(budget=budget, chunk=200)
    processor = byheart_history(mem)
    history: list[pm.ModelMessage] = []
    for added in steps:
        history += added
        if isinstance(history[-1], pm.ModelRequest):  # a model call comes next
            history = processor(history)  # what Pydantic AI keeps as the run's messages
            check_pairs(history)
    processor(history)
    assert len(mem) == sum(len(added) for added in steps)


def test_a_tool_retry_reaches_the_model_as_a_retry() -> None:
    """ModelRetry in a tool: the composed request carries the return Pydantic AI made
    (outcome 'retried'), not a successful return of the error text."""
    from pydantic_ai import ModelRetry

    sent: list[list[pm.ModelMessage]] = []

    def model(messages: list[pm.ModelMessage], info: AgentInfo) -> pm.ModelResponse:
        sent.append(messages)
        last = messages[-1].parts[-1]
        if isinstance(last, pm.UserPromptPart) or getattr(last, "outcome", "") == "retried":
            call = pm.ToolCallPart("lookup", {"n": len(sent)}, f"c{len(sent)}")
            return pm.ModelResponse(parts=[call])
        return pm.ModelResponse(parts=[pm.TextPart("done")])

    from pydantic_ai.capabilities import ProcessHistory

    mem = Memory(budget=2_000)
    agent: Agent[None, str] = Agent(
        FunctionModel(model), capabilities=[ProcessHistory(byheart_history(mem))]
    )

    @agent.tool_plain(retries=2)
    def lookup(n: int) -> str:
        if n == 1:
            raise ModelRetry("n must be 2 or more")
        return "found"

    assert agent.run_sync("look it up").output == "done"
    retried = sent[1][-1].parts[-1]
    assert isinstance(retried, pm.ToolReturnPart) and retried.tool_call_id == "c1"
    assert retried.outcome == "retried" and "n must be 2 or more" in str(retried.content)
    assert mem.to_dict()["turns"][2]["tools"][0]["is_error"] is True


def every_message_kind() -> list[pm.ModelMessage]:
    """Requests and responses with each part kind Pydantic AI defines for a conversation."""
    from datetime import datetime, timezone

    from pydantic_ai.usage import RequestUsage

    at = datetime(2025, 5, 8, 12, 0, tzinfo=timezone.utc)
    image = pm.ImageUrl(url="https://example.com/cat.png")
    binary = pm.BinaryContent(data=b"\x89PNG", media_type="image/png")
    return [
        pm.ModelRequest(
            parts=[
                pm.SystemPromptPart("Be brief.", timestamp=at),
                pm.UserPromptPart(["What is this?", image, binary], timestamp=at),
            ],
            instructions="Answer in French.",
        ),
        pm.ModelResponse(
            parts=[
                pm.ThinkingPart("a cat, probably", signature="sig"),
                pm.TextPart("Let me check."),
                pm.ToolCallPart("classify", {"image": 1}, "c1"),
                pm.ToolCallPart("measure", '{"what": "cat"}', "c2"),
                pm.NativeToolCallPart("web_search", {"query": "cats"}, "n1"),
                pm.NativeToolReturnPart("web_search", {"hits": 3}, "n1"),
                pm.FilePart(content=binary),
            ],
            usage=RequestUsage(input_tokens=10, output_tokens=5),
            model_name="m-1",
            timestamp=at,
            finish_reason="tool_call",
            provider_name="test",
        ),
        pm.ModelRequest(
            parts=[
                pm.ToolReturnPart("classify", {"label": "cat"}, "c1", timestamp=at),
                pm.ToolReturnPart("measure", "bad unit", "c2", outcome="retried", timestamp=at),
            ]
        ),
        pm.ModelResponse(parts=[pm.ToolCallPart("measure", '{"what": "cat", "unit": "cm"}', "c3")]),
        pm.ModelRequest(parts=[pm.ToolReturnPart("measure", "30", "c3", outcome="failed")]),
        pm.ModelResponse(parts=[pm.TextPart("A cat of about 30 cm.")], timestamp=at),
    ]


def test_every_message_kind_survives_a_store(tmp_path: Path) -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter as Adapter

    from yait_byheart.integrations.pydantic_ai import byheart_messages
    from yait_byheart.store import SQLiteStore

    messages = every_message_kind()
    with SQLiteStore(tmp_path / "p.db") as store:
        mem = store.open("c", budget=2_000)
        byheart_history(mem)(messages)  # files them (and marks them)
        # What Pydantic AI's own JSON round trip gives (it narrows an image's BinaryContent
        # to BinaryImage and fills an ImageUrl's media type): the rest is the object itself.
        expected = Adapter.validate_json(Adapter.dump_json(messages))
        assert expected[2:] == messages[2:]
        assert byheart_messages(mem) == expected
    with SQLiteStore(tmp_path / "p.db") as store:
        again = store.open("c")
        assert byheart_messages(again) == expected  # field for field, after reopening
        processor = byheart_history(again)
        processor(byheart_messages(again))  # a reopened conversation files nothing twice
        assert len(again) == len(messages)


def test_a_saved_history_is_filed_in_full_by_another_memory() -> None:
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    first = Memory(budget=600, chunk=300, ceiling=1.5)
    agent = make_agent(Weather(), byheart_history(first), spellings()[0])
    history: list[pm.ModelMessage] | None = None
    for k in range(3):
        history = agent.run_sync(question(k), message_history=history).all_messages()
    saved = ModelMessagesTypeAdapter.dump_json(history)
    fresh = Memory(budget=600, chunk=300, ceiling=1.5)
    byheart_history(fresh)(ModelMessagesTypeAdapter.validate_json(saved))
    words = json.dumps([t["text"] for t in fresh.to_dict()["turns"]])
    assert question(2) in words and "sunny in City2" in words  # nothing it carries is skipped
    assert len(fresh) > 0
