"""The cache rules for chats whose replies run long (issue 44, docs/prompt-cache.md rules 5-6).

Rule 6: a rebuild whose cycle of kept calls would cost more per call than sending it at the
plain price is sent with no cacheable prefix and not kept. Rule 5 (`Tuning.fresh_floor`): the
fresh selection's stretches a kept context lacks are sent after it, uncached.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests._stores import Stores, stores_fixture  # noqa: F401 (the fixture)
from yait_byheart import Memory, Tuning

WORDS = (
    "harbour ferry tomato violin lesson train lisbon garden recipe budget invoice kettle "
    "mountain bicycle chess novel printer laptop vaccine passport wedding salmon yoga piano "
    "camera concert museum tennis bakery carpet"
).split()


def chat(seed: int, turns: int, reply: int) -> list[tuple[str, str]]:
    """`turns` exchanges: a short request about two words, a reply of about `reply` chars."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    for k in range(turns):
        a, b = rng.sample(WORDS, 2)
        out.append(("user", f"Question {k}: what about my {a} and the {b}?"))
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < reply:
            words.append(rng.choice(WORDS))
        out.append(("assistant", f"About the {a}: " + " ".join(words)))
    return out


def replay(mem: Memory, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A compose before each user turn (that turn as the query), then the turn appended."""
    results: list[dict[str, Any]] = []
    for role, text in turns:
        if role == "user":
            results.append(dict(mem.compose(text)))
        mem.append(role, text)
    return results


ON = Tuning(send_uncached=True)
OFF = Tuning(send_uncached=False)
LONG = chat(1, 40, reply=1_500)  # replies of 1,500 characters against a budget of 2,000
SHORT = chat(2, 120, reply=60)  # a chat of one-line turns


def test_a_rebuild_in_a_chat_of_long_replies_is_sent_uncached() -> None:
    results = replay(Memory(budget=2_000, tuning=ON), LONG)
    uncached = [r for r in results if r["mode"] == "assembled" and r["stable_upto"] == -1]
    assert uncached, "a rebuild that cannot pay for its write premium is still marked"
    for r in uncached:
        assert r["reselected"] and r["breakpoints"] == []
    # Before rule 6 every assembled compose marked a prefix to cache.
    before = replay(Memory(budget=2_000, tuning=OFF), LONG)
    assert all(r["stable_upto"] >= 0 for r in before if r["mode"] == "assembled")


def test_uncached_composes_send_what_a_fresh_selection_sends() -> None:
    """Sent uncached, a call holds the fresh selection (recall is never lost to rule 6)."""
    sticky = replay(Memory(budget=2_000, tuning=ON), LONG)
    fresh = replay(Memory(budget=2_000, stability=0), LONG)
    pairs = [(s, f) for s, f in zip(sticky, fresh, strict=True) if s["stable_upto"] == -1]
    assert pairs
    for s, f in pairs:
        if s["mode"] == "assembled":
            assert set(f["included"]) <= set(s["included"])


def test_a_chat_of_short_turns_composes_as_before() -> None:
    """Rule 6 leaves a chat whose exchanges are small against the budget as it was."""
    now = replay(Memory(budget=2_000, tuning=ON), SHORT)
    before = replay(Memory(budget=2_000, tuning=OFF), SHORT)
    assert any(r["mode"] == "assembled" for r in now)
    assert now == before


def test_rule_6_decides_the_same_in_every_store_handle(stores: Stores) -> None:
    """A new store handle per request (the deployment shape) composes as one long-lived
    Memory: what rule 6 reads is the conversation itself."""
    results = replay_per_request(stores, ON)
    assert any(r["stable_upto"] == -1 for r in results)


def replay_per_request(stores: Stores, tuning: Tuning) -> list[dict[str, Any]]:
    """LONG's first 40 turns, each request on a new store handle (as a web worker opens one);
    the composes, checked equal to one long-lived Memory's."""
    alone = replay(Memory(budget=2_000, tuning=tuning), LONG[:40])
    results: list[dict[str, Any]] = []
    for role, text in LONG[:40]:
        mem = stores.open().open("c", budget=2_000, tuning=tuning)
        if role == "user":
            results.append(dict(mem.compose(text)))
        mem.append(role, text)
    assert [r["messages"] for r in results] == [r["messages"] for r in alone]
    assert [r["stable_upto"] for r in results] == [r["stable_upto"] for r in alone]
    return results


@pytest.mark.parametrize("turns", [LONG, SHORT], ids=["long replies", "short turns"])
def test_the_fresh_floor_holds_every_stretch_a_fresh_selection_sends(
    turns: list[tuple[str, str]],
) -> None:
    floor = replay(Memory(budget=2_000, tuning=Tuning(fresh_floor=True)), turns)
    fresh = replay(Memory(budget=2_000, stability=0), turns)
    for s, f in zip(floor, fresh, strict=True):
        assert set(f["included"]) <= set(s["included"])
        assert s["size"] <= 4 * 2_000


def test_without_the_floor_a_kept_context_can_hold_less_than_a_fresh_one() -> None:
    """What rule 5 changes: the default kept context misses stretches a fresh one sends."""
    kept = replay(Memory(budget=2_000, tuning=OFF), SHORT)
    fresh = replay(Memory(budget=2_000, stability=0), SHORT)
    assert any(
        not set(f["included"]) <= set(s["included"]) for s, f in zip(kept, fresh, strict=True)
    )


def _over_limit(tuning: Tuning) -> dict[str, Any]:
    """A tool result far above the hard limit: the compose is trimmed and keeps nothing."""
    mem = Memory(budget=1_000, tuning=tuning)
    for k in range(30):
        mem.append("user", f"question {k} about the garden and the tomato plants this week")
        mem.append("assistant", f"answer {k}: water them in the morning and check the leaves")
    mem.append("user", "read my notes please")
    call = {"type": "tool_call", "id": "c1", "name": "read", "arguments": "{}"}
    mem.append_message({"role": "assistant", "parts": [call]})
    result = {"type": "tool_result", "id": "c1", "output": "notes " * 2_000}
    mem.append_message({"role": "user", "parts": [result]})
    result = dict(mem.compose())
    assert mem.stats["trimmed"] == 1
    return result


def test_a_trimmed_compose_marks_nothing() -> None:
    """No later call reads what a trimmed compose would write (it is not kept): unmarked."""
    now = _over_limit(ON)
    assert now["stable_upto"] == -1 and now["breakpoints"] == []
    before = _over_limit(OFF)
    assert before["stable_upto"] >= 0
    assert now["messages"] == before["messages"]
