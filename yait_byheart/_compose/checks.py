"""Checking a Memory's settings: every bad value gets an error naming the call and the fix."""

from __future__ import annotations

import math
from typing import Any

# Larger budgets than this are no model's context; the bound also keeps sizes exact integers.
MAX_SIZE = 10**12


def number(call: str, name: str, value: object, low: float, high: float) -> float:
    """`value` as a float if it is a finite number from `low` to `high`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{call}: {name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or not low <= value <= high:
        raise ValueError(
            f"{call}: {name}={value!r} is out of range; use a number from {low} to {high:g}"
        )
    return float(value)


def callables(call: str, **fns: object) -> None:
    for name, fn in fns.items():
        if fn is not None and not callable(fn):
            raise TypeError(f"{call}: {name} must be callable or None, got {type(fn).__name__}")


def retriever(call: str, value: Any) -> None:
    if value is None:
        return
    if not (callable(getattr(value, "fit", None)) and callable(getattr(value, "rank", None))):
        raise TypeError(f"{call}: retriever needs fit(docs) and rank(query) methods")


def external_shares(call: str, share: float, most: float) -> None:
    if most < share:
        raise ValueError(
            f"{call}: external_max={most} is below external_share={share}; external_max is "
            "the most outside material may take, so it must be >= the share"
        )


def measured(measure: Any, text: str) -> int:
    """`measure(text)`, checked: a custom measure must return an int >= 0."""
    n = measure(text)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise TypeError(
            f"Memory: measure({text[:20]!r}...) returned {n!r}; it must return an int >= 0"
        )
    return n


def turn_index(call: str, index: object, n: int) -> int:
    """`index` as a position from 0 to n - 1 if it names one of `n` turns (negatives count
    from the end, as in a list)."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"{call}: index must be an int, got {type(index).__name__}")
    if n == 0:  # "valid indices are 0 to -1" would read as a range
        raise IndexError(f"{call}: no turn {index}; there are no turns yet")
    if not -n <= index < n:
        raise IndexError(f"{call}: no turn {index}; valid indices are 0 to {n - 1}")
    return index % n


def query(call: str, text: object, external_query: object) -> None:
    """A compose's query: a str that says something, or None."""
    if text is not None and not isinstance(text, str):
        raise TypeError(f"{call}: query must be a str or None, got {type(text).__name__}")
    if text is not None and not text.strip():
        raise ValueError(f"{call}: query is blank; pass the user's new message or None")
    if not isinstance(external_query, str):
        raise TypeError(f"{call}: external_query must be a str")
