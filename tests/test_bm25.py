"""BM25 stages against hand-computed values and an independent reference implementation."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections import Counter
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import BM25
from yait_byheart._retrieval import bm25
from yait_byheart._retrieval import head as _head
from yait_byheart._retrieval import postings as _postings
from yait_byheart._retrieval import ranking as _ranking
from yait_byheart._retrieval.bm25 import Index, idf, term_weight
from yait_byheart._text import words as _words
from yait_byheart._text.porter import stem
from yait_byheart._text.tokens import _ASCII_FOLD, term_counts, tokenize
from yait_byheart._turns.settings import Tuning

# Final outputs of Porter's algorithm for words exercising each step (Porter 1980, the
# examples given with each rule; later-revision rules "bli" and "logi" included).
PORTER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "motoring": "motor",
    "sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size",
    "hopping": "hop", "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz",
    "failing": "fail", "filing": "file", "happy": "happi", "sky": "sky",
    "relational": "relat", "conditional": "condit", "rational": "ration",
    "digitizer": "digit", "conformabli": "conform", "radicalli": "radic",
    "differentli": "differ", "vileli": "vile", "analogousli": "analog",
    "vietnamization": "vietnam", "predication": "predic", "operator": "oper",
    "feudalism": "feudal", "decisiveness": "decis", "hopefulness": "hope",
    "callousness": "callous", "formaliti": "formal", "sensitiviti": "sensit",
    "sensibiliti": "sensibl", "triplicate": "triplic", "formative": "form",
    "formalize": "formal", "electriciti": "electr", "electrical": "electr", "hopeful": "hope",
    "goodness": "good", "revival": "reviv", "allowance": "allow", "inference": "infer",
    "airliner": "airlin", "gyroscopic": "gyroscop", "adjustable": "adjust",
    "defensible": "defens", "irritant": "irrit", "replacement": "replac",
    "adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "homologou": "homolog",
    "communism": "commun", "activate": "activ", "angulariti": "angular",
    "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
    "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control",
    "roll": "roll", "generalizations": "gener", "oscillators": "oscil", "is": "is",
}  # fmt: skip


@pytest.mark.parametrize(("word", "expected"), sorted(PORTER.items()))
def test_porter_stemmer_matches_the_papers_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_tokenize_keeps_single_characters_and_digits() -> None:
    # "5" and "x" survive; "I" is a stop word, dropped by the stop list, not by its length.
    assert tokenize("Plan B costs 5 x 3") == ["plan", "b", "cost", "5", "x", "3"]
    assert tokenize("snake_case") == ["snake", "case"]
    assert tokenize("Café Zürich 2023") == ["café", "zürich", "2023"]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_the_ascii_fast_path_finds_the_same_words_as_the_pattern(text: str) -> None:
    # ASCII text is split with bytes.translate; it must find exactly what the regex finds.
    words = [w.decode() for w in text.encode().translate(_ASCII_FOLD).split()]
    assert words == _words.words(_words.fold(text))


def test_ascii_and_unicode_spellings_of_a_word_share_a_stem() -> None:
    # "running" reaches the cache once as bytes (ASCII text) and once as str (non-ASCII text).
    assert tokenize("Running late!") == ["run", "late"]
    assert tokenize("Running — late") == ["run", "late"]


def test_idf_and_term_weight_by_hand() -> None:
    # N=4, df=1: ln(1 + 3.5/1.5) = ln(3.3333)
    assert idf(1, 4) == pytest.approx(math.log(1 + 3.5 / 1.5))
    # tf=2, dl=avgdl: 2 * 2.2 / (2 + 1.2) = 1.375
    assert term_weight(2, 5, 5.0) == pytest.approx(1.375)
    # a document twice as long as average: norm = 1.2 * (0.25 + 0.75 * 2) = 2.1
    assert term_weight(1, 10, 5.0) == pytest.approx(2.2 / 3.1)


def reference_bm25(docs: list[list[str]], query: list[str]) -> list[float]:
    """Textbook BM25 written independently of the package (k1=1.2, b=0.75)."""
    n = len(docs)
    avg = sum(len(d) for d in docs) / n
    out = []
    for d in docs:
        c = Counter(d)
        total = 0.0
        for term in set(query):
            df = sum(1 for x in docs if term in x)
            if df == 0 or term not in c:
                continue
            w = math.log((n - df + 0.5) / (df + 0.5) + 1)
            total += w * c[term] * 2.2 / (c[term] + 1.2 * (0.25 + 0.75 * len(d) / avg))
        out.append(total)
    return out


def test_scores_match_hand_computation() -> None:
    docs = ["pricing pricing euro", "euro month", "weather"]
    got = BM25().fit(docs).scores("pricing euro")
    # avgdl = (3+2+1)/3 = 2; doc0: pricing tf2 df1, euro tf1 df2; N=3
    idf_pricing = math.log(1 + 2.5 / 1.5)
    idf_euro = math.log(1 + 1.5 / 2.5)
    norm0 = 1.2 * (0.25 + 0.75 * 3 / 2)
    expected0 = idf_pricing * 2 * 2.2 / (2 + norm0) + idf_euro * 2.2 / (1 + norm0)
    assert got[0] == pytest.approx(expected0)
    assert got[2] == 0.0
    assert BM25().fit(docs).rank("pricing euro") == [0, 1, 2]


VOCABULARY = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]
words = st.sampled_from(VOCABULARY)


@given(
    st.lists(st.lists(words, min_size=1, max_size=12), min_size=1, max_size=15),
    st.lists(words, min_size=1, max_size=4),
)
def test_scores_equal_the_reference(docs: list[list[str]], query: list[str]) -> None:
    got = BM25().fit([" ".join(d) for d in docs]).scores(" ".join(query))
    tokenized = [tokenize(" ".join(d)) for d in docs]
    assert got == pytest.approx(reference_bm25(tokenized, tokenize(" ".join(query))))


@given(
    st.lists(st.lists(words, min_size=1, max_size=8), min_size=1, max_size=12),
    st.lists(words, min_size=1, max_size=3),
    st.integers(0, 11),
)
def test_a_dumped_index_loads_back_with_the_same_scores(
    docs: list[list[str]], query: list[str], removed: int
) -> None:
    index = Index()
    for i, doc in enumerate(docs):
        index.add(i, Counter(doc))
    if removed < len(docs):
        index.remove(removed, Counter(docs[removed]))
    loaded = Index.load(index.dump())
    assert len(loaded) == len(index)
    assert loaded.scores(query) == index.scores(query)
    # The k best are exact in both; the rest are lower bounds, which may differ (a removal
    # never lowers the original's largest-tf bound; the loaded one computes it afresh).
    assert loaded.head(query, 2)[0] == index.head(query, 2)[0]
    assert loaded.rarest(query, 2) == index.rarest(query, 2)


def test_only_bytes_known_intact_skip_the_check_of_every_posting() -> None:
    index = Index()
    index.add(0, {"oven": 2})
    index.add(1, {"oven": 1, "deck": 1})
    data = index.dump()
    assert Index.load(data, intact=True).scores(["oven"]) == index.scores(["oven"])
    # The last posting (deck's document 1) made to name document 2, which is not held.
    doctored = bytearray(data)
    at = data.rindex(b"oven\ndeck") - 4 * 4  # before the term table: 3 tfs, then deck's id
    assert doctored[at] == 1
    doctored[at] = 2
    with pytest.raises(ValueError, match="postings name documents it does not hold"):
        Index.load(bytes(doctored))


@given(
    st.lists(st.lists(words, min_size=1, max_size=8), min_size=1, max_size=12),
    st.lists(
        st.tuples(st.sampled_from(["query", "add", "remove", "holding"]),
                  st.lists(words, min_size=1, max_size=4)),
        max_size=12,
    ),
)  # fmt: skip
def test_a_loaded_index_acts_as_the_one_dumped(
    docs: list[list[str]], ops: list[tuple[str, list[str]]]
) -> None:
    """Whatever comes after, a loaded index answers, changes and dumps as the index it was
    dumped from (whose groups and columns, unlike its own, queries may have built)."""
    original = Index()
    for i, doc in enumerate(docs):
        original.add(i, Counter(doc))
    data = original.dump()
    loaded, eager = Index.load(data), original
    assert dict(loaded.holding("")) == {}
    held = {i: Counter(doc) for i, doc in enumerate(docs)}
    next_id = len(docs)
    for kind, terms in ops:
        if kind == "add":
            held[next_id] = Counter(terms)
            for index in (loaded, eager):
                index.add(next_id, held[next_id])
            next_id += 1
        elif kind == "remove" and held:
            doc = min(held)
            for index in (loaded, eager):
                index.remove(doc, held[doc])
            del held[doc]
        assert loaded.rarest(terms, 2) == eager.rarest(terms, 2)
        assert [loaded.document_frequency(t) for t in terms] == [
            eager.document_frequency(t) for t in terms
        ]
        if kind == "query" and len(eager):
            assert loaded.head(terms, 3)[0] == eager.head(terms, 3)[0]
            assert loaded.scores(terms) == eager.scores(terms)
            assert loaded.exact(list(held), terms) == eager.exact(list(held), terms)
        elif kind == "holding":
            assert dict(loaded.holding(terms[0])) == dict(eager.holding(terms[0]))
    assert loaded.dump() == eager.dump()


def test_damaged_index_bytes_are_refused() -> None:
    index = Index()
    index.add(0, {"oven": 2, "deck": 1})
    index.add(1, {"oven": 1})
    data = index.dump()
    for broken in (b"", b"nonsense bytes", data[:-3], data[:20], b"XXXX" + data[4:]):
        with pytest.raises(ValueError, match="Index.load"):
            Index.load(broken)


@given(st.lists(st.lists(words, min_size=1, max_size=8), min_size=2, max_size=10), words)
def test_incremental_index_equals_a_fresh_fit(docs: list[list[str]], term: str) -> None:
    """Adding, removing and re-adding documents leaves the same scores as building anew."""
    index = Index()
    for i, d in enumerate(docs):
        index.add(i, term_counts(" ".join(d)))
    index.remove(0, term_counts(" ".join(docs[0])))
    index.add(0, term_counts(" ".join(docs[0])))
    fresh = Index()
    for i, d in enumerate(docs):
        fresh.add(i, term_counts(" ".join(d)))
    got, _ = index.scores(tokenize(term))
    want, _ = fresh.scores(tokenize(term))
    assert got == pytest.approx(want)


def test_extra_documents_share_the_statistics() -> None:
    """An outside document scores exactly as it would if it were indexed."""
    docs = ["euro pricing", "weather rain", "rain again"]
    index = Index()
    for i, d in enumerate(docs[:2]):
        index.add(i, term_counts(d))
    inside, extra = index.scores(tokenize("rain"), [Counter(tokenize(docs[2]))])
    full = BM25().fit(docs).scores("rain")
    assert inside.get(1) == pytest.approx(full[1])
    assert extra[0] == pytest.approx(full[2])


def test_bad_input_is_named() -> None:
    with pytest.raises(TypeError, match="BM25.fit"):
        BM25().fit("one string")
    with pytest.raises(TypeError, match="document 1"):
        BM25().fit(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="BM25.scores"):
        BM25().fit(["a"]).rank(None)  # type: ignore[arg-type]


@given(
    st.lists(st.lists(words, min_size=1, max_size=12), min_size=1, max_size=30),
    st.lists(words, min_size=1, max_size=6),
    st.integers(min_value=1, max_value=10),
)
def test_maxscore_top_k_equals_exhaustive_scoring(
    docs: list[list[str]], query: list[str], k: int
) -> None:
    """Pruned scoring gives the exact scores of the k best; nobody else scores higher."""
    index = Index()
    for i, d in enumerate(docs):
        index.add(i, term_counts(" ".join(d)))
    exact, _ = index.scores(tokenize(" ".join(query)))
    pruned = index.head(tokenize(" ".join(query)), k)[1]
    best = sorted(pruned, key=lambda d: -pruned[d])[:k]
    for doc in best:
        assert pruned[doc] == pytest.approx(exact[doc])
    kth = min((pruned[d] for d in best), default=0.0)
    for doc, score in exact.items():
        assert doc in best or score <= kth + 1e-9
    # head(): the same k best, as (score, id) best first, with their exact scores.
    head, _, _ = index.head(tokenize(" ".join(query)), k)
    assert [s for s, _ in head] == pytest.approx(sorted(exact.values(), reverse=True)[:k])
    for score, doc in head:
        assert score == pytest.approx(exact[doc])


def _head_both_ways(
    index: Index, query: list[str], k: int
) -> tuple[list[tuple[float, int]], dict[int, float], list[tuple[float, int]]]:
    """head() with every list kept in (tf, length) groups, and with none (a full walk)."""
    with mock.patch.object(_head, "_BANDED", 1):
        pruned, scores, _ = index.head(query, k)
    with mock.patch.object(_head, "_BANDED", 1 << 40):
        walked, _, _ = index.head(query, k)
    return pruned, scores, walked


def test_neighbours_of_a_complete_head_score_as_if_each_were_scored_exactly() -> None:
    """When head() passed no document over, a neighbour outside its scores is given 0.0
    without being scored: the new head is the one every neighbour's exact score gives. Over
    generated indexes whose lists head() prunes (the first words of a vocabulary far more
    common than the last), so that some heads pass documents over and some do not."""
    vocabulary = VOCABULARY
    tuning = Tuning()
    outcomes: Counter[bool] = Counter()
    for seed in range(1500):
        rng = random.Random(seed)
        n = rng.randint(5, 40)
        index = Index()
        for i in range(n):
            if i % 3 != 1:  # gaps: stretches the index does not hold
                size = rng.randint(1, 12)  # each word from a prefix: the first words common
                drawn = (rng.choice(vocabulary[: rng.randint(1, 8)]) for _ in range(size))
                index.add(i, Counter(drawn))
        query = [rng.choice(vocabulary) for _ in range(rng.randint(1, 5))]
        k = rng.randint(1, 6)
        with mock.patch.object(_head, "_BANDED", 1):  # grouped lists: the pruned path
            head, scores, complete = index.head(query, k)
            got = _ranking.with_neighbours(index, query, head, scores, n, k, tuning, complete)
        # The reference: every stretch of the head and around it scored exactly, plus shares.
        exact = index.exact(range(n), query)
        sources = {u for _, u in head}
        shares = _ranking.neighbour_shares(
            {u: s for s, u in head}, n, tuning.context_weight, tuning.context_width
        )
        pool = sources | {u for u in shares if u in index or u - 1 in sources}
        want = sorted(((exact[u] + shares.get(u, 0.0), u) for u in pool), reverse=True)[:k]
        assert got == want, seed
        outcomes[complete] += 1
    assert min(outcomes[True], outcomes[False]) > 100  # both kinds of head were checked


@given(
    st.lists(st.lists(words, min_size=1, max_size=12), min_size=1, max_size=30),
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.lists(words, min_size=1, max_size=12)),
            st.tuples(st.just("remove"), st.integers(0, 60)),
            st.tuples(st.just("query"), st.lists(words, min_size=1, max_size=5), st.integers(1, 8)),
        ),
        max_size=30,
    ),
)
def test_grouped_head_equals_a_full_walk_through_adds_removes_and_reloads(
    first: list[list[str]], ops: list[tuple[Any, ...]]
) -> None:
    """The (tf, length) groups head() builds on first use stay right as documents come and
    go, and a reloaded index (which rebuilds them) gives the same head: the same ids and the
    same floats as walking every posting, and the exact scores of exhaustive scoring."""
    index = Index()
    docs: dict[int, Counter[str]] = {}
    for words_ in first:
        docs[len(docs)] = Counter(words_)
        index.add(len(docs) - 1, docs[len(docs) - 1])
    next_id = len(docs)

    def check(target: Index, query: list[str], k: int) -> None:
        pruned, scores, walked = _head_both_ways(target, query, k)
        assert pruned == walked
        exact, _ = target.scores(query)
        assert [s for s, _ in pruned] == pytest.approx(sorted(exact.values(), reverse=True)[:k])
        for score, doc in pruned:
            assert scores[doc] == score == pytest.approx(exact[doc])
        for doc, score in scores.items():  # the others: lower bounds
            assert score <= exact[doc] + 1e-9

    for op in ops:
        if op[0] == "add":
            docs[next_id] = Counter(op[1])
            index.add(next_id, docs[next_id])
            next_id += 1
        elif op[0] == "remove" and docs:
            doc = sorted(docs)[op[1] % len(docs)]
            index.remove(doc, docs.pop(doc))
        elif op[0] == "query":
            check(index, op[1], op[2])
    query = ["alpha", "beta", "gamma", "theta"]
    check(index, query, 3)
    loaded = Index.load(index.dump())
    check(loaded, query, 3)
    assert _head_both_ways(loaded, query, 3)[0] == _head_both_ways(index, query, 3)[0]


class _DictIndex:
    """A plain reference index: each document's counts in a dict, every statistic recounted.

    It sums in the orders `Index` documents (alphabetical for `scores`; fewest documents
    first, then alphabetical, for `exact` and `head`), so their floats must be equal, not just
    close."""

    def __init__(self) -> None:
        self.docs: dict[int, dict[str, int]] = {}

    def holding(self, term: str) -> dict[int, int]:
        return {d: c[term] for d, c in self.docs.items() if term in c}

    def _stats(self) -> tuple[int, int]:
        return len(self.docs), sum(sum(c.values()) for c in self.docs.values())

    def scores(self, query: list[str]) -> dict[int, float]:
        n, total = self._stats()
        out: dict[int, float] = {}
        if not n:
            return out
        avg = total / n
        for term in sorted(set(query)):
            held = self.holding(term)
            if not held:
                continue
            w = bm25.idf(len(held), n)
            for d, tf in held.items():
                norm = bm25.K1 * (1.0 - bm25.B + bm25.B * sum(self.docs[d].values()) / avg)
                out[d] = out.get(d, 0.0) + w * tf * (bm25.K1 + 1.0) / (tf + norm)
        return out

    def exact(self, query: list[str]) -> dict[int, float]:
        """Every document's score summed rarest term first, 0.0 for those holding none."""
        n, total = self._stats()
        out = dict.fromkeys(self.docs, 0.0)
        terms = sorted(
            (t for t in set(query) if self.holding(t)), key=lambda t: (len(self.holding(t)), t)
        )
        if not n or not terms:
            return out
        a, c = bm25.K1 * (1.0 - bm25.B), bm25.K1 * bm25.B / (total / n)
        for term in terms:
            held = self.holding(term)
            weight = bm25.idf(len(held), n) * (bm25.K1 + 1.0)
            for d, tf in held.items():
                out[d] += weight * tf / (tf + a + c * sum(self.docs[d].values()))
        return out


