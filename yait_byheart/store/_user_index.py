"""One user's stretches across all their stored conversations, indexed for recall.

The stretches are the ones each conversation's Memory made: every stored turn record carries
its pieces' cuts and which piece opened a stretch (`opens`), so reading the rows in order gives
them back without building a Memory.  Document ids are handed out in blocks per conversation,
with `context_width` unused ids after each block: the ranking lends a stretch's score to its
neighbours by id, and a neighbour must be a stretch of the same conversation.

The index follows the store as a bound Memory does: `sync` reads the user's conversations and
their sequence numbers (one small query), then only the rows each one gained since.  A deleted
conversation's stretches, and the old version of a stretch a redaction changed, become
tombstones: never returned, and dropped by a rebuild once they pass a quarter of the index
(their postings still weigh in the statistics until then).

A retriever given to recall is held by one user's index and fed as the index follows the rows
(`feed`): each stretch's text under its document id, and every stretch that became a
tombstone taken out, so it never holds a deleted conversation's or a blanked turn's words past
the next recall, nor any stretch of another user's.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._dates.resolve import parse_when
from .._record.state import read_turn
from .._retrieval.bm25 import Index
from .._retrieval.ranker import Ranker
from .._text.tokens import Tokenizer
from .._turns.render import Turn, searchable
from ._columns import Column
from ._rows import loads

# A conversation's first block of ids; each further block doubles, so a conversation with n
# stretches spends at most about 2n ids (and an id costs 4 bytes in the index).
_FIRST_BLOCK = 16
# Tombstones past this share of the indexed stretches make the next recall rebuild the index.
REBUILD_SHARE = 0.25
_REDACTED = '%"redacted":true%'
# Posting lists this long are grouped by `Index.head` (its `_BANDED`): `warm` groups them early.
WARM_FROM = 512
# A user's two indexes: of every word of each stretch, and of the user's own words.
INDEXES = frozenset({"every", "mine"})

_USER_CONVS = "SELECT id, name, seq FROM {s}conversations WHERE user_id = ?"
_ROWS_FROM = "SELECT idx, record FROM {s}turns WHERE conv = ? AND idx >= ? ORDER BY idx"
_ROWS_BETWEEN = (
    "SELECT idx, record FROM {s}turns WHERE conv = ? AND idx >= ? AND idx <= ? ORDER BY idx"
)
_REDACTED_ROWS = "SELECT idx FROM {s}turns WHERE conv = ? AND idx < ? AND record LIKE ?"
_ANY_ROW = "SELECT 1 FROM {s}turns WHERE conv = ? LIMIT 1"


def statement(template: str, prefix: str, param: str) -> str:
    """`template` in one dialect: `prefix` before table names, `param` for each ``?``."""
    return template.format(s=prefix).replace("?", param)


def record_turn(raw: object, idx: int) -> tuple[Turn, list[bool], list[int]]:
    """A stored row as (turn, opens, cuts); an unreadable row reads as a silent turn (recall
    only reads: `check` and `repair` are what name and set aside a damaged row)."""
    try:
        turn, opens, cuts = read_turn(loads(raw), idx)
    except (ValueError, TypeError, KeyError):
        return Turn("user", "", "", redacted=True), [False], []
    return turn, list(opens or [False]), cuts


@dataclass
class Open:
    """The words of a conversation's last stretch, which the next turns may extend."""

    user: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)  # both, in order: a retriever's text
    every: dict[str, int] = field(default_factory=dict)
    mine: dict[str, int] = field(default_factory=dict)


@dataclass
class Conv:
    """What the index holds of one conversation."""

    id: int
    name: str
    seq: int = -1  # none read yet (an imported conversation is stored at seq 0)
    turns: int = 0  # rows read
    docs: array[int] = field(default_factory=lambda: array("i"))  # stretch k's document id
    firsts: array[int] = field(default_factory=lambda: array("i"))  # stretch k's first turn
    next_id: int = 0
    block_end: int = 0
    block: int = _FIRST_BLOCK // 2
    last: Open = field(default_factory=Open)
    redacted: set[int] = field(default_factory=set)
    kept_seq: int = -2  # its sequence number in the pieces the store keeps (-2: none)

    def copy(self) -> Conv:
        """A copy sharing nothing that following the rows changes."""
        last = self.last
        return replace(
            self, docs=self.docs[:], firsts=self.firsts[:], redacted=set(self.redacted),
            last=Open(last.user[:], last.other[:], last.said[:], dict(last.every),
                      dict(last.mine)),
        )  # fmt: skip


