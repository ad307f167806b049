"""A column of ints by stretch id, kept in pages that are copied only when written.

The columns of a user's recall index (`Docs`: where each stretch starts and ends, its size,
days, conversation) are most of what a request borrows from the process's assembled parts
(`_user_saved.Parts`). As whole arrays, a request that followed one new row copied every
column of every stretch first (116 MB for a user of 500,000 turns), and assembling a new list
of segments copied the dense segment's bytes into them again. In pages, borrowing copies a
list of pages, a write copies the page it lands in, and the dense segment's pages are views
of its bytes (docs/benchmarks.md, "Columns in pages").
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

SHIFT = 12  # 4,096 ids a page: a page copied on a write costs microseconds
PAGE = 1 << SHIFT
_MASK = PAGE - 1


class Column:
    """Ints of one type (`typecode`) by id, from 0 to `len` - 1, zero where never set.

    >>> a = Column("i")
    >>> a.grow(5)
    >>> a[3] = 7
    >>> b = a.copy()
    >>> b[3] = 8
    >>> (a[3], b[3], len(b), list(b)[:4])
    (7, 8, 5, [0, 0, 0, 8])
    """

    __slots__ = ("_n", "_owned", "pages", "typecode")

    def __init__(self, typecode: str, pages: list[Any] | None = None, n: int = 0) -> None:
        self.typecode = typecode
        # Full pages but the last; an array this column may write, or a page it shares (an
        # array another column holds, or a read-only view of a kept segment's bytes).
        self.pages: list[Any] = pages if pages is not None else []
        self._owned = bytearray(len(self.pages))
        self._n = n

    @classmethod
    def of(cls, typecode: str, values: Any) -> Column:
        """A column sharing `values` (an array or a typed memoryview, never written)."""
        n = len(values)
        return cls(typecode, [values[at : at + PAGE] for at in range(0, n, PAGE)], n)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, doc: int) -> int:
        if not 0 <= doc < self._n:
            raise IndexError(doc)
        return int(self.pages[doc >> SHIFT][doc & _MASK])

    def __setitem__(self, doc: int, value: int) -> None:
        if not 0 <= doc < self._n:
            raise IndexError(doc)
        k = doc >> SHIFT
        page = self.pages[k]
        if not self._owned[k]:
            page = self.pages[k] = self._copied(page)
            self._owned[k] = 1
        page[doc & _MASK] = value

    def __iter__(self) -> Iterator[int]:
        for page in self.pages:
            yield from page

    def _copied(self, page: Any) -> array[int]:
        out = array(self.typecode)
        out.frombytes(memoryview(page).cast("B"))
        return out

    def grow(self, n: int) -> None:
        """Ids up to `n` - 1, the new ones zero."""
        while self._n < n:
            k = self._n >> SHIFT
            if k == len(self.pages):
                self.pages.append(array(self.typecode))
                self._owned.append(1)
            elif not self._owned[k]:
                self.pages[k] = self._copied(self.pages[k])
                self._owned[k] = 1
            page = self.pages[k]
            more = min(PAGE - len(page), n - self._n)
            page.frombytes(bytes(more * page.itemsize))
            self._n += more

    def copy(self) -> Column:
        """A column of the same values sharing these pages: each copies a page before
        writing it, so neither sees the other's writes."""
        self._owned = bytearray(len(self.pages))
        return Column(self.typecode, list(self.pages), self._n)

    def values(self) -> array[int]:
        """Every value as one array (a new one)."""
        out = array(self.typecode)
        for page in self.pages:
            out.frombytes(memoryview(page).cast("B"))
        return out

    def tobytes(self) -> bytes:
        return b"".join(memoryview(page).cast("B") for page in self.pages)

    @property
    def nbytes(self) -> int:
        return self._n * array(self.typecode).itemsize