_counts = st.dictionaries(
    words, st.one_of(st.integers(1, 3), st.integers(250, 260)), min_size=1, max_size=5
)


@pytest.mark.parametrize(
    ("banded", "dense"), [(256, 32), (1, 32), (1, 1 << 40), (2, 1), (1 << 40, 1 << 40)]
)
@settings(max_examples=200)
@given(
    st.lists(
        st.one_of(
            # ids past 65,535 too: they turn 2-byte id arrays into 4-byte ones
            st.tuples(st.just("add"), st.integers(0, 12) | st.integers(65_533, 65_538), _counts),
            st.tuples(st.just("remove"), st.integers(0, 1000)),
            st.tuples(st.just("query"), st.lists(words, min_size=1, max_size=5), st.integers(1, 6)),
            # several at once (`add_many`): packed when the index is empty, ids ascending
            st.tuples(
                st.just("many"),
                st.dictionaries(st.integers(0, 12) | st.integers(65_533, 65_538), _counts),
                st.booleans(),
            ),
        ),
        max_size=40,
    )
)
def test_the_index_answers_exactly_as_a_plain_dict_index(
    banded: int, dense: int, ops: list[tuple[Any, ...]]
) -> None:
    """Adds in any id order, one or several at once, removals, counts above a byte, ids above
    two bytes, every path (grouped lists or not, byte columns or not, packed lists or not):
    scores, exact, head, holding, statistics and a dump's reload all give exactly what the
    dict-based reference gives, floats included."""
    with mock.patch.object(_head, "_BANDED", banded), mock.patch.object(_postings, "_DENSE", dense):
        index, ref = Index(), _DictIndex()

        def check(target: Index, query: list[str], k: int) -> None:
            assert target.scores(query)[0] == ref.scores(query)
            exact = ref.exact(query)
            assert target.exact([*exact, 10_000], query) == {**exact, 10_000: 0.0}
            head, scores, complete = target.head(query, k)
            held = [(s, d) for d, s in exact.items() if d in ref.scores(query)]
            assert head == sorted(held, reverse=True)[:k]
            for d, s in scores.items():
                assert s <= exact[d]
            if complete:  # no document passed over: those left out hold no query term
                assert {d for d, s in exact.items() if s} <= scores.keys()
            for term in query:
                got = target.holding(term)
                want = ref.holding(term)
                assert dict(got) == want and len(got) == len(want)
                assert all(d in got and got[d] == tf for d, tf in want.items())
                assert 999 not in got and "x" not in got
                assert target.document_frequency(term) == len(want)
            assert (
                target.rarest(query, 3)
                == sorted(
                    {t for t in query if ref.holding(t)}, key=lambda t: (len(ref.holding(t)), t)
                )[:3]
            )

        for op in ops:
            if op[0] == "add" and op[1] not in ref.docs:
                index.add(op[1], op[2])
                ref.docs[op[1]] = op[2]
            elif op[0] == "many":
                batch = sorted((d, c) for d, c in op[1].items() if d not in ref.docs)
                index.add_many(batch if op[2] else batch[::-1])
                ref.docs.update(batch)
            elif op[0] == "remove" and ref.docs:
                doc = sorted(ref.docs)[op[1] % len(ref.docs)]
                index.remove(doc, ref.docs.pop(doc))
            elif op[0] == "query":
                check(index, op[1], op[2])
        assert len(index) == len(ref.docs) and set(index.ids()) == set(ref.docs)
        query = ["alpha", "beta", "gamma", "theta", "eps"]
        check(index, query, 3)
        loaded = Index.load(index.dump())
        check(loaded, query, 3)
        assert loaded.dump() == index.dump()


