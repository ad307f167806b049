"""``when`` strings in other languages: month names and the written date forms.

"8. Mai 2023", "8 mai 2023", "8 de mayo de 2023", "8 maggio 2023",
"8 de maio de 2023", "8 мая 2023 г.", "2023年5月8日", "08.05.2023" (day
first), "2023/05/08". Matched with ``fullmatch`` on a stripped, lower-cased
string of at most ``_time_re.WHEN_MAX`` characters.
"""

from __future__ import annotations

from ..._text.lazy_re import lazy

_NAMES: tuple[tuple[str, ...], ...] = (
    # de, fr, es, it, pt, ru (genitive, then nominative)
    ("januar", "jänner", "janvier", "enero", "gennaio", "janeiro", "января", "январь"),
    ("februar", "février", "fevrier", "febrero", "febbraio", "fevereiro", "февраля", "февраль"),
    ("märz", "maerz", "mars", "marzo", "março", "marco", "марта", "март"),
    ("april", "avril", "abril", "aprile", "апреля", "апрель"),
    ("mai", "mayo", "maggio", "maio", "мая", "май"),
    ("juni", "juin", "junio", "giugno", "junho", "июня", "июнь"),
    ("juli", "juillet", "julio", "luglio", "julho", "июля", "июль"),
    ("august", "août", "aout", "agosto", "августа", "август"),
    ("september", "septembre", "septiembre", "setiembre", "settembre", "setembro", "сентября",
     "сентябрь"),
    ("oktober", "octobre", "octubre", "ottobre", "outubro", "октября", "октябрь"),
    ("november", "novembre", "noviembre", "novembro", "ноября", "ноябрь"),
    ("dezember", "décembre", "decembre", "diciembre", "dicembre", "dezembro", "декабря",
     "декабрь"),
)  # fmt: skip
_ABBREVIATIONS: dict[str, int] = {
    "jan": 1, "janv": 1, "ene": 1, "gen": 1, "янв": 1, "feb": 2, "févr": 2, "fevr": 2,
    "fev": 2, "фев": 2, "mär": 3, "mrz": 3, "mar": 3, "мар": 3, "apr": 4, "avr": 4, "abr": 4,
    "апр": 4, "jun": 6, "giu": 6, "июн": 6, "jul": 7, "juil": 7, "lug": 7, "июл": 7, "aug": 8,
    "ago": 8, "авг": 8, "sep": 9, "sept": 9, "set": 9, "сен": 9, "сент": 9, "okt": 10,
    "oct": 10, "ott": 10, "out": 10, "окт": 10, "nov": 11, "ноя": 11, "dez": 12, "déc": 12,
    "dec": 12, "dic": 12, "дек": 12,
}  # fmt: skip
#: lower-case month name or abbreviation in de, fr, es, it, pt, ru -> month number
MONTHS: dict[str, int] = {
    **_ABBREVIATIONS, **{name: i for i, names in enumerate(_NAMES, 1) for name in names},
}  # fmt: skip

# A trailing time of day: "13:56", "um 13:56 Uhr", "à 13h56", "a las 13:56", "в 13:56".
_CLOCK = (
    r"(?:,?[ ](?:um[ ]|à[ ]|a[ ]las[ ]|alle[ ]|às[ ]|в[ ])?[0-9]{1,2}[:h][0-9]{2}"
    r"(?::[0-9]{2})?(?:[ ]uhr)?)?"
)
# A leading weekday: "Montag, ", "lundi ", "lunes, ", "понедельник, ".
_WEEKDAY = r"(?:[^\W\d_]{2,12}\.?,?[ ])?"

#: "8. Mai 2023", "le 8 mai 2023", "8 de mayo de 2023", "8 мая 2023 г.", "1er mai 2023".
WHEN_NAMED = lazy(
    _WEEKDAY
    + r"(?:le[ ]|el[ ]|il[ ])?(?P<d>[0-9]{1,2})(?:\.|er|º|°)?[ ](?:de[ ])?"
    + r"(?P<m>[^\W\d_]{3,10})\.?,?[ ](?:de[ ]|del[ ])?(?P<y>[0-9]{4})(?:[ ]г(?:ода|\.)?)?"
    + _CLOCK
)
# A weekday in brackets after the date: "2023/05/30 (Tue) 17:27" (LongMemEval's form).
_WEEKDAY_AFTER = r"(?:[ ]?\([^\W\d_]{2,12}\.?\))?"
#: "08.05.2023", "8/5/2023", "2023/05/08", "2023.05.08", "08-05-2023", "2023/05/30 (Tue) 17:27".
WHEN_NUMERIC = lazy(
    _WEEKDAY
    + r"(?P<a>[0-9]{1,4})(?P<sep>[./-])(?P<b>[0-9]{1,2})(?P=sep)(?P<c>[0-9]{1,4})\.?"
    + r"(?:[ ]г(?:ода|\.)?)?"
    + _WEEKDAY_AFTER
    + _CLOCK
)
#: "2023年5月8日", "2023年5月8日(月) 13:56", "2023年05月08日 星期一".
WHEN_CJK = lazy(
    r"(?P<y>[0-9]{4})年[ ]?(?P<m>[0-9]{1,2})月[ ]?(?P<d>[0-9]{1,2})[日号]"
    r"(?:[ ]?[(（][月火水木金土日一二三四五六天][)）]|[ ]?(?:星期|周|礼拜)[一二三四五六日天])?"
    r"(?:[ ]?(?:[上下]午)?[ ]?[0-9]{1,2}[:：][0-9]{2}(?::[0-9]{2})?)?"
)
#: Accepted day orders for slashed or dashed numeric dates.
ORDERS: tuple[str, ...] = ("dmy", "mdy")
