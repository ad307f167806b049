"""Ranking closed stretches for a query, in small named steps.

The built-in ranking: BM25 over each stretch (`bm25.Index.head`), plus a share of its
neighbours' scores (`neighbour_shares`), a custom retriever's signal fused in (`fusion`),
dated stretches boosted for "when" questions, then zero-score stretches newest first as a
recency top-up. A retriever adds to the lexical ranking and never replaces it.

A stretch's neighbours are evidence for it, as a passage's surrounding text is in passage
retrieval (J. P. Callan, "Passage-level evidence in document retrieval", SIGIR 1994). The
date boost is a question-type prior (E. M. Voorhees, "The TREC-8 Question Answering Track
Report", 1999). Measured: docs/benchmarks.md, "Retrieval ablations".

>>> neighbour_shares({2: 4.0}, 5, 1.0, 1)
{1: 2.0, 3: 2.0}
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._turns.patterns import ASKS_OWN_WORDS, ASKS_REPLIES, WHEN_QUESTION
from .._turns.settings import Tuning
from . import fusion
from .bm25 import Index
from .head import kth_largest

Head = list[tuple[float, int]]


def asks_when(query: str) -> bool:
    """Whether `query` is a "when" question (its first word is "when").

    >>> asks_when("When did we go camping?"), asks_when("Whenever you like"), asks_when("Why?")
    (True, False, False)
    """
    return WHEN_QUESTION.match(query) is not None


def asked_speaker(query: str) -> str | None:
    """Whose words a question asks about: "user" when it speaks of the asker ("what did I
    buy?", "my sister's name"), unless it asks what the assistant said ("what did you suggest
    for my trip?"); None otherwise (a third-person question, "we"). English only for now.

    >>> asked_speaker("What degree did I graduate with?"), asked_speaker("Which hotel, Ann?")
    ('user', None)
    >>> asked_speaker("Can you remind me what you recommended for my trip?") is None
    True
    """
    if ASKS_REPLIES.search(query) is not None:
        return None
    return "user" if ASKS_OWN_WORDS.search(query) is not None else None


def neighbour_shares(
    scores: Mapping[int, float], n_units: int, weight: float, width: int
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
    steps = range(1, width + 1)
    for uid, score in scores.items():  # the two sides written out: each compose runs this
        share = weight * score / 2
        for step in steps:
            below, above = uid - step, uid + step
            if 0 <= below < n_units:
                out[below] = get(below, 0.0) + share
            if 0 <= above < n_units:
                out[above] = get(above, 0.0) + share
            share /= 2
    return out


def query_terms(index: Index, terms: list[str], tuning: Tuning) -> list[str]:
    """The query's rarest indexed terms (at most `query_terms`), minus very common ones."""
    kept = index.rarest(terms, tuning.query_terms)
    if tuning.common_share >= 1.0:
        return kept
    limit = tuning.common_share * len(index)
    return kept[:1] + [t for t in kept[1:] if index.document_frequency(t) <= limit]


def with_neighbours(
    index: Index, terms: list[str], head: Head, scores: dict[int, float], n: int, k: int,
    tuning: Tuning, complete: bool = False, lends: Callable[[int], bool] | None = None,
) -> Head:  # fmt: skip
    """The head after each of its stretches lends its neighbours a share of its score.

    Only the head lends (its scores are exact); a neighbour outside it gets its exact own
    score first (the head's pruning may have left a lower bound; when `complete`, one outside
    `scores` holds no query term, and scores 0.0). Shares only raise scores, so the new head
    lies within the old head and its neighbours. A stretch the index does not hold (only the
    other speaker's words, when a question is about one speaker's) is no evidence of what
    was asked: it receives only as the reply that followed a stretch. Only stretches `lends`
    passes lend (a user's index keeps the postings of stretches a redaction or deletion made
    tombstones: their words must not raise the stretches beside them).
    """
    sources = {u: score for score, u in head}
    lending = sources if lends is None else {u: s for u, s in sources.items() if lends(u)}
    shares = neighbour_shares(lending, n, tuning.context_weight, tuning.context_width)
    if len(index) < n:  # an index of one speaker's words: not every stretch holds them
        shares = {u: share for u, share in shares.items() if u in index or u - 1 in lending}
    outside = [u for u in shares if u not in sources and (not complete or u in scores)]
    own = index.exact(outside, terms)
    for uid, share in shares.items():
        scores[uid] = (sources[uid] if uid in sources else own.get(uid, 0.0)) + share
    pool = list(sources.keys() | shares.keys())
    return sorted(zip(map(scores.__getitem__, pool), pool, strict=True), reverse=True)[:k]


def date_boosted(head: Head, dated: Callable[[int], bool], boost: float) -> Head:
    """The head with stretches carrying a resolved date scored (1 + boost) times more."""
    factor = 1.0 + boost
    return sorted(((s * factor if dated(u) else s, u) for s, u in head), reverse=True)


def recency_fill(scored: Mapping[int, Any], n: int, scan: int) -> Iterator[tuple[int, float]]:
    """Zero-score stretches, newest first: a full budget of recent talk beats an empty one."""
    found = 0
    for uid in range(n - 1, -1, -1):
        if found >= scan:
            return
        if uid not in scored:
            yield uid, 0.0
            found += 1


def fused(
    head: Head, other: Mapping[int, float], weight: float, rrf: bool, k: int
) -> tuple[Head, float]:
    """The lexical head and a retriever's scaled scores as one head (CombSUM, or reciprocal
    rank fusion with `rrf`), and what a lexical score outside the head is multiplied by to
    stay on the fused scale below it.

    The candidates are the head and the retriever's `k` best; each candidate takes its score
    from both lists wherever it has one, as CombSUM sums what every system gives a document
    (a head stretch just outside the retriever's `k` best keeps its similarity).

    >>> fused([(4.0, 0), (2.0, 1)], {2: 1.0, 1: 0.2, 5: 0.1}, 0.5, False, 1)
    ([(1.0, 0), (0.6, 1), (0.5, 2)], 0.25)
    """
    lexical = {u: s for s, u in head}
    top = max(lexical.values(), default=0.0)
    candidates = lexical.keys() | fusion.best(other, k).keys()
    if rrf:  # ranks in the retriever's whole list
        scores = fusion.reciprocal_rank_fusion(lexical, other, weight)
        scale = 1 / (top * (fusion.RRF_K + len(lexical) + 1)) if top > 0 else 0.0
    else:  # only the candidates' scores are summed
        scores = fusion.comb_sum(lexical, {u: other[u] for u in candidates if u in other}, weight)
        scale = 1 / top if top > 0 else 0.0
    return sorted(((scores[u], u) for u in candidates if u in scores), reverse=True), scale


def best_outside(
    scores: Mapping[int, float], seen: set[int], k: int, scale: float
) -> list[tuple[float, int]]:
    """The `k` best (score x `scale`, id) pairs of `scores` outside `seen`, best first. Only
    a score whose scaled value reaches the (k + |seen|)-th largest's can be among them (at
    least k others outside `seen` stand above any lower one, and scaling keeps their order),
    so pairs are built for those alone: a user's index scores tens of thousands of stretches.

    >>> best_outside({1: 3.0, 2: 2.0, 3: 2.0, 4: 1.0}, {1}, 2, 0.5)
    [(1.0, 3), (1.0, 2)]
    """
    floor = -math.inf
    if len(scores) > 4 * (k + len(seen)):
        floor = kth_largest(scores.values(), k + len(seen)) * scale
    pool = ((s * scale, u) for u, s in scores.items() if s * scale >= floor and u not in seen)
    return heapq.nlargest(k, pool)


def bm25_ranked(
    index: Index, terms: list[str], n: int, k: int, tuning: Tuning, dated: Callable[[int], bool],
    when: bool, said_then: Callable[[int], bool] | None = None,
    other: Mapping[int, float] | None = None, weight: float = 1.0,
    lends: Callable[[int], bool] | None = None,
) -> Iterator[tuple[int, float]]:  # fmt: skip
    """The built-in ranking: the k best exactly, the next k by lower bound, then recency.

    `said_then` marks the stretches said on the days a question names ("last weekend",
    resolved against its date): they are boosted like dated stretches for "when" questions,
    and the rest of them come before the recency top-up. `other` is a retriever's scores
    (scaled, the best 1; every stretch it scored, its `k` best join the head), fused into the
    head with `weight` (see `fused`). `lends`: see `with_neighbours`.
    """
    terms = query_terms(index, terms, tuning)
    head, scores, complete = index.head(terms, k)
    if tuning.context_weight > 0 and tuning.context_width > 0 and scores:
        head = with_neighbours(index, terms, head, scores, n, k, tuning, complete, lends)
    scale = 1.0
    if other:
        head, scale = fused(head, other, weight, tuning.rank_fusion, k)
    if tuning.date_boost > 0 and when:
        head = date_boosted(head, dated, tuning.date_boost)
    if tuning.date_boost > 0 and said_then is not None:
        head = date_boosted(head, said_then, tuning.date_boost)
    if other:  # the head holds stretches the lexical scores lack: they count as scored
        scores = {**scores, **{u: 0.0 for _, u in head if u not in scores}}
    yield from ((u, score) for score, u in head)
    if len(head) < len(scores):  # reached when the head's stretches leave room
        yield from ((u, score) for score, u in best_outside(scores, {u for _, u in head}, k, scale))
    if said_then is not None:
        then = [u for u in range(n - 1, -1, -1) if u not in scores and said_then(u)]
        yield from ((u, 0.0) for u in then[: tuning.recency_fill_scan])
        scores = {**scores, **dict.fromkeys(then, 0.0)}
    yield from recency_fill(scores, n, tuning.recency_fill_scan)