def test_a_document_taken_out_and_back_without_a_term_leaves_no_trace_of_it() -> None:
    """A term's byte column (built by a query) forgets a removed document, so re-adding the
    id without the term does not score it; a count above a byte then drops the column."""
    with mock.patch.object(_postings, "_DENSE", 1 << 40):
        index, ref = Index(), _DictIndex()
        for d in range(8):
            ref.docs[d] = {"alpha": 1 + d % 2, "beta": 1}
            index.add(d, ref.docs[d])
        index.head(["alpha", "beta"], 2)
        index.exact([0, 1], ["alpha"])  # builds the columns
        index.remove(3, ref.docs.pop(3))
        ref.docs[3] = {"beta": 2}
        index.add(3, ref.docs[3])
        for last in (None, 9):
            if last is not None:
                index.add(last, {"alpha": 300})
                ref.docs[last] = {"alpha": 300}
            for query in (["alpha"], ["alpha", "beta"]):
                exact = ref.exact(query)
                assert index.exact(list(exact), query) == exact
                head, _, _ = index.head(query, 3)
                assert head == sorted(((s, d) for d, s in exact.items() if s), reverse=True)[:3]


def test_a_dump_of_the_previous_layout_loads_with_its_lists_sorted() -> None:
    """ "BHIX" dumps (before "BHI2") kept a list in the order documents came: a document
    re-added after a removal came last. They load with each list in id order."""
    from yait_byheart._retrieval.codec import u32_bytes

    index = Index()
    counts = {0: {"oven": 3, "deck": 1}, 1: {"deck": 2}, 2: {"oven": 1}}
    for doc in (2, 0, 1):
        index.add(doc, counts[doc])
    table = b"oven\ndeck"
    old = b"".join(
        (
            _postings._DUMP_HEADER.pack(b"BHIX", 3, 2, 4, len(table)),
            u32_bytes([2, 0, 1]),  # documents as they came
            u32_bytes([1, 4, 2]),  # their lengths
            u32_bytes([2, 2]),  # postings per term
            u32_bytes([2, 0, 0, 1]),  # oven: 2 then 0 (unsorted); deck: 0, 1
            u32_bytes([1, 3, 1, 2]),
            table,
        )
    )
    loaded = Index.load(old)
    assert list(loaded.holding("oven").items()) == [(0, 3), (2, 1)]
    assert loaded.scores(["oven", "deck"]) == index.scores(["oven", "deck"])
    assert loaded.head(["oven", "deck"], 2) == index.head(["oven", "deck"], 2)
    assert loaded.dump() == index.dump()
    twice = old.replace(u32_bytes([2, 0, 0, 1]), u32_bytes([2, 2, 0, 1]))
    with pytest.raises(ValueError, match="twice"):
        Index.load(twice)


