"""Postings and their array packing: what the BM25 index (`bm25.Index`) is made of.

A term's postings are two parallel arrays (`Postings`), grouped by tf and document length for
the pruned head (`Band`, `banded`), with a byte per document for dense lists (`column`);
`Inverted` keeps every term's lists and the running statistics as documents come and go, and
packs them as bytes (`Inverted.dump`, `Inverted.load`) for stores to keep.
"""

from __future__ import annotations

import gc
import struct
import sys
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import accumulate, chain, compress, pairwise, repeat
from operator import itemgetter, rshift
from typing import TypeVar, cast

from .codec import U32, u32_array, u32_bytes

# Index.dump layout: a header, then arrays of little-endian 4-byte unsigned ints. "BHI2" dumps
# hold each term's postings in ascending document order; "BHIX" ones (before) may not.
_DUMP_MAGIC = b"BHI2"
_DUMP_UNSORTED = b"BHIX"
_DUMP_HEADER = struct.Struct("<4sIIII")  # magic, documents, terms, postings, term bytes
# A list held by at least 1/_DENSE of the documents also gets a byte per document
# (its tf, 0 if absent): looking scored documents up there beats walking the list, and costs
# at most _DENSE bytes a posting (the sorted arrays cost 3 to 5).
_DENSE = 8
Bands = dict[int, "Band"]  # tf -> that tf's documents, grouped by length
_I = TypeVar("_I", bound="Inverted")


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
        # The list again, grouped by tf then document length (see `banded`): built
        # when a query first needs it, then kept up to date by add/remove.
        self.bands: Bands | None = None
        # A byte per document, its tf (see `column`): built and kept like the bands,
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


EMPTY = Postings(array("H"), array("B"), 0)  # `holding` of a term none holds: never changed
_TF_ONE = array("B", (1,))  # copied as the counts of a term new to the index, seen once
_ABSENT = 0xFFFFFFFF  # the length of an id not indexed (see `Inverted._lengths`)


class Packed:
    """The postings of a loaded index's terms not used yet: the loaded arrays, cut into a
    term's `Postings` only when it is first used. A fresh process reopening a conversation
    and composing once uses a few dozen of its thousands of terms (docs/benchmarks.md,
    "Speed"). A packed term's value in the index's dict is its number here (an int), so one
    dict names every term."""

    __slots__ = ("docs", "ends", "left", "tfs")

    def __init__(self, docs: array[int], tfs: array[int], ends: list[int], left: int) -> None:
        self.docs, self.tfs, self.ends = docs, tfs, ends
        self.left = left  # terms still packed

    def size(self, k: int) -> int:
        """How many documents hold packed term number `k`."""
        return self.ends[k] - (self.ends[k - 1] if k else 0)

    def take(self, k: int) -> Postings:
        """Packed term number `k`'s postings, as `Inverted.load` would have built them; it
        counts as taken."""
        self.left -= 1
        start, end = self.ends[k - 1] if k else 0, self.ends[k]
        return Postings(self.docs[start:end], self.tfs[start:end], -1)


