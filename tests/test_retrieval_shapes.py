"""Retrieval on a user talking to an assistant whose replies run long (LongMemEval's shape).

The units a conversation is cut into do not depend on the budget; a question about what the
user said ranks the user's own words; a question's relative dates, resolved against the time
it is asked, favour what was said on those days.
"""

from __future__ import annotations

import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory, resolve_time
from yait_byheart._dates.spans import annotated_spans
from yait_byheart._retrieval.ranking import asked_speaker
from yait_byheart._turns import patterns as P

TOPICS = [
    ("tomatoes", "plant tomato seedlings deep, water at the base, stake them early"),
    ("sourdough", "feed the starter, fold the dough, bake it in a hot dutch oven"),
    ("marathon", "build mileage slowly, taper two weeks out, carry gels for the race"),
    ("guitar", "practise chords daily, learn barre shapes, tune before each session"),
    ("budget", "track spending weekly, automate savings, keep an emergency fund"),
]


def reply(topic: str, advice: str, paragraphs: int = 8) -> str:
    """A long assistant reply: numbered paragraphs that keep repeating the topic."""
    return "\n\n".join(
        f"{k}. About {topic}: {advice}. More on {topic} and why it matters for {topic}."
        for k in range(1, paragraphs + 1)
    )


def chat(budget: int, paragraphs: int = 8, **kw: object) -> tuple[Memory, int]:
    """Sessions of a user asking about a topic and a long reply; one user turn states a fact
    in passing. Returns the Memory and the index of that turn."""
    mem = Memory(budget=budget, **kw)  # type: ignore[arg-type]
    fact = -1
    for day, (topic, advice) in enumerate(TOPICS * 3, start=1):
        when = date(2023, 3, day)
        ask = f"Can you give me tips about {topic}?"
        if day == 7:
            ask = f"I adopted a beagle called Biscuit last week. Anyway, more {topic} tips?"
        index = mem.append("user", ask, when=when)
        fact = index if day == 7 else fact
        mem.append("assistant", reply(topic, advice, paragraphs), when=when)
    return mem, fact


def stretch_starts(mem: Memory) -> list[int]:
    return list(mem._conv.starts)


def test_units_are_the_same_at_every_budget_from_the_grain_up() -> None:
    # Above 20 grains (6,000 characters at chunk 900) the budget plays no part in the cut,
    # whether a reply is longer than half the budget (3,500 characters) or not.
    budgets = (6_000, 8_000, 20_000, 90_000)
    cuts = {budget: stretch_starts(chat(budget, paragraphs=36)[0]) for budget in budgets}
    assert len({tuple(c) for c in cuts.values()}) == 1


def test_a_long_reply_is_cut_and_a_users_turn_is_not_sent_with_all_of_it() -> None:
    mem, fact = chat(8_000)
    conv = mem._conv
    first = conv.first_entry[fact + 1]
    assert conv.entries[first].parts > 1  # the reply after the fact was cut into pieces
    k = conv.stretch_of(conv.first_entry[fact])
    reply_length = len(conv.turns[fact + 1].text)
    assert conv.stretch_sizes[k] < reply_length / 2  # the fact travels with a piece, not all


@pytest.mark.parametrize("budget", [4_000, 8_000, 20_000])
def test_a_question_about_the_user_finds_their_words_among_long_replies(budget: int) -> None:
    mem, fact = chat(budget)
    result = mem.compose("What is the name of the dog I adopted?")
    assert fact in result["included"]


def test_recall_does_not_fall_as_the_budget_grows() -> None:
    found = []
    for budget in (4_000, 8_000, 20_000):
        mem, fact = chat(budget)
        found.append(fact in mem.compose("What did I call my beagle?")["included"])
    assert found == sorted(found)  # False may turn True as budget grows, never the reverse


