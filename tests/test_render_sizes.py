"""A conversation measured in characters sizes turns and stretches without rendering them:
the sizes must be exactly the lengths of what is rendered and sent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._turns.render import (
    KINDS,
    MEMORY_MARKER,
    Piece,
    Turn,
    ordinary_length,
    render_ordinary,
    render_unit,
    unit_length,
)

words = st.text(alphabet=st.sampled_from(list("ab é\n[]:日🙂")), max_size=30)
bodies = words | words.map(lambda w: MEMORY_MARKER + w)


@st.composite
def pieces(draw: st.DrawFn) -> Piece:
    text = draw(bodies)
    turn = Turn(
        draw(st.sampled_from(["user", "assistant"])), text, text,
        kind=draw(st.sampled_from(KINDS)), source=draw(st.sampled_from(["", "notes.txt"])),
        when=draw(st.sampled_from(["", "8 May 2023", "9 May 2023"])),
        redacted=draw(st.booleans()) and draw(st.booleans()),
    )  # fmt: skip
    parts = draw(st.integers(min_value=1, max_value=12))
    return Piece(turn, text, draw(st.integers(min_value=0, max_value=parts - 1)), parts)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(pieces(), st.booleans(), st.booleans())
def test_an_entrys_size_is_the_length_of_its_rendering(
    piece: Piece, with_when: bool, named: bool
) -> None:
    rendered = render_ordinary(piece, with_when=with_when, named=named)
    assert ordinary_length(piece, with_when=with_when, named=named) == len(rendered)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(pieces(), min_size=1, max_size=6))
def test_a_stretchs_size_is_the_length_of_its_rendering(stretch: list[Piece]) -> None:
    assert unit_length(stretch) == len(render_unit(stretch))


# Turns short and long (a phrase repeated up to 60 times): a budget of 600 cuts those past a
# few hundred characters into pieces, at paragraphs, lines, sentences or spaces.
LONG_TEXTS = st.builds(
    lambda phrase, times: phrase * times,
    st.text(alphabet=st.sampled_from(list("ab é.\n日")), max_size=12),
    st.integers(min_value=1, max_value=60),
)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            LONG_TEXTS,
            st.sampled_from(["", "8 May 2023", "9 May 2023"]),
        ),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.integers(0, 29), max_size=3),
)
def test_a_conversations_stretch_sizes_are_the_lengths_of_their_renderings(
    turns: list[tuple[str, str, str]], redacted: list[int]
) -> None:
    """Sized from the entries' offsets (long turns cut into pieces, silent and redacted
    turns skipped), each closed stretch measures what rendering its shown pieces makes."""
    mem = Memory(budget=600, chunk=200)
    for role, text, when in turns:
        mem.append(role, text, when=when)
    for index in redacted:
        if index < len(mem):
            mem.redact(index)
    conv = mem._conv
    conv._stretch_sizes = []  # each measured again, as a first compose measures them
    for k, size in enumerate(conv.stretch_sizes):
        shown = [p for p in conv.pieces(*conv.stretch_range(k)) if not p.turn.silent]
        assert size == (len(render_unit(shown)) if shown else 0)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            LONG_TEXTS | LONG_TEXTS.map(lambda t: MEMORY_MARKER + t),
            st.sampled_from(["", "8 May 2023", "9 May 2023"]),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_sizes_in_characters_are_those_a_measure_of_the_rendering_gives(
    turns: list[tuple[str, str, str]],
) -> None:
    """Measured in characters, turns are cut and sized from offsets; measured by a function
    (which renders each piece and stretch), they are laid out the same."""
    by_offsets = Memory(budget=600, chunk=200)
    rendered = Memory(budget=600, chunk=200, measure=lambda text: len(text))
    for role, text, when in turns:
        for mem in (by_offsets, rendered):
            mem.append(role, text, when=when)
    fast, slow = by_offsets._conv, rendered._conv
    assert fast.sizes == slow.sizes and fast.opens == slow.opens
    assert [(e.start, e.end) for e in fast.entries] == [(e.start, e.end) for e in slow.entries]
    assert fast.stretch_sizes == slow.stretch_sizes
