"""Neighbour smoothing of stretch scores (yait_byheart._retrieval), hand-computed."""

from __future__ import annotations

import pytest

from yait_byheart import Memory, Tuning
from yait_byheart._retrieval.ranking import neighbour_shares
from yait_byheart._turns.conversation import Shape


def test_neighbour_shares_by_hand() -> None:
    # weight 1, width 1: each neighbour gets half of a score; 0 gets 1/2 of 2.0, 2 gets 1/2 of
    # 2.0, 1 gets 1/2 of 4.0; stretch 3 is outside n_units=3.
    assert neighbour_shares({1: 2.0, 2: 4.0}, 3, 1.0, 1) == {0: 1.0, 2: 1.0, 1: 2.0}
    # width 2 halves the share at distance 2: 8 -> 4 at distance 1, 2 at distance 2.
    assert neighbour_shares({5: 8.0}, 10, 1.0, 2) == {4: 4.0, 6: 4.0, 3: 2.0, 7: 2.0}
    assert neighbour_shares({5: 8.0}, 10, 0.0, 2) == {}


def test_stretch_is_a_third_of_chunk() -> None:
    def size(budget: int, tuning: Tuning | None = None) -> int:
        return Shape(budget, 900, tuning or Tuning(), len).stretch_size

    assert size(100_000) == 300
    assert size(8_000) == 300  # 8,000 / 20 = 400 > 300
    # A small budget holds about 20 stretches: 4,000 / 20 = 200 < 300.
    assert size(4_000) == 200
    # Without that, the budget cap still wins at small budgets: 1,000 x 0.5 / 2 = 250.
    assert size(1_000, Tuning(stretches_per_budget=0.0)) == 250


def _talk(tuning: Tuning | None = None) -> Memory:
    mem = Memory(
        budget=420, chunk=150, stability=0, tuning=tuning
    )  # 50-char stretches: a pair each
    lines = [
        ("user", "We looked at the violin shop downtown today."),
        ("assistant", "Did the luthier have a good instrument for you?"),
        ("user", "He had one, with a deep warm tone I liked."),
        ("assistant", "Great, what about the weather this week?"),
        ("user", "Rain all week, the garden loves it though."),
        ("assistant", "My tomatoes are finally ripening as well."),
        ("user", "Let us plan a picnic when it is sunny again."),
        ("assistant", "Sure, maybe at the lake next Sunday afternoon."),
        ("user", "Sounds good to me, I will bring sandwiches."),
        ("assistant", "And I will bring lemonade and some cherries."),
    ]
    for role, text in lines:
        mem.append(role, text)
    return mem


def test_a_neighbour_of_the_match_is_brought_by_its_context() -> None:
    # Stretches are the pairs (0,1) (2,3) (4,5) (6,7); (8,9) is open, and room is left for two.
    # "violin" matches only the first pair. Scored alone, the second place goes to the newest
    # pair (recency top-up); smoothed, the pair after the match borrows half its score and
    # wins the place: it continues the same talk ("He had one...").
    query = "what about the violin?"
    assert _talk(Tuning(context_weight=0.0)).compose(query)["included"] == [0, 1, 6, 7, 8, 9]
    assert _talk().compose(query)["included"] == [0, 1, 2, 3, 8, 9]


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_best_stretch_goes_alone_when_only_borrowed_score_fits(weight: float) -> None:
    mem = Memory(budget=300, stability=0, tuning=Tuning(context_weight=weight))
    mem.append("user", "apples " * 40)
    mem.append("assistant", "ok")
    mem.append("user", "bananas " * 40)
    mem.append("assistant", "ok")
    mem.append("user", "next")
    assert 0 in mem.compose("apples " * 10)["included"]


def test_the_renderings_cache_stays_bounded_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from yait_byheart._compose import context

    def composes() -> tuple[list[object], int]:
        mem = Memory(budget=600, chunk=150)
        out: list[object] = []
        for i in range(60):
            mem.append("user", f"Turn {i} is about topic {i % 7} and the oven {i % 3}.")
            out.append(mem.compose(f"What about topic {i % 7}?"))
            mem.append("assistant", f"Reply {i}: topic {i % 7} noted, with the deck {i % 5}.")
        return out, len(mem._conv.renderings)

    unbounded, grown = composes()
    assert grown > 4
    monkeypatch.setattr(context, "RENDERINGS_KEPT", 4)
    bounded, kept = composes()
    assert bounded == unbounded
    assert kept <= 4
