"""Invariants of Memory under arbitrary conversations (hypothesis)."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._turns.render import MEMORY_MARKER

WORDS = ["oven", "flour", "keys", "Porto", "euro", "55", "I", "last", "Friday", "yesterday", "·"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=25).map(" ".join) | st.sampled_from(
    [MEMORY_MARKER + "\nfake memory", "naïve café ✓"]
)
step = st.tuples(st.sampled_from(["user", "assistant", "compose", "redact"]), text)
settings_ = st.fixed_dictionaries(
    {
        "budget": st.integers(min_value=60, max_value=1_500),
        "chunk": st.integers(min_value=20, max_value=400),
        "stability": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
        "ceiling": st.sampled_from([1.0, 2.0, 4.0]),
    }
)


def texts(result: dict[str, Any]) -> list[str]:
    return [m["parts"][0]["text"] for m in result["messages"]]


def check(mem: Memory, result: dict[str, Any], query: str) -> None:
    roles = [m["role"] for m in result["messages"]]
    assert roles[0] == "user" and roles[-1] == "user"
    # The query ends the messages; if it was the last turn appended, it is not sent twice.
    last_turn = mem.to_dict()["turns"][-1] if len(mem) else {}
    echoed = last_turn.get("role") == "user" and last_turn.get("text") == query
    echoed = echoed and not last_turn.get("cuts") and not last_turn.get("redacted")
    assert texts(result)[-1].endswith(last_turn.get("shown", query) if echoed else query)
    assert result["chars"] <= result["size"] <= mem.ceiling * mem.budget  # the hard limit
    assert not any(a == b == "assistant" for a, b in pairwise(roles))
    joined = "\n".join(texts(result))
    turns = mem.to_dict()["turns"]
    for i in result["included"]:
        shown = turns[i].get("shown", turns[i]["text"])
        bounds = [0, *turns[i].get("cuts", []), len(shown)]
        pieces = [shown[a:b] for a, b in pairwise(bounds)]
        sent = [p for p in pieces if p in joined]
        if i not in result["partial"]:
            assert sent == pieces  # each piece verbatim
        else:  # some pieces verbatim, or (a limit too small for one piece) the turn's end
            ends = [t.removeprefix(f"{turns[i]['role']}: ") for t in texts(result)]
            assert sent or any(end and shown.endswith(end) for end in ends)
    if result["mode"] == "passthrough":
        assert result["included"] == [i for i, t in enumerate(turns) if not t.get("redacted")]
    assert -1 <= result["stable_upto"] < len(result["messages"])
    assert len(result["breakpoints"]) <= 4
    assert result["breakpoints"] == sorted(result["breakpoints"])
    if result["stable_upto"] >= 0:
        assert result["breakpoints"][-1] == result["stable_upto"]
    assert result["chars"] == sum(len(t) for t in texts(result))


def run(mem: Memory, steps: list[tuple[str, str]]) -> None:
    previous: dict[str, Any] | None = None
    for action, words in steps:
        if action == "compose":
            if len(words) > mem.ceiling * mem.budget:
                with pytest.raises(ValueError, match="hard limit"):
                    mem.compose(words)
                continue
            result = mem.compose(words)
            check(mem, result, words)
            if previous is not None and not result["reselected"] and previous["stable_upto"] >= 0:
                k = previous["stable_upto"]
                assert result["messages"][: k + 1] == previous["messages"][: k + 1]
            previous = result
        elif action == "redact":
            if len(mem):
                mem.redact(len(words) % len(mem))
                previous = None
        else:
            mem.append(action, words, when="25 May 2023")
            # An assistant turn after an assistant turn joins the last message: not a repeat.
            if action == "assistant":
                previous = None


def test_a_query_sent_before_as_the_tail_still_ends_the_messages() -> None:
    """The last turn went out as the tail of a compose asked something else; composing with
    it as the query (echoed, so not sent twice) must still end with it, though a stretch
    joins the kept context (found by the property tests below)."""
    mem = Memory(budget=60, chunk=20, stability=0.3, ceiling=2.0)
    run(mem, [("user", "oven oven oven"), ("user", "oven oven"),
              ("compose", "[from earlier in the conversation]\nfake memory"),
              ("compose", "oven oven")])  # fmt: skip
    assert texts(mem.compose("oven oven"))[-1].endswith("oven oven")


@settings(max_examples=150, deadline=None)
@given(settings_, st.lists(step, max_size=60))
def test_compose_is_always_sendable_verbatim_and_sticky(
    config: dict[str, Any], steps: list[tuple[str, str]]
) -> None:
    run(Memory(**config), steps)


@settings(max_examples=80, deadline=None)
@given(settings_, st.lists(step, max_size=40), st.lists(step, max_size=15))
def test_json_round_trip_composes_identically(
    config: dict[str, Any], before: list[tuple[str, str]], after: list[tuple[str, str]]
) -> None:
    mem = Memory(**config)
    run(mem, before)
    copy = Memory.from_dict(json.loads(json.dumps(mem.to_dict())))
    assert copy.to_dict() == mem.to_dict()
    for action, words in after:
        if action == "compose" and len(words) <= mem.ceiling * mem.budget:
            assert copy.compose(words) == mem.compose(words)
        elif action == "redact":
            if len(mem):
                mem.redact(len(words) % len(mem))
                copy.redact(len(words) % len(copy))
        elif action != "compose":
            mem.append(action, words)
            copy.append(action, words)
    assert copy.to_dict() == mem.to_dict()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), text), max_size=30))
def test_below_the_budget_everything_is_sent(turns: list[tuple[str, str]]) -> None:
    mem = Memory(budget=100_000)
    for role, words in turns:
        mem.append(role, words)
    result = mem.compose("q")
    assert result["mode"] == "passthrough"
    assert result["included"] == list(range(len(turns)))


def test_a_limit_too_small_for_a_whole_word_sends_the_turns_end_verbatim() -> None:
    """Found by the property test above: no user request, a limit with room for only part of
    the newest turn; its end goes, verbatim, and the turn is reported partial."""
    mem = Memory(budget=60, chunk=20, stability=0.0, ceiling=1.0)
    query = MEMORY_MARKER + "\nfake memory"
    run(mem, [("assistant", "oven"), ("compose", query)])
    result = mem.compose(query)
    assert texts(result) == ["assistant: ven", query]
    assert result["included"] == result["partial"] == [0]
