"""Okapi BM25, kept in stages: formulas, an incremental index, a ranking front end.

Formulas follow S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25
and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009, eq. 3.3 (the
tf saturation) with the non-negative idf used by Lucene (`log(1 + (N - df + 0.5)/(df + 0.5))`),
so a term in more than half the documents still counts a little instead of subtracting.

Examples:
    >>> BM25().fit(["the cat sat", "a dog barked", "the cat and the dog"]).rank("dog")
    [1, 2, 0]
"""

from __future__ import annotations

import heapq
import math
import struct
import sys
from array import array
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import compress, pairwise, repeat
from operator import itemgetter

from .._text.tokens import term_counts, tokenize
from .codec import U32, u32_array, u32_bytes

K1 = 1.2
B = 0.75

# Index.dump layout: a header, then arrays of little-endian 4-byte unsigned ints. "BHI2" dumps
# hold each term's postings in ascending document order; "BHIX" ones (before) may not.
_DUMP_MAGIC = b"BHI2"
_DUMP_UNSORTED = b"BHIX"
_DUMP_HEADER = struct.Struct("<4sIIII")  # magic, documents, terms, postings, term bytes
# Lists at least this long are kept in (tf, length) groups for `Index.head` to skip. Below
# 512 the groups are small, their arrays' overhead outweighs the walk they save: at 100,000
# turns 256 took 2.3 MB more for compose 0.83x of 6a58811 instead of 0.93x.
_BANDED = 512
# A list held by at least 1/_DENSE of the documents also gets a byte per document
# (its tf, 0 if absent): looking scored documents up there beats walking the list, and costs
# at most _DENSE bytes a posting (the sorted arrays cost 3 to 5).
_DENSE = 8
# Bounds are raised by this factor so float rounding cannot make one fall short of a sum.
_SLACK = 1.0 + 1e-9
Scores = dict[int, float]  # document id -> score so far
Bands = dict[int, "Band"]  # tf -> that tf's documents, grouped by length


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


class Postings(Mapping[int, int]):
    """One term's postings: the documents holding it, ascending, and each one's count (tf).

    Two parallel arrays, 3-5 bytes a posting where a dict of ints took ~38 (100,000 turns hold
    1.8 million postings). A look-up is a binary search; ids take 2 bytes until one exceeds
    65,535, counts 1 until one exceeds 255.

    Examples:
        >>> p = Postings(array("H"), array("B"), 0); p.put(7, 2); p.put(3, 300); p.put(9, 1)
        >>> list(p.items()), 3 in p, 4 in p, len(p)
        ([(3, 300), (7, 2), (9, 1)], True, False, 3)
    """

    __slots__ = ("bands", "col", "ids", "most", "tfs")

    def __init__(self, ids: array[int], tfs: array[int], most: int) -> None:
        self.ids = ids
        self.tfs = tfs
        # The largest tf seen: an upper bound for pruning (never lowered on removal, which
        # keeps it a bound); -1 until `top_tf` first needs it (a loaded list).
        self.most = most
        # The list again, grouped by tf then document length (see `Index._banded`): built
        # when a query first needs it, then kept up to date by add/remove.
        self.bands: Bands | None = None
        # A byte per document, its tf (see `Index._column`): built and kept like the bands,
        # dropped if the term's counts outgrow a byte or its list thins out.
        self.col: bytearray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids)

    def _at(self, doc_id: object) -> int:
        """Where `doc_id` is in `ids`, or -1."""
        if not isinstance(doc_id, int):
            return -1
        ids = self.ids
        i = bisect_left(ids, doc_id)
        return i if i < len(ids) and ids[i] == doc_id else -1

    def __contains__(self, doc_id: object) -> bool:
        return self._at(doc_id) >= 0

    def __getitem__(self, doc_id: int) -> int:
        i = self._at(doc_id)
        if i < 0:
            raise KeyError(doc_id)
        return self.tfs[i]

    def top_tf(self) -> int:
        """The largest tf seen (at least the largest held)."""
        if self.most < 0:
            self.most = max(self.tfs)
        return self.most

    def append(self, doc_id: int, tf: int) -> None:
        """Add a document above every one held."""
        self.ids = _with(self.ids, doc_id)
        self.tfs = _with(self.tfs, tf)

    def put(self, doc_id: int, tf: int) -> None:
        """Add a document not held, wherever its id falls (a binary search and a move)."""
        ids = self.ids
        if not ids or ids[-1] < doc_id:
            self.append(doc_id, tf)
            return
        i = bisect_left(ids, doc_id)
        if doc_id > 0xFFFF and ids.typecode == "H":
            self.ids = ids = array(U32, ids)
        ids.insert(i, doc_id)
        try:
            self.tfs.insert(i, tf)
        except OverflowError:
            self.tfs = array(U32, self.tfs)
            self.tfs.insert(i, tf)

    def pop(self, doc_id: int) -> int | None:
        """Remove a document; its count, or None if it was not held."""
        i = self._at(doc_id)
        if i < 0:
            return None
        tf = self.tfs[i]
        del self.ids[i]
        del self.tfs[i]
        return tf


