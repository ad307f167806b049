"""Long turns become pieces (issue 19): cut at the coarsest boundary that fits, verbatim."""

from __future__ import annotations

import json
import re
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._sizes import sent_text, tokenish
from yait_byheart import Memory
from yait_byheart._turns.pieces import _split_after, cut, cut_offsets

CASES = [
    # (text, limit, the pieces expected)
    ("para one is here.\n\npara two is here.\n\npara three.", 20,
     ["para one is here.\n\n", "para two is here.\n\n", "para three."]),
    ("line one here\nline two here\nline three", 15,
     ["line one here\n", "line two here\n", "line three"]),
    ("One sentence here. Another one here! A third?", 20,
     ["One sentence here. ", "Another one here! ", "A third?"]),
    ("alpha beta gamma delta epsilon", 12, ["alpha beta ", "gamma delta ", "epsilon"]),
    ("tiny " + "x" * 25 + " end", 10, ["tiny ", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx ", "end"]),
    ("我们今天去了公园。" * 4, 20, ["我们今天去了公园。我们今天去了公园。"] * 2),
    ("Wir gingen. Sie blieben. Ihr kamt.", 13, ["Wir gingen. ", "Sie blieben. ", "Ihr kamt."]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "limit", "expected"), CASES)
def test_cut_at_the_coarsest_boundary_that_fits(text: str, limit: int, expected: list[str]) -> None:
    assert cut(text, limit, len) == expected


def test_a_paragraph_that_fits_is_not_cut_at_its_lines() -> None:
    text = "a1\na2\na3\n\n" + "b" * 5 + "\n" + "c" * 5
    assert cut(text, 10, len)[0] == "a1\na2\na3\n\n"


CHUNKS = ["word", "mot", "字", "\n", "\n\n", ". ", "。", " "]
texts = st.text(
    alphabet=st.sampled_from(list("ab cé\n\n.!?。日本語 \t🙂")) | st.characters(), max_size=400
) | st.lists(st.sampled_from(CHUNKS), max_size=200).map("".join)
CJK_STOPS = "\u3002\uff01\uff1f"


def words_at(text: str, at: int) -> str:
    """The run of non-space characters a cut at `at` falls inside."""
    left = re.search(r"\S*$", text[:at])
    right = re.match(r"\S*", text[at:])
    assert left is not None and right is not None
    return left.group() + right.group()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(texts, st.integers(min_value=1, max_value=60), st.sampled_from([len, tokenish]))
def test_pieces_join_back_and_fit(text: str, limit: int, measure: object) -> None:
    assert callable(measure)
    pieces = cut(text, limit, measure)
    assert "".join(pieces) == text
    assert all(pieces) or pieces == [""]
    assert all(measure(p) <= limit for p in pieces)
    at = 0
    for piece in pieces[:-1]:
        at += len(piece)
        if not text[at - 1].isspace() and not text[at].isspace() and text[at - 1] not in CJK_STOPS:
            # inside a word: only when that word alone is too long for a piece
            assert measure(words_at(text, at)) > limit


SECRET = "quokkaphrase"


def long_turn() -> str:
    paragraphs = [
        f"Paragraph {k}: the {SECRET} is kept here together with ordinary words number {k}."
        for k in range(300)
    ]
    return "\n\n".join(paragraphs)


def test_redact_blanks_every_piece() -> None:
    mem = Memory(budget=1_000)
    mem.append("user", "before")
    mem.append("assistant", long_turn())
    mem.append("user", "after, tell me about the quokkaphrase")
    assert len(mem.to_dict()["turns"][1]["cuts"]) > 10
    assert SECRET in sent_text(mem.compose(f"what is the {SECRET}?"))
    mem.redact(1)
    data = json.dumps(mem.to_dict())
    assert data.count(SECRET) == 1  # only the last turn's own mention
    for query in (f"what is the {SECRET}?", "paragraph ordinary words", None):
        result = mem.compose(query)
        assert 1 not in result["included"] and 1 not in result["partial"]
        assert sent_text(result).count(SECRET) <= (2 if query and SECRET in query else 1)
    reopened = Memory.from_dict(json.loads(data))
    assert 1 not in reopened.compose(f"what is the {SECRET}?")["included"]


def test_included_names_turns_and_partial_those_sent_in_part() -> None:
    mem = Memory(budget=1_000)
    mem.append("user", "short question about the harbour")
    mem.append("assistant", long_turn())
    result = mem.compose("which paragraph mentions number 123?")
    assert 1 in result["included"]
    assert result["partial"] == [1]
    assert "number 123." in sent_text(result)
    whole = Memory(budget=100_000)
    whole.append("user", "short question about the harbour")
    whole.append("assistant", long_turn())
    everything = whole.compose("which paragraph mentions number 123?")
    assert everything["included"] == [0, 1] and everything["partial"] == []


# The sentence boundary as first written: a look-behind, tried at every character.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])\s*")
stops_and_spaces = st.text(alphabet=st.sampled_from(list(".!?。！？ \t\n\u00a0\u3000ab5")),
                           max_size=40)  # fmt: skip


@settings(max_examples=500, deadline=None, derandomize=True)
@given(stops_and_spaces | texts)
def test_sentence_cuts_fall_where_the_look_behind_pattern_puts_them(text: str) -> None:
    ends = [m.end() for m in SENTENCE_END.finditer(text) if 0 < m.end() < len(text)]
    expected = [text[a:b] for a, b in zip([0, *ends], [*ends, len(text)], strict=True)]
    assert _split_after(text, 2) == ([p for p in expected if p] or [""])


@settings(max_examples=500)
@given(
    st.text(alphabet=st.sampled_from(list("ab .!?\n\t3\u3002")), max_size=200),
    st.integers(min_value=1, max_value=40),
)
def test_offsets_in_characters_are_where_cut_cuts(text: str, limit: int) -> None:
    """`cut_offsets` (spans only) cuts where `cut` by `len` does (pieces measured)."""
    bodies = cut(text, limit, len)
    assert cut_offsets(text, limit) == list(accumulate(map(len, bodies[:-1])))
