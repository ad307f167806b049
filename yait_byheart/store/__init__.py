"""A durable store for [`Memory`][yait_byheart.Memory]: one row per turn, many conversations.

``Memory.to_dict()`` rewrites the whole history on every save (megabytes per turn at 100,000
turns).  A store instead journals each change as it happens: an appended turn is one INSERT, a
redaction rewrites one row, a changed sticky selection upserts one row.  Reopening reads the rows
back and rebuilds the Memory with ``Memory.from_dict``, so ``compose`` after reopening gives the
same output it would have given before closing.

* [`SQLiteStore`][] -- stdlib ``sqlite3``, WAL, one file, many processes on one machine.
* [`PostgresStore`][] -- the same interface through psycopg 3 (``pip install -e
  ".[postgres]"`` from a clone), for servers that share one database.

Examples:
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
enough stretches, and on ``close`` for each bound Memory whose snapshot lacks enough of them
(about the square root of twice its stretches, at most ``SNAPSHOT_EVERY``; a store still open
when the process ends is closed then); reopening loads it and indexes only the stretches
after it.  It also carries the conversation's layout (each turn's cuts and measured sizes),
so reopening measures no turn it holds again.  A snapshot is derived data: a redaction
deletes it in the same transaction (it holds the redacted words' stems), and one that does not
match the rows is ignored, never trusted.

The store is the truth and a bound Memory follows it: before it appends, composes or redacts,
it reads the turns other processes (or other Memories) stored since it last looked -- only the
rows after the last it knows -- and applies them.  Appends are serialized by the database, each
at the next index, so any number of writers share one conversation and none has to reopen.
``append(..., key=...)`` makes a retried append store nothing twice.  The sticky selection is
each process's cache: written without a conflict check, and discarded on reopening when it was
chosen under other settings.  No lock is held between calls, so a process killed
mid-conversation leaves nothing to clean up.

A row that cannot be read raises [`DamagedRowError`][] naming the store, conversation and
row; `check` lists every such row and `repair` sets them aside (kept) so the rest
opens.

When the database itself fails (a damaged file, read-only, full, locked past the timeout, the
connection lost) the store raises a [`StoreError`][] subclass in one line naming the store,
what is wrong and what to do; its ``retry`` says whether trying again can help.  A read-only
store still answers reads, and ``compose`` on it warns ([`SelectionNotSavedWarning`][]) that
its sticky selection, a cache, was not saved.

Embeddings that a retriever computed are kept beside the rows: ``store.vectors(conversation,
name)`` is a mapping from a content hash to a float32 vector (see docs/store.md).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import re
import sqlite3
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .._dates.resolve import parse_when
from .._record.load import collector_paused
from .._turns.ingest import question, read_when, when_label
from . import _files
from ._core import Loaded, StoreCore, clearly
from ._dialects import Dialect, PostgresDialect
from ._errors import (
    DamagedRowError,
    SelectionNotSavedWarning,
    StoreConflictError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreNotFoundError,
    StoreReadOnlyError,
    StoreUnavailableError,
    UnknownConversationError,
)
from ._failures import salvage_advice
from ._journal import Journal, dumps
from ._recall import Over, Recalled, Recaller, RecallSource, check_retriever
from ._rows import (
    Damage,
    head_problem,
    joined_records,
    loads,
    parse_turns,
    state_problem,
    turn_damage,
)
from ._salvage import PLACEHOLDER, Salvaged, read_damaged, record
from ._sql import SCHEMA_VERSION
from ._vectors import StoredVectors

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = [
    "SCHEMA_VERSION",
    "Damage",
    "DamagedRowError",
    "PostgresStore",
    "RecallSource",
    "Recalled",
    "SQLiteStore",
    "Salvaged",
    "SelectionNotSavedWarning",
    "StoreConflictError",
    "StoreCorruptError",
    "StoreError",
    "StoreFullError",
    "StoreNotFoundError",
    "StoreReadOnlyError",
    "StoreUnavailableError",
    "StoredVectors",
    "UnknownConversationError",
]

#: Stretches re-indexed on reopening (or added since the last snapshot) that always make the
#: store write a new index snapshot (fewer do in shorter conversations: `snapshot_due`):
#: 1,000 stretches re-index in about 0.05 s.
SNAPSHOT_EVERY = 1_000
# SQLite's busy_timeout is an int of milliseconds: about 24 days at most.
_LONGEST_WAIT = 2_000_000
_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")
_PG_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# What `repair` leaves in place of a turn row it set aside: a blank, redacted turn, so the
# turns after it keep their indices (and Memories that held the turn blank it too).
_PLACEHOLDER = dumps(PLACEHOLDER)
_S = TypeVar("_S", bound="_Store")


def _memory_class() -> type[Memory]:
    # Imported late so that importing the store never imports more than it needs.
    from ..memory import Memory

    return Memory


def _default_head() -> dict[str, Any]:
    """A new Memory's stored head (format, version, default settings)."""
    data = _memory_class()().to_dict()
    return {k: v for k, v in data.items() if k not in ("turns", "state")}


