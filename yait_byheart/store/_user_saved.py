"""A user's recall index as the pieces the store keeps, so a new store object loads what a
query needs instead of reading and tokenizing every row of the user.

Without it every new store object (a web handler's request, a fresh process, another
machine) read and tokenized every row of the user on its first recall: seconds at 10,000
turns; kept as one blob per user, a request still read all of it (68.6 MB at 100,000 turns).
The store keeps instead, per user, **segments** (`recall_segments`), each holding the
stretches indexed since the one before: their columns (`Docs`), their BM25 lengths, and the
metadata of the conversations they touched; and per (segment, term) a row of that segment's
postings of the term (`recall_terms`). A request reads every segment's columns (the dense
segment's that are not read for every stretch only by page, as it needs them: `page_rows`)
and only its query's terms' rows. A stretch a later segment holds again (a conversation's open
last stretch, extended since) is that segment's: the older postings of it are dropped when
read (`Parts.owner`).

Nothing loaded is trusted past what the rows say: a loaded index knows, per conversation, the
sequence number and the rows it was built from, so the recall that loads it follows the rows
as a kept index does (`UserIndex.changed` and `follow`). Each redaction, repair or deletion
drops the user's pieces (they hold stems of the words taken away) and bumps a generation a
write must still find (`_user_kept`).
"""

from __future__ import annotations

import json
import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import not_
from typing import Any

from .._retrieval.bm25 import Index
from .._retrieval.codec import U32
from .._retrieval.flat import Damaged, read_array, read_view
from .._retrieval.postings import Band, Bands, Postings, banded
from ._columns import PAGE, SHIFT, Column
from ._user_index import INDEXES, WARM_FROM, Conv, Docs, Open, UserIndex

_MAGIC = b"BHUS"
# Bump when what `Segment.dump` writes, or how a `UserIndex` indexes a stretch, changes: older
# pieces are then ignored (and the next recall rebuilds from the rows and writes them again).
VERSION = 7
# magic, VERSION, byte order, tokenizer id, gap, next_block, stretches (all ids when dense),
# dense, conversations' JSON bytes, their id arrays' bytes, CRC-32 of what follows; then,
# for a dense segment, each index's stretches, their lengths' sum and the shortest (`Stats`)
_HEADER = struct.Struct("<4sIBIIIIBIIIIQIIQI")
# postings in both indexes, their grouped lists' bytes (0: none kept); the CRC-32 of the rest
_TERM = struct.Struct("<IIIII")
_ORDER = 0 if sys.byteorder == "little" else 1  # arrays are kept in the machine's order
# A list this many times longer than the stretches to drop from it is searched for each of
# them (a binary search each), not passed over whole.
_BISECT_SHARE = 16
_ABSENT = 0xFFFFFFFF  # the length of a stretch an index does not hold (see `Inverted`)
_INT_COLUMNS = ("first_turn", "first_piece", "last_turn", "last_piece", "size", "day_lo",
                "day_hi", "stretch")  # fmt: skip
_COLUMNS = ("conv", *_INT_COLUMNS, "dated", "alive", "every", "mine")
# A dense segment keeps these apart, a row per page of `PAGE` ids (`page_rows`), read when a
# request first needs one: what a ranking returns and a followed conversation's stretches.
# The others, which scoring reads for every stretch, come with the segment.
# (docs/benchmarks.md, "Columns in pages")
_COLD = ("conv", "first_turn", "first_piece", "last_turn", "last_piece", "size", "stretch",
         "dated", "day_lo", "day_hi")  # fmt: skip
_HOT = tuple(c for c in _COLUMNS if c not in _COLD)
# A question naming days tests every stretch's days: a dense segment also keeps them whole
# in one row (`days_row`), read by the first such question instead of every page, and not
# by the others (docs/benchmarks.md, "Days apart from the dense segment").
_DAYS = ("day_lo", "day_hi")
DAYS = -1  # the days row's number among the pages (`page_key`)
# A page's magic, the dense segment's stamp (the CRC-32 of its body), its ids, CRC-32 of
# the rest; then each of `_COLD`'s values for those ids.
_PAGE_HEAD = struct.Struct("<4sIII")
_PAGE_MAGIC = b"BHUP"
_CODES = {"conv": "q", **dict.fromkeys(_INT_COLUMNS, "i"), "dated": "B", "alive": "B",
          "every": U32, "mine": U32}  # fmt: skip
Four = tuple["array[int]", "array[int]", "array[int]", "array[int]"]  # ids, tfs; the user's
Lists = dict[str, Four]
Counts = tuple[Mapping[str, int], Mapping[str, int]]
Stats = tuple[int, int, int]  # an index's stretches, their lengths' sum, the shortest (0: none)


