"""Spanish: ayer, hace tres días, la semana pasada, el próximo viernes, dentro de dos semanas."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, NOT_BEFORE_DE, START, Lang, S, alt, count, shifts, starts, table, words

FIXED: dict[str, tuple[str, int]] = {
    "anteayer": ("day", -2), "antier": ("day", -2), "antes de ayer": ("day", -2),
    "ayer": ("day", -1), "anoche": ("day", -1), "hoy": ("day", 0), "esta mañana": ("day", 0),
    "esta tarde": ("day", 0), "esta noche": ("day", 0), "mañana": ("day", 1),
    "pasado mañana": ("day", 2),
}  # fmt: skip
_PARTS = tuple(f"{p} la {t}" for p in ("por", "en") for t in ("mañana", "tarde", "noche"))
UNITS = table("""
    day: día, días, dia, dias
    week: semana, semanas
    month: mes, meses
    year: año, años
    weekend: fin de semana, fines de semana, finde
""")
NUMBERS: dict[str, int] = {
    "un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6,
    "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "quince": 15,
    "veinte": 20, "un par de": 2, "unos": FEW, "unos pocos": FEW, "unos cuantos": FEW,
    "algunos": FEW, "unas": FEW, "pocos": FEW,
}  # fmt: skip
DIRS = shifts("""
    -2: antepasado, antepasada
    -1: pasado, pasada, anterior
    0: este, esta
    1: próximo, próxima, proximo, proxima, que viene
""")
WEEKDAYS: dict[str, int] = {
    "lunes": 0, "martes": 1, "miércoles": 2, "miercoles": 2, "jueves": 3, "viernes": 4,
    "sábado": 5, "sabado": 5, "domingo": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_SPANS = ("semana", "mes", "año", "fin de semana", "finde")
_NEXT = ("próximo", "próxima", "proximo", "proxima")
_AFTER = ("pasado", "pasada", "antepasado", "antepasada", "que viene", *_NEXT)
_BEFORE = (*_NEXT, "pasado")

PHRASE = lazy(
    START
    + starts(WEEKDAYS, _BEFORE, _SPANS, ["este", "esta", "hace", "dentro", "en"], FIXED)
    + "(?:"
    + rf"(?P<wd>{alt(WEEKDAYS)}){S}(?P<wdir>{alt(_AFTER)})"
    + rf"|(?P<wdir2>{alt(_BEFORE)}){S}(?P<wd2>{alt(WEEKDAYS)})"
    + rf"|(?P<span>{alt(_SPANS)}){S}(?P<sdir>{alt(_AFTER)})"
    + rf"|(?P<sdir2>{alt((*_BEFORE, 'este', 'esta'))}){S}(?P<span2>{alt(_SPANS)})"
    + rf"|hace{S}(?P<anum>{_NUM}){S}(?P<aunit>{alt(UNITS)})"
    + rf"|(?:dentro{S}de|en){S}(?P<inum>{_NUM}){S}(?P<iunit>{alt(UNITS)})"
    # "hoy en día" is nowadays.
    + rf"|(?P<fix>{alt(FIXED)})(?!{S}en{S}d[ií]a)(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

STOPWORDS = words("""
    yo tú él ella nosotros y es no el los las una con para pero estoy estaba fue muy mi mis
    que qué por del al hay sí gracias hoy ayer mañana hace este esta ese eso como más lo le
    se me te nos he ha hemos fuimos tengo tenemos voy vamos donde cuando hola pues también
    bien porque semana hasta
""")
NOT_AFTER: dict[str, frozenset[str]] = {
    "mañana": words("la una cada toda las media buena el por en esa aquella misma buenas"),
    "anum": frozenset({"desde"}),
    "span": frozenset({"cada", "toda", "una"}),
}
PAST_CUES = words("""
    hice hizo hicimos fue era tardé tardó terminé terminó acabé he ha hemos había aprendí
    construí logré
""")
# Preterites ("terminé", "perdí", "aprendió"); the future ends in "ré" ("llegaré").
PAST_FORM = lazy(r"(?!(?:aquí|allí|así|ahí)$)\w{2,}(?:[^r]é|í|ó)")

LANG = Lang(
    "es", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, stopwords=STOPWORDS,
    not_after=NOT_AFTER, past_cues=PAST_CUES, past_form=PAST_FORM, not_before=NOT_BEFORE_DE,
)  # fmt: skip
