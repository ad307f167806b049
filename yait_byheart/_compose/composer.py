"""One compose: choose what to send (rules 1-4), hold the size limit, build the messages.

`Composer.plan` computes the next context and the messages without changing anything;
`Composer.commit` adopts a plan once the journal (if any) has recorded it, so a failed write
leaves the Memory as it was.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .._retrieval.ranker import Ranker
from .._turns.conversation import Conversation
from .._turns.patterns import ASKS
from .._turns.render import (
    OMITTED_MARKER,
    TURN_JOIN,
    Message,
    Part,
    Piece,
    Turn,
    assemble,
    render_ordinary,
    searchable,
    text_part,
    tool_line,
    when_line,
)
from . import external as _external
from . import selection as _selection
from .context import ENTRY, Item, SentContext, carried, loose_item
from .elide import fit_round

Result = dict[str, Any]
# Rule 6 reads the conversation's growth per call from its last EXCHANGES exchanges (as the
# growth average weighs about the last five calls), looking back at most EXCHANGE_WALK turns.
EXCHANGES = 5
EXCHANGE_WALK = 256


@dataclass
class Plan:
    ctx: SentContext | None  # None: nothing worth keeping (the limit cut what was sent)
    growth: float
    upto: int  # the context takes entries up to here; the rest are sent after it as text
    # Entries from here on are sent as themselves, never as settled stretches: the open
    # stretch, and the stretches the request being answered spans (an agent's long rounds).
    live: int = 0
    # Where what the selection's room leaves out begins (`live`, but for a newest exchange
    # held back: it is sent beside the selection, as a kept context would have appended it).
    own: int = 0
    rebuilt: bool = False
    fresh: list[int] = field(default_factory=list)  # this query's fresh selection, best first
    # The fresh selection's stretches the kept context lacks, sent after it uncached (rule 5),
    # and the entries they show.
    after: list[Item] = field(default_factory=list)
    after_entries: list[int] = field(default_factory=list)
    uncached: bool = False  # a rebuild sent unmarked and not kept (rule 6)
    elided: set[int] = field(default_factory=set)  # turns sent with their middle left out
    counts: Counter[str] = field(default_factory=Counter)
    result: Result = field(default_factory=dict)


@dataclass
class Request:
    """What one compose was asked: the text to select by and the message to end with."""

    select_by: str
    query: str  # "" when the messages end with the conversation as appended
    external_query: str
    # The first entry of the request being answered (the last user turn and what followed
    # it; the end when there is none): the kept context stops before it, so these entries
    # end the messages, in order. A query that is the last turn is sent this way, once.
    current: int

    @classmethod
    def make(cls, conv: Conversation, query: Turn | None, external_query: str) -> Request:
        """`query` (a checked turn, its relative dates resolved) as sent: not again if it is
        the last turn (and was not cut into pieces); with a date, under its date line. None
        selects by the latest user text and ends with the conversation as appended."""
        turns = conv.turns
        last = turns[-1] if turns else None
        if query is not None:
            echoed = (
                last is not None and last.role == "user" and not last.redacted
                and last.text == query.text and conv.entries[-1].parts == 1
            )  # fmt: skip
            current = len(conv.entries) - 1 if echoed else len(conv.entries)
            sent = "" if echoed else when_line(query.when) + query.text
            return cls(query.shown, sent, external_query or query.text, current)
        if all(t.silent for t in reversed(turns)):  # no turns, or none left to send
            raise ValueError(
                "Memory.compose: nothing to send: no query and no turn left to send (none "
                "appended, or all redacted); pass the user's message"
            )
        asked = next((i for i in range(len(turns) - 1, -1, -1) if _asks(turns[i])), None)
        if asked is None:
            return cls("", "", external_query, len(conv.entries))
        return cls(turns[asked].shown, "", external_query, conv.first_entry[asked])


class Composer:
    """The sticky selection of one conversation and the counters of its composes."""

    def __init__(
        self, conv: Conversation, ranker: Ranker, *, stability: float, ceiling: float,
        external: _external.External | None, admission: _external.Admission,
    ) -> None:  # fmt: skip
        self.conv = conv
        self.ranker = ranker
        self.stability = stability
        self.ceiling = ceiling
        self.external = external
        self.admission = admission
        self.ctx: SentContext | None = None
        self.growth = float(conv.shape.stretch_size)
        self.stats: Counter[str] = Counter()
        self._open_size: tuple[tuple[int, int, int], int] = ((-1, -1, -1), 0)

    @property
    def measure(self) -> Callable[[str], int]:
        return self.conv.shape.measure

    @property
    def budget(self) -> int:
        return self.conv.shape.budget

    def commit(self, plan: Plan) -> None:
        self.ctx, self.growth = plan.ctx, plan.growth
        self.stats.update(plan.counts)

    def plan(self, request: Request) -> Plan:
        limit = int(self.ceiling * self.budget)
        q_size = self.measure(request.query) if request.query else 0
        if q_size > limit:
            raise ValueError(
                f"Memory.compose: the query alone measures {q_size}, above the hard limit "
                f"ceiling x budget = {limit}; shorten it, or raise budget or ceiling"
            )
        upto = min(self.conv.pending(), request.current)
        live = own = self._live_start(request)
        held = self._held_exchange(request, q_size)
        if held is not None:  # sent after the kept context, not appended to it
            live, upto = min(live, held), min(upto, held)
        plan = Plan(ctx=None, growth=self.growth, upto=upto, live=live, own=own)
        plan.counts["composes"] += 1
        open_size = self._live_size(own)
        ext_text, sources = self._external(request, limit - q_size - open_size)
        ext_size = self.measure(ext_text) if ext_text else 0
        room = self.budget - q_size - ext_size
        ctx, tail = self._next_context(plan, request, room, limit - q_size - ext_size)
        plan.result = self._result(plan, ctx, tail, request, ext_text, sources, q_size)
        if sources:
            plan.counts["external_admitted"] += 1
        return plan

    # -- which context -----------------------------------------------------------------

    def _next_context(
        self, plan: Plan, request: Request, room: int, hard: int
    ) -> tuple[SentContext, list[Item]]:
        """Keep the last context and append to it, or rebuild (rules 1-3); then hold the
        limit: rebuild, then drop the selected block, then trim to the newest entries. With
        the context, the entries sent after it (`_tail`; none once trimmed)."""
        saved = (plan.growth, dict(plan.counts))  # a plain copy: restored only on a fallback
        ctx = self._choose(plan, request, room)
        tail = self._tail(ctx)
        if ctx.size + _size(tail) <= hard:
            if plan.rebuilt:
                plan.uncached = self._uncached(request, ctx)
            else:
                self._floor(plan, ctx, hard - ctx.size - _size(tail))
            return ctx, tail
        for fresh in self._fallbacks(plan, request, room):
            plan.growth, plan.counts, plan.rebuilt = saved[0], Counter(saved[1]), False
            ctx = self._rebuild(plan, fresh)
            tail = self._tail(ctx)
            if ctx.size + _size(tail) <= hard:
                return ctx, tail
        plan.growth, plan.counts = saved[0], Counter(saved[1])
        return self._trimmed(plan, hard), []

    def _fallbacks(self, plan: Plan, request: Request, room: int) -> list[list[int]]:
        if plan.rebuilt:
            return [[]]
        fresh, _ = self._select(request, room - self._live_size(plan.own), plan.live)
        return [fresh, []]

    def _choose(self, plan: Plan, request: Request, room: int) -> SentContext:
        conv, ctx = self.conv, self.ctx
        if conv.total_size <= room:
            if ctx is not None and ctx.start == 0 and not ctx.stretches:
                return self._extended(plan, ctx, [])
            return self._rebuild_everything(plan)
        fresh, weights = self._select(request, room - self._live_size(plan.own), plan.live)
        plan.fresh = fresh
        if ctx is None or self.stability == 0:
            return self._rebuild(plan, fresh)
        t = self.ranker.tuning
        by_pieces = self._by_pieces(ctx)
        kept = {u for u in fresh if ctx.holds(conv, u, by_pieces)}
        joining = _selection.joining(
            kept, fresh, weights, stability=self.stability, shared_score=t.shared_score,
            strong_join=t.strong_join,
        )  # fmt: skip
        joining = self._with_every_part(request, ctx, fresh, weights, joining)
        if joining and not request.query and max(ctx.upto, plan.upto) >= len(conv.entries):
            # Nothing would follow the joined stretches: the kept context already holds the
            # last turn (a query that is that turn, sent before as an earlier compose's
            # tail), so the messages would end with memory, not with it. Built again, they
            # end with it.
            return self._rebuild(plan, fresh)
        new_size = self._new_size(ctx, plan.upto)
        grown = ctx.size + new_size + sum(conv.stretch_sizes[u] for u in joining)
        if grown > self._keep_limit() - (self.budget - room):
            return self._rebuild(plan, fresh)
        return self._extended(plan, ctx, sorted(joining))

    def _with_every_part(
        self, request: Request, ctx: SentContext, fresh: list[int], weights: list[float],
        joining: list[int],
    ) -> list[int]:  # fmt: skip
        """`joining` with a stretch for each part of the question the kept context lacks; when
        stretches join anyway, a missing part comes before more of a part already there, in
        the same room (so the context grows no faster)."""
        parts = self._uncovered(request, ctx, fresh, weights, joining)
        if not parts or not joining:
            return joining + parts
        sizes = self.conv.stretch_sizes
        room = sum(sizes[u] for u in joining)
        out = list(parts)
        used = sum(sizes[u] for u in out)
        for uid in joining:  # best first: the weakest are left out
            if used + sizes[uid] <= room or uid == joining[0]:
                out.append(uid)
                used += sizes[uid]
        return out

    def _uncovered(
        self, request: Request, ctx: SentContext, fresh: list[int], weights: list[float],
        joining: list[int],
    ) -> list[int]:  # fmt: skip
        """Fresh stretches holding a distinctive query word that neither the kept context
        nor the joining stretches hold (rule 3 keeps relevance, this keeps every part); only
        a question has parts, and only relevant stretches answer one."""
        if not ASKS.search(request.select_by):
            return []  # a statement's words are not parts of a question to answer
        conv = self.conv
        by_pieces = self._by_pieces(ctx)
        recent = range(ctx.entries_from(conv), len(conv.starts))
        held = ctx.stretches.union(joining, (u for u in recent if ctx.holds(conv, u, by_pieces)))
        among = [u for u in fresh[: len(weights)] if u not in held]
        return self.ranker.uncovered(request.select_by, held, among)

    def _select(self, request: Request, room: int, live: int) -> tuple[list[int], list[float]]:
        conv, ranker = self.conv, self.ranker
        exact = ranker.exact_k()
        return _selection.select(
            self._ranked(request, live), conv.stretch_sizes, room, exact=exact,
            sliver=conv.shape.stretch_size // 2, misfits=ranker.tuning.misfits,
            saving=conv.join_saving,
        )  # fmt: skip

    def _ranked(self, request: Request, live: int) -> Iterator[tuple[int, float]]:
        """The ranking for the request, less the stretches from `live` on (those the request
        spans, which an agent's long tool rounds closed, and a newest exchange held back):
        those are sent as they happened, after the selection."""
        ranked = self.ranker.ranked(request.select_by)
        if live >= self.conv.open_start:
            return ranked
        own = self.conv.stretch_of(live)
        return (r for r in ranked if r[0] < own)

    def _live_start(self, request: Request) -> int:
        """Where the entries sent as themselves begin: the open stretch, or the start of the
        stretch holding the request being answered if its rounds closed stretches since."""
        conv = self.conv
        if request.current >= conv.open_start:
            return conv.open_start
        return conv.starts[conv.stretch_of(request.current)]

    def _floor(self, plan: Plan, ctx: SentContext, room: int) -> None:
        """Rule 5: the fresh selection's stretches that the kept context lacks are sent after
        it, uncached and not kept, best first while they fit `room`, so a kept context never
        holds less of what the query needs than a fresh selection would send."""
        if not self.ranker.tuning.fresh_floor:
            return
        conv = self.conv
        chosen: list[tuple[Item, Sequence[int]]] = []
        for uid in plan.fresh:
            if ctx.holds(conv, uid, self._by_pieces(ctx)):
                continue
            item, shown = loose_item(conv, uid)
            if item.size <= room:
                room -= item.size
                chosen.append((item, shown))
        chosen.sort(key=lambda pair: pair[0].ref)  # in conversation order, as a rebuild sends
        plan.after = [item for item, _ in chosen]
        plan.after_entries = [i for _, shown in chosen for i in shown]

    def _uncached(self, request: Request, ctx: SentContext) -> bool:
        """Rule 6: whether a rebuilt context costs less sent uncached than kept: a cycle of
        kept calls from its size to the keep limit, growing by what the conversation itself
        adds per exchange (joins left out, so the rule errs towards keeping), costs at least
        what sending a selection of that size at the plain price costs per call."""
        t = self.ranker.tuning
        if not t.send_uncached or self.stability == 0 or not ctx.block:
            return False
        size, growth = float(ctx.size), self._exchange_growth(request, self._by_pieces(ctx))
        write = min(t.cache_write, 1.0)  # as an automatic cache bills
        limit = _selection.keep_limit(
            self.budget, growth, ceiling=self.ceiling, cache_write=write,
            cache_read=t.cache_read, mean_over_budget=t.mean_over_budget,
        )  # fmt: skip
        cost = _selection.cycle_cost(
            size, growth, limit, cache_write=write, cache_read=t.cache_read
        )
        return cost >= size

    def _exchange_growth(self, request: Request, by_pieces: bool) -> float:
        """The median size of the exchanges (a user request and what followed it) before
        `request`, over the last EXCHANGES of them: what a kept context appends per call,
        read from the conversation alone, so a reopened Memory decides the same (the
        median: one exceptional reply does not set the rate). `by_pieces`: the context
        carries long replies by their pieces, so only the rest of an exchange counts."""
        conv = self.conv
        end = min(request.current, len(conv.entries))
        starts = self._exchange_starts(request, EXCHANGES)
        if not starts:
            return 0.0
        bounds = [end, *starts]
        return float(statistics.median(
            self._appended(a, b, by_pieces) / self._calls_in(a, b)
            for b, a in itertools.pairwise(bounds)
        ))  # fmt: skip

    def _appended(self, start: int, end: int, by_pieces: bool) -> int:
        """What a kept context appends of entries `start` to `end`."""
        conv = self.conv
        if not by_pieces:
            return sum(conv.sizes[start:end])
        return sum(conv.sizes[i] for i in range(start, end) if carried(conv, i))

    def _exchange_starts(self, request: Request, n: int) -> list[int]:
        """The first entries of the last `n` exchanges before `request`, newest first,
        looking back at most EXCHANGE_WALK turns."""
        conv = self.conv
        end = min(request.current, len(conv.entries))
        starts: list[int] = []
        t = conv.entries[end - 1].turn if end else -1
        stop = max(-1, t - EXCHANGE_WALK)
        while t > stop and len(starts) < n:
            if _asks(conv.turns[t]):
                starts.append(conv.first_entry[t])
            t -= 1
        return starts

    def _calls_in(self, start: int, end: int) -> int:
        """The model calls an exchange (entries `start` to `end`) takes: one for its request
        and one after each tool result, which the model must read."""
        conv = self.conv
        turns = {conv.entries[i].turn for i in range(start, end)}
        results = sum(
            any(p["type"] == "tool_result" for p in conv.turns[t].tools) for t in turns
        )  # fmt: skip
        return 1 + results

    def _by_pieces(self, ctx: SentContext) -> bool:
        """Whether `ctx` carries long replies by their pieces (`hold_long_replies`): only a
        kept context built from a selection, whose pieces can join as stretches."""
        return self.ranker.tuning.hold_long_replies and self.stability > 0 and ctx.selected

    def _new_size(self, ctx: SentContext, upto: int) -> int:
        """What the entries said since `ctx` add to what is sent: those it will carry (up to
        `upto`) and every one after them (sent after it)."""
        sizes = self.conv.sizes
        if not self._by_pieces(ctx):
            return sum(sizes[ctx.upto :])
        end = max(upto, ctx.upto)
        kept = self._appended(ctx.upto, end, True)
        return kept + sum(sizes[end:])

    def _held_exchange(self, request: Request, q_size: int) -> int | None:
        """Where the newest exchange (the last request before the one being answered, and
        what answered it) begins, at its stretch's start, when it holds a long reply and
        sending it after the kept context costs less than writing it there (`hold_long_
        replies`). Held back, it is billed once in full now and what a context carries of it
        (`carried`) is written on the next call: whole + w x kept; written now, all of it
        costs the write premium now and a read on the next call: (w + r) x whole."""
        conv, t = self.conv, self.ranker.tuning
        if not t.hold_long_replies or self.stability == 0:
            return None
        if conv.total_size <= self.budget - q_size:
            return None  # the whole conversation fits: sent as it is, nothing selected
        starts = self._exchange_starts(request, 1)
        if not starts:
            return None
        k = conv.stretch_of(starts[0])
        start = conv.starts[k] if k < len(conv.starts) else conv.open_start
        end = min(request.current, len(conv.entries))
        whole = sum(conv.sizes[start:end])
        kept = self._appended(start, end, True)
        if kept == whole:
            return None  # no long reply in it
        w, r = t.cache_write, t.cache_read
        return start if whole + w * kept <= (w + r) * whole else None

    def _keep_limit(self) -> float:
        t = self.ranker.tuning
        return _selection.keep_limit(
            self.budget, self.growth, ceiling=self.ceiling, cache_write=t.cache_write,
            cache_read=t.cache_read, mean_over_budget=t.mean_over_budget,
        )  # fmt: skip

    def _extended(
        self, plan: Plan, ctx: SentContext, stretches: list[int], *, own: bool = False
    ) -> SentContext:
        """`ctx` (a copy, unless it is `own`: built for this plan) with the entries said since
        and `stretches`."""
        new = ctx if own else ctx.copy()
        before = new.size
        new.extend(self.conv, stretches, max(plan.upto, new.upto), by_pieces=self._by_pieces(new))
        if not plan.rebuilt:  # a rebuild is counted as a reselect, not as a kept context
            plan.counts["joined" if stretches else "kept"] += 1
        # Exponential average of growth per call (weight 0.2: about the last five calls).
        plan.growth = 0.8 * plan.growth + 0.2 * (new.size - before)
        return new

    def _rebuild_everything(self, plan: Plan) -> SentContext:
        plan.rebuilt = True
        return self._extended(plan, SentContext(start=0, upto=0), [], own=True)

    def _rebuild(self, plan: Plan, fresh: list[int]) -> SentContext:
        plan.rebuilt = True
        start = plan.live
        ctx = SentContext(start=start, upto=start, block=len(fresh))
        for uid in sorted(fresh):
            ctx.add_stretch(self.conv, uid)
        return self._extended(plan, ctx, [], own=True)

    def _live_size(self, start: int) -> int:
        """The entries from `start` on as a rebuild sends them (date lines, the round being
        answered whole)."""
        conv = self.conv
        end = len(conv.entries)
        key = (start, end, conv.total_size)  # a redaction changes the total
        if self._open_size[0] != key:
            probe = SentContext(start=start, upto=start)
            for i in range(start, end):
                probe.add_entry(conv, i, end, whole=True)
            self._open_size = (key, probe.size)
        return self._open_size[1]

    # -- the size limit --------------------------------------------------------------------

    def _tail(self, ctx: SentContext) -> list[Item]:
        """Entries after the context: the current request, as appended (tool pairs whole in
        it native), and a call still waiting for its result (as text)."""
        end = len(self.conv.entries)
        if ctx.upto >= end:
            return []
        # An entry's rendering depends only on the last two items and the native calls, so
        # the probe starts from those instead of a copy of the whole context.
        before = ctx.items[-2:]
        probe = SentContext(
            ctx.start, ctx.upto, items=list(before), native_calls=set(ctx.native_calls)
        )
        for i in range(ctx.upto, end):
            probe.add_entry(self.conv, i, end, whole=True)
        return probe.items[len(before) :]

    def _trimmed(self, plan: Plan, hard: int) -> SentContext:
        """The newest entries that fit `hard`, after a note of what was left out: the newest
        tool round native (its long strings elided when it does not fit alone), older
        entries as text."""
        conv = self.conv
        marker = Item(ENTRY, -1, "user", OMITTED_MARKER, self.measure(OMITTED_MARKER))
        end = len(conv.entries)
        ctx = SentContext(start=end, upto=end)
        room = hard - marker.size
        plan.counts["trimmed"] += 1
        plan.rebuilt = True
        if room < 0:  # not even the note fits (outside material took the room): the newest
            alone = self._newest_words(plan, hard, whole_only=False)  # words, their end
            return alone if alone is not None else ctx
        round_start, native = self._native_round(plan, marker, room)
        if native:
            room -= _size(native.items[1:])
            ctx.hold(native.entries)
        kept: list[Item] = []
        after = native.items[1] if native else None  # what the next item kept comes before
        for i in range(round_start - 1, plan.live - 1, -1):
            probe = SentContext(start=i, upto=i, items=[marker])
            # Entry by entry, as text: a limit of i + 1 keeps a cut turn in its pieces.
            probe.add_entry(conv, i, i + 1, replay=set())
            if len(probe.items) == 1:
                continue  # silent: redacted or empty
            item = probe.items[-1]
            if item.role == "assistant" and after is not None and after.role == "assistant":
                # Measured alone, after the note: assemble joins it to the message after it.
                item = replace(item, size=item.size + self.measure(TURN_JOIN))
            if item.size > room:
                break
            room -= item.size
            kept.append(item)
            after = item
            ctx.hold(probe.entries)
        if not native:
            # The note alone, or with the user's newest request (the last turn) only in part:
            # that request alone (whole if it fits, else its end) is worth more to the model.
            alone = self._newest_words(plan, hard, whole_only=bool(kept))
            if alone is not None and not set(alone.entries) <= set(ctx.entries):
                return alone
        rest = native.items[1:] if native else []
        ctx.replace_items([marker, *reversed(kept), *rest])
        return ctx

    def _newest_words(self, plan: Plan, hard: int, whole_only: bool) -> SentContext | None:
        """The newest user turn with words (else the newest turn that shows any) alone and
        whole, as text; only its end, verbatim, when it does not fit `hard`. With
        `whole_only`, None unless that turn is the last and fits whole. For a limit too small
        for the omission note and a turn beside it."""
        conv = self.conv
        end = len(conv.entries)
        shown = list(conv.shown_entries(plan.live, end))
        said = [i for i in shown if _asks(conv.turns[conv.entries[i].turn])]
        ctx = SentContext(start=end, upto=end)
        if not shown or hard < 1:
            return None if whole_only else ctx
        newest = (said or shown)[-1]
        if whole_only and newest != shown[-1]:
            return None  # newer turns were kept: they stay, after the note
        t = conv.entries[newest].turn
        turn, first = conv.turns[t], conv.first_entry[t]
        prefix = "" if turn.role == "user" else f"{turn.role}: "  # the first message is a user's
        text = render_ordinary(Piece(turn, searchable(turn)), with_when=True, named=bool(prefix))
        if self.measure(text) > hard:
            if whole_only:
                return None
            body = searchable(turn)
            room = hard - self.measure(prefix)
            text = prefix + _last_words(body, room, self.measure) if room > 0 else ""
            plan.elided.add(t)
        if text:
            ctx.replace_items([Item(ENTRY, first, "user", text, self.measure(text))])
            ctx.hold(range(first, first + conv.entries[first].parts))
        return ctx

    def _native_round(self, plan: Plan, marker: Item, room: int) -> tuple[int, SentContext | None]:
        """The newest tool round (from the call the last result answers to the end) sent
        natively after `marker`, if the last turn is a result; its outputs and texts elided
        (the turns named in `plan.elided`) when the round alone is over `room`. Also where
        the entries left for text end."""
        conv = self.conv
        end = len(conv.entries)
        last = conv.turns[conv.entries[-1].turn] if end else None
        results = [p for p in last.tools if p["type"] == "tool_result"] if last else []
        call_turn = conv.calls.get(results[-1]["id"]) if results else None
        if call_turn is None or conv.first_entry[call_turn] < plan.live:
            return end, None
        start = conv.first_entry[call_turn]
        probe = SentContext(start=start, upto=start, items=[marker])
        for i in range(start, end):
            probe.add_entry(conv, i, end, whole=True)
        if not probe.native_calls:
            return end, None
        fits = room - self.measure(TURN_JOIN)
        if _size(probe.items[1:]) > fits:
            cut = fit_round(probe.items[1:], fits, self.measure)
            if cut is None:
                return end, None
            probe.replace_items([marker, *cut[0]])
            plan.elided = {conv.entries[i].turn for i in cut[1]}
        return start, probe

    # -- outside material and the result -------------------------------------------------

    def _external(self, request: Request, limit: int) -> tuple[str, list[str]]:
        if self.external is None or not request.external_query:
            return "", []
        candidates = _external.check_candidates(self.external(request.external_query))
        if not candidates:
            return "", []
        ranker = self.ranker
        ranker.sync()
        return _external.admit(
            candidates, ranker.terms(request.external_query), ranker.index,
            ranker.tokenizer.tokenize,
            self.admission, self.budget, limit, self.measure,
        )  # fmt: skip

    def _result(
        self, plan: Plan, ctx: SentContext, tail: list[Item], request: Request, ext_text: str,
        sources: list[str], q_size: int,
    ) -> Result:  # fmt: skip
        trimmed = plan.counts["trimmed"] > 0
        if trimmed and self.ranker.tuning.send_uncached and self.stability > 0:
            plan.uncached = True  # kept by no one, so no later call reads what it would write
        pieces, where = self._pieces(
            ctx.items, plan.after + _ext_items(ext_text), tail, request.query
        )
        messages, at = assemble(pieces)
        where = [at[p] for p in where]
        kept_items = len(ctx.items)
        stable = where[kept_items - 1] if kept_items and not plan.uncached else -1
        breakpoints = _breakpoints(ctx, where, plan.rebuilt, stable)
        ctx.sent_items = kept_items
        plan.ctx = None if trimmed or plan.uncached else ctx
        if plan.rebuilt:
            plan.counts["reselects"] += 1
        if plan.uncached:
            plan.counts["uncached"] += 1
        passthrough = ctx.start == 0 and not ctx.stretches and not trimmed
        plan.counts["passthrough" if passthrough else "assembled"] += 1
        included, partial = _included(self.conv, ctx, tail, plan.after_entries)
        if plan.elided:
            partial = sorted(plan.elided.union(partial))
        sizes = ctx.size + _size(plan.after) + _size(tail)
        return {
            "messages": messages,
            "mode": "passthrough" if passthrough else "assembled",
            "chars": _chars(messages),
            "size": sizes + (self.measure(ext_text) if ext_text else 0) + q_size,
            "reselected": plan.rebuilt,
            "selected": len(ctx.stretches),
            "of_units": len(self.conv.starts),
            "included": included,
            "partial": partial,
            "stable_upto": stable,
            "breakpoints": breakpoints,
            "external": sources,
        }

    @staticmethod
    def _pieces(
        items: list[Item], after: list[Item], tail: list[Item], query: str
    ) -> tuple[list[tuple[str, list[Part]]], list[int]]:
        """Messages in order: the kept context, what is sent after it uncached (stretches of
        rule 5, outside material), the current request (the entries after the context), the
        query; and where each context item went."""
        pieces: list[tuple[str, list[Part]]] = []
        where: list[int] = []
        # Texts joined into one message, concatenated once: a rebuilt block joins dozens.
        joins: dict[int, list[str]] = {}
        for item in items:
            if item.joined and pieces:
                at = len(pieces) - 1
                joins.setdefault(at, [pieces[at][1][0]["text"]]).append(item.text)
            else:
                pieces.append((item.role, _item_parts(item)))
            where.append(len(pieces) - 1)
        for at, texts in joins.items():
            pieces[at][1][0] = text_part("".join(texts))
        pieces += [(item.role, _item_parts(item)) for item in after + tail]
        if query:
            pieces.append(("user", [text_part(query)]))
        return pieces, where


def _last_words(text: str, room: int, measure: Callable[[str], int]) -> str:
    """The longest end of `text` that measures at most `room`, from a word's start when
    one fits (verbatim: a cut inside a word only when no whole word fits)."""
    low, high = 0, len(text)
    while low < high:  # the most characters of the end that fit
        take = (low + high + 1) // 2
        if measure(text[len(text) - take :]) <= room:
            low = take
        else:
            high = take - 1
    tail = text[len(text) - low :]
    space = next((k for k, c in enumerate(tail) if c.isspace()), -1)
    if 0 < low < len(text) and not text[-low - 1].isspace() and 0 <= space < len(tail) - 1:
        return tail[space + 1 :]
    return tail


def _size(items: list[Item]) -> int:
    return sum(item.size for item in items)


def _asks(turn: Turn) -> bool:
    """Whether `turn` is a user's request (words, not only tool results)."""
    return turn.role == "user" and bool(turn.shown.strip())


def _ext_items(text: str) -> list[Item]:
    """Outside material as one user message, or none."""
    return [Item(ENTRY, -1, "user", text, 0)] if text else []


def _included(
    conv: Conversation, ctx: SentContext, tail: list[Item], after: list[int]
) -> tuple[list[int], list[int]]:
    """The turns sent (any entry), and those sent only in part; a cut tool turn of the
    round being answered is sent whole (its first entry stands for all). `after`: the
    entries sent after the context besides `tail`."""
    entries: list[int] = list(after)
    for item in tail:
        first = conv.entries[item.ref]
        whole = first.parts > 1 and bool(conv.turns[first.turn].tools)
        entries.extend(range(item.ref, item.ref + first.parts) if whole else [item.ref])
    return ctx.included_turns(conv, entries)


def _item_parts(item: Item) -> list[Part]:
    if not item.tools:
        return [text_part(item.text)] if item.text else []
    # Copies: a turn's own parts must not change with what a caller does to a result.
    results = [dict(p) for p in item.tools if p["type"] == "tool_result"]
    calls = [dict(p) for p in item.tools if p["type"] == "tool_call"]
    text = [text_part(item.text)] if item.text else []
    return [*results, *text, *calls]  # a provider wants tool results first in their message


def _chars(messages: list[Message]) -> int:
    return sum(
        len(p["text"]) if p["type"] == "text" else len(tool_line(p))
        for m in messages for p in m["parts"]
    )  # fmt: skip


def _breakpoints(ctx: SentContext, where: list[int], reselected: bool, stable: int) -> list[int]:
    """Where to mark the prompt cache: the rebuilt block, last call's prefix, this prefix.

    Marking last call's end guarantees the next read finds the entry even when the prefix grew
    by more than the ~20 blocks a provider looks back from a single breakpoint.
    """
    if stable < 0:
        return []
    marks = {stable}
    if ctx.block:
        marks.add(where[ctx.block - 1])
    if not reselected and 0 < ctx.sent_items <= len(ctx.items):
        marks.add(where[ctx.sent_items - 1])
    return sorted(marks)[-4:]
