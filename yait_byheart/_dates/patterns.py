"""Compiled patterns and tiny word converters for ``_time``.

Kept apart from the logic (as tomli keeps ``_re.py``) so the patterns can be
read, and audited for linear time, in one place.

Every phrase pattern is matched against an ASCII-lower-cased copy of the text
(same length, same positions), so the patterns are written in lower case and
compiled without ``re.IGNORECASE``: that keeps matching exactly "these ASCII
words in any case" and avoids the Unicode case-folding quirks of IGNORECASE
(the Kelvin sign matching ``k``, long s matching ``s``).

Linear time: no pattern nests a quantifier inside another, and every
repetition is either bounded (``{1,3}``, ``{1,4}``) or over a single
character class, so the work per start position is bounded by a constant.
"""

from __future__ import annotations

from .._text.lazy_re import lazy

# --- tiny converters --------------------------------------------------------

MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

#: lower-case month name or abbreviation -> month number (1..12)
MONTHS: dict[str, int] = {}
for _i, _name in enumerate(MONTH_NAMES, start=1):
    MONTHS[_name.lower()] = _i
    MONTHS[_name[:3].lower()] = _i
MONTHS["sept"] = 9

#: lower-case weekday name or abbreviation -> ``date.weekday()`` (Monday is 0)
WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0,
    "tuesday": 1, "tues": 1, "tue": 1,
    "wednesday": 2, "weds": 2, "wed": 2,
    "thursday": 3, "thurs": 3, "thur": 3, "thu": 3,
    "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5,
    "sunday": 6, "sun": 6,
}  # fmt: skip

#: Abbreviations that are also common English words ("where I last sat",
#: "the last sun"): accepted only when written with a capital letter.
AMBIGUOUS_WEEKDAYS: frozenset[str] = frozenset({"mon", "wed", "sat", "sun"})

_WORD_NUMBERS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11,
    "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20,
}  # fmt: skip

#: Count words, for spotting ranges ("two or three days ago").
NUMBER_WORDS: frozenset[str] = frozenset(_WORD_NUMBERS) - {"a", "an"} | {"couple", "few"}

#: Sentinel returned by ``number_value`` for "a few": not a number, a range.
FEW = -1


def number_value(word: str) -> int:
    """Value of a count matched by ``NUM``: digits, one..twenty, a/an, a couple (of), a few.

    Returns ``FEW`` for "a few"; the caller decides what range that means.

    >>> number_value("twelve"), number_value("3"), number_value("a couple of")
    (12, 3, 2)
    """
    w = " ".join(word.split())
    if w.isdigit():
        return int(w)
    if w.endswith("few"):
        return FEW
    if "couple" in w:
        return 2
    return _WORD_NUMBERS[w]


# --- pieces of the phrase pattern --------------------------------------------

# Horizontal white space between the words of one phrase, bounded so that a
# megabyte of spaces costs each start position at most 3 steps. A newline
# inside a phrase ("last\nweek") is not one phrase.
_S = r"[ \t\u00a0]{1,3}"

_WEEKDAY = (
    r"(?:monday|mon|tuesday|tues|tue|wednesday|weds|wed|thursday|thurs|thur|thu"
    r"|friday|fri|saturday|sat|sunday|sun)"
)
_PART_OF_DAY = r"(?:morning|afternoon|evening|night)"
# Longer words first so the alternation rarely has to back up ("seventeen"
# before "seven").
_NUM = (
    r"(?:[0-9]{1,4}|twenty|nineteen|eighteen|seventeen|sixteen|fifteen|fourteen"
    r"|thirteen|twelve|eleven|ten|nine|eight|seven|six|five|four|three|two|one"
    rf"|(?:a{_S})?couple(?:{_S}of)?|(?:a{_S})?few|an|a)"
)
_UNIT = r"(?:days?|week-?ends?|weeks?|months?|years?)"

