"""Portuguese: ontem, há três dias, a semana passada, na próxima sexta, daqui a duas semanas."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, NOT_BEFORE_DE, START, Lang, S, alt, count, shifts, starts, table, words

FIXED: dict[str, tuple[str, int]] = {
    "anteontem": ("day", -2), "antes de ontem": ("day", -2), "ontem": ("day", -1),
    "hoje": ("day", 0), "esta manhã": ("day", 0), "hoje de manhã": ("day", 0),
    "esta noite": ("day", 0), "amanhã": ("day", 1), "depois de amanhã": ("day", 2),
}  # fmt: skip
_PARTS = ("de manhã", "à tarde", "à noite")
UNITS = table("""
    day: dia, dias
    week: semana, semanas
    month: mês, meses
    year: ano, anos
    weekend: fim de semana, fins de semana
""")
NUMBERS: dict[str, int] = {
    "um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "tres": 3, "quatro": 4, "cinco": 5,
    "seis": 6, "sete": 7, "oito": 8, "nove": 9, "dez": 10, "onze": 11, "doze": 12,
    "quinze": 15, "vinte": 20, "alguns": FEW, "algumas": FEW, "uns": FEW, "umas": FEW,
    "poucos": FEW,
}  # fmt: skip
DIRS = shifts("""
    -1: passado, passada
    0: este, esta, neste, nesta
    1: próximo, próxima, proximo, proxima, que vem
""")
WEEKDAYS: dict[str, int] = {
    "segunda": 0, "segunda-feira": 0, "terça": 1, "terça-feira": 1, "terca": 1, "quarta": 2,
    "quarta-feira": 2, "quinta": 3, "quinta-feira": 3, "sexta": 4, "sexta-feira": 4,
    "sábado": 5, "sabado": 5, "domingo": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_SPANS = ("semana", "mês", "ano", "fim de semana")
_AFTER = ("passado", "passada", "que vem", "próximo", "próxima", "proximo", "proxima")
_BEFORE = ("próximo", "próxima", "proximo", "proxima", "este", "esta", "neste", "nesta")

PHRASE = lazy(
    START
    + starts(
        WEEKDAYS,
        _BEFORE,
        _SPANS,
        ["há", "ha", "daqui", "em", "dentro"],
        NUMBERS,
        FIXED,
        "0123456789",
    )
    + "(?:"
    + rf"(?P<wd>{alt(WEEKDAYS)}){S}(?P<wdir>{alt(_AFTER)})"
    + rf"|(?P<wdir2>próximo|próxima|proximo|proxima){S}(?P<wd2>{alt(WEEKDAYS)})"
    + rf"|(?P<span>{alt(_SPANS)}){S}(?P<sdir>{alt(_AFTER)})"
    + rf"|(?P<sdir2>{alt(_BEFORE)}){S}(?P<span2>{alt(_SPANS)})"
    + rf"|(?:há|ha){S}(?P<anum>{_NUM}){S}(?P<aunit>{alt(UNITS)})"
    + rf"|(?P<anum2>{_NUM}){S}(?P<aunit2>{alt(UNITS)}){S}atrás"
    + rf"|(?:daqui{S}a|dentro{S}de|em){S}(?P<inum>{_NUM}){S}(?P<iunit>{alt(UNITS)})"
    + rf"|(?P<fix>{alt(FIXED)})(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

STOPWORDS = words("""
    eu você voce ele ela nós não nao é foi com para mas estou estava muito meu minha que do
    da dos das no na um uma obrigado obrigada sim também tenho fui vou vamos hoje ontem
    amanhã há isso isto então agora
""")
NOT_AFTER: dict[str, frozenset[str]] = {
    "amanhã": frozenset({"o", "um", "cada"}),
    "anum": frozenset({"desde"}),
    "span": frozenset({"toda", "cada", "uma"}),
}
PAST_CUES = words("fiz fez fizemos terminei terminou aprendi construí")
# Preterites ("terminei", "perdi", "aprendeu", "terminou"); the future ends in "rei".
PAST_FORM = lazy(r"(?!(?:aqui|daqui|ali|assim|sei)$)\w{2,}(?:[^r]ei|ou|eu|i)")

LANG = Lang(
    "pt", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, stopwords=STOPWORDS,
    not_after=NOT_AFTER, past_cues=PAST_CUES, past_form=PAST_FORM, not_before=NOT_BEFORE_DE,
)  # fmt: skip
