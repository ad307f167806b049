"""Relative dates in other languages (and the newer English phrases), from data.

Each language is a ``_time_lang.Lang``: one pattern whose named groups say
what matched and the tables that give the words their value. This module
picks the languages a text may be in, runs their patterns and turns each
match into an annotation with ``_time_calc``; it knows no word of any language.

Which language: scripts decide for Japanese (kana), Chinese (Han without
kana) and Russian (Cyrillic); for German, French, Spanish, Italian and Portuguese a phrase counts
only when the text's frequent words vote for that language at least as much
as for English or the others ("hier" is French "yesterday" but German
"here"), so an English turn is never read as another language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date, timedelta

from .._text.lazy_re import lazy
from . import calc as C
from . import patterns as R
from .lang import Lang, de, en, es, fr, it, pt

_KANA = lazy("[\u3040-\u30ff]")
_HAN = lazy("[\u4e00-\u9fff]")
_CYRILLIC = lazy("[\u0400-\u04ff]")
_LATIN: tuple[Lang, ...] = (de.LANG, fr.LANG, es.LANG, it.LANG, pt.LANG)
_WORD = lazy(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
_EN_STOPWORDS = frozenset(
    {"the", "and", "i", "you", "it", "is", "was", "to", "of", "that", "we", "for", "my",
     "with", "have", "so", "but", "this", "be", "are", "just", "what", "at", "me", "your",
     "they", "he", "she", "did", "had", "been", "were", "it's", "i'm", "i've", "there",
     "about", "from", "will", "would", "can", "how", "like", "really", "last", "next", "in",
     "on", "not", "all", "out", "up", "if", "or", "as", "by", "our", "his", "her", "him",
     "them", "then", "than", "when", "who", "which", "do", "does", "don't", "get", "got",
     "go", "went", "lives", "live", "going", "know", "think", "great", "good", "love",
     "thanks", "yeah", "oh", "wow", "too", "very", "some", "any", "one", "two", "day", "time"}
)  # fmt: skip


# Date words that are common words elsewhere vote for no language: "hier" is French
# "yesterday" and German "here" (and counted for English, so they cancel out).
_NOT_VOTERS = frozenset({"hier"})


def _table_words(lang: Lang) -> frozenset[str]:
    """The words of a language's tables, but the short ones ("la", "de": too common)."""
    tables = (lang.fixed, lang.units, lang.weekdays, lang.numbers, lang.dirs)
    return frozenset(w for table in tables for entry in table for w in entry.split() if len(w) >= 3)


def _voters(langs: tuple[Lang, ...]) -> dict[str, frozenset[str]]:
    """Words that vote for one language: its frequent words and its date words, minus
    any word another language (English included) also has ("es", "un", "mes")."""
    own = {lang.name: lang.stopwords | _table_words(lang) for lang in langs}
    own["en"] = _EN_STOPWORDS | _NOT_VOTERS
    return {
        name: frozenset(words - set().union(*(v for k, v in own.items() if k != name)))
        for name, words in own.items()
    }


_VOTERS = _voters(_LATIN)
_VOTE_OF: dict[str, str] = {w: name for name, words in _VOTERS.items() for w in words}
_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
               "八": 8, "九": 9}  # fmt: skip
_KINDS = ("fix", "anum", "aunit", "inum", "iunit", "span", "wd", "blwd", "anwd", "anspan",
          "season", "holiday", "otw")  # fmt: skip
_CLAUSE_WINDOW = 60
_CLAUSE_BREAK = lazy(r"[.!?;:,\n]")
# How far a sentence is read around "over the weekend": bounded, so time stays linear.
_SENTENCE_WINDOW = 200


def _keywords(entries: list[str], drop: frozenset[str] = frozenset()) -> frozenset[str]:
    """The longest word of each entry, but the words in ``drop``."""
    return frozenset(max(e.translate(_PUNCT).split(), key=len) for e in entries) - drop


def _lang_keywords(lang: Lang) -> frozenset[str]:
    """One word of every fixed phrase, unit and weekday: each phrase holds one of them.
    English look-alikes ("an", "week") give way to the words that come with them."""
    keys = _keywords([*lang.fixed, *lang.units, *lang.weekdays], _EN_STOPWORDS | _EN_WORDS)
    return keys | _KEY_STANDINS.get(lang.name, frozenset())


