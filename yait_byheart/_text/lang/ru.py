"""The Russian stemmer, written from the published Snowball algorithm.

Source: M. F. Porter, "Russian stemming algorithm", snowballstem.org/algorithms/russian/
stemmer.html (steps 1-4 inside the region RV, the derivational ending inside R2). "ё" is read
as "е" first. Data in `ru_data`.

>>> [stem(w) for w in ["плиточника", "плиточник", "вероятности", "красивейшая", "бегущий"]]
['плиточник', 'плиточник', 'вероятн', 'красив', 'бегущ']
"""

from __future__ import annotations

from .regions import r1_start
from .ru_data import (
    ADJECTIVE,
    DERIVATIONAL,
    NOUN,
    PARTICIPLE_1,
    PARTICIPLE_2,
    PERFECTIVE_GERUND_1,
    PERFECTIVE_GERUND_2,
    REFLEXIVE,
    STOP_WORDS,
    SUPERLATIVE,
    VERB_1,
    VERB_2,
    VOWELS,
)


def _strip(w: str, rv: int, after_a: tuple[str, ...], plain: tuple[str, ...] = ()) -> str | None:
    """`w` without its longest ending from the classes (one of `after_a` only after "а"/"я"),
    the ending inside RV; None when no ending of them is there."""
    best = ""
    for s in after_a:
        after = len(w) - len(s) - 1
        if len(s) > len(best) and w.endswith(s) and after >= rv and w[after] in "ая":
            best = s
    for s in plain:
        if len(s) > len(best) and w.endswith(s) and len(w) - len(s) >= rv:
            best = s
    return w[: -len(best)] if best else None


def _adjectival(w: str, rv: int) -> str | None:
    base = _strip(w, rv, (), ADJECTIVE)
    if base is None:
        return None
    return _strip(base, rv, PARTICIPLE_1, PARTICIPLE_2) or base


def _step1(w: str, rv: int) -> str:
    gerund = _strip(w, rv, PERFECTIVE_GERUND_1, PERFECTIVE_GERUND_2)
    if gerund is not None:
        return gerund
    w = _strip(w, rv, (), REFLEXIVE) or w
    for found in (_adjectival(w, rv), _strip(w, rv, VERB_1, VERB_2), _strip(w, rv, (), NOUN)):
        if found is not None:
            return found
    return w


def stem(word: str) -> str:
    """The Snowball Russian stem of a lower-case word."""
    w = word.replace("ё", "е")
    rv = next((i + 1 for i, c in enumerate(w) if c in VOWELS), len(w))
    r2 = r1_start(w, VOWELS, r1_start(w, VOWELS))
    w = _step1(w, rv)
    if w.endswith("и") and len(w) - 1 >= rv:
        w = w[:-1]
    for s in DERIVATIONAL:
        if w.endswith(s) and len(w) - len(s) >= max(r2, rv):
            w = w[: -len(s)]
            break
    if w.endswith("нн") and len(w) - 1 >= rv:
        return w[:-1]
    for s in SUPERLATIVE:
        if w.endswith(s) and len(w) - len(s) >= rv:
            w = w[: -len(s)]
            return w[:-1] if w.endswith("нн") and len(w) - 1 >= rv else w
    return w[:-1] if w.endswith("ь") and len(w) - 1 >= rv else w


def read(word: str) -> str:
    """ "" for a stop word, else the stem."""
    return "" if word in STOP_WORDS else stem(word)
