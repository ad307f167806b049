"""Japanese: 昨日, 三日前, 先週, 先月, 去年, 先週の金曜日, 2週間後."""

from __future__ import annotations

import re
from dataclasses import replace

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import HAN_DIGITS, Lang, alt, han_count, starts

FIXED: dict[str, tuple[str, int]] = {
    "一昨日": ("day", -2), "おととい": ("day", -2), "昨日": ("day", -1), "きのう": ("day", -1),
    "昨夜": ("day", -1), "昨晩": ("day", -1), "ゆうべ": ("day", -1), "今日": ("day", 0),
    "今朝": ("day", 0), "今夜": ("day", 0), "今晩": ("day", 0), "明日": ("day", 1),
    "あした": ("day", 1), "明後日": ("day", 2), "あさって": ("day", 2),
    "先々週": ("week", -2), "先週": ("week", -1), "今週": ("week", 0), "来週": ("week", 1),
    "再来週": ("week", 2), "先週末": ("weekend", -1), "今週末": ("weekend", 0),
    "来週末": ("weekend", 1), "先々月": ("month", -2), "先月": ("month", -1),
    "今月": ("month", 0), "来月": ("month", 1), "再来月": ("month", 2),
    "一昨年": ("year", -2), "おととし": ("year", -2), "去年": ("year", -1),
    "昨年": ("year", -1), "今年": ("year", 0), "来年": ("year", 1), "再来年": ("year", 2),
}  # fmt: skip
UNITS: dict[str, str] = {
    "日": "day", "週間": "week", "か月": "month", "ヶ月": "month", "ケ月": "month",
    "カ月": "month", "ヵ月": "month", "箇月": "month", "年": "year",
}  # fmt: skip
NUMBERS: dict[str, int] = {"数": FEW}
DIRS: dict[str, int] = {"先々週": -2, "先週": -1, "今週": 0, "来週": 1, "再来週": 2}
WEEKDAYS: dict[str, int] = {
    "月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6,
}  # fmt: skip
_KANJI = "一二三四五六七八九十数"
_NUM = han_count(_KANJI)


def _phrase(units: dict[str, str]) -> re.Pattern[str]:
    return lazy(
        # The characters a phrase can start with, looked at first (as in `zh`).
        starts(DIRS, FIXED, _KANJI, HAN_DIGITS)
        + "(?:"
        + rf"(?P<wdir>{alt(DIRS)})の?(?P<wd>[月火水木金土日])曜日?"
        + rf"|(?<!月)(?P<anum>{_NUM})(?P<aunit>{alt(units)})前"
        + rf"|(?<!月)(?P<inum>{_NUM})(?P<iunit>{alt(units)})後"
        # "今日では" is "nowadays"; "過去年" / "过去年" is "past years", not last year.
        + rf"|(?<![過过])(?P<fix>{alt(FIXED)})(?!では)"
        + ")"
    )


PHRASE = _phrase(UNITS)

LANG = Lang("ja", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, calendar_weekdays=True)
#: For Han text without kana, read as Japanese too ("来月", "先週"): "5日前" there
#: is Chinese for "before the 5th", so N days ago/ahead is left out.
LANG_HAN_ONLY = replace(LANG, phrase=_phrase({k: v for k, v in UNITS.items() if k != "日"}))
