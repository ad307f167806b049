"""The adapters' ``alternate=True`` (issue 43): no two messages of one role in a row, every
block in order, each cache marker on the block it was placed on, tool results first in the
message after their call."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart.providers import JOIN, to_anthropic, to_openai


def composes(plan: list[str], budget: int) -> list[dict[str, Any]]:
    """Compose results of a conversation with memory, long turns and tool rounds."""
    mem = Memory(budget=budget, chunk=300)
    mem.append("user", "hello, about the ferry timetable")
    out: list[dict[str, Any]] = []
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
            output = {"type": "tool_result", "id": f"c{calls}", "output": "ten. " * calls * 50}
            mem.append_message({"role": "user", "parts": [output]})
        else:
            out.append(mem.compose())
    out.append(mem.compose("when does the ferry leave?"))
    return out


def check_anthropic(result: dict[str, Any]) -> None:
    plain = to_anthropic(result)["messages"]
    merged = to_anthropic(result, alternate=True)["messages"]
    roles = [m["role"] for m in merged]
    assert all(a != b for a, b in pairwise(roles))
    # Every block, marker and all, in order: the cached prefix is the same bytes.
    assert [b for m in merged for b in m["content"]] == [b for m in plain for b in m["content"]]
    for k, message in enumerate(merged):
        uses = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if uses:
            nxt = merged[k + 1]["content"]
            assert [b.get("tool_use_id") for b in nxt[: len(uses)]] == uses


plans = st.lists(st.sampled_from(["say", "reply", "round", "long", "compose"]), max_size=40)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(plan=plans, budget=st.integers(200, 3_000))
def test_anthropic_alternates_with_blocks_and_markers_in_place(
    plan: list[str], budget: int
) -> None:
    for result in composes(plan, budget):
        check_anthropic(result)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(plan=plans, budget=st.integers(200, 3_000), cache=st.booleans())
def test_openai_merges_user_runs_only(plan: list[str], budget: int, cache: bool) -> None:
    for result in composes(plan, budget):
        plain = to_openai(result, cache=cache)
        merged = to_openai(result, cache=cache, alternate=True)
        roles = [m["role"] for m in merged]
        assert all(not (a == b == "user") for a, b in pairwise(roles))
        if cache:  # parts lists: every part, marker and all, in order

            def parts(ms: list[dict[str, Any]]) -> list[Any]:
                return [p for m in ms if m["role"] == "user" for p in m["content"]]

            assert parts(merged) == parts(plain)
        else:
            assert JOIN.join(m["content"] for m in merged if m["role"] == "user") == JOIN.join(
                m["content"] for m in plain if m["role"] == "user"
            )


def test_a_run_with_a_marker_keeps_it_on_its_block() -> None:
    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "parts": [{"type": "text", "text": text}]}

    result = {"messages": [user("memory"), user("more memory"), user("the question")],
              "stable_upto": 1, "breakpoints": [1]}  # fmt: skip
    (message,) = to_anthropic(result, alternate=True)["messages"]
    assert [b["text"] for b in message["content"]] == ["memory", "more memory", "the question"]
    assert ["cache_control" in b for b in message["content"]] == [False, True, False]
    assert to_openai(result, alternate=True) == [
        {"role": "user", "content": JOIN.join(["memory", "more memory", "the question"])}
    ]


def test_alternate_must_be_a_bool() -> None:
    result = {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
              "stable_upto": -1}  # fmt: skip
    with pytest.raises(TypeError, match=r"to_anthropic\(result\): alternate must be True or"):
        to_anthropic(result, alternate="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"to_openai\(result\): alternate must be True or"):
        to_openai(result, alternate=1)  # type: ignore[arg-type]
