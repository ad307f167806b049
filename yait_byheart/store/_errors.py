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


# Their public home, for tracebacks and pickling.
for _error in (StoreConflictError, UnknownConversationError, DamagedRowError):
    _error.__module__ = "yait_byheart.store"
