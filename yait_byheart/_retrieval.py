"""How stretches are scored: BM25 of each stretch, smoothed over its neighbours.

A stretch is short (a third of `chunk`), so that a small budget spends its room on the few
turns that matter; but a short stretch alone holds too few words to be scored well. So a
stretch's score is its own BM25 score plus a share of its neighbours' scores: the talk
around a turn is evidence for it, as a passage's surrounding text is in passage retrieval
(J. P. Callan, "Passage-level evidence in document retrieval", SIGIR 1994, which scores
overlapping windows; here the window is a kernel over neighbouring stretch scores, which
costs nothing at append time).

Measured on the LoCoMo dev file, fresh regime, evidence recall at 4,000 / 8,000 / 20,000
characters (see docs/benchmarks.md, "Retrieval ablations"): 900-character stretches scored
alone 0.702 / 0.804 / 0.877; 300-character stretches alone 0.718 / 0.788 / 0.856; 300
with their neighbours at weight 1/2 each 0.760 / 0.840 / 0.902.

Date-aware matching: a "when" question is answered by a date, and `resolve_time` writes the
date beside the words ("last Saturday [20 May 2023]"). The question's words find the event;
among the best stretches, those that carry a resolved date score 1.25 times more, a question-
type prior in the spirit of answer-type matching in question answering (E. M. Voorhees,
"The TREC-8 Question Answering Track Report", 1999: systems classify "when" questions as
expecting a date and prefer passages holding one). Temporal questions, fresh, 4,000 / 8,000:
0.803 / 0.882 -> 0.817 / 0.898; all categories 0.751 / 0.836 -> 0.754 / 0.839.

The settings are private and switchable (`using`) only so that the ablation runner,
`eval/ablate_retrieval.py`, can rerun every row of that table from one command.

>>> neighbour_shares({2: 4.0}, 5, 1.0, 1)
{1: 2.0, 3: 2.0}
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Settings:
    """Retrieval switches. The defaults are the measured best; the ablation runner varies them."""

    # A stretch closes at this share of `chunk` (900 -> 300 characters), and at the latest
    # at budget / stretches_per_budget, so a small budget still holds about 20 stretches:
    # a few well-chosen turns beat a few long stretches. Only budgets under 6,000 characters
    # change (200-character stretches at 4,000). LoCoMo dev, 4,000 characters, with adjacent
    # stretches joined: fresh 0.765 -> 0.787, sticky 0.764 -> 0.777 (with STRONG_JOIN 0.75).
    stretch_share: float = 1 / 3
    stretches_per_budget: float = 20.0
    # Each neighbour within `context_width` receives context_weight / 2 of a stretch's score
    # (halved again per further step), so the total spread is at most context_weight.
    context_weight: float = 1.0
    context_width: int = 1
    # "when" questions: stretches carrying a resolved date score (1 + date_boost) times more.
    date_boost: float = 0.25


SETTINGS = Settings()


_WHEN = re.compile(r"\s*when\b", re.IGNORECASE)


def asks_when(query: str) -> bool:
    """Whether `query` is a "when" question (its first word is "when").

    >>> asks_when("When did we go camping?"), asks_when("Whenever you like"), asks_when("Why?")
    (True, False, False)
    """
    return _WHEN.match(query) is not None


@contextmanager
def using(**changes: Any) -> Iterator[Settings]:
    """Run a block with some settings changed (for ablations), then restore them."""
    global SETTINGS
    before = SETTINGS
    SETTINGS = replace(before, **changes)
    try:
        yield SETTINGS
    finally:
        SETTINGS = before


def neighbour_shares(
    scores: dict[int, float], n_units: int, weight: float, width: int
) -> dict[int, float]:
    """What each stretch receives from its scored neighbours: `weight`/2 of each neighbour's
    score at distance 1, halved per further step. Ids outside 0 to `n_units` - 1 get nothing.

    >>> neighbour_shares({1: 2.0, 2: 4.0}, 3, 1.0, 1)
    {0: 1.0, 2: 1.0, 1: 2.0}
    >>> neighbour_shares({0: 8.0}, 4, 1.0, 2)
    {1: 4.0, 2: 2.0}
    """
    out: dict[int, float] = {}
    if weight <= 0 or width <= 0:
        return out
    get = out.get
    for uid, score in scores.items():
        share = weight * score / 2
        for step in range(1, width + 1):
            for near in (uid - step, uid + step):
                if 0 <= near < n_units:
                    out[near] = get(near, 0.0) + share
            share /= 2
    return out
