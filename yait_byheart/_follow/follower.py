"""The turns a Memory holds, kept in step with its journal.

An append is staged (its index and layout decided without storing it), written to the
journal, then stored; a journal other writers share (a store's) is followed first, so the
Memory never acts on a stale conversation. Idempotency keys are kept here too: a key names
one turn, and a retry with it stores nothing.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._record import state as _state
from .._retrieval import snapshot
from .._turns.conversation import Conversation, Layout, restore
from .._turns.render import Turn
from ..protocols import Journal, SharedJournal, StoredTurns

# Longest idempotency key: item ids and hashes are far shorter; a key is kept in every record.
MAX_KEY = 1_000


@dataclass(slots=True)
class Staged:
    """A turn ready to store: its index and layout, decided without storing it."""

    index: int
    turn: Turn
    layout: Layout
    key: str | None

    @property
    def record(self) -> dict[str, Any]:
        """The turn as saved: built only for a journal, an append without one needs none."""
        return _state.turn_record(self.turn, self.layout.opens, self.layout.cuts, self.key)


def check_key(call: str, key: object) -> str | None:
    if key is None:
        return None
    if not isinstance(key, str):
        raise TypeError(f"{call}: key must be a str or None, got {type(key).__name__}")
    if not key or len(key) > MAX_KEY:
        raise ValueError(
            f"{call}: key must be 1 to {MAX_KEY:,} characters, got {len(key):,}; pass the "
            f"message's own id (an item id, a hash of the request) or None"
        )
    return key


def _excerpt(turn: Turn) -> str:
    text = turn.text if len(turn.text) <= 60 else turn.text[:57] + "..."
    return f"{turn.role}: {text!r}"


class Follower:
    """Stores a Memory's turns in its `Conversation` in step with the journal.

    `blank(index, turn)` is the Memory's own redaction, called for turns another writer
    redacted (it reaches the index and the kept context, which are the Memory's).
    """

    def __init__(self, conv: Conversation, blank: Callable[[int, Turn], None]) -> None:
        self._conv = conv
        # Held weakly: `blank` is a method of the Memory that owns this, and a strong reference
        # back made each Memory a cycle, freed only by a full collection of the cyclic
        # collector (which walks every object of the process), not as soon as it is dropped.
        self._blank = weakref.WeakMethod(blank)
        self.journal: Journal | None = None
        self.shared: SharedJournal | None = None  # the journal, if other writers share it
        self.keys: dict[str, int] = {}  # idempotency key -> turn index
        self.key_at: dict[int, str] = {}  # turn index -> its key, for the saved records
        self._contended = False  # another writer appended while this one waited, lately

    def attach(self, journal: Journal | None) -> None:
        self.journal = journal
        self.shared = journal if isinstance(journal, SharedJournal) else None

    # -- appending ---------------------------------------------------------------------------

    def add(self, call: str, turn: Turn, key: str | None, check: Callable[[], None]) -> int:
        """Store `turn` (journal first) and return its index, or the index `key` names."""
        if self.shared is not None:
            return self._add_shared(self.shared, call, turn, key, check)
        staged = self._stage(call, turn, key, check)
        if isinstance(staged, int):
            return staged
        if self.journal is not None:  # first: if the write fails, nothing has changed
            self.journal.turn_appended(staged.index, staged.record)
        self._store_turn(staged)
        return staged.index

    def _add_shared(
        self, journal: SharedJournal, call: str, turn: Turn, key: str | None,
        check: Callable[[], None],
    ) -> int:  # fmt: skip
        """Append through a journal other writers share: at the next index the store holds.

        Where the store makes it cheap (`journal.tries`), first as a conditional write that
        fails if another writer appended since this Memory last looked (then it catches up
        and tries again); at last with the conversation held, so that the append cannot be
        overtaken (when other writers are busy, after catching up without holding it, so
        that little is left to apply in there).
        """
        staged: int | Staged | None = None
        # Catch up first without holding the conversation only when other writers were busy
        # lately: alone, that read would be one more per append, and find nothing.
        early = not journal.tries and self._contended
        if not early:
            try:
                staged = self._stage(call, turn, key, check)
            except ValueError:
                staged = None  # perhaps valid after another writer's turns: decided with them
        for _attempt in range(journal.tries):
            if isinstance(staged, int):
                return staged  # the key is known, and keys are never reused
            if staged is not None and journal.turn_appended(staged.index, staged.record):
                self._store_turn(staged)
                return staged.index
            staged = self._caught_up(journal, call, turn, key, check)
        if early:
            staged = self._caught_up(journal, call, turn, key, check)
        if isinstance(staged, int):
            return staged
        return self._add_held(journal, call, turn, key, check, staged)

    def _add_held(
        self, journal: SharedJournal, call: str, turn: Turn, key: str | None,
        check: Callable[[], None], staged: Staged | None,
    ) -> int:  # fmt: skip
        """Append with the conversation held: after what other writers stored, at the next
        index (`staged`, decided before, holds unless they stored something)."""
        with journal.follow(len(self._conv), hold=True) as stored:
            self._contended = bool(stored)
            if stored or staged is None:
                self.apply(stored)
                restaged = self._stage(call, turn, key, check)
                if isinstance(restaged, int):
                    return restaged
                staged = restaged
            if not journal.turn_appended(staged.index, staged.record):
                raise RuntimeError(f"{call}: the store refused an append made under its lock")
        self._store_turn(staged)  # committed: the block ended without an error
        return staged.index

    def _caught_up(
        self, journal: SharedJournal, call: str, turn: Turn, key: str | None,
        check: Callable[[], None],
    ) -> int | Staged:  # fmt: skip
        """The turn staged after applying what other writers stored (without holding it)."""
        with journal.follow(len(self._conv)) as stored:
            self.apply(stored)
        return self._stage(call, turn, key, check)

    def _stage(
        self, call: str, turn: Turn, key: str | None, check: Callable[[], None]
    ) -> int | Staged:
        """The index of the turn `key` already names, or the turn ready to store."""
        if key is not None and key in self.keys:
            return self._same_key(call, key, turn)
        check()
        layout = self._conv.layout(turn)
        return Staged(len(self._conv), turn, layout, key)

    def _same_key(self, call: str, key: str, turn: Turn) -> int:
        index = self.keys[key]
        old = self._conv.turns[index]
        if old.redacted or _state.same_message(old, turn):
            return index
        raise ValueError(
            f"{call}: key {key!r} already names turn {index} ({_excerpt(old)}), not this "
            f"message ({_excerpt(turn)}); nothing was stored. A key names one message: pass a "
            f"new key for a new message"
        )

    def _store_turn(self, staged: Staged) -> None:
        self._conv.add(staged.turn, staged.layout)
        if staged.key is not None:
            self.keys[staged.key] = staged.index
            self.key_at[staged.index] = staged.key

    # -- reading stored turns -------------------------------------------------------------

    def restore_known(self, known: snapshot.Known, keys: dict[int, str]) -> int:
        """Store the turns a snapshot's layout holds as it says; how many."""
        n = len(known.turns)
        restore(self._conv, known.turns, known.cuts, known.opens, known.sizes, known.stretch_sizes)
        for index, key in keys.items():  # unique: `load.parse` checked them
            if index < n:
                self.keys[key] = index
                self.key_at[index] = key
        return n

    def replay(
        self, turn: Turn, opens: list[bool] | None, cuts: list[int], key: str | None
    ) -> None:
        """Add a stored turn as its record says (its cuts, its stretch openings)."""
        conv = self._conv
        conv.add(turn, conv.layout(turn, opens, cuts or None))
        if key is not None and key not in self.keys:
            self.keys[key] = len(conv) - 1
            self.key_at[len(conv) - 1] = key

    # -- following other writers ------------------------------------------------------------

    def follow(self) -> None:
        """Catch up with what other writers stored (a journal other writers share only)."""
        if self.shared is not None:
            with self.shared.follow(len(self._conv)) as stored:
                self.apply(stored)

    def apply(self, stored: StoredTurns) -> None:
        """Add the turns other writers appended, blank the ones they redacted."""
        for index, raw in stored:
            if index < len(self._conv):
                if raw.get("redacted") is True and not self._conv.turns[index].redacted:
                    blank = self._blank()
                    assert blank is not None  # the Memory calling this holds its method
                    blank(index, _state.read_turn(raw, index)[0])
            elif index == len(self._conv):
                turn, opens, cuts = _state.read_turn(raw, index)
                self.replay(turn, opens, cuts, _state.read_key(raw, index))
            else:
                raise ValueError(
                    f"Memory: the journal skipped from turn {len(self._conv)} to {index}"
                )
