"""Cutting a turn too long for one stretch into pieces, each verbatim.

A piece ends at the coarsest boundary that keeps it within the limit: a paragraph, a line,
a sentence, a word; inside a word only when one word alone is too long. The pieces joined
give back the text exactly.

>>> cut("one two. three four. five six.", 12, len)
['one two. ', 'three four. ', 'five six.']
>>> "".join(cut("x" * 25, 10, len)) == "x" * 25
True
"""

from __future__ import annotations

from collections.abc import Callable

from .patterns import LATIN_STOPS, PIECE_BOUNDARIES


def cut(text: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    """`text` in consecutive pieces of at most `limit` (by `measure`), cut at boundaries."""
    if limit < 1:
        raise ValueError(f"cut: limit={limit}; use at least 1")
    return _cut(text, max(1, limit), measure, 0)


def _cut(text: str, limit: int, measure: Callable[[str], int], level: int) -> list[str]:
    if measure(text) <= limit:
        return [text]
    if level == len(PIECE_BOUNDARIES):
        return _hard_cut(text, limit, measure)
    parts = _split_after(text, level)
    if len(parts) == 1:
        return _cut(text, limit, measure, level + 1)
    pieces: list[str] = []
    current, size = "", 0
    for part in parts:
        part_size = measure(part)
        if current and size + part_size > limit:
            pieces.append(current)
            current, size = "", 0
        if part_size > limit:
            pieces.extend(_cut(part, limit, measure, level + 1))
            continue
        current, size = current + part, size + part_size
    if current:
        pieces.append(current)
    return pieces


def _split_after(text: str, level: int) -> list[str]:
    """`text` cut after each match of boundary `level` (the separator stays with the left)."""
    parts: list[str] = []
    start = 0
    for m in PIECE_BOUNDARIES[level].finditer(text):
        end = m.end()
        if end - m.start() == 1 and text[end - 1] in LATIN_STOPS:
            continue  # a Latin stop with no space after it: "3.5", "e.g.x"
        if end > start and end < len(text):
            parts.append(text[start:end])
            start = end
    parts.append(text[start:])
    return parts


def _hard_cut(text: str, limit: int, measure: Callable[[str], int]) -> list[str]:
    """Cut inside a word: as many characters as fit, found by halving for unusual measures."""
    pieces: list[str] = []
    rest = text
    while rest:
        take = min(len(rest), limit)
        while take > 1 and measure(rest[:take]) > limit:
            take //= 2
        pieces.append(rest[:take])
        rest = rest[take:]
    return pieces
