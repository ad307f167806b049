"""Calendar arithmetic and the annotation format shared by every language.

Every function takes the anchor date explicitly; the clock is never read.
Annotations are written in English for every language ("20 May 2023"), so a
date reads the same whatever language the turn was in (docs/dates.md).
"""

from __future__ import annotations

from datetime import date, timedelta

from .._text.lazy_re import lazy

__all__ = ["format_day"]

MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_TOKEN = r"(?:[0-9]{1,4}|" + "|".join(MONTH_NAMES) + ")"
#: An annotation as this package writes it, right after a phrase's last letter, leading space
#: included: " [20 May 2023]", " [29 May-4 June 2023]", " [June-August 2022]", " [2022]".
#: Setting these aside before matching is what makes resolving an annotated text again change
#: nothing (``resolve._set_aside_notes``).
NOTE = lazy(rf"(?<=\w) \[{_TOKEN}(?:[ -]{_TOKEN}){{0,5}}\]")

ONE_DAY = timedelta(days=1)
ONE_WEEK = timedelta(days=7)
# A few days = 3 to 5: the smallest count above "a couple" and an upper end
# wide enough to cover what people mean without making the range useless.
FEW_DAYS = (3, 5)
#: Sentinel count for "a few" / "несколько" / "几": a range, not a number.
FEW = -1
#: Meteorological seasons, northern hemisphere: the month each one starts.
SEASON_START: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}


def format_day(d: date) -> str:
    """A day the way annotations write it: day, full English month, year.

    >>> format_day(date(2023, 5, 20))
    '20 May 2023'
    """
    return f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


def format_span(first: date, last: date) -> str:
    """Two days as one compact span: '15-21 May 2023', '29 May-4 June 2023'."""
    if first == last:
        return format_day(first)
    if first.year != last.year:
        return f"{format_day(first)}-{format_day(last)}"
    if first.month != last.month:
        return f"{first.day} {MONTH_NAMES[first.month - 1]}-{format_day(last)}"
    return f"{first.day}-{format_day(last)}"


def format_month(anchor: date, shift: int) -> str:
    index = anchor.year * 12 + anchor.month - 1 + shift
    year, month0 = divmod(index, 12)
    date(year, month0 + 1, 1)  # raises ValueError outside years 1..9999
    return f"{MONTH_NAMES[month0]} {year}"


def format_year(anchor: date, shift: int) -> str:
    return str(date(anchor.year + shift, 1, 1).year)  # ValueError outside 1..9999


def week_span(day: date) -> str:
    monday = day - timedelta(days=day.weekday())
    return format_span(monday, monday + timedelta(days=6))


def weekend_span(day: date) -> str:
    saturday = day + timedelta(days=5 - day.weekday())
    return format_span(saturday, saturday + ONE_DAY)


def last_weekday(anchor: date, weekday: int) -> date:
    """The latest ``weekday`` strictly before the anchor."""
    return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)


def next_weekday(anchor: date, weekday: int) -> date:
    """The first ``weekday`` strictly after the anchor."""
    return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)


def calendar_weekday(anchor: date, weeks: int, weekday: int) -> date:
    """``weekday`` of the Monday-Sunday week ``weeks`` away ("上周五": last week's Friday)."""
    return anchor - timedelta(days=anchor.weekday()) + timedelta(days=7 * weeks + weekday)


def shifted(unit: str, n: int, anchor: date) -> str:
    """The annotation for N units away from the anchor (N < 0: in the past)."""
    if unit.startswith("day"):
        return format_day(anchor + timedelta(days=n))
    if unit == "fortnight":
        return format_day(anchor + 2 * n * ONE_WEEK)
    if unit.startswith("weekend") or unit.startswith("week-end"):
        return weekend_span(anchor + n * ONE_WEEK)
    if unit.startswith("week"):
        return week_span(anchor + n * ONE_WEEK)
    if unit.startswith("month"):
        return format_month(anchor, n)
    return format_year(anchor, n)


def count_phrase(n: int, unit: str, sign: int, anchor: date) -> str | None:
    """N units ago (sign -1) or ahead (+1); ``FEW`` days is the 3-5 day range."""
    if n == FEW:
        if not unit.startswith("day"):
            return None
        near, far = (anchor + sign * timedelta(days=k) for k in FEW_DAYS)
        return format_span(min(near, far), max(near, far))
    return shifted(unit, sign * n, anchor)


def season_span(anchor: date, season: str, direction: int) -> str:
    """A season's three months. this: the instance holding the anchor, else the
    nearer one; next: a year after it; last: the latest that ended before the anchor.

    >>> season_span(date(2023, 5, 25), "summer", -1), season_span(date(2023, 5, 25), "winter", 0)
    ('June-August 2022', 'December 2022-February 2023')
    """
    now = anchor.year * 12 + anchor.month - 1
    start = (anchor.year - 1) * 12 + SEASON_START[season] - 1
    while start + 2 < now:  # the first instance not over before the anchor's month
        start += 12
    this = start
    if start > now and now - (start - 10) <= 4:
        this = start - 12  # the one just gone is nearer than the coming one
    first = start - 12 if direction < 0 else this + 12 * direction
    return _month_range(first, first + 2)


def _month_range(first: int, last: int) -> str:
    y1, m1 = divmod(first, 12)
    y2, m2 = divmod(last, 12)
    date(y1, m1 + 1, 1), date(y2, m2 + 1, 1)  # ValueError outside 1..9999
    if y1 == y2:
        return f"{MONTH_NAMES[m1]}-{MONTH_NAMES[m2]} {y2}"
    return f"{MONTH_NAMES[m1]} {y1}-{MONTH_NAMES[m2]} {y2}"


def holiday(anchor: date, month: int, day: int, direction: int) -> str:
    """A fixed-date holiday: last = latest strictly before the anchor, this = the
    anchor's year, next = first strictly after."""
    this = date(anchor.year, month, day)
    if direction < 0 and this >= anchor:
        this = date(anchor.year - 1, month, day)
    elif direction > 0 and this <= anchor:
        this = date(anchor.year + 1, month, day)
    return format_day(this)