class Inverted:
    """Every term's postings, grown and shrunk one document at a time (`bm25.Index` scores
    them).

    Statistics (document count, total length, document frequencies) are running totals, so
    adding a document costs its own length, and scoring touches only the postings of the
    query's terms.
    """

    __slots__ = ("_count", "_lengths", "_min_len", "_packed", "_postings", "_top", "_total_len")

    def __init__(self) -> None:
        # Each term's postings, or while packed (after `load`) its number in `_packed`.
        self._postings: dict[str, Postings | int] = {}
        # Each id's length (_ABSENT: not indexed), by id: ids are stretch numbers, dense from
        # 0, and 4 bytes each beat a dict's ~70 (its entry and the id's int object).
        self._lengths: array[int] = array(U32)
        self._count = 0
        self._total_len = 0
        self._min_len: int | None = None
        # The largest id ever added: a document above it goes at the end of every list.
        self._top = -1
        # After `load`, the arrays of the terms still packed (the dict keeps every term in
        # the order an eager load gives).
        self._packed: Packed | None = None

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
        return self._entry(term)

    def _entry(self, term: str) -> Postings:
        """`term`'s postings (`EMPTY` if none holds it), taken out of the packed ones if
        need be."""
        entry = self._postings.get(term, EMPTY)
        return self._unpack(term, entry) if isinstance(entry, int) else entry

    def _unpack(self, term: str, k: int) -> Postings:
        """Packed `term`'s postings (its number `k`), in `_postings` from now on."""
        packed = self._packed
        assert packed is not None
        entry = self._postings[term] = packed.take(k)
        if not packed.left:
            self._packed = None  # every term taken: the loaded arrays can go
        return entry

    def _unpacked(self) -> dict[str, Postings]:
        """Every term's postings, the packed ones taken out first."""
        postings = self._postings
        if self._packed is not None:
            for term, k in list(postings.items()):
                if isinstance(k, int):
                    self._unpack(term, k)
        return cast(dict[str, Postings], postings)

    def group_long_lists(self, least: int) -> None:
        """Group each list of at least `least` documents by tf and document length now (see
        `banded`), not when its term is first asked for.

        >>> index = Inverted()
        >>> for i in range(3):
        ...     index.add(i, {"oven": 1, f"w{i}": 1})
        >>> index = Inverted.load(index.dump())  # its lists packed until used
        >>> index.group_long_lists(3)
        >>> index.holding("oven").bands is not None, index.holding("w1").bands is None
        (True, True)
        """
        for term in [t for t in self._postings if self._df(t) >= least]:
            banded(self._entry(term), self._lengths)

    def _df(self, term: str) -> int:
        """How many documents hold indexed `term`."""
        entry = self._postings[term]
        if isinstance(entry, int):
            assert self._packed is not None
            return self._packed.size(entry)
        return len(entry.ids)

    def _admit(self, doc_id: int, counts: Mapping[str, int]) -> int:
        """Count a new document in: its length (returned) and the running statistics;
        ValueError, before any change, if it is indexed already or out of range."""
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
        return length

    def add_many(self, docs: Iterable[tuple[int, Mapping[str, int]]]) -> None:
        """Index documents, each (id, term counts), as `add` would one after the other.

        Into an empty index, ids ascending, their postings are grouped by term in one pass and
        kept packed, as a loaded index keeps them (`Packed`): a term's `Postings` is made when
        it is first used. Made for each term at once, they were half of indexing a 500-turn
        conversation on its first compose (docs/benchmarks.md, "Speed"), and most are never
        used. The caller bounds a batch: its lists take 16 bytes a posting until packed.
        """
        docs = list(docs)
        ids = [doc_id for doc_id, _ in docs]
        lengths = [sum(counts.values()) for _, counts in docs]
        if (
            self._count or self._postings or not docs or any(a >= b for a, b in pairwise(ids))
            or ids[0] < 0 or ids[-1] >= _ABSENT or min(lengths) < 0 or max(lengths) >= _ABSENT
        ):  # fmt: skip
            for doc_id, counts in docs:  # and any error raised where `add` raises it
                self.add(doc_id, counts)
            return
        self._admit_all(ids, lengths)
        with _collector_paused():  # the lists are dropped here, before it may run again
            self._pack(_grouped(docs))

    def _admit_all(self, ids: list[int], lengths: list[int]) -> None:
        """`_admit` for new documents `ids` (ascending, in range, none indexed) at once."""
        by_id = self._lengths
        if ids[-1] >= len(by_id):
            by_id.extend(repeat(_ABSENT, ids[-1] + 1 - len(by_id)))
        deque(map(by_id.__setitem__, ids, lengths), maxlen=0)  # a C-level scatter
        self._count += len(ids)
        self._total_len += sum(lengths)
        if self._min_len is not None:
            self._min_len = min(self._min_len, min(lengths))
        self._top = max(self._top, ids[-1])

    def _pack(self, lists: dict[str, list[int]]) -> None:
        """`lists` (each term's ids and counts, interleaved) as the packed postings of the
        index, in the arrays `load` would have made of them (none: the index stays as is)."""
        if not lists:
            return
        flat = array(U32, chain.from_iterable(lists.values()))
        docs, tfs = flat[0::2], flat[1::2]
        if self._top <= 0xFFFF:
            docs = _narrow(docs, "H")
        if _fits_a_byte(tfs):
            tfs = _narrow(tfs, "B")
        ends = list(map(rshift, accumulate(map(len, lists.values())), repeat(1)))
        self._postings = dict(zip(lists, range(len(ends)), strict=True))
        self._packed = Packed(docs, tfs, ends, len(ends))

    def add(self, doc_id: int, counts: Mapping[str, int]) -> None:
        """Index a document, given its term counts, under `doc_id` (not indexed already)."""
        length = self._admit(doc_id, counts)
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
            if isinstance(entry, int):  # packed: taken out here, where add meets it
                entry = self._unpack(term, entry)
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
            if isinstance(entry, int):
                entry = self._unpack(term, entry)
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
            >>> index = Inverted(); index.add(3, {"oven": 2, "deck": 1})
            >>> dict(Inverted.load(index.dump()).holding("oven"))
            {3: 2}
        """
        every = self._unpacked()
        terms = list(every)
        if any("\n" in t for t in terms):
            raise ValueError("Index.dump: a term contains a newline; terms are single words")
        postings = every.values()
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
    def load(cls: type[_I], data: bytes | memoryview, *, intact: bool = False) -> _I:
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
        # Every term, in order; its postings cut from the arrays when first used (`Packed`).
        index._postings = dict(zip(terms, range(n_terms), strict=True))
        # (damaged bytes may name a term twice: the dict then holds fewer)
        index._packed = Packed(docs, tfs, list(accumulate(sizes)), len(index._postings))
        if magic == _DUMP_UNSORTED:  # kept in the order it was built: sorted now, and checked
            every = index._unpacked()
            for term, entry in every.items():
                every[term] = _sorted(entry)
        return index

    def _shortest(self) -> int:
        """The shortest document's length, cached until a removal may have taken it away."""
        if self._min_len is None:
            # An absent id's slot holds the largest value, so it is never the minimum.
            self._min_len = min(self._lengths) if self._count else 0
        return self._min_len

    def document_frequency(self, term: str) -> int:
        """How many documents hold `term`."""
        return self._df(term) if term in self._postings else 0


