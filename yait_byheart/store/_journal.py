"""The journal a store attaches to each Memory it opens (`yait_byheart.protocols.SharedJournal`).

The store is the truth and a bound Memory follows it.  The journal remembers the
conversation's sequence number as of the last rows the Memory saw: every append, redaction
and repair bumps it, so a Memory that knows `turns` turns as of `seq` finds what it missed by
reading the rows from `turns` on, and looks for redactions only when the rows do not account
for the whole bump.
"""

from __future__ import annotations

import contextlib
import json
import math
import warnings
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..protocols import StoredTurns
from ._core import StoreCore
from ._errors import SelectionNotSavedWarning, StoreFullError, StoreReadOnlyError

if TYPE_CHECKING:
    from ..memory import Memory

_APPEND, _REDACT, _COMPOSE = "Memory.append", "Memory.redact", "Memory.compose"
# Where the store refuses every write: a cache that cannot be saved is skipped, not fatal.
_UNWRITABLE = (StoreReadOnlyError, StoreFullError)


def snapshot_due(lacking: int, stretches: int, at_most: int) -> bool:
    """Whether a conversation of `stretches` closed stretches, whose stored index snapshot
    lacks `lacking` of them, should have it written again.

    Every reopening indexes what the snapshot lacks, and writing it again costs about a fifth
    of indexing every stretch (docs/benchmarks.md, "Speed"). When each reopening follows a
    few new stretches (a request per exchange: about 6), what the reopenings pay grows as the
    square of what is lacking, and it matches the cost of one more write once about sqrt(2n)
    of n stretches are lacking: written then, as a ski-rental rule buys when the rent paid
    reaches the price. `at_most` bounds it for long conversations.

    >>> [snapshot_due(lacking, 1_500, 1_000) for lacking in (0, 53, 54)]
    [False, False, True]
    """
    return lacking >= max(1, min(at_most, math.isqrt(2 * stretches)))


def dumps(obj: object) -> str:
    # Compact and strict: rows are concatenated into one JSON array on reopen.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Journal:
    """What a bound Memory calls, under its own lock, before a mutating call returns."""

    __slots__ = ("__weakref__", "_conv", "_held", "_memory", "_name", "_seq", "_store",
                 "snapshot_units")  # fmt: skip

    def __init__(self, store: StoreCore, name: str, conv: int, seq: int, memory: Memory) -> None:
        self._store = store
        self._name = name
        self._conv = conv
        self._seq = seq  # the conversation's seq as of the rows the Memory has seen
        self._memory = weakref.ref(memory)
        # While the Memory appends under `follow(hold=True)`: the open transaction, and the
        # seq it will leave once committed.
        self._held: tuple[Any, int] | None = None
        # Stretches covered by the stored index snapshot (0: none stored).
        self.snapshot_units = 0

    def save_snapshot(self, *, at_most: int) -> None:
        """Store the index snapshot if the stored one lacks enough stretches (`snapshot_due`;
        `at_most`: enough whatever the conversation's length)."""
        mem = self._memory()
        if mem is None:
            return
        if not snapshot_due(mem.stretch_count - self.snapshot_units, mem.stretch_count, at_most):
            return
        # Taken before the sequence number: a write in between only makes it a valid prefix.
        data = mem.index_snapshot(layout=True)
        seq = self._seq
        # Written only if no other writer changed the conversation meanwhile (seq unchanged):
        # then these rows are exactly what the snapshot was built from.
        with contextlib.suppress(*_UNWRITABLE), self._store._failing("the index snapshot"):
            if self._store._b_snapshot(self._conv, seq, data):
                self.snapshot_units = mem.stretch_count

    @contextlib.contextmanager
    def follow(self, turns: int, *, hold: bool = False) -> Iterator[StoredTurns]:
        """What other writers stored since (see `SharedJournal.follow`)."""
        store = self._store
        if not hold:
            call = f"Memory (bound to {type(store).__name__})"
            store._check_open(call)
            with store._failing(call):
                seq, stored = store._b_since(self._name, self._conv, self._seq, turns)
            yield stored
            self._seq = seq
            return
        call = f"{_APPEND} (bound to {type(store).__name__})"
        with store._failing(call), store._b_holding(call) as conn:
            seq, stored = store._b_since(self._name, self._conv, self._seq, turns, conn)
            self._held = (conn, seq)
            try:
                yield stored
                seq = self._held[1]
            finally:
                self._held = None
        self._seq = seq  # committed

    def turn_appended(self, index: int, record: dict[str, Any]) -> bool:
        store = self._store
        call = f"{_APPEND} (bound to {type(store).__name__})"
        if self._held is not None:
            conn, seq = self._held
            with store._failing(call):
                store._b_append_held(conn, self._conv, index, dumps(record))
            self._held = (conn, seq + 1)
            return True
        store._check_open(call)
        with store._failing(call):
            appended = store._b_append_if(self._conv, self._seq, index, dumps(record))
        if not appended:
            return False
        self._seq += 1
        return True

    @property
    def tries(self) -> int:
        """Appends tried without holding the conversation (`SharedJournal.tries`)."""
        return self._store._dialect.unlocked_tries

    def turn_redacted(self, index: int, record: dict[str, Any]) -> None:
        call = f"{_REDACT} (bound to {type(self._store).__name__})"
        with self._store._failing(call):
            self._store._b_rewrite(call, self._name, self._conv, index, dumps(record))
        # Counted as seen: other writers' bumps stay unexplained, so they are still looked for.
        self._seq += 1
        self.snapshot_units = 0  # the rewrite deleted it

    def state_changed(self, state: dict[str, Any]) -> None:
        """Store the sticky selection; a store that refuses writes gets a warning, not an
        error: for the caller a compose is a read, and the selection is a cache."""
        store = self._store
        call = f"{_COMPOSE} (bound to {type(store).__name__})"
        try:
            with store._failing(call):
                if store._b_state(call, self._name, self._conv, dumps(state)):
                    return
            why = (
                f"{store._label()}: {call}: another process holds the store's write lock, "
                f"and a compose does not wait for a writer"
            )
        except _UNWRITABLE as exc:
            why = str(exc)
        warnings.warn(
            f"{why} (the messages were composed; only the sticky selection, a cache, "
            f"was not saved)",
            SelectionNotSavedWarning,
            stacklevel=3,
        )
