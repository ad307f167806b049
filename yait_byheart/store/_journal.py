"""The journal a store attaches to each Memory it opens (`yait_byheart.protocols.Journal`)."""

from __future__ import annotations

import json
import weakref
from typing import TYPE_CHECKING, Any

from ._core import StoreCore

if TYPE_CHECKING:
    from ..memory import Memory


def dumps(obj: object) -> str:
    # Compact and strict: rows are concatenated into one JSON array on reopen.
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Journal:
    """What a bound Memory calls, under its own lock, before a mutating call returns."""

    __slots__ = ("__weakref__", "_conv", "_memory", "_name", "_seq", "_store", "snapshot_units")

    def __init__(self, store: StoreCore, name: str, conv: int, seq: int, memory: Memory) -> None:
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

    def _write(self, op: str, index: int, payload: object) -> None:
        self._seq = self._store._journal_write(
            self._name, self._conv, self._seq, op, index, dumps(payload)
        )

    def turn_appended(self, index: int, record: dict[str, Any]) -> None:
        self._write("append", index, record)

    def turn_redacted(self, index: int, record: dict[str, Any]) -> None:
        self._write("rewrite", index, record)
        self.snapshot_units = 0  # the rewrite deleted it

    def state_changed(self, state: dict[str, Any]) -> None:
        self._write("state", -1, state)
