"""Every provider adapter accepts every compose result (issue 22).

`compose()` with no query after an assistant turn ends the messages with the assistant's
message (the contract puts the query last only when one is given); the adapters refused it
with "pass the dict returned by Memory.compose()", which is what the caller had done. Random
conversations, ending with a user or an assistant turn, with tool rounds (answered in one
message or several, or left without results), are composed with and without a query, and
every adapter must convert each result into a request with no orphan tool part.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.test_providers_tools import assistant, check_all, tcall, text, tresult, user
from yait_byheart import Memory
from yait_byheart.providers import to_anthropic, to_gemini, to_openai, to_openai_responses

SAY = st.text(alphabet="abcdefgh ijklmnop\n", min_size=1, max_size=60).filter(str.strip)
ENDS = st.sampled_from(["", " ", "\n", "  \n"])  # white space a turn may end with, verbatim


@st.composite
def conversations(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """Memory calls in any order a caller may make them: ("append", (role, text)),
    ("message", neutral message) for tool rounds, ("compose", query or None) anywhere."""
    events: list[tuple[str, Any]] = []
    ids = 0
    for _ in range(draw(st.integers(1, 8))):
        step = draw(st.sampled_from(["user", "assistant", "round", "pending", "compose"]))
        if step in ("user", "assistant"):
            events.append(("append", (step, draw(SAY) + draw(ENDS))))
        elif step in ("round", "pending"):  # a tool round, or calls not answered yet
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                ids += 1
                calls.append(tcall(f"c{ids}", "lookup", json.dumps({"q": draw(SAY)})))
            lead = [text(draw(SAY))] if draw(st.booleans()) else []
            events.append(("message", assistant(*lead, *calls)))
            if step == "round":
                results = [tresult(c["id"], draw(SAY)) for c in draw(st.permutations(calls))]
                if draw(st.booleans()):
                    events.append(("message", user(*results)))
                else:
                    events.extend(("message", user(r)) for r in results)
        else:
            events.append(("compose", draw(st.one_of(st.none(), SAY))))
    events.append(("compose", draw(st.one_of(st.none(), SAY))))
    return events


@given(conversations(), st.sampled_from([60, 400, 20_000]))
def test_every_adapter_accepts_every_compose_result(
    events: list[tuple[str, Any]], budget: int
) -> None:
    mem = Memory(budget=budget)
    for kind, value in events:
        if kind == "append":
            mem.append(*value)
        elif kind == "message":
            mem.append_message(value)
        elif len(mem) or value is not None:
            try:
                res = mem.compose(value)
            except ValueError as err:  # only a query alone above ceiling x budget is refused
                assert "ceiling" in str(err), err
                continue
            check_all(res)  # every adapter, no orphan tool part
            to_openai(res, parts=True)
            to_gemini(res, system="S")
            last = to_anthropic(res)["messages"][-1]
            if last["role"] == "assistant":  # a prefill: Anthropic refuses trailing space
                blocks = [b for b in last["content"] if b["type"] == "text"]
                assert not blocks or blocks[-1]["text"] == blocks[-1]["text"].rstrip()


def test_compose_without_a_query_after_an_assistant_turn_converts_for_every_provider() -> None:
    mem = Memory()
    mem.append("user", "Which ferry do we take?")
    mem.append("assistant", "The 9:10 from the north pier.\n")
    res = mem.compose()
    assert res["messages"][-1]["role"] == "assistant"
    assert to_openai(res)[-1] == {"role": "assistant", "content": "The 9:10 from the north pier.\n"}
    items = to_openai_responses(res)["input"]
    assert items[-1]["role"] == "assistant"
    assert to_anthropic(res)["messages"][-1]["content"] == [
        {"type": "text", "text": "The 9:10 from the north pier."}
    ]
    assert to_gemini(res)["contents"][-1]["role"] == "model"
