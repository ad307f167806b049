"""Invariants of resolve_time, checked with hypothesis."""

from __future__ import annotations

import re
from datetime import date, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests._profiles import heavy
from yait_byheart._dates import calc, intl
from yait_byheart._dates import patterns as R
from yait_byheart._dates.lang import Lang, de, en, es, fr, it, ja, pt, ru, zh
from yait_byheart._dates.resolve import (
    _annotations,
    _ascii_lower,
    _ascii_may_resolve,
    _may_contain_phrase,
    format_day,
    phrase_matches,
    resolve_time,
)

# Example counts and the absent deadline come from the profile tests/conftest.py loads (a
# profile loaded here would hold for every test module imported after this one).

ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=()), max_size=300)
ANCHORS = st.dates()  # the whole calendar, 1..9999: edges must not raise
MIDDLE_ANCHORS = st.dates(min_value=date(1900, 1, 1), max_value=date(2200, 12, 31))

WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
# Words that make up the phrases, with the words that guard them, so random
# soups of them hit matches, near-misses and guards alike.
FRAGMENTS = [
    "last", "this", "next", "past", "coming", "the", "a", "an", "my", "in", "of",
    "ago", "from", "now", "today", "tonight", "yesterday", "tomorrow", "day",
    "days", "week", "weeks", "weekend", "weekends", "week-end", "month", "months",
    "year", "years", "night", "morning", "evening", "before", "after", "few",
    "couple", "two", "twelve", "3", "1,5", "or", "and", "more", "than", "time",
    "it's", "built", "I'll", "Fri", "Tues", "Sat", "sun", "Saturday", "Friday",
    "Night", "Live", "'s", "\u2019s", "[", "]", "[20 May 2023]", "-", "Chicago",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "  ", "\t", "\u00a0", "\n", ", ", ". ", ""]
# Phrase-shaped chunks (head, unit, tail) so that whole phrases, not just
# their words, turn up often: "this evening", "a few weeks ago", "in 3 days time".
HEADS = [
    "last", "this", "next", "this past", "this coming", "the", "in", "a", "a few",
    "a couple of", "two", "3", "the day", "the week", "yesterday", "tomorrow", "today",
]  # fmt: skip
UNITS = [
    "week", "weekend", "month", "year", "day", "days", "weeks", "weekends", "months", "years",
    "Friday", "Fri", "Sat",
    "sat", "Sun", "morning", "evening", "afternoon", "night", "before", "after",
]  # fmt: skip
TAILS = ["ago", "from now", "last", "yesterday", "tomorrow", "time", "of", "or two", "'s", ""]
CHUNK = st.tuples(
    st.sampled_from(HEADS),
    st.sampled_from([" ", "  ", "\t", "\u00a0"]),
    st.sampled_from(UNITS),
    st.sampled_from([" ", "", "\u00a0"]),
    st.sampled_from(TAILS),
).map("".join)
SOUP = st.lists(
    st.one_of(
        CHUNK,
        st.sampled_from(FRAGMENTS),
        st.sampled_from(SEPARATORS),
        st.text(alphabet=st.characters(blacklist_categories=()), max_size=3),
    ),
    max_size=40,
).map("".join)
# ASCII soup for the case test, without the abbreviations whose capital
# letter is meaningful ("Sat" is a day, "sat" a verb).
CASE_FRAGMENTS = [f for f in FRAGMENTS if f.isascii() and f.lower() not in R.AMBIGUOUS_WEEKDAYS]
CASE_SOUP = st.lists(
    st.one_of(st.sampled_from(CASE_FRAGMENTS), st.sampled_from([" ", "  ", ", ", "\n"])),
    max_size=30,
).map("".join)

NOTE = re.compile(r" \[[^\[\]\n]+\]")


def _splice(text: str, inserts: list[tuple[int, str]]) -> str:
    out, done = [], 0
    for pos, note in inserts:
        out += [text[done:pos], note]
        done = pos
    return "".join([*out, text[done:]])


