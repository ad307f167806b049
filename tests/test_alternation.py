"""Merging runs of one role (issue 43): what an integration hands a framework that needs
alternating roles keeps every part in order, alternates, and keeps each tool call's results
in the next message."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart.integrations._common import alternated

Message = dict[str, Any]


def build(role: str, parts: list[Any]) -> Message:
    return {"role": role, "parts": list(parts)}


def parts_of(message: Message) -> list[Any]:
    return list(message["parts"])


def merged(messages: list[Message]) -> list[Message]:
    return alternated(messages, [m["role"] for m in messages], parts_of, build)


def check(before: list[Message], after: list[Message]) -> None:
    roles = [m["role"] for m in after]
    assert all(a != b for a, b in pairwise(roles))  # alternates
    assert [p for m in after for p in m["parts"]] == [p for m in before for p in m["parts"]]
    assert [r for k, r in enumerate(m["role"] for m in before)
            if k == 0 or before[k - 1]["role"] != r] == roles  # fmt: skip
    for k, message in enumerate(after):  # every call answered by the next message
        calls = {p["id"] for p in message["parts"] if p["type"] == "tool_call"}
        if calls:
            nxt = after[k + 1]["parts"]
            results = [p["id"] for p in nxt if p["type"] == "tool_result"]
            assert calls <= set(results)
            lead = [p["type"] for p in nxt[: len(results)]]
            assert lead == ["tool_result"] * len(results)  # results first, as providers want


part = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(min_size=1, max_size=5)),
    st.builds(lambda i: {"type": "image", "ref": i}, st.integers(0, 9)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]),
                          st.lists(part, min_size=1, max_size=3)), max_size=12))  # fmt: skip
def test_runs_merge_in_order_and_lone_messages_stay_themselves(
    shape: list[tuple[str, list[Message]]],
) -> None:
    messages = [build(role, parts) for role, parts in shape]
    after = merged(messages)
    check(messages, after)
    lone = [m for k, m in enumerate(messages)
            if (k == 0 or messages[k - 1]["role"] != m["role"])
            and (k + 1 == len(messages) or messages[k + 1]["role"] != m["role"])]  # fmt: skip
    assert all(any(m is a for a in after) for m in lone)  # the framework's own object


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    plan=st.lists(st.sampled_from(["say", "reply", "round", "long", "compose"]), max_size=40),
    budget=st.integers(200, 3_000),
)
def test_compose_results_merged_alternate_with_tool_pairs_intact(
    plan: list[str], budget: int
) -> None:
    mem = Memory(budget=budget, chunk=300)
    mem.append("user", "hello, about the ferry timetable")
    calls = 0
    for step in plan:
        if step == "say":
            mem.append("user", "and what about the harbour ticket office and its hours?")
        elif step == "reply":
            mem.append("assistant", "the office opens at nine, the ferry leaves at ten.")
        elif step == "long":
            mem.append("user", "the timetable reads: " + "ferry at ten, harbour at nine. " * 40)
        elif step == "round":
            calls += 1
            call = {"type": "tool_call", "id": f"c{calls}", "name": "times",
                    "arguments": json.dumps({"n": calls})}  # fmt: skip
            mem.append_message({"role": "assistant", "parts": [call]})
            out = {"type": "tool_result", "id": f"c{calls}", "output": "ten. " * (calls * 50)}
            mem.append_message({"role": "user", "parts": [out]})
        else:
            messages = mem.compose()["messages"]
            check(messages, merged(messages))
    messages = mem.compose("when does the ferry leave?")["messages"]
    check(messages, merged(messages))
