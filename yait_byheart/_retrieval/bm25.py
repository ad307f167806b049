"""Okapi BM25: the formulas, the index that scores with them, and the public `BM25`.

Formulas follow S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25
and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009, eq. 3.3 (the
tf saturation) with the non-negative idf used by Lucene (`log(1 + (N - df + 0.5)/(df + 0.5))`),
so a term in more than half the documents still counts a little instead of subtracting.

Kept in stages, as bm25s keeps its own: this module (formulas, scoring, the public face);
`postings.py` (each term's postings, kept as documents come and go, and packed as bytes);
`head.py` (the pruned walk that finds the best documents without scoring every posting).

Examples:
    >>> BM25().fit(["the cat sat", "a dog barked", "the cat and the dog"]).rank("dog")
    [1, 2, 0]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from itertools import compress

from .._text.tokens import term_counts, tokenize
from .head import Walk
from .postings import Inverted, column, found, picker

K1 = 1.2
B = 0.75


def idf(df: int, n_docs: int) -> float:
    """Inverse document frequency of a term found in `df` of `n_docs` documents.

    ln(1 + (10 - 1 + 0.5) / (1 + 0.5)) = ln(7.333) = 1.9924:

    Examples:
        >>> round(idf(1, 10), 4)
        1.9924
    """
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def term_weight(tf: int, doc_len: int, avg_len: float, k1: float = K1, b: float = B) -> float:
    """Saturated, length-normalised term frequency (the BM25 tf component).

    Examples:
        >>> round(term_weight(1, 10, 10.0), 4)
        1.0
    """
    norm = k1 * (1.0 - b + b * doc_len / avg_len) if avg_len > 0 else k1
    return tf * (k1 + 1.0) / (tf + norm)


class Index(Inverted):
    """An inverted index that grows and shrinks one document at a time, scored by BM25: every
    document sharing a query term (`scores`), given documents (`exact`), the best few
    (`head`).

    Statistics (document count, total length, document frequencies) are running totals, so
    adding a document costs its own length, and scoring touches only the postings of the
    query's terms.

    Examples:
        >>> index = Index(); index.add(3, {"oven": 2, "deck": 1})
        >>> Index.load(index.dump()).scores(["oven"])[0] == index.scores(["oven"])[0]
        True
    """

    __slots__ = ()

    def scores(
        self, query_terms: Iterable[str], extra: Sequence[Counter[str]] = ()
    ) -> tuple[dict[int, float], list[float]]:
        """BM25 score of every indexed document sharing a query term, and of `extra` documents.

        `extra` documents are scored as if they were in the index (one shared set of statistics)
        without being added: this is how outside material competes with the conversation.
        """
        terms = sorted(set(query_terms))  # summed in one order in every process (see below)
        n_docs = self._count + len(extra)
        if n_docs == 0 or not terms:
            return {}, [0.0] * len(extra)
        extra_lens = [sum(c.values()) for c in extra]
        avg_len = (self._total_len + sum(extra_lens)) / n_docs
        lengths = self._lengths
        result: dict[int, float] = {}
        extra_scores = [0.0] * len(extra)
        k1_plus = K1 + 1.0
        for term in terms:
            entry = self._entry(term)
            extra_df = sum(1 for c in extra if term in c)
            df = len(entry.ids) + extra_df
            if df == 0:
                continue
            weight = idf(df, n_docs)
            for doc_id, tf in zip(entry.ids, entry.tfs, strict=True):
                norm = K1 * (1.0 - B + B * lengths[doc_id] / avg_len)
                result[doc_id] = result.get(doc_id, 0.0) + weight * tf * k1_plus / (tf + norm)
            if extra_df:
                for i, c in enumerate(extra):
                    tf = c.get(term, 0)
                    if tf:
                        extra_scores[i] += weight * term_weight(tf, extra_lens[i], avg_len)
        return result, extra_scores

    def rarest(self, terms: Iterable[str], n: int | None = None) -> list[str]:
        """The `n` (default: all) distinct indexed terms of `terms` found in the fewest
        documents, fewest first, then alphabetical: the order `head` and `exact` both sum in,
        which makes their floats equal. Ties go by the term, not by a set's order, which
        follows the process's string hashes: every process sums in the same order, so all of
        them rank alike and send the same bytes.

        Query reduction for verbose queries (M. Bendersky and W. B. Croft, "Discovering key
        concepts in verbose queries", SIGIR 2008): the rarest terms decide a ranking, the common
        ones mostly add postings to walk. A chat turn used as a query has 10-40 words; keeping
        its 8 rarest cut a compose at 100,000 turns from ~10 ms to ~4 ms.

        Examples:
            >>> index = Index()
            >>> index.add(0, {"oven": 1, "deck": 1}); index.add(1, {"oven": 2})
            >>> index.rarest(["oven", "deck", "unknown"], 1)
            ['deck']
        """
        postings, df = self._postings, self._df
        found = {t for t in terms if t in postings}
        return sorted(found, key=lambda t: (df(t), t))[:n]

    def exact(self, doc_ids: Iterable[int], query_terms: Iterable[str]) -> dict[int, float]:
        """The exact BM25 score of each of `doc_ids` (0.0 if it holds no query term), summed
        in `head`'s term order, so a document scored by both gets the same float.

        Examples:
            >>> index = Index(); index.add(0, {"oven": 1}); index.add(1, {"deck": 1})
            >>> index.exact([0, 1], ["oven"])[1]
            0.0
        """
        lengths = self._lengths
        terms = self.rarest(query_terms)
        out = dict.fromkeys(doc_ids, 0.0)
        if not terms or not out:
            return out
        n_docs = self._count
        a, c = K1 * (1.0 - B), K1 * B / (self._total_len / n_docs)
        top = self._top
        # Columns reach the largest id indexed: ids outside hold no term and are not looked up.
        inside: Collection[int] = out
        if min(out) < 0 or max(out) > top:
            inside = [d for d in out if 0 <= d <= top]
        pick = picker(inside) if inside else None
        for term in terms:
            entry = self._entry(term)
            df = len(entry.ids)
            weight = idf(df, n_docs) * (K1 + 1.0)
            col = column(entry, top, lengths) if pick is not None and 2 * df >= len(out) else None
            if col is not None and pick is not None:
                # One C-level pass picks each document's byte: only those holding the term
                # reach Python (values change, not keys, so iterating `out` stays valid).
                for doc_id in compress(inside, pick(col)):
                    tf = col[doc_id]
                    out[doc_id] += weight * tf / (tf + a + c * lengths[doc_id])
                continue
            for doc_id, tf in found(entry, out):
                out[doc_id] += weight * tf / (tf + a + c * lengths[doc_id])
        return out

    def head(
        self, query_terms: Iterable[str], k: int
    ) -> tuple[list[tuple[float, int]], dict[int, float], bool]:
        """The `k` best documents as (score, id), best first (ties: higher id first), the
        scores in which they are exact (any other score is a lower bound), and whether every
        document outside those scores scores 0 (no document was passed over).

        Terms are visited rarest first, as in MaxScore (H. Turtle and J. Flood, "Query
        evaluation: strategies and optimizations", Information Processing & Management 31(6),
        1995), but a long list's bound is kept per (tf, document length) group, the way
        impact-ordered indexes do (V. N. Anh and A. Moffat, "Pruned query evaluation using
        pre-computed impacts", SIGIR 2006). Once `k` documents are scored, their k-th score
        `kth` bounds the head from below, and in each later list:
        - a document not scored yet is taken only from a group whose share, with the most the
          later terms could add, reaches `kth`; once a group is passed over, no document
          outside the scored ones can reach the head, and later lists add no new ones;
        - a scored document (found by a look-up in the term's column, or a walk of the list)
          gets the share unless its score plus the most the terms left could add stays below
          `kth`; it then keeps a lower bound.
        Every score of a document that may be in the head is exact, summed in the same order
        as a full walk (speed: docs/benchmarks.md, "Speed").
        """
        n_docs = self._count
        terms = self.rarest(query_terms)
        if not terms or n_docs == 0:
            return [], {}, True
        # norm(doc) = a + c * len(doc), the denominator's length part of the tf weight.
        a, c = K1 * (1.0 - B), K1 * B / (self._total_len / n_docs)
        entries = [self._entry(t) for t in terms]
        weights = [idf(len(e.ids), n_docs) * (K1 + 1.0) for e in entries]
        walk = Walk(a, c, self._lengths, self._top)
        return walk.head(entries, weights, self._shortest(), k)


class BM25:
    """Rank documents against a query by BM25: the `fit`/`rank` retriever protocol.

    Any object with these two methods can replace it as `Memory(retriever=...)`.
    """

    def __init__(self) -> None:
        self._index = Index()
        self._counts: dict[int, dict[str, int]] = {}
        self._n = 0

    def fit(self, docs: Sequence[str]) -> BM25:
        """Index `docs` (replacing anything indexed before) and return self.

        Args:
            docs: The documents' texts; document k is `docs[k]`.

        Raises:
            TypeError: `docs` is a single string, or holds a non-str.
        """
        _documents("fit", docs)
        self._index, self._counts, self._n = Index(), {}, 0
        return self.add(docs)

    def add(self, docs: Sequence[str], ids: Sequence[int] | None = None) -> BM25:
        """Index `docs` too, as documents `ids` (default: after the last one); returns self.

        Examples:
            >>> BM25().fit(["the cat sat"]).add(["a dog barked"]).rank("dog")
            [1, 0]
        """
        _documents("add", docs)
        ids = range(self._n, self._n + len(docs)) if ids is None else ids
        if len(ids) != len(docs):
            raise ValueError(f"BM25.add: {len(docs)} docs but {len(ids)} ids; give one id each")
        self.remove([i for i in ids if i in self._counts])
        for i, doc in zip(ids, docs, strict=True):
            counts = self._counts[i] = term_counts(doc)
            self._index.add(i, counts)
            self._n = max(self._n, i + 1)
        return self

    def remove(self, ids: Sequence[int]) -> BM25:
        """Forget documents `ids` (those not indexed are skipped); they then score 0."""
        for i in ids:
            counts = self._counts.pop(i, None)
            if counts is not None:
                self._index.remove(i, counts)
        return self

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every document, in document order.

        Args:
            query: The query text, tokenized like the documents.

        Returns:
            One score per document (0.0 for documents sharing no term with the query).
        """
        if not isinstance(query, str):
            raise TypeError(f"BM25.scores: query is {type(query).__name__}, expected str")
        found, _ = self._index.scores(tokenize(query))
        return [found.get(i, 0.0) for i in range(self._n)]

    def rank(self, query: str) -> list[int]:
        """Every document index, best first; ties (and non-matches) keep document order.

        Args:
            query: The query text.
        """
        s = self.scores(query)
        return sorted(range(self._n), key=lambda i: -s[i])


def _documents(call: str, docs: Sequence[str]) -> None:
    """TypeError naming `BM25.<call>` unless `docs` is a list of strings."""
    if isinstance(docs, str):
        raise TypeError(f"BM25.{call}: pass a list of documents, not a single string")
    for i, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise TypeError(f"BM25.{call}: document {i} is {type(doc).__name__}, expected str")
