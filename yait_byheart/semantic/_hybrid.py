"""`Hybrid`: an embedding model's similarity, added to byheart's own ranking.

Memory fuses it with its lexical ranking (the user-words index, date spans, neighbours,
sticky joins all kept): see `yait_byheart._retrieval.fusion` and docs/semantic.md. A cosine
is scaled as its lift above the typical one, over the best one's, as score normalisation for
fusion does with a system's mean (M. Montague and J. A. Aslam, "Relevance score normalization
for metasearch", CIKM 2001).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from . import _cache
from ._vectors import Rows, Vector, checked, unit

Embed = Callable[[list[str]], Sequence[Sequence[float]]]
_QUERIES = 256  # query vectors kept in memory (a chat repeats few queries)


def dense_scale(cosine: float, mean: float, top: float) -> float:
    """A cosine as its lift above the mean over the best one's: the cosine of unrelated texts
    is far from 0, so only the lift above the typical one says anything (the best scores 1).

    >>> dense_scale(0.25, 0.5, 0.75), dense_scale(0.75, 0.5, 0.75), dense_scale(0.3, 0.3, 0.3)
    (-1.0, 1.0, 0.0)
    """
    return (cosine - mean) / (top - mean) if top > mean else 0.0


class Hybrid:
    """A retriever for `Memory(retriever=...)`: each stretch's cosine similarity to the query
    under `embed`'s vectors, which Memory adds to its own BM25 ranking (the hybrid is the
    two together; the lexical half is Memory's, with every signal it has).

    Incremental (`add`/`remove`) and scoring (`scores`): Memory fits it once, then hands it
    only new stretches. Each distinct text is embedded once, in batches, its vector kept in
    `cache` under the embedder's name and the text's SHA-256; `remove` deletes the vectors of
    texts no live stretch still holds (a redaction leaves no embedding of the old text).

    Args:
        embed: `embed(texts) -> vectors`, one per text, all of one length (any model or API;
            see `sentence_transformers`, `fastembed`, `openai_compatible`).
        weight: Weight of the similarity against Memory's lexical ranking (default 0.5; 0
            leaves the lexical ranking alone).
        cache: Where vectors are kept: a MutableMapping[str, list[float]], or an object with
            `get_many(keys) -> dict` and `set_many(mapping)` (a store's `vectors(...)`).
            Default: an in-memory dict. A store's `open(conv, retriever=...)` sets it.
        name: The embedder's name in cache keys (default `embed.name`); needed with a cache.
        batch_size: Texts per `embed` call (default 64).
        top: `scores` returns at most this many of the most similar stretches (default 100;
            Memory takes as many as its lexical head weighs).
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

    def _similar(self, query: str) -> tuple[Any, float, float] | None:
        """The query's similarities to the held stretches, their mean and best (None: none)."""
        if not isinstance(query, str):
            raise TypeError(f"Hybrid: query is {type(query).__name__}, expected str")
        if not self._texts:
            return None
        sims = self._rows.similar(self._query_vector(query))
        return (sims, *sims.summary())

    def similarity(self, query: str) -> dict[int, float]:
        """Each held stretch's `dense_scale`d cosine with the query (negative: less similar
        than typical; the most similar scores 1)."""
        found = self._similar(query)
        if found is None:
            return {}
        sims, mean, best = found
        return {u: dense_scale(c, mean, best) for u, c in sims.of(list(self._texts)).items()}

    def scores(self, query: str) -> dict[int, float]:
        """The `top` most similar stretches scoring above the typical one, by id: the signal
        Memory fuses into its ranking (with `weight`)."""
        found = None if self.weight == 0 else self._similar(query)
        if found is None:
            return {}
        sims, mean, best = found
        near = sims.of(sims.best(self.top))
        return {u: s for u, c in near.items() if (s := dense_scale(c, mean, best)) > 0}

    def rank(self, query: str) -> list[int]:
        """Every held stretch id, most similar first (ties: lower id first)."""
        similar = self.similarity(query)
        return sorted(similar, key=lambda u: (-similar[u], u))


def _texts(call: str, docs: Any) -> list[str]:
    if isinstance(docs, str) or not isinstance(docs, Sequence):
        raise TypeError(f"Hybrid.{call}: pass a list of documents, not {type(docs).__name__}")
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError(f"Hybrid.{call}: document {i} is {type(doc).__name__}, expected str")
    return list(docs)
