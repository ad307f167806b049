"""English phrases beyond ``_time_re.PHRASE``: the Friday before last, the week
after next, in a fortnight, over the weekend, seasons and fixed-date holidays (with last,
this or next, or after "on" in a sentence told in the past)."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from .. import patterns as R
from . import END, START, Lang, S, alt, starts, words

#: Fixed-date holidays: lower-case name -> (month, day).
HOLIDAYS: dict[str, tuple[int, int]] = {
    "christmas": (12, 25), "christmas day": (12, 25), "xmas": (12, 25),
    "christmas eve": (12, 24), "boxing day": (12, 26), "new year's eve": (12, 31),
    "new year\u2019s eve": (12, 31), "new years eve": (12, 31), "new year's day": (1, 1),
    "new year\u2019s day": (1, 1), "new years day": (1, 1), "halloween": (10, 31),
    "valentine's day": (2, 14), "valentine\u2019s day": (2, 14), "valentines day": (2, 14),
    "valentine's": (2, 14), "independence day": (7, 4), "the fourth of july": (7, 4),
    "the 4th of july": (7, 4), "st patrick's day": (3, 17), "st. patrick's day": (3, 17),
}  # fmt: skip
SEASONS: dict[str, str] = {
    "spring": "spring", "summer": "summer", "autumn": "autumn", "fall": "autumn",
    "winter": "winter",
}  # fmt: skip
DIRS: dict[str, int] = {"last": -1, "this past": -1, "this": 0, "next": 1}
UNITS: dict[str, str] = {
    "week": "week", "weekend": "weekend", "week-end": "weekend", "month": "month", "year": "year",
    "fortnight": "fortnight",
}  # fmt: skip
_WEEKDAY = alt(R.WEEKDAYS)

PHRASE = lazy(
    START
    + starts(["the", "in", "a", "one", "over"], DIRS)
    + "(?:"
    + rf"the{S}(?P<blwd>{_WEEKDAY}){S}before{S}last"
    + rf"|the{S}(?P<anwd>{_WEEKDAY}){S}after{S}next"
    + rf"|the{S}(?P<anspan>week-?end|week|month|year){S}after{S}next"
    + rf"|in{S}(?P<inum>a|one){S}(?P<iunit>fortnight)(?:(?:'s|\u2019s)?{S}time)?"
    + rf"|(?P<anum>a|one){S}(?P<aunit>fortnight){S}ago"
    + rf"|(?P<inum2>a|one){S}(?P<iunit2>fortnight){S}from{S}(?:now|today)"
    + rf"|(?P<otw>over{S}the{S}week-?end)"
    + rf"|(?P<edir>{alt(DIRS)}){S}(?:(?P<season>{alt(SEASONS)})|(?P<holiday>{alt(HOLIDAYS)}))"
    + rf"|on{S}(?P<onhol>{alt(HOLIDAYS)})"
    + ")"
    + r"(?P<poss>(?:'|\u2019)s)?"
    + END
)

#: Every PHRASE match holds one of these less than ``patterns.ANCHOR_REACH`` characters after
#: its start (tests hold it so): "before" or "after" of the pairs, the fortnight, the week of
#: the weekend, a season, or a word of each holiday. Holding "week" or "year", most long
#: turns are read by this pattern, which then searches only near these.
ANCHORS: tuple[str, ...] = (
    "before", "after", "fortnight", "week", *SEASONS, "christmas", "xmas", "boxing", "year",
    "halloween", "valentine", "independence", "july", "patrick",
)  # fmt: skip

LANG = Lang(
    name="en",
    phrase=PHRASE,
    units=UNITS,
    numbers={"a": 1, "one": 1},
    dirs=DIRS,
    weekdays=R.WEEKDAYS,
    not_after=dict.fromkeys(
        ("season", "holiday"), words("the a an my your his her its our their this every each one's")
    ),
    lower_only=frozenset({"last", "next", "this"}),
    past_cues=words("""
        was were did had took done got made built finished wrote learned learnt been ever never
        haven't hasn't i've we've
    """),
    anchors=ANCHORS,
)
#: Words of a sentence that make "over the weekend" the weekend just gone.
PAST_SENTENCE = lazy(
    r"(?<![\w'])(?:was|were|went|did|had|got|took|came|saw|made|met|spent|ran|been|[a-z]{2,}ed)"
    r"(?![\w'])"
)
#: ... and words that make it another weekend: the future, or the present of a habit
#: ("the shop is closed over the weekend").
FUTURE_SENTENCE = lazy(
    r"(?<![\w'])(?:will|won't|gonna|going|plan|planning|need|needs|want|wants|hope|should|would"
    r"|is|are|am|usually|always|every"
    r"|could|might|can|let's|\w+'ll|\w+\u2019ll)(?![\w'])"
)