class Band:
    """The documents of one term holding it one given number of times (tf), grouped by their
    length: `lengths` ascending, `groups[i]` the ids of length `lengths[i]`. An array and a
    list where a dict of lengths took ~2.5 times the memory, and walked in length order.

    Examples:
        >>> band = Band(); band.put(40, 7); band.put(12, 3); band.put(40, 9)
        >>> [(n, list(g)) for n, g in zip(band.lengths, band.groups, strict=True)]
        [(12, [3]), (40, [7, 9])]
    """

    __slots__ = ("groups", "lengths")

    def __init__(self) -> None:
        self.lengths: array[int] = array(U32)
        self.groups: list[array[int]] = []

    def put(self, length: int, doc_id: int) -> None:
        """Add document `doc_id`, of `length`."""
        lengths = self.lengths
        i = bisect_left(lengths, length)
        if i < len(lengths) and lengths[i] == length:
            group = self.groups[i]
            try:
                group.append(doc_id)
            except OverflowError:
                self.groups[i] = _with(group, doc_id)
        else:
            lengths.insert(i, length)
            self.groups.insert(i, _with(array("H"), doc_id))

    def drop(self, length: int, doc_id: int) -> None:
        """Remove document `doc_id`, of `length` (held)."""
        i = bisect_left(self.lengths, length)
        group = self.groups[i]
        group.remove(doc_id)
        if not group:
            del self.lengths[i]
            del self.groups[i]


_EMPTY = Postings(array("H"), array("B"), 0)  # `holding` of a term none holds: never changed
_TF_ONE = array("B", (1,))  # copied as the counts of a term new to the index, seen once
_ABSENT = 0xFFFFFFFF  # the length of an id not indexed (see `Index._lengths`)


