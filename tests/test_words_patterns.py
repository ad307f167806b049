"""The word patterns and the language check written for speed decide what their plain forms
decide (issue 34)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart._text import words_re
from yait_byheart._text.lang import detect

MARKS = words_re.MARKS
NO_SPACE = words_re.NO_SPACE
# The patterns as first written: one class of every mark, letters and marks one by one.
PLAIN_MARK = re.compile(rf"[{MARKS}]")
PLAIN_WORD = re.compile(rf"[^\W_](?:[^\W_]|[{MARKS}])*")
PLAIN_RUN_OR_WORD = re.compile(
    rf"([{NO_SPACE}]+)|((?:(?![{NO_SPACE}])[^\W_])(?:(?![{NO_SPACE}])[^\W_]|[{MARKS}])*)"
)
EVERY_CHAR = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
MARK_CHARS = sorted(m.group() for m in PLAIN_MARK.finditer(EVERY_CHAR))


def test_mark_is_the_class_of_every_mark() -> None:
    split = [m.group() for m in re.compile(words_re.MARK).finditer(EVERY_CHAR)]
    assert split == MARK_CHARS
    assert len(MARK_CHARS) > 2000  # the marks of every plane, astral ones included
    assert any(ord(c) > 0xFFFF for c in MARK_CHARS)


# Text dense in what the patterns turn on: marks (of both planes), letters of several scripts,
# Han and Thai (written without spaces), digits, "_" and separators.
PIECES = st.one_of(
    st.sampled_from(MARK_CHARS),
    st.sampled_from("ab9_ -.'\n\u00e9\u0434\u0928\u0627\u4e2d\u6587\u0e01\u0e32\U00020000"),
    st.characters(exclude_categories=("Cs",)),
)


@settings(max_examples=500)
@given(st.lists(PIECES, max_size=40).map("".join))
def test_the_fast_patterns_find_what_the_plain_ones_find(text: str) -> None:
    assert words_re.WORD.findall(text) == PLAIN_WORD.findall(text)
    assert words_re.RUN_OR_WORD.findall(text) == PLAIN_RUN_OR_WORD.findall(text)
    assert (words_re.ANY_MARK.search(text) is None) == (PLAIN_MARK.search(text) is None)


# Words of every stop list (ASCII), and others: texts whose reading is close to call.
_STOP_BYTES = sorted(w for w in detect._STOP_INDEX if isinstance(w, bytes))


@settings(max_examples=500)
@given(
    st.lists(
        st.sampled_from(_STOP_BYTES) | st.sampled_from([b"oven", b"deck", b"5", b"the", b"die"]),
        max_size=30,
    )
)
def test_an_ascii_texts_reading_is_what_counting_its_stop_words_decides(
    words: list[bytes],
) -> None:
    """`latin_ascii` settles most texts by a bound; the reading is the counted one."""
    assert detect.latin_ascii(words) == detect._decide(detect._scores(words), words)