@pytest.mark.parametrize("n", [1, 50, 300, _head._SORTED_KTH, _head._SORTED_KTH + 1, 6000])
@pytest.mark.parametrize("k", [1, 74, 200])
def test_head_of_a_large_score_table_is_the_k_best_pairs(n: int, k: int) -> None:
    # Both ways of finding the k-th score (a sort up to _SORTED_KTH values, heapq beyond),
    # with many ties: the head is the k largest (score, id) pairs, largest first.
    rng = random.Random(n * 1000 + k)
    scores = {d: float(rng.randrange(60)) for d in rng.sample(range(3 * n), n)}
    k = min(k, n)
    expected = sorted(((s, d) for d, s in scores.items()), reverse=True)[:k]
    assert _head._head_of(scores, k) == expected
    assert _head.kth_largest(scores.values(), k) == expected[-1][0]


@settings(max_examples=300)
@given(
    st.integers(0, 400),
    st.sampled_from([31, 3001]),
    st.integers(1, 20),
    st.sampled_from([1.0, 0.37, 1 / 3, 2.5, 1e-322, 0.0]),
    st.integers(0, 20),
    st.lists(st.integers(0, 399), max_size=10),
    st.randoms(use_true_random=False),
)
def test_the_ranking_past_the_head_is_the_k_best_scaled_pairs_outside_it(
    n: int, spread: int, k: int, scale: float, head: int, others: list[int], rng: random.Random
) -> None:
    # Past the head (the best stretches, `seen`, and a few others) a ranking takes the k best
    # (score x scale, id) pairs of the stretches it scored outside it, with a threshold that
    # builds pairs only near the top: many ties, and scales that round distinct scores to
    # one value (or all to zero), must not change which pairs or their order.
    values = [rng.randrange(spread) for _ in range(n)]
    scores = {d * 7 % 401: v / 7 for d, v in enumerate(values)}
    best = sorted(((s, d) for d, s in scores.items()), reverse=True)
    seen = {d for _, d in best[:head]} | {d for d in others if d in scores}
    expected = sorted(((s * scale, d) for d, s in scores.items() if d not in seen), reverse=True)
    assert _ranking.best_outside(scores, seen, k, scale) == expected[:k]


