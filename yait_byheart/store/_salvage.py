"""Every turn a damaged store file still holds, copied into a new store (`salvage`).

SQLite's own ``.recover`` finds nothing in a file whose header was overwritten, and a store
that opens still refuses a conversation whose pages are damaged.  Here the file is copied
(its -wal with it) into a private folder, so the damaged original is never written; a header
that is not SQLite's is rebuilt in the copy from what the rest of the file says; then each
table is read as far as it reads, in rowid order from both ends, and row by row between where
the two scans stopped.  A turn that does not read is stored as a blank, redacted turn (as
`repair` does), so the turns after it keep their indexes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from typing import Any, NamedTuple

from ._errors import StoreCorruptError
from ._files import SQLITE_MAGIC
from ._rows import head_problem, loads, turn_problem

#: What stands in for a turn that could not be read: blank and redacted, as `repair` leaves it.
PLACEHOLDER = {"role": "user", "text": "", "redacted": True}
# Rowids tried one by one past the last that read, where the table's last rowid cannot be read.
_PROBE_PAST = 100_000
_PAGE_SIZES = (4096, 1024, 2048, 8192, 16384, 32768, 65536, 512)
_LEAF_TABLE = 0x0D  # the first byte of a table b-tree leaf page: page 2 is one in a store


class Salvaged(NamedTuple):
    """One conversation `salvage` copied: the turns it holds verbatim, those lost."""

    conversation: str
    user: str | None
    turns: int  # turns copied verbatim
    lost: list[int]  # turn indexes that did not read: stored as blank, redacted turns
    settings_lost: bool  # its stored settings did not read: stored with the defaults


def read_damaged(path: str) -> Iterator[tuple[str, str | None, Any, dict[int, Any]]]:
    """Each conversation the file at `path` still holds: (id, user, head, turn rows by index;
    the head None where it did not read; turns whose conversation's row did not read under
    the id ``salvaged-N``, N its number in the file).  `path` itself is only read."""
    with tempfile.TemporaryDirectory(prefix="byheart-salvage-") as folder:
        copy = _copy(path, folder)
        conn = sqlite3.connect(copy, isolation_level=None)
        # Lets SQLite read a file shorter than its header says (truncated) instead of
        # refusing it whole; the copy is only read.
        conn.execute("PRAGMA writable_schema = ON")
        try:
            _check_tables(path, conn)
            conversations = _rows(conn, "conversations", "id, name, user_id, CAST(head AS BLOB)")
            turns = _rows(conn, "turns", "conv, idx, CAST(record AS BLOB)")
            deleted = {str(key) for (key,) in _rows(conn, "meta", "key")}
        finally:
            conn.close()
    by_conv: dict[Any, dict[int, Any]] = {}
    for conv, idx, record in turns:
        if isinstance(idx, int) and f"deleted:{conv}" not in deleted:
            by_conv.setdefault(conv, {})[idx] = record
    for conv, name, user, head in conversations:
        if isinstance(name, str) and name and (user is None or isinstance(user, str)):
            readable = head if head_problem(head) is None else None
            yield name, user, readable, by_conv.pop(conv, {})
    # Turns whose conversation's row did not read: kept under their conversation's number.
    for conv, rows in by_conv.items():
        yield f"salvaged-{conv}", None, None, rows


def _check_tables(path: str, conn: sqlite3.Connection) -> None:
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError:
        tables = set()
    if not {"conversations", "turns"} <= tables:
        raise StoreCorruptError(
            f"salvage({path!r}): nothing in the file reads as a byheart store (SQLite's "
            f"schema page is lost or it never was one); nothing was copied; restore a backup"
        )


def record(head: dict[str, Any], rows: dict[int, Any]) -> tuple[dict[str, Any], list[int]]:
    """The conversation as ``Memory.to_dict()`` from its head and the turn rows that read;
    with the indexes of the turns that did not (each a blank, redacted turn in the record)."""
    turns: list[Any] = []
    lost: list[int] = []
    for idx in range(max(rows, default=-1) + 1):
        raw = rows.get(idx)
        if raw is None or turn_problem(raw, idx) is not None:
            turns.append(dict(PLACEHOLDER))
            lost.append(idx)
        else:
            turns.append(loads(raw))
    return {**head, "turns": turns}, lost


def _copy(path: str, folder: str) -> str:
    """`path` and its -wal copied into `folder`, with SQLite's header rebuilt if lost."""
    copy = os.path.join(folder, "copy.db")
    shutil.copyfile(path, copy)
    logged = os.path.exists(path + "-wal")
    if logged:
        shutil.copyfile(path + "-wal", copy + "-wal")
    with open(copy, "r+b") as f:
        head = f.read(4096)
        if not head.startswith(SQLITE_MAGIC):
            size = os.path.getsize(copy)
            f.seek(0)
            f.write(_header(_page_size(copy, size), size, logged))
    return copy


