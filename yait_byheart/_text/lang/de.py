"""The German stemmer, written from the published Snowball algorithm.

Source: M. F. Porter, "German stemming algorithm", snowballstem.org/algorithms/german/
stemmer.html (steps 1-3 over the regions R1 and R2, umlauts removed at the end). Data in
`de_data`.

>>> [stem(w) for w in ["aufeinanderfolgenden", "kategorie", "kategorien", "häuser", "haus"]]
['aufeinanderfolg', 'kategori', 'kategori', 'haus', 'haus']
"""

from __future__ import annotations

from .de_data import S_ENDING, ST_ENDING, STEP1_A, STEP1_B, STEP2_A, STOP_WORDS, UMLAUTS, VOWELS
from .regions import r1_start


def _mark(word: str) -> str:
    """Put u and y between vowels in upper case: they then count as consonants."""
    chars = list(word)
    for i in range(1, len(chars) - 1):
        if chars[i] in "uy" and chars[i - 1] in VOWELS and chars[i + 1] in VOWELS:
            chars[i] = chars[i].upper()
    return "".join(chars)


def _ends(word: str, suffixes: tuple[str, ...]) -> str:
    return next((s for s in suffixes if word.endswith(s)), "")


def _step1(w: str, r1: int) -> str:
    a, b = _ends(w, STEP1_A), _ends(w, STEP1_B)
    best = max(a, b, key=len)
    if best and len(w) - len(best) >= r1:
        w = w[: -len(best)]
        if best in STEP1_B and w.endswith("niss"):
            w = w[:-1]
        return w
    if best:
        return w
    if w.endswith("s") and len(w) - 1 >= r1 and len(w) > 1 and w[-2] in S_ENDING:
        return w[:-1]
    return w


def _step2(w: str, r1: int) -> str:
    a = _ends(w, STEP2_A)
    if a:
        return w[: -len(a)] if len(w) - len(a) >= r1 else w
    if w.endswith("st") and len(w) - 2 >= r1 and len(w) >= 6 and w[-3] in ST_ENDING:
        return w[:-2]
    return w


def _step3(w: str, r1: int, r2: int) -> str:
    def in_r2(n: int) -> bool:
        return len(w) - n >= r2

    for s in ("end", "ung"):
        if w.endswith(s):
            if not in_r2(3):
                return w
            w = w[:-3]
            return w[:-2] if w.endswith("ig") and in_r2(2) and not w.endswith("eig") else w
    for s in ("isch", "ig", "ik"):
        if w.endswith(s):
            ok = in_r2(len(s)) and not w[: -len(s)].endswith("e")
            return w[: -len(s)] if ok else w
    for s in ("lich", "heit"):
        if w.endswith(s):
            if not in_r2(4):
                return w
            w = w[:-4]
            return w[:-2] if w.endswith(("er", "en")) and len(w) - 2 >= r1 else w
    if w.endswith("keit") and in_r2(4):
        w = w[:-4]
        for s in ("lich", "ig"):
            if w.endswith(s) and len(w) - len(s) >= r2:
                return w[: -len(s)]
    return w


def stem(word: str) -> str:
    """The Snowball German stem of a lower-case word ("ß" already folded to "ss")."""
    w = _mark(word)
    r1 = max(r1_start(w, VOWELS), 3)
    r2 = r1_start(w, VOWELS, r1_start(w, VOWELS))
    w = _step1(w, r1)
    w = _step2(w, r1)
    w = _step3(w, r1, r2)
    return w.lower().translate(UMLAUTS)


def read(word: str) -> str:
    """ "" for a stop word, else the stem."""
    return "" if word in STOP_WORDS else stem(word)