class Docs:
    """Per document id: its conversation, where it starts and ends, size, days, liveness.

    Every column but `alive` is a `Column` (pages, copied when written), so an index that
    borrows the process's assembled parts shares them until it writes a page of its own."""

    PAGED = ("conv", "first_turn", "first_piece", "last_turn", "last_piece", "size", "day_lo",
             "day_hi", "stretch", "dated")  # fmt: skip

    def __init__(self) -> None:
        self.conv = Column("q")  # ids of conversations (bigint in PostgreSQL)
        self.first_turn = Column("i")  # turn indexes, piece numbers, sizes, day ordinals: int32
        self.first_piece = Column("i")
        self.last_turn = Column("i")
        self.last_piece = Column("i")
        self.size = Column("i")
        self.day_lo = Column("i")
        self.day_hi = Column("i")
        self.stretch = Column("i")  # its place among its conversation's stretches
        self.dated = Column("B")
        self.alive = bytearray()  # read on every ranked stretch: one C-level array

    def __len__(self) -> int:
        return len(self.alive)

    def grow(self, n: int) -> None:
        more = n - len(self.alive)
        if more <= 0:
            return
        for name in self.PAGED:
            getattr(self, name).grow(n)
        self.alive.extend(bytes(more))

    def start(self, doc: int, conv: int, k: int, turn: int, piece: int) -> None:
        self.conv[doc], self.first_turn[doc], self.first_piece[doc] = conv, turn, piece
        self.stretch[doc] = k
        self.last_turn[doc], self.last_piece[doc] = turn, piece
        self.size[doc], self.day_lo[doc], self.day_hi[doc], self.dated[doc] = 0, 0, 0, 0


