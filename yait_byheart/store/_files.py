"""A SQLite store's file before SQLite opens it: a path that cannot hold a store refused, a
damaged store told from a file that never was one, a read-only filesystem opened for reading.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse

from . import _sql as sql
from ._errors import StoreCorruptError, StoreNotFoundError, StoreReadOnlyError
from ._failures import salvage_advice

SQLITE_MAGIC = b"SQLite format 3\x00"
# What only a byheart store's file holds: its format's name (a `meta` row) and its table's
# definition (in SQLite's own schema table, on the first page). Looked for in the first MiB
# of a file whose header is not SQLite's: a store whose header was overwritten.
_MARKS = (sql.FORMAT.encode(), b"CREATE TABLE conversations (id INTEGER PRIMARY KEY")
_LOOKED_AT = 1 << 20


def check_path(where: str, path: str) -> None:
    """Refuse a path that cannot hold a store before sqlite3 touches (or creates) anything."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise StoreNotFoundError(
            f"{where}: the folder {folder!r} does not exist, so no store file can be created "
            f"there; create it first (os.makedirs) or pass a path in an existing folder"
        )
    try:
        with open(path, "rb") as f:
            head = f.read(_LOOKED_AT)
    except FileNotFoundError:
        return  # a new store
    except IsADirectoryError:
        raise ValueError(
            f"{where}: that is a directory; pass a file path such as 'chats.db'"
        ) from None
    except OSError as exc:
        raise type(exc)(
            f"{where}: the file cannot be read ({exc.strerror}); check its permissions"
        ) from exc
    if not head or head.startswith(SQLITE_MAGIC):
        return
    if any(mark in head for mark in _MARKS):
        raise StoreCorruptError(
            f"{where}: the database file is damaged (its SQLite header is overwritten, though "
            f"it holds a byheart store's tables); it was left untouched; "
            f"{salvage_advice(path)}"
        )
    raise ValueError(
        f"{where}: the file is not a SQLite database, "
        f"so not a byheart store; it was left untouched; pass another path"
    )


def read_only_filesystem(path: str) -> bool:
    """Whether the filesystem holding `path` is mounted read-only."""
    try:
        flags = os.statvfs(os.path.dirname(os.path.abspath(path))).f_flag
    except (OSError, AttributeError):  # no statvfs (Windows): SQLite's own error tells
        return False
    return bool(flags & os.ST_RDONLY)


def connect(where: str, path: str, timeout: float, frozen: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (every transaction explicit, none left open by
    accident); on a read-only filesystem (`frozen`), one that reads without writing anything.

    On such a filesystem SQLite cannot create the -shm file that reading a WAL-mode store
    needs, so the file is opened as immutable (no one can change it) unless a -wal file
    holding commits sits beside it, which SQLite then reads with the -shm file found there.
    """
    if not frozen:
        return sqlite3.connect(path, timeout=timeout, isolation_level=None,
                               check_same_thread=False)  # fmt: skip
    if not os.path.exists(path):
        raise StoreReadOnlyError(
            f"{where}: the filesystem is mounted read-only, so no store can be created on it; "
            f"nothing was changed; pass a path on a writable filesystem"
        )
    wal = path + "-wal"
    logged = os.path.exists(wal) and os.path.getsize(wal) > 0
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro"
    return sqlite3.connect(uri + ("" if logged else "&immutable=1"), timeout=timeout,
                           isolation_level=None, check_same_thread=False, uri=True)  # fmt: skip


def unopenable(where: str, exc: sqlite3.Error) -> ValueError:
    """The error for a file SQLite cannot open (permissions, most often)."""
    return ValueError(
        f"{where}: SQLite cannot open it as a database ({exc}); it was left untouched; "
        f"check the file's and the folder's permissions, or pass another path"
    )