@given(ANY_TEXT | SOUP, ANCHORS)
def test_only_inserts_annotations_and_never_raises(text: str, anchor: date) -> None:
    inserts = _annotations(text, anchor)
    out = resolve_time(text, anchor)
    positions = [p for p, _ in inserts]
    assert positions == sorted(set(positions))
    assert all(0 < p <= len(text) for p in positions)
    assert all(NOTE.fullmatch(note) for _, note in inserts)
    assert out == _splice(text, inserts)
    # Removing every inserted annotation restores the input exactly.
    removed, done = [], 0
    cursor = 0
    for pos, note in inserts:
        start = pos + cursor
        removed.append(out[done:start])
        assert out[start : start + len(note)] == note
        done = start + len(note)
        cursor += len(note)
    assert "".join([*removed, out[done:]]) == text


@given(SOUP.filter(lambda t: "[" not in t and "]" not in t), MIDDLE_ANCHORS)
def test_stripping_bracketed_notes_restores_input(text: str, anchor: date) -> None:
    # Public-API view of the same invariant: the input had no brackets, so
    # every " [...]" in the output was inserted.
    assert NOTE.sub("", resolve_time(text, anchor)) == text


@given(SOUP, MIDDLE_ANCHORS)
def test_idempotent(text: str, anchor: date) -> None:
    once = resolve_time(text, anchor)
    assert resolve_time(once, anchor) == once


@given(ANY_TEXT | SOUP)
def test_precheck_is_a_necessary_condition(text: str) -> None:
    # Checked on each matched phrase alone (substring tests are monotone, so
    # this implies the whole text passes): on whole soups another keyword
    # nearly always hides a missing one.
    for m in R.PHRASE.finditer(_ascii_lower(text)):
        assert _may_contain_phrase(m[0]), m[0]


@given(ANY_TEXT | SOUP)
def test_gated_precheck_is_the_plain_one(text: str) -> None:
    # The gates only skip scans: the precheck says what scanning every key says.
    lowered = _ascii_lower(text)
    plain = any(k in lowered for k in (*R.ANY_OF, *R.UNIT_AFTER_SPACE)) or (
        "this" in lowered and any(k in lowered for k in R.THIS_WITH)
    )
    assert _may_contain_phrase(lowered) == plain


@given(ANY_TEXT | SOUP, st.integers(0, 200))
def test_anchored_search_finds_what_a_whole_scan_finds(text: str, pad: int) -> None:
    # Padding moves the phrases far from each other and from the text's ends, where the
    # windows around anchors start and stop.
    for padded in (text, "x " * pad + text + " y" * pad, text.replace(" ", " " + "z " * pad)):
        lowered = _ascii_lower(padded)
        whole = [(m.span(), m.groupdict()) for m in R.PHRASE.finditer(lowered)]
        assert [(m.span(), m.groupdict()) for m in phrase_matches(lowered)] == whole
        for m in R.PHRASE.finditer(lowered):
            start = m.start()
            assert any(0 <= m[0].find(a) < R.ANCHOR_REACH for a in R.ANCHORS), m[0]
            assert m.end() + 2 <= start + R.ANCHOR_TAIL


def test_precheck_and_idempotence_on_every_head_unit_tail_phrase() -> None:
    # Exhaustive over the phrase grid (17 x 21 x 10), so no combination is
    # left to chance: e.g. "this evening", which only "evening" lets through.
    anchor = date(2023, 5, 25)
    matched = 0
    for head in HEADS:
        for unit in UNITS:
            for tail in TAILS:
                text = f"{head} {unit} {tail}".strip()
                for m in R.PHRASE.finditer(_ascii_lower(text)):
                    matched += 1
                    assert _may_contain_phrase(m[0]), m[0]
                    assert not m[0].isascii() or _ascii_may_resolve(m[0]), m[0]
                once = resolve_time(text, anchor)
                assert resolve_time(once, anchor) == once
    assert matched > 1000


