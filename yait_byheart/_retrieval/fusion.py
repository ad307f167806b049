"""A retriever's signal fused into byheart's own ranking: each formula a small named function.

A retriever never replaces the lexical ranking; it adds a second opinion. Both lists are
first put on one scale: the lexical scores over the best one (as Fox and Shaw's CombSUM
normalises each system's scores), a retriever's scores over its best, a rank-only retriever's
order as reciprocal ranks over the first's. Then either CombSUM, the sum of the scaled scores
with the retriever's weighted (E. A. Fox and J. A. Shaw, "Combination of multiple searches",
TREC-2, 1994), or reciprocal rank fusion, the sum of 1 / (k + rank) over the lists (G. V.
Cormack, C. L. A. Clarke and S. Buettcher, SIGIR 2009). Which one Memory uses was measured:
docs/semantic.md, "Fusion".

>>> max_scaled({0: 2.0, 1: 4.0, 2: -1.0})
{0: 0.5, 1: 1.0}
>>> comb_sum({0: 1.0, 1: 0.5}, {1: 1.0, 2: 1.0}, 0.5)
{0: 1.0, 1: 1.0, 2: 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60
"""Reciprocal rank fusion's constant, as Cormack, Clarke and Buettcher set it."""


def max_scaled(scores: Mapping[int, float]) -> dict[int, float]:
    """The positive scores over the best one, so the best scores 1 (the rest are dropped)."""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {}
    return {u: s / top for u, s in scores.items() if s > 0}


def rank_scaled(order: Sequence[int], offset: int) -> dict[int, float]:
    """A rank-only order as weights: rank r weighs (offset + 1) / (offset + r + 1), the first 1
    (the shape of a reciprocal rank; the first occurrence of an id counts).

    >>> rank_scaled([7, 3, 7], 1)
    {7: 1.0, 3: 0.6666666666666666}
    """
    out: dict[int, float] = {}
    for r, uid in enumerate(order):
        if uid not in out:
            out[uid] = (offset + 1) / (offset + r + 1)
    return out


def best(scores: Mapping[int, float], k: int) -> dict[int, float]:
    """The `k` highest scores (ties to the lower id), in that order.

    >>> best({4: 0.5, 2: 0.9, 9: 0.5}, 2)
    {2: 0.9, 4: 0.5}
    """
    top = sorted(scores.items(), key=lambda p: (-p[1], p[0]))[:k]
    return dict(top)


def comb_sum(
    lexical: Mapping[int, float], other: Mapping[int, float], weight: float
) -> dict[int, float]:
    """CombSUM: each stretch's lexical score over the best lexical one, plus `weight` x its
    retriever score (already scaled so the best is 1); a stretch missing from a list adds 0."""
    out = max_scaled(lexical)
    get = out.get
    for uid, score in other.items():
        out[uid] = get(uid, 0.0) + weight * score
    return out


def reciprocal_rank_fusion(
    lexical: Mapping[int, float], other: Mapping[int, float], weight: float, k: int = RRF_K
) -> dict[int, float]:
    """RRF: 1 / (k + rank) in the lexical order plus `weight` / (k + rank) in the retriever's
    (ranks from 1; a stretch missing from a list adds 0).

    >>> fused = reciprocal_rank_fusion({0: 3.0, 1: 1.0}, {1: 1.0}, 1.0, k=1)
    >>> fused[1] > fused[0]
    True
    """
    out: dict[int, float] = {}
    for w, scores in ((1.0, lexical), (weight, other)):
        for r, uid in enumerate(sorted(scores, key=lambda u: (-scores[u], u)), 1):
            out[uid] = out.get(uid, 0.0) + w / (k + r)
    return out
