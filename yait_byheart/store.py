"""A durable store for :class:`~yait_byheart.Memory`: one row per turn, many conversations.

``Memory.to_dict()`` rewrites the whole history on every save (megabytes per turn at 100,000
turns).  A store instead journals each change as it happens: an appended turn is one INSERT, a
redaction rewrites one row, a changed sticky selection upserts one row.  Reopening reads the rows
back and rebuilds the Memory with ``Memory.from_dict``, so ``compose`` after reopening gives the
same output it would have given before closing.

* :class:`SQLiteStore` -- stdlib ``sqlite3``, WAL, one file, many processes on one machine.
* :class:`PostgresStore` -- the same interface through psycopg 3 (``pip install
  "yait-byheart[postgres]"``), for servers that share one database.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "chats.db")
>>> with SQLiteStore(path) as store:
...     mem = store.open("conv-42", user="alice", budget=20_000)
...     mem.append("user", "we decided on 55 euro a month")
...     store.conversations(user="alice")
0
['conv-42']
>>> with SQLiteStore(path) as store:    # another process, a day later
...     len(store.open("conv-42"))
1

Reopening a long conversation would mean tokenizing and indexing every stretch again (about 2 s
of the 3 s it took at 100,000 turns).  The store therefore keeps a snapshot of the retrieval
index beside the rows, written when a conversation is imported, when reopening had to re-index
at least ``SNAPSHOT_EVERY`` stretches, and on ``close`` for each bound Memory that has grown that
much since; reopening loads it and indexes only the stretches after it.  A snapshot is derived
data: a redaction deletes it in the same transaction (it holds the redacted words' stems), and
one that does not match the rows is ignored, never trusted.

Writers are optimistic: each conversation row carries a sequence number that every journalled
write checks and bumps in the same transaction.  A second Memory writing the same conversation
(another process, or a second ``open`` of it) therefore gets :class:`StoreConflictError` on its
first write after the other one wrote; its change is undone and nothing is interleaved.  No lock
is held between calls, so a process killed mid-conversation leaves nothing to clean up.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .memory import Memory

__all__ = [
    "SCHEMA_VERSION",
    "PostgresStore",
    "SQLiteStore",
    "StoreConflictError",
    "UnknownConversationError",
]

#: Version of the table layout.  A store written by a newer layout is refused, never altered;
#: an older one is upgraded in place when opened (version 2 added the ``snapshots`` table).
SCHEMA_VERSION = 2
#: Stretches re-indexed on reopening (or added since the last snapshot) that make the store
#: write a new index snapshot: 1,000 stretches re-index in about 0.05 s.
SNAPSHOT_EVERY = 1_000
_FORMAT = "yait_byheart.store"
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_PG_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_S = TypeVar("_S", bound="_Store")


class StoreConflictError(RuntimeError):
    """Another writer changed (or deleted) the conversation since this Memory was opened."""


class UnknownConversationError(ValueError, KeyError):
    """No conversation with that id is stored (a ValueError, and a KeyError for ``except``)."""

    def __str__(self) -> str:
        # KeyError's __str__ would print the message inside quotes.
        return str(self.args[0]) if self.args else ""


@dataclass
class _Loaded:
    """One conversation as read in a single snapshot."""

    conv: int
    user: str | None
    head: str  # JSON of to_dict() minus "turns" and "state": format, version, config
    seq: int
    turns: list[tuple[int, str]]
    state: str | None
    snapshot: bytes | None = None

    @classmethod
    def from_rows(
        cls, row: Any, turns: list[tuple[int, str]], state: Any, snapshot: Any
    ) -> _Loaded:
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


class _Journal:
    """What a bound Memory calls, under its own lock, before a mutating call returns."""

    __slots__ = ("__weakref__", "_conv", "_memory", "_name", "_seq", "_store", "snapshot_units")

    def __init__(self, store: _Store, name: str, conv: int, seq: int, memory: Memory) -> None:
        self._store = store
        self._name = name
        self._conv = conv
        self._seq = seq
        self._memory = weakref.ref(memory)
        # Stretches covered by the stored index snapshot (0: none stored).
        self.snapshot_units = 0

    def save_snapshot(self, *, at_least: int) -> None:
        """Store the index snapshot if `at_least` stretches were indexed since the last one."""
        mem = self._memory()
        if mem is None:
            return
        if mem.stretch_count - self.snapshot_units < max(1, at_least):
            return
        # Taken before the sequence number: a write in between only makes it a valid prefix.
        data = mem.index_snapshot()
        seq = self._seq
        # Written only if no other writer changed the conversation meanwhile (seq unchanged):
        # then these rows are exactly what the snapshot was built from.
        if self._store._b_snapshot(self._conv, seq, data):
            self.snapshot_units = mem.stretch_count

    def turn_appended(self, index: int, record: dict[str, Any]) -> None:
        self._seq = self._store._journal_write(
            self._name, self._conv, self._seq, "append", index, _dumps(record)
        )

    def turn_redacted(self, index: int, record: dict[str, Any]) -> None:
        self._seq = self._store._journal_write(
            self._name, self._conv, self._seq, "rewrite", index, _dumps(record)
        )
        self.snapshot_units = 0  # the rewrite deleted it

    def state_changed(self, state: dict[str, Any]) -> None:
        self._seq = self._store._journal_write(
            self._name, self._conv, self._seq, "state", -1, _dumps(state)
        )


def _dumps(obj: object) -> str:
    # Compact and strict: rows are concatenated into one JSON array on reopen.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _memory_class() -> type[Memory]:
    # Imported late so that importing the store never imports more than it needs.
    from .memory import Memory

    return Memory


def _check_id(call: str, name: object, what: str = "conversation id") -> str:
    if not isinstance(name, str):
        raise TypeError(f"{call}: the {what} must be a str, got {type(name).__name__}")
    if not name:
        raise ValueError(f"{call}: the {what} must be a non-empty string")
    return name


def _check_user(call: str, user: object) -> str | None:
    if user is None:
        return None
    return _check_id(call, user, "user")


class _Store:
    """The interface shared by both stores; subclasses supply the SQL (``_b_*`` methods)."""

    _kind = "store"
    _db_errors: tuple[type[Exception], ...] = ()

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self._journals: weakref.WeakSet[_Journal] = weakref.WeakSet()

    # -- public interface ---------------------------------------------------------------------

    def open(
        self, conversation: str, *, user: str | None = None, create: bool = True, **settings: Any
    ) -> Memory:
        """The Memory of ``conversation``, bound to this store; created if absent.

        ``settings`` are Memory constructor settings.  For a new conversation they are stored
        (the JSON-safe part, as ``Memory.to_dict()["config"]``); for an existing one they
        override the stored settings for this Memory only, as ``Memory.from_dict`` does (pass
        callables such as ``retriever`` or ``measure`` again on every open).  ``user`` is
        recorded on creation; on reopening it must match.  ``create=False`` raises
        :class:`UnknownConversationError` instead of creating.
        """
        call = f"{self._kind}.open"
        name = _check_id(call, conversation)
        user = _check_user(call, user)
        self._check_open(call)
        memory_cls = _memory_class()
        loaded = self._b_load(name)
        if loaded is None:
            if not create:
                raise self._unknown(call, name)
            mem = memory_cls(**settings)
            data = mem.to_dict()
            head = {k: v for k, v in data.items() if k not in ("turns", "state")}
            if data.get("turns"):
                raise ValueError(f"{call}: a new Memory already holds turns; cannot store it")
            created = self._b_create(name, user, _dumps(head), [], _dumps(data.get("state")))
            if created is not None:
                conv, seq = created
                self._bind(mem, _Journal(self, name, conv, seq, mem))
                return mem
            # Another process created it between our read and our insert: open theirs.
            loaded = self._b_load(name)
            if loaded is None:  # ...and deleted it again; vanishingly rare, so just say so
                raise StoreConflictError(
                    f"{call}({name!r}): created and deleted concurrently; retry"
                )
        if user is not None and loaded.user != user:
            raise ValueError(
                f"{call}({name!r}, user={user!r}): the conversation belongs to user "
                f"{loaded.user!r}; pass that user or none"
            )
        mem = memory_cls.from_dict(
            self._assemble(name, loaded), index_snapshot=loaded.snapshot, **settings
        )
        journal = _Journal(self, name, loaded.conv, loaded.seq, mem)
        journal.snapshot_units = mem.snapshot_stretches
        self._bind(mem, journal)
        journal.save_snapshot(at_least=SNAPSHOT_EVERY)
        return mem

    def _bind(self, mem: Memory, journal: _Journal) -> None:
        mem.attach_journal(journal)
        with self._lock:
            self._journals.add(journal)

    def conversations(self, *, user: str | None = None) -> list[str]:
        """Ids of the stored conversations (of ``user`` when given), sorted."""
        call = f"{self._kind}.conversations"
        user = _check_user(call, user)
        self._check_open(call)
        return self._b_names(user)

    def export(self, conversation: str) -> dict[str, Any]:
        """The conversation as ``Memory.to_dict()`` gives it (JSON-safe), read in one snapshot."""
        call = f"{self._kind}.export"
        name = _check_id(call, conversation)
        self._check_open(call)
        loaded = self._b_load(name)
        if loaded is None:
            raise self._unknown(call, name)
        return self._assemble(name, loaded)

    def import_(
        self, conversation: str, data: Mapping[str, Any], *, user: str | None = None
    ) -> None:
        """Store ``data`` (a ``Memory.to_dict()``) as a new conversation, in one transaction.

        The data is first rebuilt with ``Memory.from_dict`` so that nothing unreadable is ever
        stored; an existing id is refused (delete it first), never overwritten.
        """
        call = f"{self._kind}.import_"
        name = _check_id(call, conversation)
        user = _check_user(call, user)
        self._check_open(call)
        if not isinstance(data, Mapping):
            raise TypeError(
                f"{call}: data must be a dict from Memory.to_dict(), got {type(data).__name__}"
            )
        turns = data.get("turns")
        if not isinstance(turns, list):
            raise ValueError(f"{call}: data has no 'turns' list; pass Memory.to_dict() output")
        try:
            snapshot = _memory_class().from_dict(dict(data)).index_snapshot()
            head = _dumps({k: v for k, v in data.items() if k not in ("turns", "state")})
            rows = [_dumps(t) for t in turns]
            state = _dumps(data["state"]) if "state" in data else None
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"{call}({name!r}): data is not a valid Memory.to_dict(): {exc}"
            ) from exc
        if self._b_create(name, user, head, rows, state, snapshot) is None:
            raise ValueError(
                f"{call}({name!r}): that conversation already exists; "
                f"store.delete({name!r}) first or choose another id"
            )

    def delete(self, conversation: str) -> None:
        """Delete the conversation and purge its bytes (see :meth:`purge`)."""
        call = f"{self._kind}.delete"
        name = _check_id(call, conversation)
        self._check_open(call)
        if self._b_delete(name=name) == 0:
            raise self._unknown(call, name)
        self._purge_or_warn(call)

    def delete_user(self, user: str) -> int:
        """Delete every conversation of ``user``, purge their bytes; returns how many."""
        call = f"{self._kind}.delete_user"
        user_id = _check_id(call, user, "user")
        self._check_open(call)
        n = self._b_delete(user=user_id)
        if n:
            self._purge_or_warn(call)
        return n

    def purge(self) -> bool:
        """Make deleted and redacted text physically unreadable; True when that succeeded."""
        self._check_open(f"{self._kind}.purge")
        with self._lock:
            return self._b_purge()

    def close(self) -> None:
        """Close the connection; bound Memories then refuse further changes.

        First stores an index snapshot for each bound Memory indexed ``SNAPSHOT_EVERY``
        stretches past its last one, so that reopening it stays fast.
        """
        with self._lock:
            if self._closed:
                return
            journals = list(self._journals)
        for journal in journals:  # outside the store lock: a snapshot takes the Memory's lock
            # A snapshot is a cache: a database busy past its timeout must not fail the close.
            with contextlib.suppress(*self._db_errors):
                journal.save_snapshot(at_least=SNAPSHOT_EVERY)
        with self._lock:
            if not self._closed:
                self._closed = True
                self._b_close()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- shared machinery ---------------------------------------------------------------------

    def _check_open(self, call: str) -> None:
        if self._closed:
            raise ValueError(f"{call}: this {type(self).__name__} is closed; open a new one")

    def _unknown(self, call: str, name: str) -> UnknownConversationError:
        return UnknownConversationError(
            f"{call}: no conversation {name!r} in this store; "
            f"store.conversations() lists the stored ids"
        )

    def _assemble(self, name: str, loaded: _Loaded) -> dict[str, Any]:
        # Rows are contiguous 0..n-1 by construction; anything else means outside tampering,
        # and rebuilding a shifted history would silently misattribute turns.
        for position, (idx, _record) in enumerate(loaded.turns):
            if idx != position:
                raise ValueError(
                    f"{self._kind}: conversation {name!r} has no turn {position} "
                    f"(found {idx}); the store was modified outside yait_byheart"
                )
        data: dict[str, Any] = json.loads(loaded.head)
        # One parse of one array is ~2x faster than 100,000 json.loads calls.
        data["turns"] = json.loads("[" + ",".join(r for _i, r in loaded.turns) + "]")
        if loaded.state is not None:  # absent only if imported data had no state
            data["state"] = json.loads(loaded.state)
        return data

    def _journal_write(
        self, name: str, conv: int, seq: int, op: str, index: int, payload: str
    ) -> int:
        call = {"append": "Memory.append", "rewrite": "Memory.redact", "state": "Memory.compose"}[
            op
        ]
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

    # -- backend primitives -------------------------------------------------------------------

    def _b_load(self, name: str) -> _Loaded | None:
        raise NotImplementedError

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
        raise NotImplementedError

    def _b_snapshot(self, conv: int, seq: int, data: bytes) -> bool:
        """Store an index snapshot if the conversation's seq is still `seq`; False if not."""
        raise NotImplementedError

    def _b_write(self, conv: int, seq: int, op: str, index: int, payload: str) -> bool:
        """Apply one journal write if seq still matches (bumping it); False if not."""
        raise NotImplementedError

    def _b_exists(self, conv: int) -> bool:
        raise NotImplementedError

    def _b_names(self, user: str | None) -> list[str]:
        raise NotImplementedError

    def _b_delete(self, *, name: str | None = None, user: str | None = None) -> int:
        raise NotImplementedError

    def _b_purge(self) -> bool:
        raise NotImplementedError

    def _b_close(self) -> None:
        raise NotImplementedError


