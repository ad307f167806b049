"""Metric code of the LoCoMo harness, against values worked out by hand."""

import math

import pytest

from eval.locomo.metrics import (
    answer_token_recall,
    bleu1,
    evidence_recall,
    mean,
    normalise,
    token_f1,
)


def test_normalise_drops_case_punctuation_and_articles() -> None:
    assert normalise("The Beagle, a DOG; an 'old' one!") == ["beagle", "dog", "old", "one"]
    # Punctuation is deleted, not split on: "7-May" is one token, as in the SQuAD convention.
    assert normalise("7-May  2023") == ["7may", "2023"]
    # Curly apostrophes are punctuation too (LoCoMo texts use them).
    assert normalise("Mel\u2019s") == ["mels"]
    # Articles only as whole words: "another", "theme" keep their letters.
    assert normalise("another theme") == ["another", "theme"]


def test_evidence_recall_counts_distinct_evidence_found() -> None:
    assert evidence_recall([2, 8], [0, 8, 9]) == 0.5
    assert evidence_recall([2, 2, 8], [2, 8]) == 1.0
    assert evidence_recall([5], []) == 0.0
    assert evidence_recall([], [1, 2]) is None


def test_answer_token_recall_over_all_texts() -> None:
    # gold tokens {her, violin, case, pickle}; "violin", "case" in one text, "pickle" in another
    texts = ["Ada: Pickle chewed my violin case.", "Ben: Bring Pickle along"]
    assert answer_token_recall("her violin case; Pickle", texts) == 0.75
    # distinct tokens: "new york new york" is {new, york}
    assert answer_token_recall("New York, New York", ["in new jersey"]) == 0.5
    assert answer_token_recall("The", ["anything"]) is None
    assert answer_token_recall("18 March 2023", ["[3:00 pm on 20 March, 2023]"]) == pytest.approx(
        2 / 3
    )


def test_token_f1_by_hand() -> None:
    # pred [violin], gold [her, violin, case, pickle]: P = 1, R = 1/4, F1 = 2*1*0.25/1.25 = 0.4
    assert token_f1("a violin", "her violin case; Pickle") == pytest.approx(0.4)
    # pred [dog, dog], gold [dog]: overlap clipped to 1, P = 1/2, R = 1, F1 = 2/3
    assert token_f1("dog dog", "the dog") == pytest.approx(2 / 3)
    assert token_f1("cat", "dog") == 0.0
    assert token_f1("", "") == 1.0
    assert token_f1("", "dog") == 0.0


def test_bleu1_by_hand() -> None:
    # c = 1, r = 3, precision 1, BP = exp(1 - 3) = 0.135335
    assert bleu1("Fridays", "weekly, on Fridays") == pytest.approx(math.exp(-2))
    # c = 4 > r = 2: no brevity penalty; clipped matches: dog 1 (of 3), cat 1 -> 2/4
    assert bleu1("dog dog dog cat", "dog cat") == pytest.approx(0.5)
    # c == r: BP = exp(0) = 1
    assert bleu1("beagle", "a beagle") == 1.0
    assert bleu1("", "dog") == 0.0


def test_mean_of_nothing_is_none_not_zero() -> None:
    assert mean([]) is None
    assert mean([0.5, 1.0]) == 0.75