class UserIndex:
    """The stretches of one user's conversations (see the module docstring)."""

    def __init__(self, user: str, tokenizer: Tokenizer, gap: int, retriever: Any = None) -> None:
        self.user = user
        self.tokenizer = tokenizer
        self.gap = max(1, gap)
        self.index = Index()
        self.user_index = Index()  # the user's own words of each stretch that has some
        self.docs = Docs()
        self.convs: dict[int, Conv] = {}
        self.next_block = 0  # the first id no block holds
        self.dead = 0
        self.warmed = 0  # stretches indexed when `warm` last ran
        # Loaded from the process's kept pieces (`_user_kept`): the columns and the indexes'
        # lengths are theirs (`borrowed`), and so is each conversation that is still the
        # object `shared` holds under its id, read by other indexes at the same time and
        # copied before the first change (`_own`, `follow`), unless `pending` holds them:
        # assembled by this load and shared with no one yet (`_user_kept.settle` shares them
        # if they were not changed). `owned`: this index made borrowed parts its own to follow
        # the rows: until a save, the process's next store objects do the same (`_user_kept.due`).
        self.borrowed = False
        self.shared: Mapping[int, Conv] = {}
        self.pending: tuple[Any, Any] | None = None
        self.owned = False
        self.lock = threading.Lock()
        self._days: dict[str, int] = {}
        # What the store keeps of this index (`_user_saved`): the count of dropped recall
        # indexes read with its first rows (None: not read yet; -1: it may hold words taken
        # away since, and is never written), the turns the kept bytes cover, and whether
        # loading them is allowed.
        self.gen: int | None = None
        self.saved = 0
        self.loadable = retriever is None  # a retriever is fed every stretch's text: rebuilt
        # Built from the rows to replace what the store keeps (found damaged, rewritten under
        # each load, or holding too many tombstones): its first write replaces it whole.
        self.rewrite = False
        # The pieces read (`_user_kept`): the user's version then (-1: none), the segments
        # as (number, stretches); the terms whose postings were read (None: every term); the
        # stretches indexed since, each with its counts (None: every one, built from rows).
        self.version = -1
        self.segments: list[tuple[int, int]] = []
        self.scope: frozenset[str] | None = None
        # The indexes ("every", "mine") whose postings of `scope` were loaded: a request
        # ranks with one of them (`_recall._ranking_index`).
        self.kinds: frozenset[str] = INDEXES
        self.whole = False  # read every term's postings (an index kept for many queries)
        self.fresh: dict[int, tuple[dict[str, int], dict[str, int]]] | None = None
        # A retriever (see `feed`) holds the stretches of `fed`; `_feed` is what it is told
        # next: a stretch's text to hold, or None to forget it.
        self.retriever = retriever
        self.fed: set[int] = set()
        self._feed: dict[int, str | None] = {}
        if retriever is not None:
            retriever.fit([])  # it holds this index's stretches, by their ids, and no others

    def turns(self) -> int:
        """Rows read, over every conversation."""
        return sum(c.turns for c in self.convs.values())

    def feed(self) -> None:
        """Tell the retriever what changed since the last call: the stretches gone (deleted,
        or changed by a redaction: taken out before anything else) and the new texts."""
        retriever, feed = self.retriever, self._feed
        if retriever is None or not feed:
            return
        gone = sorted(d for d in feed if d in self.fed)
        if gone:
            retriever.remove(gone)
            self.fed.difference_update(gone)
        new = {d: t for d, t in feed.items() if t}
        if new:
            retriever.add(list(new.values()), ids=list(new))
            self.fed.update(new)
        feed.clear()

    def release(self) -> None:
        """The index is dropped: its retriever forgets every stretch it was given."""
        if self.retriever is not None and self.fed:
            self.retriever.remove(sorted(self.fed))
            self.fed.clear()

    # -- following the store --------------------------------------------------------------

    def changed(self, conn: Any, prefix: str, param: str) -> list[tuple[Conv, int]]:
        """The user's conversations as stored now (`conn`: a read transaction): deleted ones
        are dropped here; those whose sequence number moved are returned with it, for
        `follow` (each in a transaction of its own, so no read holds the store long)."""
        rows = conn.execute(statement(_USER_CONVS, prefix, param), (self.user,)).fetchall()
        live = {int(r[0]): (str(r[1]), int(r[2])) for r in rows}
        for gone in [c for c in self.convs if c not in live]:
            self._drop(self.convs.pop(gone))
        out = []
        for conv_id, (name, seq) in live.items():
            conv = self.convs.get(conv_id)
            if conv is not None and conv.name != name:  # an id reused for another conversation
                self._drop(self.convs.pop(conv_id))
                conv = None
            if conv is None:
                conv = self.convs[conv_id] = Conv(conv_id, name)
            if conv.seq != seq:
                out.append((conv, seq))
        return out

    def follow(self, conn: Any, prefix: str, param: str, conv: Conv, seq: int) -> None:
        """Read what `conv` gained since its sequence number was last seen, up to `seq`.

        Rows read in a later transaction than `seq` may hold more than `seq` says: the next
        call then finds no new rows for the rest of the bump, looks for redactions, and finds
        only those it already knows."""
        held = self._held(conv.id)
        if held is None:
            return  # dropped meanwhile
        conv, known = held, held.turns
        new = conn.execute(statement(_ROWS_FROM, prefix, param), (conv.id, known)).fetchall()
        if conv.seq >= 0 and seq - conv.seq > len(new):  # a redaction (or a repair) since
            found = conn.execute(
                statement(_REDACTED_ROWS, prefix, param), (conv.id, known, _REDACTED)
            ).fetchall()
            for idx in sorted(int(r[0]) for r in found):
                if idx not in conv.redacted:
                    conv.redacted.add(idx)
                    self._reindex_turn(conn, prefix, param, conv, idx)
        self._extend(conv, [(int(i), raw) for i, raw in new])
        conv.seq = seq

    def reserve(self, conn: Any, prefix: str, param: str, conv: Conv) -> None:
        """A conversation this recall leaves out (`exclude`), not read: its first ids where
        reading it would have given them, if it has rows and no ids yet, so that ids (which
        break ties in a ranking) come in the order an index built from the rows gives them."""
        if conv.block_end or not conn.execute(
            statement(_ANY_ROW, prefix, param), (conv.id,)
        ).fetchone():  # fmt: skip
            return
        held = self._held(conv.id)
        if held is not None:
            self._new_block(held)
            held.kept_seq = -2  # the pieces lack these ids: the next write keeps them

    def _held(self, conv_id: int) -> Conv | None:
        """Conversation `conv_id` (None if dropped), this index's own to change: the borrowed
        columns and that conversation copied first (`_own`)."""
        self._own()
        held = self.convs.get(conv_id)
        if held is not None and self.shared.get(conv_id) is held:
            held = self.convs[conv_id] = held.copy()
        return held

    def warm(self) -> None:
        """Group each long posting list for `Index.head` now, not on its term's first query,
        once the index has grown a tenth since the last time: a recall of a term never asked
        before then costs what one of a term asked before does (docs/benchmarks.md, "Recall
        across conversations")."""
        if len(self.index) < max(WARM_FROM, self.warmed * 1.1):
            return
        self.warmed = len(self.index)
        for index in (self.index, self.user_index):
            index.group_long_lists(WARM_FROM)

    def _own(self) -> None:
        """Make the borrowed columns this index's own before changing them: copied, unless
        this load assembled them and shares them with no one yet. A request that follows no
        row copies nothing (docs/benchmarks.md, "Stateless requests")."""
        if not self.borrowed:
            return
        self.borrowed, self.owned = False, True
        if self.pending is not None:
            self.pending = None  # never shared now
            return
        self._copy_borrowed()

    def _copy_borrowed(self) -> None:
        """Copy what the index changes in place (`alive`, its lengths): `Docs`' other
        columns copy a page when it is first written."""
        self.docs.alive = self.docs.alive[:]
        for index in (self.index, self.user_index):
            index._lengths = index._lengths[:]

    def _drop(self, conv: Conv) -> None:
        self._own()
        alive = self.docs.alive
        for doc in conv.docs:
            if alive[doc]:
                alive[doc] = 0
                self.dead += 1
            self._forget(doc)

    def _forget(self, doc: int) -> None:
        if self.retriever is not None:
            self._feed[doc] = None

    # -- stretches -------------------------------------------------------------------------

    def _new_block(self, conv: Conv) -> None:
        conv.block *= 2
        conv.next_id = self.next_block
        conv.block_end = conv.next_id + conv.block
        self.next_block = conv.block_end + self.gap
        self.docs.grow(self.next_block)

    def _new_id(self, conv: Conv) -> int:
        if conv.next_id >= conv.block_end:
            self._new_block(conv)
        doc = conv.next_id
        conv.next_id += 1
        return doc

    def _extend(self, conv: Conv, rows: list[tuple[int, Any]]) -> None:
        """Add turns `rows` (the next ones, in order) to the conversation's stretches."""
        if not rows:
            return
        docs = self.docs
        touched = conv.docs[-1] if conv.docs else -1
        if touched >= 0 and docs.alive[touched]:
            self._unindex(touched, conv.last)
        for idx, raw in rows:
            if idx != conv.turns:  # rows missing (edited outside): read no further
                break
            turn, opens, cuts = record_turn(raw, idx)
            if turn.redacted:
                conv.redacted.add(idx)
            text = searchable(turn)
            bounds = [0, *cuts, len(text)]
            for piece in range(len(bounds) - 1):
                if not conv.docs or (piece < len(opens) and opens[piece]):
                    if conv.docs:
                        self._index(conv.docs[-1], conv.last)
                    doc = self._new_id(conv)
                    docs.start(doc, conv.id, len(conv.docs), idx, piece)
                    conv.docs.append(doc)
                    conv.firsts.append(idx)
                    conv.last = Open()
                self._add_piece(conv.docs[-1], conv.last, turn, idx, piece,
                                text[bounds[piece] : bounds[piece + 1]])  # fmt: skip
            conv.turns = idx + 1
        if conv.docs:
            self._index(conv.docs[-1], conv.last)

    def _add_piece(self, doc: int, words: Open, turn: Turn, idx: int, piece: int,
                   body: str) -> None:  # fmt: skip
        docs = self.docs
        docs.last_turn[doc], docs.last_piece[doc] = idx, piece
        if turn.silent:
            return
        (words.user if turn.role == "user" else words.other).append(body)
        words.said.append(body)
        docs.size[doc] += len(turn.role) + 3 + len(body)  # "role: body" and a line break
        if len(turn.shown) != len(turn.text):
            docs.dated[doc] = 1
        day = self._day(turn.when)
        if day:
            lo, hi = docs.day_lo[doc], docs.day_hi[doc]
            docs.day_lo[doc] = day if not lo else min(lo, day)
            docs.day_hi[doc] = max(hi, day)

    def _day(self, when: str) -> int:
        if not when:
            return 0
        day = self._days.get(when)
        if day is None:
            parsed = parse_when(when)
            day = self._days[when] = parsed.toordinal() if parsed else 0
        return day

    def _index(self, doc: int, words: Open) -> None:
        counts = self.tokenizer.counts_of
        words.every, words.mine = Ranker._merged(counts(words.user), counts(words.other))
        self.index.add(doc, words.every)
        if words.mine:
            self.user_index.add(doc, words.mine)
        self.docs.alive[doc] = 1
        if self.fresh is not None:
            self.fresh[doc] = (words.every, words.mine)
        if self.retriever is not None:
            self._feed[doc] = "\n".join(words.said)

    def _unindex(self, doc: int, words: Open) -> None:
        # The open stretch, indexed again at once with more words (so at least as long): the
        # shortest length so far stays a bound for the pruning, not found again by a scan of
        # every stretch's length (one per request, for an index loaded from the store).
        for index, counts in ((self.index, words.every), (self.user_index, words.mine)):
            if doc in index:
                shortest = index._min_len
                index.remove(doc, counts)
                index._min_len = shortest
        self.docs.alive[doc] = 0
        self._forget(doc)

    def _reindex_turn(self, conn: Any, prefix: str, param: str, conv: Conv, idx: int) -> None:
        """Turn `idx` was blanked: each stretch holding it is indexed again, under a new id,
        from its rows as they are now; the old id becomes a tombstone."""
        docs = self.docs
        k = bisect_right(conv.firsts, idx) - 1
        holding = []
        while k >= 0 and docs.last_turn[conv.docs[k]] >= idx:
            holding.append(k)
            k -= 1
        for j in holding:
            self._rebuild_stretch(conn, prefix, param, conv, j)

    def _rebuild_stretch(self, conn: Any, prefix: str, param: str, conv: Conv, k: int) -> None:
        docs, old = self.docs, conv.docs[k]
        first, last = docs.first_turn[old], docs.last_turn[old]
        lo, hi = docs.first_piece[old], docs.last_piece[old]
        rows = conn.execute(
            statement(_ROWS_BETWEEN, prefix, param), (conv.id, first, last)
        ).fetchall()
        if docs.alive[old]:
            # A tombstone: its postings stay (the words it was indexed with are gone from the
            # rows, so it cannot be taken out term by term) until the next rebuild.
            docs.alive[old] = 0
            self.dead += 1
        self._forget(old)
        doc = self._new_id(conv)
        conv.docs[k] = doc
        docs.start(doc, conv.id, k, first, lo)
        words = Open()
        for idx, raw in rows:
            turn, _opens, cuts = record_turn(raw, int(idx))
            text = searchable(turn)
            bounds = [0, *cuts, len(text)]
            for piece in _pieces(int(idx), len(bounds) - 1, first, lo, last, hi):
                self._add_piece(doc, words, turn, int(idx), piece,
                                text[bounds[piece] : bounds[piece + 1]])  # fmt: skip
        docs.last_turn[doc], docs.last_piece[doc] = last, hi
        self._index(doc, words)
        if k == len(conv.docs) - 1:
            conv.last = words


def _pieces(idx: int, parts: int, first: int, lo: int, last: int, hi: int) -> range:
    """The pieces of turn `idx` (of `parts`) inside a stretch from (first, lo) to (last, hi)."""
    start = lo if idx == first else 0
    end = hi + 1 if idx == last else parts
    return range(start, min(end, parts))