class Index:
    """An inverted index that grows and shrinks one document at a time.

    Statistics (document count, total length, document frequencies) are running totals, so
    adding a document costs its own length, and scoring touches only the postings of the
    query's terms.
    """

    __slots__ = ("_count", "_lengths", "_min_len", "_postings", "_top", "_total_len")

    def __init__(self) -> None:
        self._postings: dict[str, Postings] = {}
        # Each id's length (_ABSENT: not indexed), by id: ids are stretch numbers, dense from
        # 0, and 4 bytes each beat a dict's ~70 (its entry and the id's int object).
        self._lengths: array[int] = array(U32)
        self._count = 0
        self._total_len = 0
        self._min_len: int | None = None
        # The largest id ever added: a document above it goes at the end of every list.
        self._top = -1

    def __len__(self) -> int:
        return self._count

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, int) or doc_id < 0:
            return False
        try:  # one look-up: a store checks every stretch id when it loads a snapshot
            return self._lengths[doc_id] != _ABSENT
        except IndexError:
            return False

    def ids(self) -> Iterable[int]:
        """The ids of the documents indexed, ascending."""
        return list(compress(range(len(self._lengths)), map(_ABSENT.__ne__, self._lengths)))

    def holding(self, term: str) -> Mapping[int, int]:
        """The documents holding `term`, each with its count (empty if none)."""
        return self._postings.get(term, _EMPTY)

    def _df(self, term: str) -> int:
        """How many documents hold indexed `term`."""
        return len(self._postings[term].ids)

    def add(self, doc_id: int, counts: Mapping[str, int]) -> None:
        """Index a document, given its term counts, under `doc_id` (not indexed already)."""
        if not 0 <= doc_id < _ABSENT:
            raise ValueError(f"Index.add: document id {doc_id} is outside 0 to 2**32 - 2")
        lengths = self._lengths
        if doc_id < len(lengths) and lengths[doc_id] != _ABSENT:
            raise ValueError(f"Index.add: document {doc_id} is already indexed; remove it first")
        length = sum(counts.values())
        if not 0 <= length < _ABSENT:
            raise ValueError(f"Index.add: document {doc_id} has {length} terms")
        if doc_id >= len(lengths):
            lengths.extend(repeat(_ABSENT, doc_id + 1 - len(lengths)))
        lengths[doc_id] = length
        self._count += 1
        self._total_len += length
        if self._min_len is not None and length < self._min_len:
            self._min_len = length
        last = doc_id > self._top  # the usual case: above every id, so appended to each list
        if last:
            self._top = doc_id
        postings = self._postings
        get = postings.get
        first_id = array("H" if doc_id <= 0xFFFF else U32, (doc_id,))
        for term, tf in counts.items():
            entry = get(term)
            if entry is None:
                # A new term's arrays: copies of one-element arrays, faster than building them.
                tfs = _TF_ONE.__copy__() if tf == 1 else _first_tf(tf)
                postings[term] = Postings(first_id.__copy__(), tfs, tf)
                continue
            if last:  # Postings.append inlined: this loop runs for every posting
                try:
                    entry.ids.append(doc_id)
                except OverflowError:
                    entry.ids = _with(entry.ids, doc_id)
                try:
                    entry.tfs.append(tf)
                except OverflowError:
                    entry.tfs = _with(entry.tfs, tf)
            else:
                entry.put(doc_id, tf)
            if tf > 1 and tf > entry.most:
                entry.most = tf if entry.most >= 0 else max(entry.tfs)
            by_tf = entry.bands
            if by_tf is not None:
                band = by_tf.get(tf)
                if band is None:
                    by_tf[tf] = band = Band()
                band.put(length, doc_id)
                col = entry.col
                if col is not None:
                    if doc_id < len(col) and tf < 256:
                        col[doc_id] = tf
                    else:
                        _col_put(entry, col, doc_id, tf)

    def remove(self, doc_id: int, counts: Mapping[str, int]) -> None:
        """Forget a document; `counts` must be the term counts it was added with."""
        if doc_id not in self:
            raise KeyError(doc_id)
        length = self._lengths[doc_id]
        self._lengths[doc_id] = _ABSENT
        self._count -= 1
        self._total_len -= length
        self._min_len = None
        postings = self._postings
        for term in counts:
            entry = postings.get(term)
            if entry is None:
                continue
            tf = entry.pop(doc_id)
            if not entry.ids:
                del postings[term]
            elif tf is not None and entry.bands is not None:
                band = entry.bands[tf]
                band.drop(length, doc_id)
                if not band.lengths:
                    del entry.bands[tf]
                col = entry.col
                if col is not None and doc_id < len(col):
                    col[doc_id] = 0

    def dump(self) -> bytes:
        """The index as bytes, for `Index.load` to rebuild far faster than re-adding documents.

        The postings are arrays already: dumping and loading copy them whole, against ~1.1 s
        adding 35,000 documents term by term; a store keeps this beside its rows so reopening
        a long conversation skips re-indexing it.

        Examples:
            >>> index = Index(); index.add(3, {"oven": 2, "deck": 1})
            >>> Index.load(index.dump()).scores(["oven"])[0] == index.scores(["oven"])[0]
            True
        """
        terms = list(self._postings)
        if any("\n" in t for t in terms):
            raise ValueError("Index.dump: a term contains a newline; terms are single words")
        postings = self._postings.values()
        table = "\n".join(terms).encode()
        n_postings = sum(map(len, postings))
        ids = self.ids()
        parts = [
            _DUMP_HEADER.pack(_DUMP_MAGIC, self._count, len(terms), n_postings, len(table)),
            u32_bytes(ids),
            u32_bytes(map(self._lengths.__getitem__, ids)),
            u32_bytes(map(len, postings)),
        ]
        parts += [u32_bytes(entry.ids) for entry in postings]
        parts += [u32_bytes(entry.tfs) for entry in postings]
        parts.append(table)
        return b"".join(parts)

    @classmethod
    def load(cls, data: bytes | memoryview, *, intact: bool = False) -> Index:
        """An index from `Index.dump` bytes; ValueError if they are not such bytes.

        `intact`: a checksum showed the bytes to be what `dump` wrote, so the pass that checks
        every posting names a document held (a pass over all of them) is skipped.
        """
        try:
            magic, n_docs, n_terms, n_postings, n_bytes = _DUMP_HEADER.unpack_from(data)
            if magic not in (_DUMP_MAGIC, _DUMP_UNSORTED):
                raise ValueError("not bytes from Index.dump")
            at = _DUMP_HEADER.size
            ints = []
            for count in (n_docs, n_docs, n_terms, n_postings, n_postings):
                ints.append(u32_array(data, count, at))
                at += 4 * count
            doc_ids, lengths, sizes, docs, tfs = ints
            if len(data) != at + n_bytes:
                raise ValueError("truncated or followed by other bytes")
            terms = bytes(data[at:]).decode().split("\n") if n_terms else []
            if len(terms) != n_terms or sum(sizes) != n_postings or 0 in sizes:
                raise ValueError("the term table does not match the postings")
            ids = doc_ids.tolist()
            top = max(ids, default=-1)
            # Lengths are kept by id: damaged bytes naming a huge id must not allocate gigabytes.
            if top >= 16 * n_docs + (1 << 20) or (lengths and max(lengths) >= _ABSENT):
                raise ValueError("document ids or lengths out of range")
            if not (intact and magic == _DUMP_MAGIC) and not _holds_all(ids, docs):
                raise ValueError("postings name documents it does not hold")
            index = cls()
            index._lengths = by_id = array(U32, repeat(_ABSENT, top + 1))
            deque(map(by_id.__setitem__, ids, lengths), maxlen=0)  # a C-level scatter
            index._count = len(by_id) - by_id.count(_ABSENT)
            if index._count != n_docs:
                raise ValueError("a document twice")
        except (struct.error, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"Index.load: {exc}") from None
        index._total_len = sum(lengths)
        index._top = top
        # Ids as 2 bytes and counts as 1 where they fit, as `Postings` keeps them.
        if top <= 0xFFFF:
            docs = _narrow(docs, "H")
        if _fits_a_byte(tfs):
            tfs = _narrow(tfs, "B")
        postings = index._postings
        start = 0
        for term, size in zip(terms, sizes, strict=True):
            end = start + size
            entry = Postings(docs[start:end], tfs[start:end], -1)
            start = end
            postings[term] = _sorted(entry) if magic == _DUMP_UNSORTED else entry
        return index

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
            entry = self._postings.get(term, _EMPTY)
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

    def _shortest(self) -> int:
        """The shortest document's length, cached until a removal may have taken it away."""
        if self._min_len is None:
            # An absent id's slot holds the largest value, so it is never the minimum.
            self._min_len = min(self._lengths) if self._count else 0
        return self._min_len

    def document_frequency(self, term: str) -> int:
        """How many documents hold `term`."""
        entry = self._postings.get(term)
        return 0 if entry is None else len(entry.ids)

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
        postings, lengths = self._postings, self._lengths
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
        pick = _picker(inside) if inside else None
        for term in terms:
            entry = postings[term]
            df = len(entry.ids)
            weight = idf(df, n_docs) * (K1 + 1.0)
            col = self._column(entry, top) if pick is not None and 2 * df >= len(out) else None
            if col is not None and pick is not None:
                # One C-level pass picks each document's byte: only those holding the term
                # reach Python (values change, not keys, so iterating `out` stays valid).
                for doc_id in compress(inside, pick(col)):
                    tf = col[doc_id]
                    out[doc_id] += weight * tf / (tf + a + c * lengths[doc_id])
                continue
            for doc_id, tf in _found(entry, out):
                out[doc_id] += weight * tf / (tf + a + c * lengths[doc_id])
        return out

    def _banded(self, entry: Postings) -> Bands:
        """A term's postings by tf, each tf's grouped by document length: built on first use."""
        by_tf = entry.bands
        if by_tf is None:
            # Grouped in dicts first (a look-up a posting), then each tf's lengths sorted once.
            grouped: dict[int, dict[int, array[int]]] = {}
            lengths = self._lengths
            for doc_id, tf in zip(entry.ids, entry.tfs, strict=True):
                by_len = grouped.get(tf)
                if by_len is None:
                    grouped[tf] = by_len = {}
                length = lengths[doc_id]
                group = by_len.get(length)
                if group is None:
                    by_len[length] = array(entry.ids.typecode, (doc_id,))
                else:
                    group.append(doc_id)
            by_tf = {}
            for tf, by_len in grouped.items():
                by_tf[tf] = band = Band()
                band.lengths.extend(sorted(by_len))
                band.groups = [by_len[n] for n in band.lengths]
            entry.bands = by_tf
        return by_tf

    def _column(self, entry: Postings, upto: int) -> bytearray | None:
        """A term's count in each document (0: not held), indexed by id and reaching at least
        `upto`, if its list is dense enough to be worth a byte per document (built on first
        use, with the bands, which add/remove keep it up to date along with); else None."""
        col = entry.col
        if col is None:
            ids = entry.ids
            if len(ids) * _DENSE <= ids[-1] or entry.top_tf() > 255:
                return None
            self._banded(entry)
            col = bytearray(ids[-1] + 1)
            deque(map(col.__setitem__, ids, entry.tfs), maxlen=0)  # a C-level scatter
            entry.col = col
        if len(col) <= upto:  # ids past its last document: so every look-up is in range
            col.extend(bytes(upto + 1 - len(col)))
        return col

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
        entries = [self._postings[t] for t in terms]
        weights = [idf(len(e.ids), n_docs) * (K1 + 1.0) for e in entries]
        banded = [len(e.ids) >= _BANDED for e in entries]
        left_bound = self._left_bounds(entries, weights, banded, a, c)
        scores: dict[int, float] = {}
        kth = 0.0
        closed = False  # no document outside `scores` can reach the head any more
        for i, entry in enumerate(entries):
            cut = 0.0
            if banded[i] and len(scores) >= k:
                # Scores only grow, so an earlier k-th score still bounds the head from below:
                # the k-th search (a pass over thousands of scores) runs only when it must.
                if kth <= left_bound[i + 1] and max(scores.values()) > left_bound[i + 1]:
                    kth = _kth_largest(scores.values(), k)
                cut = kth - left_bound[i + 1]
            if cut <= 0.0 and not closed:
                self._add_all(entry, weights[i], a, c, scores, banded[i])
                continue
            self._add_reaching(entry, weights[i], a, c, scores, kth - left_bound[i], banded[i])
            if not closed:
                closed = self._add_unseen(entry, weights[i], a, c, scores, cut)
        return _head_of(scores, k), scores, not closed

    def _left_bounds(
        self, entries: list[Postings], weights: list[float], banded: list[bool], a: float, c: float
    ) -> list[float]:
        """For each i, the most terms i.. can still add to any document's score."""
        shortest = a + c * self._shortest()
        left_bound = [0.0] * (len(entries) + 1)
        for i in range(len(entries) - 1, -1, -1):
            weight = weights[i]
            if banded[i]:
                # The shortest document of each tf group: the most this term gives anyone.
                most = max(
                    weight * tf / (tf + a + c * band.lengths[0])
                    for tf, band in self._banded(entries[i]).items()
                )
            else:
                tf = entries[i].top_tf()
                most = weight * tf / (tf + shortest)
            left_bound[i] = left_bound[i + 1] + most * _SLACK
        return left_bound

    def _add_all(
        self, entry: Postings, weight: float, a: float, c: float, scores: Scores, banded: bool
    ) -> None:
        """Every document of a term's list gets its share: a long list group by group, each
        group's share computed once (the same expression, so the same float)."""
        get = scores.get
        if banded:
            for tf, band in self._banded(entry).items():
                top = weight * tf
                for length, group in zip(band.lengths, band.groups, strict=True):
                    share = top / (tf + a + c * length)
                    for doc_id in group:
                        scores[doc_id] = get(doc_id, 0.0) + share
            return
        lengths = self._lengths
        # Most counts are 1: its two constants hoisted, the same floats (weight * 1 is weight,
        # 1 + a is what tf + a adds first).
        one_a = 1 + a
        for doc_id, tf in zip(entry.ids, entry.tfs, strict=True):
            if tf == 1:
                scores[doc_id] = get(doc_id, 0.0) + weight / (one_a + c * lengths[doc_id])
            else:
                scores[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + a + c * lengths[doc_id])

    def _add_reaching(
        self, entry: Postings, weight: float, a: float, c: float, scores: Scores, reach: float,
        banded: bool,
    ) -> None:  # fmt: skip
        """Documents already scored get the share (the same expression, the same floats),
        unless they can no longer reach the head (their score then stays a lower bound)."""
        # The cheaper pass: over the scored documents (a byte each, picked in C) or the list.
        col = self._column(entry, self._top) if len(scores) <= 4 * len(entry.ids) else None
        if col is not None:
            lengths = self._lengths
            for doc_id in compress(scores, _picker(scores)(col)):
                s = scores[doc_id]
                if s >= reach:
                    tf = col[doc_id]
                    scores[doc_id] = s + weight * tf / (tf + a + c * lengths[doc_id])
            return
        if banded:  # a walk of the groups, each share computed once
            get = scores.get
            for tf, band in self._banded(entry).items():
                top = weight * tf
                for length, group in zip(band.lengths, band.groups, strict=True):
                    share = 0.0
                    for doc_id in group:
                        now = get(doc_id)
                        if now is not None and now >= reach:
                            if not share:
                                share = top / (tf + a + c * length)
                            scores[doc_id] = now + share
            return
        lengths = self._lengths
        for doc_id, tf in _found(entry, scores):
            s = scores[doc_id]
            if s >= reach:
                scores[doc_id] = s + weight * tf / (tf + a + c * lengths[doc_id])

    def _add_unseen(
        self, entry: Postings, weight: float, a: float, c: float, scores: Scores, cut: float
    ) -> bool:
        """Documents not seen yet, from the groups whose share reaches `cut` (none was passed
        over before, so that share is their score so far). True once a group is passed over:
        a document left there holds less than `kth` with all later terms' most, and so does
        any document a later term adds."""
        passed_over = False
        for tf, band in self._banded(entry).items():
            top = weight * tf
            for length, group in zip(band.lengths, band.groups, strict=True):
                share = top / (tf + a + c * length)
                if share < cut:  # longer documents of this tf get less
                    passed_over = True
                    break
                for doc_id in group:
                    if doc_id not in scores:
                        scores[doc_id] = share
        return passed_over