#: One pass over the (lower-cased) text finds every candidate phrase; the
#: named group that matched says which family it belongs to. The logic in
#: ``_time`` then applies the guards that need context (the word before, the
#: words after) and may reject the candidate.
PHRASE = lazy(
    # Not inside a word, a URL or an address ("x.com/today", "www.today.com"),
    # not glued to a "]" (a word glued to a phrase annotated before, "昨天today"),
    # not after a hyphen ("2-3 days ago" is a range), not the tail of "1,000"
    # or "1.5"; "...yesterday" is fine. The look-ahead on the possible first
    # letters is redundant but cheap: it fails on most characters before the
    # look-behinds run (11 -> 7 microseconds per 100 characters).
    r"(?=[0-9acdefilnosty])(?<![\w/@\]-])(?<!\w\.)(?<![0-9],)"
    r"(?:"
    rf"(?P<before_last>the{_S}(?P<bl_unit>day|week-?end|week|month|year){_S}before{_S}last)"
    rf"|(?P<dayword>(?:the{_S})?day{_S}before{_S}yesterday|(?:the{_S})?day{_S}after{_S}tomorrow"
    rf"|yesterday|tomorrow)(?P<dw_part>{_S}{_PART_OF_DAY})?"
    r"|(?P<today>today|tonight)"
    rf"|(?P<part>this{_S}(?:morning|afternoon|evening)|last{_S}night)"
    rf"|(?P<wdir>last|(?:this|the){_S}past|this{_S}coming|next){_S}(?P<wd>{_WEEKDAY})"
    rf"(?P<wd_part>{_S}{_PART_OF_DAY})?"
    rf"|(?P<sdir>last|(?:this|the){_S}past|this{_S}coming|this|next){_S}"
    r"(?P<span>week-?end|week|month|year)"
    rf"|(?P<num>{_NUM}){_S}(?P<unit>{_UNIT}){_S}(?P<adir>ago|from{_S}(?:now|today))"
    # "in a week" is ahead; "(I took part) in a week ago" is not: "a week ago" is matched next.
    rf"|in{_S}(?P<inum>{_NUM}){_S}(?P<iunit>days?|weeks?|months?|years?)(?!{_S}ago\b)"
    rf"(?P<itime>(?:'s|\u2019s|'|\u2019)?{_S}time)?"
    r")"
    # A possessive belongs to the phrase: "last year's [2022] trip".
    r"(?P<poss>(?:'|\u2019)s)?"
    # Not followed by more word ("last weekends", "this week-long") or by the
    # rest of a URL, path or address ("today/page", "today.com", "today@x").
    r"(?!\w|[-./@]\w)"
)

#: Cheap pre-check, a necessary condition for any PHRASE match (tests hold
#: it so): one of ANY_OF; or a unit word after horizontal space ("in 3 days",
#: "this week", where "in" or "this" alone says nothing); or "this" with a
#: part of the day ("this morning"). Substring tests run in C: with them a
#: 100-character turn without a date phrase costs about 2-4 microseconds
#: instead of the ~8 of the big pattern, and "birthday" or "Sunday" alone
#: does not wake it.
ANY_OF: tuple[str, ...] = (
    "last", "next", "ago", "yesterday", "today", "tonight", "tomorrow", "past",
    "coming",
)  # fmt: skip
UNIT_AFTER_SPACE: tuple[str, ...] = tuple(
    space + unit for space in " \t\u00a0" for unit in ("day", "week", "month", "year")
)
THIS_WITH: tuple[str, ...] = ("morn", "noon", "evening")
#: On ASCII text the pre-check above is one set test instead: every PHRASE match holds one
#: of these as a whole word (the pattern's look-arounds keep word characters off both of
#: its ends, and each alternative holds a direction word, "ago", a day word, a part of the
#: day after "this", or a unit after "this" or "in N"); tests hold it so.
WHOLE_WORDS: tuple[str, ...] = (
    *ANY_OF, "morning", "afternoon", "evening", "day", "days", "week", "weeks", "weekend",
    "weekends", "month", "months", "year", "years",
)  # fmt: skip

#: Every PHRASE match holds one of these, less than ANCHOR_REACH characters after its start
#: (the pattern's repetitions are bounded): only the text near them is searched, so a long
#: turn mentioning "day" once is not scanned whole ("today" and "yesterday" hold "day").
ANCHORS: tuple[str, ...] = (
    "last", "next", "past", "coming", "tomorrow", "tonight", "day", "week", "month", "year",
    "morn", "noon", "evening",
)  # fmt: skip
ANCHOR_REACH = 64
#: What a search around an anchor reads past it: the rest of a match and its look-ahead.
ANCHOR_TAIL = 96

