"""Holding back long replies (`Tuning.hold_long_replies`, issue 44, docs/prompt-cache.md).

While a long reply is the newest exchange it is sent after the cached prefix, uncached; once
older, the kept context carries it by its pieces, which join as stretches do. Off by default.
"""

from __future__ import annotations

from typing import Any

from tests._stores import Stores, stores_fixture  # noqa: F401 (the fixture)
from tests.test_compose_cache_policy import LONG, SHORT, replay, replay_per_request
from yait_byheart import Memory, Tuning

HOLD = Tuning(hold_long_replies=True)


def _text(message: dict[str, Any]) -> str:
    return "".join(p.get("text", "") for p in message["parts"])


def test_the_newest_long_reply_is_sent_after_the_cached_prefix() -> None:
    results = replay(Memory(budget=2_000, tuning=HOLD), LONG)
    replies = [text for role, text in LONG if role == "assistant"]
    held = 0
    for k, r in enumerate(results[1:]):
        if r["mode"] != "assembled" or r["stable_upto"] < 0:
            continue
        messages = r["messages"]
        tail = [m for j, m in enumerate(messages) if j > r["stable_upto"]]
        newest = replies[k][:200]  # the reply before this call's query
        assert any(newest in _text(m) for m in messages), "the newest reply is not sent"
        if any(newest in _text(m) for m in tail):
            held += 1
            cached = messages[: r["stable_upto"] + 1]
            assert not any(newest in _text(m) for m in cached)
    assert held > len(results) // 2
    # Off (the default), the newest reply is written into the cached prefix.
    before = replay(Memory(budget=2_000), LONG)
    r = before[-1]
    cached = r["messages"][: r["stable_upto"] + 1]
    assert any(replies[-2][:200] in _text(m) for m in cached)


def test_a_kept_context_grows_by_less_than_the_long_replies() -> None:
    """The point of the switch: the cached prefix is not rewritten with every long reply, so
    kept calls write less (the prefix grows by the requests and the pieces that join)."""
    hold = replay(Memory(budget=2_000, tuning=HOLD), LONG)
    today = replay(Memory(budget=2_000), LONG)

    def written(results: list[dict[str, Any]]) -> int:
        total, previous = 0, 0
        for r in results:
            if r["stable_upto"] < 0:
                previous = 0
                continue
            size = sum(len(_text(m)) for m in r["messages"][: r["stable_upto"] + 1])
            total += size if r["reselected"] else max(size - previous, 0)
            previous = size
        return total

    assert written(hold) < written(today)


def test_with_the_fresh_floor_a_kept_call_holds_what_a_fresh_selection_sends() -> None:
    """Rule 5 is the guard the hold-back needs: a kept context that leaves long replies out
    still sends every stretch of the fresh selection. (A rebuild selects around the held
    exchange, so it may pick other stretches than a fresh selection that can pick its pieces.)"""

    def missing(tuning: Tuning) -> int:
        held = replay(Memory(budget=2_000, tuning=tuning), LONG)
        fresh = replay(Memory(budget=2_000, stability=0), LONG)
        pairs = [(s, f) for s, f in zip(held, fresh, strict=True) if not s["reselected"]]
        assert len(pairs) > 5
        return sum(not set(f["included"]) <= set(s["included"]) for s, f in pairs)

    assert missing(Tuning(hold_long_replies=True, fresh_floor=True)) == 0
    assert missing(HOLD) > 0  # without rule 5 a kept call misses pieces a later query needs


def test_off_by_default_and_a_chat_of_short_turns_composes_as_before() -> None:
    assert replay(Memory(budget=2_000), LONG) == replay(
        Memory(budget=2_000, tuning=Tuning(hold_long_replies=False)), LONG
    )
    now = replay(Memory(budget=2_000, tuning=HOLD), SHORT)
    before = replay(Memory(budget=2_000), SHORT)
    assert any(r["mode"] == "assembled" for r in now)
    assert now == before  # no reply is long enough to be cut into pieces


def test_every_store_handle_holds_back_the_same(stores: Stores) -> None:
    """A new store handle per request composes as one long-lived Memory: the kept context,
    without the long replies it leaves out, is saved and read back item by item."""
    assert replay_per_request(stores, HOLD)  # equal to one long-lived Memory's, non-empty