def _page_size(path: str, size: int) -> int:
    """The page size whose second page is a table's leaf, as a store's `meta` table is."""
    with open(path, "rb") as f:
        for page in _PAGE_SIZES:
            if size % page == 0 and size > page:
                f.seek(page)
                if f.read(1) == bytes([_LEAF_TABLE]):
                    return page
    return 4096  # SQLite's default, and a store's


def _header(page: int, size: int, logged: bool) -> bytes:
    """A SQLite header (sqlite.org/fileformat.html, "The Database Header") for a file of
    `size` bytes in pages of `page` bytes; WAL mode if a -wal file came with it."""
    h = bytearray(100)
    h[0:16] = SQLITE_MAGIC
    h[16:18] = (page if page < 65536 else 1).to_bytes(2, "big")
    h[18] = h[19] = 2 if logged else 1  # file format write/read versions: 2 is WAL
    h[21:24] = bytes([64, 32, 32])  # payload fractions: fixed by the format
    h[24:28] = (1).to_bytes(4, "big")  # change counter, matched at 92 so the size is valid
    h[28:32] = (size // page).to_bytes(4, "big")
    h[40:44] = (1).to_bytes(4, "big")  # schema cookie
    h[44:48] = (4).to_bytes(4, "big")  # schema format 4
    h[56:60] = (1).to_bytes(4, "big")  # text encoding: UTF-8
    h[92:96] = (1).to_bytes(4, "big")
    h[96:100] = _version_number().to_bytes(4, "big")
    return bytes(h)


def _version_number() -> int:
    major, minor, patch = sqlite3.sqlite_version_info
    return major * 1_000_000 + minor * 1_000 + patch


def _rows(conn: sqlite3.Connection, table: str, columns: str) -> list[tuple[Any, ...]]:
    """Every row of `table` that still reads: scanned in rowid order from the start and from
    the end, then each rowid between where the two scans stopped read alone."""
    got: dict[int, tuple[Any, ...]] = {}
    low = _scan(conn, f"SELECT rowid, {columns} FROM {table} ORDER BY rowid", got)
    if low is not None:  # a page did not read: from the end back to it, then row by row
        high = _scan(conn, f"SELECT rowid, {columns} FROM {table} ORDER BY rowid DESC", got)
        one = f"SELECT rowid, {columns} FROM {table} WHERE rowid = ?"
        for rowid in range(low + 1, high or low + _PROBE_PAST):
            try:
                row = conn.execute(one, (rowid,)).fetchone()
            except sqlite3.DatabaseError:
                continue  # in a damaged page
            if row is not None:
                got[row[0]] = row[1:]
    return [got[rowid] for rowid in sorted(got)]


def _scan(conn: sqlite3.Connection, statement: str, got: dict[int, tuple[Any, ...]]) -> int | None:
    """Rows of `statement` into `got` until one does not read: the last rowid read then
    (0 if none), or None if every row read."""
    last = 0
    try:
        for row in conn.execute(statement):
            got[row[0]] = row[1:]
            last = row[0]
    except sqlite3.DatabaseError:
        return last
    return None
