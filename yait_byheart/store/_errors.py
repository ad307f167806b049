"""The stores' own exceptions (importable from ``yait_byheart.store``)."""

from __future__ import annotations


class StoreConflictError(RuntimeError):
    """Another writer changed (or deleted) the conversation since this Memory was opened."""


class UnknownConversationError(ValueError, KeyError):
    """No conversation with that id is stored (a ValueError, and a KeyError for ``except``)."""

    def __str__(self) -> str:
        # KeyError's __str__ would print the message inside quotes.
        return str(self.args[0]) if self.args else ""


class DamagedRowError(ValueError):
    """A stored row cannot be read: bad JSON, bytes that are not text, a record that is not a
    turn, or a missing turn.  Names the store, the conversation and the row; nothing was
    changed, and other conversations stay readable.  ``byheart check`` lists such rows and
    ``byheart repair`` sets them aside (kept, never deleted) so the rest opens."""

    def __init__(
        self, store: str, conversation: str, table: str, row: int | None, problem: str
    ) -> None:
        where = f"{table} row {row}" if row is not None else f"its {table} row"
        super().__init__(
            f"{store}: conversation {conversation!r}, {where} is damaged ({problem}); nothing "
            f"was changed. `byheart check` (store.check()) lists every damaged row and "
            f"`byheart repair` (store.repair()) sets them aside, kept, so the rest opens"
        )
        self.store, self.conversation, self.table, self.row = store, conversation, table, row
        self.problem = problem

    def __reduce__(self) -> tuple[type, tuple[str, str, str, int | None, str]]:
        # Rebuilt from its parts, not its message (for pickling across processes).
        return type(self), (self.store, self.conversation, self.table, self.row, self.problem)


class StoreError(RuntimeError):
    """The database under a store failed: one line naming the store, what is wrong and what to
    do.  ``retry`` is True only where trying the same call again can succeed (a lock held past
    the timeout, a lost connection); the subclasses name the conditions an operator meets."""

    retry = False


class StoreUnavailableError(StoreError):
    """Locked by another writer past the timeout, or the connection to the server was lost
    (a `PostgresStore` reconnects at its next call): try again."""

    retry = True


class StoreReadOnlyError(StoreError):
    """The store refuses writes (a read-only file, folder or database role); reads still work,
    and ``compose`` composes without saving its selection (`SelectionNotSavedWarning`)."""


class StoreFullError(StoreError):
    """The disk (or the database's size limit) is full; the change was not stored."""


class StoreCorruptError(StoreError):
    """The database file itself is damaged (not one row: its pages, or its header); ``byheart
    check`` lists what is still readable.  Restore a backup, or copy every turn that still
    reads into a new store: ``byheart salvage DAMAGED --store NEW`` (`salvage`)."""


class StoreNotFoundError(StoreError, FileNotFoundError):
    """The store's folder does not exist (also a FileNotFoundError)."""


class SelectionNotSavedWarning(RuntimeWarning):
    """``compose`` on a store that refuses writes (read-only or full), or whose write lock
    another process holds (a compose does not wait for a writer): the messages are returned as
    always, but the sticky selection (a cache) was not stored, so another process that opens
    the conversation selects afresh."""


# Their public home, for tracebacks and pickling.
for _error in (
    StoreConflictError, UnknownConversationError, DamagedRowError, StoreError,
    StoreUnavailableError, StoreReadOnlyError, StoreFullError, StoreCorruptError,
    StoreNotFoundError, SelectionNotSavedWarning,
):  # fmt: skip
    _error.__module__ = "yait_byheart.store"
