"""eval/lexical_reach.py: which evidence shares a word with its question, worked by hand."""

from pathlib import Path

from eval.lexical_reach import ALL, MULTI_HOP, question_reach, reach, taken_by_reach
from eval.locomo.data import load

TINY = Path(__file__).parent / "data" / "tiny_locomo.json"
NAMES = frozenset({"ada", "ben"})


def test_reach_kinds() -> None:
    talk = [
        "Ada: I adopted a dog.",  # 0
        "Ben: Congratulations!",  # 1
        "Ada: A beagle called Pickle.",  # 2
        "Ben: Nice.",  # 3
        "Ada: Thanks.",  # 4
        "Ben: Bye.",  # 5
    ]
    assert reach("What dog did Ada adopt?", talk, 0, NAMES) == "own words"
    # "Pickle" shares no word with the question, but "dog" is two turns before it.
    assert reach("What dog did Ada adopt?", talk, 2, NAMES) == "context only"
    # Turn 0 is three turns before turn 3: out of reach.
    assert reach("What dog did Ada adopt?", talk, 3, NAMES) == "unreachable"
    # A speaker's name is not a shared word: "Ben" is in every one of his turns.
    assert reach("What did Ben say?", talk, 1, NAMES) == "unreachable"
    # Stems, not spellings: "adopted" reaches "adopt".
    assert reach("Who adopts?", talk, 0, NAMES) == "own words"


def test_question_reach_on_the_tiny_conversations() -> None:
    # Ada and Ben. Q1 breed (D1:3): "breed" and "dog" are only in turns 0-1, so context only.
    # Q2 marathon (D2:2): own words. Q3 chew + name (D2:3 own, D1:3 context): 0.5 / 1.0.
    # Q4 Lisbon (D1:4; D9:9 does not exist): own words. Q5 has no existing evidence and
    # Q6 is adversarial: neither counts.
    # Cleo and Dan. "What did Cleo plant on her balcony?" (D1:1, "I planted ..."): own words.
    rows = question_reach(load(TINY))
    assert rows == {
        4: [2, 0.5, 1.0],  # Q1 and Cleo's question
        2: [1, 1.0, 1.0],
        1: [1, 0.5, 1.0],
        3: [1, 1.0, 1.0],
        "all": [5, (0 + 1 + 0.5 + 1 + 1) / 5, 1.0],
    }


def test_taken_by_reach_counts_evidence_turns_sent() -> None:
    # 20,000 characters hold the whole tiny conversation: every evidence turn is sent.
    taken, recall = taken_by_reach(load(TINY), 20_000)
    assert recall == {ALL: 1.0, MULTI_HOP: 1.0}
    assert taken == {
        (ALL, "context only"): (2, 2),
        (ALL, "own words"): (4, 4),
        (MULTI_HOP, "own words"): (1, 1),
        (MULTI_HOP, "context only"): (1, 1),
    }
    # At 100 characters a stretch or two fits: some evidence is left out, none is invented.
    small, small_recall = taken_by_reach(load(TINY), 100)
    assert {k: n for k, (n, _) in small.items()} == {k: n for k, (n, _) in taken.items()}
    assert sum(got for _, got in small.values()) < 6
    assert small_recall[ALL] < 1.0
