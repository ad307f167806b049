"""The stores' database work, written once over a :class:`~.dialects.Dialect`.

`StoreCore` runs every statement (loading, creating, journalled writes, snapshots, deletion,
vectors) through the dialect's rendered SQL and transaction rules; ``yait_byheart.store``
puts the public interface on top of it.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from .._record.load import collector_paused
from ..protocols import StoredTurns
from . import _sql as sql
from ._dialects import Dialect
from ._errors import (
    StoreConflictError,
    StoreError,
    StoreReadOnlyError,
    UnknownConversationError,
)
from ._failures import failure
from ._packing import unpack
from ._rows import Damage, Raw, turn_records

_FOLLOW = "Memory (catching up with other writers)"
# What marks a redacted turn in its stored record (compact JSON, as every record is written):
# inside a string the quotes would be escaped, so text cannot fake it.
_REDACTED = '%"redacted":true%'
# Seconds a cache write (the sticky selection, the index snapshot) waits for another
# process's write lock before the call goes on without saving it: ample for other writers'
# appends (microseconds each), short against one that holds the lock through a long import.
CACHE_WAIT = 0.05
# Keys per `IN (...)` list: under SQLite's oldest limit of 999 parameters per statement.
_KEYS_PER_QUERY = 500


class _Undo(Exception):
    """Raised inside a write transaction to roll it back without an error."""


@dataclass
class Loaded:
    """One conversation as read in a single snapshot (text as the dialect reads it: `Raw`)."""

    conv: int
    user: str | None
    head: Raw  # JSON of to_dict() minus "turns" and "state": format, version, config
    seq: int
    turns: list[tuple[int, Raw]]
    state: Raw | None
    snapshot: bytes | None = None
    # Instead of `turns` (`_b_load(joined=True)`): the rows' count, idx and records joined
    # (`Dialect.joined_turns`), then the records once `joined_records` has read them.
    joined: tuple[int, str, bytes] | None = None
    records: list[Any] | None = None

    @classmethod
    def from_rows(cls, row: Any, turns: list[tuple[int, Raw]], state: Any, snapshot: Any) -> Loaded:
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


_F = TypeVar("_F", bound=Callable[..., Any])


def clearly(method: _F) -> _F:
    """The public store method `method`, its database errors raised as `StoreError`s."""
    name = method.__name__
    # A call about one conversation names it: damage in one names where it is.
    about_one = method.__code__.co_varnames[1:2] == ("conversation",)

    @functools.wraps(method)
    def wrapper(self: StoreCore, *args: Any, **kwargs: Any) -> Any:
        one = args[0] if args else kwargs.get("conversation")
        shown = f"({one!r})" if about_one and isinstance(one, str) else ""
        with self._failing(f"{self._kind}.{name}{shown}"):
            return method(self, *args, **kwargs)

    return cast(_F, wrapper)


class StoreCore:
    """One connection and its dialect; each ``_b_*`` method is one unit of database work."""

    _kind = "store"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self._conn: Any = None
        self._dialect = Dialect()
        # Where the database lives, naming the recall segments a process keeps across store
        # objects (`_user_cache`); None: nothing kept for this store past its own life.
        self._where: str | None = None

    @property
    def _db_errors(self) -> tuple[type[Exception], ...]:
        return self._dialect.errors

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise ValueError(f"{call}: this {type(self).__name__} is closed; open a new one")
        self._revive()

    def _revive(self) -> None:
        """Reconnect if the connection was lost (a server's store; a file's never is)."""

    @contextlib.contextmanager
    def _failing(self, call: str) -> Iterator[None]:
        """The block's database errors raised as the store's own (`StoreError`), in one line
        naming the store, what is wrong and what to do."""
        try:
            yield
        except StoreError:
            raise
        except Exception as exc:
            if not isinstance(exc, self._db_errors):
                raise
            raise self._failure(call, exc) from exc

    def _failure(self, call: str, exc: BaseException, kind: str = "") -> StoreError:
        """The store's error for `exc` (its `kind` read from the driver's codes if not given)."""
        kind = kind or self._dialect.kind(exc)
        return failure(self._label(), call, kind, exc, str(getattr(self, "path", "")))

    def _unknown(self, call: str, name: str) -> UnknownConversationError:
        return UnknownConversationError(
            f"{call}: no conversation {name!r} in this store; "
            f"store.conversations() lists the stored ids"
        )

    def _gone(self, call: str, name: str) -> StoreConflictError:
        return StoreConflictError(
            f"{call}: conversation {name!r} was deleted from the store after this Memory was "
            f"opened; this change was not stored and has been undone"
        )

    def _label(self) -> str:
        """How errors name this store (its path, or its schema)."""
        return type(self).__name__

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
        self._dialect.begin(conn, begin)
        try:
            yield conn
        except BaseException:
            if self._dialect.in_transaction(conn):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _setup(self, where: str) -> None:
        """Check the tables, upgrading an older layout or creating a new one.

        A store already at this schema is only read, in a read transaction: opening it takes
        no write lock, so it opens (and reads) while another process holds one."""
        if self._schema(where) == sql.SCHEMA_VERSION:
            self._dialect.after_setup(self._conn)
            return
        conn, dialect, q = self._conn, self._dialect, self._dialect.sql
        try:
            dialect.begin_setup(conn, where)
        except dialect.errors as exc:
            if dialect.kind(exc) != "read-only":
                raise
            self._setup_read_only(where)  # a store this user may read but not write
            return
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

    def _schema(self, where: str) -> int | None:
        """The store's schema version, read in a read transaction (None: no tables yet);
        another application's database, or a newer schema, is refused."""
        conn, dialect = self._conn, self._dialect
        with self._transaction(dialect.read_begin):
            tables = dialect.tables(conn)
            if "meta" in tables:
                return check_meta(where, dict(conn.execute(dialect.sql["meta"]).fetchall()))
        if tables:
            raise dialect.foreign(where, tables)
        return None

    def _setup_read_only(self, where: str) -> None:
        """Refuse a store that refuses writes and would need them to open: a new store, or an
        older layout to upgrade (`_setup` opens one at this schema without writing)."""
        version = self._schema(where)
        what = "create a new store" if version is None else "upgrade its older layout"
        raise StoreReadOnlyError(
            f"{where}: the store is read-only, and opening it would {what}; nothing was "
            f"changed; open it once with write access (to the file and its folder)"
        )

    def _b_load(self, name: str, *, joined: bool = False) -> Loaded | None:
        """The conversation as stored; with `joined`, its turn rows in one row where the
        dialect can (`Loaded.joined`, not `Loaded.turns`)."""
        q, dialect = self._dialect.sql, self._dialect
        together = joined and bool(dialect.joined_turns)
        # A long conversation's rows are many small objects: no collector passes over them.
        with collector_paused(), self._lock, self._transaction(dialect.read_begin) as conn:
            row = conn.execute(q["conversation"], (name,)).fetchone()
            if row is None:
                return None
            turns: list[Any] = []
            if together:
                statement = dialect.joined_turns.format(s=dialect.prefix)
                try:
                    count, idxs, records = conn.execute(statement, (row[0],)).fetchone()
                except dialect.errors:  # past SQLite's longest string (1 GB): row by row
                    together = False
            if not together:
                turns = conn.execute(q["turns"], (row[0],)).fetchall()
            state = conn.execute(q["state"], (row[0],)).fetchone()
            snapshot = conn.execute(q["snapshot"], (row[0],)).fetchone()
        loaded = Loaded.from_rows(row, turns, state, snapshot)
        if together:
            loaded.joined = (int(count), str(idxs or ""), bytes(records or b""))
        return loaded

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
                if not self._dialect.create(conn, name, user, head):
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
        """Store an index snapshot if the conversation's seq is still `seq`; False if not, or
        if another process held the write lock past `CACHE_WAIT` (a cache: not worth waiting)."""
        statement = self._dialect.sql["write_snapshot"]
        return self._cache_write(statement, (data, conv, seq)) == 1

    def _cache_write(self, statement: str, params: tuple[Any, ...]) -> int | None:
        """Run one write of a cache; its rowcount, or None if the lock stayed held."""
        with self._lock:
            try:
                return self._dialect.write_one(self._conn, statement, params, CACHE_WAIT)
            except self._db_errors as exc:
                if self._dialect.kind(exc) != "busy":
                    raise
                return None

    # -- what a bound Memory's journal does -------------------------------------------------

    def _b_since(
        self, name: str, conv: int, seq: int, turns: int, conn: Any = None
    ) -> tuple[int, StoredTurns]:
        """The conversation's seq now, and the turn records a Memory that knows `turns` turns
        as of `seq` has not seen: those from index `turns` on, and, if some write besides
        those appends bumped seq, every redacted earlier turn (checked against the Memory's
        own).  Inside a held transaction `conn` (the conversation locked), else one snapshot.
        """
        q, lock = self._dialect.sql, self._dialect.lock_conversation
        with self._lock:
            db = self._conn if conn is None else conn
            if conn is not None and lock:
                db.execute(q[lock], (conv,))
            rows = db.execute(q["since"], (turns, conv)).fetchall()
            if not rows:
                raise self._gone(_FOLLOW, name)
            now = int(rows[0][0])
            tail = [(int(r[1]), r[2]) for r in rows if r[1] is not None]
            rewritten = []
            if now - seq > len(tail):  # a redaction (or a repair) since: find which turns
                rewritten = db.execute(q["redacted"], (conv, turns, _REDACTED)).fetchall()
        if not tail and not rewritten:
            return now, []
        label = self._label()
        redacted = turn_records(label, name, [(int(i), r) for i, r in rewritten])
        return now, [*redacted, *turn_records(label, name, tail, turns)]

    @contextlib.contextmanager
    def _b_holding(self, call: str) -> Iterator[Any]:
        """A write transaction (the store's lock held), committed when the block ends."""
        self._check_open(call)
        with self._lock, self._transaction(self._dialect.write_begin) as conn:
            yield conn

    def _b_append_if(self, conv: int, seq: int, index: int, payload: str) -> bool:
        """Store turn `index` if the conversation's seq is still `seq` (bumping it), in one
        statement; False (nothing stored) if another writer wrote first."""
        statement = self._dialect.append_if
        with self._lock:
            try:
                return bool(
                    self._conn.execute(statement, (conv, seq, index, payload)).rowcount == 1
                )
            except self._dialect.conflict_errors:
                return False  # a writer that does not bump seq stored that index (an old version)

    def _b_append_held(self, conn: Any, conv: int, index: int, payload: str) -> None:
        """Store turn `index` inside a held transaction: the index is known to be the next."""
        q = self._dialect.sql
        conn.execute(q["insert_turn"], (conv, index, payload))
        conn.execute(q["bump_seq"], (conv,))

    def _b_rewrite(self, call: str, name: str, conv: int, index: int, payload: str) -> None:
        """Rewrite turn `index` (a redaction) and drop the snapshot that indexed its words."""
        q = self._dialect.sql
        self._check_open(call)
        with self._lock, self._transaction(self._dialect.write_begin) as conn:
            if conn.execute(q["rewrite_turn"], (payload, conv, index)).rowcount != 1:
                raise self._gone(call, name)
            conn.execute(q["bump_seq"], (conv,))
            # The snapshot and the user's recall index hold the redacted words' stems.
            conn.execute(q["drop_snapshot"], (conv,))
            _drop_recall_index(conn, q, [(conv,)])
        self._purge_or_warn(call)

    def _b_state(self, call: str, name: str, conv: int, payload: str) -> bool:
        """Store the sticky state as this Memory last chose it; False if another process held
        the write lock past `CACHE_WAIT`.  No conflict check: it is each process's cache of
        what it sent, and the last writer's is as good as any."""
        self._check_open(call)
        count = self._cache_write(self._dialect.sql["write_state"], (payload, conv))
        if count == 0:
            raise self._gone(call, name)
        return count is not None

    def _b_set_aside(self, name: str, damages: list[Damage], placeholder: str, head: str) -> int:
        """Move `damages` (rows of conversation `name`) to the quarantine table, in one
        transaction: a turn row is replaced by `placeholder` (a blank, redacted turn, so the
        turns after it keep their indices), the state row is dropped (a cache) and a damaged
        head replaced by `head` (default settings).  The seq is bumped so that Memories other
        processes hold blank those turns too.  Returns how many rows were set aside."""
        q = self._dialect.sql
        moved = 0
        with self._lock, self._transaction(self._dialect.write_begin) as conn:
            found = conn.execute(q["conversation_id"] + self._dialect.lock_for_delete, (name,))
            row = found.fetchone()
            if row is None:
                return 0  # deleted meanwhile: nothing left to repair
            conv = row[0]
            for damage in damages:
                raw = self._damaged_raw(conn, conv, damage)
                if raw is not None:
                    data = raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)
                    params = (conv, damage.table, damage.row, data, damage.problem)
                    conn.execute(q["set_aside"], params)
                    moved += 1
                if damage.table == "turns":
                    conn.execute(q["put_turn"], (conv, damage.row, placeholder))
                elif damage.table == "state":
                    conn.execute(q["delete_state_row"], (conv,))
                else:
                    conn.execute(q["set_head"], (head, conv))
            conn.execute(q["bump_seq"], (conv,))
            conn.execute(q["drop_snapshot"], (conv,))
            _drop_recall_index(conn, q, [(conv,)])
        return moved

    def _damaged_raw(self, conn: Any, conv: int, damage: Damage) -> Raw | None:
        """The stored text of a damaged row, as read back (None: the row is missing)."""
        q = self._dialect.sql
        if damage.table == "turns":
            row = conn.execute(q["turn_row"], (conv, damage.row)).fetchone()
        elif damage.table == "state":
            row = conn.execute(q["state"], (conv,)).fetchone()
        else:
            row = conn.execute(q["head_row"], (conv,)).fetchone()
        return None if row is None else row[0]

    def _b_quarantined(self, name: str) -> list[tuple[str, int | None, str]]:
        """What `repair` set aside for conversation `name`: (table, row, problem), oldest first."""
        with self._lock:
            rows = self._conn.execute(self._dialect.sql["quarantined"], (name,)).fetchall()
        return [(str(t), None if i is None else int(i), str(p)) for t, i, p in rows]

    def _b_names(self, user: str | None) -> list[str]:
        q = self._dialect.sql
        with self._lock:
            if user is None:
                cur = self._conn.execute(q["names"])
            else:
                cur = self._conn.execute(q["names_of_user"], (user,))
            return [str(r[0]) for r in cur.fetchall()]

    def _b_delete(self, *, name: str | None = None, user: str | None = None) -> tuple[int, int]:
        """Delete a conversation (or a user's): how many, and how many of them were kept in
        damaged pages, so that only their conversation row could be deleted (SQLite: a write
        that meets a damaged page spoils its whole transaction)."""
        dialect, q = self._dialect, self._dialect.sql
        select, value = (q["ids_by_name"], name) if name is not None else (q["ids_by_user"], user)
        children = [q["delete_" + table] for table in sql.CHILD_TABLES]
        try:
            with self._lock, self._transaction(dialect.write_begin) as conn:
                ids = [(r[0],) for r in conn.execute(select + dialect.lock_for_delete, (value,))]
                if ids:
                    _drop_recall_index(conn, q, ids)
                for statement in (*children, q["delete_conversation"]) if ids else ():
                    _many(conn, statement, ids)
            return len(ids), 0
        except dialect.errors as exc:
            if dialect.kind(exc) != "corrupt" or not dialect.orphans:
                raise
        # Their rows stay where they are, unreachable (ids are never given again) and marked
        # so that `salvage` does not bring them back.
        with self._lock, self._transaction(dialect.write_begin) as conn:
            ids = [(r[0],) for r in conn.execute(select, (value,))]
            _many(
                conn, q["insert_meta"], [(f"deleted:{c}", "left in damaged pages") for (c,) in ids]
            )
            _many(conn, q["delete_conversation"], ids)
        return len(ids), len(ids)

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


def _drop_recall_index(conn: Any, q: dict[str, str], convs: list[tuple[Any, ...]]) -> None:
    """Drop the recall index of the users of `convs` (it holds stems of words going away),
    and count it, first: a recall index built before then is never written after
    (`_recall._save` checks the count, locked)."""
    conn.execute(q["bump_recall_generation"])
    for table in ("users", "segments", "terms"):
        _many(conn, q[f"drop_recall_{table}"], convs)
