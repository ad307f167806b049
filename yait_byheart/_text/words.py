"""Text to words, script by script: what a reader of each script would call a word.

Text is normalised first (NFKC, case folding, invisible characters removed), so "Straße" and
"STRASSE", or a full-width "Ｂｅｒｌｉｎ" and "Berlin", are the same word. A word is a letter or
digit followed by letters, digits and combining marks. Scripts written without spaces (Han,
Kana, Hangul, Thai, Lao, Khmer, Myanmar) are read as overlapping character bigrams, a lone
character as itself, as Lucene's CJK analyzer does (its CJKBigramFilter).

>>> split(fold("我在 Berlin 住了三年"))
[('我在', True), ('berlin', False), ('住了', True), ('了三', True), ('三年', True)]
>>> words(fold("नमस्ते दुनिया"))
['नमस्ते', 'दुनिया']
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

from .words_re import (
    ANY_CLUSTERED,
    ANY_IGNORED,
    ANY_MARK,
    ANY_NO_SPACE,
    CLUSTER,
    IGNORED,
    NON_ASCII_WORD,
    RUN_OR_WORD,
    SCRIPT_STARTS,
    WORD,
)

_STARTS = [start for start, _ in SCRIPT_STARTS]
_NAMES = [name for _, name in SCRIPT_STARTS]


def fold(text: str) -> str:
    """`text` in NFKC, case-folded, with invisible characters (joiners, marks of direction,
    variation selectors, soft hyphens, tatweel) removed."""
    # Invisible characters go first, so that a mark they separated composes with its letter.
    if ANY_IGNORED.search(text) is not None:
        text = text.translate(IGNORED)
    folded = unicodedata.normalize("NFKC", text).casefold()
    # Case folding writes Turkish "İ" as "i" plus a combining dot that "i" already has.
    return folded.replace("i\u0307", "i") if "\u0307" in folded else folded


def has_no_space_script(folded: str) -> bool:
    """Whether `folded` holds any character of a script written without spaces."""
    return ANY_NO_SPACE.search(folded) is not None


def ascii_words_only(folded: str) -> bool:
    """Whether every word of folded text (holding no script written without spaces) is ASCII:
    its other characters (quotes, dashes, symbols, emoji) only separate words."""
    return NON_ASCII_WORD.search(folded) is None and ANY_MARK.search(folded) is None


def words(folded: str) -> list[str]:
    """The words of folded text that holds no script written without spaces."""
    return WORD.findall(folded)


def bigrams(run: str) -> list[str]:
    """Overlapping pairs of characters of `run` (a base letter keeps its marks), or the one.

    >>> bigrams("北京大学"), bigrams("人")
    (['北京', '京大', '大学'], ['人'])
    """
    units: list[str] | str = CLUSTER.findall(run) if ANY_CLUSTERED.search(run) else run
    if len(units) < 2:
        return [units[0]] if units else []
    return [units[i] + units[i + 1] for i in range(len(units) - 1)]


def split(folded: str) -> list[tuple[str, bool]]:
    """Every token of folded text in order, each with True for a bigram (kept as it is) and
    False for a word (to be stemmed by its language)."""
    out: list[tuple[str, bool]] = []
    for run, word in RUN_OR_WORD.findall(folded):
        if run:
            out.extend((gram, True) for gram in bigrams(run))
        else:
            out.append((word, False))
    return out


def script_of(word: str) -> str:
    """The script of a word's first character: latin, greek, cyrillic, arabic, devanagari or
    other (digits count as latin)."""
    return _NAMES[bisect_right(_STARTS, ord(word[0])) - 1]
