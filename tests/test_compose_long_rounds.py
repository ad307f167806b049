"""Past tool rounds with long results stay native when they fit (issue 43).

A tool turn longer than half the budget is stored in pieces (so every stretch fits twice in
the budget), but a past round the compose sends as the conversation's own entries travels as
the provider's call and result parts, whole, whatever the size of its results. Text is for
selected memory (a stretch chosen for the question) and for what the size limit trimmed.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._turns.render import MEMORY_MARKER, OMITTED_MARKER

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_store
from test_store import Backend

backend = test_store.backend  # the fixture, under the name the tests ask for

WORDS = "ledger shard replica latency region quota cache eviction batch retry cursor".split()


def output(rng: random.Random, size: int) -> str:
    words: list[str] = []
    while sum(map(len, words)) + len(words) < size:
        words.append(rng.choice(WORDS) + ("." if rng.random() < 0.1 else ""))
    return " ".join(words)


def loop(mem: Memory, sizes: list[int], seed: int) -> list[dict[str, Any]]:
    """A scripted agent: requests, each with rounds of the given result sizes, then an
    answer; every compose's result, in order."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for k, size in enumerate(sizes):
        if k % 3 == 0:
            if k:
                mem.append("assistant", f"answer {k}: done.")
            mem.append("user", f"request {k}: the {rng.choice(WORDS)} figures, please")
        out.append(mem.compose())
        call = {"type": "tool_call", "id": f"c{k}", "name": "lookup",
                "arguments": json.dumps({"k": k})}  # fmt: skip
        mem.append_message({"role": "assistant", "parts": [call]})
        result = {"type": "tool_result", "id": f"c{k}", "output": output(rng, size)}
        mem.append_message({"role": "user", "parts": [result]})
    out.append(mem.compose())
    return out


def check_rounds(result: dict[str, Any]) -> None:
    """Tool activity as text only in memory or after a trim; each native call answered by the
    next message, natively."""
    messages = result["messages"]
    trimmed = any(
        p["type"] == "text" and p["text"].startswith(OMITTED_MARKER)
        for m in messages for p in m["parts"]
    )  # fmt: skip
    for k, message in enumerate(messages):
        for part in message["parts"]:
            if part["type"] == "text" and "[tool call " in part["text"] and not trimmed:
                assert part["text"].startswith(MEMORY_MARKER), part["text"][:200]
            if part["type"] == "tool_call":
                answer = messages[k + 1]["parts"]
                assert {"type": "tool_result", "id": part["id"]}.items() <= answer[0].items()


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    sizes=st.lists(st.integers(2_000, 20_000), min_size=3, max_size=12),
    budget=st.sampled_from([24_000, 40_000]),
    seed=st.integers(0, 9),
)
def test_rounds_that_fit_are_sent_native(sizes: list[int], budget: int, seed: int) -> None:
    mem = Memory(budget=budget)
    results = loop(mem, sizes, seed)
    for result in results:
        check_rounds(result)
    # Every past round fits the budget, so all sent as entries are native: the last
    # compose sends every round of the open request, and each earlier compose its own.
    last = results[-1]["messages"]
    calls = [p["id"] for m in last for p in m["parts"] if p["type"] == "tool_call"]
    first_open = (len(sizes) - 1) // 3 * 3
    assert calls[-(len(sizes) - first_open) :] == [f"c{k}" for k in range(first_open, len(sizes))]


def test_a_round_over_half_the_budget_is_native_in_passthrough() -> None:
    """A result of 12,000 characters at a budget of 20,000: stored in pieces, sent whole."""
    mem = Memory(budget=20_000)
    loop(mem, [12_000], 1)
    mem.append("assistant", "answer: done.")
    result = mem.compose("and the quota?")
    assert result["mode"] == "passthrough"
    types = [p["type"] for m in result["messages"] for p in m["parts"]]
    assert types.count("tool_call") == 1 and types.count("tool_result") == 1
    assert not any("[part " in p.get("text", "") for m in result["messages"] for p in m["parts"])


def test_a_new_store_object_per_request_sends_the_same_native_rounds(backend: Backend) -> None:
    """The deployment shape: each model call opens the conversation afresh; the kept context
    read back sends the rounds exactly as the process that chose it."""
    rng = random.Random(7)
    one = Memory(budget=24_000)
    for k, size in enumerate([15_000, 3_000, 18_000, 9_000]):
        call = {"type": "tool_call", "id": f"c{k}", "name": "lookup", "arguments": "{}"}
        result = {"type": "tool_result", "id": f"c{k}", "output": output(rng, size)}
        messages = [{"role": "user", "parts": [{"type": "text", "text": f"request {k}"}]},
                    {"role": "assistant", "parts": [call]}, {"role": "user", "parts": [result]},
                    {"role": "assistant", "parts": [{"type": "text", "text": "done"}]}]  # fmt: skip
        with backend.store() as store:
            mem = store.open("agent", budget=24_000)
            for message in messages:
                mem.append_message(message)
                one.append_message(message)
            got = mem.compose()
        assert got["messages"] == one.compose()["messages"]
        check_rounds(got)
