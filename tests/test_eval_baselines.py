"""Baselines and the per-category rows, worked out by hand on tests/data/tiny_locomo.json.

Turn lengths (speaker prefix included): session 1: 42, 39, 95, 67, 45, 52 (sum 340);
session 2: 33, 65, 53, 31, 56, 45 (sum 283). Each session date header "[...]\\n" is 28 chars.
Question lengths: 24, 30, 46, 43, 34, 24.
"""

from pathlib import Path

import pytest

from eval.locomo import offline
from eval.locomo.data import Conversation, load
from eval.locomo.offline import Spec
from eval.locomo.systems import RecentHistory, SessionBM25, TurnBM25

TINY = Path(__file__).parent / "data" / "tiny_locomo.json"


@pytest.fixture(scope="module")
def conv() -> Conversation:
    return load(TINY)[0]


def test_recent_history_takes_the_newest_turns_that_fit(conv: Conversation) -> None:
    recent = RecentHistory(300)
    recent.build(conv.turns)
    out = recent.compose("What breed is Ada's dog?")
    # room 300 - 24 = 276: turn 11 + header (73), 10 (56), 9 (31), 8 (53) = 213; turn 7 (65) > 63
    assert out.included == (8, 9, 10, 11)
    assert out.chars == 24 + 213
    assert (
        out.texts[0]
        == "[3:00 pm on 20 March, 2023]\nAda: Amazing! Pickle chewed my violin case yesterday."
    )
    assert out.messages[-1] == {
        "role": "user",
        "parts": [{"type": "text", "text": "What breed is Ada's dog?"}],
    }
    assert [m["role"] for m in out.messages] == ["user", "assistant", "user", "assistant", "user"]


def test_whole_sessions_that_fit(conv: Conversation) -> None:
    sessions = SessionBM25(400)
    sessions.build(conv.turns)
    # session 1 costs 28 + 340 = 368, session 2 costs 28 + 283 = 311; never both (679 > 400).
    # "breed" and "dog" occur only in session 1, which fits beside a 24-char question.
    out = sessions.compose("What breed is Ada's dog?")
    assert out.included == tuple(range(6)) and out.chars == 24 + 368
    # a 46-char question leaves 354: session 1 cannot fit whatever its rank, session 2 can
    out = sessions.compose("What did Ada's dog chew, and what is his name?")
    assert out.included == tuple(range(6, 12)) and out.chars == 46 + 311


def test_turn_bm25_top_turns(conv: Conversation) -> None:
    turns = TurnBM25(150)
    turns.build(conv.turns)
    # "training" is only in turn 3 (which also has "marathon"): 28 + 67 = 95 of the 107 left,
    # and no other turn is as short as the remaining 12 chars.
    out = turns.compose("Which city's marathon was Ben training for?")
    assert out.included == (3,) and out.chars == 43 + 95
    # Plain RAG's classic miss: "breed" and "dog" pick turns 1 and 0 (67 + 42 of 126),
    # not the answer turn 2, which says "beagle".
    out = turns.compose("What breed is Ada's dog?")
    assert out.included == (0, 1)


def test_rows_per_category_by_hand(conv: Conversation) -> None:
    spec = Spec("recent", "fresh", 300, lambda: RecentHistory(300))
    rows = {r["category"]: r for r in offline.rows(offline.run([spec], [conv], progress=False))}
    # Every question sees turns 8-11 and the session 2 header (213 chars) plus itself.
    assert rows[4] == {
        "system": "recent",
        "regime": "fresh",
        "budget": 300,
        "category": 4,
        "questions": 2,
        "evidence_recall": 0.0,  # Q0 misses D1:3; Q4's only evidence id does not exist
        "answer_token_recall": pytest.approx(1 / 3),  # "beagle" 0; {weekly, on, fridays} 2/3
        "mean_chars": (237 + 247) / 2,
        "skipped": 1,
        "answer_skipped": 0,
    }
    assert rows[2]["answer_token_recall"] == pytest.approx(2 / 3)  # march, 2023 but not 18
    assert rows[1]["evidence_recall"] == 0.5  # D2:3 found, D1:3 not
    assert rows[1]["answer_token_recall"] == 0.75  # violin, case, pickle but not "her"
    assert rows[3]["evidence_recall"] == 0.0 and rows[3]["answer_token_recall"] == 0.0
    everything = rows["all"]
    assert everything["questions"] == 5 and everything["skipped"] == 1
    assert everything["evidence_recall"] == pytest.approx((0 + 0 + 0.5 + 0) / 4)
    assert everything["answer_token_recall"] == pytest.approx((0 + 2 / 3 + 0.75 + 0 + 2 / 3) / 5)
    assert everything["mean_chars"] == pytest.approx((237 + 243 + 259 + 256 + 247) / 5)
    # category 5 is reported apart and stays out of "all"
    assert rows[5]["questions"] == 1 and rows[5]["evidence_recall"] == 0.0