@given(CASE_SOUP, MIDDLE_ANCHORS)
def test_case_does_not_matter(text: str, anchor: date) -> None:
    assert _annotations(text.upper(), anchor) == _annotations(text.lower(), anchor)


@given(st.text(max_size=50), ANCHORS)
def test_unreadable_or_missing_anchor_leaves_text_alone(text: str, anchor: date) -> None:
    assert resolve_time(text, None) == text
    assert resolve_time(text, "") == text
    assert resolve_time(text, "not a date") == text


# --- arithmetic, read back from the annotation ---------------------------------

_MONTHS = {name: i for i, name in enumerate(R.MONTH_NAMES, start=1)}
_DAY = re.compile(r"\[(\d+) (\w+) (\d+)\]$")
_SPAN = re.compile(r"\[(\d+)(?: (\w+)(?: (\d+))?)?-(\d+) (\w+) (\d+)\]$")


def _day(out: str) -> date:
    m = _DAY.search(out)
    assert m is not None, out
    return date(int(m[3]), _MONTHS[m[2]], int(m[1]))


def _span(out: str) -> tuple[date, date]:
    m = _SPAN.search(out)
    assert m is not None, out
    last = date(int(m[6]), _MONTHS[m[5]], int(m[4]))
    first_month = _MONTHS[m[2]] if m[2] else last.month
    first_year = int(m[3]) if m[3] else last.year
    return date(first_year, first_month, int(m[1])), last


@given(MIDDLE_ANCHORS, st.integers(0, 6))
def test_last_weekday_is_the_latest_one_strictly_before(anchor: date, wd: int) -> None:
    got = _day(resolve_time(f"last {WEEKDAY_NAMES[wd]}", anchor))
    assert got.weekday() == wd
    assert timedelta(days=1) <= anchor - got <= timedelta(days=7)
    assert got == _day(resolve_time(f"this past {WEEKDAY_NAMES[wd]}", anchor))


@given(MIDDLE_ANCHORS, st.integers(0, 6))
def test_next_weekday_is_the_first_one_strictly_after(anchor: date, wd: int) -> None:
    got = _day(resolve_time(f"next {WEEKDAY_NAMES[wd]}", anchor))
    assert got.weekday() == wd
    assert timedelta(days=1) <= got - anchor <= timedelta(days=7)


@given(MIDDLE_ANCHORS, st.integers(0, 400))
def test_days_ago_and_from_now(anchor: date, n: int) -> None:
    assert _day(resolve_time(f"{n} days ago", anchor)) == anchor - timedelta(days=n)
    assert _day(resolve_time(f"{n} days from now", anchor)) == anchor + timedelta(days=n)


@given(MIDDLE_ANCHORS, st.integers(1, 20))
def test_weeks_ago_is_the_monday_to_sunday_week_holding_that_day(anchor: date, n: int) -> None:
    first, last = _span(resolve_time(f"{n} weeks ago", anchor))
    assert first.weekday() == 0 and last - first == timedelta(days=6)
    assert first <= anchor - timedelta(weeks=n) <= last
    sat, sun = _span(resolve_time(f"{n} weekends ago", anchor))
    assert (sat, sun) == (first + timedelta(days=5), last)


@given(MIDDLE_ANCHORS)
def test_last_week_ends_the_sunday_before_this_week(anchor: date) -> None:
    first, last = _span(resolve_time("last week", anchor))
    this_monday = anchor - timedelta(days=anchor.weekday())
    assert (first, last) == (this_monday - timedelta(days=7), this_monday - timedelta(days=1))
    assert _span(resolve_time("last weekend", anchor)) == (last - timedelta(days=1), last)
    assert _span(resolve_time("1 week ago", anchor)) == (first, last)


