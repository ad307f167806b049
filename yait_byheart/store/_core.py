"""The stores' database work, written once over a :class:`~.dialects.Dialect`.

`StoreCore` runs every statement (loading, creating, journalled writes, snapshots, deletion,
vectors) through the dialect's rendered SQL and transaction rules; ``yait_byheart.store``
puts the public interface on top of it.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import _sql as sql
from ._dialects import Dialect
from ._errors import StoreConflictError, UnknownConversationError
from ._packing import unpack

_JOURNAL_CALLS = {"append": "Memory.append", "rewrite": "Memory.redact", "state": "Memory.compose"}
# Keys per `IN (...)` list: under SQLite's oldest limit of 999 parameters per statement.
_KEYS_PER_QUERY = 500


class _Undo(Exception):
    """Raised inside a write transaction to roll it back without an error."""


@dataclass
class Loaded:
    """One conversation as read in a single snapshot."""

    conv: int
    user: str | None
    head: str  # JSON of to_dict() minus "turns" and "state": format, version, config
    seq: int
    turns: list[tuple[int, str]]
    state: str | None
    snapshot: bytes | None = None

    @classmethod
    def from_rows(cls, row: Any, turns: list[tuple[int, str]], state: Any, snapshot: Any) -> Loaded:
        """From the SELECTs' results: the conversation row, its turns, state and snapshot rows."""
        return cls(
            row[0],
            row[1],
            row[2],
            row[3],
            turns,
            None if state is None else state[0],
            None if snapshot is None else bytes(snapshot[0]),
        )


def _many(conn: Any, statement: str, rows: list[tuple[Any, ...]]) -> None:
    # Through a cursor: a psycopg connection has no executemany of its own.
    cur = conn.cursor()
    try:
        cur.executemany(statement, rows)
    finally:
        cur.close()


def check_meta(where: str, meta: Mapping[str, str]) -> int:
    """The store's schema version, if this version can open it (upgrading it if older)."""
    if meta.get("format") != sql.FORMAT:
        raise ValueError(
            f"{where}: not a byheart store (format {meta.get('format')!r}); "
            f"it was left untouched; pass another location"
        )
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        version = -1
    if version > sql.SCHEMA_VERSION:
        raise ValueError(
            f"{where}: written by a newer yait_byheart (store schema {version}; "
            f"this version reads up to {sql.SCHEMA_VERSION}); it was left untouched; "
            f"upgrade yait-byheart to open it"
        )
    if version < 1:
        raise ValueError(
            f"{where}: unknown store schema {meta.get('schema_version')!r}; it was left untouched"
        )
    return version


