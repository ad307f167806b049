"""Light stemmers for French, Spanish, Italian and Portuguese: number and gender only.

Source: J. Savoy's light stemmers (French: JASIS 50(10), 1999; Spanish, Italian, Portuguese:
members.unine.ch/jacques.savoy/clef/), which remove plural and feminine endings and leave
derivation alone; a light stemmer loses little against a full one in these languages and
never conflates unrelated words the way deep suffix stripping can. Written here from that
description. Data in `romance_data`.

>>> [es("naciones"), es("nación"), fr("chevaux"), it("amiche"), pt("canções")]
['nacion', 'nacion', 'cheval', 'amic', 'canção']
"""

from __future__ import annotations

from .romance_data import ACCENTS, ES_STOP, FR_STOP, IT_STOP, PT_STOP, VOWELS


def fr(word: str) -> str:
    """French: "-aux" -> "-al", then plural "-s"/"-x", then feminine "-e", then accents."""
    w = word
    if len(w) > 4 and w.endswith("aux"):
        return (w[:-3] + "al").translate(ACCENTS)
    if len(w) > 3 and w[-1] in "sx":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w.translate(ACCENTS)


def es(word: str) -> str:
    """Spanish: accents, "-ces" -> "-z", plural "-es"/"-s", then a final gender vowel."""
    w = word.translate(ACCENTS)
    if len(w) > 4 and w.endswith("ces"):
        return w[:-3] + "z"
    if len(w) > 4 and w.endswith("es") and w[-3] not in VOWELS:
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s"):
        w = w[:-1]
    if len(w) > 3 and w[-1] in "aoe":
        w = w[:-1]
    return w


def it(word: str) -> str:
    """Italian: accents, "-chi/-che" -> "-c", "-ghi/-ghe" -> "-g", then a final vowel."""
    w = word.translate(ACCENTS)
    if len(w) > 4 and w.endswith(("chi", "che", "ghi", "ghe")):
        return w[:-2]
    if len(w) > 3 and w[-1] in "aeio":
        w = w[:-1]
    return w


def pt(word: str) -> str:
    """Portuguese: "-ões/-ães" -> "-ão", "-ns" -> "-m", "-ais/-éis/-óis" -> "-l", plural
    "-es" after r/s/z or "-s", then a final gender vowel (not of "-ão"), then accents."""
    w = word
    if len(w) > 4 and w.endswith(("ões", "ães")):
        w = w[:-3] + "ão"
    elif len(w) > 3 and w.endswith("ns"):
        w = w[:-2] + "m"
    elif len(w) > 4 and w.endswith(("ais", "éis", "óis")):
        w = w[:-2] + "l"
    elif len(w) > 4 and w.endswith("es") and w[-3] in "rsz":
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s"):
        w = w[:-1]
    if len(w) > 3 and w[-1] in "aoe" and not w.endswith("ão"):
        w = w[:-1]
    return w.translate(ACCENTS)


def read_fr(word: str) -> str:
    """ "" for a French stop word, else the light stem."""
    return "" if word in FR_STOP else fr(word)


def read_es(word: str) -> str:
    """ "" for a Spanish stop word, else the light stem."""
    return "" if word in ES_STOP else es(word)


def read_it(word: str) -> str:
    """ "" for an Italian stop word, else the light stem."""
    return "" if word in IT_STOP else it(word)


def read_pt(word: str) -> str:
    """ "" for a Portuguese stop word, else the light stem."""
    return "" if word in PT_STOP else pt(word)
