"""Tokenization for retrieval: words by script, stop words dropped, stemmed by language.

Every run of letters or digits (with its combining marks) is a word, whatever its length, so
"5" and "I" survive. Scripts written without spaces become character bigrams (see `_words`).
Each word is read in a language: Latin-script words in the language the text's own evidence
points to (`_lang.detect`), Cyrillic as Russian, Arabic script as Arabic, Devanagari as
Hindi; `Tokenizer(language=...)` forces one for the words of its script.

>>> tokenize("We decided on 55 euro a month, I think.")
['decid', '55', 'euro', 'month', 'think']
>>> tokenize("Wir haben uns auf 55 Euro im Monat geeinigt.")
['55', 'euro', 'monat', 'geeinigt']
>>> tokenize("我们上周在北京见面了")
['我们', '们上', '上周', '周在', '在北', '北京', '京见', '见面', '面了']
"""

from __future__ import annotations

import threading
from collections import _count_elements  # type: ignore[attr-defined]
from collections.abc import Sequence
from itertools import filterfalse

from . import words as _words
from .lang import BY_SCRIPT, LANGUAGES, READERS
from .lang.detect import candidates, latin, latin_ascii
from .lang.en_data import STOP_WORDS

__all__ = [
    "STOP_WORDS", "TOKENIZER_VERSION", "Tokenizer", "shared_tokenizer", "term_counts", "tokenize",
]  # fmt: skip

# Bump whenever what a text tokenizes to changes: index snapshots carry it (with the forced
# language), and one written by another version is rebuilt from the text.
TOKENIZER_VERSION = 2

# The vocabulary of a conversation is small next to its length; the bound only guards against
# adversarial input (random strings) growing a cache without end.
_CACHE_MAX = 200_000

# ASCII text (98.7 % of LoCoMo's turns) is split in C: translate maps A-Z to a-z and every byte
# that is not a letter or digit to a space, and split() cuts at the spaces. The words are those
# the general path finds, 4x faster (most of reopening a 100,000-turn conversation).
_ASCII_FOLD = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 else 32 for c in range(256)
)

Cache = dict[str | bytes, str]
# Below this every character is of the Latin script (`words.script_of`).
_NOT_LATIN = "\u0250"


def check_language(language: object, call: str) -> str | None:
    """`language` if it is None or a supported code, else an error naming `call` and the codes."""
    if language is not None and not isinstance(language, str):
        raise TypeError(f"{call}: language must be a str or None, got {type(language).__name__}")
    if language is not None and language not in LANGUAGES:
        raise ValueError(
            f"{call}: language={language!r} is not supported; use one of "
            f"{', '.join(LANGUAGES)}, or None to detect it per text"
        )
    return language


