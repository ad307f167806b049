"""What differs between SQLite and PostgreSQL: placeholders, types, transactions, bulk insert,
locking and purging.  Everything else is written once in `yait_byheart.store._core`.
"""

from __future__ import annotations

import random
import sqlite3
import time
from typing import Any

from . import _sql as sql
from ._failures import postgres_kind, sqlite_kind

_SQLITE_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table'"
_POSTGRES_TABLES = "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"


class Dialect:
    """The SQLite dialect; :class:`PostgresDialect` overrides what PostgreSQL does otherwise."""

    param = "?"
    #: Opens a write transaction that holds the write lock from its start.
    write_begin = "BEGIN IMMEDIATE"
    #: Opens a read transaction: its SELECTs see one snapshot.
    read_begin = "BEGIN"
    #: Appended to a SELECT of conversation ids that a deletion or a vector write relies on.
    lock_for_delete = ""
    lock_for_share = ""
    #: Run first under `follow(hold=True)`, where the write transaction does not already hold
    #: the whole database: the conversation's row lock (statement name, or "").
    lock_conversation = ""
    #: How often an append is tried alone, conditional on the conversation being unchanged,
    #: before it is made with the conversation held.  SQLite: never; it appends only inside a
    #: write transaction that first catches up, where a statement costs microseconds and a
    #: failed conditional write would take the database's one write lock for nothing.
    unlocked_tries = 0
    #: How stored text is read back where it may be damaged (bytes: junk is named, not fatal).
    raw = "CAST({} AS BLOB)"
    #: Whether a deletion or a redaction purges old bytes at once (cheap here, see `purge`).
    purges_implicitly = True
    #: The append tried without holding the conversation: stores turn `idx` only if the seq is
    #: still the one given, bumping it (params conv, seq, idx, record); "" where never tried.
    append_if = ""
    #: A conversation's turn rows in one row (param conv): their count, their idx and their
    #: records each joined by commas, so that reopening builds no tuple per row (a sixth of
    #: reopening 100,000 turns); "" where rows are read one by one. SQLite does not promise
    #: the order an aggregate sees rows in: the idx, seen in the same order, are checked.
    joined_turns = (
        "SELECT count(*), group_concat(idx, ','), CAST(group_concat(record, ',') AS BLOB) "
        "FROM (SELECT idx, record FROM {s}turns WHERE conv = ? ORDER BY idx)"
    )
    types = sql.SQLITE_TYPES
    # For the error about a database of another application.
    holds_other = "a SQLite database of something else (tables: %s)"
    location = "path"

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.sql = sql.rendered(prefix, self.param, self.raw)
        self.errors: tuple[type[Exception], ...] = (sqlite3.Error,)
        self.conflict_errors: tuple[type[Exception], ...] = (sqlite3.IntegrityError,)

    #: Seconds a write waits for another connection's write lock (the store's `timeout`).
    timeout = 5.0

    def in_transaction(self, conn: Any) -> bool:
        return bool(conn.in_transaction)

    def kind(self, exc: BaseException) -> str:
        """What a database error says is wrong (see `_failures.failure`)."""
        return sqlite_kind(exc)

    def integrity(self, conn: Any) -> list[str]:
        """What the database's own check of its file finds wrong (none: [])."""
        try:
            rows = conn.execute("PRAGMA quick_check(10)").fetchall()
        except sqlite3.DatabaseError as exc:
            if self.kind(exc) != "corrupt":
                raise
            return [f"SQLite's own check cannot read the file ({exc})"]
        problems = [str(r[0]) for r in rows if r[0] != "ok"]
        return [f"SQLite's own check: {p}" for p in problems]

    def begin(self, conn: Any, statement: str, wait: float | None = None) -> None:
        """Open a transaction; a write one waits for the write lock by polling it (for `wait`
        seconds, default the store's timeout).

        SQLite's own busy handler sleeps 1, 2, 5, 10 ... 100 ms between tries, so under a
        steady stream of short writes from several processes the lock often sits free while
        every waiter sleeps: four writers appended at a fraction of one writer's rate.  Here
        a waiter tries again after 50 us to 2 ms (jittered, so waiters do not move in step).
        """
        if statement != self.write_begin:
            conn.execute(statement)
            return
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            _poll_write_lock(conn, statement, self.timeout if wait is None else wait)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")

    def write_one(
        self, conn: Any, statement: str, params: tuple[Any, ...], wait: float | None = None
    ) -> int:
        """Run one write statement in its own transaction (waiting as `begin` does); its
        rowcount."""
        self.begin(conn, self.write_begin, wait)
        try:
            count = int(conn.execute(statement, params).rowcount)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return count

    def read_row(self, conn: Any, statement: str, params: tuple[Any, ...]) -> Any:
        """One row of `statement`, its blobs as bytes (None if no row)."""
        return conn.execute(statement, params).fetchone()

    def read_rows(self, conn: Any, statement: str, params: tuple[Any, ...]) -> list[Any]:
        """Every row of `statement`, its blobs as bytes."""
        return list(conn.execute(statement, params).fetchall())

    def read_segment(self, conn: Any, user: str, number: int) -> bytes | None:
        """The bytes of `user`'s recall segment `number` (None if there is none). On SQLite
        through an incremental blob handle where Python has one (3.11), which copies a value
        of many overflow pages once where a SELECT copies it twice (docs/benchmarks.md,
        "Stateless requests")."""
        if hasattr(conn, "blobopen") and not self.prefix:
            row = conn.execute(
                "SELECT rowid FROM recall_segments WHERE user_id = ? AND seg = ?", (user, number)
            ).fetchone()
            if row is None:
                return None
            with conn.blobopen("recall_segments", "data", row[0], readonly=True) as blob:
                return bytes(blob.read())
        found = self.read_row(conn, self.sql["recall_segment"], (user, number))
        return None if found is None else bytes(found[0])

    def begin_setup(self, conn: Any, where: str) -> None:
        """Open the transaction that checks, creates or upgrades the tables."""
        try:
            conn.execute(self.write_begin)
        except sqlite3.DatabaseError as exc:
            if self.kind(exc) in ("read-only", "read-only folder", "busy"):
                raise  # the store's own error for it (see StoreCore._setup)
            raise ValueError(
                f"{where}: not a readable SQLite database ({exc}); "
                f"it was left untouched; pass another path"
            ) from exc

    def tables(self, conn: Any) -> set[str]:
        return {r[0] for r in conn.execute(_SQLITE_TABLES)}

    def foreign(self, where: str, tables: set[str]) -> ValueError:
        """The error for a database (or schema) that holds another application's `tables`."""
        listed = ", ".join(sorted(tables))
        return ValueError(
            f"{where}: {self.holds_other % listed}, not a byheart store; it was "
            f"left untouched; pass another {self.location}"
        )

    def create_statements(self) -> list[str]:
        return sql.new_tables(self.prefix, self.types)

    def upgrade_statements(self, version: int) -> list[str]:
        return sql.upgrade(version, self.prefix, self.types)

    def after_setup(self, conn: Any) -> None:
        # WAL lets readers read while a writer writes, and makes a commit one append to the log.
        # It is stored in the file, so only a new store (or one someone switched back) sets it.
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
            return
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError as exc:
            # Switching takes the whole file: another process holding it, or a store that
            # refuses writes, keeps its journal mode and still opens.
            if self.kind(exc) not in ("busy", "read-only", "read-only folder"):
                raise

    def insert_turns(self, conn: Any, conv: int, records: list[str]) -> None:
        conn.executemany(self.sql["insert_turn"], [(conv, i, r) for i, r in enumerate(records)])

    def create(self, conn: Any, name: str, user: str | None, head: str) -> bool:
        """Insert conversation `name` (in the caller's transaction); False if it is taken.

        SQLite gives a new row the id of the last row deleted (an INTEGER PRIMARY KEY without
        AUTOINCREMENT), so ids come from the highest ever given, kept in `meta`: a conversation
        re-created under a deleted one's name is never taken for it by what follows rows by
        id (a user's recall index)."""
        q = self.sql
        given = conn.execute(q["last_conversation_id"]).fetchone()
        top = conn.execute(q["top_conversation_id"]).fetchone()[0] or 0
        new = max(int(given[0]) if given else 0, int(top)) + 1
        if conn.execute(q["create_with_id"], (new, name, user, head)).rowcount != 1:
            return False
        conn.execute(q["set_last_conversation_id"], (str(new),))
        return True

    #: Whether a conversation kept in damaged pages is deleted by its row alone (`_b_delete`).
    orphans = True

    def purge(self, conn: Any) -> bool:
        # secure_delete already zeroed the rows in the pages; the old page images still sit in
        # the WAL until a checkpoint copies the new ones back and TRUNCATE empties the log.
        try:
            busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            # Locked past the timeout: the change itself is committed, so report, never raise
            # (a raise inside Memory.redact would undo a redaction the file already holds).
            return False
        return bool(busy == 0)