def _check_source(call: str, path: object, own: str) -> str:
    """`salvage`'s damaged file: an existing file, not this store's own."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{call}: path must be a str or path, got {type(path).__name__}")
    source = os.path.expanduser(os.fspath(path))
    if not os.path.isfile(source):
        raise ValueError(f"{call}({source!r}): no such file; pass the damaged store's path")
    if own and os.path.exists(own) and os.path.samefile(source, own):
        raise ValueError(
            f"{call}({source!r}): that is this store's own file; salvage into a new store"
        )
    return source


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


def _check_exclude(call: str, exclude: object) -> tuple[str, ...]:
    """Conversation ids to leave out: one id, or a sequence of them."""
    if isinstance(exclude, str):
        return (exclude,)
    if isinstance(exclude, (list, tuple, set, frozenset)) and all(
        isinstance(name, str) for name in exclude
    ):
        return tuple(exclude)
    raise TypeError(f"{call}: exclude must be a conversation id or a list of them")


def _recall_args(
    call: str, user: Any, exclude: Any, budget: Any, when: Any, retriever: Any
) -> tuple[str | None, tuple[str, ...]]:
    """`recall`'s and `recall_source`'s arguments checked: the user and the excluded names."""
    user = _check_user(call, user)
    names = _check_exclude(call, exclude)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"{call}: budget must be an int >= 1 (characters), got {budget!r}")
    if when_label(call, when):  # None or "": no date
        read_when(call, when, memory=False)
    check_retriever(call, retriever)
    return user, names


def _check_dates(mem: Any, turns: list[Any]) -> None:
    """Refuse a turn dated with a label `mem.append` would refuse ("32 May 2023"), as append
    does: with `resolve_time` on, a turn's `when` must be a date."""
    if not mem.resolve_time:
        return  # free-form labels are what such a Memory keeps
    labels = {t.get("when") for t in turns if isinstance(t, dict)}  # few distinct: read once
    for label in sorted(w for w in labels if isinstance(w, str) and w.strip()):
        if parse_when(label, mem.date_order) is None:
            first = next(i for i, t in enumerate(turns) if t.get("when") == label)
            raise ValueError(
                f"turn {first} has when={label!r}, which is not a date append takes (e.g. "
                "'8 May 2023' or an ISO date); fix it, or export from a Memory built with "
                "resolve_time=False to keep free-form labels"
            )


def _give_cache(store: _Store, conversation: str, retriever: object) -> None:
    """Hand a retriever that declares a `name` and has no `cache` yet the stored vectors."""
    name = getattr(retriever, "name", None)
    if isinstance(name, str) and name and getattr(retriever, "cache", False) is None:
        retriever.cache = store.vectors(conversation, name)  # type: ignore[attr-defined]


