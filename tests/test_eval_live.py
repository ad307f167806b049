"""Prompt-cache accounting of the live replay, on compose results written by hand."""

from typing import Any

import pytest

from eval.locomo.live import Ledger


def call(
    texts: list[str], upto: int, reselected: bool, roles: list[str] | None = None
) -> dict[str, Any]:
    roles = roles or ["user"] * len(texts)
    return {
        "messages": [
            {"role": r, "parts": [{"type": "text", "text": t}]}
            for r, t in zip(roles, texts, strict=True)
        ],
        "stable_upto": upto,
        "reselected": reselected,
        "mode": "assembled",
    }


def test_billing_hits_and_rebuilds_by_hand() -> None:
    ledger = Ledger()
    # 1: no previous call -> miss; prefix "aaaa"+"bb" = 6 written, 2 after: 1.25*6 + 2 = 9.5
    assert ledger.add(call(["aaaa", "bb", "cc"], 1, True)) is False
    # 2: prefix extends 1 by "ddd": 1.25*3 + 0.10*6 + 1*1 = 5.35
    assert ledger.add(call(["aaaa", "bb", "ddd", "e"], 2, False)) is True
    # 3: same prefix: 0.10*9 + 1*2 = 2.9
    assert ledger.add(call(["aaaa", "bb", "ddd", "ff"], 2, False)) is True
    # 4: rebuilt, new prefix: 1.25*3 + 1 = 4.75
    assert ledger.add(call(["xyz", "g"], 0, True)) is False
    # 5: no prefix at all (stable_upto -1), not a rebuild: 5 chars at 1x, a miss off a rebuild
    assert ledger.add(call(["xyz", "q2"], -1, False)) is False
    s = ledger.summary()
    assert (s["calls"], s["hits"], s["rebuilds"], s["misses_off_rebuild"]) == (5, 2, 2, 1)
    assert s["hit_rate"] == pytest.approx(0.4)
    # billed 9.5 + 5.35 + 2.9 + 4.75 + 5 = 27.5 over 8 + 10 + 11 + 4 + 5 = 38 chars
    assert s["billed_ratio"] == pytest.approx(27.5 / 38)
    assert s["billed_per_call"] == pytest.approx(27.5 / 5)
    assert s["mean_chars"] == pytest.approx(7.6)
    assert s["max_chars"] == 11


def test_an_empty_previous_prefix_is_not_a_hit() -> None:
    ledger = Ledger()
    ledger.add(call(["q"], -1, False))
    # the previous prefix was empty: nothing could be read from a cache
    assert ledger.add(call(["aa", "q"], 0, False)) is False
    assert ledger.billed == pytest.approx(1 + 1.25 * 2 + 1)
    assert ledger.summary()["misses_off_rebuild"] == 0


def test_same_text_other_role_breaks_the_prefix() -> None:
    ledger = Ledger()
    ledger.add(call(["aa", "q"], 0, True, ["user", "user"]))
    assert ledger.add(call(["aa", "q"], 0, False, ["assistant", "user"])) is False
    assert ledger.summary()["misses_off_rebuild"] == 1


def test_a_prefix_that_shrinks_is_a_miss() -> None:
    ledger = Ledger()
    ledger.add(call(["aa", "bb", "q"], 1, True))
    assert ledger.add(call(["aa", "q"], 0, False)) is False


def test_reset_forgets_the_previous_conversation() -> None:
    ledger = Ledger()
    ledger.add(call(["aa", "q"], 0, True))
    ledger.reset()
    assert ledger.add(call(["aa", "q"], 0, True)) is False
    assert ledger.summary()["misses_off_rebuild"] == 0


def test_locomo_tuning_reaches_the_live_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python -m eval locomo --tuning ...` changes the live replay too (it was dropped)."""
    from eval.locomo import live, runner
    from eval.locomo.data import Conversation
    from yait_byheart import Tuning

    seen: list[Any] = []

    def spy(conv: Conversation, budget: int, regime: str, **kwargs: Any) -> Any:
        seen.append(kwargs.get("tuning"))
        return Ledger(), Ledger()

    tuning = Tuning(strong_join=0.5)
    monkeypatch.setattr(live, "replay", spy)
    monkeypatch.setitem(runner._STATE, "convs", [object()])
    monkeypatch.setitem(runner._STATE, "tuning", tuning)
    runner._do(("live", 0, 4000, "sticky"))
    assert seen == [tuning]