def test_asked_speaker() -> None:
    assert asked_speaker("What was the name of my first dog?") == "user"
    assert asked_speaker("how many marathons have i run") is None  # "i" alone is too loose
    assert asked_speaker("How many marathons have I run?") == "user"
    assert asked_speaker("What did you suggest for my trip to Lisbon?") is None
    assert asked_speaker("Remind me of your recommendation for the trip") is None
    assert asked_speaker("What did Caroline research?") is None
    assert asked_speaker("What did we decide about pricing?") is None
    # A request for new help is about the user's tastes, not about what was replied.
    assert asked_speaker("Can you recommend a show for me to watch tonight?") == "user"
    assert asked_speaker("Could you suggest some conferences I might like?") == "user"
    assert asked_speaker("Can you remind me what you recommended for my trip?") is None


# Words of both patterns, in every case, with the characters that fold to their first
# letters under IGNORECASE ("İ" and "ı" match "i"), so that matches and near-misses abound.
_SPEAKER_WORDS = [
    "I", "i", "i'm", "I'd", "ME", "my", "Mine", "myself", "you", "You've", "your", "YOUR",
    "told", "suggested", "recommendation", "can", "could", "won't", "remind", "we", "our",
    "discussed", "chat", "came up with", "\u0130", "\u0131", "x", "'", "_",
    "you told", "can you suggest", "Your advice", "remind me", "We talked", "our last chat",
]  # fmt: skip
SPEAKER_WORDS = st.sampled_from(_SPEAKER_WORDS)
SPEAKER_TEXT = st.lists(
    SPEAKER_WORDS | st.sampled_from([" ", "  ", ", ", "\n", ""]) | st.text(max_size=2),
    max_size=24,
).map("".join)


def _without_look_aheads(pattern: re.Pattern[str], gates: list[str]) -> re.Pattern[str]:
    plain = pattern.pattern
    for gate in gates:
        assert gate in plain
        plain = plain.replace(gate, "", 1)
    return re.compile(plain, pattern.flags)


SPEAKER_PATTERNS = [
    (P.ASKS_REPLIES, _without_look_aheads(P.ASKS_REPLIES, ["(?=[yrwo])"])),
    (P.ASKS_OWN_WORDS, _without_look_aheads(P.ASKS_OWN_WORDS, ["(?=I)", "(?=[im])"])),
]


def _same_matches(text: str) -> None:
    for pattern, reference in SPEAKER_PATTERNS:
        spans = [m.span() for m in pattern.finditer(text)]
        assert spans == [m.span() for m in reference.finditer(text)], (pattern.pattern, text)


def test_speaker_patterns_find_what_they_find_without_their_look_aheads() -> None:
    # Every pair of words, so that each branch is met whole at least once.
    for first in _SPEAKER_WORDS:
        for second in _SPEAKER_WORDS:
            _same_matches(f"{first} {second}")


@given(SPEAKER_TEXT)
def test_speaker_patterns_find_the_same_in_any_soup(text: str) -> None:
    _same_matches(text)


def rent(**kw: object) -> Memory:
    """The user's rent said once (turn 0), then replies that keep repeating "rent"."""
    mem = Memory(budget=700, chunk=300, stability=0, **kw)  # type: ignore[arg-type]
    mem.append("user", "My landlord raised the rent to 1,450 euro.", when="2 May 2023")
    mem.append("assistant", "Noted.", when="2 May 2023")
    for k in range(12):
        mem.append("user", f"Random question {k} about cooking pasta.", when="3 May 2023")
        talk = "Rent, rent, rent: landlords raise rent; what rent is fair rent? Rent laws."
        mem.append("assistant", f"{talk} Pasta note {k}.", when="3 May 2023")
    return mem


def test_the_users_own_words_outrank_a_reply_that_repeats_the_question() -> None:
    result = rent().compose("What did I say my rent was raised to?")
    assert 0 in result["included"]


def test_a_questions_relative_date_favours_what_was_said_that_day() -> None:
    mem = Memory(budget=600, chunk=300, stability=0)
    for day in range(1, 21):
        mem.append("user", f"Note {day}: went for a walk in the park.", when=date(2023, 5, day))
        mem.append("assistant", "Sounds nice.", when=date(2023, 5, day))
    asked_on = date(2023, 5, 22)  # a Monday: last weekend is 20-21 May
    result = mem.compose("What did I do last weekend?", when=asked_on)
    assert 38 in result["included"]  # the user's note of 20 May
    sent = result["messages"][-1]["parts"][0]["text"]
    assert sent == "[22 May 2023]\nWhat did I do last weekend?"  # verbatim, under its date


