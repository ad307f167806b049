"""A mid-turn compose ends with the newest tool call and its result, native, whatever their
size: a round over the hard limit (ceiling x budget) keeps the call and result as the provider
expects them, the long outputs elided verbatim (head and tail kept), within the limit.

Random agent transcripts: budgets 1,500 to 6,000, tool results up to 8,000 characters, single
and parallel calls, ceilings from 1 to the default 4, characters or a token-like measure.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests._profiles import heavy
from tests._sizes import sent_size, tokenish
from yait_byheart import Memory

WORDS = "ledger invoice shard garden ferry tomato latency backup queue museum oven rent".split()
LEFT_OUT = re.compile(
    r"\n\[\.\.\. (\d+) characters left out to stay within the size limit \.\.\.\]\n"
)


def text(seed: int, length: int) -> str:
    words = [WORDS[(seed * 7 + k * k) % len(WORDS)] + str(k % 13) for k in range(length // 6 + 1)]
    return " ".join(words)[:length] or "ok"


ROUND = st.tuples(
    st.integers(1, 3),  # parallel calls
    st.lists(st.integers(10, 8_000), min_size=3, max_size=3),  # result lengths
    st.booleans(),  # the assistant says something with its calls
)
STEP = st.one_of(
    st.tuples(st.just("talk"), st.integers(10, 900)), st.tuples(st.just("tool"), ROUND)
)


def check_sendable(messages: list[dict[str, Any]]) -> None:
    """User first, no two assistant messages in a row, every result answering a call of the
    message just before, every call answered in the message just after."""
    assert messages and messages[0]["role"] == "user"
    for k, message in enumerate(messages):
        ids = {p["type"]: set() for p in message["parts"]}
        for part in message["parts"]:
            if part["type"] != "text":
                ids[part["type"]].add(part["id"])
        if message["role"] == "assistant":
            assert k == 0 or messages[k - 1]["role"] == "user"
        calls = ids.get("tool_call", set())
        if calls:
            after = messages[k + 1] if k + 1 < len(messages) else {"parts": []}
            answered = {p["id"] for p in after["parts"] if p["type"] == "tool_result"}
            assert calls <= answered, "a call with no result after it"
        results = ids.get("tool_result", set())
        if results:
            before = messages[k - 1]["parts"] if k else []
            assert results <= {p["id"] for p in before if p["type"] == "tool_call"}, "orphan"


def check_elisions(result: dict[str, Any], outputs: dict[str, str]) -> int:
    """Each result sent is its output, or its head and tail around a marker that counts the
    characters left out; the number elided."""
    n = 0
    for message in result["messages"]:
        for part in message["parts"]:
            if part["type"] != "tool_result" or part["output"] == outputs[part["id"]]:
                continue
            head, gone, tail = LEFT_OUT.split(part["output"])
            full = outputs[part["id"]]
            assert full.startswith(head) and full.endswith(tail)
            assert len(head) + int(gone) + len(tail) == len(full)
            n += 1
    return n


@settings(max_examples=heavy(0.6), deadline=None, derandomize=True)
@given(
    steps=st.lists(STEP, min_size=1, max_size=10),
    budget=st.integers(1_500, 6_000),
    ceiling=st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    tokens=st.booleans(),
)
def test_every_mid_turn_compose_ends_with_the_newest_round_native_within_the_limit(
    steps: list[tuple[str, Any]], budget: int, ceiling: float, tokens: bool
) -> None:
    measure = tokenish if tokens else len
    mem = Memory(budget=budget, ceiling=ceiling, measure=measure)
    outputs: dict[str, str] = {}
    for s, (kind, arg) in enumerate(steps):
        mem.append("user", text(s, 40) + "?")
        if kind == "talk":
            mem.append("assistant", text(s + 1, arg))
            continue
        calls, lengths, says = arg
        ids = [f"c{s}_{k}" for k in range(calls)]
        parts: list[dict[str, Any]] = [{"type": "text", "text": text(s, 60)}] if says else []
        parts += [{"type": "tool_call", "id": i, "name": "read", "arguments": json.dumps({"n": s})}
                  for i in ids]  # fmt: skip
        mem.append_message({"role": "assistant", "parts": parts})
        for i, length in zip(ids, lengths, strict=False):
            outputs[i] = text(len(outputs), length)
        mem.append_message({"role": "user", "parts": [
            {"type": "tool_result", "id": i, "output": outputs[i]} for i in ids]})  # fmt: skip
        result = mem.compose()
        messages = result["messages"]
        check_sendable(messages)
        assert result["size"] <= ceiling * budget
        assert sent_size(result, measure) <= result["size"]
        call, answer = messages[-2:]
        assert call["role"] == "assistant" and answer["role"] == "user"
        assert [p["id"] for p in call["parts"] if p["type"] == "tool_call"] == ids
        assert [p["id"] for p in answer["parts"]] == ids
        newest = len(mem) - 1
        if check_elisions(result, outputs):
            assert newest in result["included"] and newest in result["partial"]