def _first_tf(tf: int) -> array[int]:
    """The counts of a term first seen `tf` times."""
    return array("B" if tf <= 255 else U32, (tf,))


def _with(values: array[int], value: int) -> array[int]:
    """`values` with `value` appended: the same array, or a 4-byte one once a value outgrows
    its items (ids take 2 bytes until one exceeds 65,535, counts 1 until one exceeds 255)."""
    try:
        values.append(value)
    except OverflowError:
        values = array(U32, values)
        values.append(value)
    return values


def _col_put(entry: Postings, col: bytearray, doc_id: int, tf: int) -> None:
    """Set a count past a column's end, or one a byte cannot hold (then the column is dropped,
    as when the term's documents have become too few for its length)."""
    if tf > 255 or doc_id >= _DENSE * len(entry.ids):
        entry.col = None
        return
    # Grown a sixteenth ahead, so a column is not reallocated at each new document.
    col.extend(bytes(doc_id + 1 - len(col) + (len(col) >> 4)))
    col[doc_id] = tf


def _found(entry: Postings, docs: Mapping[int, object]) -> list[tuple[int, int]]:
    """The (id, tf) of each of `docs` that `entry` holds: a walk of a short list, a C-level
    pass over a list not much longer than `docs`, else a binary search per document."""
    ids, tfs = entry.ids, entry.tfs
    if len(ids) <= 64:
        return [(d, tf) for d, tf in zip(ids, tfs, strict=True) if d in docs]
    held = docs.keys() & ids if len(ids) <= 8 * len(docs) else [d for d in docs if d in entry]
    return [(d, tfs[bisect_left(ids, d)]) for d in held]


