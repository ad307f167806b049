"""The pruned head: the best `k` documents of a query without scoring every posting.

`bm25.Index.head` computes the formula's constants and each term's weight; the walk here
visits the terms' lists and skips what cannot reach the head (see `Index.head` for the
method and its sources).
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Collection, Iterable
from itertools import compress

from .postings import Postings, found, picker
from .postings import banded as bands_of
from .postings import column as column_of

# Lists at least this long are kept in (tf, length) groups for `Index.head` to skip. Below
# 512 the groups are small, their arrays' overhead outweighs the walk they save: at 100,000
# turns 256 took 2.3 MB more for compose 0.83x of 6a58811 instead of 0.93x.
_BANDED = 512
# Bounds are raised by this factor so float rounding cannot make one fall short of a sum.
_SLACK = 1.0 + 1e-9
Scores = dict[int, float]  # document id -> score so far


class Walk:
    """One query's walk of its terms' lists, rarest first.

    A document's tf weight is `weight * tf / (tf + norm)`, with `norm = a + c * length` (the
    denominator's length part, `lengths` each document's, by id); `top` is the largest id
    indexed (columns reach it).
    """

    __slots__ = ("a", "c", "lengths", "top")

    def __init__(self, a: float, c: float, lengths: array[int], top: int) -> None:
        self.a, self.c, self.lengths, self.top = a, c, lengths, top

    def head(
        self, entries: list[Postings], weights: list[float], shortest: int, k: int
    ) -> tuple[list[tuple[float, int]], dict[int, float], bool]:
        """What `Index.head` returns, for the lists `entries` of its terms (rarest first),
        their weights (idf x (k1 + 1)) and the shortest document's length."""
        banded = [len(e.ids) >= _BANDED for e in entries]
        left_bound = self._left_bounds(entries, weights, banded, shortest)
        scores: dict[int, float] = {}
        kth = 0.0
        closed = False  # no document outside `scores` can reach the head any more
        for i, entry in enumerate(entries):
            cut = 0.0
            if banded[i] and len(scores) >= k:
                # Scores only grow, so an earlier k-th score still bounds the head from below:
                # the k-th search (a pass over thousands of scores) runs only when it must.
                if kth <= left_bound[i + 1] and max(scores.values()) > left_bound[i + 1]:
                    kth = kth_largest(scores.values(), k)
                cut = kth - left_bound[i + 1]
            if cut <= 0.0 and not closed:
                self._add_all(entry, weights[i], scores, banded[i])
                continue
            self._add_reaching(entry, weights[i], scores, kth - left_bound[i], banded[i])
            if not closed:
                closed = self._add_unseen(entry, weights[i], scores, cut)
        return _head_of(scores, k), scores, not closed

    def _left_bounds(
        self, entries: list[Postings], weights: list[float], banded: list[bool], shortest: int
    ) -> list[float]:
        """For each i, the most terms i.. can still add to any document's score."""
        a, c, lengths = self.a, self.c, self.lengths
        least = a + c * shortest
        left_bound = [0.0] * (len(entries) + 1)
        for i in range(len(entries) - 1, -1, -1):
            weight = weights[i]
            if banded[i]:
                # The shortest document of each tf group: the most this term gives anyone.
                most = max(
                    weight * tf / (tf + a + c * band.lengths[0])
                    for tf, band in bands_of(entries[i], lengths).items()
                )
            else:
                tf = entries[i].top_tf()
                most = weight * tf / (tf + least)
            left_bound[i] = left_bound[i + 1] + most * _SLACK
        return left_bound

    def _add_all(self, entry: Postings, weight: float, scores: Scores, banded: bool) -> None:
        """Every document of a term's list gets its share: a long list group by group, each
        group's share computed once (the same expression, so the same float)."""
        a, c, lengths = self.a, self.c, self.lengths
        get = scores.get
        if banded:
            for tf, band in bands_of(entry, lengths).items():
                top = weight * tf
                for length, group in zip(band.lengths, band.groups, strict=True):
                    share = top / (tf + a + c * length)
                    for doc_id in group:
                        scores[doc_id] = get(doc_id, 0.0) + share
            return
        # Most counts are 1: its two constants hoisted, the same floats (weight * 1 is weight,
        # 1 + a is what tf + a adds first).
        one_a = 1 + a
        for doc_id, tf in zip(entry.ids, entry.tfs, strict=True):
            if tf == 1:
                scores[doc_id] = get(doc_id, 0.0) + weight / (one_a + c * lengths[doc_id])
            else:
                scores[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + a + c * lengths[doc_id])

    def _add_reaching(
        self, entry: Postings, weight: float, scores: Scores, reach: float, banded: bool
    ) -> None:
        """Documents already scored get the share (the same expression, the same floats),
        unless they can no longer reach the head (their score then stays a lower bound)."""
        a, c, lengths = self.a, self.c, self.lengths
        # The cheaper pass: over the scored documents (a byte each, picked in C) or the list.
        col = column_of(entry, self.top, lengths) if len(scores) <= 4 * len(entry.ids) else None
        if col is not None:
            for doc_id in compress(scores, picker(scores)(col)):
                s = scores[doc_id]
                if s >= reach:
                    tf = col[doc_id]
                    scores[doc_id] = s + weight * tf / (tf + a + c * lengths[doc_id])
            return
        if banded:  # a walk of the groups, each share computed once
            get = scores.get
            for tf, band in bands_of(entry, lengths).items():
                top = weight * tf
                for length, group in zip(band.lengths, band.groups, strict=True):
                    share = 0.0
                    for doc_id in group:
                        now = get(doc_id)
                        if now is not None and now >= reach:
                            if not share:
                                share = top / (tf + a + c * length)
                            scores[doc_id] = now + share
            return
        for doc_id, tf in found(entry, scores):
            s = scores[doc_id]
            if s >= reach:
                scores[doc_id] = s + weight * tf / (tf + a + c * lengths[doc_id])

    def _add_unseen(self, entry: Postings, weight: float, scores: Scores, cut: float) -> bool:
        """Documents not seen yet, from the groups whose share reaches `cut` (none was passed
        over before, so that share is their score so far). True once a group is passed over:
        a document left there holds less than `kth` with all later terms' most, and so does
        any document a later term adds."""
        a, c = self.a, self.c
        passed_over = False
        for tf, band in bands_of(entry, self.lengths).items():
            top = weight * tf
            for length, group in zip(band.lengths, band.groups, strict=True):
                share = top / (tf + a + c * length)
                if share < cut:  # longer documents of this tf get less
                    passed_over = True
                    break
                for doc_id in group:
                    if doc_id not in scores:
                        scores[doc_id] = share
        return passed_over


