"""byheart_history in real Pydantic AI agent runs: a FunctionModel calls a tool on every run;
the Memory must file every message once, and each request must carry tool call / return pairs
together and stay within the Memory's limit while the conversation outgrows it. No network."""

from __future__ import annotations

import inspect
import json
import re
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
    stored = json.dumps(mem.to_dict()["turns"])
    assert all(stored.count(question(k)) == 1 for k in range(RUNS))
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