@given(MIDDLE_ANCHORS)
def test_month_and_year_neighbours(anchor: date) -> None:
    prev_month = (anchor.replace(day=1) - timedelta(days=1)).replace(day=1)
    next_month = (anchor.replace(day=28) + timedelta(days=4)).replace(day=1)
    assert resolve_time("last month", anchor).endswith(
        f"[{R.MONTH_NAMES[prev_month.month - 1]} {prev_month.year}]"
    )
    assert resolve_time("next month", anchor).endswith(
        f"[{R.MONTH_NAMES[next_month.month - 1]} {next_month.year}]"
    )
    assert resolve_time("last year", anchor) == f"last year [{anchor.year - 1}]"


@given(MIDDLE_ANCHORS)
def test_yesterday_today_tomorrow(anchor: date) -> None:
    out = resolve_time("yesterday, today, tomorrow", anchor)
    one = timedelta(days=1)
    assert out == (
        f"yesterday [{format_day(anchor - one)}], today [{format_day(anchor)}], "
        f"tomorrow [{format_day(anchor + one)}]"
    )


# --- other languages and the newer English phrases -----------------------------

# Words of every phrase family in every language, with their guards, so soups hit
# matches, near-misses and guards alike.
MULTI_FRAGMENTS = [
    "gestern", "Morgen", "morgen", "guten", "heute", "vor", "drei", "Tagen", "letzte", "Woche",
    "nächsten", "Freitag", "in", "zwei", "Wochen", "hier", "il y a", "jours", "la", "semaine",
    "dernière", "Dernier", "samedi", "dans", "ayer", "mañana", "esta", "por", "hace", "días",
    "próximo", "viernes", "que viene", "desde", "вчера", "завтра", "три", "дня", "назад",
    "на", "прошлой", "неделе", "через", "больше", "昨天", "三天前", "上周五", "之前天", "下个月",
    "昨日", "先週の金曜日", "3日前", "今日では", "the", "Friday", "before", "last", "week",
    "after", "next", "in a fortnight", "over the weekend", "went", "summer", "Christmas",
    "Last", "fall", "my", "[", "]", "[20 May 2023]", "-", "'", "\u2019", "ich", "je", "el",
    "ieri", "tre giorni fa", "settimana", "scorsa", "quest'anno", "tra", "ontem", "há",
    "dias", "atrás", "semana passada", "daqui a", "amanhã", "sexta-feira",
]  # fmt: skip
MULTI_SOUP = st.lists(
    st.one_of(
        st.sampled_from(MULTI_FRAGMENTS),
        st.sampled_from([*SEPARATORS, "。", "、"]),
        st.text(alphabet=st.characters(blacklist_categories=()), max_size=3),
    ),
    max_size=40,
).map("".join)


@given(MULTI_SOUP | ANY_TEXT, ANCHORS)
def test_other_languages_only_insert_and_never_raise(text: str, anchor: date) -> None:
    inserts = _annotations(text, anchor)
    positions = [p for p, _ in inserts]
    assert positions == sorted(set(positions))
    assert all(NOTE.fullmatch(note) for _, note in inserts)
    assert resolve_time(text, anchor) == _splice(text, inserts)


@given(MULTI_SOUP.filter(lambda t: "[" not in t and "]" not in t), MIDDLE_ANCHORS)
def test_other_languages_stripping_notes_restores_input(text: str, anchor: date) -> None:
    assert NOTE.sub("", resolve_time(text, anchor)) == text


@given(MULTI_SOUP, MIDDLE_ANCHORS)
def test_other_languages_idempotent(text: str, anchor: date) -> None:
    once = resolve_time(text, anchor)
    assert resolve_time(once, anchor) == once


