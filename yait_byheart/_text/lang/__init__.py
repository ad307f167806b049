"""Languages: how a word of each is read (stop word or stem), and which one a text is in.

A reader maps a folded word to its stem, or to "" for a stop word. Each language's logic and
data live in their own modules (`de` and `de_data`, ...); `detect` picks a Latin-script
language from the evidence in a text.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ar, de, en, hi, nl, other, romance, ru

# The languages `language=` accepts, each with the script its stemmer reads.
LANGUAGES: dict[str, str] = {
    "en": "latin", "de": "latin", "fr": "latin", "es": "latin", "it": "latin", "pt": "latin",
    "nl": "latin", "ru": "cyrillic", "ar": "arabic", "hi": "devanagari",
}  # fmt: skip

READERS: dict[str, Callable[[str], str]] = {
    "en": en.read, "de": de.read, "fr": romance.read_fr, "es": romance.read_es,
    "it": romance.read_it, "pt": romance.read_pt, "nl": nl.read, "ru": ru.read, "ar": ar.read,
    "hi": hi.read,
    # Readings without a language of their own: an unknown alphabetic language, Greek, and
    # every other script (kept as written).
    "und": other.truncate, "el": other.greek, "none": other.identity,
}  # fmt: skip

# The reading of each script when no Latin-style detection applies.
BY_SCRIPT: dict[str, str] = {
    "cyrillic": "ru", "arabic": "ar", "devanagari": "hi", "greek": "el", "other": "none",
}  # fmt: skip
