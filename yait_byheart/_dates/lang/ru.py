"""Russian: вчера, три дня назад, на прошлой неделе, в следующую пятницу, через две недели."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, START, Lang, S, alt, count, starts, words

FIXED: dict[str, tuple[str, int]] = {
    "позавчера": ("day", -2), "вчера": ("day", -1), "сегодня": ("day", 0),
    "завтра": ("day", 1), "послезавтра": ("day", 2),
}  # fmt: skip
_PARTS = ("утром", "днём", "днем", "вечером", "ночью")
UNITS: dict[str, str] = {
    "день": "day", "дня": "day", "дней": "day", "неделю": "week", "недели": "week",
    "недель": "week", "месяц": "month", "месяца": "month", "месяцев": "month", "год": "year",
    "года": "year", "лет": "year",
    "неделе": "week", "месяце": "month", "году": "year", "выходных": "weekend",
    "выходные": "weekend",
}  # fmt: skip
NUMBERS: dict[str, int] = {
    "один": 1, "одну": 1, "одна": 1, "два": 2, "две": 2, "пару": 2, "три": 3, "четыре": 4,
    "пять": 5, "шесть": 6, "семь": 7, "восемь": 8, "девять": 9, "десять": 10,
    "одиннадцать": 11, "двенадцать": 12, "пятнадцать": 15, "двадцать": 20,
    "несколько": FEW,
}  # fmt: skip
DIRS: dict[str, int] = {
    **dict.fromkeys(("прошлой", "прошлом", "прошлых", "прошлые", "прошлый", "прошлую",
                     "прошлое"), -1),
    **dict.fromkeys(("позапрошлой", "позапрошлом", "позапрошлых", "позапрошлые"), -2),
    **dict.fromkeys(("этой", "этом", "этих", "эти", "этот", "эту", "это"), 0),
    **dict.fromkeys(("следующей", "следующем", "следующих", "следующие", "следующий",
                     "следующую", "следующее", "будущей", "будущем"), 1),
}  # fmt: skip
WEEKDAYS: dict[str, int] = {
    "понедельник": 0, "вторник": 1, "среду": 2, "четверг": 3, "пятницу": 4, "субботу": 5,
    "воскресенье": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_AGO_UNITS = ("день", "дня", "дней", "неделю", "недели", "недель", "месяц", "месяца",
              "месяцев", "год", "года", "лет")  # fmt: skip
_SPANS = ("неделе", "месяце", "году", "выходных", "выходные")

PHRASE = lazy(
    START
    + starts(["в", "во", "на", "через"], NUMBERS, _AGO_UNITS, FIXED, "0123456789")
    + "(?:"
    + rf"(?:в|во){S}(?P<wdir>{alt(DIRS)}){S}(?P<wd>{alt(WEEKDAYS)})"
    + rf"|(?:на|в|во){S}(?P<sdir>{alt(DIRS)}){S}(?P<span>{alt(_SPANS)})"
    + rf"|(?:(?P<anum>{_NUM}){S})?(?P<aunit>{alt(_AGO_UNITS)}){S}назад"
    + rf"|через{S}(?:(?P<inum>{_NUM}){S})?(?P<iunit>{alt(_AGO_UNITS)})"
    + rf"|(?P<fix>{alt(FIXED)})(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

NOT_AFTER: dict[str, frozenset[str]] = {
    "anum": words("больше более меньше менее свыше до за чем"),
    "span": frozenset({"всей"}),
    # "больше трёх лет назад": the unit alone after a count word is not "a year ago".
    "bare": words("""
        трёх трех четырёх четырех пяти двух нескольких много многих больше более меньше менее
        сколько лет тысячу сотню полгода
    """),
}

LANG = Lang("ru", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, not_after=NOT_AFTER)
