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


# Each letter as "v" (vowel) or "c" (consonant); y is settled by the letter before it.
_CV = str.maketrans({chr(c): ("v" if chr(c) in "aeiou" else "c") for c in range(128)})


def _cv(word: str) -> str:
    """The word as "c"/"v" letters: a consonant is a letter other than a, e, i, o, u, and
    other than y after a consonant (one C-level translate; a loop only for a y)."""
    if "y" not in word and word.isascii():
        return word.translate(_CV)
    out = []
    previous_consonant = False  # y at the start is a consonant, as after a vowel
    for ch in word:
        consonant = (not previous_consonant) if ch == "y" else ch not in _VOWELS
        out.append("c" if consonant else "v")
        previous_consonant = consonant
    return "".join(out)


def _is_consonant(word: str, i: int) -> bool:
    """Whether letter `i` of `word` is a consonant (see `_cv`)."""
    return _cv(word[: i + 1])[-1] == "c"


def _measure(stem: str) -> int:
    """m in the paper: the number of vowel-consonant sequences in [C](VC)^m[V]."""
    return _cv(stem).count("vc")


def _has_vowel(stem: str) -> bool:
    """*v* in the paper."""
    return "v" in _cv(stem)


def _ends_double_consonant(word: str) -> bool:
    """*d in the paper."""
    return len(word) >= 2 and word[-1] == word[-2] and _cv(word)[-1] == "c"


def _ends_cvc(word: str) -> bool:
    """*o in the paper: consonant-vowel-consonant, the last not w, x or y."""
    return len(word) >= 3 and _cv(word).endswith("cvc") and word[-1] not in "wxy"


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


# Each rule's suffix ends in two letters that pick it out: a step looks its candidates up by a
# word's last two letters (longest first), where trying every suffix length took a slice and a
# look-up each, mostly for nothing (a new conversation stems thousands of words).
Rules = dict[str, tuple[tuple[str, str], ...]]


def _by_last_two(rules: tuple[tuple[str, str], ...]) -> Rules:
    """`rules` (suffix, replacement) grouped by the suffix's last two letters, longest first."""
    out: dict[str, list[tuple[str, str]]] = {}
    for suffix, replacement in sorted(rules, key=lambda r: -len(r[0])):
        out.setdefault(suffix[-2:], []).append((suffix, replacement))
    return {tail: tuple(found) for tail, found in out.items()}


def _longest(w: str, rules: Rules) -> tuple[str, str] | None:
    """The rule with the longest suffix `w` ends with, or None."""
    for rule in rules.get(w[-2:], ()):
        if w.endswith(rule[0]):
            return rule
    return None


def _replace_longest(w: str, rules: Rules, min_measure: int) -> str:
    """Apply the rule with the longest matching suffix, if its stem's measure allows it.

    Only the longest match is tried: a failed condition does not fall through to a shorter one.
    """
    rule = _longest(w, rules)
    if rule is None:
        return w
    stem = w[: -len(rule[0])]
    return stem + rule[1] if _measure(stem) > min_measure else w


_STEP2_RULES, _STEP3_RULES = _by_last_two(_STEP2), _by_last_two(_STEP3)
_STEP4_RULES = _by_last_two(tuple((s, "") for s in _STEP4))


def _step4(w: str) -> str:
    rule = _longest(w, _STEP4_RULES)
    if rule is None:
        return w
    best = rule[0]
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
    # Each step is called only if the word ends as one of its rules needs: most words pass
    # most steps unchanged, and a new conversation stems thousands of words.
    w = _step1a(word) if word[-1] == "s" else word
    if w.endswith(("ed", "ing")):
        w = _step1b(w)
    if w.endswith("y"):
        w = _step1c(w)
    if w[-2:] in _STEP2_RULES:
        w = _replace_longest(w, _STEP2_RULES, 0)
    if w[-2:] in _STEP3_RULES:
        w = _replace_longest(w, _STEP3_RULES, 0)
    if w[-2:] in _STEP4_RULES:
        w = _step4(w)
    return _step5(w) if w[-1:] in ("e", "l") else w
