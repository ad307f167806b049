"""The days a text's date annotations cover, read back from what `resolve_time` wrote.

A question asked on 25 May 2023 about "last weekend" is annotated "last weekend [20-21 May
2023]"; retrieval then favours what was said on those days. Only the formats of `calc` are
read, so a bracket the user typed that is not one of them is ignored.

>>> annotated_spans("what did I do last weekend [20-21 May 2023]?")
[(datetime.date(2023, 5, 20), datetime.date(2023, 5, 21))]
>>> annotated_spans("in spring [March-May 2023] and in [2022]")
[(datetime.date(2023, 3, 1), datetime.date(2023, 5, 31)), (datetime.date(2022, 1, 1), \
datetime.date(2022, 12, 31))]
>>> annotated_spans("[29 May-4 June 2023]")
[(datetime.date(2023, 5, 29), datetime.date(2023, 6, 4))]
>>> annotated_spans("a [note], [20] and [31 June 2023]")
[]
>>> without_annotations("what did I do last weekend [20-21 May 2023]?")
'what did I do last weekend?'
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from .calc import MONTH_NAMES
from .patterns import ANNOTATION

_MONTHS = {name: i for i, name in enumerate(MONTH_NAMES, 1)}


def annotated_spans(text: str) -> list[tuple[date, date]]:
    """The first and last day of each date annotation in `text`, in order."""
    spans = []
    for m in ANNOTATION.finditer(" " + text if text.startswith("[") else text):
        span = _span(m)
        if span is not None:
            spans.append(span)
    return spans


def asked_days(question: str) -> list[tuple[int, int]]:
    """The days a question's annotations name, as ordinal ranges: what compose and recall
    both favour ("last weekend [13-14 May 2023]")."""
    return [(a.toordinal(), b.toordinal()) for a, b in annotated_spans(question)]


def said_on(first: int, last: int, days: list[tuple[int, int]]) -> bool:
    """Whether a stretch said from day `first` to day `last` (ordinals; 0 or first > last:
    undated) meets one of `days` (`asked_days`)."""
    return 0 < first <= last and any(first <= b and a <= last for a, b in days)


def without_annotations(text: str) -> str:
    """`text` without the date annotations `annotated_spans` reads (a question's days are
    matched as days: as words, "20", "May" and "2023" would match any other date)."""
    return ANNOTATION.sub("", text)


def _span(m: re.Match[str]) -> tuple[date, date] | None:
    if m["bd"] is None and m["bm"] is None and m["by"] is None:  # one day, month or year
        if m["ay"] is None:
            return None  # "[note]", "[20]": not an annotation
        year, month = int(m["ay"]), _MONTHS.get(m["am"] or "", 0)
        first, last = _first(year, month, m["ad"]), _last(year, month, m["ad"])
    else:  # a range: the first end takes what it leaves out from the second
        if m["by"] is None:
            return None
        year_b, month_b = int(m["by"]), _MONTHS.get(m["bm"] or "", 0)
        month_a = _MONTHS.get(m["am"] or "", 0) or month_b
        first = _first(int(m["ay"]) if m["ay"] else year_b, month_a, m["ad"])
        last = _last(year_b, month_b, m["bd"])
    if first is None or last is None or first > last:
        return None
    return first, last


def _first(year: int, month: int, day: str | None) -> date | None:
    try:
        return date(year, month or 1, int(day) if day else 1)
    except ValueError:
        return None


def _last(year: int, month: int, day: str | None) -> date | None:
    try:
        month = month or 12
        return date(year, month, int(day) if day else calendar.monthrange(year, month)[1])
    except ValueError:
        return None
