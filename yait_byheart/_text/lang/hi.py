"""Hindi light stemming, written from Ramanathan and Rao's published suffix list.

Source: A. Ramanathan, D. D. Rao, "A Lightweight Stemmer for Hindi" (EACL 2003 workshop):
remove the longest matching inflectional suffix. Before it, spelling variants are made one
(after P. Pingali, V. Varma, "Word normalization in Indian languages", 2005): the nukta
dropped, chandrabindu read as anusvara, a half nasal consonant before a consonant read as
anusvara ("हिन्दी" and "हिंदी" are the same word). Data in `hi_data`.

>>> [read(w) for w in ["हिन्दी", "हिंदी", "लड़कियों", "लड़की", "भारतीय"]]
['हिंद', 'हिंद', 'लडक', 'लडक', 'भारतीय']
"""

from __future__ import annotations

from ..lazy_re import lazy
from .hi_data import ANUSVARA, CHANDRABINDU, NASALS, NUKTA, STOP_WORDS_RAW, SUFFIXES, VIRAMA

_HALF_NASAL = lazy(f"[{NASALS}]{VIRAMA}(?=[\u0915-\u0939])")
_BY_LENGTH = sorted(SUFFIXES, key=len, reverse=True)


def normalize(word: str) -> str:
    """One spelling for the variants above."""
    w = word.replace(NUKTA, "").replace(CHANDRABINDU, ANUSVARA)
    return _HALF_NASAL.sub(ANUSVARA, w) if VIRAMA in w else w


STOP_WORDS = frozenset(normalize(w) for w in STOP_WORDS_RAW.split())


def stem(word: str) -> str:
    """The word without its longest listed suffix, when at least two characters stay."""
    for suffix in _BY_LENGTH:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def read(word: str) -> str:
    """ "" for a stop word, else the normalised stem."""
    w = normalize(word)
    return "" if w in STOP_WORDS else stem(w)
