"""Date-aware matching for "when" questions (yait_byheart._retrieval), hand-computed."""

from __future__ import annotations

import math

import pytest

from yait_byheart import Memory, Tuning
from yait_byheart._retrieval.ranking import asks_when


def _bakery(tuning: Tuning | None = None) -> Memory:
    # chunk=150 -> 50-char stretches: (0, 1) and (2, 3) close; turn 4 stays open.
    mem = Memory(budget=200, chunk=150, stability=0, tuning=tuning)
    day = "8 May 2023"
    mem.append("user", "We baked bread together yesterday.", when=day)  # -> "[7 May 2023]"
    mem.append("assistant", "Lovely, it smelled great.", when=day)
    mem.append("user", "We baked bread and more bread for the market stall.", when=day)
    mem.append("assistant", "Sounds like a busy morning.", when=day)
    mem.append("user", "Anyway, how is the weather?", when=day)
    return mem


def _expected() -> tuple[float, float]:
    # Both query stems ("bake", "bread") are in both stretches: idf = ln(1 + 0.5 / 2.5).
    # Stretch 0 has 10 content stems (bake bread togeth yesterdai 7 mai 2023 love smell great),
    # stretch 1 has 9 (bake bread bread market stall sound like busi morn); mean 9.5.
    idf = math.log(1.2)

    def tf(n: int, length: int) -> float:
        return n * 2.2 / (n + 1.2 * (0.25 + 0.75 * length / 9.5))

    own0 = idf * (tf(1, 10) + tf(1, 10))  # 0.35696
    own1 = idf * (tf(1, 9) + tf(2, 9))  # 0.44080
    return own0 + own1 / 2, own1 + own0 / 2  # each borrows half its neighbour's score


def test_asks_when() -> None:
    assert asks_when("When did you move?") and asks_when("  when was it")
    assert not asks_when("Whenever you like") and not asks_when("Tell me when")


def test_a_when_question_lifts_the_dated_stretch_by_a_quarter() -> None:
    mem = _bakery()
    s0, s1 = _expected()  # 0.57736, 0.61928: by words alone the second stretch wins
    plain = list(mem._ranker.ranked("Did we bake bread?"))
    assert plain == [(1, pytest.approx(s1)), (0, pytest.approx(s0))]
    dated = list(mem._ranker.ranked("When did we bake bread?"))
    assert dated == [(0, pytest.approx(1.25 * s0)), (1, pytest.approx(s1))]  # 0.72170
    assert mem.compose("When did we bake bread?")["included"] == [0, 1, 4]
    assert mem.compose("Did we bake bread?")["included"] == [2, 3, 4]


def test_date_boost_off_leaves_the_words_to_decide() -> None:
    mem = _bakery(Tuning(date_boost=0.0))
    assert mem.compose("When did we bake bread?")["included"] == [2, 3, 4]


def test_without_resolved_dates_nothing_is_lifted() -> None:
    mem = Memory(budget=200, chunk=150, stability=0, resolve_time=False)
    for role, text in [
        ("user", "We baked bread together yesterday."),
        ("assistant", "Lovely, it smelled great."),
        ("user", "We baked bread and more bread for the market stall."),
        ("assistant", "Sounds like a busy morning."),
        ("user", "Anyway, how is the weather?"),
    ]:
        mem.append(role, text, when="8 May 2023")
    assert [u for u, _ in mem._ranker.ranked("When did we bake bread?")] == [1, 0]


def test_a_redacted_date_does_not_count() -> None:
    mem = _bakery()
    mem.redact(0)
    assert not mem._conv.dated(0) and not mem._conv.dated(1)