#: The two words before a phrase ("more than"), matched anchored on the
#: reversed 40 characters before it, so the cost is the length of the words
#: read, not of the window. A bracket stops it: words inside an earlier
#: annotation are never read as context.
PREV_WORDS_REV = lazy(r"[^\w\[\]]{0,4}([\w'\u2019]+)(?:[^\w\[\]]{1,4}([\w'\u2019]+))?")
#: A dash right before the phrase, reversed: "2 - 3 days ago" is a range.
PREV_DASH_REV = lazy(r"[ \t\u00a0]{0,3}[-\u2013\u2014]")
#: What follows a phrase: an existing annotation, "of", "night live", "or two".
NEXT_BRACKET = lazy(r"[ \t\u00a0]{0,3}\[")
NEXT_OF = lazy(rf"{_S}of(?!\w)")
NEXT_NIGHT_LIVE = lazy(rf"{_S}night{_S}live(?!\w)")
NEXT_OR = lazy(rf"{_S}or{_S}(?!so(?!\w))")
#: Words in the clause before "in N days", nearest last.
CLAUSE_WORD = lazy(r"[\w'\u2019]+")
#: Where a clause starts; "]" so a previous annotation is never read as words.
CLAUSE_BREAK = lazy(r"[.!?;:,\n()\[\]\"\u201c\u201d\u2014\u2013]")

# --- ``when`` strings -------------------------------------------------------

_TIME = (
    r"(?P<{p}hour>[0-9]{{1,2}})(?:(?::(?P<{p}min>[0-9]{{2}})(?::[0-9]{{2}})?)"
    r"[ ]?(?P<{p}ampm>[ap]\.?m\.?)?|[ ]?(?P<{p}ampm2>[ap]\.?m\.?))"
)
#: "1:56 pm on 8 May, 2023", "Monday, May 8th 2023", "8 May 2023 13:56".
#: Matched with ``fullmatch`` on a stripped, lower-cased string of at most
#: ``WHEN_MAX`` characters.
WHEN_TEXT = lazy(
    rf"(?:{_TIME.format(p='t')}(?:[ ]on[ ]|,?[ ]))?"
    r"(?:(?P<wday>[a-z]{3,9})\.?,?[ ])?"
    r"(?:(?P<d1>[0-9]{1,2})(?:st|nd|rd|th)?[ ](?:of[ ])?(?P<m1>[a-z]{3,9})\.?"
    r"|(?P<m2>[a-z]{3,9})\.?[ ](?P<d2>[0-9]{1,2})(?:st|nd|rd|th)?)"
    r",?[ ](?P<year>[0-9]{4})"
    rf"(?:,?[ ](?:at[ ])?{_TIME.format(p='u')})?"
)
#: ISO 8601 date or date-time: "2023-05-08", "2023-05-08T13:56:00.5+02:00".
WHEN_ISO = lazy(
    r"(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[t ](?P<h>[0-9]{2}):(?P<mi>[0-9]{2})(?::(?P<s>[0-9]{2})(?:[.,][0-9]{1,9})?)?"
    r"(?:z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)
#: Longer strings are not dates; refusing them keeps parse_when O(1).
WHEN_MAX = 64
#: Runs of white space collapse to one space before matching.
SPACES = lazy(r"\s+")

# --- annotations read back ----------------------------------------------------

_MONTH = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November"
    r"|December)"
)


def _annotation_end(p: str) -> str:
    """One end of an annotation as `calc` writes it: "20 May 2023", "20 May", "20",
    "May 2023", "May", "2023" (the missing parts come from the other end)."""
    return rf"(?:(?P<{p}d>[0-9]{{1,2}})[ ]?)?(?:(?P<{p}m>{_MONTH})[ ]?)?(?P<{p}y>[0-9]{{4}})?"


#: An annotation resolve_time inserted: " [20 May 2023]", " [15-21 May 2023]",
#: " [29 May-4 June 2023]", " [April 2023]", " [June-August 2022]", " [2022]".
ANNOTATION = lazy(rf" \[{_annotation_end('a')}(?:-{_annotation_end('b')})?\]")
