"""yait_byheart.semantic.Hybrid with a fake embedder: caching, batches, redaction, restoring
from a cache, the two vector-math paths, and bad embedder output."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart.protocols import IncrementalRetriever, ScoringRetriever
from yait_byheart.semantic import Hybrid

WORDS = "oven deck boat camping paris violin dog cat tea rain garden chess".split()
doc = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
docs = st.lists(doc, min_size=1, max_size=15)
query = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


class FakeEmbed:
    """Hashed word vectors (16 dims), recording every batch it is asked for."""

    name = "fake-16"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        out = []
        for text in texts:
            v = [0.0] * 16
            for word in text.split():
                h = hashlib.sha256(word.encode()).digest()
                v[h[0] % 16] += 1.0 + h[1] / 255
            out.append(v)
        return out

    @property
    def texts(self) -> list[str]:
        return [t for b in self.batches for t in b]


class BatchCache(dict[str, list[float]]):
    """A store-like cache: counts its round trips."""

    def __init__(self) -> None:
        super().__init__()
        self.trips = 0

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        self.trips += 1
        return {k: self[k] for k in keys if k in self}

    def set_many(self, mapping: dict[str, list[float]]) -> None:
        self.trips += 1
        self.update(mapping)


def test_hybrid_meets_the_protocols() -> None:
    h = Hybrid(FakeEmbed())
    assert isinstance(h, IncrementalRetriever) and isinstance(h, ScoringRetriever)
    assert h.name == "fake-16"


def test_each_distinct_text_is_embedded_once_in_batches() -> None:
    embed = FakeEmbed()
    h = Hybrid(embed, batch_size=3)
    h.fit(["oven deck", "boat", "oven deck", "tea", "rain", "dog cat"])
    h.add(["boat", "chess"])
    assert sorted(embed.texts) == sorted(["oven deck", "boat", "tea", "rain", "dog cat", "chess"])
    assert all(1 <= len(b) <= 3 for b in embed.batches)
    h.rank("dog"), h.rank("dog"), h.scores("dog")
    assert embed.texts.count("dog") == 1  # a query is embedded once too
    assert h.embedded == len(embed.texts) == 7


def test_a_batch_cache_gets_one_round_trip_per_batch() -> None:
    cache = BatchCache()
    Hybrid(FakeEmbed(), cache=cache, batch_size=2).fit(["a b", "c", "d", "e"])
    assert cache.trips == 4  # 2 batches: one get_many and one set_many each
    assert len(cache) == 4 and all(k.startswith("fake-16:") for k in cache)


def test_a_cache_needs_a_name() -> None:
    with pytest.raises(ValueError, match=r"Hybrid: a cache needs .*name="):
        Hybrid(lambda texts: [[1.0] for _ in texts], cache={})
    h = Hybrid(lambda texts: [[1.0] for _ in texts])
    with pytest.raises(ValueError, match="Hybrid"):
        h.cache = {}  # what a store's open() would do; it checks the name first


def test_remove_deletes_the_vector_unless_another_stretch_holds_the_text() -> None:
    cache: dict[str, list[float]] = {}
    h = Hybrid(FakeEmbed(), cache=cache).fit(["secret plan", "tea", "secret plan", "rain"])
    assert len(cache) == 3
    h.remove([0])
    assert len(cache) == 3  # stretch 2 still holds "secret plan"
    h.remove([2])
    assert len(cache) == 2 and not any(cache.get(k) is None for k in cache)
    assert 0 not in h.rank("secret") and 2 not in h.rank("secret")


def test_memory_redaction_leaves_no_embedding_of_the_old_text() -> None:
    cache: dict[str, list[float]] = {}
    embed = FakeEmbed()
    mem = Memory(budget=300, chunk=60, retriever=Hybrid(embed, cache=cache))
    for i in range(12):
        mem.append("user", f"turn {i} about the violin recital in paris number {i}")
        mem.append("assistant", f"reply {i} on garden chess and tea, item {i}")
    mem.compose("violin")
    before = set(cache)
    mem.redact(4)
    mem.compose("violin")
    assert before - set(cache), "the redacted stretch's vector stays in the cache"
    holds = [t for t in embed.texts if "turn 2 " in t]
    assert holds  # the redacted turn was embedded, with its stretch, before
    from yait_byheart.semantic._cache import key

    assert all(key("fake-16", t) not in cache for t in holds)


@settings(max_examples=40, deadline=None)
@given(docs, st.data(), query)
def test_fed_in_pieces_ranks_as_fitted_at_once(all_docs: list[str], data: Any, q: str) -> None:
    cut = data.draw(st.integers(0, len(all_docs)))
    fed = Hybrid(FakeEmbed()).fit(all_docs[:cut]).add(all_docs[cut:])
    whole = Hybrid(FakeEmbed()).fit(all_docs)
    assert fed.rank(q) == whole.rank(q)
    assert fed.scores(q) == whole.scores(q)


@settings(max_examples=40, deadline=None)
@given(docs, query)
def test_a_hybrid_restored_from_its_cache_ranks_alike_and_embeds_no_stretch(
    all_docs: list[str], q: str
) -> None:
    cache = BatchCache()
    first = Hybrid(FakeEmbed(), cache=cache).fit(all_docs)
    embed = FakeEmbed()
    again = Hybrid(embed, cache=cache).fit(all_docs)
    assert embed.texts == []
    assert again.rank(q) == first.rank(q) and again.scores(q) == first.scores(q)


@settings(max_examples=40, deadline=None)
@given(docs, query)
def test_numpy_and_pure_python_agree(all_docs: list[str], q: str) -> None:
    pytest.importorskip("numpy")
    fast = Hybrid(FakeEmbed(), numpy=True).fit(all_docs)
    pure = Hybrid(FakeEmbed(), numpy=False).fit(all_docs)
    a, b = fast.similarity(q), pure.similarity(q)
    assert a.keys() == b.keys()
    assert all(math.isclose(a[u], b[u], rel_tol=0, abs_tol=1e-9) for u in a)


def test_numpy_path_survives_removal_and_growth() -> None:
    pytest.importorskip("numpy")
    texts = [f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} {i}" for i in range(150)]
    fast = Hybrid(FakeEmbed(), numpy=True).fit(texts).remove([3, 70]).add(["oven"], ids=[3])
    pure = Hybrid(FakeEmbed(), numpy=False).fit(texts).remove([3, 70]).add(["oven"], ids=[3])
    a, b = fast.similarity("oven tea"), pure.similarity("oven tea")
    assert a.keys() == b.keys() and 70 not in a
    assert all(abs(a[u] - b[u]) <= 1e-9 for u in a)


@pytest.mark.parametrize(
    ("output", "match"),
    [
        ([[1.0, 2.0]], "1 vectors for 2 texts"),
        ([[1.0, 2.0], [1.0]], "vector 1 has 1 numbers, expected 2"),
        ([[1.0, math.nan], [1.0, 2.0]], "NaN or infinity"),
        ([[1.0, "x"], [1.0, 2.0]], "not vectors"),
        ([[], []], "vector 0 has 0 numbers"),
    ],
)
def test_bad_embedder_output_is_named_and_loses_nothing(output: Any, match: str) -> None:
    def fine(texts: list[str]) -> list[list[float]]:
        return [[1.0, 2.0] for _ in texts]

    good = Hybrid(fine, name="m").fit(["keep me"])
    good.embed = lambda texts: output
    with pytest.raises(ValueError, match=f"Hybrid: .*{match}.*one vector per text"):
        good.add(["a", "b"])
    good.embed = fine
    assert good.rank("keep") == [0]


def test_a_later_batch_of_another_length_is_refused() -> None:
    h = Hybrid(lambda texts: [[1.0, 2.0] for _ in texts]).fit(["a"])
    h.embed = lambda texts: [[1.0, 2.0, 3.0] for _ in texts]
    with pytest.raises(ValueError, match="expected 2"):
        h.add(["b"])


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="Hybrid: embed must be callable"):
        Hybrid("model")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Hybrid: weight=-1"):
        Hybrid(FakeEmbed(), weight=-1)
    with pytest.raises(TypeError, match="Hybrid.fit: pass a list"):
        Hybrid(FakeEmbed()).fit("one string")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Hybrid.add: 1 docs but 2 ids"):
        Hybrid(FakeEmbed()).add(["a"], ids=[0, 1])


def test_weight_zero_adds_nothing_and_embeds_no_query() -> None:
    embed = FakeEmbed()
    h = Hybrid(embed, weight=0).fit(["tea rain", "garden", "oven deck", "chess"])
    assert h.scores("oven") == {}
    assert "oven" not in embed.texts


def test_meaning_finds_a_stretch_sharing_no_word() -> None:
    def embed(texts: list[str]) -> list[list[float]]:  # "cello" and "violin" mean alike here
        return [[1.0 if ("violin" in t or "cello" in t) else 0.0, 1.0] for t in texts]

    h = Hybrid(embed, name="strings").fit(["oven deck", "my cello lesson", "tea rain"])
    assert h.rank("violin")[0] == 1