# What each schema version added to the one before: run in order to upgrade an older store.
_SQLITE_UPGRADES = {
    2: ("CREATE TABLE snapshots (conv INTEGER PRIMARY KEY, data BLOB NOT NULL)",),
}
_SQLITE_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE conversations (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
    "user_id TEXT, head TEXT NOT NULL, seq INTEGER NOT NULL)",
    "CREATE INDEX conversations_user ON conversations (user_id)",
    "CREATE TABLE turns (conv INTEGER NOT NULL, idx INTEGER NOT NULL, record TEXT NOT NULL, "
    "PRIMARY KEY (conv, idx))",
    "CREATE TABLE state (conv INTEGER PRIMARY KEY, state TEXT NOT NULL)",
    *_SQLITE_UPGRADES[2],
)


class SQLiteStore(_Store):
    """Conversations in one SQLite file (created if absent), in WAL mode.

    ``synchronous`` trades durability for append speed (see docs/store.md): with ``"NORMAL"``
    (the default) a committed turn survives a crash of the process, and may be lost only if the
    machine loses power before the next WAL checkpoint; ``"FULL"`` also survives power loss, at
    one fsync per append.  ``timeout`` is how long a write waits for another process's write.
    Deleted and redacted text is overwritten in the file (``secure_delete``) and the WAL is
    truncated after each deletion or redaction.
    """

    _kind = "SQLiteStore"
    _db_errors = (sqlite3.Error,)

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", timeout: float = 5.0
    ) -> None:
        super().__init__()
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"SQLiteStore: path must be a str or path, got {type(path).__name__}")
        if not isinstance(synchronous, str) or synchronous.upper() not in _SYNCHRONOUS:
            raise ValueError(
                f"SQLiteStore: synchronous must be one of {', '.join(_SYNCHRONOUS)}, "
                f"got {synchronous!r}"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"SQLiteStore: timeout must be seconds >= 0, got {timeout!r}")
        self.path = os.fspath(path)
        self._check_header()
        # Autocommit mode: every transaction below is explicit, so none is left open by accident.
        self._db = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        try:
            self._db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
            self._setup_schema()
            self._db.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            # Zero the bytes of deleted rows instead of only unlinking them from the b-tree.
            self._db.execute("PRAGMA secure_delete = ON")
        except BaseException:
            self._db.close()
            self._closed = True
            raise

    def _check_header(self) -> None:
        # Checked before sqlite3 touches the file, so a wrong path is refused without a write.
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise ValueError(
                f"SQLiteStore({self.path!r}): that is a directory; "
                f"pass a file path such as 'chats.db'"
            ) from None
        if head and head != _SQLITE_MAGIC:
            raise ValueError(
                f"SQLiteStore({self.path!r}): the file is not a SQLite database, "
                f"so not a byheart store; it was left untouched; pass another path"
            )

    def _setup_schema(self) -> None:
        db = self._db
        where = f"SQLiteStore({self.path!r})"
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise ValueError(
                f"{where}: not a readable SQLite database ({exc}); "
                f"it was left untouched; pass another path"
            ) from exc
        try:
            tables = {
                r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
            if "meta" in tables:
                meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
                for version in range(_check_meta(where, meta) + 1, SCHEMA_VERSION + 1):
                    for statement in _SQLITE_UPGRADES[version]:
                        db.execute(statement)
                    db.execute(
                        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),)
                    )
            elif tables:
                raise ValueError(
                    f"{where}: a SQLite database of something else (tables: "
                    f"{', '.join(sorted(tables))}), not a byheart store; it was "
                    f"left untouched; pass another path"
                )
            else:
                for statement in _SQLITE_SCHEMA:
                    db.execute(statement)
                db.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("format", _FORMAT), ("schema_version", str(SCHEMA_VERSION))],
                )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        # WAL lets readers read while a writer writes, and makes a commit one append to the log.
        # It is stored in the file, so only a new store (or one someone switched back) sets it.
        if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            db.execute("PRAGMA journal_mode = WAL")

    def _b_load(self, name: str) -> _Loaded | None:
        with self._lock:
            db = self._db
            db.execute("BEGIN")  # one read snapshot for the three SELECTs
            try:
                row = db.execute(
                    "SELECT id, user_id, head, seq FROM conversations WHERE name = ?", (name,)
                ).fetchone()
                if row is None:
                    return None
                turns = db.execute(
                    "SELECT idx, record FROM turns WHERE conv = ? ORDER BY idx", (row[0],)
                ).fetchall()
                state = db.execute("SELECT state FROM state WHERE conv = ?", (row[0],)).fetchone()
                snapshot = db.execute(
                    "SELECT data FROM snapshots WHERE conv = ?", (row[0],)
                ).fetchone()
            finally:
                db.execute("COMMIT")
        return _Loaded.from_rows(row, turns, state, snapshot)

    def _b_create(
        self,
        name: str,
        user: str | None,
        head: str,
        turns: list[str],
        state: str | None,
        snapshot: bytes | None = None,
    ) -> tuple[int, int] | None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                cur = db.execute(
                    "INSERT INTO conversations (name, user_id, head, seq) "
                    "VALUES (?, ?, ?, 0) ON CONFLICT (name) DO NOTHING",
                    (name, user, head),
                )
                if cur.rowcount != 1:
                    db.execute("ROLLBACK")
                    return None
                conv = cur.lastrowid
                assert conv is not None
                db.executemany(
                    "INSERT INTO turns (conv, idx, record) VALUES (?, ?, ?)",
                    [(conv, i, r) for i, r in enumerate(turns)],
                )
                if state is not None:
                    db.execute("INSERT INTO state (conv, state) VALUES (?, ?)", (conv, state))
                if snapshot is not None:
                    db.execute("INSERT INTO snapshots (conv, data) VALUES (?, ?)", (conv, snapshot))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return conv, 0

    def _b_write(self, conv: int, seq: int, op: str, index: int, payload: str) -> bool:
        db = self._db
        # IMMEDIATE takes the write lock now (waiting up to `timeout` for another process),
        # so the seq check and the write below cannot be split by another writer.
        db.execute("BEGIN IMMEDIATE")
        try:
            cur = db.execute(
                "UPDATE conversations SET seq = seq + 1 WHERE id = ? AND seq = ?", (conv, seq)
            )
            ok = cur.rowcount == 1
            if ok and op == "append":
                db.execute(
                    "INSERT INTO turns (conv, idx, record) VALUES (?, ?, ?)", (conv, index, payload)
                )
            elif ok and op == "rewrite":
                ok = (
                    db.execute(
                        "UPDATE turns SET record = ? WHERE conv = ? AND idx = ?",
                        (payload, conv, index),
                    ).rowcount
                    == 1
                )
                # The snapshot holds the redacted words' stems: it goes with them.
                db.execute("DELETE FROM snapshots WHERE conv = ?", (conv,))
            elif ok:
                db.execute(
                    "INSERT INTO state (conv, state) VALUES (?, ?) "
                    "ON CONFLICT (conv) DO UPDATE SET state = excluded.state",
                    (conv, payload),
                )
            db.execute("COMMIT" if ok else "ROLLBACK")
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")  # a turn with that index exists: another writer's
            return False
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return ok

    def _b_snapshot(self, conv: int, seq: int, data: bytes) -> bool:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                ok = (
                    db.execute(
                        "SELECT 1 FROM conversations WHERE id = ? AND seq = ?", (conv, seq)
                    ).fetchone()
                    is not None
                )
                if ok:
                    db.execute(
                        "INSERT INTO snapshots (conv, data) VALUES (?, ?) "
                        "ON CONFLICT (conv) DO UPDATE SET data = excluded.data",
                        (conv, data),
                    )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return ok

    def _b_exists(self, conv: int) -> bool:
        with self._lock:
            return (
                self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (conv,)).fetchone()
                is not None
            )

    def _b_names(self, user: str | None) -> list[str]:
        with self._lock:
            if user is None:
                rows = self._db.execute("SELECT name FROM conversations ORDER BY name")
            else:
                rows = self._db.execute(
                    "SELECT name FROM conversations WHERE user_id = ? ORDER BY name", (user,)
                )
            return [r[0] for r in rows]

    def _b_delete(self, *, name: str | None = None, user: str | None = None) -> int:
        column, value = ("name", name) if name is not None else ("user_id", user)
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                ids = [
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM conversations WHERE {column} = ?", (value,)
                    )
                ]
                for conv in ids:
                    db.execute("DELETE FROM turns WHERE conv = ?", (conv,))
                    db.execute("DELETE FROM state WHERE conv = ?", (conv,))
                    db.execute("DELETE FROM snapshots WHERE conv = ?", (conv,))
                    db.execute("DELETE FROM conversations WHERE id = ?", (conv,))
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        return len(ids)

    def _b_purge(self) -> bool:
        # secure_delete already zeroed the rows in the pages; the old page images still sit in
        # the WAL until a checkpoint copies the new ones back and TRUNCATE empties the log.
        try:
            busy, _log, _done = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            # Locked past the timeout: the change itself is committed, so report, never raise
            # (a raise inside Memory.redact would undo a redaction the file already holds).
            return False
        return bool(busy == 0)

    def _b_close(self) -> None:
        self._db.close()


