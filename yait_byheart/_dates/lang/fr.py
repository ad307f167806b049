"""French: hier, il y a trois jours, la semaine dernière, vendredi prochain, dans deux semaines."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, START, Lang, S, alt, count, shifts, starts, table, words

FIXED: dict[str, tuple[str, int]] = {
    "avant-hier": ("day", -2), "hier": ("day", -1), "aujourd'hui": ("day", 0),
    "aujourd\u2019hui": ("day", 0), "demain": ("day", 1), "après-demain": ("day", 2),
    "ce matin": ("day", 0), "ce soir": ("day", 0), "cet après-midi": ("day", 0),
    "cette nuit": ("day", 0), "hier soir": ("day", -1), "la veille au soir": ("day", -1),
}  # fmt: skip
_PARTS = ("matin", "soir", "après-midi", "midi")
UNITS = table("""
    day: jour, jours
    week: semaine, semaines
    month: mois
    year: an, ans, année, années
    weekend: week-end, weekend, week-ends, weekends
""")
NUMBERS: dict[str, int] = {
    "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7,
    "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "quinze": 15, "vingt": 20,
    "quelques": FEW,
}  # fmt: skip
DIRS = shifts("""
    -1: dernier, dernière, passé, passée
    0: ce, cet, cette
    1: prochain, prochaine
""")
WEEKDAYS: dict[str, int] = {
    "lundi": 0, "mardi": 1, "mercredi": 2, "jeudi": 3, "vendredi": 4, "samedi": 5, "dimanche": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_SPANS = ("semaine", "mois", "année", "an", "week-end", "weekend")
_AFTER = ("dernier", "dernière", "passé", "passée", "prochain", "prochaine")

PHRASE = lazy(
    START
    + starts(WEEKDAYS, _SPANS, ["ce", "il", "dans", "l"], FIXED)
    + "(?:"
    + rf"(?P<wd>{alt(WEEKDAYS)}){S}(?P<wdir>{alt(_AFTER)})"
    + rf"|(?P<span>{alt(_SPANS)}){S}(?P<sdir>{alt(_AFTER)})"
    + rf"|(?P<sdir2>ce|cet|cette){S}(?P<span2>{alt(_SPANS)})(?:-ci)?"
    + rf"|il{S}y{S}a{S}(?P<anum>{_NUM}){S}(?P<aunit>{alt(UNITS)})"
    + rf"|dans{S}(?P<inum>{_NUM}){S}(?P<iunit>{alt(UNITS)})"
    + rf"|(?P<fix>{alt(FIXED)})(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

STOPWORDS = words("""
    je tu il elle nous vous ils et est pas le les un une avec pour sur mais suis ai avons
    était c'est j'ai c\u2019est j\u2019ai du des au aux ce cette mon ma mes très bien oui non
    merci qui que on été fait dans hier aujourd'hui demain ça ne se qu'il y
""")
NOT_AFTER: dict[str, frozenset[str]] = {
    "span": frozenset({"chaque", "toute", "une"}),
    "ce matin": frozenset({"de"}),
}

LANG = Lang(
    "fr", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, stopwords=STOPWORDS,
    not_after=NOT_AFTER, lower_only=frozenset(_AFTER),
)  # fmt: skip