# English phrases of `lang.en` (holidays, seasons, the fortnight, before last, after next),
# with their direction and unit words and the weekdays, in any spacing and case.
_EN_SEASONS_AND_HOLIDAYS = sorted({*en.HOLIDAYS, *en.SEASONS})
EN_FRAGMENTS = [
    *(f"{d} {x}" for d in en.DIRS for x in _EN_SEASONS_AND_HOLIDAYS),
    *(f"on {x}" for x in _EN_SEASONS_AND_HOLIDAYS),
    *(f"the {w} before last" for w in R.WEEKDAYS), *(f"the {w} after next" for w in R.WEEKDAYS),
    *(f"the {u} after next" for u in en.UNITS), "in a fortnight", "in one fortnight's time",
    "a fortnight ago", "one fortnight from now", "over the weekend", "over the week-end",
    "the", "last", "next", "x", "[20 May 2023]",
]  # fmt: skip
EN_SOUP = st.lists(
    st.one_of(st.sampled_from(EN_FRAGMENTS), st.sampled_from([*SEPARATORS, "-", "/"])),
    max_size=30,
).map("".join)


@given(EN_SOUP | MULTI_SOUP | ANY_TEXT, st.integers(0, 200))
def test_english_phrases_are_found_near_their_anchors_as_by_a_whole_scan(
    text: str, pad: int
) -> None:
    # As `phrase_matches` for the older English phrases: every match holds an anchor near its
    # start and ends well inside the tail, so searching near the anchors finds every match.
    for padded in (text, "x " * pad + text + " y" * pad, text.replace(" ", " " + "z " * pad)):
        lowered = _ascii_lower(padded)
        whole = [(m.span(), m.groupdict()) for m in en.PHRASE.finditer(lowered)]
        near = intl.matches_near(en.PHRASE, lowered, en.ANCHORS)
        assert [(m.span(), m.groupdict()) for m in near] == whole
        for m in en.PHRASE.finditer(lowered):
            assert any(0 <= m[0].find(a) < R.ANCHOR_REACH for a in en.ANCHORS), m[0]
            assert m.end() + 2 <= m.start() + R.ANCHOR_TAIL


# --- any mix of languages and separators ------------------------------------------

# Every supported date language, its words taken from its own tables (so a word added to a
# table is fuzzed too) with the linking words its pattern spells out ("vor", "il y a",
# "назад", "前"), and the words that guard or vote; glued, title-cased, upper-cased and cut by
# every kind of separator, CJK punctuation included. Each text mixes a language written in
# Latin letters with one that is not, mostly, since glued scripts are where passes differed.
_LATIN_SCRIPT: tuple[Lang, ...] = (en.LANG, de.LANG, fr.LANG, es.LANG, it.LANG, pt.LANG)
_OTHER_SCRIPT: tuple[Lang, ...] = (ru.LANG, zh.LANG, ja.LANG)
_LINKS = {
    "en": ["ago", "from now", "the", "before last", "after next", "in a fortnight",
           "over the weekend", "Christmas", "summer"],
    "de": ["vor", "in"], "fr": ["il y a", "dans", "la", "le"], "es": ["hace", "dentro de", "el"],
    "it": ["fa", "tra", "fra", "la", "il"], "pt": ["há", "daqui a", "atrás", "na", "a"],
    "ru": ["назад", "через", "на", "в"], "zh": ["前", "后", "之", "以"],
    "ja": ["前", "後", "の", "曜日"],
}  # fmt: skip


def _date_words(lang: Lang) -> list[str]:
    tables = (lang.fixed, lang.units, lang.numbers, lang.dirs, lang.weekdays)
    return sorted({w for table in tables for w in table} | set(_LINKS[lang.name]))


def _context_words(lang: Lang) -> list[str]:
    found = lang.stopwords | lang.past_cues
    return sorted(found.union(*lang.not_after.values())) or ["it"]


_SEPARATORS = [
    *SEPARATORS, "。", "、", "，", "！", "？", "：", "；", "「", "」", "（", "）", "・", "\u3000",
    "-", "'", "\u2019", "/", "@", "[", "]", "?", "!",
]  # fmt: skip
_OTHER = ["3", "12", "\uff13", "二", "[20 May 2023]", " [2022]", " [1]", "x.com/"]