def _picker(docs: Collection[int]) -> Callable[[bytearray], Sequence[int]]:
    """A function giving the bytes of a column at `docs`' ids, in their order (itemgetter
    runs in C, twice as fast as mapping the column's __getitem__)."""
    if len(docs) == 1:
        (only,) = docs
        return lambda col: (col[only],)
    return itemgetter(*docs)


def _fits_a_byte(values: array[int]) -> bool:
    """Whether every one of 4-byte `values` is below 256: their three high bytes are all 0
    (counted in C, not an int object made per value)."""
    raw = values.tobytes()
    low = raw[0 if sys.byteorder == "little" else 3 :: 4]
    return raw.count(0) == 3 * len(values) + low.count(0)


def _narrow(values: array[int], code: str) -> array[int]:
    """4-byte `values`, each small enough, as an array of typecode `code` ("H" or "B"): their
    low bytes sliced out in C, where `array(code, values)` makes an int object of each."""
    raw = values.tobytes()
    little = sys.byteorder == "little"
    out = array(code)
    if code == "B":
        out.frombytes(raw[0 if little else 3 :: 4])
        return out
    first = 0 if little else 2  # a native 2-byte int's bytes, in order
    pairs = bytearray(2 * len(values))
    pairs[0::2] = raw[first::4]
    pairs[1::2] = raw[first + 1 :: 4]
    out.frombytes(pairs)
    return out