def _head_of(scores: Scores, k: int) -> list[tuple[float, int]]:
    """The `k` best (score, id) pairs of `scores`, best first."""
    if len(scores) > 4 * k:
        # Only pairs at or above the k-th score are built and sorted: with thousands of scored
        # documents this beats heapq.nlargest over all pairs (docs/benchmarks.md, "Speed").
        kth = kth_largest(scores.values(), k)
        return _best(((s, d) for d, s in scores.items() if s >= kth), k)
    return _best(zip(scores.values(), scores.keys(), strict=True), k)


# Up to this many values, sorting them all in C finds the k-th largest sooner than heapq's
# Python loop over them (docs/benchmarks.md, "Speed").
_SORTED_KTH = 2000


def kth_largest(values: Collection[float], k: int) -> float:
    """The `k`-th largest of `values` (1 <= k <= len(values))."""
    if len(values) <= _SORTED_KTH:
        return sorted(values, reverse=True)[k - 1]
    return heapq.nlargest(k, values)[-1]


def _best(pairs: Iterable[tuple[float, int]], k: int) -> list[tuple[float, int]]:
    """The `k` largest (score, id) pairs, largest first: what heapq.nlargest returns, sorted
    in C (a few hundred pairs sort faster than nlargest's Python loop compares them)."""
    return sorted(pairs, reverse=True)[:k]
