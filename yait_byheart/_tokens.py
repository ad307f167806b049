"""Tokenization for retrieval: words, lower-cased, stop words dropped, Porter-stemmed.

Every run of letters or digits is a token, whatever its length, so "5" and "I" survive
(a two-character minimum would drop both).

>>> tokenize("We decided on 55 euro a month, I think.")
['decid', '55', 'euro', 'month', 'think']
"""

from __future__ import annotations

import re
from collections import Counter

from ._stem import stem

# Letters and digits in any script; "_" is a word character to `\w` but not to a reader.
_WORD = re.compile(r"[^\W_]+")

# Function words that match almost every stretch of dialogue. Dropping them keeps scoring
# to the postings of content words (a query's "the" alone would touch every unit).
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve don didn doesn isn wasn im
    """.split()
)

# word -> its stem, or "" for a stop word: one dict lookup per word on the hot path.
_stem_cache: dict[str, str] = dict.fromkeys(STOP_WORDS, "")
# The vocabulary of a conversation is small next to its length; the cache bound only
# guards against adversarial input (random strings) growing it without end.
_STEM_CACHE_MAX = 200_000


def _make_room(n: int) -> None:
    if len(_stem_cache) + n > _STEM_CACHE_MAX:
        _stem_cache.clear()  # adversarial input only: start over rather than grow
        _stem_cache.update(dict.fromkeys(STOP_WORDS, ""))


def _stem_miss(word: str) -> str:
    _make_room(1)
    s = _stem_cache[word] = stem(word)
    return s


def tokenize(text: str) -> list[str]:
    """Content-word stems of `text`, in order, repeats kept."""
    get = _stem_cache.get
    out = []
    for word in _WORD.findall(text.lower()):
        s = get(word)
        if s is None:
            s = _stem_miss(word)
        if s:
            out.append(s)
    return out


def term_counts(text: str) -> dict[str, int]:
    """How often each content-word stem occurs in `text`.

    Every step but stemming a word never seen before runs in C (set difference, `map` over
    the cache, `Counter`): reopening a 100,000-turn conversation spends most of its time here.

    >>> term_counts("Ovens, oven and the OVEN!")
    {'oven': 3}
    """
    words = _WORD.findall(text.lower())
    new = set(words).difference(_stem_cache)
    _make_room(len(new))
    for word in new:
        _stem_cache[word] = stem(word)
    counts = Counter(map(_stem_cache.__getitem__, words))
    counts.pop("", None)  # stop words
    return dict(counts)