def _check_timeout(call: str, timeout: object) -> None:
    """Seconds to wait for a lock: a finite number from 0 to `_LONGEST_WAIT` (NaN would
    otherwise fail deep in SQLite's own conversion, and SQLite counts milliseconds in an int)."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 <= timeout <= _LONGEST_WAIT  # False for NaN; no float() of a huge int
    ):
        raise ValueError(
            f"{call}: timeout must be a finite number of seconds from 0 to {_LONGEST_WAIT:,} "
            f"(how long a write waits for another process's lock), got {timeout!r}"
        )


class _Store(StoreCore):
    """The interface shared by both stores; the database work is `StoreCore`'s."""

    def __init__(self) -> None:
        super().__init__()
        self._journals: weakref.WeakSet[Journal] = weakref.WeakSet()
        self._recaller = Recaller()
        self._pid = os.getpid()  # a forked child must not close its parent's connection
        _UNCLOSED.add(self)

    # -- public interface ---------------------------------------------------------------------

    @clearly
    def open(
        self, conversation: str, *, user: str | None = None, create: bool = True, **settings: Any
    ) -> Memory:
        """The Memory of ``conversation``, bound to this store; created if absent.

        ``settings`` are Memory constructor settings.  For a new conversation they are stored
        (the JSON-safe part, as ``Memory.to_dict()["config"]``); for an existing one they
        override the stored settings for this Memory only, as ``Memory.from_dict`` does (pass
        callables such as ``retriever`` or ``measure`` again on every open).  ``user`` is
        recorded on creation; on reopening it must match.  ``create=False`` raises
        [`UnknownConversationError`][] instead of creating.  A ``retriever`` with a str
        attribute ``name`` and an attribute ``cache`` that is None is given
        ``store.vectors(conversation, retriever.name)`` as its cache, before the Memory is built.

        The Memory follows the store: before each append, compose and redaction it applies what
        other processes (or other opens) stored since, and its appends take the next index.
        A stored sticky selection chosen under other settings is discarded, not trusted.
        """
        call = f"{self._kind}.open"
        name = _check_id(call, conversation)
        user = _check_user(call, user)
        self._check_open(call)
        _give_cache(self, name, settings.get("retriever"))
        # One collector pass after reading the rows and building the Memory from them, not
        # one over the rows and another over all of it (each over 100,000s of objects).
        with collector_paused():
            loaded = self._read(name)
            if loaded is None:
                if not create:
                    raise self._unknown(call, name)
                mem = self._create(call, name, user, settings)
                if mem is not None:
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
            mem = self._rebuild(name, loaded, settings)
        journal = Journal(self, name, loaded.conv, loaded.seq, mem)
        journal.snapshot_units = mem.snapshot_stretches
        self._bind(mem, journal)
        journal.save_snapshot(at_most=SNAPSHOT_EVERY)
        return mem

    def _read(self, name: str) -> Loaded | None:
        """The conversation with its turn records, read in one row where the dialect can,
        else row by row (then as the rows are, so that a damaged one is named)."""
        loaded = self._b_load(name, joined=True)
        if loaded is None or loaded.joined is None:
            return loaded
        loaded.records, loaded.joined = joined_records(*loaded.joined), None
        return self._b_load(name) if loaded.records is None else loaded

    def _rebuild(self, name: str, loaded: Loaded, settings: dict[str, Any]) -> Memory:
        """The Memory the rows describe, with `settings` overriding the stored ones.

        The sticky state is a cache: if the Memory cannot be built with it (a context an older
        version stored under other settings), it is built without it rather than not at all.
        """
        with collector_paused():  # the rows parsed and the turns built: no cycles among them
            data = self._assemble(name, loaded)
            build = _memory_class().from_dict
            try:
                mem = build(data, index_snapshot=loaded.snapshot, **settings)
            except ValueError:
                rows = loaded.turns
                if loaded.records is not None:  # read in one row: now row by row
                    again = self._b_load(name)
                    rows = [] if again is None else again.turns
                for damage in turn_damage(name, rows):  # a turn that is not one: name it
                    raise damage.error(self._label()) from None
                if "state" not in data:
                    raise
                del data["state"]
                mem = build(data, index_snapshot=loaded.snapshot, **settings)
            # Dropped before the collector runs again, so that its first pass (over everything
            # built while it was paused) need not walk every row and record too.
            del data
            loaded.turns, loaded.records = [], None
        return mem

    def _create(
        self, call: str, name: str, user: str | None, settings: dict[str, Any]
    ) -> Memory | None:
        """A new Memory stored as conversation `name`; None if another writer created it first."""
        mem = _memory_class()(**settings)
        data = mem.to_dict()
        head = {k: v for k, v in data.items() if k not in ("turns", "state")}
        if data.get("turns"):
            raise ValueError(f"{call}: a new Memory already holds turns; cannot store it")
        created = self._b_create(name, user, dumps(head), [], dumps(data.get("state")))
        if created is None:
            return None
        conv, seq = created
        self._bind(mem, Journal(self, name, conv, seq, mem))
        return mem

    def _bind(self, mem: Memory, journal: Journal) -> None:
        mem.attach_journal(journal)
        with self._lock:
            self._journals.add(journal)

    @clearly
    def conversations(self, *, user: str | None = None) -> list[str]:
        """Ids of the stored conversations (of ``user`` when given), sorted."""
        call = f"{self._kind}.conversations"
        user = _check_user(call, user)
        self._check_open(call)
        return self._b_names(user)

    @clearly
    def export(self, conversation: str) -> dict[str, Any]:
        """The conversation as ``Memory.to_dict()`` gives it (JSON-safe), read in one snapshot."""
        call = f"{self._kind}.export"
        name = _check_id(call, conversation)
        self._check_open(call)
        loaded = self._b_load(name)
        if loaded is None:
            raise self._unknown(call, name)
        return self._assemble(name, loaded)

    @clearly
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
            mem = _memory_class().from_dict(dict(data))
            _check_dates(mem, turns)
            snapshot = mem.index_snapshot(layout=True)
            head = dumps({k: v for k, v in data.items() if k not in ("turns", "state")})
            rows = [dumps(t) for t in turns]
            state = dumps(data["state"]) if "state" in data else None
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"{call}({name!r}): data is not a valid Memory.to_dict(): {exc}"
            ) from exc
        if self._b_create(name, user, head, rows, state, snapshot) is None:
            raise ValueError(
                f"{call}({name!r}): that conversation already exists; "
                f"store.delete({name!r}) first or choose another id"
            )

    @clearly
    def delete(self, conversation: str) -> None:
        """Delete the conversation and purge its bytes (see `purge`)."""
        call = f"{self._kind}.delete"
        name = _check_id(call, conversation)
        self._check_open(call)
        deleted, left = self._b_delete(name=name)
        if deleted == 0:
            raise self._unknown(call, name)
        self._left_in_damage(call, left)
        self._purge_or_warn(call)

    @clearly
    def delete_user(self, user: str) -> int:
        """Delete every conversation of ``user``, purge their bytes; returns how many."""
        call = f"{self._kind}.delete_user"
        user_id = _check_id(call, user, "user")
        self._check_open(call)
        n, left = self._b_delete(user=user_id)
        if n:
            self._left_in_damage(call, left)
            self._purge_or_warn(call)
        return n

    def _left_in_damage(self, call: str, left: int) -> None:
        if left:
            warnings.warn(
                f"{self._label()}: {call}: deleted, but the rows of {left} conversation"
                f"{'s' * (left != 1)} sit in damaged pages of the file and could not be "
                f"overwritten; to be rid of their bytes, "
                f"{salvage_advice(str(getattr(self, 'path', '')))} (it leaves them out), "
                f"then delete this file",
                RuntimeWarning,
                stacklevel=3,
            )

    @clearly
    def recall(
        self, query: str, *, user: str | None, budget: int = 6_000,
        exclude: str | Sequence[str] = (), when: str | date | datetime | None = None,
        retriever: Any = None,
    ) -> list[Recalled]:  # fmt: skip
        """What ``user`` said in their stored conversations that matters for ``query``.

        Passages of their conversations, verbatim, best first, within ``budget`` characters
        of text: each a `Recalled` with the conversation id, the turn indexes, when it was
        said and its score.  Ranked as compose ranks one conversation (see docs/store.md,
        "Recall across conversations").  Only ``user``'s conversations are read;
        ``user=None`` (a conversation without a user) recalls nothing.  ``exclude``:
        conversation ids left out (the one asking), not even read (without a ``retriever``).
        ``when``: the date relative dates in the query are read against ("last weekend");
        None or "" leaves them unread.  The query and ``when`` are read and refused as
        `Memory.compose` reads and refuses them (a blank query, a lone surrogate, a date it
        cannot read).  What `delete`, `delete_user` and a redaction took out, by any
        process, is never returned.  ``retriever``: an incremental retriever (e.g.
        `yait_byheart.semantic.Hybrid`) fused into the ranking as compose fuses one; the
        store feeds it ``user``'s stretches alone, so pass one object per user.
        """
        return self._recalled(query, user, budget, exclude, when, retriever)

    def _recalled(
        self, query: str, user: str | None, budget: int, exclude: str | Sequence[str],
        when: str | date | datetime | None, retriever: Any, over: Over | None = None,
    ) -> list[Recalled]:  # fmt: skip
        """`recall`, and for a `RecallSource`, filled again with less room while `over`."""
        call = f"{self._kind}.recall"
        asked = question(call, query, when, memory=False)  # read as compose reads one
        user, names = _recall_args(call, user, exclude, budget, when, retriever)
        self._check_open(call)
        if user is None:
            return []
        return self._recaller.recall(
            self, asked.shown, user, budget, names, retriever, call, over
        )  # fmt: skip

    def recall_source(
        self, *, user: str | None, exclude: str | Sequence[str] = (), budget: int = 6_000,
        when: str | date | datetime | None = None, retriever: Any = None,
    ) -> RecallSource:  # fmt: skip
        """``user``'s other conversations as ``Memory(external=...)`` material (rule 4).

        ``store.open(conv, user=u, external=store.recall_source(user=u, exclude=conv))``:
        each compose offers what `recall` finds for its query (at most ``budget``
        characters); it is sent only when it outscores the conversation's own best stretch,
        after the conversation, framed as material naming the conversation and its date.
        ``retriever``: as for `recall` (one object per user).
        """
        call = f"{self._kind}.recall_source"
        user, names = _recall_args(call, user, exclude, budget, when, retriever)
        return RecallSource(self._recalled, user, names, budget, when, retriever)

    def vectors(self, conversation: str, name: str) -> StoredVectors:
        """The embeddings embedder ``name`` computed for ``conversation``, as a mapping.

        A ``MutableMapping[str, list[float]]`` (``yait_byheart.protocols.VectorCache``) from a
        content hash the caller computes to a vector, stored as float32 (about 7 significant
        digits); ``get_many(keys)`` returns the keys present, ``set_many(items)`` writes in one
        transaction.  Writing needs the conversation to exist (``open`` creates it); ``delete``
        and ``delete_user`` delete its vectors with it.
        """
        call = f"{self._kind}.vectors"
        conversation = _check_id(call, conversation)
        name = _check_id(call, name, "embedder name")
        self._check_open(call)
        return StoredVectors(self, conversation, name)

    @clearly
    def check(self) -> list[Damage]:
        """Every stored row that cannot be read, in every conversation; nothing is changed.

        A `Damage` names the conversation, the table (``turns``; ``state``, the sticky
        selection; ``conversations``, the stored settings), the turn index for a turn row, and
        the problem: not UTF-8 text, not JSON, not a turn record, or a turn missing.  A damaged
        database file (pages, not rows) is table ``file``: for each conversation it keeps from
        being read, and once with conversation ``""`` for what SQLite's own check finds.
        """
        call = f"{self._kind}.check"
        self._check_open(call)
        found: list[Damage] = []
        try:
            names = self._b_names(None)
        except self._db_errors as exc:
            return [self._file_damage("", exc)]  # not even the list of conversations reads
        for name in names:
            try:
                loaded = self._b_load(name)
            except self._db_errors as exc:
                found.append(self._file_damage(name, exc))
                continue
            if loaded is not None:  # None: deleted while we looked
                found += self._damage(name, loaded)
        found += [Damage("", "file", None, p) for p in self._dialect.integrity(self._conn)]
        return found

    def _file_damage(self, name: str, exc: Exception) -> Damage:
        """A damaged file where conversation `name` is kept; any other error is raised."""
        if self._dialect.kind(exc) != "corrupt":
            raise exc
        detail = " ".join(str(exc).split())
        return Damage(name, "file", None, f"the database file is damaged here ({detail})")

    @clearly
    def repair(self) -> list[Damage]:
        """Set every damaged row aside so that its conversation opens again; returns them.

        Nothing is deleted: each damaged row's stored bytes are moved to the ``quarantine``
        table with the problem found.  A turn row is replaced by a blank, redacted turn (the
        turns after it keep their indices), a damaged state row is dropped (it is a cache), a
        damaged head gets the default settings, a missing turn a blank one.  Memories that
        other processes hold blank those turns at their next call.
        """
        call = f"{self._kind}.repair"
        self._check_open(call)
        found = self.check()
        broken = [d for d in found if d.table == "file"]
        if broken:  # writing into damaged pages could spread the damage: touch nothing
            raise self._failure(call, ValueError("repair cannot mend a damaged file"), "corrupt")
        head = dumps(_default_head())
        by_name: dict[str, list[Damage]] = {}
        for damage in found:
            by_name.setdefault(damage.conversation, []).append(damage)
        for name, damages in by_name.items():
            self._b_set_aside(name, damages, _PLACEHOLDER, head)
        return found

    @clearly
    def salvage(self, path: str | os.PathLike[str]) -> list[Salvaged]:
        """Copy every turn the damaged store file at ``path`` still holds into this store.

        For a file that `check` reports damaged (or that no longer opens: truncated, its
        header overwritten).  ``path`` is only read: it is copied to a private folder first.
        Each conversation it still names is imported with its user and settings (the
        defaults where they do not read); a turn that does not read becomes a blank,
        redacted turn, so the others keep their indexes.  Refused, with nothing copied, when
        this store already holds a conversation of the same id: salvage into a new store.
        Returns what was copied, a `Salvaged` per conversation, lost turns named.
        """
        call = f"{self._kind}.salvage"
        self._check_open(call)
        source = _check_source(call, path, str(getattr(self, "path", "")))
        found = list(read_damaged(source))
        taken = sorted(set(self._b_names(None)) & {name for name, *_ in found})
        if taken:
            raise ValueError(
                f"{call}({source!r}): this store already holds {', '.join(map(repr, taken))}; "
                f"nothing was copied; salvage into a new store"
            )
        out = []
        for name, user, head, rows in found:
            data, lost = record(_default_head() if head is None else loads(head), rows)
            self.import_(name, data, user=user)
            out.append(Salvaged(name, user, len(data["turns"]) - len(lost), lost, head is None))
        return out

    @clearly
    def quarantined(self, conversation: str) -> list[tuple[str, int | None, str]]:
        """What `repair` set aside of ``conversation``: (table, row, problem) each."""
        call = f"{self._kind}.quarantined"
        name = _check_id(call, conversation)
        self._check_open(call)
        return self._b_quarantined(name)

    def _damage(self, name: str, loaded: Loaded) -> list[Damage]:
        found: list[Damage] = []
        problem = head_problem(loaded.head)
        if problem is not None:
            found.append(Damage(name, "conversations", None, problem))
        found += turn_damage(name, loaded.turns)
        problem = None if loaded.state is None else state_problem(loaded.state)
        if problem is not None:
            found.append(Damage(name, "state", None, problem))
        return found

    @clearly
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
                journal.save_snapshot(at_most=SNAPSHOT_EVERY)
        with self._lock:
            closing = not self._closed
            if closing:
                self._closed = True
                self._b_close()
                _UNCLOSED.discard(self)
        if closing:  # outside the store lock: a recall holds an index's lock, then asks for it
            self._recaller.forget()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _assemble(self, name: str, loaded: Loaded) -> dict[str, Any]:
        """The rows as a `to_dict()` record; DamagedRowError naming a row that cannot be read.

        Rows are contiguous 0..n-1 by construction; a missing one means outside tampering, and
        rebuilding a shifted history would silently misattribute turns.  A state row that is
        not JSON is left out: it is a cache, rebuilt by the next compose.
        """
        label = self._label()
        problem = head_problem(loaded.head)
        if problem is not None:
            raise Damage(name, "conversations", None, problem).error(label)
        data: dict[str, Any] = loads(loaded.head)
        if loaded.records is not None:  # read by `_read`
            data["turns"] = loaded.records
        else:
            data["turns"] = parse_turns(label, name, loaded.turns)
        if loaded.state is not None and state_problem(loaded.state) is None:
            data["state"] = loads(loaded.state)  # absent only if imported data had no state
        return data


