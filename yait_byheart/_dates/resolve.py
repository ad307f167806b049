"""Relative dates, resolved by arithmetic at append time.

"I ran the race last Saturday", said on Thursday 25 May 2023, becomes
"I ran the race last Saturday [20 May 2023]": the annotation goes beside the
words, never instead of them, so removing every inserted `` [...]`` gives the
input back exactly.

Rules, chosen once and applied everywhere:

* Weeks run Monday to Sunday; a weekend is the Saturday and Sunday of a week.
* Granularity follows the phrase: a day for day phrases ("[20 May 2023]"), a
  span for week phrases ("[15-21 May 2023]"), the month for month phrases
  ("[April 2023]"), the year for year phrases ("[2022]").
* "last <weekday>" / "this (or the) past <weekday>": the latest such day strictly
  before the anchor; "next <weekday>" / "this coming <weekday>": the first
  strictly after. "this <weekday>" is ambiguous and stays untouched.
* "last week" is the calendar week before the anchor's week, "last weekend"
  (and "this past weekend", "the past weekend") that week's weekend, "next weekend" the weekend of
  next calendar week, "this coming weekend" the first Saturday-Sunday after
  the anchor.
* "N weeks ago" / "in N weeks" is the calendar week N weeks away (a span, like
  "last week", which is "1 week ago"); "N weekends ago" that week's weekend.
  "took part in a week ago" is "a week ago", not "in a week".
* "a few days ago" / "in a few days" is 3 to 5 days away (a couple is 2, so a
  few starts at 3): "[20-22 May 2023]". "a few weeks/months/years" is too
  vague to be worth a range and stays untouched.
* "in N days" is a date only when the clause before it reads as future
  ("it's in 3 days", "I'll see you in two weeks") or it says "time"/"from
  now"; "I built it in 3 days" and "haven't talked in a few days" are
  durations and stay untouched, as does "in N days" with no cue at all.
* Durations and other senses stay untouched: "the last week of June", "for the
  last year", "over the last month", "the next day", "every Saturday", "a
  better tomorrow", "two or three days ago", "more than 3 years ago".
* The annotation follows the whole phrase, a part of the day or a possessive
  included: "last Friday night [19 May 2023]" (the Friday's date),
  "last year's [2022] trip". Matching ignores case; the abbreviations that are
  also words (Mon, Wed, Sat, Sun) count only with a capital letter ("where I
  last sat").
* An annotated text fed again comes back unchanged: the annotations already in
  it (the `` [...]`` this function writes, ``calc.NOTE``) are set aside before
  matching, so every rule reads the words as first written (a window or a
  language vote would otherwise see the inserted dates), and a phrase already
  followed by "[" is left alone. Phrases inside a URL or an address
  ("x.com/today") are left alone too.
* Seasons are meteorological, northern hemisphere ("last summer [June-August
  2022]"); other languages and the newer English phrases ("the Friday before
  last", "in a fortnight", "last Christmas") come from ``_time_intl``: see
  docs/dates.md for every rule.
* Not covered on purpose: month names ("last March": this year's or last
  year's?), bare weekdays ("on Friday": past or future?), "this past
  week/month/year" (the last seven days or the last calendar week?), hours.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from datetime import date, datetime

from . import calc as C
from . import intl
from . import patterns as R
from .calc import format_day
from .lang import when as W

__all__ = ["format_day", "parse_when", "resolve_time"]

# ASCII A-Z -> a-z, nothing else: the lowered copy keeps every position.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

# A word before "last/this/next ..." that makes it a different sense: "the last
# week of June", "my last year at school", "every last one", "the next day".
# Not "her"/"that", which are just as often objects ("I saw her last week").
_DETERMINERS = frozenset(
    {"the", "a", "an", "my", "your", "his", "its", "our", "their", "this", "these",
     "those", "every", "each", "any", "some", "whose", "same", "one's"}
)  # fmt: skip
# "a better tomorrow", "there's no tomorrow": tomorrow as the future in general.
_FIGURATIVE_TOMORROW = frozenset({"better", "brighter", "bright", "new", "no", "every"})
# Words that turn "N days ago" into a bound ("more than 3 years ago") or,
# after a count, a range ("two or three days ago").
_BOUND_WORDS = frozenset({"over", "under", "within", "than"})
_BOUND_PAIRS = frozenset({("at", "least"), ("at", "most"), ("up", "to")})
_RANGE_WORDS = frozenset({"or", "to", "and"})

# Cues read backwards through the clause before "in N <unit>"; the nearest
# decides. Future: modals, present "be" (the present-for-future of "it's in
# 3 days"), verbs of going and planning. Past or duration: past forms,
# perfects, frequency words ("twice in a week", "the first time in years").
_FUTURE_CUES = frozenset(
    {"will", "shall", "gonna", "going", "is", "are", "am", "be", "may", "might",
     "won't", "it's", "that's", "he's", "she's", "there's", "here's", "what's",
     "who's", "where's", "when's", "they're", "we're", "you're", "i'm",
     "leave", "leaves", "leaving", "start", "starts", "starting", "begin",
     "begins", "beginning", "back", "see", "due", "off", "coming", "comes",
     "until", "till", "til", "go", "goes", "expect", "expecting", "hope",
     "hoping", "plan", "plans", "planning", "arrive", "arrives", "arriving",
     "return", "returns", "returning", "move", "moves", "moving", "fly",
     "flying", "meet", "meeting", "visit", "visiting", "graduate",
     "graduating", "open", "opens", "opening", "scheduled", "planned",
     "supposed", "expected", "booked", "set", "ready", "happening"}
)  # fmt: skip
_PAST_CUES = frozenset(
    {"was", "were", "did", "had", "took", "done", "got", "made", "went", "came",
     "ran", "wrote", "built", "lost", "won", "became", "grew", "learnt", "taught",
     "saw", "been", "ever", "never", "since", "first", "once", "twice",
     "thrice", "times", "time", "wasn't", "weren't", "didn't", "hadn't",
     "haven't", "hasn't", "i've", "we've", "you've", "they've"}
)  # fmt: skip
# The clause before "in N days" is read at most this far back: far enough for
# "I'm flying out to see my parents in two weeks" (45 characters).
_CLAUSE_WINDOW = 80


# --- parse_when ---------------------------------------------------------------


def _when_type_error(when: object) -> TypeError:
    return TypeError(
        f"`when` must be a str such as '1:56 pm on 8 May, 2023', '8 May 2023', "
        f"'May 8, 2023' or '2023-05-08', a date, a datetime, or None; "
        f"got {type(when).__name__}"
    )


def _valid_time(hour: str | None, minute: str | None, ampm: str | None) -> bool:
    if hour is None:
        return True
    h = int(hour)
    if minute is not None and int(minute) > 59:
        return False
    if ampm is not None:
        return 1 <= h <= 12
    return h <= 23


def _parse_when_str(when: str, order: str | None = None) -> date | None:
    s = R.SPACES.sub(" ", when.strip()).lower()
    if not s or len(s) > R.WHEN_MAX:
        return None
    iso = R.WHEN_ISO.fullmatch(s)
    if iso is not None:
        try:
            day = date(int(iso["y"]), int(iso["m"]), int(iso["d"]))
        except ValueError:
            return None
        if iso["h"] is not None and (
            int(iso["h"]) > 23 or int(iso["mi"]) > 59 or int(iso["s"] or 0) > 59
        ):
            return None
        return day
    m = R.WHEN_TEXT.fullmatch(s)
    if m is not None and R.MONTHS.get(m["m1"] or m["m2"]) is not None:
        return _parse_english(m)
    return _parse_other(s, order) or _parse_rfc2822(when)


def _parse_rfc2822(when: str) -> date | None:
    """An e-mail date ("Tue, 30 May 2023 17:27:00 +0000", RFC 2822 section 3.3), as written:
    the date in its own zone, like an ISO date-time's."""
    try:
        from email.utils import parsedate_to_datetime  # rare, and its import costs ~10 ms

        return parsedate_to_datetime(when).date()
    except (TypeError, ValueError, IndexError):
        return None


