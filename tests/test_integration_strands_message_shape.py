"""What ByheartMiddleware hands a Strands model (issue 43): never two messages of one role in
a row (Bedrock Converse, Strands' default provider, refuses that: "A conversation must
alternate between user and assistant roles"), and past tool rounds that fit the budget as
the agent's own toolUse and toolResult blocks, whatever the size of their results. A
scripted model, tool results of 2,000 to 20,000 characters. No network. Runs in CI's Strands
environment (.ci/run); elsewhere it is skipped."""

from __future__ import annotations

from itertools import pairwise

import pytest

pytest.importorskip("strands")

from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.middleware import InvokeModelStage

from tests.test_integration_strands import Scripted, check_sendable, question
from yait_byheart import Memory
from yait_byheart._turns.render import MEMORY_MARKER, OMITTED_MARKER
from yait_byheart.integrations.strands import ByheartMiddleware

SIZES = [2_000, 14_000, 20_000, 6_000, 17_000, 9_000, 12_000, 3_000]


@tool
def report(city: str) -> str:
    """Hourly readings for a city."""
    k = int(city.removeprefix("City"))
    line = f"Hourly readings for {city}: wind, humidity, pressure and cloud cover. "
    return (line * (SIZES[k] // len(line) + 1))[: SIZES[k]]


def script(runs: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for k in range(runs):
        use = {"toolUseId": f"call_{k}", "name": "report", "input": {"city": f"City{k}"}}
        out += [{"role": "assistant", "content": [{"toolUse": use}]},
                {"role": "assistant", "content": [{"text": f"City{k} is windy."}]}]  # fmt: skip
    return out


def test_messages_alternate_and_rounds_that_fit_stay_native() -> None:
    model = Scripted(script(len(SIZES)))
    agent = Agent(
        model=model, tools=[report], system_prompt="Be brief.",
        conversation_manager=NullConversationManager(), callback_handler=None,
    )  # fmt: skip
    middleware = ByheartMiddleware(Memory(budget=24_000))
    agent.add_middleware(InvokeModelStage.Input, middleware)
    for k in range(len(SIZES)):
        agent(question(k))
    native = 0
    for sent in model.sent:
        check_sendable(sent)
        roles = [m["role"] for m in sent]
        assert all(a != b for a, b in pairwise(roles)), roles
        texts = [b["text"] for m in sent for b in m["content"] if "text" in b]
        trimmed = OMITTED_MARKER in texts
        for text in texts:  # tool activity as text only in memory (or after a trim)
            assert "[tool call " not in text or text.startswith(MEMORY_MARKER) or trimmed
        native += sum(1 for m in sent for b in m["content"] if "toolUse" in b)
    assert native >= len(SIZES)  # each round native at least in the call that answers it