# Stores not closed yet. A process that ends without closing one closes it then (`_close_at_exit`),
# as `with` would have, so that the next process reopening its conversations loads an index
# snapshot instead of indexing them again (docs/store.md, "The index snapshot").
_UNCLOSED: weakref.WeakSet[_Store] = weakref.WeakSet()


@atexit.register
def _close_at_exit() -> None:
    # Non-daemon threads have been joined by now; a daemon thread may still be inside a call
    # holding a Memory's lock, and waiting for it could hang the exit: then nothing is done.
    if threading.active_count() > 1:
        return
    pid = os.getpid()
    for store in list(_UNCLOSED):
        if store._pid == pid:  # a store a forked child inherited is its parent's to close
            with contextlib.suppress(Exception):  # a cache: the exit must not fail for it
                store.close()


class SQLiteStore(_Store):
    """Conversations in one SQLite file (created if absent), in WAL mode.

    ``synchronous`` trades durability for append speed (see docs/store.md): with ``"NORMAL"``
    (the default) a committed turn survives a crash of the process, and may be lost only if the
    machine loses power before the next WAL checkpoint; ``"FULL"`` also survives power loss, at
    one fsync per append.  ``timeout`` is how long a write waits for another process's write.
    Deleted and redacted text is overwritten in the file (``secure_delete``) and the WAL is
    truncated after each deletion or redaction.  An empty file (0 bytes) at ``path`` is made a
    new store, as a missing one is (SQLite creates a new store's file empty before writing it,
    so a second process opening it at that moment finds 0 bytes); the command line's read
    commands refuse one.  On a filesystem mounted read-only the store opens for reading.
    """

    _kind = "SQLiteStore"

    def _label(self) -> str:
        return f"SQLiteStore({self.path!r})"

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
        _check_timeout("SQLiteStore", timeout)
        # "~/chats.db" from a config file: no shell expanded it (the command line does too).
        self.path = os.path.expanduser(os.fspath(path))
        if not self.path:
            raise ValueError(
                "SQLiteStore(''): an empty path would make SQLite keep a private temporary "
                "database, deleted with everything in it at close; pass a file path such as "
                "'chats.db' (a Memory() without a store keeps a conversation in memory only)"
            )
        where = f"SQLiteStore({self.path!r})"
        _files.check_path(where, self.path)
        self._dialect = Dialect()
        self._dialect.timeout = float(timeout)
        if self.path != ":memory:" and not self.path.startswith("file:"):
            self._where = "sqlite:" + os.path.realpath(self.path)
        # On a read-only filesystem the store opens for reading, as a read-only file does.
        self._frozen = _files.read_only_filesystem(self.path)
        try:
            self._conn = _files.connect(where, self.path, timeout, self._frozen)
            self._conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        except sqlite3.Error as exc:
            raise _files.unopenable(where, exc) from exc
        try:
            self._setup(where)
            self._conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            # Zero the bytes of deleted rows instead of only unlinking them from the b-tree.
            self._conn.execute("PRAGMA secure_delete = ON")
        except BaseException as exc:
            self._conn.close()
            self._closed = True
            if isinstance(exc, sqlite3.Error):
                raise self._opening_failure(where, exc) from exc
            raise

    def _opening_failure(self, where: str, exc: sqlite3.Error) -> Exception:
        """The error for a file that failed to open: damaged (truncated, its pages broken),
        refused by the filesystem, or the store's own error for the condition."""
        if self._dialect.kind(exc) == "corrupt":  # a truncated file, a broken page
            return self._failure("opening it", exc)
        if not isinstance(exc, sqlite3.OperationalError) or "unable to open" in str(exc):
            return _files.unopenable(where, exc)
        return self._failure("opening it", exc)

    def _failure(self, call: str, exc: BaseException, kind: str = "") -> StoreError:
        kind = kind or self._dialect.kind(exc)
        if self._frozen and kind == "read-only":
            kind = "read-only filesystem"  # the fix is the mount, not the file's mode
        return super()._failure(call, exc, kind)