_PUNCT = str.maketrans(
    dict.fromkeys(".,!?;:()[]{}\"'\u2019\u201c\u201d\u00ab\u00bb\u00bf\u00a1-/", " ")
)
# Runs of Latin letters (and digits), the only words the keys and votes hold: a word glued
# to Han text or CJK punctuation ("gestern。昨天") is a word too, as it is once an annotation
# is inserted beside it.
_LATIN_WORD = lazy(
    "[0-9_a-z\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0300-\u036f\u1e00-\u1eff]+"
)
_OTHER_SCRIPT = lazy("[\u0400-\u04ff\u3040-\u30ff\u4e00-\u9fff]")
# Words of other languages that are English words too, and what stands in for them:
# "l'an dernier" is found by "dernier", "ce week-end" by "ce", "il weekend scorso" by "scorso".
_EN_WORDS = frozenset({"an", "week", "weekend", "weekends"})
_KEY_STANDINS: dict[str, frozenset[str]] = {
    "fr": frozenset({"dernier", "dernière", "prochain", "prochaine", "passé", "passée", "ce",
                     "il", "dans"}),
    "it": frozenset({"scorso", "scorsa", "prossimo", "prossima", "questo", "fa", "tra", "fra"}),
}  # fmt: skip
_LATIN_KEYS = tuple((lang, _lang_keywords(lang)) for lang in _LATIN)
_EN_KEYS = _keywords([*en.HOLIDAYS, *en.SEASONS, "fortnight", "weekend", "week-end"])
# Apart, each begins with a literal word that the search finds in C.
_EN_PAIRS = (lazy(r"before[ \t\u00a0]{1,3}last"), lazy(r"after[ \t\u00a0]{1,3}next"))
_ALL_KEYS = _EN_KEYS.union(*(keys for _, keys in _LATIN_KEYS))
ASCII_KEYS = frozenset(k.encode() for k in _ALL_KEYS if k.isascii())
# Every ASCII character that is no part of a word (a letter, a digit, "_", as `_LATIN_WORD`
# and the languages' patterns read words) cuts words: "**gestern**" holds "gestern".
_ASCII_CUT = bytes(b for b in range(128) if not (chr(b).isalnum() or b == 0x5F))
_ASCII_SPLIT = bytes.maketrans(_ASCII_CUT, b" " * len(_ASCII_CUT))


def _words(lowered: str) -> list[str]:
    """The words of a lower-cased text, punctuation dropped (bytes.translate: fast on ASCII)."""
    if lowered.isascii():
        return lowered.encode().translate(_ASCII_SPLIT).decode().split()
    return _LATIN_WORD.findall(lowered)


def english_pair(lowered: str) -> bool:
    """ "the Friday before last", "the week after next"."""
    before, after = _EN_PAIRS
    return ("before" in lowered and before.search(lowered) is not None) or (
        "after" in lowered and after.search(lowered) is not None
    )


def may_apply(text: str, lowered: str) -> bool:
    """Fast necessary condition for `languages` to pick any: another script, or a date word
    of some language. On ASCII the words stay bytes, as `_words` cuts them: on a turn with no
    date word, no str, list or set is built of them."""
    if not text.isascii() and _OTHER_SCRIPT.search(text) is not None:
        return True
    if lowered.isascii():
        found = not ASCII_KEYS.isdisjoint(lowered.encode().translate(_ASCII_SPLIT).split())
    else:
        found = not _ALL_KEYS.isdisjoint(_LATIN_WORD.findall(lowered))
    return found or english_pair(lowered)


def languages(text: str, lowered: str) -> list[Lang]:
    """The languages whose patterns run on ``text``."""
    listed = _words(lowered)
    words = set(listed)  # each word hashed once however many languages' keys are checked
    english = not _EN_KEYS.isdisjoint(words) or english_pair(lowered)
    langs = [en.LANG] if english else []
    if not text.isascii() and _OTHER_SCRIPT.search(text) is not None:
        # Imported on the first text in their script: most processes never see one.
        if _KANA.search(text) is not None:
            from .lang import ja

            langs.append(ja.LANG)
        elif _HAN.search(text) is not None:
            from .lang import ja, zh

            langs += [zh.LANG, ja.LANG_HAN_ONLY]
        if _CYRILLIC.search(text) is not None:
            from .lang import ru

            langs.append(ru.LANG)
    candidates = [lang for lang, keys in _LATIN_KEYS if not keys.isdisjoint(words)]
    if candidates:
        votes = dict.fromkeys(_VOTERS, 0)
        for w in listed:  # every occurrence votes
            name = _VOTE_OF.get(w)
            if name is not None:
                votes[name] += 1
        best = max(votes.values())
        langs += [lang for lang in candidates if votes[lang.name] == best]
    return langs


