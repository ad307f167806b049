"""A custom retriever's output, checked before it is fused (placeholder; see issue 37)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def checked_rank(order: Any, n: int) -> list[int]:
    """The stretch ids of a rank-only retriever's order that exist."""
    return [u for u in order if 0 <= u < n]


def checked_scores(found: Mapping[int, float] | Sequence[float], n: int) -> dict[int, float]:
    """A scoring retriever's scores by stretch id, for the ids that exist."""
    pairs = found.items() if isinstance(found, Mapping) else enumerate(found)
    return {u: float(s) for u, s in pairs if 0 <= u < n}
