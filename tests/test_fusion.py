"""A retriever adds to byheart's ranking and never replaces it.

The fusion formulas are checked against references written independently (from the papers'
definitions, not from the module's code); a retriever with no opinion changes nothing a
compose sends; and with any retriever, even one that ranks at random, every lexical and
temporal signal keeps working: the user's own words, a question's relative dates, the
sticky joins for a question's missing part.
"""

from __future__ import annotations

import random
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._retrieval import fusion
from yait_byheart._retrieval.ranking import fused
from yait_byheart.semantic import Hybrid

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_retrieval_shapes as shapes

scores = st.dictionaries(st.integers(0, 40), st.floats(0.01, 50.0), max_size=25)
weights = st.floats(0.0, 2.0)


def reference_comb_sum(a: dict[int, float], b: dict[int, float], w: float) -> dict[int, float]:
    """Fox and Shaw's CombSUM over max-normalised scores, the second list weighted by w."""
    top = max(a.values()) if a else 1.0
    ids = set(a) | set(b)
    return {u: (a[u] / top if u in a else 0.0) + w * b.get(u, 0.0) for u in ids}


def reference_rrf(a: dict[int, float], b: dict[int, float], w: float, k: int) -> dict[int, float]:
    """Cormack et al.'s RRF: the sum over lists of weight / (k + rank), ranks from 1."""
    out: dict[int, float] = {}
    for weight, run in ((1.0, a), (w, b)):
        ordered = sorted(run.items(), key=lambda p: (-p[1], p[0]))
        for position in range(len(ordered)):
            uid = ordered[position][0]
            out[uid] = out.get(uid, 0.0) + weight / (k + position + 1)
    return out


@given(scores, scores, weights)
def test_comb_sum_matches_its_definition(
    a: dict[int, float], b: dict[int, float], w: float
) -> None:
    got = fusion.comb_sum(a, b, w)
    want = reference_comb_sum(a, b, w)
    assert got.keys() == want.keys()
    assert all(abs(got[u] - want[u]) < 1e-12 for u in got)


@given(scores, scores, weights, st.integers(1, 100))
def test_rrf_matches_its_definition(
    a: dict[int, float], b: dict[int, float], w: float, k: int
) -> None:
    got = fusion.reciprocal_rank_fusion(a, b, w, k)
    want = reference_rrf(a, b, w, k)
    assert got.keys() == want.keys()
    assert all(abs(got[u] - want[u]) < 1e-12 for u in got)


@given(scores, scores, weights, st.booleans(), st.integers(0, 30))
def test_a_lexical_score_outside_the_head_stays_below_every_lexical_stretch_in_it(
    a: dict[int, float], b: dict[int, float], w: float, rrf: bool, k: int
) -> None:
    head = sorted(((s, u) for u, s in a.items()), reverse=True)
    new, scale = fused(head, b, w, rrf, k)
    assert [s for s, _ in new] == sorted((s for s, _ in new), reverse=True)
    # the head's stretches and the retriever's k best, each once
    assert sorted(u for _, u in new) == sorted(set(a) | set(fusion.best(b, k)))
    if head:  # a score below the head's lowest, scaled, stays below its fused scores
        lexical = [s for s, u in new if u in a]
        assert head[-1][0] * scale <= min(lexical) + 1e-12


@given(scores, scores, weights, st.integers(0, 30))
def test_every_candidate_takes_its_score_from_both_lists(
    a: dict[int, float], b: dict[int, float], w: float, k: int
) -> None:
    """CombSUM sums what each list gives a stretch: a head stretch outside the retriever's
    k best keeps its similarity, one the retriever missed adds 0."""
    head = sorted(((s, u) for u, s in a.items()), reverse=True)
    new, _ = fused(head, b, w, False, k)
    want = reference_comb_sum(a, b, w)
    assert all(abs(s - want[u]) < 1e-12 for s, u in new)


# -- a retriever with no opinion changes nothing ---------------------------------------------


class Silent:
    """Ranks nothing: a retriever with no opinion."""

    def fit(self, docs: list[str]) -> Silent:
        return self

    def rank(self, query: str) -> list[int]:
        return []


class SilentScores(Silent):
    def scores(self, query: str) -> dict[int, float]:
        return {}


WORDS = "oven deck boat camping paris violin dog cat tea rain garden chess rent flight".split()
sentence = st.lists(st.sampled_from(WORDS), min_size=1, max_size=9).map(" ".join)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(sentence, min_size=2, max_size=60),
    query=sentence,
    budget=st.integers(120, 900),
    stability=st.sampled_from([0.0, 0.5]),
    silent=st.sampled_from([Silent, SilentScores]),
)
def test_a_retriever_with_no_opinion_composes_exactly_as_none(
    turns: list[str], query: str, budget: int, stability: float, silent: type[Silent]
) -> None:
    plain = Memory(budget=budget, chunk=120, stability=stability)
    quiet = Memory(budget=budget, chunk=120, stability=stability, retriever=silent())
    for i, text in enumerate(turns):
        for mem in (plain, quiet):
            mem.append("user" if i % 2 == 0 else "assistant", text)
        if i % 7 == 6:
            assert plain.compose(query) == quiet.compose(query)
    assert plain.compose(query) == quiet.compose(query)


