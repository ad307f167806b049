"""What a custom retriever returned, checked before it is ranked on.

A retriever's `rank` or `scores` is someone else's code: an id the conversation does not hold
would otherwise be dropped silently (nothing selected, no error), and a float id would fail
deep inside the ranking with a TypeError that names no retriever.  Both raise here instead,
naming ``Memory(retriever=...)``, what came back and what it should be.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any, SupportsIndex

__all__ = ["WHO", "checked_rank", "checked_scores"]

WHO = "Memory(retriever=...)"  # the call a retriever is given to, unless another is named


def _name(retriever: object, method: str, who: str) -> str:
    return f"{who}: {type(retriever).__name__}.{method}" if retriever is not None else who


def _stretch_id(where: str, value: object, n: int) -> int:
    """`value` as a stretch id of a conversation of `n` closed stretches."""
    if isinstance(value, bool) or not isinstance(value, SupportsIndex):
        raise TypeError(
            f"{where} returned {value!r} ({type(value).__name__}) as a stretch id; return "
            f"int indices into the docs fit() was given (stretch k is docs[k]), best first"
        )
    uid = operator.index(value)
    if not 0 <= uid < n:
        held = f"ids 0 to {n - 1}" if n else "none yet"
        raise ValueError(
            f"{where} returned stretch id {uid}, but the conversation holds {n} closed "
            f"stretches ({held}); return indices into the docs of the last fit() (and add())"
        )
    return uid


def _iterable(where: str, found: object, what: str) -> Iterable[Any]:
    if isinstance(found, (str, bytes)) or not isinstance(found, Iterable):
        raise TypeError(f"{where} returned {type(found).__name__}; return {what}")
    return found


def checked_rank(order: object, n: int, retriever: object = None, who: str = WHO) -> list[int]:
    """A rank-only retriever's `rank(query)` result as stretch ids, best first.

    Each id must be an int from 0 to `n` - 1 (TypeError, ValueError otherwise, naming
    `who`, the call the retriever was given to); an id ranked twice counts at its first place.

    >>> checked_rank([2, 0, 2], 3)
    [2, 0]
    >>> checked_rank([999], 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Memory(retriever=...) returned stretch id 999, but the conversation holds 3 ...
    """
    where = _name(retriever, "rank", who)
    items = _iterable(where, order, "a list of stretch ids (ints), best first")
    return list(dict.fromkeys(_stretch_id(where, u, n) for u in items))


def checked_scores(
    found: object, n: int, retriever: object = None, who: str = WHO
) -> dict[int, float]:
    """A scoring retriever's `scores(query)` result as ``{stretch id: score}``.

    A mapping from stretch id to score, or a sequence of scores (stretch k's at k, at most
    `n` of them); each score a finite real number (TypeError, ValueError otherwise, naming
    `who`).  Every score is kept, zero and negative ones too.

    >>> checked_scores([0.5, 0.0], 3), checked_scores({2: 1}, 3)
    ({0: 0.5, 1: 0.0}, {2: 1.0})
    """
    where = _name(retriever, "scores", who)
    if isinstance(found, Mapping):
        pairs: Iterable[tuple[object, object]] = found.items()
    else:
        what = "a mapping {stretch id: score} or a sequence of scores, one per stretch"
        pairs = enumerate(_iterable(where, found, what))
    out: dict[int, float] = {}
    for key, score in pairs:
        uid = _stretch_id(where, key, n)
        out[uid] = _score(where, uid, score)
    return out


def _score(where: str, uid: int, score: object) -> float:
    if isinstance(score, bool) or (not isinstance(score, (int, float)) and not _is_real(score)):
        raise TypeError(
            f"{where} returned {score!r} ({type(score).__name__}) as the score of stretch "
            f"{uid}; return a number (higher is better)"
        )
    value = float(score)  # type: ignore[arg-type]
    if not math.isfinite(value):
        raise ValueError(
            f"{where} returned {value} as the score of stretch {uid}; return a finite number"
        )
    return value


def _is_real(value: object) -> bool:
    # numpy's float32 and friends: anything float() reads that is not text.
    if isinstance(value, (str, bytes)):
        return False
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True
