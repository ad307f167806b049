"""An index as the arrays it is kept in, for a load that copies bytes and builds one dict.

`Inverted.dump` writes ids, lengths and postings as 4-byte ints and `Inverted.load` narrows and
scatters them back: about 45 ms for a user's 10,000 LongMemEval turns, a cost every stateless
request would pay. Here the arrays are written as the index holds them (lengths by id, ids in
2 or 4 bytes, counts in 1 or 4), in the machine's byte order, so loading is a copy of each
array and the term dict; postings stay packed until a query first uses a term (`Packed`),
and each list is checked then against the ids the index holds (`_Bounded`), so damaged bytes
raise `ValueError` where they are used, never an `IndexError` deep in a ranking.
"""

from __future__ import annotations

import struct
import sys
from array import array
from itertools import accumulate
from typing import Any

from .bm25 import Index
from .codec import U32
from .postings import Packed, Postings

# byte order, id and count typecodes; ids held, their length sum, the shortest, the largest
# id, the lengths' size, terms, postings, term table bytes
_HEADER = struct.Struct("<BccIQIqIIII")
_ORDER = 0 if sys.byteorder == "little" else 1


class Damaged(ValueError):
    """A kept index's bytes name what it does not hold (found when a list is first used)."""


class _Bounded(Packed):
    """`Packed` postings checked, one list at a time as it is taken, against the ids held."""

    __slots__ = ("ids_held",)

    def __init__(
        self, docs: array[int], tfs: array[int], ends: list[int], left: int, ids_held: int
    ) -> None:
        super().__init__(docs, tfs, ends, left)
        self.ids_held = ids_held

    def take(self, k: int) -> Postings:
        entry = super().take(k)
        if entry.ids and entry.ids[-1] >= self.ids_held:  # ascending: the last is the largest
            raise Damaged("a kept index's postings name documents it does not hold")
        return entry


def dump(index: Index) -> list[bytes]:
    """`index` as parts to join (see `load`)."""
    every = index._unpacked()
    top = index._top
    id_code = "H" if top <= 0xFFFF else U32
    lists = list(every.values())
    tf_code = "B" if all(e.top_tf() < 256 for e in lists) else U32
    ids = array(id_code)
    tfs = array(tf_code)
    for entry in lists:
        ids.extend(entry.ids)
        tfs.extend(entry.tfs)
    table = "\n".join(every).encode("utf-8", "surrogatepass")
    lengths = index._lengths
    header = _HEADER.pack(
        _ORDER, id_code.encode(), tf_code.encode(), len(index), index._total_len,
        index._shortest(), top, len(lengths), len(lists), len(ids), len(table),
    )  # fmt: skip
    sizes = array(U32, map(len, lists))
    return [header, lengths.tobytes(), sizes.tobytes(), ids.tobytes(), tfs.tobytes(), table]


def load(data: memoryview) -> Index:
    """An index from `dump`'s joined parts; ValueError if they are not such bytes."""
    try:
        head = _HEADER.unpack_from(data)
    except struct.error:
        raise ValueError("truncated") from None
    order, id_code, tf_code, count, total, shortest, top, n_ids, n_terms, n_post, n_table = head
    codes = (id_code.decode(), tf_code.decode())
    if order != _ORDER or codes[0] not in ("H", U32) or codes[1] not in ("B", U32):
        raise ValueError("another machine's byte order, or not a kept index")
    at = _HEADER.size
    lengths, at = read_array(U32, data, at, n_ids)
    sizes, at = read_array(U32, data, at, n_terms)
    ids, at = read_array(codes[0], data, at, n_post)
    tfs, at = read_array(codes[1], data, at, n_post)
    if at + n_table != len(data) or top >= n_ids or sum(sizes) != n_post:
        raise ValueError("the parts do not match")
    terms = bytes(data[at:]).decode("utf-8", "surrogatepass").split("\n") if n_terms else []
    if len(terms) != n_terms:
        raise ValueError("the term table does not match the postings")
    index = Index()
    index._lengths, index._count, index._total_len = lengths, count, total
    index._min_len, index._top = shortest, top
    index._postings = dict(zip(terms, range(n_terms), strict=True))
    index._packed = _Bounded(ids, tfs, list(accumulate(sizes)), len(index._postings), n_ids)
    return index


def read_array(code: str, data: memoryview, at: int, count: int) -> tuple[array[int], int]:
    """`count` items of type `code` from `data` at `at`, and the offset after them."""
    out = array(code)
    end = _end(data, at, count * out.itemsize)
    out.frombytes(data[at:end])
    return out, end


def read_view(code: str, data: memoryview, at: int, count: int) -> tuple[memoryview, int]:
    """`read_array`'s items as a view of `data`, not a copy."""
    part: Any = data[at : _end(data, at, count * array(code).itemsize)]  # `cast` is typed
    return part.cast(code), at + len(part)  # for format literals; `code` is a typecode


def _end(data: memoryview, at: int, size: int) -> int:
    if at + size > len(data):
        raise ValueError("truncated")
    return at + size
