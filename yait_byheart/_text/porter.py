"""The Porter stemmer, written from the published algorithm.

Source: M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980, pp. 130-137.
Step and rule names below follow the paper. Two departures, both from Porter's own later
revision of the reference implementation: step 2 maps "bli" (not "abli") to "ble" and adds
"logi" -> "log".

>>> [stem(w) for w in ["caresses", "ponies", "running", "happily", "relational", "hopeful"]]
['caress', 'poni', 'run', 'happili', 'relat', 'hope']
"""

from __future__ import annotations

_VOWELS = frozenset("aeiou")


def _is_consonant(word: str, i: int) -> bool:
    """A consonant is a letter other than a, e, i, o, u, and other than y after a consonant."""
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in the paper: the number of vowel-consonant sequences in [C](VC)^m[V]."""
    m = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    """*v* in the paper."""
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    """*d in the paper."""
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """*o in the paper: consonant-vowel-consonant, the last not w, x or y."""
    if len(word) < 3:
        return False
    n = len(word)
    return (
        _is_consonant(word, n - 3)
        and not _is_consonant(word, n - 2)
        and _is_consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _step1a(w: str) -> str:
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("ies"):
        return w[:-2]
    if w.endswith("ss"):
        return w
    if w.endswith("s"):
        return w[:-1]
    return w


def _step1b(w: str) -> str:
    if w.endswith("eed"):
        return w[:-1] if _measure(w[:-3]) > 0 else w
    for suffix in ("ed", "ing"):
        if w.endswith(suffix) and _has_vowel(w[: -len(suffix)]):
            w = w[: -len(suffix)]
            if w.endswith(("at", "bl", "iz")):
                return w + "e"
            if _ends_double_consonant(w) and w[-1] not in "lsz":
                return w[:-1]
            if _measure(w) == 1 and _ends_cvc(w):
                return w + "e"
            return w
    return w


def _step1c(w: str) -> str:
    if w.endswith("y") and _has_vowel(w[:-1]):
        return w[:-1] + "i"
    return w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"),
    ("ical", "ic"), ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


def _replace_longest(w: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """Apply the rule with the longest matching suffix, if its stem's measure allows it.

    Only the longest match is tried: a failed condition does not fall through to a shorter one.
    """
    best: tuple[str, str] | None = None
    for suffix, replacement in rules:
        if w.endswith(suffix) and (best is None or len(suffix) > len(best[0])):
            best = (suffix, replacement)
    if best is None:
        return w
    stem = w[: -len(best[0])]
    return stem + best[1] if _measure(stem) > min_measure else w


def _step4(w: str) -> str:
    best = max((s for s in _STEP4 if w.endswith(s)), key=len, default=None)
    if best is None:
        return w
    stem = w[: -len(best)]
    if _measure(stem) <= 1:
        return w
    if best == "ion" and not stem.endswith(("s", "t")):
        return w
    return stem


def _step5(w: str) -> str:
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            w = stem
    if w.endswith("ll") and _measure(w) > 1:
        w = w[:-1]
    return w


def stem(word: str) -> str:
    """Reduce a lower-case English word to its Porter stem; words of one or two letters stay."""
    if len(word) <= 2:
        return word
    w = _step1a(word)
    w = _step1b(w)
    w = _step1c(w)
    w = _replace_longest(w, _STEP2, 0)
    w = _replace_longest(w, _STEP3, 0)
    w = _step4(w)
    return _step5(w)
