"""A light Dutch stemmer: the inflectional endings of the Snowball Dutch stemmer's step 1
and its final "-e" step, with a doubled final consonant made single.

Source: M. F. Porter, "Dutch stemming algorithm", snowballstem.org/algorithms/dutch/
stemmer.html (derivational steps left out, as Savoy's light stemmers do). Data in `nl_data`.

>>> [stem(w) for w in ["mogelijkheden", "bedden", "huizen", "boeken", "boek"]]
['mogelijkheid', 'bed', 'huiz', 'boek', 'boek']
"""

from __future__ import annotations

from .nl_data import ACCENTS, S_KEEPS_AFTER, STOP_WORDS, VOWELS


def _undouble(w: str) -> str:
    return w[:-1] if len(w) > 2 and w[-1] == w[-2] and w[-1] not in VOWELS else w


def stem(word: str) -> str:
    """The light stem of a lower-case Dutch word."""
    w = word.translate(ACCENTS)
    if len(w) > 6 and w.endswith("heden"):
        return w[:-5] + "heid"
    for suffix in ("ene", "en"):
        if len(w) - len(suffix) >= 3 and w.endswith(suffix) and w[-len(suffix) - 1] not in VOWELS:
            return _undouble(w[: -len(suffix)])
    for suffix in ("se", "s"):
        stays = len(w) - len(suffix)
        if stays >= 3 and w.endswith(suffix) and w[stays - 1] not in S_KEEPS_AFTER:
            return w[:stays]
    if len(w) > 4 and w.endswith("e") and w[-2] not in VOWELS:
        return _undouble(w[:-1])
    return w


def read(word: str) -> str:
    """ "" for a stop word, else the light stem."""
    return "" if word in STOP_WORDS else stem(word)
