"""The incremental retriever protocol: fed piece by piece, a retriever ranks as one fitted on
everything at once, and Memory feeds it only what changed."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import BM25, Memory
from yait_byheart.protocols import IncrementalRetriever, ScoringRetriever

WORDS = "oven deck boat camping paris violin dog cat tea rain garden chess".split()
doc = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
docs = st.lists(doc, min_size=1, max_size=20)


def test_bm25_meets_both_protocols() -> None:
    assert isinstance(BM25(), IncrementalRetriever)
    assert isinstance(BM25(), ScoringRetriever)


@given(docs, st.data(), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
def test_bm25_fed_in_pieces_ranks_as_fitted_at_once(all_docs: list[str], data: Any, q: str) -> None:
    points = sorted(data.draw(st.lists(st.integers(0, len(all_docs)), max_size=4)))
    points.append(len(all_docs))
    fed = BM25().fit(all_docs[: points[0]])
    for a, b in pairwise(points):
        fed.add(all_docs[a:b])
    whole = BM25().fit(all_docs)
    assert fed.scores(q) == whole.scores(q)
    assert fed.rank(q) == whole.rank(q)


@given(docs, st.data(), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
def test_bm25_after_remove_and_add_back_ranks_as_refitted(
    all_docs: list[str], data: Any, q: str
) -> None:
    ids = data.draw(st.lists(st.integers(0, len(all_docs) - 1), unique=True, max_size=5))
    new = [data.draw(doc) for _ in ids]
    fed = BM25().fit(all_docs).remove(ids).add(new, ids=ids)
    changed = list(all_docs)
    for i, text in zip(ids, new, strict=True):
        changed[i] = text
    assert fed.rank(q) == BM25().fit(changed).rank(q)


class RefitOnly:
    """BM25 behind the plain fit/rank protocol: Memory must refit it after every change."""

    def __init__(self) -> None:
        self.inner = BM25()
        self.fits = 0

    def fit(self, docs: list[str]) -> RefitOnly:
        self.fits += 1
        self.inner.fit(docs)
        return self

    def scores(self, query: str) -> list[float]:
        return self.inner.scores(query)

    def rank(self, query: str) -> list[int]:
        return self.inner.rank(query)


class Counting(BM25):
    def __init__(self) -> None:
        super().__init__()
        self.fed: list[tuple[str, int]] = []

    def fit(self, docs: Any) -> Counting:
        self.fed.append(("fit", len(docs)))
        super().fit(docs)
        return self

    def add(self, docs: Any, ids: Any = None) -> Counting:
        self.fed.append(("add", len(docs)))
        super().add(docs, ids)
        return self


turns = st.lists(
    st.tuples(st.lists(st.sampled_from(WORDS), min_size=3, max_size=30).map(" ".join),
              st.booleans()),
    min_size=4, max_size=40,
)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(turns, st.data())
def test_memory_composes_alike_with_an_incremental_and_a_refitted_retriever(
    talk: list[tuple[str, bool]], data: Any
) -> None:
    fed, refit = Counting(), RefitOnly()
    mems = [Memory(budget=300, chunk=60, retriever=r) for r in (fed, refit)]
    redact = data.draw(st.sets(st.integers(0, 2 * len(talk) - 1), max_size=3))
    for i, (text, ask) in enumerate(talk):
        for mem in mems:
            mem.append("user", text)
            mem.append("assistant", text[::-1])
            if 2 * i in redact:
                mem.redact(2 * i)
        if ask:
            got = [m.compose(text) for m in mems]
            assert got[0] == got[1]
    assert [kind for kind, _ in fed.fed].count("fit") <= 1  # fitted once, then fed
