"""A custom retriever's output is checked before ranking: an id the conversation does not
hold, or one that is not an int, raises naming ``Memory(retriever=...)`` (issue 37)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._retrieval.checked import checked_rank, checked_scores


class Bad:
    """A retriever that ranks `order` whatever it is asked."""

    def __init__(self, order: Any) -> None:
        self.order = order

    def fit(self, docs: list[str]) -> None:
        self.n = len(docs)

    def rank(self, query: str) -> Any:
        return self.order


def test_ranked_ids_pass_in_order_first_place_kept() -> None:
    assert checked_rank([2, 0, 2, 1], 3) == [2, 0, 1]
    assert checked_rank((i for i in [1]), 2) == [1]
    assert checked_rank([], 0) == []


@pytest.mark.parametrize(
    ("order", "error", "says"),
    [
        (
            [999, -1],
            ValueError,
            r"returned stretch id 999, but the conversation holds 3 closed stretches",
        ),
        ([-1], ValueError, r"returned stretch id -1"),
        ([1.5], TypeError, r"returned 1\.5 \(float\) as a stretch id; return int indices"),
        ([True], TypeError, r"returned True \(bool\)"),
        (["1"], TypeError, r"returned '1' \(str\)"),
        (None, TypeError, r"returned NoneType; return a list of stretch ids"),
        ("12", TypeError, r"returned str"),
    ],
)
def test_a_bad_rank_names_the_retriever_and_the_fix(order: Any, error: type, says: str) -> None:
    with pytest.raises(error, match=r"^Memory\(retriever=\.\.\.\): Bad\.rank " + says):
        checked_rank(order, 3, Bad(order))


def test_scores_by_mapping_or_sequence() -> None:
    assert checked_scores({2: 1, 0: -0.5}, 3) == {2: 1.0, 0: -0.5}
    assert checked_scores([0.25, 0.0], 3) == {0: 0.25, 1: 0.0}


@pytest.mark.parametrize(
    ("found", "error", "says"),
    [
        ({7: 1.0}, ValueError, r"stretch id 7"),
        ([1.0, 2.0, 3.0, 4.0], ValueError, r"stretch id 3, but the conversation holds 3"),
        ({1.5: 1.0}, TypeError, r"1\.5 \(float\) as a stretch id"),
        ({0: "high"}, TypeError, r"'high' \(str\) as the score of stretch 0; return a number"),
        ({0: float("nan")}, ValueError, r"nan as the score of stretch 0; return a finite"),
        (3.0, TypeError, r"returned float; return a mapping"),
    ],
)
def test_bad_scores_name_the_retriever(found: Any, error: type, says: str) -> None:
    with pytest.raises(error, match=r"^Memory\(retriever=\.\.\.\)(: Bad\.scores)? .*" + says):
        checked_scores(found, 3, Bad(found))


@given(st.lists(st.integers(min_value=0, max_value=19)), st.integers(min_value=20, max_value=40))
def test_any_valid_rank_is_kept_as_given_without_repeats(order: list[int], n: int) -> None:
    assert checked_rank(order, n) == list(dict.fromkeys(order))


def _memory(order: Any) -> Memory:
    mem = Memory(budget=200, chunk=60, retriever=Bad(order))
    for i in range(12):
        mem.append("user", f"turn {i} about the ferry and the oven, number {i}")
    return mem


@pytest.mark.parametrize(("order", "error"), [([999, -1], ValueError), ([1.5], TypeError)])
def test_memory_with_a_bad_retriever_raises_naming_it(order: Any, error: type) -> None:
    compose: Callable[[], object] = lambda: _memory(order).compose("the ferry")  # noqa: E731
    with pytest.raises(error, match=r"Memory\(retriever=\.\.\.\)"):
        compose()
