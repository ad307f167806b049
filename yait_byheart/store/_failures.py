"""A database's error as the store's own: one line naming the store, what is wrong and what to
do, as a `StoreError` subclass whose ``retry`` says whether trying again can help.

The condition is read from the driver's codes (SQLite's result code, PostgreSQL's SQLSTATE),
with the message's words as the fallback where a driver gives no code.
"""

from __future__ import annotations

import shlex

from ._errors import (
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreUnavailableError,
)

# SQLite's primary result codes (sqlite.org/rescode.html): the low byte of the extended code.
_SQLITE_CODES = {5: "busy", 6: "busy", 8: "read-only", 10: "io", 11: "corrupt", 13: "full",
                 14: "io", 26: "corrupt"}  # fmt: skip
_SQLITE_WORDS = (("locked", "busy"), ("busy", "busy"), ("readonly", "read-only"),
                 ("malformed", "corrupt"), ("not a database", "corrupt"), ("is full", "full"),
                 ("disk i/o", "io"), ("unable to open", "io"))  # fmt: skip
# PostgreSQL's SQLSTATEs (postgresql.org/docs/current/errcodes-appendix.html).
_PG_STATES = {"25006": "read-only", "42501": "read-only", "53100": "full", "57P01": "lost",
              "57P02": "lost", "57P03": "lost", "55P03": "busy", "57014": "busy",
              "40001": "busy", "40P01": "busy", "XX001": "corrupt", "XX002": "corrupt"}  # fmt: skip


def sqlite_kind(exc: BaseException) -> str:
    """What an ``sqlite3.Error`` says is wrong: busy, read-only, full, corrupt, io or failed."""
    if getattr(exc, "sqlite_errorname", "") == "SQLITE_READONLY_DIRECTORY":
        return "read-only folder"
    code = getattr(exc, "sqlite_errorcode", None)  # Python 3.11+
    if isinstance(code, int) and code & 0xFF in _SQLITE_CODES:
        return _SQLITE_CODES[code & 0xFF]
    text = str(exc).lower()
    return next((kind for word, kind in _SQLITE_WORDS if word in text), "failed")


def postgres_kind(exc: BaseException) -> str:
    """What a psycopg error says is wrong: busy, lost, read-only, full, corrupt or failed."""
    state = str(getattr(exc, "sqlstate", None) or "")
    if state in _PG_STATES:
        return _PG_STATES[state]
    if state.startswith("08"):  # connection exceptions
        return "lost"
    # psycopg raises OperationalError with no SQLSTATE where the connection itself broke.
    return "lost" if not state and type(exc).__name__ == "OperationalError" else "failed"


def failure(store: str, call: str, kind: str, exc: BaseException, path: str = "") -> StoreError:
    """The store's error for a database error of `kind` raised in `call` on `store`."""
    detail = " ".join(str(exc).split()) or type(exc).__name__  # one line, whatever the driver
    where = f"{store}: {call}"
    if kind == "busy":
        return StoreUnavailableError(
            f"{where}: the database stayed locked by another writer past the timeout "
            f"({detail}); nothing was changed; try again (or give the store a longer timeout)"
        )
    if kind == "lost":
        return StoreUnavailableError(
            f"{where}: the connection to the database was lost ({detail}); try again: the "
            f"store reconnects at its next call (an append retried with the same key is "
            f"stored once)"
        )
    if kind == "unreachable":
        return StoreUnavailableError(
            f"{where}: cannot reach the database server ({detail}); check the DSN and that the "
            f"server is running, then try again"
        )
    if kind in ("read-only", "read-only folder", "read-only filesystem"):
        return StoreReadOnlyError(f"{where}: {_read_only(kind, detail, path)}")
    if kind == "full":
        return StoreFullError(
            f"{where}: the disk (or the database's size limit) is full ({detail}); this "
            f"change was not stored and nothing else was changed; free space before writing"
        )
    if kind == "corrupt":
        return StoreCorruptError(f"{where}: {_corrupt(detail, path)}")
    if kind == "io":
        return StoreError(
            f"{where}: the file cannot be read or written ({detail}); check that the file "
            f"and its folder still exist and that this user may write them"
        )
    return StoreError(f"{where}: the database refused the call ({detail})")


def _read_only(kind: str, detail: str, path: str) -> str:
    if kind == "read-only folder":
        return (
            f"its folder is not writable, and SQLite must create the store's -shm file beside "
            f"a WAL-mode store to read it ({detail}); nothing was changed; make the folder "
            f"writable for this user, or open a copy in a writable folder"
        )
    if kind == "read-only filesystem":
        fix = "remount its filesystem read-write, or copy the store to a writable one"
    elif path:
        fix = "give this user write access to the file and its folder"
    else:
        fix = "connect as a role that may write, outside a read-only transaction"
    what = "on a filesystem mounted read-only" if kind == "read-only filesystem" else ""
    return (
        f"the store is read-only{' ' * bool(what)}{what} ({detail}); this change was not "
        f"stored, and reads still work; to write, {fix}"
    )


def _corrupt(detail: str, path: str) -> str:
    if not path:
        return (
            f"the database reports damaged data ({detail}); nothing was changed; restore "
            f"from a backup, or REINDEX a damaged index"
        )
    return (
        f"the database file is damaged ({detail}); nothing was changed; `byheart check` "
        f"lists what can still be read; {salvage_advice(path)}"
    )


def salvage_advice(path: str) -> str:
    """What to do with a damaged store file: the command that copies what it still holds."""
    return (
        f"restore a backup, or copy every turn that still reads into a new store: "
        f"byheart salvage {shlex.quote(path)} --store recovered.db"
    )
