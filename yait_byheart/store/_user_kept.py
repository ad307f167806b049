"""A user's recall index read from and written to the pieces the store keeps (`_user_saved`).

Reading (`loaded`) happens in the transaction that reads the user's conversations: the
generation (what a write must still find), the user's version, every segment's columns, and
the postings of the terms the query needs (all of them for an index kept for many queries).

Writing (`save`) adds one segment, the stretches indexed since the pieces were read, as soon
as a few turns are missing from them (a save is small), merging the newest segments while the
one before is no more than twice the size of the new one, so a term has O(log n) rows. It is
conditional on the generation (a redaction, repair or deletion since drops every piece, and
the bytes built before it never land after it) and on the user's version (two store objects
that read the same pieces never both add the same stretches: the second one skips).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from . import _user_saved as user_saved
from ._errors import StoreFullError, StoreReadOnlyError, StoreUnavailableError
from ._sql import vectors_in
from ._user_cache import SEGMENTS
from ._user_index import INDEXES, UserIndex

if TYPE_CHECKING:
    from ._core import StoreCore

# Turns a loaded index may lack before a recall writes a segment of them: each request that
# follows the rows past the pieces tokenizes what they lack, a save costs a small write. Any
# turn, once following them made a request copy the parts it borrowed (`UserIndex._own`):
# the next requests then borrow without copying (docs/benchmarks.md, "Stateless requests").
SAVE_AFTER = 8
# Terms asked in one statement (SQLite allows 32,766 parameters; PostgreSQL 65,535).
_CHUNK = 500
# Where the store refuses a write (or is busy past its timeout): the pieces, a cache, are not
# written; a later recall tries again.
_UNWRITABLE = (StoreReadOnlyError, StoreFullError, StoreUnavailableError)


def loaded(
    store: StoreCore, conn: Any, ui: UserIndex, terms: frozenset[str], kinds: frozenset[str]
) -> None:
    """In the transaction that reads the user's conversations: the count of dropped recall
    indexes (`ui.gen`, which a write of `ui` must still find), and the user's pieces loaded
    into `ui` if it may be, with the postings of `terms` in the indexes `kinds` (every term's
    in both when `ui.whole`)."""
    q = store._dialect.sql
    gen = conn.execute(q["recall_generation"]).fetchone()
    ui.gen = int(gen[0]) if gen is not None else -1
    if ui.convs or not (ui.loadable or ui.rewrite):
        return
    row = conn.execute(q["recall_version"], (ui.user,)).fetchone()
    if row is None:
        return
    ui.version = int(row[0])  # a full write replaces what is kept, however damaged
    if not ui.loadable:
        return  # built from the rows, to be written whole over what is kept
    listed = [(int(n), int(size)) for n, size in conn.execute(q["recall_segment_list"], (ui.user,))]
    try:
        name, parts, made = _parts(store, conn, ui, listed)
        dense = None if name is None else (*name[:-1], parts.dense)  # as `SEGMENTS` keeps it
        read = _page_reader(store, ui.user, parts.dense, dense)
        wanted = None if ui.whole else terms
        parts.fill(ui, _postings(store, conn, ui.user, wanted), read,
                   INDEXES if ui.whole else kinds)  # fmt: skip
    except (ValueError, TypeError, KeyError, IndexError):
        return  # built from the rows instead, and written whole
    ui.pending = (name, parts) if made and name is not None else None
    ui.scope = None if ui.whole else terms
    ui.segments = listed
    ui.fresh = {}
    ui.saved = ui.turns()


def _parts(
    store: StoreCore, conn: Any, ui: UserIndex, listed: list[tuple[int, int]]
) -> tuple[tuple[Any, ...] | None, user_saved.Parts, bool]:
    """The user's segments `listed` (number, stretches), oldest first, assembled: as this
    process assembled them before (`SEGMENTS`), or from the segments, each taken from
    `SEGMENTS` or read (ValueError if one is gone or damaged). With the name the process
    keeps them by (None: kept by none) and whether they were assembled here."""
    dialect = store._dialect
    found = conn.execute(dialect.sql["database_id"]).fetchone()
    shared = None if store._where is None or found is None else (
        store._where, str(found[0]), ui.gen, ui.user, ui.tokenizer.snapshot_id, ui.gap,
    )  # fmt: skip
    name = None if shared is None else (*shared, tuple(n for n, _ in listed))
    kept = None if name is None else SEGMENTS.get(name)
    if isinstance(kept, user_saved.Parts):
        return name, kept, False
    out = []
    for number, _ in listed:
        segment = None if shared is None else SEGMENTS.get((*shared, number))
        if not isinstance(segment, user_saved.Segment):
            data = dialect.read_segment(conn, ui.user, number)
            if data is None:
                raise ValueError("a listed segment is gone")
            segment = user_saved.load_segment(ui, data)
            if shared is not None:
                SEGMENTS.put((*shared, number), segment, len(data))
        out.append((number, segment))
    return name, user_saved.Parts.of(out), True


def settle(ui: UserIndex) -> None:
    """After following the rows: the parts this load assembled kept for the process's next
    store objects, unless `ui` made them its own (then they hold its changes)."""
    if ui.pending is not None:
        name, parts = ui.pending
        ui.pending = None
        SEGMENTS.put(name, parts, parts.nbytes)


def _postings(
    store: StoreCore, conn: Any, user: str, terms: frozenset[str] | None
) -> dict[str, list[tuple[int, bytes]]]:
    """Each of `terms`' rows (every term's if None) as (segment, bytes), by term."""
    dialect = store._dialect
    if terms is None:
        rows = dialect.read_rows(conn, dialect.sql["recall_every_term"], (user,))
    else:
        keys = sorted(t.encode("utf-8", "surrogatepass") for t in terms)
        rows = []
        for at in range(0, len(keys), _CHUNK):
            chunk = keys[at : at + _CHUNK]
            sql = vectors_in(dialect.sql, len(chunk), dialect.param, "recall_terms_in")
            rows += dialect.read_rows(conn, sql, (user, *chunk))
    out: dict[str, list[tuple[int, bytes]]] = {}
    for term, seg, data in rows:
        if user_saved.is_page_key(bytes(term)):
            continue
        out.setdefault(bytes(term).decode("utf-8", "surrogatepass"), []).append(
            (int(seg), bytes(data))
        )  # fmt: skip
    return out


def _page_reader(
    store: StoreCore, user: str, number: int, kept_as: Hashable | None
) -> user_saved.PageRead:
    """A function reading pages of the user's dense segment `number` (those still kept), in
    one statement: in the transaction the store is in (a conversation being followed), else
    in one of its own (a ranking, after the load's); their bytes counted where the process
    keeps the segment (`kept_as`: the pages are kept with it)."""
    dialect = store._dialect

    def pages(conn: Any, wanted: list[int]) -> dict[int, bytes]:
        out = {}
        for at in range(0, len(wanted), _CHUNK):
            keys = [user_saved.page_key(k) for k in wanted[at : at + _CHUNK]]
            sql = vectors_in(dialect.sql, len(keys), dialect.param, "recall_pages_in")
            for term, data in dialect.read_rows(conn, sql, (user, number, *keys)):
                out[user_saved.page_number(bytes(term))] = bytes(data)
        return out

    def read(wanted: list[int]) -> dict[int, bytes]:
        with store._lock:
            if dialect.in_transaction(store._conn):
                found = pages(store._conn, wanted)
            else:
                with store._transaction(dialect.read_begin) as conn:
                    found = pages(conn, wanted)
        if kept_as is not None:
            SEGMENTS.add(kept_as, sum(map(len, found.values())))
        return found

    return read


def due(ui: UserIndex) -> bool:
    """Whether `ui` should be written now: built from the rows, past `SAVE_AFTER` turns
    beyond its pieces, or beyond them at all once it copied borrowed parts; and nothing since
    its first rows forbids it."""
    if ui.gen is None or ui.gen < 0 or ui.dead:
        return False
    behind = ui.turns() - ui.saved
    if ui.fresh is None or behind >= SAVE_AFTER:
        return True
    # Owned: anything the pieces lack (turns, a new conversation's first ids) is written.
    return ui.owned and (behind > 0 or any(c.seq != c.kept_seq for c in ui.convs.values()))


def save(store: StoreCore, ui: UserIndex) -> None:
    """Write what the pieces lack of `ui` (call under `ui.lock`, after a sync) when `due`."""
    if not due(ui):
        return
    total = ui.turns()
    if ui.fresh is None:
        segment = user_saved.whole_segment(ui)
    else:
        changed = [c for c in ui.convs.values() if c.seq != c.kept_seq]
        segment = user_saved.new_segment(ui, ui.fresh, changed)
    dialect = store._dialect
    written: list[tuple[int, int]] | None = None
    with (
        contextlib.suppress(*_UNWRITABLE), store._failing("the recall index"), store._lock,
        store._transaction(dialect.write_begin) as conn,
    ):  # fmt: skip
        written = _write(store, conn, ui, segment)
    if written is not None:
        ui.segments = written
        ui.version = max(ui.version, 0) + 1
        ui.fresh, ui.saved, ui.owned = {}, total, False
        for conv in ui.convs.values():
            conv.kept_seq = conv.seq


def _write(
    store: StoreCore, conn: Any, ui: UserIndex, segment: user_saved.Segment
) -> list[tuple[int, int]] | None:
    """In a write transaction: `segment` added to the user's pieces (replacing them all for a
    whole index), merged with the newest ones; the segments then, or None if not written."""
    dialect = store._dialect
    q, user = dialect.sql, ui.user
    # Locked: a deletion or redaction counts first, so it waits for this write (and then
    # drops what it wrote), or this write waits for it and finds the count moved.
    gen = conn.execute(q["recall_generation"] + dialect.lock_for_delete).fetchone()
    row = conn.execute(q["recall_version"], (user,)).fetchone()
    version = int(row[0]) if row is not None else -1
    if gen is None or int(gen[0]) != ui.gen or version != ui.version:
        ui.gen = -1  # words taken away since, or another store object wrote: never written
        return None
    # Never a number given before under this generation: a process keeps the segments it
    # read by it (`_user_cache`), and the store's id says which database gave it.
    top = conn.execute(q["recall_segment_top"], (user,)).fetchone()
    number = 1 + max(
        [-1 if top is None or top[0] is None else int(top[0]), *(n for n, _ in ui.segments)]
    )
    if conn.execute(q["database_id"]).fetchone() is None:
        conn.execute(q["insert_meta"], ("database_id", secrets.token_hex(16)))
    segments = list(ui.segments)
    if ui.fresh is None:
        conn.execute(q["drop_user_recall_segments"], (user,))
        conn.execute(q["drop_user_recall_terms"], (user,))
        segments = []
    while segments and segments[-1][1] <= 2 * len(segment):
        older = segments[-1][0]
        try:
            segment = _read(store, conn, ui, older).merged_into(segment)
        except ValueError:  # damaged where no query read it yet: left as it is
            break
        segments.pop()
        conn.execute(q["drop_recall_segment"], (user, older))
        conn.execute(q["drop_recall_segment_terms"], (user, older))
    dense = not segments  # the oldest: most of the index, copied by a load
    data = segment.dump(ui, dense)
    conn.execute(q["put_recall_segment"], (user, number, len(segment), data))
    lengths = segment.lengths() if dense else None
    rows = [
        (user, t.encode("utf-8", "surrogatepass"), number, user_saved.term_bytes(four, lengths))
        for t, four in segment.terms.items()
    ]
    if dense:  # its pages and days row, kept with its postings
        stamp = user_saved.stamp_of(data)
        pages = {**dict(enumerate(segment.page_rows(stamp))),
                 user_saved.DAYS: segment.days_row(stamp)}  # fmt: skip
        rows += [(user, user_saved.page_key(k), number, page) for k, page in pages.items()]
    cur = conn.cursor()
    try:
        cur.executemany(q["put_recall_term"], rows)
    finally:
        cur.close()
    conn.execute(q["set_recall_version"], (user, max(version, 0) + 1))
    return [*segments, (number, len(segment))]


def _read(store: StoreCore, conn: Any, ui: UserIndex, number: int) -> user_saved.Segment:
    """Segment `number` of the user, with every term's postings (for a merge)."""
    q = store._dialect.sql
    data = store._dialect.read_segment(conn, ui.user, number)
    if data is None:
        raise ValueError("a segment read is gone")
    segment = user_saved.load_segment(ui, data)
    pages = {}
    for term, _seg, data in store._dialect.read_rows(
        conn, q["recall_segment_terms"], (ui.user, number)
    ):
        key = bytes(term)
        if user_saved.is_page_key(key):
            pages[user_saved.page_number(key)] = bytes(data)
        else:
            segment.terms[key.decode("utf-8", "surrogatepass")] = user_saved.read_term(data)
    return user_saved.with_pages(segment, pages)