def _poll_write_lock(conn: Any, statement: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pause = 50e-6
    while True:
        try:
            conn.execute(statement)
            return
        except sqlite3.OperationalError as exc:
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() >= deadline:
                raise
        time.sleep(pause * random.uniform(0.5, 1.5))  # jittered: waiters do not move in step
        pause = min(pause * 2, 2e-3)


class PostgresDialect(Dialect):
    """PostgreSQL through psycopg 3 in autocommit mode, the tables in their own schema."""

    def create(self, conn: Any, name: str, user: str | None, head: str) -> bool:
        # A bigserial never gives an id twice.
        return bool(conn.execute(self.sql["create"], (name, user, head)).rowcount == 1)

    param = "%s"
    write_begin = "BEGIN"
    # REPEATABLE READ: the SELECTs see one snapshot, as in SQLite's read transaction.
    read_begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
    # Row locks: a concurrent write to those conversations waits, then finds them gone.
    lock_for_delete = " FOR UPDATE"
    lock_for_share = " FOR KEY SHARE"
    # Its own statement: under READ COMMITTED a statement that waited for a lock still reads
    # the snapshot it started with, so reading the turns in it would miss the turn that the
    # writer who held the lock just committed.  The next statement takes a new snapshot.
    lock_conversation = "lock_conversation"
    # One round trip each, the row locked only while the statement runs: under contention
    # this beats holding the row lock across the four round trips of a held append.
    unlocked_tries = 3
    raw = "{}"  # a text column holds valid UTF-8 by the server's own checks
    joined_turns = ""  # one round trip either way
    orphans = False  # the server guards its own pages
    # VACUUM FULL locks the tables exclusively while it rewrites them: never implicit on a
    # database that other servers share.  Call purge() in a maintenance window instead.
    purges_implicitly = False
    types = sql.POSTGRES_TYPES
    holds_other = "the schema holds other tables (%s)"
    location = "schema="

    def __init__(self, psycopg: Any, schema: str) -> None:
        super().__init__(schema + ".")
        self.schema = schema
        self.errors = (psycopg.Error,)
        self.conflict_errors = (psycopg.errors.UniqueViolation,)
        s = self.prefix
        # One statement in autocommit: one round trip, atomic, committed on return.
        bump = (
            f"WITH bump AS (UPDATE {s}conversations SET seq = seq + 1 "
            f"WHERE id = %s AND seq = %s RETURNING id) "
        )
        self.append_if = (
            bump + f"INSERT INTO {s}turns (conv, idx, record) SELECT id, %s, %s FROM bump"
        )

    def in_transaction(self, conn: Any) -> bool:
        return bool(conn.info.transaction_status != 0)  # 0: idle

    def kind(self, exc: BaseException) -> str:
        return postgres_kind(exc)

    def integrity(self, conn: Any) -> list[str]:
        return []  # the server checks its own pages (data_checksums), not a client

    def begin(self, conn: Any, statement: str, wait: float | None = None) -> None:
        conn.execute(statement)  # row locks wait in the server's queue

    def write_one(
        self, conn: Any, statement: str, params: tuple[Any, ...], wait: float | None = None
    ) -> int:
        if wait is None:
            return int(conn.execute(statement, params).rowcount)  # autocommit: one round trip
        # A cache write: a row lock another connection holds is waited for `wait` at most.
        with conn.transaction():
            conn.execute(f"SET LOCAL lock_timeout = {max(1, int(wait * 1000))}")
            return int(conn.execute(statement, params).rowcount)

    def read_row(self, conn: Any, statement: str, params: tuple[Any, ...]) -> Any:
        # In binary: a bytea in text comes as hex, twice its size, decoded by the client.
        return conn.execute(statement, params, binary=True).fetchone()

    def read_rows(self, conn: Any, statement: str, params: tuple[Any, ...]) -> list[Any]:
        return list(conn.execute(statement, params, binary=True).fetchall())

    def begin_setup(self, conn: Any, where: str) -> None:
        conn.execute(self.write_begin)
        # Serialises concurrent first opens, which would otherwise race on CREATE TABLE.
        key = sql.FORMAT + ":" + self.schema
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))

    def tables(self, conn: Any) -> set[str]:
        return {r[0] for r in conn.execute(_POSTGRES_TABLES, (self.schema,))}

    def create_statements(self) -> list[str]:
        return [
            f"CREATE SCHEMA IF NOT EXISTS {self.schema}", *super().create_statements(),
            *self._uncompressed(),
        ]  # fmt: skip

    def upgrade_statements(self, version: int) -> list[str]:
        extra = self._uncompressed() if version == 6 else []
        return [*super().upgrade_statements(version), *extra]

    def _uncompressed(self) -> list[str]:
        """The recall pieces kept as they are: a request reads them whole, and decompressing
        a 23 MB segment (pglz) took the server 30 to 50 ms more than copying it."""
        return [
            f"ALTER TABLE {self.prefix}{table} ALTER COLUMN data SET STORAGE EXTERNAL"
            for table in ("recall_segments", "recall_terms")
        ]

    def after_setup(self, conn: Any) -> None:
        return

    def insert_turns(self, conn: Any, conv: int, records: list[str]) -> None:
        if not records:
            return
        statement = f"COPY {self.prefix}turns (conv, idx, record) FROM STDIN"
        with conn.cursor() as cur, cur.copy(statement) as copy:
            for i, record in enumerate(records):
                copy.write_row((conv, i, record))

    def purge(self, conn: Any) -> bool:
        tables = ", ".join(self.prefix + t for t in (*sql.CHILD_TABLES, "conversations"))
        conn.execute(f"VACUUM FULL {tables}")
        return True
