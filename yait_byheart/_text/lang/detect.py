"""Which Latin-script language a text is in, from its stop words and letters.

Each stemmed Latin language scores one per word of the text in its stop list, less one per
word holding a letter its alphabet lacks ("apărarea" cannot be Spanish). An unknown language
("und") scores one per word holding a letter that none of them uses (ş, ı, ă, ư, ł, ...).
English wins ties and is the reading when the evidence is thin: another language needs a
higher score than English and at least two (or, in a text with non-ASCII letters, a fifth
of its words). A text with no evidence at all (a name, "ok!") is read as English, as byheart
always read it; a question that says too little gets every plausible reading (`candidates`).

>>> latin(["wie", "viele", "punkte", "gab", "die", "verteidigung", "ab"])
'de'
>>> latin_ascii([b"what", b"did", b"the", b"panthers", b"score"])
'en'
>>> latin(["câte", "puncte", "a", "cedat", "apărarea", "în", "finală"])
'und'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import filterfalse, repeat
from typing import cast

from .de_data import STOP_WORDS as DE
from .en_data import STOP_WORDS as EN
from .nl_data import STOP_WORDS as NL
from .romance_data import ES_STOP, FR_STOP, IT_STOP, PT_STOP
from .script_data import ALPHABETS

_STOPS = {"en": EN, "de": DE, "fr": FR_STOP, "es": ES_STOP, "it": IT_STOP, "pt": PT_STOP,
          "nl": NL}  # fmt: skip
# Ties go to the first: English, then a letter no stemmed language uses (strong evidence),
# then the stop lists (short stop words are shared by chance).
_ORDER = ("en", "und", *list(_STOPS)[1:])


def _index() -> dict[str | bytes, tuple[str, ...]]:
    index: dict[str | bytes, tuple[str, ...]] = {}
    for lang, words in _STOPS.items():
        for w in words:
            index[w] = (*index.get(w, ()), lang)
            if w.isascii():
                index[w.encode()] = index[w]
    return index


_STOP_INDEX = _index()
# ASCII stop words of the other languages that English lacks: an ASCII text with none of them
# is English without counting anything (most English text; the fast path).
_NOT_EN = frozenset(w for w in _STOP_INDEX if isinstance(w, bytes) and w.decode() not in EN)
_KNOWN_LETTERS = frozenset().union(*ALPHABETS.values())
# +1 for each ASCII stop word of another language that English lacks, -1 for each of English's
# that no other language has. For any language L, score[L] - score["en"] is at most the sum
# of these over a text's words (L's stop words beyond English's are among the first, English's
# beyond L's include the second): at 0 or below, no language beats English. One pass in C
# settles most English texts that hold a word such as "die" or "con", without counting.
_ENGLISH_LEAD = {w: 1 for w in _NOT_EN} | {
    w: -1 for w, langs in _STOP_INDEX.items() if isinstance(w, bytes) and langs == ("en",)
}


def latin_ascii(words: Sequence[bytes]) -> str:
    """`latin` for the words of an ASCII text, as bytes (most of them English: no counting)."""
    if _NOT_EN.isdisjoint(words) or sum(map(_ENGLISH_LEAD.get, words, repeat(0))) <= 0:
        return "en"
    return _decide(_scores(words), words)


def latin(words: Sequence[str]) -> str:
    """The language code of folded Latin-script words: en, de, fr, es, it, pt, nl, or und
    for a language none of them is."""
    return _decide(_scores(words), words)


def candidates(words: Sequence[str] | Sequence[bytes]) -> list[str]:
    """The reading `latin` chooses, then, when its lead is under two points, the others with
    any evidence and the unknown language (best first): a short question may say too little.

    >>> candidates([b"wann", b"startete", b"sky", b"digital"])
    ['en', 'de', 'und']
    """
    score = _scores(words)
    chosen = _decide(score, words)
    rest = sorted((lang for lang in _ORDER if lang != chosen), key=lambda x: -score[x])
    if score[chosen] >= 2 + max(score[lang] for lang in rest):
        return [chosen]
    # An unknown language leaves no stop words to count: it is always a candidate then.
    return [chosen, *(lang for lang in rest if score[lang] >= 1 or lang == "und")]


def _scores(words: Sequence[str] | Sequence[bytes]) -> dict[str, int]:
    score = dict.fromkeys(_ORDER, 0)
    # Counted in C, then one step per distinct stop word: a long text has thousands of words.
    stops: Counter[str | bytes] = Counter(filter(_STOP_INDEX.__contains__, words))
    for w, n in stops.items():
        for lang in _STOP_INDEX[w]:
            score[lang] += n
    if words and isinstance(words[0], str):  # bytes are ASCII: no letter evidence
        for w in filterfalse(str.isascii, cast("Sequence[str]", words)):
            _letter_evidence(w, score)
    return score


def _decide(score: dict[str, int], words: Sequence[str] | Sequence[bytes]) -> str:
    best = "en"
    for lang in _ORDER:
        if score[lang] > score[best]:
            best = lang
    # One stop word in a short ASCII text ("See ya!") is chance; letters are not.
    if best == "en" or score[best] < 1:
        return "en"
    if score[best] >= 2 or (5 * score[best] >= len(words) and _has_letters(words)):
        return best
    return "en"


def _has_letters(words: Sequence[str] | Sequence[bytes]) -> bool:
    return any(isinstance(w, str) and not w.isascii() for w in words)


def _letter_evidence(word: str, score: dict[str, int]) -> None:
    """Count a non-ASCII word against each language whose alphabet lacks one of its letters,
    and for "und" when no stemmed language has them all."""
    if not _KNOWN_LETTERS.issuperset(word):
        score["und"] += 1
    for lang, alphabet in ALPHABETS.items():
        if not alphabet.issuperset(word):
            score[lang] -= 1
