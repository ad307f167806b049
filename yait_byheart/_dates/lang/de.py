"""German: gestern, vor drei Tagen, letzte Woche, nächsten Freitag, in zwei Wochen."""

from __future__ import annotations

from ..._text.lazy_re import lazy
from ..calc import FEW
from . import END, START, Lang, S, alt, count, starts, table, words

FIXED: dict[str, tuple[str, int]] = {
    "vorgestern": ("day", -2), "gestern": ("day", -1), "heute": ("day", 0),
    "morgen": ("day", 1), "übermorgen": ("day", 2), "heute nacht": ("day", 0),
}  # fmt: skip
_PARTS = ("morgen", "früh", "vormittag", "mittag", "nachmittag", "abend", "nacht")
UNITS = table("""
    day: tag, tage, tagen
    week: woche, wochen
    weekend: wochenende, wochenenden
    month: monat, monate, monaten, monats
    year: jahr, jahre, jahren
""")
NUMBERS: dict[str, int] = {
    "ein": 1, "einem": 1, "einer": 1, "eine": 1, "einen": 1, "zwei": 2, "drei": 3, "vier": 4,
    "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11,
    "zwölf": 12, "zwanzig": 20, "ein paar": FEW, "einigen": FEW, "paar": FEW,
}  # fmt: skip
DIRS: dict[str, int] = {
    stem + ending: shift
    for stem, shift in (("letzt", -1), ("vergangen", -1), ("vorig", -1), ("vorletzt", -2),
                        ("dies", 0), ("nächst", 1), ("kommend", 1), ("übernächst", 2))
    for ending in ("e", "en", "er", "es")
}  # fmt: skip
WEEKDAYS: dict[str, int] = {
    "montag": 0, "dienstag": 1, "mittwoch": 2, "donnerstag": 3, "freitag": 4,
    "samstag": 5, "sonnabend": 5, "sonntag": 6,
}  # fmt: skip
_NUM = count(NUMBERS)
_SPAN_UNITS = ("woche", "wochenende", "monat", "jahr")

PHRASE = lazy(
    START
    + starts(DIRS, ["vor", "in"], FIXED)
    + "(?:"
    + rf"(?P<wdir>{alt(k for k, v in DIRS.items() if v)}){S}(?P<wd>{alt(WEEKDAYS)})"
    + rf"|(?P<sdir>{alt(DIRS)}){S}(?P<span>{alt(_SPAN_UNITS)})"
    + rf"|vor{S}(?P<anum>{_NUM}){S}(?P<aunit>{alt(UNITS)})"
    + rf"|in{S}(?P<inum>{_NUM}){S}(?P<iunit>{alt(UNITS)})"
    + rf"|(?P<fix>{alt(FIXED)})(?P<part>{S}{alt(_PARTS)})?"
    + ")"
    + END
)

_ARTICLES = words("""
    die das der den dem des eine einer jede jeden meine meinen seine ihre unsere deine
""")
STOPWORDS = words("""
    ich du wir ihr sie und ist nicht mit ein eine war habe hat haben auch noch schon aber wie
    mein meine bin sind das der zu auf für dem den es waren uns mich dich mir dir sehr gut ja
    nein heute gestern bei nach vor im am um ganz wieder wird werde kann danke
""")
NOT_AFTER: dict[str, frozenset[str]] = {
    "morgen": words("""
        guten heute gestern vorgestern am jeden den der dem diesen einen schönen frühen
        nächsten einem ein zum
    """),
    "span": _ARTICLES,
    "wd": _ARTICLES - {"den", "dem"},
}
PAST_CUES = words("""
    hatte hatten war waren wurde wurden gebaut geschafft geschrieben gelernt gemacht erledigt
    gelesen fertig gefahren gelaufen abgeschlossen renoviert
""")
# Past participles: "gebaut", "gelernt", "abgeschlossen", "fertiggestellt".
PAST_FORM = lazy(r"(?:ab|an|auf|aus|ein|mit|nach|vor|zu|fertig)?ge\w{2,}(?:t|en)")

LANG = Lang(
    "de", PHRASE, FIXED, UNITS, NUMBERS, DIRS, WEEKDAYS, stopwords=STOPWORDS,
    not_after=NOT_AFTER, lower_only=frozenset({"morgen"}), past_cues=PAST_CUES,
    past_form=PAST_FORM, not_before=lazy(rf"{S}(?:des|eines)(?!\w)"),
)  # fmt: skip