class PostgresStore(_Store):
    """Conversations in a PostgreSQL database, in their own schema (default ``byheart``).

    Needs psycopg 3: ``pip install -e ".[postgres]"`` from a clone.  Each append is one statement
    in its own transaction, so it is committed before ``append`` returns; how durable a commit
    is follows the server's ``synchronous_commit``.  Writers to different conversations never
    wait for each other (row locks); the store's tables live in ``schema``, which is created if
    absent.  Deleted rows are invisible at once but stay in the table files until
    `purge` (``VACUUM FULL``) rewrites them (see docs/store.md).
    """

    _kind = "PostgresStore"

    def _label(self) -> str:
        return f"PostgresStore(schema={self.schema!r})"

    def _revive(self) -> None:
        # A lost connection (a server restart, an idle timeout, pg_terminate_backend) fails
        # the call that met it (StoreUnavailableError: try again); the next call reconnects.
        with self._lock:
            if self._conn.broken:
                try:
                    self._conn = self._connect()
                except self._db_errors as exc:
                    raise self._failure("reconnecting", exc, "unreachable") from exc

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
                "PostgresStore needs psycopg 3: pip install 'psycopg[binary]>=3.1' "
                "(from a clone of byheart: pip install -e '.[postgres]')"
            ) from exc
        self.schema = schema
        self._dialect = PostgresDialect(psycopg, schema)
        self._where = f"postgres:{dsn}#{schema}"
        self._connect: Callable[[], Any] = lambda: psycopg.connect(
            dsn, autocommit=True, connect_timeout=max(1, int(connect_timeout))
        )
        try:
            self._conn = self._connect()
        except psycopg.Error as exc:
            raise self._failure("connecting", exc, "unreachable") from exc
        try:
            self._setup(f"PostgresStore(schema={schema!r})")
        except BaseException:
            self._conn.close()
            self._closed = True
            raise
