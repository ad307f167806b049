"""Tiny budgets (issue 43): a compose never sends the omission note without the
conversation's words; the user's newest request goes, whole when it fits, else its end.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._turns.render import OMITTED_MARKER

LABEL = re.compile(r"\[part \d+ of \d+ of a long message\] ")
WORDS = "ferry harbour leave tonight timetable Lisbon ticket quay morning last".split()


def texts(result: dict[str, Any]) -> list[str]:
    return [p["text"] for m in result["messages"] for p in m["parts"] if p["type"] == "text"]


def build(mem: Memory, turns: list[list[int]], rounds: int) -> str:
    """Alternating turns of the given words, a user's request last, then `rounds` tool
    rounds; the request."""
    for k, words in enumerate(turns):
        mem.append("user" if k % 2 == 0 else "assistant", " ".join(WORDS[w] for w in words))
    request = "when does the last ferry leave tonight?"
    mem.append("user", request)
    for r in range(rounds):
        call = {"type": "tool_call", "id": f"c{r}", "name": "times", "arguments": "{}"}
        mem.append_message({"role": "assistant", "parts": [call]})
        result = {"type": "tool_result", "id": f"c{r}", "output": "22:40 from the quay"}
        mem.append_message({"role": "user", "parts": [result]})
    return request


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    budget=st.integers(8, 240),
    ceiling=st.sampled_from([1.0, 1.5, 2.0, 4.0]),
    turns=st.lists(st.lists(st.integers(0, len(WORDS) - 1), min_size=1, max_size=12), max_size=8),
    rounds=st.integers(0, 1),
)
def test_the_note_never_goes_without_the_newest_request(
    budget: int, ceiling: float, turns: list[list[int]], rounds: int
) -> None:
    mem = Memory(budget=budget, ceiling=ceiling)
    request = build(mem, turns, rounds)
    result = mem.compose()
    sent = texts(result)
    assert result["size"] <= ceiling * budget
    words = [t for t in sent if t != OMITTED_MARKER]
    tools = [p for m in result["messages"] for p in m["parts"] if p["type"] != "text"]
    assert words or tools  # a limit of 8 characters or more holds "tonight?"
    if not tools:
        assert sent[-1] != OMITTED_MARKER  # never the note last
    if rounds == 0:
        # The request is the last turn: it is there, whole or its end, verbatim.
        said = "".join(LABEL.sub("", t) for t in words)  # a turn sent in its pieces
        assert request in said or any(request.endswith(t) and t for t in words), sent


def test_a_budget_of_60_sends_the_request_not_the_note_alone() -> None:
    mem = Memory(budget=60, ceiling=1)
    for k in range(3):
        mem.append("user", f"question {k} about the harbour ferry times tomorrow morning")
        mem.append("assistant", f"answer {k}: the ferry leaves at nine")
    mem.append("user", "when does the last ferry leave tonight?")
    result = mem.compose()
    assert texts(result) == ["when does the last ferry leave tonight?"]
    assert result["included"] == [6] and result["partial"] == []


def test_a_request_longer_than_the_limit_keeps_its_end_verbatim() -> None:
    mem = Memory(budget=30, ceiling=1)
    mem.append("user", "hello there")
    mem.append("assistant", "hi")
    mem.append("user", "please check the timetable and tell me when the last ferry leaves")
    result = mem.compose()
    assert texts(result) == ["me when the last ferry leaves"]  # a word's start, <= 30
    assert result["partial"] == [2]
    assert json.dumps(result["messages"]).count(OMITTED_MARKER) == 0