def _sorted(entry: Postings) -> Postings:
    """`entry` in ascending id order (a "BHIX" dump kept a list in the order it was built)."""
    ids = entry.ids
    if all(x < y for x, y in pairwise(ids)):
        return entry
    order = sorted(range(len(ids)), key=ids.__getitem__)
    if any(ids[i] == ids[j] for i, j in pairwise(order)):
        raise ValueError("Index.load: a document twice in one list")
    tfs = array(entry.tfs.typecode, [entry.tfs[i] for i in order])
    return Postings(array(ids.typecode, [ids[i] for i in order]), tfs, entry.most)


def _holds_all(ids: list[int], docs: array[int]) -> bool:
    """Whether every id in `docs` is one of `ids`: a bound on the largest when `ids` are
    0..n-1 (an index of every stretch), else a look-up each."""
    held = set(ids)
    if len(held) == len(ids) and (not ids or max(ids) == len(ids) - 1):
        return not docs or max(docs) < len(ids)
    return held.issuperset(docs)


def _head_of(scores: Scores, k: int) -> list[tuple[float, int]]:
    """The `k` best (score, id) pairs of `scores`, best first."""
    if len(scores) > 4 * k:
        # Only pairs at or above the k-th score are built and sorted: with thousands of scored
        # documents this beats heapq.nlargest over all pairs (docs/benchmarks.md, "Speed").
        kth = _kth_largest(scores.values(), k)
        return _best(((s, d) for d, s in scores.items() if s >= kth), k)
    return _best(zip(scores.values(), scores.keys(), strict=True), k)


# Up to this many values, sorting them all in C finds the k-th largest sooner than heapq's
# Python loop over them (docs/benchmarks.md, "Speed").
_SORTED_KTH = 2000


def _kth_largest(values: Collection[float], k: int) -> float:
    """The `k`-th largest of `values` (1 <= k <= len(values))."""
    if len(values) <= _SORTED_KTH:
        return sorted(values, reverse=True)[k - 1]
    return heapq.nlargest(k, values)[-1]


def _best(pairs: Iterable[tuple[float, int]], k: int) -> list[tuple[float, int]]:
    """The `k` largest (score, id) pairs, largest first: what heapq.nlargest returns, sorted
    in C (a few hundred pairs sort faster than nlargest's Python loop compares them)."""
    return sorted(pairs, reverse=True)[:k]


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