def test_terms_are_summed_in_the_same_order_in_every_process() -> None:
    # Twenty terms held by as many documents: summed in a set's order (which follows the
    # process's string hashes) their scores differed in the last bits from one hash seed to
    # another, so processes could rank a tie apart. Every score must be the same float in all.
    code = (
        "from yait_byheart._retrieval.bm25 import Index\n"
        "terms = [f'term{i}' for i in range(20)]\n"
        "index = Index()\n"
        "index.add(0, {t: 1 + i % 7 for i, t in enumerate(terms)})\n"
        "index.add(1, {t: 1 for t in terms} | {'other': 5})\n"
        "index.add(2, {'other': 1})\n"
        "print(repr(index.exact([0, 1], terms)), repr(index.head(terms, 2)[0]),\n"
        "      repr(index.scores(terms)[0]))\n"
    )
    printed = {
        subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True, text=True, check=True,
        ).stdout
        for seed in range(6)
    }  # fmt: skip
    assert len(printed) == 1


def test_a_loaded_index_cuts_out_only_the_lists_it_uses() -> None:
    # A fresh process reopening a conversation composes once: it needs a few of the index's
    # lists, and building every term's `Postings` cost a fifth of its reopening.
    index = Index()
    for i in range(40):
        index.add(i, {f"w{i}": 1, f"w{i + 1}": 2, "common": 1 + i % 3})
    loaded = Index.load(index.dump())

    def still_packed() -> set[str]:  # a packed term's value is its number in the arrays
        return {t for t, v in loaded._postings.items() if isinstance(v, int)}

    packed = loaded._packed
    assert packed is not None and packed.left == len(still_packed()) == 42
    assert loaded.rarest(["w3", "common", "nope"]) == ["w3", "common"]  # df, nothing cut
    assert loaded.document_frequency("common") == 40 and len(still_packed()) == 42
    assert loaded.head(["w3"], 2) == index.head(["w3"], 2)
    assert loaded.exact([1, 2, 3], ["common"]) == index.exact([1, 2, 3], ["common"])
    assert sorted(set(loaded._postings) - still_packed()) == ["common", "w3"]
    assert packed.left == 40
    loaded.add(40, {"w40": 1, "new": 1})  # a change cuts out the lists it touches
    index.add(40, {"w40": 1, "new": 1})
    assert "w40" not in still_packed() and loaded.scores(["w40"]) == index.scores(["w40"])
    for each in (loaded, index):  # and so does a removal
        each.remove(5, {"w5": 1, "w6": 2, "common": 3})
    assert "w6" not in still_packed() and loaded.scores(["w6"]) == index.scores(["w6"])
    assert loaded.dump() == index.dump() and loaded._packed is None  # every list, in order


