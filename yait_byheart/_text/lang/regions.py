"""The regions of the Snowball stemmers, from their shared definition.

Source: M. F. Porter, "Snowball: A language for stemming algorithms" and the algorithm pages
at snowballstem.org ("R1 is the region after the first non-vowel following a vowel, or the
end of the word if there is no such non-vowel"; R2 is the same region taken within R1).

>>> r1_start("beautiful", frozenset("aeiouy")), r1_start("beautiful", frozenset("aeiouy"), 5)
(5, 7)
"""

from __future__ import annotations

from collections.abc import Set


def r1_start(word: str, vowels: Set[str], start: int = 0) -> int:
    """Where the region after the first non-vowel following a vowel begins (from `start`)."""
    for i in range(start + 1, len(word)):
        if word[i] not in vowels and word[i - 1] in vowels:
            return i + 1
    return len(word)
