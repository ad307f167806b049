"""The letters each stemmed Latin-script language writes with (lower case, after NFKC).

English counts only a-z: an English text with "Zürich" in it still reads as English, since
a letter costs a language one point and English wins ties (see `detect`).
"""

from __future__ import annotations

_BASE = "abcdefghijklmnopqrstuvwxyz0123456789"
ALPHABETS: dict[str, frozenset[str]] = {
    "en": frozenset(_BASE),
    "de": frozenset(_BASE + "äöü"),
    "fr": frozenset(_BASE + "àâæçéèêëîïôœùûüÿ"),
    "es": frozenset(_BASE + "áéíñóúü"),
    "it": frozenset(_BASE + "àèéìíîòóù"),
    "pt": frozenset(_BASE + "áâãàçéêíóôõú"),
    "nl": frozenset(_BASE + "áéíóúàèëïöü"),
}