def _check_meta(where: str, meta: Mapping[str, str]) -> int:
    """The store's schema version, if this version can open it (upgrading it if older)."""
    if meta.get("format") != _FORMAT:
        raise ValueError(
            f"{where}: not a byheart store (format {meta.get('format')!r}); "
            f"it was left untouched; pass another location"
        )
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        version = -1
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"{where}: written by a newer yait_byheart (store schema {version}; "
            f"this version reads up to {SCHEMA_VERSION}); it was left untouched; "
            f"upgrade yait-byheart to open it"
        )
    if version < 1:
        raise ValueError(
            f"{where}: unknown store schema {meta.get('schema_version')!r}; it was left untouched"
        )
    return version


# As _SQLITE_UPGRADES, for PostgreSQL; {s} is the store's schema.
_PG_UPGRADES = {
    2: ("CREATE TABLE {s}.snapshots (conv bigint PRIMARY KEY, data bytea NOT NULL)",),
}


class PostgresStore(_Store):
    """Conversations in a PostgreSQL database, in their own schema (default ``byheart``).

    Needs psycopg 3: ``pip install "yait-byheart[postgres]"``.  Each append is one statement
    in its own transaction, so it is committed before ``append`` returns; how durable a commit
    is follows the server's ``synchronous_commit``.  Writers to different conversations never
    wait for each other (row locks); the store's tables live in ``schema``, which is created if
    absent.  Deleted rows are invisible at once but stay in the table files until
    :meth:`purge` (``VACUUM FULL``) rewrites them (see docs/store.md).
    """

    _kind = "PostgresStore"

    def __init__(self, dsn: str, *, schema: str = "byheart", connect_timeout: float = 10.0) -> None:
        super().__init__()
        if not isinstance(dsn, str):
            raise TypeError(f"PostgresStore: dsn must be a str, got {type(dsn).__name__}")
        if not isinstance(schema, str) or not _PG_SCHEMA_NAME.fullmatch(schema):
            raise ValueError(
                f"PostgresStore: schema must be a lower-case SQL identifier "
                f"([a-z_][a-z0-9_]*), got {schema!r}"
            )
        try:
            psycopg = importlib.import_module("psycopg")
        except ImportError as exc:
            raise ImportError(
                'PostgresStore needs psycopg 3: pip install "yait-byheart[postgres]"'
            ) from exc
        self._pg: Any = psycopg
        self._db_errors = (psycopg.Error,)
        self.schema = schema
        self._conn: Any = psycopg.connect(
            dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
        )
        try:
            self._setup_schema()
        except BaseException:
            self._conn.close()
            self._closed = True
            raise
        s = schema
        self._q_append = (
            f"WITH bump AS (UPDATE {s}.conversations SET seq = seq + 1 "
            f"WHERE id = %s AND seq = %s RETURNING id) "
            f"INSERT INTO {s}.turns (conv, idx, record) SELECT id, %s, %s FROM bump"
        )
        self._q_state = (
            f"WITH bump AS (UPDATE {s}.conversations SET seq = seq + 1 "
            f"WHERE id = %s AND seq = %s RETURNING id) "
            f"INSERT INTO {s}.state (conv, state) SELECT id, %s FROM bump "
            f"ON CONFLICT (conv) DO UPDATE SET state = excluded.state"
        )

    def _setup_schema(self) -> None:
        s = self.schema
        where = f"PostgresStore(schema={s!r})"
        conn = self._conn
        with conn.transaction():
            # Serialises concurrent first opens, which would otherwise race on CREATE TABLE.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (_FORMAT + ":" + s,))
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (s,)
                )
            }
            if "meta" in tables:
                meta = dict(conn.execute(f"SELECT key, value FROM {s}.meta").fetchall())
                for version in range(_check_meta(where, meta) + 1, SCHEMA_VERSION + 1):
                    self._upgrade_to(version)
                    conn.execute(
                        f"UPDATE {s}.meta SET value = %s WHERE key = 'schema_version'",
                        (str(version),),
                    )
                return
            if tables:
                raise ValueError(
                    f"{where}: the schema holds other tables "
                    f"({', '.join(sorted(tables))}), not a byheart store; it was "
                    f"left untouched; pass another schema="
                )
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            conn.execute(f"CREATE TABLE {s}.meta (key text PRIMARY KEY, value text NOT NULL)")
            conn.execute(
                f"CREATE TABLE {s}.conversations (id bigserial PRIMARY KEY, "
                f"name text NOT NULL UNIQUE, user_id text, head text NOT NULL, "
                f"seq bigint NOT NULL)"
            )
            conn.execute(f"CREATE INDEX conversations_user ON {s}.conversations (user_id)")
            # record is text, not jsonb: jsonb reorders keys and costs a parse per append.
            conn.execute(
                f"CREATE TABLE {s}.turns (conv bigint NOT NULL, idx integer NOT NULL, "
                f"record text NOT NULL, PRIMARY KEY (conv, idx))"
            )
            conn.execute(f"CREATE TABLE {s}.state (conv bigint PRIMARY KEY, state text NOT NULL)")
            for version in range(2, SCHEMA_VERSION + 1):
                self._upgrade_to(version)
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {s}.meta (key, value) VALUES (%s, %s)",
                    [("format", _FORMAT), ("schema_version", str(SCHEMA_VERSION))],
                )

    def _upgrade_to(self, version: int) -> None:
        """What schema `version` added to the one before (inside _setup_schema's transaction)."""
        for statement in _PG_UPGRADES[version]:
            self._conn.execute(statement.format(s=self.schema))

    def _b_load(self, name: str) -> _Loaded | None:
        s = self.schema
        with self._lock:
            conn = self._conn
            # REPEATABLE READ: the three SELECTs see one snapshot, as in SQLite's read txn.
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                row = conn.execute(
                    f"SELECT id, user_id, head, seq FROM {s}.conversations WHERE name = %s", (name,)
                ).fetchone()
                if row is None:
                    return None
                turns = conn.execute(
                    f"SELECT idx, record FROM {s}.turns WHERE conv = %s ORDER BY idx", (row[0],)
                ).fetchall()
                state = conn.execute(
                    f"SELECT state FROM {s}.state WHERE conv = %s", (row[0],)
                ).fetchone()
                snapshot = conn.execute(
                    f"SELECT data FROM {s}.snapshots WHERE conv = %s", (row[0],)
                ).fetchone()
            finally:
                conn.execute("COMMIT")
        return _Loaded.from_rows(row, turns, state, snapshot)

    def _b_create(
        self,
        name: str,
        user: str | None,
        head: str,
        turns: list[str],
        state: str | None,
        snapshot: bytes | None = None,
    ) -> tuple[int, int] | None:
        s = self.schema
        with self._lock, self._conn.transaction():
            conn = self._conn
            row = conn.execute(
                f"INSERT INTO {s}.conversations (name, user_id, head, seq) "
                f"VALUES (%s, %s, %s, 0) ON CONFLICT (name) DO NOTHING "
                f"RETURNING id",
                (name, user, head),
            ).fetchone()
            if row is None:
                return None
            conv = int(row[0])
            if turns:
                with (
                    conn.cursor() as cur,
                    cur.copy(f"COPY {s}.turns (conv, idx, record) FROM STDIN") as copy,
                ):
                    for i, record in enumerate(turns):
                        copy.write_row((conv, i, record))
            if state is not None:
                conn.execute(f"INSERT INTO {s}.state (conv, state) VALUES (%s, %s)", (conv, state))
            if snapshot is not None:
                conn.execute(
                    f"INSERT INTO {s}.snapshots (conv, data) VALUES (%s, %s)", (conv, snapshot)
                )
        return conv, 0

    def _b_snapshot(self, conv: int, seq: int, data: bytes) -> bool:
        s = self.schema
        with self._lock:
            # One statement: written only while the conversation's seq is still `seq`.
            cur = self._conn.execute(
                f"INSERT INTO {s}.snapshots (conv, data) "
                f"SELECT id, %s FROM {s}.conversations WHERE id = %s AND seq = %s "
                f"ON CONFLICT (conv) DO UPDATE SET data = excluded.data",
                (data, conv, seq),
            )
            return bool(cur.rowcount == 1)

    def _b_write(self, conv: int, seq: int, op: str, index: int, payload: str) -> bool:
        s = self.schema
        conn = self._conn
        unique = self._pg.errors.UniqueViolation
        try:
            if op == "append":
                # One statement in autocommit: one round trip, atomic, committed on return.
                return bool(conn.execute(self._q_append, (conv, seq, index, payload)).rowcount == 1)
            if op == "state":
                return bool(conn.execute(self._q_state, (conv, seq, payload)).rowcount == 1)
            with conn.transaction() as tx:
                ok = (
                    conn.execute(
                        f"UPDATE {s}.conversations SET seq = seq + 1 WHERE id = %s AND seq = %s",
                        (conv, seq),
                    ).rowcount
                    == 1
                )
                ok = (
                    ok
                    and conn.execute(
                        f"UPDATE {s}.turns SET record = %s WHERE conv = %s AND idx = %s",
                        (payload, conv, index),
                    ).rowcount
                    == 1
                )
                if not ok:
                    raise self._pg.Rollback(tx)
                # The snapshot holds the redacted words' stems: it goes with them.
                conn.execute(f"DELETE FROM {s}.snapshots WHERE conv = %s", (conv,))
            return bool(ok)
        except unique:
            return False  # a turn with that index exists: another writer's

    def _b_exists(self, conv: int) -> bool:
        with self._lock:
            return (
                self._conn.execute(
                    f"SELECT 1 FROM {self.schema}.conversations WHERE id = %s", (conv,)
                ).fetchone()
                is not None
            )

    def _b_names(self, user: str | None) -> list[str]:
        s = self.schema
        with self._lock:
            if user is None:
                cur = self._conn.execute(f"SELECT name FROM {s}.conversations ORDER BY name")
            else:
                cur = self._conn.execute(
                    f"SELECT name FROM {s}.conversations WHERE user_id = %s ORDER BY name", (user,)
                )
            return [str(r[0]) for r in cur.fetchall()]

    def _b_delete(self, *, name: str | None = None, user: str | None = None) -> int:
        s = self.schema
        column, value = ("name", name) if name is not None else ("user_id", user)
        with self._lock, self._conn.transaction():
            conn = self._conn
            ids = [
                r[0]
                for r in conn.execute(
                    f"DELETE FROM {s}.conversations WHERE {column} = %s RETURNING id", (value,)
                ).fetchall()
            ]
            if ids:
                conn.execute(f"DELETE FROM {s}.turns WHERE conv = ANY(%s)", (ids,))
                conn.execute(f"DELETE FROM {s}.state WHERE conv = ANY(%s)", (ids,))
                conn.execute(f"DELETE FROM {s}.snapshots WHERE conv = ANY(%s)", (ids,))
        return len(ids)

    def _purge_or_warn(self, call: str) -> None:
        # VACUUM FULL locks the tables exclusively while it rewrites them: never implicit on a
        # database that other servers share.  Call purge() in a maintenance window instead.
        return

    def _b_purge(self) -> bool:
        s = self.schema
        self._conn.execute(f"VACUUM FULL {s}.turns, {s}.state, {s}.snapshots, {s}.conversations")
        return True

    def _b_close(self) -> None:
        self._conn.close()
