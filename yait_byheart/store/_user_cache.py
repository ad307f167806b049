"""The recall segments a process has read, kept across store objects.

A web handler opens a new store object per request; without this, each request read and
decoded the user's whole dense segment again (most of a stateless request's time at 100,000
turns: docs/benchmarks.md, "Stateless requests"). A segment never changes once written: the
store names each one by where the database lives, the database's random id, the count of
dropped recall indexes (a redaction, repair or deletion bumps it and drops every piece), the
user and a number never given twice for that count (`_user_kept._write`). So a segment found
here under that name is the one the store holds, and a request reads only the segments' list
and those it lacks. A list of segments is kept assembled too (`Parts`, named by the segments'
numbers): the indexes it fills borrow its columns and copy them before their first change
(`UserIndex._own`), so a request that follows no row copies nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

from ._user_saved import Parts, Segment

Kept = Segment | Parts

# Bytes of decoded segments a process keeps (the least recently used go first): a dense
# segment counts the pages its requests read since it was kept (`SegmentCache.add`).
MAX_BYTES = 256 * 2**20


class SegmentCache:
    """Decoded segments and their assemblies by name, least recently used dropped past
    `max_bytes`."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._held: OrderedDict[Hashable, tuple[Kept, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, name: Hashable) -> Kept | None:
        with self._lock:
            found = self._held.get(name)
            if found is None:
                return None
            self._held.move_to_end(name)
            return found[0]

    def put(self, name: Hashable, segment: Kept, size: int) -> None:
        """Keep `segment` (`size`: its bytes) unless it alone passes `max_bytes`."""
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._held.pop(name, None)
            if old is not None:
                self._bytes -= old[1]
            self._held[name] = (segment, size)
            self._bytes += size
            self._trim()

    def add(self, name: Hashable, size: int) -> None:
        """`size` more bytes held by what `name` keeps (a dense segment's pages read since it
        was kept), if it is kept; the least recently used go past `max_bytes`."""
        with self._lock:
            found = self._held.get(name)
            if found is None:
                return
            self._held[name] = (found[0], found[1] + size)
            self._bytes += size
            self._trim()

    def _trim(self) -> None:
        while self._bytes > self.max_bytes and self._held:
            _, (_, dropped) = self._held.popitem(last=False)
            self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0


#: The process's segments, shared by every store object.
SEGMENTS = SegmentCache()