def test_a_questions_date_annotation_is_read_as_days_not_as_words() -> None:
    # An invoice that mentions the very dates of "last week" must not outrank what was said
    # last week: the question's annotation [15-21 May 2023] is days, not the words "May 2023".
    mem = Memory(budget=260, chunk=300, stability=0)
    mem.append("user", "Invoice: paid 15 May 2023, due 21 May 2023, May 2023 period.",
               when=date(2023, 4, 2))  # fmt: skip
    mem.append("assistant", "Filed.", when=date(2023, 4, 2))
    for day in range(3, 10):
        mem.append("user", f"Chat {day} about the weather.", when=date(2023, 4, day))
        mem.append("assistant", "Indeed.", when=date(2023, 4, day))
    mem.append("user", "I repaired the fence.", when=date(2023, 5, 17))
    mem.append("assistant", "Well done.", when=date(2023, 5, 17))
    result = mem.compose("What did I do last week?", when=date(2023, 5, 24))
    assert 16 in result["included"] and 0 not in result["included"]


def test_compose_when_is_checked_like_appends() -> None:
    mem = Memory()
    mem.append("user", "hello")
    with pytest.raises(ValueError, match=r"Memory\.compose: cannot read a date in when="):
        mem.compose("what now?", when="sometime soon")
    with pytest.raises(TypeError, match=r"Memory\.compose: when must be"):
        mem.compose("what now?", when=20230508)  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(
    anchor=st.dates(min_value=date(1900, 1, 8), max_value=date(2999, 12, 1)),
    said=st.sampled_from(
        ["it was yesterday", "it was last week", "it was last weekend", "it was last month",
         "it was last year", "it was two days ago", "it was a few days ago",
         "it was last summer", "Ich war gestern im Kino", "我上周去了北京"]
    ),
)  # fmt: skip
def test_every_annotation_reads_back_as_days_before_the_anchor(anchor: date, said: str) -> None:
    shown = resolve_time(said, anchor)
    spans = annotated_spans(shown)
    assert len(spans) == 1, shown
    first, last = spans[0]
    assert first <= last < anchor


def trip(**kw: object) -> Memory:
    """A trip planned over weeks, with talk about other things between its two facts."""
    mem = Memory(budget=900, chunk=300, **kw)  # type: ignore[arg-type]
    filler = [
        "the garden needs water", "my sister called", "the oven is broken again",
        "we watched a film", "the cat knocked a glass over", "work was long today",
    ]  # fmt: skip
    mem.append("user", "Our flight to Lisbon leaves Friday at 7:40 from gate B12.")
    mem.append("assistant", "Noted: Lisbon, Friday 7:40, gate B12.")
    for k in range(30):
        mem.append("user", f"{filler[k % len(filler)]} ({k})")
        mem.append("assistant", f"I see ({k}).")
        if k == 14:
            mem.append("user", "We booked the Hotel Alfama Garden, three nights.")
            mem.append("assistant", "Hotel Alfama Garden for three nights, noted.")
    return mem


def test_a_two_part_question_gets_both_parts_from_a_kept_context() -> None:
    mem = trip()
    mem.compose("When does our flight to Lisbon leave from gate B12?")  # kept: the flight
    result = mem.compose(
        "When does our Lisbon flight leave from gate B12 on Friday, and which hotel?"
    )
    assert not result["reselected"]  # the cache-warm context was kept and extended
    assert {0, 32} <= set(result["included"])  # the flight and the hotel


def test_a_question_on_a_new_subject_gets_all_it_needs_without_a_rebuild() -> None:
    fresh, sticky = trip(stability=0), trip()
    sticky.compose("the garden needs water")  # a kept context about something else
    question = "Which hotel did we book, and when does our flight leave?"
    assert set(fresh.compose(question)["included"]) <= set(sticky.compose(question)["included"])