@st.composite
def _mixed(draw: st.DrawFn) -> str:
    pair = [draw(st.sampled_from(_LATIN_SCRIPT)), draw(st.sampled_from(_OTHER_SCRIPT))]
    langs = st.sampled_from(pair) | st.sampled_from(_LATIN_SCRIPT + _OTHER_SCRIPT)
    out: list[str] = []
    for _ in range(draw(st.integers(0, 30))):
        lang = draw(langs)
        kind = draw(st.sampled_from(["phrase"] * 5 + ["context"] + ["separator"] * 3 + ["other"]))
        if kind == "phrase":  # one to three date words: a phrase, a near miss or a guard
            words = draw(st.lists(st.sampled_from(_date_words(lang)), min_size=1, max_size=3))
            text = draw(st.sampled_from([" ", "\u00a0", ""])).join(words)
            out.append(draw(st.sampled_from([text, text, text.title(), text.upper()])))
        elif kind == "context":
            out.append(draw(st.sampled_from(_context_words(lang))))
        else:
            out.append(draw(st.sampled_from(_SEPARATORS if kind == "separator" else _OTHER)))
    return "".join(out)


MIXED = _mixed()


# Mixed texts found the seeds the single-language soups missed: twice the profile's count.
@settings(max_examples=heavy(2.0))
@given(MIXED, MIDDLE_ANCHORS)
def test_any_mix_of_languages_is_annotated_once(text: str, anchor: date) -> None:
    once = resolve_time(text, anchor)
    assert resolve_time(once, anchor) == once
    # Every note written is one that a second pass recognises and sets aside.
    shift = 0
    for pos, note in _annotations(text, anchor):
        found = calc.NOTE.match(once, pos + shift)
        assert found is not None and found[0] == note, (once, pos + shift)
        shift += len(note)


def test_a_word_next_to_cjk_punctuation_is_annotated_once() -> None:
    # Found on one seed: the first pass read "gestern。昨天gestern" as one word, so it saw no
    # German; the note inserted after 昨天 split it, and a second pass annotated "gestern".
    d = date(2000, 1, 1)
    once = resolve_time("gestern。昨天gestern", d)
    assert once == "gestern [31 December 1999]。昨天 [31 December 1999]gestern"
    assert resolve_time(once, d) == once


def test_a_word_beside_any_ascii_mark_is_read_as_the_patterns_read_it() -> None:
    # Found on one seed ("GESTERN\x08"): the precheck and the words cut only at some marks,
    # so a date word in Markdown ("**gestern**") or beside a control character was never
    # read in its language, though its pattern matches it.
    d = date(2000, 1, 1)
    for text in ("**gestern**", "GESTERN\x08", "am #gestern", "`hier`", "a ~ayer~ b"):
        assert intl.may_apply(text, text.lower()), text
        assert "[31 December 1999]" in resolve_time(text, d), text


def test_notes_do_not_push_a_past_cue_out_of_the_clause() -> None:
    # "wurde ... in drei Tagen": the past cue is 55 characters before the phrase, inside the
    # window; the notes a first pass inserts push it out, unless they are set aside.
    d = date(2023, 5, 25)
    once = resolve_time("wurde gestern heute gestern heute gestern heute gestern in drei Tagen", d)
    assert once.endswith("in drei Tagen")
    assert resolve_time(once, d) == once


def test_a_note_the_text_already_has_stays_and_blocks_a_second_one() -> None:
    d = date(2023, 5, 25)
    assert resolve_time("gestern [20 May 2023] und morgen", d) == (
        "gestern [20 May 2023] und morgen [26 May 2023]"
    )
    # A bracket not written right after a word is the writer's, read as text.
    assert resolve_time("heute  [2022] morgen", d) == "heute  [2022] morgen [26 May 2023]"


ALL_LANGS = (en.LANG, de.LANG, fr.LANG, es.LANG, it.LANG, pt.LANG, ru.LANG, zh.LANG, ja.LANG,
             ja.LANG_HAN_ONLY)  # fmt: skip