def matches_near(
    pattern: re.Pattern[str], lowered: str, anchors: Iterable[str]
) -> Iterator[re.Match[str]]:
    """What ``pattern.finditer(lowered)`` yields, for a pattern each of whose matches holds
    one of ``anchors`` less than ``R.ANCHOR_REACH`` characters after its start and ends at
    least two characters before ``R.ANCHOR_TAIL`` past it: only the text near the anchors is
    searched ("day" or "week" once in a long turn does not scan it whole).

    The windows before the anchors hold every match start; a search stopped ``ANCHOR_TAIL``
    past an anchor still sees a whole match and its look-ahead, and look-behinds read before
    the search start.
    """
    hits = []
    for key in anchors:
        at = lowered.find(key)
        while at >= 0:
            hits.append(at)
            at = lowered.find(key, at + 1)
    hits.sort()
    size, reach, done, i = len(lowered), R.ANCHOR_REACH, 0, 0
    while i < len(hits):
        lo, hi = max(done, hits[i] - reach), hits[i]
        i += 1
        while i < len(hits) and hits[i] - reach <= hi:  # overlapping windows: one search
            hi = hits[i]
            i += 1
        end = min(size, hi + R.ANCHOR_TAIL)
        while lo <= hi:
            m = pattern.search(lowered, lo, end)
            if m is None or m.start() > hi:
                break
            yield m
            lo = done = m.end()


def find(text: str, lowered: str, anchor: date) -> list[tuple[int, str]]:
    """(position, inserted string) pairs for every language that may apply."""
    found: list[tuple[int, str]] = []
    for lang in languages(text, lowered):
        phrases = lang.phrase.finditer(lowered)
        if lang.anchors:
            phrases = matches_near(lang.phrase, lowered, lang.anchors)
        for m in phrases:
            try:
                note = _note(lang, m, text, lowered, anchor)
            except (OverflowError, ValueError, KeyError):
                continue  # beyond year 1..9999, or a word form the tables lack
            if note is not None:
                found.append((m.end(), f" [{note}]"))
    return found


def _norm(words: str) -> str:
    return " ".join(words.split())


def _groups(m: re.Match[str]) -> dict[str, str]:
    """Matched groups by name, a trailing digit dropped ("sdir2" counts as "sdir")."""
    out: dict[str, str] = {}
    for name, value in m.groupdict().items():
        if value is not None:
            out.setdefault(name.rstrip("0123456789"), _norm(value))
    return out


def _prev_word(lowered: str, start: int) -> str:
    m = R.PREV_WORDS_REV.match(lowered[max(0, start - 40) : start][::-1])
    return "" if m is None else m[1][::-1].replace("\u2019", "'")


def _sentence_start(text: str, pos: int) -> bool:
    before = text[max(0, pos - 20) : pos].rstrip(" \t\u00a0")
    return not before or before[-1] in ".!?\n\u3002"


def _kind(g: dict[str, str]) -> str:
    return next((k for k in _KINDS if k in g), "edir")


def _blocked(lang: Lang, m: re.Match[str], g: dict[str, str], text: str, lowered: str) -> bool:
    """Whether the context gives the match another sense (see ``Lang``)."""
    if R.NEXT_BRACKET.match(lowered, m.end()) is not None:
        return True  # already annotated (a re-fed text)
    kind = _kind(g)
    prev = _prev_word(lowered, m.start())
    for key in (kind, g.get("fix", "")):
        if prev in lang.not_after.get(key, ()):
            return True
    if kind in ("aunit", "iunit") and (prev.isdigit() or prev in lang.not_after.get("bare", ())):
        return True  # "больше трёх лет назад": the count is not part of the match
    for name, value in m.groupdict().items():
        if value is not None and _norm(value) in lang.lower_only:
            at = m.start(name)
            if text[at].isupper() and not _sentence_start(text, at):
                return True  # a title ("Le Mois Dernier") or a noun ("am Morgen")
    if kind in ("span", "wd") and lang.not_before and lang.not_before.match(lowered, m.end()):
        return True
    if kind in ("inum", "iunit") and lang.past_cues:
        return _past_clause(lang, lowered, m.start(), m.end())
    return False


def _past_clause(lang: Lang, lowered: str, start: int, end: int) -> bool:
    """Whether the clause around "in N days" has a past cue before or after it
    ("Lo hice en tres días", "in drei Tagen gebaut"): a duration, not a date."""
    before = _CLAUSE_BREAK.split(lowered[max(0, start - _CLAUSE_WINDOW) : start])[-1]
    after = _CLAUSE_BREAK.split(lowered[end : end + _CLAUSE_WINDOW])[0]
    words = _WORD.findall(before + " " + after)
    form = lang.past_form
    return any(w in lang.past_cues or (form and form.fullmatch(w)) for w in words)


