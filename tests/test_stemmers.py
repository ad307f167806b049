"""Each language's reader (stop word -> "", else its stem) against golden word lists."""

from __future__ import annotations

from pathlib import Path

import pytest

from yait_byheart._text.lang import LANGUAGES, READERS

STEMS = Path(__file__).parent / "data" / "stems"


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for path in sorted(STEMS.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                word, term = line.split("\t")
                cases.append((path.stem, word, term))
    return cases


CASES = _cases()


def test_every_stemmed_language_but_english_has_a_golden_list() -> None:
    # English is checked against Porter's own examples in test_bm25.py.
    assert {code for code, _, _ in CASES} == set(LANGUAGES) - {"en"}


@pytest.mark.parametrize(("code", "word", "term"), CASES)
def test_reader_matches_the_golden_list(code: str, word: str, term: str) -> None:
    assert READERS[code](word) == term


@pytest.mark.parametrize("code", sorted(READERS))
def test_readers_never_fail_on_odd_words(code: str) -> None:
    # Single letters, digits, marks alone and very long words: a term or "", never an error.
    for word in ["a", "5", "\u0301", "x" * 10_000, "ё" * 50, "ال", "ि", "ßß"]:
        assert isinstance(READERS[code](word), str)