@dataclass
class Segment:
    """Stretches with their columns, lengths and postings, and the conversations they belong
    to (their metadata when the segment was made). Sparse: `ids` (ascending) and a column
    value per id; dense (`ids` None: the oldest segment, most of the index): a value per id
    from 0 to `next_block`, so loading it copies arrays instead of scattering values."""

    next_block: int
    ids: array[int] | None
    # conv, the int columns, dated, alive, every, mine: arrays, or a loaded dense segment's
    # views of its bytes (`load_segment`), never changed in place
    columns: dict[str, Any]
    convs: list[Conv]
    terms: Lists = field(default_factory=dict)
    stats: tuple[Stats, Stats] = ((0, 0, 0), (0, 0, 0))  # a dense segment's, both indexes
    stamp: int = 0  # a loaded dense segment's: its pages carry it (`page_rows`)
    # A loaded dense segment's pages read so far, decoded (`read_page`), and its days row
    # (`DAYS`, `read_days`): never changed.
    read_pages: dict[int, dict[str, Any]] = field(default_factory=dict)

    def held(self) -> array[int]:
        """The ids of the stretches the segment holds, ascending."""
        if self.ids is not None:
            return self.ids
        every = self.columns["every"]
        return array("i", compress(range(len(every)), map(_ABSENT.__ne__, every)))

    def __len__(self) -> int:
        return len(self.held())

    def sparse(self) -> Segment:
        if self.ids is None:
            ids = self.held()
            self.columns = {n: array(_CODES[n], map(c.__getitem__, ids))
                            for n, c in self.columns.items()}  # fmt: skip
            self.ids = ids
        return self

    def dump(self, ui: UserIndex, dense: bool) -> bytes:
        """The segment's columns and conversations as one row's bytes (`load_segment`)."""
        columns = _dense(self) if dense else self.columns
        inline = _HOT if dense else _COLUMNS  # a dense segment's others: `page_rows`
        meta = json.dumps([ui.user, [conv_meta(c) for c in self.convs]], ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8", "surrogatepass")  # fmt: skip
        arrays = b"".join(c.docs.tobytes() + c.firsts.tobytes() for c in self.convs)
        ids = b"" if dense or self.ids is None else self.ids.tobytes()
        body = b"".join((ids, *(columns[c].tobytes() for c in inline), meta, arrays))
        n = self.next_block if dense else len(self.held())
        stats = (_stats(columns["every"]), _stats(columns["mine"])) if dense else self.stats
        head = _HEADER.pack(_MAGIC, VERSION, _ORDER, ui.tokenizer.snapshot_id, ui.gap,
                            self.next_block, n, dense, len(meta), len(arrays),
                            zlib.crc32(body), *stats[0], *stats[1])  # fmt: skip
        return head + body

    def page_rows(self, stamp: int) -> list[bytes]:
        """A dense segment's `_COLD` columns as a row's bytes per page of `PAGE` ids, each
        carrying `stamp` (`stamp_of` its `dump`), so that no other segment's answers for it."""
        columns = _dense(self)
        return [_block(columns, _COLD, at, min(at + PAGE, self.next_block), stamp)
                for at in range(0, self.next_block, PAGE)]  # fmt: skip

    def days_row(self, stamp: int) -> bytes:
        """A dense segment's `_DAYS` columns whole, as a row's bytes carrying `stamp`."""
        return _block(_dense(self), _DAYS, 0, self.next_block, stamp)

    def lengths(self) -> tuple[array[int], array[int]]:
        """Each index's length of every stretch id up to `next_block` (dense)."""
        columns = _dense(self)
        return columns["every"], columns["mine"]

    def merged_into(self, newer: Segment) -> Segment:
        """One segment holding this one's stretches and `newer`'s, `newer`'s where both do."""
        old, new = self.sparse(), newer.sparse()
        assert old.ids is not None and new.ids is not None
        redefined = set(new.ids)
        keep = [i for i, d in enumerate(old.ids) if d not in redefined]
        both_ids = [*(old.ids[i] for i in keep), *new.ids]
        order = sorted(range(len(both_ids)), key=both_ids.__getitem__)
        columns = {}
        for name in _COLUMNS:
            both = array(_CODES[name], map(old.columns[name].__getitem__, keep))
            both.extend(new.columns[name])
            columns[name] = array(_CODES[name], map(both.__getitem__, order))
        ids = array("i", map(both_ids.__getitem__, order))
        convs = {c.id: c for c in old.convs} | {c.id: c for c in new.convs}
        terms = _merged_terms(old.terms, new.terms, redefined)
        top = max(old.next_block, new.next_block)
        return Segment(top, ids, columns, list(convs.values()), terms)


def _dense(segment: Segment) -> dict[str, array[int]]:
    """A sparse segment's columns as a value per id up to its `next_block`."""
    if segment.ids is None:
        return segment.columns
    top, ids = segment.next_block, segment.ids
    out = {}
    for name in _COLUMNS:
        column = _blank(name, top)
        _scatter(column, ids, segment.columns[name])
        out[name] = column
    return out


def _block(columns: dict[str, array[int]], names: tuple[str, ...], at: int, end: int,
           stamp: int) -> bytes:  # fmt: skip
    """Columns `names`' values for ids `at` to `end` - 1 as a row's bytes carrying `stamp`."""
    body = b"".join(columns[c][at:end].tobytes() for c in names)
    return _PAGE_HEAD.pack(_PAGE_MAGIC, stamp, end - at, zlib.crc32(body)) + body


def _blank(name: str, size: int) -> array[int]:
    """A column of `size` stretches no segment holds."""
    if name in ("every", "mine"):
        return array(U32, [_ABSENT]) * size
    column = array(_CODES[name])
    column.frombytes(bytes(column.itemsize * size))
    return column


def term_bytes(lists: Four, lengths: tuple[array[int], array[int]] | None = None) -> bytes:
    """A term's postings in a segment (both indexes) as one row's bytes; with the dense
    segment's `lengths` (both indexes), each list long enough to be walked in groups
    (`_user_index.WARM_FROM`) also grouped as `Index.head` walks it (`postings.banded`), so a
    request loading it does not group it again."""
    ids, tfs, mine_ids, mine_tfs = lists
    bands = [b"", b""]
    if lengths is not None:
        for k, (held, counts) in enumerate(((ids, tfs), (mine_ids, mine_tfs))):
            if len(held) >= WARM_FROM:
                bands[k] = _bands_bytes(held, counts, lengths[k])
    body = b"".join((ids.tobytes(), tfs.tobytes(), mine_ids.tobytes(), mine_tfs.tobytes(),
                     *bands))  # fmt: skip
    head = _TERM.pack(len(ids), len(mine_ids), len(bands[0]), len(bands[1]), zlib.crc32(body))
    return head + body


def read_term(data: bytes | memoryview) -> Four:
    """`term_bytes` back (without the groups); ValueError if they are not such bytes."""
    return read_term_grouped(data)[0]


def read_term_grouped(data: bytes | memoryview) -> tuple[Four, list[memoryview]]:
    """`term_bytes` back, with each index's grouped list as bytes (empty: none kept)."""
    view = memoryview(data)
    try:
        n, m, every_size, mine_size, crc = _TERM.unpack_from(view)
    except struct.error:
        raise ValueError("truncated") from None
    if zlib.crc32(view[_TERM.size :]) != crc:
        raise ValueError("damaged")
    ids, at = read_array(U32, view, _TERM.size, n)
    tfs, at = read_array(U32, view, at, n)
    mine_ids, at = read_array(U32, view, at, m)
    mine_tfs, at = read_array(U32, view, at, m)
    if at + every_size + mine_size != len(view):
        raise ValueError("the parts do not match")
    grouped = [view[at : at + every_size], view[at + every_size :]]
    return (ids, tfs, mine_ids, mine_tfs), grouped


def _bands_bytes(ids: array[int], tfs: array[int], lengths: array[int]) -> bytes:
    """A list grouped by tf, then document length (`postings.banded`): per tf its count of
    groups, the groups' lengths and sizes; then every group's ids, in that order."""
    entry = Postings(ids, tfs, -1)
    head, sizes, order = array(U32), array(U32), array(U32)
    for tf, band in banded(entry, lengths).items():
        head.extend((tf, len(band.lengths)))
        head.extend(band.lengths)
        sizes.extend(map(len, band.groups))
        for group in band.groups:
            order.extend(group)
    return b"".join((struct.pack("<II", len(head), len(sizes)), head.tobytes(), sizes.tobytes(),
                     order.tobytes()))  # fmt: skip


def _bands(data: memoryview) -> Bands:
    """`_bands_bytes` back: each tf's `Band`, its groups slices of one array."""
    n_head, n_groups = struct.unpack_from("<II", data)
    head, at = read_array(U32, data, 8, n_head)
    sizes, at = read_array(U32, data, at, n_groups)
    ids, at = read_array(U32, data, at, sum(sizes))
    if at != len(data):
        raise ValueError("the groups do not match")
    out: Bands = {}
    k = g = start = 0
    while k < len(head):
        tf, count = head[k], head[k + 1]
        band = out[tf] = Band()
        band.lengths = head[k + 2 : k + 2 + count]
        for size in sizes[g : g + count]:
            band.groups.append(ids[start : start + size])
            start += size
        k, g = k + 2 + count, g + count
    return out


def load_segment(ui: UserIndex, data: bytes | memoryview) -> Segment:
    """A segment's columns and conversations from `Segment.dump` bytes (its `terms` empty);
    ValueError if they are not such bytes of this version for this user and tokenizer."""
    view = memoryview(data)
    try:
        head = _HEADER.unpack_from(view)
    except struct.error:
        raise ValueError("truncated") from None
    magic, version, order, tokenizer, gap, top, n, dense, meta_size, arrays_size, crc = head[:11]
    if (magic, version, order, tokenizer, gap) != (
        _MAGIC, VERSION, _ORDER, ui.tokenizer.snapshot_id, ui.gap,
    ):  # fmt: skip
        raise ValueError("another version's, tokenizer's or machine's pieces")
    body = view[_HEADER.size :]
    if zlib.crc32(body) != crc or (dense and n != top):
        raise ValueError("damaged")
    ids, at = (None, 0) if dense else read_array("i", body, 0, n)
    columns: dict[str, Any] = {}
    for name in _HOT if dense else _COLUMNS:
        # A dense segment's columns stay views of `data` (a process keeps the segment).
        columns[name], at = (read_view if dense else read_array)(_CODES[name], body, at, n)
    if at + meta_size + arrays_size != len(body) or (ids and not 0 <= ids[0] <= ids[-1] < top):
        raise ValueError("the parts do not match")
    user, metas = json.loads(bytes(body[at : at + meta_size]).decode("utf-8", "surrogatepass"))
    if user != ui.user:
        raise ValueError("another user's pieces")
    at += meta_size
    convs = []
    for meta in metas:
        k = int(meta[4])
        docs, at = read_array("i", body, at, k)
        firsts, at = read_array("i", body, at, k)
        convs.append(_conv(meta, docs, firsts))
    stats = (tuple(head[11:14]), tuple(head[14:17]))
    return Segment(top, ids, columns, convs, stats=stats, stamp=crc if dense else 0)


def stamp_of(data: bytes) -> int:
    """The stamp of a dense segment's `dump` (`page_rows`)."""
    return int(_HEADER.unpack_from(data)[10])


def page_key(k: int) -> bytes:
    """The `recall_terms` key of a dense segment's page `k` (`DAYS`: its days row): no
    term's (a term has no NUL), so the pages go wherever the segment's postings go (a
    merge's, a deletion's drop)."""
    return _DAYS_KEY if k == DAYS else b"\x00page %d" % k


_DAYS_KEY = b"\x00days"


def is_page_key(term: bytes) -> bool:
    return term[:1] == b"\x00"


def page_number(key: bytes) -> int:
    """`page_key` back: the page's number."""
    return DAYS if key == _DAYS_KEY else int(key.split()[-1])


def read_page(data: bytes | memoryview, stamp: int, k: int, top: int) -> dict[str, Any]:
    """Page `k` of the dense segment of `stamp` holding ids up to `top` - 1: each `_COLD`
    column's values as a view; StalePieces if the page is another segment's, ValueError if
    it is damaged."""
    return _read_block(data, stamp, _COLD, min(PAGE, top - k * PAGE))


def read_days(data: bytes | memoryview, stamp: int, top: int) -> dict[str, Any]:
    """The days row (`Segment.days_row`) of the dense segment of `stamp` holding ids up to
    `top` - 1, as `read_page` reads a page."""
    return _read_block(data, stamp, _DAYS, top)


def _read_block(data: bytes | memoryview, stamp: int, names: tuple[str, ...],
                expected: int) -> dict[str, Any]:  # fmt: skip
    view = memoryview(data)
    try:
        magic, found, count, crc = _PAGE_HEAD.unpack_from(view)
    except struct.error:
        raise ValueError("truncated") from None
    if magic != _PAGE_MAGIC or found != stamp:
        raise StalePieces("a page of another segment")
    body = view[_PAGE_HEAD.size :]
    if zlib.crc32(body) != crc or count != expected:
        raise ValueError("damaged")
    out, at = {}, 0
    for name in names:
        out[name], at = read_view(_CODES[name], body, at, count)
    if at != len(body):
        raise ValueError("the parts do not match")
    return out


def with_pages(segment: Segment, pages: Mapping[int, bytes]) -> Segment:
    """A loaded dense `segment` with its `_COLD` columns read from all its `pages` (by
    number: a merge rewrites it); ValueError if one is missing or damaged."""
    if segment.ids is not None:
        return segment
    top = segment.next_block
    for name in _COLD:
        segment.columns[name] = array(_CODES[name])
    for k in range(-(-top // PAGE)):
        if k not in pages:
            raise ValueError("a page is missing")
        for name, view in read_page(pages[k], segment.stamp, k, top).items():
            segment.columns[name].frombytes(view.cast("B"))
    return segment


class StalePieces(Exception):
    """A page of the dense segment a load read is gone: the pieces were rewritten since (a
    merge, or dropped by a redaction). The recall loads them again."""


def _stats(lengths: array[int]) -> Stats:
    """How many stretches `lengths` holds, their lengths' sum, the shortest (a write's cost)."""
    absent = lengths.count(_ABSENT)
    count = len(lengths) - absent
    return count, sum(lengths) - absent * _ABSENT, min(lengths) if count else 0


def new_segment(ui: UserIndex, fresh: Mapping[int, Counts], convs: Iterable[Conv]) -> Segment:
    """The stretches `fresh` (each with its term counts in both indexes) as a segment."""
    ids = array("i", sorted(fresh))
    docs = ui.docs
    columns: dict[str, array[int]] = {}
    for name in _COLUMNS[:-2]:
        columns[name] = array(_CODES[name], map(getattr(docs, name).__getitem__, ids))
    columns["every"] = array(U32, (sum(fresh[d][0].values()) for d in ids))
    columns["mine"] = array(U32, (sum(fresh[d][1].values()) if fresh[d][1] else _ABSENT
                                  for d in ids))  # fmt: skip
    lists: dict[str, tuple[list[int], list[int], list[int], list[int]]] = {}
    for doc in ids:
        every, mine = fresh[doc]
        for term, tf in every.items():
            found = lists.setdefault(term, ([], [], [], []))
            found[0].append(doc)
            found[1].append(tf)
        for term, tf in mine.items():
            found = lists.setdefault(term, ([], [], [], []))
            found[2].append(doc)
            found[3].append(tf)
    terms: Lists = {}
    for term, (a, b, c, d) in lists.items():
        terms[term] = (array(U32, a), array(U32, b), array(U32, c), array(U32, d))
    return Segment(ui.next_block, ids, columns, list(convs), terms)


def whole_segment(ui: UserIndex) -> Segment:
    """Every stretch `ui` holds as one dense segment (an index built from the rows)."""
    top, docs = ui.next_block, ui.docs
    columns: dict[str, array[int]] = {}
    for name in _COLUMNS[:-2]:
        columns[name] = _values(docs, name)[:top]
    for name, index in (("every", ui.index), ("mine", ui.user_index)):
        column = _blank(name, top)
        held = index._lengths[:top]
        column[: len(held)] = held
        columns[name] = column
    terms: Lists = {}
    for term, entry in ui.index._unpacked().items():
        terms[term] = (array(U32, entry.ids), array(U32, entry.tfs), array(U32), array(U32))
    for term, entry in ui.user_index._unpacked().items():
        found = terms.setdefault(term, (array(U32), array(U32), array(U32), array(U32)))
        terms[term] = (found[0], found[1], array(U32, entry.ids), array(U32, entry.tfs))
    return Segment(top, None, columns, list(ui.convs.values()), terms)


def _merged_terms(old: Lists, new: Lists, redefined: set[int]) -> Lists:
    """Each term's postings of both segments, the older ones of a redefined stretch dropped."""
    out: Lists = dict(new)
    for term, four in old.items():
        kept = _without(four, redefined)
        if term not in out:
            out[term] = kept
            continue
        out[term] = _joined(kept, out[term])
    return {t: four for t, four in out.items() if four[0] or four[2]}


def _without(four: Any, redefined: set[int]) -> Any:
    """A term's postings in a segment (both indexes) without the stretches `redefined`."""
    out = []
    for ids, tfs in (four[:2], four[2:]):
        keep = list(map(redefined.__contains__, ids))  # C-level passes: lists are long
        out += [array(U32, compress(ids, map(not_, keep))),
                array(U32, compress(tfs, map(not_, keep)))]  # fmt: skip
    return tuple(out)


def _dropped(four: Four, stale: set[int]) -> Four:
    """A term's postings in a segment (both indexes, ids ascending) without the stretches
    `stale`: each looked up when few against a long list (a request loading the dense
    segment's lists, long for a large user: no pass over every posting in Python)."""
    if len(stale) * _BISECT_SHARE >= len(four[0]) + len(four[2]):
        if stale.isdisjoint(four[0]) and stale.isdisjoint(four[2]):
            return four
        return _without(four, stale)  # type: ignore[no-any-return]
    out: list[array[int]] = []
    for ids, tfs in (four[:2], four[2:]):
        at = sorted(i for i in map(_place(ids), stale) if i >= 0)
        if at:  # the slices between them, copied in C
            ids, tfs = _cut(ids, at), _cut(tfs, at)
        out += [ids, tfs]
    return out[0], out[1], out[2], out[3]


def _place(ids: array[int]) -> Callable[[int], int]:
    """A function giving where a stretch is in `ids` (ascending), -1 if not there."""

    def place(doc: int) -> int:
        i = bisect_left(ids, doc)
        return i if i < len(ids) and ids[i] == doc else -1

    return place


def _cut(values: array[int], at: list[int]) -> array[int]:
    """`values` without the items at the places `at` (ascending)."""
    out, start = array(values.typecode), 0
    for i in at:
        out += values[start:i]
        start = i + 1
    out += values[start:]
    return out


def _joined(a: Any, b: Any) -> Any:
    """Two segments' postings of a term (no stretch in both) as one, ids ascending."""
    out = []
    for ids_at, tfs_at in ((0, 1), (2, 3)):
        pairs = sorted(zip([*a[ids_at], *b[ids_at]], [*a[tfs_at], *b[tfs_at]], strict=True))
        out += [array(U32, (d for d, _ in pairs)), array(U32, (t for _, t in pairs))]
    return tuple(out)


def conv_meta(conv: Conv) -> list[Any]:
    """What a segment keeps of a conversation (its stretches' ids follow, as arrays)."""
    last = conv.last
    return [conv.id, conv.name, conv.seq, conv.turns, len(conv.docs), conv.next_id,
            conv.block_end, conv.block, sorted(conv.redacted),
            [last.user, last.other, last.said, last.every, last.mine]]  # fmt: skip


def _conv(meta: list[Any], docs: array[int], firsts: array[int]) -> Conv:
    """`conv_meta` back, with the conversation's arrays: every field given, none made by a
    default only to be replaced (a load makes one a conversation, a thousand for a large
    user); the JSON's lists and dicts are new ones, taken as they are."""
    cid, name, seq, turns, _k, next_id, block_end, block, redacted, last = meta
    user, other, said, every, mine = last
    return Conv(int(cid), str(name), int(seq), int(turns), docs, firsts, int(next_id),
                int(block_end), int(block), Open(user, other, said, every, mine),
                set(map(int, redacted)))  # fmt: skip


@dataclass
class Parts:
    """A user's segments assembled: each column over every id (the newest segment's value
    where several hold one), each index's `Stats`, the conversations, and which segment holds
    each stretch now. A process keeps it (`_user_cache`); the indexes it fills borrow it."""

    top: int  # the ids any segment may hold: 0 to top - 1
    stale: dict[int, set[int]]  # by segment: the stretches it holds that newer ones hold again
    dense: int  # the dense segment's number (-1: none)
    columns: dict[str, Any]  # `Docs`' columns as it holds them; the lengths as arrays
    stats: dict[str, Stats]
    convs: dict[int, Conv]
    # The dense segment's stamp (its pages carry it), and by page the newer segments' values
    # for its ids in each `_COLD` column, put in when the page is read (`_Pages`).
    stamp: int = 0
    dense_top: int = 0  # the ids the dense segment holds: 0 to dense_top - 1
    source: Segment | None = None  # the dense segment (its pages read so far)
    patches: dict[int, dict[str, dict[int, int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, segments: list[tuple[int, Segment]]) -> Parts:
        """`segments` (number, segment), oldest first, assembled."""
        top = max((s.next_block for _, s in segments), default=0)
        stale: dict[int, set[int]] = {}
        newer: set[int] = set()
        for number, segment in reversed(segments):
            # Only the stretches it holds can be in its postings (a request drops each stale
            # one from each of its query's lists), and most newer stretches are new ones
            # (docs/benchmarks.md, "Stale stretches only where a segment holds them").
            if segment.ids is not None:
                stale[number] = newer.intersection(segment.ids)
                newer.update(segment.ids)
            elif number == segments[0][0]:
                stale[number] = {d for d in newer if d < segment.next_block}
            else:
                raise ValueError("a dense segment after the oldest")
        dense = segments[0][0] if segments and segments[0][1].ids is None else -1
        patches: dict[int, dict[str, dict[int, int]]] = {}
        columns, stats = _columns(segments, top, patches)
        convs: dict[int, Conv] = {}
        for _number, segment in segments:  # oldest first: a newer one's conversation wins
            convs.update((c.id, c) for c in segment.convs)
        for conv in convs.values():
            conv.kept_seq = conv.seq  # the pieces hold it as its newest segment does
        first = segments[0][1] if dense >= 0 else None
        stamp, dense_top = (first.stamp, first.next_block) if first is not None else (0, 0)
        return cls(top, stale, dense, columns, stats, convs, stamp, dense_top, first, patches)

    @property
    def nbytes(self) -> int:
        """The bytes of its columns (of the pages read so far: it grows as pages are read)."""
        return sum(c.nbytes if isinstance(c, Column) else len(c) * getattr(c, "itemsize", 1)
                   for c in self.columns.values())  # fmt: skip

    def fill(
        self, ui: UserIndex, terms: Mapping[str, list[tuple[int, bytes]]], read: PageRead,
        kinds: frozenset[str] = INDEXES,
    ) -> None:  # fmt: skip
        """Fill `ui` (new, empty) with the parts, borrowed, and `terms`' postings (each term's
        rows as (segment, bytes)) in the indexes `kinds` ("every", "mine"; the other's lists
        stay empty: `ui.kinds` says which hold them), the dense segment's pages not read yet
        read by `read`; ValueError, `ui` left empty, if they do not fit together."""
        columns, stats = self.columns, self.stats
        if not stats["mine"][0]:
            kinds = INDEXES  # no word of the user's: a question about them ranks every word
        docs = Docs()
        pager = _Pages(self, read)
        for name in Docs.PAGED:  # each page copied by the first index to write it
            setattr(docs, name, columns[name].copy(pager))
        docs.alive = columns["alive"]
        lists = {term: self._postings(rows) for term, rows in terms.items()}
        for name, at in (("every", 0), ("mine", 2)):
            # Merged and grouped only for an index the request ranks with: most of a load's
            # work (docs/benchmarks.md, "Only the index a question is ranked with").
            held = lists if name in kinds else {}
            index = _index(columns[name], stats[name],
                           {t: _one(p.parts, at) for t, p in held.items()})  # fmt: skip
            for t, found in held.items():
                entry = index._postings.get(t)
                if found.kept is not None and found.groups[at // 2] and entry is not None:
                    assert isinstance(entry, Postings)
                    entry.bands = found.grouped(at, columns[name])
            if name == "every":
                ui.index = index
            else:
                ui.user_index = index
        ui.docs, ui.convs, ui.borrowed, ui.shared = docs, dict(self.convs), True, self.convs
        ui.kinds = kinds
        ui.next_block = self.top
        ui.warmed = len(ui.index)

    def _postings(self, rows: list[tuple[int, bytes]]) -> _Term:
        """A term's rows as each segment's postings of the stretches it still holds, and the
        dense segment's grouped lists if it kept them."""
        term = _Term([], None, [], set())
        dense = self.dense
        for number, data in sorted(rows, key=lambda r: r[0]):
            four, grouped = read_term_grouped(data)
            if any(a and a[-1] >= self.top for a in four[::2]):
                raise ValueError("postings name a stretch no segment holds")
            stale = self.stale.get(number)
            if stale is None:
                raise ValueError("postings of a segment not read")
            if number == dense and (grouped[0] or grouped[1]):
                term.kept, term.groups, term.stale = four, grouped, stale
            elif number != dense:
                term.newer.append(four)
            if stale:
                four = _dropped(four, stale)
            term.parts.append(four)
        return term


# Reads pages of the dense segment a load read (their `page_rows` rows, by number): those
# still kept (one gone: the pieces were rewritten since).
PageRead = Callable[[list[int]], dict[int, bytes]]


class _Pages:
    """The pages a load's columns did not read yet (`Column.pager`): read by `read` (each
    page of every `_COLD` column at once, a batch in one statement), checked, kept decoded
    with the dense segment (every assembly of it shares them), and in the assembly with the
    newer segments' values put in (`Parts.patches`), for the process's next store objects."""

    def __init__(self, parts: Parts, read: PageRead) -> None:
        self.parts = parts
        self.read = read

    def page(self, name: str, k: int) -> Any:
        held = self.parts.columns[name].pages[k]
        if held is None:
            self.prefetch([k])
            held = self.parts.columns[name].pages[k]
        return held

    def prefetch(self, pages: Iterable[int]) -> None:
        """Pages `pages` in the assembly, read in one statement where not read before."""
        parts = self.parts
        source = parts.source
        assert source is not None  # only a dense segment's columns have pages not read
        held = parts.columns["conv"].pages
        wanted = sorted({k for k in pages if held[k] is None})
        missing = [k for k in wanted if k not in source.read_pages]
        self._read(missing)
        for k in wanted:
            self._assemble(k, source.read_pages[k])

    def whole(self, name: str) -> None:
        """Every page of column `name` in the assembly: a day column's from the days row (one
        read, kept with the dense segment), another's as `prefetch` reads them."""
        parts = self.parts
        source = parts.source
        assert source is not None
        held = parts.columns[name].pages
        if name not in _DAYS:
            self.prefetch(k for k, page in enumerate(held) if page is None)
            return
        if DAYS not in source.read_pages:
            self._read([DAYS])
        days = source.read_pages[DAYS]
        for k in range(len(held)):
            if held[k] is None:
                self._assemble(k, {d: days[d][k * PAGE : (k + 1) * PAGE] for d in _DAYS})

    def _read(self, numbers: list[int]) -> None:
        """Pages `numbers` (`DAYS`: the days row) read and kept decoded with the dense
        segment; StalePieces if one is gone or another segment's, Damaged if damaged."""
        if not numbers:
            return
        parts = self.parts
        assert parts.source is not None
        found = self.read(numbers)
        for k in numbers:
            if k not in found:
                raise StalePieces("a page of the pieces loaded is gone")
            try:
                parts.source.read_pages[k] = (
                    read_days(found[k], parts.stamp, parts.dense_top) if k == DAYS
                    else read_page(found[k], parts.stamp, k, parts.dense_top)
                )  # fmt: skip
            except ValueError as exc:
                raise Damaged(str(exc)) from exc

    def _assemble(self, k: int, views: dict[str, Any]) -> None:
        """Page `k` of each `_COLD` column of the assembly: the dense segment's values, and
        the newer segments' where they hold the stretch."""
        parts = self.parts
        patches = parts.patches.get(k, {})
        for name, view in views.items():
            column = parts.columns[name]
            end = min(PAGE, len(column) - k * PAGE)
            page: Any = view
            found = patches.get(name)
            if found or len(view) != end:
                page = array(_CODES[name])
                page.frombytes(view.cast("B")[: end * page.itemsize])
                page.frombytes(bytes((end - len(page)) * page.itemsize))
                for doc, value in (found or {}).items():
                    page[doc - k * PAGE] = value
            column.pages[k] = page


@dataclass
class _Term:
    """A term's postings as a load reads them: each segment's (`parts`, stale ones dropped);
    the dense segment's as kept (`kept`, None if it kept no grouped list) with its grouped
    lists and the stretches newer segments hold; the newer segments' postings."""

    parts: list[Four]
    kept: Four | None
    newer: list[Four]
    stale: set[int]
    groups: list[memoryview] = field(default_factory=list)

    def grouped(self, at: int, lengths: array[int]) -> Bands:
        """The index's (`at`: 0 every word, 2 the user's) grouped list of the term: the dense
        segment's, less the stretches newer segments hold, plus theirs (a few each)."""
        assert self.kept is not None
        bands = _bands(self.groups[at // 2])
        ids, tfs = self.kept[at], self.kept[at + 1]
        for doc in self.stale:
            i = bisect_left(ids, doc)
            if i < len(ids) and ids[i] == doc:
                band = bands[tfs[i]]
                k = next(k for k, group in enumerate(band.groups) if doc in group)
                band.drop(band.lengths[k], doc)
        for four in self.newer:
            for doc, tf in zip(four[at], four[at + 1], strict=True):
                if tf not in bands:
                    bands[tf] = Band()
                bands[tf].put(lengths[doc], doc)
        return {tf: band for tf, band in bands.items() if band.lengths}


def _columns(
    segments: list[tuple[int, Segment]], top: int, patches: dict[int, dict[str, dict[int, int]]]
) -> tuple[dict[str, Any], dict[str, Stats]]:
    """Each column over ids 0 to `top` - 1, the newest segment's value where several hold
    one; each index's `Stats` (kept by the dense segment, followed through the others). The
    dense segment's values are shared, not copied: `Docs`' columns as pages of its views (a
    process keeps the segment, `_user_cache`), those it keeps apart (`_COLD`) as pages not
    read yet, the newer segments' values for them in `patches`; the indexes' lengths and
    `alive` copied into the arrays the indexes read."""
    first = segments[0][1] if segments else None
    dense = first is not None and first.ids is None
    out: dict[str, Any] = {}
    stats = {}
    newer = [(s.ids, s.columns) for _, s in segments if s.ids is not None]
    for name in _COLUMNS:
        column: Any
        cold = name in _COLD and dense  # the newer segments' values put in by `_cold`
        if cold and first is not None:
            kept = -(-first.next_block // PAGE)
            column = _cold(name, [(ids, c[name]) for ids, c in newer], top, kept, patches)
        elif name in Docs.PAGED:
            shared = first.columns[name] if first is not None and dense else []
            column = Column.of(_CODES[name], shared, name)
            column.grow(top)
        elif first is not None and dense:
            column = array(_CODES[name])
            column.frombytes(memoryview(first.columns[name]).cast("B"))
            column += _blank(name, top - len(column))
        else:
            column = _blank(name, top)
        held = first.stats[name == "mine"] if first is not None and dense else (0, 0, 0)
        for ids, by_name in newer:
            if name in ("every", "mine"):
                held = _restated(held, column, ids, by_name[name])
            if not cold:
                _scatter(column, ids, by_name[name])
        out[name], stats[name] = column, held
    out["alive"] = bytearray(out["alive"])
    return out, stats


def _cold(
    name: str, newer: list[tuple[array[int], array[int]]], top: int, kept: int,
    patches: dict[int, dict[str, dict[int, int]]],
) -> Column:  # fmt: skip
    """Column `name` of ids 0 to `top` - 1 over a dense segment of `kept` pages, with the
    newer segments' (ids, values), oldest first: the dense segment's pages not read yet, the
    newer values for ids in them kept in `patches`; the ids past them in pages of their own,
    the values scattered in C (a value at a time, a new list of segments took milliseconds
    for the stretches newer than the dense segment: docs/benchmarks.md, "Assembling the
    stretches newer than the dense segment")."""
    base = kept * PAGE
    past = _blank(name, max(0, top - base))
    for ids, values in newer:
        cut = bisect_left(ids, base)
        for doc, value in zip(ids[:cut], values[:cut], strict=True):
            patches.setdefault(doc >> SHIFT, {}).setdefault(name, {})[doc] = value
        _scatter(past, map(base.__rsub__, ids[cut:]), values[cut:])
    pages = [None] * kept + [past[at : at + PAGE] for at in range(0, len(past), PAGE)]
    return Column(_CODES[name], pages, top, name)


def _values(docs: Docs, name: str) -> array[int]:
    """A column of `docs` as one new array."""
    column = getattr(docs, name)
    return column.values() if isinstance(column, Column) else array(_CODES[name], column)


def _scatter(column: Any, ids: Iterable[int], values: Iterable[int]) -> None:
    """column[ids[k]] = values[k] for each k, in one C-level pass."""
    deque(map(column.__setitem__, ids, values), maxlen=0)


def _one(parts: list[Any], at: int) -> tuple[array[int], array[int]]:
    """One index's postings of a term over its segments' parts (each ascending, no id in two
    of them), ids ascending (new arrays: the parts may be a process's kept bytes)."""
    parts = sorted(parts, key=lambda four: -len(four[at]))
    if not parts:
        return array(U32), array(U32)
    ids, tfs = parts[0][at], parts[0][at + 1]
    rest = sorted(d_t for four in parts[1:] for d_t in zip(four[at], four[at + 1], strict=True))
    # The longest part copied in slices between the places of the others' postings: a step
    # per posting of theirs, not per posting of the longest (most of a common term's).
    out_ids, out_tfs, start = array(U32), array(U32), 0
    for doc, tf in rest:
        i = bisect_left(ids, doc, start)
        out_ids += ids[start:i]
        out_tfs += tfs[start:i]
        out_ids.append(doc)
        out_tfs.append(tf)
        start = i
    out_ids += ids[start:]
    out_tfs += tfs[start:]
    return out_ids, out_tfs


def _restated(held: Stats, column: array[int], ids: array[int], values: array[int]) -> Stats:
    """`held` once `ids` take `values` in `column` (before they do): a few stretches a save.
    A stretch replaced may have been the shortest: the shortest kept then stays a lower
    bound (what the pruning needs), as an index's own does until it is next asked for."""
    count, total, shortest = held
    for doc, new in zip(ids, values, strict=True):
        old = column[doc]
        if old != _ABSENT:
            count, total = count - 1, total - old
        if new != _ABSENT:
            count, total = count + 1, total + new
            shortest = new if count == 1 or new < shortest else shortest
    return count, total, shortest if count else 0


def _index(
    lengths: array[int], stats: Stats, lists: Mapping[str, tuple[array[int], array[int]]]
) -> Index:
    """An index of the stretches `lengths` holds (the others `_ABSENT`), holding the postings
    `lists` (the terms a query needs: its statistics, `stats`, are the whole index's)."""
    index = Index()
    index._lengths = lengths
    index._count, index._total_len, shortest = stats
    index._min_len = shortest if index._count else None
    top = len(lengths) - 1
    while top >= 0 and lengths[top] == _ABSENT:
        top -= 1
    index._top = top
    index._postings = {t: Postings(ids, tfs, -1) for t, (ids, tfs) in lists.items() if ids}
    return index
