"""`Hybrid`: byheart's own BM25 ranking fused with an embedding model's cosine similarity.

Score fusion is CombSUM, the sum of each system's normalised scores (E. A. Fox and J. A. Shaw,
"Combination of multiple searches", TREC-2, 1994), the dense part weighted. Measured:
docs/benchmarks.md, "Semantic retrieval".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._retrieval import ranking as _ranking
from .._retrieval.bm25 import Index
from .._text.tokens import term_counts, tokenize
from .._turns.settings import Tuning
from . import _cache
from ._vectors import Rows, Vector, checked, unit

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
_QUERIES = 256  # query vectors kept in memory (a chat repeats few queries)


def lexical_scale(scores: Mapping[int, float]) -> dict[int, float]:
    """BM25 scores over the best one, so the best lexical match scores 1.

    >>> lexical_scale({0: 2.0, 1: 4.0})
    {0: 0.5, 1: 1.0}
    """
    top = max(scores.values(), default=0.0)
    return {u: s / top for u, s in scores.items()} if top > 0 else {}


def dense_scale(cosine: float, mean: float, top: float) -> float:
    """A cosine as its lift above the mean over the best one's: the cosine of unrelated texts
    is far from 0, so only the lift above the typical one says anything (the best scores 1).

    >>> dense_scale(0.25, 0.5, 0.75), dense_scale(0.75, 0.5, 0.75), dense_scale(0.3, 0.3, 0.3)
    (-1.0, 1.0, 0.0)
    """
    return (cosine - mean) / (top - mean) if top > mean else 0.0


def comb_sum(
    lexical: Mapping[int, float], cosines: Mapping[int, float], mean: float, top: float,
    weight: float,
) -> dict[int, float]:  # fmt: skip
    """CombSUM: each stretch's scaled lexical score plus `weight` x its `dense_scale`d cosine
    (the scaling written out in the loop: this runs over every candidate at each compose).

    >>> comb_sum({0: 1.0}, {0: 0.25, 1: 0.75}, 0.5, 0.75, 0.5)
    {0: 0.5, 1: 0.5}
    """
    scale = weight / (top - mean) if top > mean else 0.0
    get = lexical.get
    return {u: get(u, 0.0) + scale * (c - mean) for u, c in cosines.items()}


class Hybrid:
    """A retriever for `Memory(retriever=...)`: BM25 with neighbour shares, as byheart ranks
    stretches itself, fused with the cosine similarity of `embed`'s vectors (CombSUM).

    Incremental (`add`/`remove`) and scoring (`scores`): Memory fits it once, then hands it
    only new stretches. Each distinct text is embedded once, in batches, its vector kept in
    `cache` under the embedder's name and the text's SHA-256; `remove` deletes the vectors of
    texts no live stretch still holds (a redaction leaves no embedding of the old text).

    Args:
        embed: `embed(texts) -> vectors`, one per text, all of one length (any model or API;
            see `sentence_transformers`, `fastembed`, `openai_compatible`).
        weight: Weight of the similarity against BM25 (default 0.5; 0 is BM25 alone).
        cache: Where vectors are kept: a MutableMapping[str, list[float]], or an object with
            `get_many(keys) -> dict` and `set_many(mapping)` (a store's `vectors(...)`).
            Default: an in-memory dict. A store's `open(conv, retriever=...)` sets it.
        name: The embedder's name in cache keys (default `embed.name`); needed with a cache.
        batch_size: Texts per `embed` call (default 64).
        top: `scores` returns, besides the stretches sharing a query word, at most this many
            of the most similar (default 100: more stretches than a 20,000-character budget
            holds; raise it for larger budgets): the rest would
            only be ranked and sorted to go unused.
        numpy: Vector math with numpy (True), pure Python (False), or numpy when importable
            (None, the default). Results agree within 1e-9.

    >>> def embed(texts):  # a toy embedder: counts of two letters
    ...     return [[t.count("o") + 1.0, t.count("e") + 1.0] for t in texts]
    >>> h = Hybrid(embed, name="toy").fit(["the oven broke", "a green tree", "we met"])
    >>> h.rank("oven repair"), h.embedded
    ([0, 2, 1], 4)
    """

    def __init__(
        self, embed: Embed, *, weight: float = 0.5, cache: Any = None, name: str | None = None,
        batch_size: int = 64, top: int = 100, numpy: bool | None = None,
    ) -> None:  # fmt: skip
        if not callable(embed):
            raise TypeError("Hybrid: embed must be callable as embed(texts) -> list of vectors")
        if not (weight >= 0 and batch_size >= 1):
            raise ValueError(
                f"Hybrid: weight={weight!r}, batch_size={batch_size!r}; use >= 0, >= 1"
            )
        self.embed = embed
        self.weight = float(weight)
        self.batch_size = int(batch_size)
        self.top = max(1, int(top))
        self.name: str | None = name if name is not None else getattr(embed, "name", None)
        self.tuning = Tuning()
        self.embedded = 0  # texts sent to `embed`, queries included
        self._numpy = numpy
        self._cache: Any = None
        self._given: Any = None
        self.cache = cache
        self._clear()

    @property
    def cache(self) -> Any:
        """The mapping given for the stretches' vectors, or None (then an in-memory dict
        holds them, and a store's `open` may hand its own)."""
        return self._given

    @cache.setter
    def cache(self, cache: Any) -> None:
        if cache is not None and not isinstance(self.name, str):
            raise ValueError(
                'Hybrid: a cache needs the embedder\'s name; pass Hybrid(embed, name="model-id")'
            )
        self._given = cache
        self._cache = {} if cache is None else cache

    def _clear(self) -> None:
        self._texts: dict[int, str] = {}
        self._live: Counter[str] = Counter()  # cache key -> live stretches holding that text
        self._index = Index()
        self._rows = Rows(self._numpy)
        self._queries = _cache.Recent(_QUERIES)
        self._dim: int | None = None
        self._next = 0

    def _key(self, text: str) -> str:
        return _cache.key(self.name or "", text)

    def fit(self, docs: list[str]) -> Hybrid:
        """Hold `docs` (stretch k is docs[k]), replacing what was held; returns self."""
        docs = _texts("fit", docs)
        self._clear()
        self.add(docs)
        return self

    def add(self, docs: list[str], ids: list[int] | None = None) -> Hybrid:
        """Hold `docs` too, as stretches `ids` (default: after the last one held)."""
        docs = _texts("add", docs)
        ids = list(range(self._next, self._next + len(docs))) if ids is None else list(ids)
        if len(ids) != len(docs):
            raise ValueError(f"Hybrid.add: {len(docs)} docs but {len(ids)} ids; give one id each")
        vectors = self._vectors(docs)  # first: an embedder's error leaves everything held
        self.remove([u for u in ids if u in self._texts])
        for uid, text in zip(ids, docs, strict=True):
            self._texts[uid] = text
            self._live[self._key(text)] += 1
            self._index.add(uid, term_counts(text))
            self._rows.put(uid, vectors[text])
        self._next = max([self._next, *(u + 1 for u in ids)])
        return self

    def remove(self, ids: list[int]) -> Hybrid:
        """Forget stretches `ids`, deleting from the cache each vector of a text no stretch
        still holds (ids not held are skipped)."""
        gone: list[str] = []
        for uid in ids:
            text = self._texts.pop(uid, None)
            if text is None:
                continue
            self._index.remove(uid, term_counts(text))
            self._rows.drop(uid)
            self._queries.discard(text)
            k = self._key(text)
            self._live[k] -= 1
            if self._live[k] <= 0:
                del self._live[k]
                gone.append(k)
        if gone:
            _cache.delete_many(self._cache, gone)
        return self

    def _vectors(self, texts: list[str]) -> dict[str, Vector]:
        """Each distinct text's unit vector: from the cache, else embedded in batches."""
        out: dict[str, Vector] = {}
        distinct = list(dict.fromkeys(texts))
        for at in range(0, len(distinct), self.batch_size):
            batch = distinct[at : at + self.batch_size]
            keys = {self._key(t): t for t in batch}
            found = _cache.get_many(self._cache, list(keys))
            for k, vector in found.items():
                out[keys[k]] = checked([keys[k]], [vector], self._dim)[0]
                self._dim = len(out[keys[k]])
            missing = [t for k, t in keys.items() if k not in found]
            if missing:
                made = self._embed(missing)
                out.update(zip(missing, made, strict=True))
                _cache.set_many(
                    self._cache, {self._key(t): v for t, v in zip(missing, made, strict=True)}
                )
        return out

    def _embed(self, texts: list[str]) -> list[Vector]:
        vectors = [unit(v) for v in checked(texts, self.embed(list(texts)), self._dim)]
        self._dim = len(vectors[0])
        self.embedded += len(texts)
        return vectors

    def _query_vector(self, query: str) -> Vector:
        found = self._queries.get(query)
        if found is None:
            found = self._embed([query])[0]
            self._queries.put(query, found)
        return found

    def lexical(self, query: str, top: int | None = None) -> dict[int, float]:
        """BM25 over the query's rarest terms plus neighbour shares, as Memory scores stretches:
        of every stretch sharing a term, or of the `top` best only (pruned, as Memory does)."""
        tuning, index, n = self.tuning, self._index, self._next
        terms = _ranking.query_terms(index, tokenize(query), tuning)
        if top is not None:
            head, found, complete = index.head(terms, top)
            head = _ranking.with_neighbours(index, terms, head, found, n, top, tuning, complete)
            return {u: s for s, u in head if u in self._texts}
        own, _ = index.scores(terms)
        shares = _ranking.neighbour_shares(own, n, tuning.context_weight, tuning.context_width)
        out = {u: own.get(u, 0.0) + s for u, s in shares.items() if u in self._texts}
        return {**own, **out}

    def fused(self, query: str, top: int | None = None) -> dict[int, float]:
        """Fused scores (negative for below-typical similarity): of every held stretch, or with
        `top` of the `top` best lexically and the `top` most similar (any other stretch
        scores below those most similar)."""
        if not isinstance(query, str):
            raise TypeError(f"Hybrid: query is {type(query).__name__}, expected str")
        if not self._texts:
            return {}
        lexical = lexical_scale(self.lexical(query, top))
        if self.weight == 0:
            return {u: lexical.get(u, 0.0) for u in (self._texts if top is None else lexical)}
        sims = self._rows.similar(self._query_vector(query))
        mean, best = sims.summary()
        wanted = list(self._texts) if top is None else list(lexical.keys() | sims.best(top))
        return comb_sum(lexical, sims.of(wanted), mean, best, self.weight)

    def scores(self, query: str) -> dict[int, float]:
        """Stretches scoring above 0, by id (at most `top` beyond those sharing a query word):
        the weights Memory's sticky rules use."""
        return {u: s for u, s in self.fused(query, self.top).items() if s > 0}

    def rank(self, query: str) -> list[int]:
        """Every held stretch id, best first (ties: lower id first)."""
        fused = self.fused(query)
        return sorted(fused, key=lambda u: (-fused[u], u))


def _texts(call: str, docs: Any) -> list[str]:
    if isinstance(docs, str) or not isinstance(docs, Sequence):
        raise TypeError(f"Hybrid.{call}: pass a list of documents, not {type(docs).__name__}")
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError(f"Hybrid.{call}: document {i} is {type(doc).__name__}, expected str")
    return list(docs)
