"""Recall across one user's conversations: their stretches ranked as compose ranks a
conversation's, returned verbatim with where and when they were said.

Ranking is byheart's own (`ranking.bm25_ranked` over the user's `UserIndex`): BM25, the
user-words index for questions about what the user said, neighbours' shares, the date boost
for "when" questions and for the days a question names, and a retriever's best stretches
fused in when one is given (`retrieved`, as compose fuses one).  Stretches are taken best
first while they fit the budget; the ones next to each other in a conversation are joined into
one passage.
The text is read from the rows at that moment, in a query that names the user again: what was
deleted or blanked since is never returned, and no row of another user's can be.
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any, TypedDict

from .._dates.spans import asked_days, said_on, without_annotations
from .._retrieval import flat, ranking
from .._retrieval.ranker import retrieved
from .._text.tokens import shared_tokenizer
from .._turns.render import render_external, searchable
from .._turns.settings import Tuning
from . import _user_kept as user_kept
from . import _user_saved as user_saved
from ._failures import salvage_advice
from ._user_index import INDEXES, REBUILD_SHARE, UserIndex, record_turn, statement

if TYPE_CHECKING:
    from ._core import StoreCore

# The stretch size a Memory with the default `chunk` (900) closes at: how many stretches fit a
# budget, so how many the ranking scores exactly.
_GRAIN = int(900 * Tuning().stretch_share)
# Users whose indexes a store keeps in memory: a server recalling for many users rebuilds the
# index of one not recalled for lately, instead of holding every user's.
KEEP_USERS = 16
_PASSAGE = (
    "SELECT t.idx, t.record FROM {s}turns t JOIN {s}conversations c ON c.id = t.conv "
    "WHERE t.conv = ? AND c.user_id = ? AND t.idx >= ? AND t.idx <= ? ORDER BY t.idx"
)
# Every passage's rows in one statement (a round trip each cost a server's request more than
# its ranking: docs/benchmarks.md, "Stateless requests"); `_SPAN` once per passage.
_PASSAGES = (
    "WITH w (conv, lo, hi) AS (VALUES {spans}) "
    "SELECT t.conv, t.idx, t.record FROM w JOIN {s}turns t ON t.conv = w.conv "
    "AND t.idx >= w.lo AND t.idx <= w.hi JOIN {s}conversations c ON c.id = t.conv "
    "WHERE c.user_id = ?"
)
_SPAN = "(?, ?, ?)"
_SPANS_AT_MOST = 200  # passages read in one statement (3 parameters each, far below limits)
# Ranked stretches whose pages are read in one statement when the budget is filled, at most.
_READ_AHEAD = 32
# Loads of a user's pieces a recall tries when each finds them rewritten under it (a page of
# the dense segment gone: `_user_saved.StalePieces`) before it builds the index from the rows.
_STALE_TRIES = 3
_EVERY, _MINE = frozenset({"every"}), frozenset({"mine"})


class Recalled(TypedDict):
    """One passage recalled from another conversation of the user, verbatim."""

    conversation: str  # its id
    turns: list[int]  # the turn indexes whose words it holds
    when: str  # when it was said: the first turn's date, to the last's if they differ
    text: str  # "role: words" a line per turn (or piece of a long turn), words verbatim
    score: float  # the best of its stretches' ranking scores


# How many characters passages pass what their caller may send, framed (see `RecallSource`).
Over = Callable[[list[Recalled]], int]


@dataclass
class _Passage:
    conv: int
    name: str
    stretches: list[int]  # document ids, in conversation order
    score: float


class Recaller:
    """The indexes of the users recalled for last (at most `users`), kept by one store and
    shared by its threads; the least recently recalled one is dropped for a new one."""

    def __init__(self, tuning: Tuning | None = None, users: int = KEEP_USERS) -> None:
        self.tuning = tuning or Tuning()
        self.users = users
        self._users: OrderedDict[str, UserIndex] = OrderedDict()
        self._lock = threading.Lock()

    def forget(self) -> None:
        """Drop every index (the store closes)."""
        with self._lock:
            dropped = list(self._users.values())
            self._users.clear()
        _released(dropped)

    def _user(
        self, user: str, fresh: bool = False, retriever: Any = None, call: str = "recall"
    ) -> UserIndex:
        """The user's index; a new one when `fresh`, or when `retriever` is not the one it
        feeds (a rebuild keeps the retriever it had)."""
        dropped: list[UserIndex] = []
        with self._lock:
            found = self._users.get(user)
            if retriever is not None:
                if any(ui.retriever is retriever for u, ui in self._users.items() if u != user):
                    raise ValueError(
                        f"{call}: this retriever already holds another user's stretches; pass "
                        "one retriever object per user (e.g. a Hybrid(embed) each)"
                    )
                fresh = fresh or found is None or found.retriever is not retriever
            if found is None or fresh:
                held = retriever if retriever is not None or found is None else found.retriever
                if found is not None and found.retriever is not held:
                    dropped.append(found)
                gap = max(1, self.tuning.context_width)
                found = UserIndex(user, shared_tokenizer(None), gap, held)
                self._users[user] = found
            self._users.move_to_end(user)
            while len(self._users) > self.users:
                dropped.append(self._users.popitem(last=False)[1])
        _released(dropped)
        return found

    def recall(
        self, store: StoreCore, shown: str, user: str, budget: int, exclude: Iterable[str],
        retriever: Any = None, call: str = "recall", over: Over | None = None,
    ) -> list[Recalled]:  # fmt: skip
        """The user's passages for the question `shown` (`ingest.question`'s text, its dates
        annotated), best first, within `budget` characters.  With `over` (how many characters
        the passages, framed, pass what the caller may send), the ranking is filled again
        with that much less room, at most twice: ranked once, however often it is filled."""
        for _ in range(_STALE_TRIES):
            try:
                return self._recall(store, shown, user, budget, exclude, retriever, call, over)
            except user_saved.StalePieces:  # rewritten since this index loaded them
                self._user(user, fresh=True)
        ui = self._user(user, fresh=True)
        ui.loadable, ui.rewrite = False, True  # rewritten under each load: built from the rows
        return self._recall(store, shown, user, budget, exclude, retriever, call, over)

    def _recall(
        self, store: StoreCore, shown: str, user: str, budget: int, exclude: Iterable[str],
        retriever: Any, call: str, over: Over | None,
    ) -> list[Recalled]:  # fmt: skip
        ui = self._user(user, retriever=retriever, call=call)
        who = f"{call}(retriever=...)" if retriever is not None else None
        exclude = frozenset(exclude)
        terms, kinds = _asked(ui, shown)
        if ui.scope is not None and not (terms <= ui.scope and kinds <= ui.kinds):
            # Loaded for other terms or the other index: loaded again whole, then kept for
            # every query.
            ui = self._user(user, fresh=True)
            ui.whole = True
        ranked: _Ranked | None = None
        with ui.lock:
            try:
                _synced(store, ui, terms, exclude, kinds)
                if ui.dead <= REBUILD_SHARE * max(1, len(ui.index)):
                    ranked = _select(ui, shown, budget, exclude, self.tuning, who)
                    user_kept.save(store, ui)
            except flat.Damaged:  # the kept index was damaged: built from the rows instead
                ranked = None
        if ranked is None:  # too many tombstones (or damaged): a new index
            ui = self._user(user, fresh=True)
            ui.loadable, ui.rewrite = False, True  # what the store keeps may be damaged, or
            # the one with the tombstones: replaced by the rows' index
            with ui.lock:
                _synced(store, ui, terms, exclude, kinds)
                ranked = _select(ui, shown, budget, exclude, self.tuning, who)
                user_kept.save(store, ui)
        found = _read(store, user, ui, ranked.passages)
        room = budget
        for _ in range(2 if over is not None else 0):
            excess = over(found) if over is not None else 0
            if excess <= 0 or room <= excess:
                break
            room -= excess
            with ui.lock:
                passages = ranked.fill(room)
            found = _read(store, user, ui, passages)
        return found


def _released(dropped: Iterable[UserIndex]) -> None:
    """Indexes no longer kept: their retrievers forget the stretches they were given (never
    under the recaller's lock: a rebuilding recall holds an index's lock, then asks for it)."""
    for ui in dropped:
        with ui.lock:
            ui.release()


def _synced(
    store: StoreCore, ui: UserIndex, terms: frozenset[str], exclude: frozenset[str],
    kinds: frozenset[str],
) -> None:  # fmt: skip
    """`ui` brought up to date with the rows: what changed, then each changed conversation
    (loaded first from what the store keeps, with the postings of `terms` in the indexes
    `kinds`, if it may be).
    A conversation in `exclude` is not read (with no retriever, whose scores are relative to
    what it holds), only given its first ids (`reserve`): it is left out of this recall, and
    a later one that asks for it reads what it gained (`follow` goes by its sequence
    number)."""
    dialect = store._dialect
    where = (dialect.prefix, dialect.param)
    with store._lock, store._transaction(dialect.read_begin) as conn:
        if ui.gen is None:
            user_kept.loaded(store, conn, ui, terms, kinds)
        changed = ui.changed(conn, *where)
    skip = exclude if ui.retriever is None else frozenset()
    for conv, seq in changed:
        try:
            with store._lock, store._transaction(dialect.read_begin) as conn:
                if conv.name in skip:
                    ui.reserve(conn, *where, conv)
                else:
                    ui.follow(conn, *where, conv, seq)
        except dialect.errors as exc:
            if dialect.kind(exc) != "corrupt":
                raise
            _skipped(store, conv.name, exc)  # the rest of the user's conversations still read
            continue
        ui.feed()  # a conversation's texts at a time (not the user's all at once), unlocked
    user_kept.settle(ui)
    if changed:
        ui.warm()
    ui.feed()  # the deleted conversations' stretches


def _skipped(store: StoreCore, name: str, exc: BaseException) -> None:
    """Say that conversation `name`, kept in damaged pages, was left out of a recall."""
    detail = " ".join(str(exc).split())
    path = str(getattr(store, "path", ""))
    warnings.warn(
        f"{store._label()}: recall left out conversation {name!r}: the database file is "
        f"damaged where it is kept ({detail}); "
        f"{salvage_advice(path) if path else 'restore a backup'}",
        RuntimeWarning,
        stacklevel=5,
    )


def _ranking_index(ui: UserIndex, query: str) -> str:
    """The index a recall for `query` ranks with: the user's words for a question about
    them, if the user said any, else every word (`_select`)."""
    return "mine" if ranking.asked_speaker(query) == "user" and len(ui.user_index) else "every"


def _asked(ui: UserIndex, query: str) -> tuple[frozenset[str], frozenset[str]]:
    """The postings a recall for `query` may use: every term of every reading of it, in
    the indexes it reads: the one it ranks with (the user's words for a question about
    them, else every word), and every word's too when the query has several readings
    (`_terms` weighs them there)."""
    readings = ui.tokenizer.readings(without_annotations(query))
    if ranking.asked_speaker(query) != "user":
        kinds = _EVERY
    else:
        kinds = INDEXES if len(readings) > 1 else _MINE
    return frozenset().union(*readings), kinds


def _terms(ui: UserIndex, query: str) -> list[str]:
    """The query's terms in the reading the user's stretches hold the largest share of (as
    `Ranker.terms` picks it for one conversation)."""
    readings = ui.tokenizer.readings(without_annotations(query))
    if len(readings) <= 1:
        return readings[0] if readings else []
    rarest = ui.index.rarest
    return max(readings, key=lambda r: len(rarest(r, len(r))) / max(1, len(set(r))))


def _said_then(ui: UserIndex, query: str) -> Callable[[int], bool] | None:
    spans = asked_days(query)  # as `Ranker.ranked` reads them
    if not spans:
        return None
    # As arrays: a question naming days may test every stretch (`ranking.bm25_ranked`).
    lo, hi = ui.docs.day_lo.values(), ui.docs.day_hi.values()

    def said_then(doc: int) -> bool:
        return said_on(lo[doc], hi[doc], spans)

    return said_then


class _Memo:
    """An iterator's items, kept as they are first taken: iterated again from the start, it
    gives the same items and takes new ones only past those (a lazy ranking, filled twice)."""

    def __init__(self, items: Iterable[tuple[int, float]]) -> None:
        self._items = iter(items)
        self._seen: list[tuple[int, float]] = []

    def __iter__(self) -> Iterator[tuple[int, float]]:
        seen, at = self._seen, 0
        while True:
            if at == len(seen):
                item = next(self._items, None)
                if item is None:
                    return
                seen.append(item)
            yield seen[at]
            at += 1


@dataclass
class _Ranked:
    """A question's ranking over one user's index, and the passages it filled `budget` with."""

    ui: UserIndex
    ranked: _Memo
    left_out: set[int]
    tuning: Tuning
    then: Callable[[int], bool] | None
    passages: list[_Passage]
    ahead: int  # the stretches whose pages are read at once (`_read_ahead`)

    def fill(self, room: int) -> list[_Passage]:
        """The same ranking in less room (call under the index's lock)."""
        chosen, _ = _fill(self.ui, self.ranked, room, self.left_out, self.tuning, self.then,
                          self.ahead)  # fmt: skip
        return _passages(self.ui, chosen)


def _select(
    ui: UserIndex, query: str, budget: int, exclude: frozenset[str], tuning: Tuning,
    who: str | None = None,
) -> _Ranked:  # fmt: skip
    """The stretches that fit `budget`, best first, joined into passages (with the index's
    retriever's signal when `who`, the call it was given to, is named)."""
    n = len(ui.docs)
    left_out = {c.id for c in ui.convs.values() if c.name in exclude}
    if n == 0 or budget <= 0:
        return _Ranked(ui, _Memo(()), left_out, tuning, None, [], 1)
    index = ui.user_index if _ranking_index(ui, query) == "mine" else ui.index
    terms = _terms(ui, query)
    dated, alive = ui.docs.dated.__getitem__, ui.docs.alive.__getitem__
    when, then = ranking.asks_when(query), _said_then(ui, query)
    k = 8 + budget // _GRAIN
    retriever = ui.retriever if who is not None else None
    weight = float(getattr(retriever, "weight", 1.0))
    # Asked once: a larger k below takes more of the same answer (its best stays the best).
    other = None if who is None else _retrieved(ui, retriever, query, index, tuning, who)
    while True:
        ranked = _Memo(ranking.bm25_ranked(
            index, terms, n, k, tuning, lambda d: bool(dated(d)), when, then, other, weight,
            lambda d: bool(alive(d)),
        ))  # fmt: skip
        ahead = min(k, _READ_AHEAD)  # no page read past the head before the budget asks
        chosen, skipped = _fill(ui, ranked, budget, left_out, tuning, then, ahead)
        # Tombstones and left-out conversations took places in the exactly scored head: score
        # more, until the room is full or every stretch was looked at.
        room = budget - sum(ui.docs.size[d] for d, _ in chosen)
        if not skipped or room < _GRAIN or k >= len(index):
            break
        k *= 4
    return _Ranked(ui, ranked, left_out, tuning, then, _passages(ui, chosen), ahead)


def _retrieved(
    ui: UserIndex, retriever: Any, query: str, index: Any, tuning: Tuning, who: str
) -> dict[int, float]:
    """The retriever's live stretches, as `Ranker` takes a conversation's: only those
    `index` holds (the user's words, for a question about them) count."""
    alive = ui.docs.alive

    def keep(doc: int) -> bool:
        return bool(alive[doc]) and doc in index

    words = without_annotations(query)
    return retrieved(retriever, words, len(ui.docs), tuning.rank_offset, keep, who)


def _fill(
    ui: UserIndex, ranked: Iterable[tuple[int, float]], budget: int, left_out: set[int],
    tuning: Tuning, then: Callable[[int], bool] | None, ahead: int,
) -> tuple[list[tuple[int, float]], int]:  # fmt: skip
    """The ranked stretches that fit `budget`, and how many were skipped; the stretches said
    on the days the question names (`then`) count though no word matched, as in compose.
    Their pages are read `ahead` stretches at a time."""
    docs = ui.docs
    alive, size, conv = docs.alive, docs.size, docs.conv
    chosen: list[tuple[int, float]] = []
    left, misfits, skipped = budget, 0, 0
    for doc, score in _read_ahead(ui, ranked, ahead):
        if score <= 0 and (then is None or doc >= len(alive) or not then(doc)):
            break  # the recency top-up: nothing in it matches the query
        if doc >= len(alive) or not alive[doc] or conv[doc] in left_out or not size[doc]:
            skipped += 1
            continue
        if size[doc] > left:
            misfits += 1
            if misfits >= tuning.misfits:
                break
            continue
        misfits = 0
        chosen.append((doc, score))
        left -= size[doc]
        if left < _GRAIN // 4:
            break
    return chosen, skipped


def _read_ahead(
    ui: UserIndex, ranked: Iterable[tuple[int, float]], batch: int
) -> Iterator[tuple[int, float]]:
    """`ranked`, the pages of its stretches not read yet read `batch` at a time (one
    statement each, not one per stretch: `_columns.Column.prefetch`). A batch no larger than
    the ranking's head takes nothing past it before the budget asks for more: ranking past
    the head scores every stretch that holds a query term (docs/benchmarks.md, "Stale
    stretches only where a segment holds them")."""
    items = iter(ranked)
    while chunk := list(islice(items, batch)):
        ui.docs.conv.prefetch(doc for doc, _ in chunk)
        yield from chunk


def _passages(ui: UserIndex, chosen: list[tuple[int, float]]) -> list[_Passage]:
    """Chosen stretches next to each other in one conversation, joined; best first."""
    docs = ui.docs
    score = dict(chosen)
    by_conv: dict[int, list[int]] = {}
    for doc, _ in chosen:
        by_conv.setdefault(docs.conv[doc], []).append(doc)
    out: list[_Passage] = []
    place = docs.stretch
    for conv_id, found in by_conv.items():
        name = ui.convs[conv_id].name
        ranked = sorted(found, key=place.__getitem__)
        run = [ranked[0]]
        for doc in ranked[1:]:
            if place[doc] == place[run[-1]] + 1:
                run.append(doc)
            else:
                out.append(_Passage(conv_id, name, run, max(map(score.__getitem__, run))))
                run = [doc]
        out.append(_Passage(conv_id, name, run, max(map(score.__getitem__, run))))
    out.sort(key=lambda p: -p.score)
    return out


def _read(
    store: StoreCore, user: str, ui: UserIndex, passages: Sequence[_Passage]
) -> list[Recalled]:
    """The passages' words as the rows hold them now (one read, the user named again)."""
    if not passages:
        return []
    docs = ui.docs
    spans = []
    for p in passages:
        first, last = p.stretches[0], p.stretches[-1]
        spans.append((docs.first_turn[first], docs.first_piece[first],
                      docs.last_turn[last], docs.last_piece[last]))  # fmt: skip
    out: list[Recalled] = []
    read = _passage_rows(store, user, passages, spans)
    for p, span, rows in zip(passages, spans, read, strict=True):
        found = None if rows is None else _rendered(rows, *span)
        if found is not None:
            text, turns, dates = found
            out.append(Recalled(conversation=p.name, turns=turns, when=_span_of(dates),
                                text=text, score=p.score))  # fmt: skip
    return out


class _ReadDamaged(Exception):
    """A read transaction met damaged pages: it ends in ROLLBACK, what it read is kept."""


def _passage_rows(
    store: StoreCore, user: str, passages: Sequence[_Passage],
    spans: Sequence[tuple[int, int, int, int]],
) -> list[list[tuple[int, Any]] | None]:  # fmt: skip
    """Each passage's rows (idx, record), in one read transaction; None for a passage of a
    conversation kept in damaged pages (named in a warning; the others still read)."""
    dialect = store._dialect
    out: list[list[tuple[int, Any]] | None] = []
    try:
        with store._lock, store._transaction(dialect.read_begin) as conn:
            try:
                held = _rows_of(conn, dialect, user, passages, spans)
                for p, span in zip(passages, spans, strict=True):
                    by_idx = held.get(p.conv, {})
                    out.append([(i, by_idx[i]) for i in range(span[0], span[2] + 1)
                                if i in by_idx])  # fmt: skip
                return out
            except dialect.errors as exc:
                if dialect.kind(exc) != "corrupt":
                    raise
            out = _each_passage(store, conn, user, passages, spans)
            raise _ReadDamaged  # ended by ROLLBACK: a COMMIT after damaged pages fails again
    except _ReadDamaged:
        return out


def _each_passage(
    store: StoreCore, conn: Any, user: str, passages: Sequence[_Passage],
    spans: Sequence[tuple[int, int, int, int]],
) -> list[list[tuple[int, Any]] | None]:  # fmt: skip
    """Each passage's rows read alone; None for every passage of a conversation some of
    whose pages are damaged (named once in a warning)."""
    dialect = store._dialect
    sql = statement(_PASSAGE, dialect.prefix, dialect.param)
    out: list[list[tuple[int, Any]] | None] = []
    damaged: dict[int, tuple[str, BaseException]] = {}
    for p, span in zip(passages, spans, strict=True):
        try:
            out.append(list(conn.execute(sql, (p.conv, user, span[0], span[2])).fetchall()))
        except dialect.errors as exc:
            if dialect.kind(exc) != "corrupt":
                raise
            damaged.setdefault(p.conv, (p.name, exc))
            out.append(None)
    for name, error in damaged.values():
        _skipped(store, name, error)
    return [None if p.conv in damaged else rows for p, rows in zip(passages, out, strict=True)]


def _rows_of(
    conn: Any, dialect: Any, user: str, passages: Sequence[_Passage],
    spans: Sequence[tuple[int, int, int, int]],
) -> dict[int, dict[int, Any]]:  # fmt: skip
    """The rows of every passage's turns, by conversation id and turn index."""
    held: dict[int, dict[int, Any]] = {}
    for at in range(0, len(passages), _SPANS_AT_MOST):
        chunk = range(at, min(at + _SPANS_AT_MOST, len(passages)))
        sql = _PASSAGES.replace("{spans}", ", ".join([_SPAN] * len(chunk)))
        params: list[Any] = []
        for k in chunk:
            params += (passages[k].conv, spans[k][0], spans[k][2])
        params.append(user)
        for conv, idx, raw in conn.execute(
            statement(sql, dialect.prefix, dialect.param), params
        ).fetchall():
            held.setdefault(int(conv), {})[int(idx)] = raw
    return held


def _rendered(
    rows: Sequence[Any], first: int, lo: int, last: int, hi: int
) -> tuple[str, list[int], list[str]] | None:
    """The rows' words from piece `lo` of turn `first` to piece `hi` of turn `last`, a line
    per piece ("role: words"), with the turns they come from and their dates; None if none."""
    lines: list[str] = []
    turns: list[int] = []
    dates: list[str] = []
    for idx, raw in rows:
        idx = int(idx)
        turn, _opens, cuts = record_turn(raw, idx)
        if turn.silent:
            continue
        text = searchable(turn)
        bounds = [0, *cuts, len(text)]
        start = lo if idx == first else 0
        end = min(hi + 1 if idx == last else len(bounds) - 1, len(bounds) - 1)
        if start >= end:
            continue
        lines.append(f"{turn.role}: {text[bounds[start] : bounds[end]]}")
        turns.append(idx)
        if turn.when:
            dates.append(turn.when)
    return ("\n".join(lines), turns, dates) if lines else None


def _span_of(dates: list[str]) -> str:
    if not dates:
        return ""
    return dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"


def source_line(found: Recalled) -> str:
    """How a passage is named in the material compose sends: which conversation, when."""
    turns = found["turns"]
    where = f"turn {turns[0]}" if len(turns) == 1 else f"turns {turns[0]}-{turns[-1]}"
    when = f", {found['when']}" if found["when"] else ""
    return f"the user's conversation {found['conversation']!r}{when}, {where}"


def check_retriever(call: str, retriever: object) -> None:
    """A retriever recall can keep fed as the rows change (incremental), or None."""
    if retriever is None:
        return
    lacks = [m for m in ("fit", "add", "remove") if not callable(getattr(retriever, m, None))]
    if not any(callable(getattr(retriever, m, None)) for m in ("scores", "rank")):
        lacks.append("scores or rank")
    if lacks:
        raise TypeError(
            f"{call}: retriever {type(retriever).__name__} lacks {', '.join(lacks)}; recall "
            "keeps one fed as the user's conversations change, so it needs fit(docs), "
            "add(docs, ids=...), remove(ids) and scores(query) or rank(query): pass e.g. "
            "yait_byheart.semantic.Hybrid(embed), or leave retriever=None"
        )


class RecallSource:
    """The user's other conversations as outside material: ``Memory(external=source)``.

    Called by compose with the query (rule 4: what it returns is admitted only when it
    outscores the conversation's own best stretch, and arrives last, framed as material).
    ``last`` holds what the latest call recalled.
    """

    def __init__(
        self, recall: Callable[..., list[Recalled]], user: str | None, exclude: Sequence[str],
        budget: int, when: str | date | datetime | None, retriever: Any = None,
    ) -> None:  # fmt: skip
        self._recall = recall
        self.user = user
        self.exclude = tuple(exclude)
        self.budget = budget
        self.when = when  # what relative dates in a query are read against (None: not read)
        self.retriever = retriever  # fused into the ranking (None: lexical alone)
        self.last: list[Recalled] = []

    def __call__(self, query: str) -> list[dict[str, str]]:
        if not query.strip():  # compose's external_query=" ": nothing to ask, as recall says
            return []
        self.last = self._recall(query, self.user, self.budget, self.exclude, self.when,
                                 self.retriever, self._over)  # fmt: skip
        return [{"text": found["text"], "source": source_line(found)} for found in self.last]

    def _over(self, found: list[Recalled]) -> int:
        """How far the passages, framed (a marker, a source line each: they count against the
        budget too), pass it; recall then fills its ranking again with that much less room."""
        if not found:
            return 0
        pairs = [(f["text"], source_line(f)) for f in found]
        return len(render_external(pairs)) - self.budget