@settings(max_examples=200)
@given(
    st.lists(_counts, min_size=1, max_size=20),
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), _counts),
            st.tuples(st.just("remove"), st.integers(0, 1000)),
            st.tuples(st.just("query"), st.lists(words, min_size=1, max_size=5), st.integers(1, 6)),
        ),
        max_size=20,
    ),
    st.integers(0, 65_530),
)
def test_a_batch_into_an_empty_index_is_the_index_its_documents_added_one_by_one_make(
    first: list[dict[str, int]], ops: list[tuple[Any, ...]], offset: int
) -> None:
    """`add_many` keeps a batch packed: the same dump byte for byte (term order included),
    and through later adds, removals and queries the same answers as adding one by one."""
    one, many = Index(), Index()
    docs = {offset + i: counts for i, counts in enumerate(first)}
    for doc, counts in docs.items():
        one.add(doc, counts)
    many.add_many(docs.items())
    assert many.dump() == one.dump()
    many = Index()
    many.add_many(docs.items())
    next_id = max(docs) + 1
    for op in ops:
        if op[0] == "add":
            for target in (one, many):
                target.add(next_id, op[1])
            docs[next_id] = op[1]
            next_id += 1
        elif op[0] == "remove" and docs:
            doc = sorted(docs)[op[1] % len(docs)]
            for target in (one, many):
                target.remove(doc, docs[doc])
            del docs[doc]
        elif op[0] == "query":
            assert many.head(op[1], op[2]) == one.head(op[1], op[2])
            assert many.scores(op[1]) == one.scores(op[1])
            assert many.exact(list(docs), op[1]) == one.exact(list(docs), op[1])
            assert [many.document_frequency(t) for t in op[1]] == [
                one.document_frequency(t) for t in op[1]
            ]
    assert many.dump() == one.dump()
    assert len(many) == len(one) and list(many.ids()) == list(one.ids())


def test_a_batch_stops_at_a_document_it_cannot_index_keeping_those_before() -> None:
    index = Index()
    with pytest.raises(ValueError, match="outside"):
        index.add_many([(0, {"oven": 2}), (1, {"deck": 1}), (2**32, {"oven": 1})])
    assert dict(index.holding("oven")) == {0: 2} and dict(index.holding("deck")) == {1: 1}
    assert len(index) == 2