def _parse_english(m: re.Match[str]) -> date | None:
    for p in ("t", "u"):
        if not _valid_time(m[p + "hour"], m[p + "min"], m[p + "ampm"] or m[p + "ampm2"]):
            return None
    try:
        day = date(int(m["year"]), R.MONTHS[m["m1"] or m["m2"]], int(m["d1"] or m["d2"]))
    except ValueError:
        return None
    if m["wday"] is not None and R.WEEKDAYS.get(m["wday"]) != day.weekday():
        return None  # "Friday, 8 May 2023": 8 May 2023 was a Monday; trust neither
    return day


def _ymd(year: str, month: str | int, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


def _parse_other(s: str, order: str | None) -> date | None:
    """The written forms of other languages (``_time_lang.when``)."""
    m = W.WHEN_CJK.fullmatch(s)
    if m is not None:
        return _ymd(m["y"], m["m"], m["d"])
    m = W.WHEN_NAMED.fullmatch(s)
    if m is not None:
        month = W.MONTHS.get(m["m"])
        return None if month is None else _ymd(m["y"], month, m["d"])
    m = W.WHEN_NUMERIC.fullmatch(s)
    if m is None:
        return None
    a, b, c = m["a"], m["b"], m["c"]
    if len(a) == 4:
        return _ymd(a, b, c)  # 2023/05/08
    if len(a) > 2 or len(c) != 4:
        return None
    dmy, mdy = _ymd(c, b, a), _ymd(c, a, b)
    if order == "mdy":
        return mdy
    if order == "dmy" or m["sep"] == ".":
        return dmy  # dotted dates are written day first (08.05.2023)
    if dmy is None or mdy is None or dmy == mdy:
        return dmy or mdy
    return None  # 05/08/2023: 5 August or May 8? Refused unless the order is given


# One conversation repeats a session's `when` on every turn; the cache keys
# are short strings only, so a huge `when` cannot pin megabytes in memory.
_parse_when_cached = functools.lru_cache(maxsize=256)(_parse_when_str)
_CACHE_KEY_MAX = 256
_ORDERS = (None, *W.ORDERS)


def parse_when(when: str | date | datetime | None, order: str | None = None) -> date | None:
    """The anchor date of a turn, or None when there is none or it cannot be read.

    Accepts the LoCoMo form "1:56 pm on 8 May, 2023", "8 May 2023", "8 May,
    2023", "May 8, 2023", "May 8 2023" (ordinals, abbreviated months and a
    leading weekday are accepted too), ISO dates and date-times with or
    without a zone (the date written is the date used: no zone conversion),
    and ``date``/``datetime`` objects; and the written forms of German, French,
    Spanish, Italian, Portuguese, Russian, Chinese and Japanese ("8. Mai 2023",
    "8 de mayo de 2023", "8 мая 2023", "2023年5月8日", "08.05.2023" day
    first, "2023/05/08").

    Args:
        when: the date of the turn.
        order: how to read a slashed or dashed numeric date whose day and
            month could swap: ``"dmy"`` (05/08/2023 is 5 August), ``"mdy"``
            (May 8) or None (default: such a date is refused and None returned).

    >>> parse_when("8. Mai 2023"), parse_when("2023年5月8日")
    (datetime.date(2023, 5, 8), datetime.date(2023, 5, 8))
    >>> parse_when("05/08/2023") is None, parse_when("05/08/2023", order="mdy")
    (True, datetime.date(2023, 5, 8))

    >>> parse_when("1:56 pm on 8 May, 2023")
    datetime.date(2023, 5, 8)
    >>> parse_when("May 8 2023"), parse_when("2023-05-08T13:56:00Z")
    (datetime.date(2023, 5, 8), datetime.date(2023, 5, 8))
    >>> parse_when(datetime(2023, 5, 8, 13, 56))
    datetime.date(2023, 5, 8)
    >>> parse_when("") is None, parse_when("sometime in May") is None
    (True, True)
    >>> parse_when(20230508)
    Traceback (most recent call last):
    ...
    TypeError: `when` must be a str such as '1:56 pm on 8 May, 2023', '8 May 2023', \
'May 8, 2023' or '2023-05-08', a date, a datetime, or None; got int
    """
    if order not in _ORDERS:
        raise ValueError(
            f"parse_when: order={order!r}; use 'dmy' (05/08/2023 is 5 August), 'mdy' "
            "(05/08/2023 is May 8) or None (refuse dates whose day and month could swap)"
        )
    if when is None:
        return None
    if isinstance(when, str):
        if len(when) <= _CACHE_KEY_MAX:
            return _parse_when_cached(when, order)
        return _parse_when_str(when, order)
    if isinstance(when, datetime):  # before date: a datetime is a date
        return when.date()
    if isinstance(when, date):
        return when
    raise _when_type_error(when)


# --- resolve_time -------------------------------------------------------------


def _prev_words(lowered: str, start: int) -> tuple[str, str]:
    """The word before ``start`` and the word before that ("" when there is none)."""
    m = R.PREV_WORDS_REV.match(lowered[max(0, start - 40) : start][::-1])
    if m is None:
        return "", ""
    return m[1][::-1].replace("\u2019", "'"), (m[2] or "")[::-1].replace("\u2019", "'")


def _is_qualified(lowered: str, start: int) -> bool:
    """True for "more than 3 days ago", "two or three days ago", "2 - 3 days ago"."""
    if R.PREV_DASH_REV.match(lowered[max(0, start - 8) : start][::-1]) is not None:
        return True
    word, before = _prev_words(lowered, start)
    if word in _BOUND_WORDS or (before, word) in _BOUND_PAIRS:
        return True
    return word in _RANGE_WORDS and (before.isdigit() or before in R.NUMBER_WORDS)


def _future_clause(lowered: str, start: int) -> bool:
    """Whether the clause before "in N days" reads as future (nearest cue decides)."""
    lo = max(0, start - _CLAUSE_WINDOW)
    clause_start = lo
    for brk in R.CLAUSE_BREAK.finditer(lowered, lo, start):
        clause_start = brk.end()
    words = R.CLAUSE_WORD.findall(lowered, clause_start, start)
    for word in reversed(words):
        w = word.replace("\u2019", "'")
        if w in _FUTURE_CUES or w.endswith("'ll"):
            return True
        if w in _PAST_CUES or (len(w) >= 5 and w.endswith("ed") and not w.endswith("eed")):
            return False
    return False


def _guarded(m: re.Match[str], lowered: str) -> bool:
    """Whether the context around a candidate says it is no date or already annotated."""
    if R.NEXT_BRACKET.match(lowered, m.end()) is not None:
        return True  # already annotated (a re-fed text)
    core_end = m.start("poss") if m["poss"] is not None else m.end()
    if R.NEXT_OF.match(lowered, core_end) is not None:
        return True  # "last week of June", "last Friday of the month"
    return _prev_words(lowered, m.start())[0] in _DETERMINERS  # "the last week", "the next day"


def _day_phrase(m: re.Match[str], lowered: str, anchor: date) -> str | None:
    """yesterday, tomorrow, the day before yesterday, today, this morning, last night."""
    if m["dayword"] is not None:
        word = m["dayword"]
        if word == "tomorrow" and _prev_words(lowered, m.start())[0] in _FIGURATIVE_TOMORROW:
            return None
        if "before" in word:
            return C.format_day(anchor - 2 * C.ONE_DAY)
        if "after" in word:
            return C.format_day(anchor + 2 * C.ONE_DAY)
        return C.format_day(anchor + (C.ONE_DAY if word == "tomorrow" else -C.ONE_DAY))
    if m["today"] is not None:
        return C.format_day(anchor)
    return C.format_day(anchor - C.ONE_DAY if m["part"].startswith("last") else anchor)


def _weekday_phrase(m: re.Match[str], text: str, lowered: str, anchor: date) -> str | None:
    abbrev = m["wd"]
    if abbrev in R.AMBIGUOUS_WEEKDAYS and not text[m.start("wd")].isupper():
        return None  # "where I last sat", "the last sun of summer"
    if abbrev.startswith("sat") and R.NEXT_NIGHT_LIVE.match(lowered, m.end("wd")):
        return None  # the show, not the day
    weekday = R.WEEKDAYS[abbrev]
    if m["wdir"].startswith("last") or m["wdir"].endswith("past"):
        return C.format_day(C.last_weekday(anchor, weekday))
    return C.format_day(C.next_weekday(anchor, weekday))


def _span_phrase(direction: str, span: str, anchor: date) -> str | None:
    weekend = span != "week" and span.startswith("week")
    if direction.endswith("past") or direction.endswith("coming"):
        if not weekend:
            return None  # "this past week": last seven days or last week?
        if direction.endswith("past"):
            return C.weekend_span(anchor - C.ONE_WEEK)
        return C.weekend_span(C.next_weekday(anchor, 5))
    shift = {"last": -1, "this": 0, "next": 1}[direction]
    return C.shifted(span, shift, anchor)


def _count(m: re.Match[str], lowered: str, anchor: date) -> str | None:
    """N units ago / from now, and "in N units" when the clause reads as future."""
    if m["num"] is not None:
        if _is_qualified(lowered, m.start()):
            return None
        sign = -1 if m["adir"] == "ago" else 1
        return _count_phrase(m["num"], m["unit"], sign, anchor)
    if m["itime"] is None:
        if R.NEXT_OR.match(lowered, m.end()) is not None:
            return None  # "in a day or two"
        if not _future_clause(lowered, m.start()):
            return None
    return _count_phrase(m["inum"], m["iunit"], 1, anchor)


def _count_phrase(count: str, unit: str, sign: int, anchor: date) -> str | None:
    n = R.number_value(count)
    return C.count_phrase(C.FEW if n == R.FEW else n, unit, sign, anchor)


def _annotation(m: re.Match[str], text: str, lowered: str, anchor: date) -> str | None:
    """The annotation for one candidate phrase, or None when it must stay untouched."""
    if _guarded(m, lowered):
        return None
    if m["before_last"] is not None:
        return C.shifted(m["bl_unit"], -2, anchor)
    if m["dayword"] is not None or m["today"] is not None or m["part"] is not None:
        return _day_phrase(m, lowered, anchor)
    if m["wd"] is not None:
        return _weekday_phrase(m, text, lowered, anchor)
    if m["span"] is not None:
        return _span_phrase(m["sdir"], m["span"], anchor)
    if m["num"] is not None or m["inum"] is not None:
        return _count(m, lowered, anchor)
    raise AssertionError(f"PHRASE matched no known group: {m[0]!r}")  # pragma: no cover


# The keys of ANY_OF and UNIT_AFTER_SPACE under the first of these substrings each holds,
# looked for only in a text that has it: rare in a turn with no date phrase, each stands for
# several keys' scans (a tab or a no-break space, "yesterday" / "today" / " day").
_GATES = ("\t", "\u00a0", "day", "ast")


def _gated(
    keys: tuple[str, ...],
) -> tuple[tuple[str, ...], tuple[tuple[str, tuple[str, ...]], ...]]:
    """`keys` without a gate, and the keys under each gate."""
    rest, groups = list(keys), []
    for gate in _GATES:
        groups.append((gate, tuple(k for k in rest if gate in k)))
        rest = [k for k in rest if gate not in k]
    return tuple(rest), tuple(groups)


_UNGATED_KEYS, _GATED_KEYS = _gated((*R.ANY_OF, *R.UNIT_AFTER_SPACE))


def _may_contain_phrase(lowered: str) -> bool:
    """Fast necessary condition for a PHRASE match in ``lowered``: a key of ANY_OF or
    UNIT_AFTER_SPACE, or "this" with one of THIS_WITH."""
    for key in _UNGATED_KEYS:
        if key in lowered:
            return True
    for gate, keys in _GATED_KEYS:
        if gate in lowered:
            for key in keys:
                if key in lowered:
                    return True
    if "this" in lowered:
        for key in R.THIS_WITH:
            if key in lowered:
                return True
    return False


# Every byte but a-z and 0-9 cut to a space: finer than the cut `intl` reads words with, so
# each of its words made of letters and digits, as every key is, is a word here too.
_NOT_WORD = bytes(b for b in range(256) if not (48 <= b <= 57 or 97 <= b <= 122))
_ASCII_CUT = bytes.maketrans(_NOT_WORD, b" " * len(_NOT_WORD))
_ASCII_TRIGGERS = frozenset(w.encode() for w in R.WHOLE_WORDS) | intl.ASCII_KEYS


def _ascii_may_resolve(lowered: str) -> bool:
    """On an ASCII text, a necessary condition for an English phrase and for `intl.may_apply`
    in one word cut: a word of `R.WHOLE_WORDS` or a key of a language, or an English pair."""
    words = lowered.encode().translate(_ASCII_CUT).split()
    if not _ASCII_TRIGGERS.isdisjoint(words):
        return True
    # `intl.english_pair` called only for a text that could hold a pair: every append asks.
    return ("before" in lowered or "after" in lowered) and intl.english_pair(lowered)


def _ascii_lower(text: str) -> str:
    """Lower-cased copy of ``text`` with every character at the same position.

    ``str.lower`` is fast but may lengthen a string ("\u0130" becomes two
    characters); only then fall back to lowering A-Z alone (5x slower).
    """
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _annotations(text: str, anchor: date) -> list[tuple[int, str]]:
    """(position, inserted string) pairs, ascending: the inserts resolve_time makes."""
    plain, notes = _set_aside_notes(text)
    return _placed(text, notes, _all_inserts(plain, _ascii_lower(plain), anchor))


def _set_aside_notes(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` without the annotations already in it, and where they were: (position in
    the text without them, length). Matching runs on the text without them, so a second
    pass reads what the first read ("gestern。昨天 [24 May 2023]gestern" must not split a
    word the first pass saw glued, nor push a cue out of a clause window)."""
    if "[" not in text:
        return text, []  # the common case, at the cost of one scan
    kept: list[str] = []
    notes: list[tuple[int, int]] = []
    done = size = 0
    for m in C.NOTE.finditer(text):
        kept.append(text[done : m.start()])
        size += m.start() - done
        notes.append((size, m.end() - m.start()))
        done = m.end()
    kept.append(text[done:])
    return "".join(kept), notes


def _placed(
    text: str, notes: list[tuple[int, int]], found: list[tuple[int, str]]
) -> list[tuple[int, str]]:
    """Inserts found on the text without its ``notes``, moved to positions in ``text``;
    one right before an annotation (or any "[") is dropped: that phrase is annotated."""
    if not notes:
        return found
    placed: list[tuple[int, str]] = []
    shift = i = 0
    for pos, note in found:
        while i < len(notes) and notes[i][0] < pos:
            shift += notes[i][1]
            i += 1
        at = pos + shift  # before a note set aside at ``pos`` itself
        if R.NEXT_BRACKET.match(text, at) is None:
            placed.append((at, note))
    return placed


def _all_inserts(
    text: str, lowered: str, anchor: date, other: bool = True
) -> list[tuple[int, str]]:
    """English phrases, then other languages and the newer English ones, one per position
    (`other`: False when `intl.may_apply` said no, so no language's search runs)."""
    found = _find(text, lowered, anchor)  # cheap without an anchor word: no pre-check
    more = intl.find(text, lowered, anchor) if other else []
    if more:
        taken = {pos for pos, _ in found}
        found = sorted(found + [(p, n) for p, n in dict(more).items() if p not in taken])
    return found


def phrase_matches(lowered: str) -> Iterator[re.Match[str]]:
    """What ``R.PHRASE.finditer(lowered)`` yields, searching only near an anchor word.

    Each match starts at most ``ANCHOR_REACH`` before an anchor, so the windows before the
    anchors hold every match start; a search stopped ``ANCHOR_TAIL`` past an anchor still
    sees a whole match and its look-ahead, and look-behinds read before the search start.
    """
    return intl.matches_near(R.PHRASE, lowered, R.ANCHORS)


def _find(text: str, lowered: str, anchor: date) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for m in phrase_matches(lowered):
        try:
            note = _annotation(m, text, lowered, anchor)
        except (OverflowError, ValueError):
            continue  # beyond year 1..9999: nothing sensible to write
        if note is not None:
            found.append((m.end(), f" [{note}]"))
    return found


def resolve_time(text: str, when: str | date | datetime | None, *, order: str | None = None) -> str:
    """Annotate relative dates in ``text`` with the dates they mean on ``when``.

    Only inserts " [...]" right after each phrase it resolves; everything else
    is kept byte for byte. Phrases in German, French, Spanish, Italian,
    Portuguese, Russian, Chinese and Japanese are annotated too, in the same
    English form (docs/dates.md).

    Args:
        text: the turn, any language.
        when: the turn's date (see ``parse_when``); None, empty or unreadable
            returns ``text`` unchanged.
        order: passed to ``parse_when``: how to read a numeric ``when`` whose
            day and month could swap ("dmy" or "mdy"; default None refuses it).

    Returns:
        ``text`` with " [date]" inserted after each relative date it resolves.

    Examples:
        >>> resolve_time("I ran the race last Saturday", "1:56 pm on 25 May, 2023")
        'I ran the race last Saturday [20 May 2023]'
        >>> resolve_time("Last weekend was fun, last month too.", "25 May 2023")
        'Last weekend [20-21 May 2023] was fun, last month [April 2023] too.'
        >>> resolve_time("a few days ago, and two weeks ago", date(2023, 5, 25))
        'a few days ago [20-22 May 2023], and two weeks ago [8-14 May 2023]'
        >>> resolve_time("the last week of June", "25 May 2023")
        'the last week of June'
        >>> resolve_time("Gestern war ich im Kino; 三天前 也是", "25 May 2023")
        'Gestern [24 May 2023] war ich im Kino; 三天前 [22 May 2023] 也是'
        >>> resolve_time("yesterday", None)
        'yesterday'
    """
    if not isinstance(text, str):
        raise TypeError(f"resolve_time(text, when): text must be a str, got {type(text).__name__}")
    if when is not None and not isinstance(when, (str, date)):
        raise _when_type_error(when)
    if not text or not when:
        return text
    # `_set_aside_notes`, called only for a text holding a bracket: every append asks.
    plain, notes = _set_aside_notes(text) if "[" in text else (text, [])
    lowered = _ascii_lower(plain)
    if plain.isascii() and not _ascii_may_resolve(lowered):
        return text  # the common case: no date word at all
    other = intl.may_apply(plain, lowered)
    if not other and not _may_contain_phrase(lowered):
        return text
    anchor = parse_when(when, order)
    if anchor is None:
        return text
    inserts = _placed(text, notes, _all_inserts(plain, lowered, anchor, other))
    if not inserts:
        return text
    pieces: list[str] = []
    done = 0
    for pos, note in inserts:
        pieces.append(text[done:pos])
        pieces.append(note)
        done = pos
    pieces.append(text[done:])
    return "".join(pieces)
