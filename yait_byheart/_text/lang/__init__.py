"""Languages: how a word of each is read (stop word or stem), and which one a text is in.

A reader maps a folded word to its stem, or to "" for a stop word. Each language's logic and
data live in their own modules (`de` and `de_data`, ...); `detect` picks a Latin-script
language from the evidence in a text.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from . import other

# The languages `language=` accepts, each with the script its stemmer reads.
LANGUAGES: dict[str, str] = {
    "en": "latin", "de": "latin", "fr": "latin", "es": "latin", "it": "latin", "pt": "latin",
    "nl": "latin", "ru": "cyrillic", "ar": "arabic", "hi": "devanagari",
}  # fmt: skip

# Each language's reader: its module and function, imported on the first word read in it (a
# process that never reads Arabic never loads the Arabic stemmer).
_READER_AT: dict[str, tuple[str, str]] = {
    "en": ("en", "read"), "de": ("de", "read"), "fr": ("romance", "read_fr"),
    "es": ("romance", "read_es"), "it": ("romance", "read_it"), "pt": ("romance", "read_pt"),
    "nl": ("nl", "read"), "ru": ("ru", "read"), "ar": ("ar", "read"), "hi": ("hi", "read"),
}  # fmt: skip


class _Readers(dict[str, Callable[[str], str]]):
    """`READERS[lang]`: the reader, its module imported on first use."""

    def __missing__(self, lang: str) -> Callable[[str], str]:
        module, name = _READER_AT[lang]  # KeyError for no such language, as a dict's
        read: Callable[[str], str] = getattr(importlib.import_module(f".{module}", __name__), name)
        self[lang] = read
        return read


READERS: dict[str, Callable[[str], str]] = _Readers(
    # Readings without a language of their own: an unknown alphabetic language, Greek, and
    # every other script (kept as written).
    und=other.truncate,
    el=other.greek,
    none=other.identity,
)

# The reading of each script when no Latin-style detection applies.
BY_SCRIPT: dict[str, str] = {
    "cyrillic": "ru", "arabic": "ar", "devanagari": "hi", "greek": "el", "other": "none",
}  # fmt: skip
