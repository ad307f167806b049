"""Relative-date phrases per language, as data: one module per language.

Each module builds one ``Lang``: a compiled pattern whose named groups say
what matched, and the word tables that give the matched words their value.
The arithmetic lives in ``_time_calc`` and the matching logic in
``_time_intl``; nothing here computes a date.

Group names (a trailing digit allows a second word order, "la semana pasada"
/ "la próxima semana"): ``fix`` a word with a fixed meaning (FIXED), ``part``
a part of the day after it, ``anum``/``aunit`` N units ago, ``inum``/``iunit``
in N units, ``sdir``/``span`` last/this/next unit, ``wdir``/``wd``
last/next weekday; English only: ``blwd``/``anwd`` weekday before last / after
next, ``anspan`` unit after next, ``edir`` with ``season`` or ``holiday``, and
``otw`` (over the weekend).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..._text.lazy_re import lazy

#: Horizontal space inside a phrase, bounded so matching stays linear.
S = r"[ \t\u00a0]{1,3}"
#: Not inside a word, a URL or an address; not after a hyphen ("2-3"); not glued to
#: a "]" (so a word glued to a phrase annotated before stays glued on a second pass).
START = r"(?<![\w/@\]-])(?<!\w\.)"
#: Not followed by more word or by the rest of a URL or path.
END = r"(?!\w|[-./@]\w)"
#: "de" right after a span or weekday phrase (es, pt) gives it another sense.
NOT_BEFORE_DE = lazy(rf"{S}de(?!\w)")


def alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first so none hides a longer one.

    >>> alt(["tag", "tage", "tagen"])
    '(?:tagen|tage|tag)'
    """
    ordered = sorted(set(words), key=lambda w: (-len(w), w))
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", " ").replace(" ", S) for w in ordered) + ")"


def count(numbers: Iterable[str]) -> str:
    """A count in a phrase: one to three digits or one of the number words.

    >>> count(["zwei", "drei"])
    '(?:[0-9]{1,3}|(?:drei|zwei))'
    """
    return rf"(?:[0-9]{{1,3}}|{alt(numbers)})"


#: The digits a count in Han text is written with (ASCII and full-width), one by one.
HAN_DIGITS = "0123456789" + "".join(map(chr, range(0xFF10, 0xFF1A)))


def han_count(numerals: str) -> str:
    """A count in Han text: one to three ASCII or full-width digits, or of the ``numerals``,
    not inside a longer run of either."""
    digits = "0-9\uff10-\uff19"
    return rf"(?:(?<![{digits}])[{digits}]{{1,3}}|(?<![{numerals}])[{numerals}]{{1,3}})"


def words(text: str) -> frozenset[str]:
    """The words of ``text``, split on white space: a word table written as text
    (a call on a string literal keeps a long one as lines under ``ruff format``).

    >>> sorted(words("ich du wir"))
    ['du', 'ich', 'wir']
    """
    return frozenset(text.split())


def table(text: str) -> dict[str, str]:
    """A word table written as text: a line ``key: word, word, ...`` maps each word
    (several may be one phrase) to its key.

    >>> table("day: tag, tage\\n weekend: fin de semana")
    {'tag': 'day', 'tage': 'day', 'fin de semana': 'weekend'}
    """
    pairs = (line.partition(":")[::2] for line in text.strip().splitlines())
    return {word.strip(): key.strip() for key, entries in pairs for word in entries.split(",")}


def shifts(text: str) -> dict[str, int]:
    """A ``table`` whose keys are whole numbers (how many units a direction word shifts).

    >>> shifts("-1: letzte\\n 1: nächste")
    {'letzte': -1, 'nächste': 1}
    """
    return {word: int(key) for word, key in table(text).items()}


def starts(*tables: Iterable[str]) -> str:
    """A look-ahead on the first letters the phrases can start with: it fails fast
    at most positions, before the alternations run (about 4x faster on a turn).

    >>> starts(["vor", "in"], ["gestern"])
    '(?=[giv])'
    """
    firsts = sorted({w[0] for table in tables for w in table})
    return "(?=[" + "".join(re.escape(c) for c in firsts) + "])"


@dataclass(frozen=True)
class Lang:
    """One language's phrase pattern and word tables (all keys lower case).

    Attributes:
        name: ISO 639-1 code.
        phrase: the compiled pattern, matched on a lower-cased copy of the text.
        fixed: word -> (unit, shift): "gestern" -> ("day", -1), "去年" -> ("year", -1).
        units: unit word -> "day", "week", "weekend", "month" or "year".
        numbers: count word -> value (``FEW`` for "a few").
        dirs: direction word -> shift (-1 last, 0 this, 1 next, 2 after next).
        weekdays: weekday word -> ``date.weekday()``.
        calendar_weekdays: "last Friday" is last calendar week's Friday (zh, ja),
            not the latest Friday before the anchor.
        stopwords: frequent words that vote for the language (Latin script only).
        not_after: group kind or fixed word -> words that, just before the
            phrase, give it another sense ("guten" Morgen, "esta" mañana).
        lower_only: words that count only in lower case unless a sentence
            starts with them (a capital "Morgen" mid-sentence is the noun).
        past_cues: words that make "in N days" a duration ("in 3 Tagen gebaut").
        past_form: a word shape that does the same (a participle, a preterite).
        not_before: what, right after a phrase, makes it another sense.
        anchors: words one of which every match holds near its start (as
            ``patterns.ANCHORS`` for ``patterns.PHRASE``): only the text near them is
            searched; none, the whole text.
    """

    name: str
    phrase: re.Pattern[str]
    fixed: dict[str, tuple[str, int]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    numbers: dict[str, int] = field(default_factory=dict)
    dirs: dict[str, int] = field(default_factory=dict)
    weekdays: dict[str, int] = field(default_factory=dict)
    calendar_weekdays: bool = False
    stopwords: frozenset[str] = frozenset()
    not_after: dict[str, frozenset[str]] = field(default_factory=dict)
    lower_only: frozenset[str] = frozenset()
    past_cues: frozenset[str] = frozenset()
    past_form: re.Pattern[str] | None = None
    not_before: re.Pattern[str] | None = None
    anchors: tuple[str, ...] = ()
