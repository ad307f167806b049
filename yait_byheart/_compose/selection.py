"""Rules 2 and 3 as pure functions over plain data: fit stretches to a room, decide which
stretches of a fresh selection must join a kept context, and how large it may grow.

>>> select([(0, 3.0), (1, 2.0), (2, 1.0)], [50, 80, 40], 100, exact=3, sliver=10, misfits=4)
([0, 2], [3.0, 1.0])
>>> joining({0}, [0, 1], [4.0, 3.0], stability=0.9, shared_score=0.0, strong_join=1.0)
[1]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Iterable, Sequence


def _no_saving(uid: int) -> int:
    return 0


def select(
    ranked: Iterable[tuple[int, float]],
    sizes: Sequence[int],
    room: int,
    *,
    exact: int,
    sliver: int,
    misfits: int,
    saving: Callable[[int], int] = _no_saving,
) -> tuple[list[int], list[float]]:
    """Whole stretches, best first, while they fit in `room` (rule 2).

    `ranked` yields (stretch, weight) best first (weight 0: recency top-up only); `saving(k)`
    is what stretch k saves sent right after stretch k - 1. Past the `exact` best, the search
    stops once less than `sliver` is left, or at 2 x `exact`; and after `misfits` stretches in
    a row that do not fit. Returns the chosen stretches and the weights of the relevant ones.
    """
    chosen: list[int] = []
    taken: set[int] = set()
    weights: list[float] = []
    best: tuple[int, float] | None = None
    left, misses = room, 0
    for seen, (uid, weight) in enumerate(ranked):
        if seen >= exact and (left < sliver or seen >= 2 * exact):
            break  # hunting for a rare small stretch to fill a sliver costs more than it adds
        size = sizes[uid]
        if size == 0:
            continue
        if best is None and weight > 0:
            best = (uid, weight)
        if uid - 1 in taken:  # sent in the same message as its neighbour
            size -= saving(uid)
        if uid + 1 in taken:
            size -= saving(uid + 1)
        if size > left:
            misses += 1
            if misses >= misfits:
                break
            continue
        chosen.append(uid)
        taken.add(uid)
        if weight > 0:
            weights.append(weight)
        left -= size
        misses = 0
        if left <= 0:
            break
    if best is not None and sum(weights) < best[1]:
        return [best[0]], [best[1]]  # what fits is worth less than the best stretch alone
    return chosen, weights


def joining(
    kept: Container[int],
    fresh: Sequence[int],
    weights: Sequence[float],
    *,
    stability: float,
    shared_score: float,
    strong_join: float,
) -> list[int]:
    """Which stretches of a fresh selection must join a kept context (rule 3).

    The kept context must hold `stability` of the selection's relevance, counted above
    `shared_score` x the weakest chosen weight (what every stretch scores anyway); missing
    stretches join best first until it does, and one scoring `strong_join` x the best always
    joins. When it holds none of it, the subject has moved and every missing one joins (a
    partial join would answer part of a new question). Only relevant stretches count
    (`weights` covers the first of `fresh` only).

    >>> joining(set(), [3, 4, 5], [4.0, 3.0, 2.0], stability=0.5, shared_score=0.0,
    ...         strong_join=1.0)
    [3, 4, 5]
    """
    base = min(weights, default=0.0) * shared_score
    above = [w - base for w in weights]
    total = sum(above)
    covered = 0.0
    missing: list[tuple[int, float]] = []
    for uid, weight in zip(fresh, above, strict=False):
        if uid in kept:
            covered += weight
        else:
            missing.append((uid, weight))
    if covered == 0:
        return [uid for uid, _ in missing]  # the subject moved: the question gets all it needs
    strong = strong_join * max(above, default=0.0)
    out: list[int] = []
    for uid, weight in missing:
        if covered >= stability * total and weight < strong:
            break
        out.append(uid)
        covered += weight
    return out


def keep_limit(
    budget: int,
    growth: float,
    *,
    ceiling: float,
    cache_write: float,
    cache_read: float,
    mean_over_budget: float,
) -> float:
    """How large a kept context may grow before a rebuild is cheaper on average.

    A rebuild writes about R = budget at `cache_write`; a kept context of size S costs
    `cache_read` x S per call and grows by g per call. Over a cycle from R to L the mean cost
    per call is smallest at L = R + sqrt(2 cache_write R g / cache_read); never above
    (2 mean_over_budget - 1) R, nor `ceiling` R.

    >>> keep_limit(100, 0.0, ceiling=4.0, cache_write=1.25, cache_read=0.1, mean_over_budget=2.0)
    100.0
    """
    r = float(budget)
    best = r + math.sqrt(2.0 * cache_write * r * growth / cache_read)
    return min(best, (2 * mean_over_budget - 1) * r, ceiling * r)


def cycle_cost(
    size: float, growth: float, limit: float, *, cache_write: float, cache_read: float
) -> float:
    """Mean cost per call of keeping a context rebuilt at `size` until it reaches `limit`,
    growing by `growth` per call (`keep_limit`'s cycle): the rebuild's write spread over the
    cycle, each call's growth written, the kept part read. A limit at or below the size
    rebuilds every call.

    >>> cycle_cost(100, 10.0, 200, cache_write=1.25, cache_read=0.1)
    40.0
    """
    if limit <= size or growth <= 0:
        return cache_write * size if limit <= size else cache_read * size
    return (
        cache_write * size * growth / (limit - size)
        + cache_write * growth
        + cache_read * (size + limit) / 2
    )
