"""Readings for words of languages without a stemmer here.

An alphabetic language that is not one of the stemmed ones (Turkish, Romanian, Vietnamese,
Polish, Greek, ...) is read by truncating each word to its first characters: a conservative
stemmer for any language, effective across European languages (P. McNamee, C. Nicholas,
J. Mayfield, "Addressing morphological variation in alphabetic languages", SIGIR 2009).
Greek loses its accents first (they move with inflection), as search engines' Greek
lower-casing does.

>>> truncate("universitesinde"), greek("Πανεπιστήμιο".lower())
('univer', 'πανεπι')
"""

from __future__ import annotations

import unicodedata

# Six, not the five McNamee et al. found best on average: one more character keeps apart more
# unrelated words of the same start, at a small cost in conflating inflections.
PREFIX = 6


def truncate(word: str) -> str:
    """The word's first PREFIX characters."""
    return word[:PREFIX]


def greek(word: str) -> str:
    """A Greek word without accents or diaeresis, truncated."""
    bare = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
    return truncate(bare)


def identity(word: str) -> str:
    """The word as it is (scripts with no reading of their own here)."""
    return word
