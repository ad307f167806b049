"""Italian: ieri, tre giorni fa, la settimana scorsa, venerdì prossimo, tra due settimane."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, START, Lang, S, alt, count, shifts, starts, table, words

FIXED: dict[str, tuple[str, int]] = {
    "l'altro ieri": ("day", -2), "l\u2019altro ieri": ("day", -2), "altroieri": ("day", -2),
    "ieri": ("day", -1), "stanotte": ("day", 0), "oggi": ("day", 0), "stamattina": ("day", 0),
    "stasera": ("day", 0), "domani": ("day", 1), "dopodomani": ("day", 2),
}  # fmt: skip
_PARTS = ("mattina", "pomeriggio", "sera", "notte")
UNITS = table("""
    day: giorno, giorni
    week: settimana, settimane
    month: mese, mesi
    year: anno, anni
    weekend: fine settimana, weekend
""")
NUMBERS: dict[str, int] = {
    "un": 1, "una": 1, "uno": 1, "un'": 1, "due": 2, "tre": 3, "quattro": 4, "cinque": 5,
    "sei": 6, "sette": 7, "otto": 8, "nove": 9, "dieci": 10, "undici": 11, "dodici": 12,
    "quindici": 15, "venti": 20, "qualche": FEW, "pochi": FEW, "alcuni": FEW,
}  # fmt: skip
DIRS = shifts("""
    -1: scorso, scorsa, passato, passata
    0: questo, questa, quest'
    1: prossimo, prossima
""")
WEEKDAYS: dict[str, int] = {
    "lunedì": 0, "lunedi": 0, "martedì": 1, "martedi": 1, "mercoledì": 2, "mercoledi": 2,
    "giovedì": 3, "giovedi": 3, "venerdì": 4, "venerdi": 4, "sabato": 5, "domenica": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_SPANS = ("settimana", "mese", "anno", "fine settimana", "weekend")
_AFTER = ("scorso", "scorsa", "passato", "passata", "prossimo", "prossima")

PHRASE = lazy(
    START
    + starts(
        WEEKDAYS, _SPANS, _AFTER, ["questo", "quest", "tra", "fra"], NUMBERS, FIXED, "0123456789"
    )
    + "(?:"
    + rf"(?P<wd>{alt(WEEKDAYS)}){S}(?P<wdir>{alt(_AFTER)})"
    + rf"|(?P<wdir2>prossimo|prossima){S}(?P<wd2>{alt(WEEKDAYS)})"
    + rf"|(?P<span>{alt(_SPANS)}){S}(?P<sdir>{alt(_AFTER)})"
    + rf"|(?P<sdir2>prossimo|prossima|questo|questa){S}(?P<span2>{alt(_SPANS)})"
    + r"|(?P<sdir3>quest['\u2019])(?P<span3>anno)"
    + rf"|(?P<anum>{_NUM}){S}(?P<aunit>{alt(UNITS)}){S}fa"
    + rf"|(?:tra|fra){S}(?P<inum>{_NUM}){S}(?P<iunit>{alt(UNITS)})"
    + rf"|(?P<fix>{alt(FIXED)})(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

STOPWORDS = words("""
    io sono è non che il lo gli della con per ma sei siamo ho hai abbiamo molto anche ancora
    grazie ciao questo questa mio mia tuo cosa perché sto stato stata fatto andato andata
    oggi ieri domani bene tutto sempre
""")
PAST_CUES = words("fatto finito costruito imparato scritto letto")

LANG = Lang(
    "it", PHRASE, FIXED, UNITS, NUMBERS, {**DIRS, "quest\u2019": 0}, WEEKDAYS,
    stopwords=STOPWORDS, not_after={"span": frozenset({"ogni", "tutta", "tutto"})},
    past_cues=PAST_CUES,
)  # fmt: skip