# -- every lexical and temporal signal survives any retriever --------------------------------


class Shuffled:
    """Ranks every stretch in a seeded random order: noise the lexical signals must survive."""

    def fit(self, docs: list[str]) -> Shuffled:
        self.order = list(range(len(docs)))
        random.Random(len(docs)).shuffle(self.order)
        return self

    def rank(self, query: str) -> list[int]:
        return self.order


class ShuffledScores(Shuffled):
    def scores(self, query: str) -> dict[int, float]:
        return {u: 1.0 / (r + 1) for r, u in enumerate(self.order)}


def letters(texts: list[str]) -> list[list[float]]:
    """A toy embedder: letter counts, which know nothing of what the question asks."""
    return [[float(t.lower().count(c)) + 1.0 for c in "aeiourst"] for t in texts]


def retrievers() -> list[Any]:
    return [Shuffled(), ShuffledScores(), Hybrid(letters, name="letters")]


@pytest.mark.parametrize("retriever", retrievers(), ids=["rank", "scores", "hybrid"])
def test_a_question_about_the_user_still_finds_their_words(retriever: Any) -> None:
    mem = shapes.rent(retriever=retriever)
    assert 0 in mem.compose("What did I say my rent was raised to?")["included"]


@pytest.mark.parametrize("retriever", retrievers(), ids=["rank", "scores", "hybrid"])
def test_a_questions_relative_date_still_favours_that_day(retriever: Any) -> None:
    mem = Memory(budget=600, chunk=300, stability=0, retriever=retriever)
    for day in range(1, 21):
        mem.append("user", f"Note {day}: went for a walk in the park.", when=date(2023, 5, day))
        mem.append("assistant", "Sounds nice.", when=date(2023, 5, day))
    result = mem.compose("What did I do last weekend?", when=date(2023, 5, 22))
    assert 38 in result["included"]  # the user's note of 20 May


@pytest.mark.parametrize("retriever", retrievers(), ids=["rank", "scores", "hybrid"])
def test_a_two_part_question_still_gets_its_missing_part_joined(retriever: Any) -> None:
    mem = shapes.trip(retriever=retriever)  # the flight at turn 0, the hotel at turn 32
    mem.compose("When does our flight to Lisbon leave from gate B12?")
    result = mem.compose(
        "When does our Lisbon flight leave from gate B12 on Friday, and which hotel?"
    )
    assert {0, 32} <= set(result["included"])


def test_the_embedding_finds_what_shares_no_word_and_the_words_keep_theirs() -> None:
    def meaning(texts: list[str]) -> list[list[float]]:  # "comedian" is about shows here
        return [[3.0 if "comedian" in t or "show" in t else 0.0, 1.0] for t in texts]

    def memory(**kw: Any) -> Memory:
        mem = Memory(budget=700, chunk=240, stability=0, **kw)
        mem.append("user", "I'm an aspiring stand-up comedian, open mics on Tuesdays.")
        mem.append("assistant", "That takes courage!")
        for k in range(14):
            mem.append("user", f"Question {k} about watering the tomato plants.")
            mem.append("assistant", f"Water them at the base ({k}).")
        mem.append("user", "Last night I watched a show about volcanoes.")
        mem.append("assistant", "Volcanoes are fascinating.")
        for k in range(14, 28):
            mem.append("user", f"Question {k} about watering the tomato plants.")
            mem.append("assistant", f"Water them at the base ({k}).")
        return mem

    question = "Can you recommend a show for me to watch tonight?"
    lexical = memory().compose(question)["included"]
    both = memory(retriever=Hybrid(meaning, name="meaning")).compose(question)["included"]
    assert 0 not in lexical and 0 in both  # found by meaning
    assert 30 in lexical and 30 in both  # the word match kept


class Volcanoes:
    """Ranks the stretches that mention volcanoes first."""

    def fit(self, docs: list[str]) -> Volcanoes:
        self.docs = docs
        return self

    def rank(self, query: str) -> list[int]:
        return [k for k, doc in enumerate(self.docs) if "volcano" in doc]


def volcano_pieces_sent(question: str) -> int:
    """Pieces of a long reply about volcanoes sent for `question`, a retriever favouring
    them; no word of the question is in them."""
    mem = Memory(budget=900, chunk=240, stability=0, retriever=Volcanoes())
    for k in range(20):
        mem.append("user", f"Question {k} about the tomato plants.")
        mem.append("assistant", f"Water them at the base ({k}).")
        if k == 9:
            mem.append("user", "Tell me about mountains.")
            reply = "\n\n".join(f"Paragraph {p}: a volcano is a mountain ({p})." for p in range(12))
            mem.append("assistant", reply)
    sent = mem.compose(question)["messages"]
    return sum(p.get("text", "").count("a volcano is") for m in sent for p in m["parts"])


def test_under_a_question_about_the_user_a_retriever_cannot_bring_only_replies() -> None:
    # The long reply is cut into pieces: stretches holding no word of the user's. For a
    # question about what the user said, the retriever's pick among them is no evidence;
    # for any other question it may bring them.
    assert volcano_pieces_sent("What did I say about my tomato plants?") == 0
    assert volcano_pieces_sent("Tell me about the tomato plants") > 0
