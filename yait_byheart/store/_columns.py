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
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

SHIFT = 10  # 1,024 ids a page: a page copied on a write, or read, costs microseconds
PAGE = 1 << SHIFT
_MASK = PAGE - 1


class Pager(Protocol):
    """Where a column's pages not read yet come from (`Column.pager`)."""

    def page(self, name: str, k: int) -> Any:
        """Page `k` of column `name`, `PAGE` values (zeros past what is kept): an array or a
        typed view, never written."""
        ...

    def prefetch(self, pages: Iterable[int]) -> None:
        """Read `pages` (of every column it serves) at once, where not read yet."""
        ...

    def whole(self, name: str) -> None:
        """Read every page of column `name` not read yet, in as few reads as it can."""
        ...


class Column:
    """Ints of one type (`typecode`) by id, from 0 to `len` - 1, zero where never set.

    A page may be None: not read yet, asked of `pager` (under the column's `name`) when an
    id in it is first read or written.

    >>> a = Column("i")
    >>> a.grow(5)
    >>> a[3] = 7
    >>> b = a.copy()
    >>> b[3] = 8
    >>> (a[3], b[3], len(b), list(b)[:4])
    (7, 8, 5, [0, 0, 0, 8])
    """

    __slots__ = ("_n", "_owned", "name", "pager", "pages", "typecode")

    def __init__(
        self, typecode: str, pages: list[Any] | None = None, n: int = 0, name: str = "",
        pager: Pager | None = None,
    ) -> None:  # fmt: skip
        self.typecode = typecode
        # Full pages but the last; an array this column may write, a page it shares (an
        # array another column holds, or a read-only view of a kept segment's bytes), or
        # None: not read yet.
        self.pages: list[Any] = pages if pages is not None else []
        self._owned = bytearray(len(self.pages))
        self._n = n
        self.name = name
        self.pager = pager

    @classmethod
    def of(cls, typecode: str, values: Any, name: str = "") -> Column:
        """A column sharing `values` (an array or a typed memoryview, never written)."""
        n = len(values)
        return cls(typecode, [values[at : at + PAGE] for at in range(0, n, PAGE)], n, name)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, doc: int) -> int:
        if not 0 <= doc < self._n:
            raise IndexError(doc)
        page = self.pages[doc >> SHIFT]
        if page is None:
            page = self._read(doc >> SHIFT)
        return int(page[doc & _MASK])

    def __setitem__(self, doc: int, value: int) -> None:
        if not 0 <= doc < self._n:
            raise IndexError(doc)
        self._own(doc >> SHIFT)[doc & _MASK] = value

    def __iter__(self) -> Iterator[int]:
        self._read_all()
        for k in range(len(self.pages)):
            yield from self._page(k)

    def _read_all(self) -> None:
        """Every page not read yet asked of the pager at once (a scan of every id), not one
        read a page."""
        if self.pager is not None and any(page is None for page in self.pages):
            self.pager.whole(self.name)

    def _page(self, k: int) -> Any:
        page = self.pages[k]
        return self._read(k) if page is None else page

    def _read(self, k: int) -> Any:
        if self.pager is None:
            raise LookupError(f"page {k} of column {self.name!r} was never read")
        page = self.pager.page(self.name, k)
        end = self._n - (k << SHIFT)
        if end < len(page):  # the last page: a view of the values it holds
            page = memoryview(page)[:end]
        self.pages[k] = page
        return page

    def _own(self, k: int) -> array[int]:
        """Page `k`, this column's own to write (copied first if shared)."""
        page = self._page(k)
        if not self._owned[k]:
            out = array(self.typecode)
            out.frombytes(memoryview(page).cast("B"))
            page = self.pages[k] = out
            self._owned[k] = 1
        return page  # type: ignore[no-any-return]

    def prefetch(self, ids: Iterable[int]) -> None:
        """Read at once the pages not read yet of the ids `ids` (a ranking's next stretches)."""
        pages = self.pages
        wanted = {d >> SHIFT for d in ids if 0 <= d < self._n and pages[d >> SHIFT] is None}
        if wanted and self.pager is not None:
            self.pager.prefetch(wanted)

    def grow(self, n: int) -> None:
        """Ids up to `n` - 1, the new ones zero."""
        while self._n < n:
            k = self._n >> SHIFT
            if k == len(self.pages):
                self.pages.append(array(self.typecode))
                self._owned.append(1)
            page = self._own(k)
            more = min(PAGE - len(page), n - self._n)
            page.frombytes(bytes(more * page.itemsize))
            self._n += more

    def copy(self, pager: Pager | None = None) -> Column:
        """A column of the same values sharing these pages (those not read yet read through
        `pager`): each copies a page before writing it, so neither sees the other's writes."""
        self._owned = bytearray(len(self.pages))
        return Column(self.typecode, list(self.pages), self._n, self.name, pager)

    def values(self) -> array[int]:
        """Every value as one array (a new one)."""
        out = array(self.typecode)
        out.frombytes(self.tobytes())
        return out

    def tobytes(self) -> bytes:
        self._read_all()
        return b"".join(memoryview(self._page(k)).cast("B") for k in range(len(self.pages)))

    @property
    def nbytes(self) -> int:
        """The bytes of the pages read."""
        size = array(self.typecode).itemsize
        return sum(len(page) * size for page in self.pages if page is not None)