class StoreCore:
    """One connection and its dialect; each ``_b_*`` method is one unit of database work."""

    _kind = "store"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self._conn: Any = None
        self._dialect = Dialect()

    @property
    def _db_errors(self) -> tuple[type[Exception], ...]:
        return self._dialect.errors

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise ValueError(f"{call}: this {type(self).__name__} is closed; open a new one")

    def _unknown(self, call: str, name: str) -> UnknownConversationError:
        return UnknownConversationError(
            f"{call}: no conversation {name!r} in this store; "
            f"store.conversations() lists the stored ids"
        )

    def _journal_write(
        self, name: str, conv: int, seq: int, op: str, index: int, payload: str
    ) -> int:
        """Apply one write of a bound Memory; its new seq, or StoreConflictError."""
        call = _JOURNAL_CALLS[op]
        self._check_open(f"{call} (bound to {type(self).__name__})")
        with self._lock:
            written = self._b_write(conv, seq, op, index, payload)
            gone = not written and not self._b_exists(conv)
        if not written:
            if gone:
                raise StoreConflictError(
                    f"{call}: conversation {name!r} was deleted from the store after this "
                    f"Memory was opened; this change was not stored and has been undone"
                )
            raise StoreConflictError(
                f"{call}: conversation {name!r} was changed by another writer since this "
                f"Memory was opened (another process, or a second store.open of it); this "
                f"change was not stored and has been undone: reopen it with "
                f"store.open({name!r}) to continue from the stored state"
            )
        if op == "rewrite":
            self._purge_or_warn(call)
        return seq + 1

    def _purge_or_warn(self, call: str) -> None:
        if not self._dialect.purges_implicitly:
            return
        with self._lock:
            done = self._b_purge()
        if not done:
            warnings.warn(
                f"{call}: the change is committed, but another connection still reads an old "
                f"snapshot, so the old bytes remain in the write-ahead log; call store.purge() "
                f"again once readers are done",
                RuntimeWarning,
                stacklevel=3,
            )

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[Any]:
        """`begin` ... COMMIT, or ROLLBACK if the block raises (`_Undo` included)."""
        conn = self._conn
        conn.execute(begin)
        try:
            yield conn
        except BaseException:
            if self._dialect.in_transaction(conn):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _setup(self, where: str) -> None:
        """Check the tables, upgrading an older layout or creating a new one."""
        conn, dialect, q = self._conn, self._dialect, self._dialect.sql
        dialect.begin_setup(conn, where)
        try:
            tables = dialect.tables(conn)
            if "meta" in tables:
                meta = dict(conn.execute(q["meta"]).fetchall())
                for version in range(check_meta(where, meta) + 1, sql.SCHEMA_VERSION + 1):
                    for statement in dialect.upgrade_statements(version):
                        conn.execute(statement)
                    conn.execute(q["set_version"], (str(version),))
            elif tables:
                raise dialect.foreign(where, tables)
            else:
                for statement in dialect.create_statements():
                    conn.execute(statement)
                current = str(sql.SCHEMA_VERSION)
                for row in (("format", sql.FORMAT), ("schema_version", current)):
                    conn.execute(q["insert_meta"], row)
            conn.execute("COMMIT")
        except BaseException:
            if dialect.in_transaction(conn):
                conn.execute("ROLLBACK")
            raise
        dialect.after_setup(conn)

    def _b_load(self, name: str) -> Loaded | None:
        q = self._dialect.sql
        with self._lock, self._transaction(self._dialect.read_begin) as conn:
            row = conn.execute(q["conversation"], (name,)).fetchone()
            if row is None:
                return None
            turns = conn.execute(q["turns"], (row[0],)).fetchall()
            state = conn.execute(q["state"], (row[0],)).fetchone()
            snapshot = conn.execute(q["snapshot"], (row[0],)).fetchone()
        return Loaded.from_rows(row, turns, state, snapshot)

    def _b_create(
        self,
        name: str,
        user: str | None,
        head: str,
        turns: list[str],
        state: str | None,
        snapshot: bytes | None = None,
    ) -> tuple[int, int] | None:
        """Insert a conversation with its rows; (id, seq), or None if the name is taken."""
        q = self._dialect.sql
        try:
            with self._lock, self._transaction(self._dialect.write_begin) as conn:
                if conn.execute(q["create"], (name, user, head)).rowcount != 1:
                    raise _Undo
                conv = int(conn.execute(q["conversation_id"], (name,)).fetchone()[0])
                self._dialect.insert_turns(conn, conv, turns)
                if state is not None:
                    conn.execute(q["insert_state"], (conv, state))
                if snapshot is not None:
                    conn.execute(q["insert_snapshot"], (conv, snapshot))
        except _Undo:
            return None
        return conv, 0

    def _b_snapshot(self, conv: int, seq: int, data: bytes) -> bool:
        """Store an index snapshot if the conversation's seq is still `seq`; False if not."""
        with self._lock:
            cur = self._conn.execute(self._dialect.sql["write_snapshot"], (data, conv, seq))
            return bool(cur.rowcount == 1)

    def _b_write(self, conv: int, seq: int, op: str, index: int, payload: str) -> bool:
        """Apply one journal write if seq still matches (bumping it); False if not."""
        dialect = self._dialect
        try:
            one = dialect.one_statement.get(op)
            if one is not None:
                params = (conv, seq, index, payload) if op == "append" else (conv, seq, payload)
                return bool(self._conn.execute(one, params).rowcount == 1)
            # A write transaction holds the write lock from BEGIN, so the seq check and the
            # write below cannot be split by another writer.
            with self._transaction(dialect.write_begin) as conn:
                if not self._apply(conn, conv, seq, op, index, payload):
                    raise _Undo
        except _Undo:
            return False
        except dialect.conflict_errors:
            return False  # a turn with that index exists: another writer's
        return True

    def _apply(self, conn: Any, conv: int, seq: int, op: str, index: int, payload: str) -> bool:
        q = self._dialect.sql
        if conn.execute(q["bump"], (conv, seq)).rowcount != 1:
            return False
        if op == "append":
            conn.execute(q["insert_turn"], (conv, index, payload))
        elif op == "rewrite":
            if conn.execute(q["rewrite_turn"], (payload, conv, index)).rowcount != 1:
                return False
            # The snapshot holds the redacted words' stems: it goes with them.
            conn.execute(q["drop_snapshot"], (conv,))
        else:
            conn.execute(q["upsert_state"], (conv, payload))
        return True

    def _b_exists(self, conv: int) -> bool:
        with self._lock:
            return self._conn.execute(self._dialect.sql["exists"], (conv,)).fetchone() is not None

    def _b_names(self, user: str | None) -> list[str]:
        q = self._dialect.sql
        with self._lock:
            if user is None:
                cur = self._conn.execute(q["names"])
            else:
                cur = self._conn.execute(q["names_of_user"], (user,))
            return [str(r[0]) for r in cur.fetchall()]

    def _b_delete(self, *, name: str | None = None, user: str | None = None) -> int:
        dialect, q = self._dialect, self._dialect.sql
        select, value = (q["ids_by_name"], name) if name is not None else (q["ids_by_user"], user)
        children = [q["delete_" + table] for table in sql.CHILD_TABLES]
        with self._lock, self._transaction(dialect.write_begin) as conn:
            ids = [(r[0],) for r in conn.execute(select + dialect.lock_for_delete, (value,))]
            if ids:
                for statement in (*children, q["delete_conversation"]):
                    _many(conn, statement, ids)
        return len(ids)

    def _b_purge(self) -> bool:
        return self._dialect.purge(self._conn)

    def _b_close(self) -> None:
        self._conn.close()

    # -- vectors ---------------------------------------------------------------------------------

    def _v_get(self, conversation: str, name: str, keys: list[str]) -> dict[str, list[float]]:
        q, param = self._dialect.sql, self._dialect.param
        out: dict[str, list[float]] = {}
        with self._lock, self._transaction(self._dialect.read_begin) as conn:
            for start in range(0, len(keys), _KEYS_PER_QUERY):
                chunk = keys[start : start + _KEYS_PER_QUERY]
                statement = sql.vectors_in(q, len(chunk), param)
                for key, data in conn.execute(statement, (conversation, name, *chunk)):
                    out[key] = unpack(bytes(data))
        return out

    def _v_set(
        self, call: str, conversation: str, name: str, rows: list[tuple[str, bytes]]
    ) -> None:
        dialect, q = self._dialect, self._dialect.sql
        with self._lock, self._transaction(dialect.write_begin) as conn:
            row = conn.execute(q["conversation_id"] + dialect.lock_for_share, (conversation,))
            found = row.fetchone()
            if found is None:
                raise UnknownConversationError(
                    f"{call}: no conversation {conversation!r} in this store; "
                    f"store.open({conversation!r}) creates it"
                )
            _many(conn, q["upsert_vector"], [(found[0], name, k, v) for k, v in rows])

    def _v_delete(self, conversation: str, name: str, key: str) -> bool:
        with self._lock:
            statement = self._dialect.sql["delete_vector"]
            return bool(self._conn.execute(statement, (conversation, name, key)).rowcount == 1)

    def _v_keys(self, conversation: str, name: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute(self._dialect.sql["vector_keys"], (conversation, name))
            return [str(r[0]) for r in rows.fetchall()]

    def _v_count(self, conversation: str, name: str) -> int:
        with self._lock:
            statement = self._dialect.sql["vector_count"]
            return int(self._conn.execute(statement, (conversation, name)).fetchone()[0])
