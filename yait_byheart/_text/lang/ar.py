"""Arabic light stemming: Larkey's light10, written from its published description.

Source: L. S. Larkey, L. Ballesteros, M. E. Connell, "Light Stemming for Arabic Information
Retrieval" (Springer 2007; SIGIR 2002). Normalise (drop diacritics; alef forms to bare alef;
final alef maqsura to yeh, final teh marbuta to heh), remove a leading "و" when three letters
stay, then one definite article when two stay, then each listed suffix in turn when two stay.
Data in `ar_data`.

>>> [read(w) for w in ["والكتاب", "المكتبات", "كتابها", "مُعَلِّمُونَ"]]
['كتاب', 'مكتب', 'كتاب', 'معلم']
"""

from __future__ import annotations

from .ar_data import ALEFS, ARTICLES, DIACRITICS, STOP_WORDS_RAW, SUFFIXES


def normalize(word: str) -> str:
    """Larkey's normalisation (the tatweel is already gone: `_words.fold` drops it)."""
    w = word.translate(DIACRITICS).translate(ALEFS)
    if w.endswith("ى"):
        w = w[:-1] + "ي"
    if w.endswith("ة"):
        w = w[:-1] + "ه"
    return w


STOP_WORDS = frozenset(normalize(w) for w in STOP_WORDS_RAW.split())


def stem(word: str) -> str:
    """The light10 stem of a normalised word."""
    w = word
    if w.startswith("و") and len(w) >= 4:
        w = w[1:]
    for article in ARTICLES:
        if w.startswith(article) and len(w) - len(article) >= 2:
            w = w[len(article) :]
            break
    for suffix in SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            w = w[: -len(suffix)]
    return w


def read(word: str) -> str:
    """ "" for a stop word, else the normalised stem."""
    w = normalize(word)
    return "" if w in STOP_WORDS else stem(w)
