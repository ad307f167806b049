"""Chinese: 昨天, 三天前, 上周, 上个月, 去年, 上周五, 两周后."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import HAN_DIGITS, Lang, alt, han_count, starts

_WEEK = ("周", "星期", "个星期", "礼拜", "个礼拜")
FIXED: dict[str, tuple[str, int]] = {
    "大前天": ("day", -3), "前天": ("day", -2), "昨天": ("day", -1), "昨日": ("day", -1),
    "昨晚": ("day", -1), "今天": ("day", 0), "今日": ("day", 0), "今晚": ("day", 0),
    "明天": ("day", 1), "明日": ("day", 1), "明晚": ("day", 1), "后天": ("day", 2),
    "大后天": ("day", 3),
    **{f"上{w}": ("week", -1) for w in _WEEK}, **{f"上上{w}": ("week", -2) for w in _WEEK},
    **{f"下{w}": ("week", 1) for w in _WEEK}, **{f"下下{w}": ("week", 2) for w in _WEEK},
    **{f"这{w}": ("week", 0) for w in _WEEK}, "本周": ("week", 0),
    "上周末": ("weekend", -1), "上个周末": ("weekend", -1), "这周末": ("weekend", 0),
    "这个周末": ("weekend", 0), "本周末": ("weekend", 0), "下周末": ("weekend", 1),
    "下个周末": ("weekend", 1),
    "上个月": ("month", -1), "上上个月": ("month", -2), "这个月": ("month", 0),
    "本月": ("month", 0), "下个月": ("month", 1), "下下个月": ("month", 2),
    "前年": ("year", -2), "去年": ("year", -1), "今年": ("year", 0), "明年": ("year", 1),
    "后年": ("year", 2),
}  # fmt: skip
UNITS: dict[str, str] = {
    "天": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
    "个礼拜": "week", "个月": "month", "年": "year",
}  # fmt: skip
NUMBERS: dict[str, int] = {"几": FEW}
DIRS: dict[str, int] = {
    **{f"上{w}": -1 for w in _WEEK}, **{f"下{w}": 1 for w in _WEEK},
    **{f"这{w}": 0 for w in _WEEK}, "本周": 0,
}  # fmt: skip
WEEKDAYS: dict[str, int] = {
    "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
}  # fmt: skip
_HANZI = "一二两三四五六七八九十几"
_NUM = han_count(_HANZI)

PHRASE = lazy(
    # The characters a phrase can start with, looked at first: most of a Chinese text's fail
    # there, before the alternatives are tried one by one (each with its look-behinds).
    starts(DIRS, FIXED, _HANZI, HAN_DIGITS)
    + "(?:"
    + rf"(?P<wdir>{alt(DIRS)})(?P<wd>[一二三四五六日天])(?![一二三四五六七八九十次个])"
    + rf"|(?P<anum>{_NUM})(?P<aunit>{alt(UNITS)})(?:之|以)?前"
    + rf"|(?P<inum>{_NUM})(?P<iunit>{alt(UNITS)})(?:之|以)?后"
    # "之前天气" (the weather before), "以后天", "过去年代" are not 前天/后天/去年.
    + rf"|(?<![之以然过])(?P<fix>{alt(FIXED)})(?!气)"
    + ")"
)

LANG = Lang("zh", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, calendar_weekdays=True)