# Each pattern without the look-ahead on the letters its phrases start with, where it has one.
_UNGUARDED = {
    lang.name + str(i): (lang.phrase, re.compile(re.sub(r"^\(\?=\[[^\]]*\]\)", "", p)))
    for i, lang in enumerate(ALL_LANGS)
    for p in [lang.phrase.pattern]
}


@given(MIXED | MULTI_SOUP)
def test_a_look_ahead_on_the_first_letters_changes_no_match(text: str) -> None:
    lowered = _ascii_lower(text)
    for guarded, plain in _UNGUARDED.values():
        got = [(m.span(), m.groupdict()) for m in guarded.finditer(lowered)]
        assert got == [(m.span(), m.groupdict()) for m in plain.finditer(lowered)]


# Words of the languages written in Latin letters alone: no other script lets the text
# through, so only their date words can.
LATIN_SOUP = st.lists(
    st.sampled_from(
        sorted({w for lang in _LATIN_SCRIPT for w in _date_words(lang) + _context_words(lang)})
    )
    | st.sampled_from([*SEPARATORS, "\x0b", "\x1c", "\x1f", "\r", "*", "~"]),
    max_size=20,
).map("".join)


@given(LATIN_SOUP | MIXED | MULTI_SOUP | SOUP | ANY_TEXT, MIDDLE_ANCHORS)
def test_other_languages_precheck_is_a_necessary_condition(text: str, anchor: date) -> None:
    # resolve_time skips every language's search on a text `intl.may_apply` turns away: any
    # language's phrase, searched for whatever the text's script or vote, must make it pass.
    lowered = _ascii_lower(text)
    if intl.may_apply(text, lowered):
        return
    for lang in ALL_LANGS:
        assert lang.phrase.search(lowered) is None, (lang.name, text)
    assert intl.languages(text, lowered) == []
    assert intl.find(text, lowered, anchor) == []


@given(LATIN_SOUP | MIXED | MULTI_SOUP | SOUP | ANY_TEXT)
def test_other_languages_precheck_reads_the_words_the_languages_read(text: str) -> None:
    # On ASCII the precheck cuts words as bytes: the same words as `languages` reads.
    lowered = _ascii_lower(text)
    other_script = not text.isascii() and intl._OTHER_SCRIPT.search(text) is not None
    words = set(intl._words(lowered))
    expected = other_script or not intl._ALL_KEYS.isdisjoint(words) or intl.english_pair(lowered)
    assert intl.may_apply(text, lowered) == expected


# ASCII texts of every kind above; "?" stands for what is not ASCII (a no-break space too).
ASCII_TEXT = (LATIN_SOUP | SOUP | CASE_SOUP | st.text(st.characters(max_codepoint=127))).map(
    lambda t: t.encode("ascii", "replace").decode()
)


@given(ASCII_TEXT, MIDDLE_ANCHORS)
def test_ascii_word_precheck_is_a_necessary_condition(text: str, anchor: date) -> None:
    # resolve_time returns an ASCII text the word precheck turns away untouched: no English
    # phrase, no language's phrase, no language picked; on each phrase alone too, as the
    # look-arounds keep a phrase's words whole inside any text.
    lowered = _ascii_lower(text)
    for m in R.PHRASE.finditer(lowered):
        assert _ascii_may_resolve(m[0]), m[0]
    if _ascii_may_resolve(lowered):
        return
    assert R.PHRASE.search(lowered) is None
    assert not intl.may_apply(text, lowered)
    for lang in ALL_LANGS:
        assert lang.phrase.search(lowered) is None, (lang.name, text)
    assert resolve_time(text, anchor) == text


def test_ascii_keys_are_letters_and_digits() -> None:
    # The word precheck cuts at every other byte, which keeps such a key whole wherever the
    # languages' own cut finds it.
    assert all(re.fullmatch(rb"[a-z0-9]+", key) for key in intl.ASCII_KEYS)
    assert all(re.fullmatch(r"[a-z]+", word) for word in R.WHOLE_WORDS)
