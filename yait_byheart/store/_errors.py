"""The stores' own exceptions (importable from ``yait_byheart.store``)."""

from __future__ import annotations


class StoreConflictError(RuntimeError):
    """Another writer changed (or deleted) the conversation since this Memory was opened."""


class UnknownConversationError(ValueError, KeyError):
    """No conversation with that id is stored (a ValueError, and a KeyError for ``except``)."""

    def __str__(self) -> str:
        # KeyError's __str__ would print the message inside quotes.
        return str(self.args[0]) if self.args else ""


# Their public home, for tracebacks and pickling.
StoreConflictError.__module__ = UnknownConversationError.__module__ = "yait_byheart.store"