def _number(lang: Lang, word: str | None) -> int:
    """A count: None (the unit alone: "неделю назад") is 1; digits, words, 一..九十九."""
    if word is None:
        return 1
    if word.isdigit():
        return int(word)  # int() reads full-width digits too
    if word in lang.numbers:
        return lang.numbers[word]
    tens, _, ones = word.partition("十")
    if "十" in word:
        return _CJK_DIGITS.get(tens, 1) * 10 + _CJK_DIGITS.get(ones, 0)
    return _CJK_DIGITS[word]


def _note(lang: Lang, m: re.Match[str], text: str, lowered: str, anchor: date) -> str | None:
    g = _groups(m)
    if _blocked(lang, m, g, text, lowered):
        return None
    if "fix" in g:
        unit, shift = lang.fixed[g["fix"]]
        return C.shifted(unit, shift, anchor)
    if "aunit" in g or "iunit" in g:
        sign, p = (-1, "a") if "aunit" in g else (1, "i")
        n = _number(lang, g.get(p + "num"))
        return C.count_phrase(n, lang.units.get(g[p + "unit"], "day"), sign, anchor)
    if "span" in g:
        return C.shifted(lang.units.get(g["span"], g["span"]), lang.dirs[g["sdir"]], anchor)
    if "anspan" in g:
        return C.shifted(g["anspan"], 2, anchor)
    if "wd" in g:
        return _weekday(lang, lang.dirs[g["wdir"]], lang.weekdays[g["wd"]], anchor)
    return _english(g, text, m.start(), anchor)


def _weekday(lang: Lang, shift: int, weekday: int, anchor: date) -> str | None:
    if lang.calendar_weekdays:
        return C.format_day(C.calendar_weekday(anchor, shift, weekday))
    if shift == 0:
        return None  # "diesen Freitag", like "this Friday": past or coming?
    if shift < 0:
        day = C.last_weekday(anchor, weekday) + (shift + 1) * C.ONE_WEEK
    else:
        day = C.next_weekday(anchor, weekday) + (shift - 1) * C.ONE_WEEK
    return C.format_day(day)


def _english(g: dict[str, str], text: str, start: int, anchor: date) -> str | None:
    """The English-only kinds: before last / after next weekday, seasons, holidays."""
    if "blwd" in g:
        return _weekday(en.LANG, -2, R.WEEKDAYS[g["blwd"]], anchor)
    if "anwd" in g:
        return _weekday(en.LANG, 2, R.WEEKDAYS[g["anwd"]], anchor)
    if "season" in g:
        return C.season_span(anchor, en.SEASONS[g["season"]], en.DIRS[g["edir"]])
    if "holiday" in g:
        month, day = en.HOLIDAYS[g["holiday"].replace("\u2019", "'")]
        return C.holiday(anchor, month, day, en.DIRS[g["edir"]])
    if "onhol" in g:  # "on Valentine's day" told in the past: the one just gone
        if not _told_in_the_past(text, start):
            return None
        month, day = en.HOLIDAYS[g["onhol"].lower().replace("\u2019", "'")]
        return C.holiday(anchor, month, day, -1)
    return _over_the_weekend(text, start, anchor)


def _told_in_the_past(text: str, start: int) -> bool:
    """Whether the sentence around `start` speaks of the past and not of a coming time."""
    window = text[max(0, start - _SENTENCE_WINDOW) : start + _SENTENCE_WINDOW].lower()
    cut = min(start, _SENTENCE_WINDOW)
    lo = max(window.rfind(c, 0, cut) for c in ".!?\n") + 1
    ends = [i for i in (window.find(c, cut) for c in ".!?\n") if i >= 0]
    sentence = window[lo : min(ends, default=len(window))]
    return not en.FUTURE_SENTENCE.search(sentence) and bool(en.PAST_SENTENCE.search(sentence))


def _over_the_weekend(text: str, start: int, anchor: date) -> str | None:
    """ "over the weekend" in a past-tense sentence: the weekend just gone."""
    if not _told_in_the_past(text, start):
        return None
    saturday = C.last_weekday(anchor + timedelta(days=1), 5)
    if saturday == anchor:
        saturday -= C.ONE_WEEK  # said on a Saturday: the weekend before
    return C.format_span(saturday, saturday + C.ONE_DAY)