def banded(entry: Postings, lengths: array[int]) -> Bands:
    """A term's postings by tf, each tf's grouped by document length (`lengths`: each
    document's, by id): built on first use."""
    by_tf = entry.bands
    if by_tf is None:
        # Grouped in dicts first (a look-up a posting), then each tf's lengths sorted once.
        grouped: dict[int, dict[int, array[int]]] = {}
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


def column(entry: Postings, upto: int, lengths: array[int]) -> bytearray | None:
    """A term's count in each document (0: not held), indexed by id and reaching at least
    `upto`, if its list is dense enough to be worth a byte per document (built on first
    use, with the bands, which add/remove keep it up to date along with); else None."""
    col = entry.col
    if col is None:
        ids = entry.ids
        if len(ids) * _DENSE <= ids[-1] or entry.top_tf() > 255:
            return None
        banded(entry, lengths)
        col = bytearray(ids[-1] + 1)
        deque(map(col.__setitem__, ids, entry.tfs), maxlen=0)  # a C-level scatter
        entry.col = col
    if len(col) <= upto:  # ids past its last document: so every look-up is in range
        col.extend(bytes(upto + 1 - len(col)))
    return col


def _grouped(docs: list[tuple[int, Mapping[str, int]]]) -> dict[str, list[int]]:
    """Each term's ids and counts in `docs`, interleaved: one list a term, two appends a
    posting."""
    lists: dict[str, list[int]] = {}
    get = lists.get
    for doc_id, counts in docs:
        for term, tf in counts.items():
            held = get(term)
            if held is None:
                lists[term] = [doc_id, tf]
            else:
                held.append(doc_id)
                held.append(tf)
    return lists


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector paused while a batch is grouped: its thousands of lists hold no
    cycle and are dropped once packed, and collections walking them (and promoting them on
    the way) cost a first compose a few percent for nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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


def found(entry: Postings, docs: Mapping[int, object]) -> list[tuple[int, int]]:
    """The (id, tf) of each of `docs` that `entry` holds: a walk of a short list, a C-level
    pass over a list not much longer than `docs`, else a binary search per document."""
    ids, tfs = entry.ids, entry.tfs
    if len(ids) <= 64:
        return [(d, tf) for d, tf in zip(ids, tfs, strict=True) if d in docs]
    held = docs.keys() & ids if len(ids) <= 8 * len(docs) else [d for d in docs if d in entry]
    return [(d, tfs[bisect_left(ids, d)]) for d in held]


def picker(docs: Collection[int]) -> Callable[[bytearray], Sequence[int]]:
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
