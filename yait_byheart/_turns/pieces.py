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
from itertools import pairwise

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
    return [text[a:b] for a, b in pairwise(_bounds_after(text, 0, len(text), level))]


def cut_offsets(text: str, limit: int) -> list[int]:
    """Where `cut(text, limit, len)` cuts `text` (the offsets between its pieces), found on
    offsets alone: measured in characters, no piece or part is copied out to be measured.

    >>> cut_offsets("one two. three four. five six.", 12)
    [9, 21]
    """
    if limit < 1:
        raise ValueError(f"cut: limit={limit}; use at least 1")
    ends = _cut_at(text, 0, len(text), limit, 0)
    ends.pop()  # the end of the text
    return ends


def _cut_at(text: str, start: int, end: int, limit: int, level: int) -> list[int]:
    """`_cut` of `text[start:end]` measured by `len`: each piece's end offset in `text`."""
    if end - start <= limit:
        return [end]
    if level == len(PIECE_BOUNDARIES):
        return [*range(start + limit, end, limit), end]  # `_hard_cut`: `limit` characters each
    bounds = _bounds_after(text, start, end, level)
    if len(bounds) == 2:
        return _cut_at(text, start, end, limit, level + 1)
    ends: list[int] = []
    current = start  # where the piece being grown starts (as `_cut`'s `current`, empty)
    for lo, hi in pairwise(bounds):
        if current < lo and hi - current > limit:
            ends.append(lo)
            current = lo
        if hi - lo > limit:
            ends += _cut_at(text, lo, hi, limit, level + 1)
            current = hi
    if current < end:
        ends.append(end)
    return ends


def _bounds_after(text: str, start: int, end: int, level: int) -> list[int]:
    """`_split_after(text[start:end], level)` as offsets in `text`: its parts' bounds."""
    bounds = [start]
    for m in PIECE_BOUNDARIES[level].finditer(text, start, end):
        at = m.end()
        if at - m.start() == 1 and text[at - 1] in LATIN_STOPS:
            continue  # a Latin stop with no space after it: "3.5", "e.g.x"
        if at > bounds[-1] and at < end:
            bounds.append(at)
    bounds.append(end)
    return bounds


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