class Tokenizer:
    """Turns text into the terms byheart indexes and searches.

    Safe to share between threads: its caches (word -> stem, one per language) are only ever
    added to or replaced whole, never cleared under a reader.

    Args:
        language: a code from `LANGUAGES` (en, de, fr, es, it, pt, nl, ru, ar, hi) to read
            every word of that language's script in it, or None (the default) to choose per
            text from the text's own evidence (script, stop words, letters).
    """

    def __init__(self, language: str | None = None) -> None:
        self.language = check_language(language, "Tokenizer")
        self._latin = language if language is not None and LANGUAGES[language] == "latin" else ""
        self._scripts = dict(BY_SCRIPT)
        if language is not None and not self._latin:
            self._scripts[LANGUAGES[language]] = language
        self._caches: dict[str, Cache] = {}
        self._lock = threading.Lock()

    @property
    def signature(self) -> str:
        """What an index built by this tokenizer depends on: its version and forced language."""
        return f"tokens-{TOKENIZER_VERSION}:{self.language or 'auto'}"

    @property
    def snapshot_id(self) -> int:
        """`signature` as a number for a binary header: the version times 100, plus 0 for
        detection or 1 + the forced language's position in `LANGUAGES`."""
        forced = 0 if self.language is None else 1 + list(LANGUAGES).index(self.language)
        return TOKENIZER_VERSION * 100 + forced

    def tokenize(self, text: str) -> list[str]:
        """Content-word terms of `text`, in order, repeats kept."""
        return [s for s in self._terms(text) if s]

    def term_counts(self, text: str) -> dict[str, int]:
        """How often each content-word term occurs in `text`.

        >>> Tokenizer().term_counts("Ovens, oven and the OVEN!")
        {'oven': 3}
        """
        return self.counts_of((text,))

    def counts_of(self, texts: Sequence[str]) -> dict[str, int]:
        """Term counts of several texts together, each read in its own language."""
        # Counter's own counting loop (in C on CPython), into a plain dict: a first compose
        # counts thousands of short texts, where making a Counter (its checks run in Python)
        # cost more than the counting, and a copy back to a dict came on top.
        counts: dict[str, int] = {}
        for text in texts:
            _count_elements(counts, self._terms(text))
        counts.pop("", None)  # stop words
        return counts

    def readings(self, text: str) -> list[list[str]]:
        """`tokenize(text)` in each plausible language of its Latin-script words, the one its
        evidence points to first: a short query ("Wann startete Sky Digital?") may say too
        little, and the caller can pick the reading its documents hold (see Memory).

        >>> for reading in Tokenizer().readings("Wann startete Sky Digital?"):
        ...     print(reading)
        ['wann', 'startet', 'sky', 'digit']
        ['startet', 'sky', 'digital']
        ['wann', 'starte', 'sky', 'digita']
        """
        if self._latin:
            return [self.tokenize(text)]
        if text.isascii():
            langs = candidates(text.encode().translate(_ASCII_FOLD).split())
        else:
            found = _latin_words(text)
            if not found:  # no Latin-script word: nothing to read in another language
                return [self.tokenize(text)]
            langs = candidates(found)
        out: list[list[str]] = []
        for lang in langs:
            reading = [s for s in self._terms(text, lang) if s]
            if reading not in out:
                out.append(reading)
        return out

    def language_of(self, text: str) -> str:
        """The reading chosen for the Latin-script words of `text` (en, de, ..., or und)."""
        if self._latin:
            return self._latin
        if text.isascii():
            return latin_ascii(text.encode().translate(_ASCII_FOLD).split())
        return latin(_latin_words(text))

    def _terms(self, text: str, latin_as: str = "") -> list[str]:
        """The term of every word of `text` in order, "" for a stop word; Latin-script words
        read in `latin_as` when given (else the forced or detected language)."""
        latin_as = self._latin or latin_as
        if text.isascii():
            return self._read_ascii(text.encode(), latin_as)
        folded = _words.fold(text)
        if not _words.has_no_space_script(folded):
            if _words.ascii_words_only(folded):  # curly quotes or emoji in English text
                # The other characters become "?", a separator as they are to the pattern.
                return self._read_ascii(folded.encode("ascii", "replace"), latin_as)
            return self._read_words(_words.words(folded), latin_as)
        pieces = _words.split(folded)
        terms = iter(self._read_words([w for w, gram in pieces if not gram], latin_as))
        return [w if gram else next(terms) for w, gram in pieces]

    def _read_ascii(self, data: bytes, latin_as: str) -> list[str]:
        """Terms of ASCII text, split in C (see `_ASCII_FOLD`)."""
        ascii_words = data.translate(_ASCII_FOLD).split()
        return self._read(latin_as or latin_ascii(ascii_words), ascii_words)

    def _read_words(self, found: list[str], latin_as: str) -> list[str]:
        """Terms of words of any scripts, each script read in its language."""
        if found and max(found) < _NOT_LATIN:  # the largest first letter is Latin: all are
            return self._read(self._language("latin", found, latin_as), found)
        scripts = [_words.script_of(w) for w in found]
        kinds = set(scripts)
        if len(kinds) <= 1:
            script = kinds.pop() if kinds else "latin"
            return self._read(self._language(script, found, latin_as), found)
        out = [""] * len(found)
        for script in kinds:
            where = [i for i, s in enumerate(scripts) if s == script]
            group = [found[i] for i in where]
            terms = self._read(self._language(script, group, latin_as), group)
            for i, term in zip(where, terms, strict=True):
                out[i] = term
        return out

    def _language(self, script: str, found: Sequence[str], latin_as: str) -> str:
        if script == "latin":
            return latin_as or latin(found)
        return self._scripts[script]

    def _read(self, lang: str, found: Sequence[str | bytes]) -> list[str]:
        """Each word's term through the cache of `lang`, stemming only words not seen yet."""
        cache = self._caches.get(lang)
        if cache is not None:
            try:
                # `cache` is this call's own reference: a replacement by another thread cannot
                # empty it.
                return list(map(cache.__getitem__, found))
            except KeyError:
                pass  # a word not seen yet
        return list(map(self._fill(lang, found).__getitem__, found))

    def _fill(self, lang: str, found: Sequence[str | bytes]) -> Cache:
        with self._lock:
            cache = self._caches.setdefault(lang, {})
            # The words not seen yet, found in C: most of a text's words are (a set of them
            # all, less the cache, took twice as long).
            new = set(filterfalse(cache.__contains__, found))
            if len(cache) + len(new) > _CACHE_MAX:
                # Adversarial input only: start over (readers holding the old dict keep it).
                cache = self._caches[lang] = {}
                new = set(found)
            read = READERS[lang]
            for word in new:
                cache[word] = read(word.decode() if isinstance(word, bytes) else word)
            return cache


def _latin_words(text: str) -> list[str]:
    """The Latin-script words of non-ASCII `text`, folded."""
    folded = _words.fold(text)
    if _words.has_no_space_script(folded):
        found = [w for w, gram in _words.split(folded) if not gram]
    else:
        found = _words.words(folded)
    return [w for w in found if _words.script_of(w) == "latin"]


# One shared tokenizer per setting: the module-level functions and every Memory use these,
# so a process holding thousands of conversations keeps one cache per language, not each.
_SHARED = {code: Tokenizer(code) for code in (None, *LANGUAGES)}
DEFAULT = _SHARED[None]


def shared_tokenizer(language: str | None, call: str = "Tokenizer") -> Tokenizer:
    """The shared tokenizer for `language` (see `Tokenizer`); `call` names the caller in the
    error for a language that is not supported."""
    return _SHARED[check_language(language, call)]


def clear_cache() -> None:
    """Forget every cached term of the shared tokenizers (for callers that swap a reader)."""
    for tokenizer in _SHARED.values():
        tokenizer._caches = {}


def tokenize(text: str) -> list[str]:
    """Content-word terms of `text`, in order, repeats kept (see `Tokenizer.tokenize`)."""
    return DEFAULT.tokenize(text)


def term_counts(text: str) -> dict[str, int]:
    """How often each content-word term occurs in `text`.

    >>> term_counts("Ovens, oven and the OVEN!")
    {'oven': 3}
    """
    return DEFAULT.term_counts(text)
