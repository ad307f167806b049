"""Memory: keep the conversation verbatim, compose what to send before each model call.

>>> mem = Memory(budget=2_000)
>>> mem.append("user", "we decided on 55 euro a month", when="8 May 2023")
0
>>> r = mem.compose("what did we decide about pricing?")
>>> r["mode"], [m["role"] for m in r["messages"]]
('passthrough', ['user', 'user'])
>>> print(r["messages"][0]["parts"][0]["text"])
[8 May 2023]
we decided on 55 euro a month
"""

from __future__ import annotations

import heapq
import math
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from . import _persist, _retrieval
from ._render import (
    KINDS,
    MEMORY_MARKER,
    SAID,
    TURN_JOIN,
    Turn,
    assemble,
    render_external,
    render_ordinary,
    render_unit,
    when_line,
)
from ._time import format_day, parse_when
from ._time import resolve_time as _resolve_time
from ._tokens import term_counts, tokenize
from .bm25 import Index

# Provider prices relative to uncached input (Anthropic: write 1.25x, read 0.10x; see
# docs/prompt-cache.md). They set how far a kept prefix may grow before a rebuild pays off.
CACHE_WRITE = 1.25
CACHE_READ = 0.10
# A kept context grows from about the budget to its limit, so it averages (budget + limit) / 2:
# a limit of 3 x budget holds the average call to 2 x budget, whatever the cost model says.
MEAN_OVER_BUDGET = 2.0
# What every chosen stretch scores anyway (speaker names, common words) says nothing about
# which one a query needs: a stretch counts for coverage by its score above this share of the
# weakest chosen one's. LoCoMo dev file, live replay at 8,000 characters (prefix reuse, billed
# vs uncached) and sticky-minus-fresh evidence recall at 4,000 / 8,000: 0 -> 84.5 %, 0.357,
# +0.3 / +0.7 points; 0.5 -> 85.6 %, 0.340, +0.1 / -0.3; 0.65 -> 86.4 %, 0.327, +0.3 / -0.4;
# 0.75 -> 86.8 %, 0.321, -1.2 / -1.1 (more reuse, recall below the one-point bound).
SHARED_SCORE = 0.65
# A missing stretch that scores at least this share of the fresh selection's best joins the
# kept context even when coverage is met: a pointed match is never left out for coverage's
# sake. LoCoMo dev (200-character stretches at 4,000; eval/ablate_retrieval.py), sticky
# evidence recall at 4,000 / 8,000 / 20,000 against fresh 0.787 / 0.844 / 0.907: off 0.776 /
# 0.840 / 0.907 (1.1 points below fresh at 4,000, past the one-point bound); 0.75 0.777 /
# 0.843 / 0.907; 0.5 0.778 / 0.845 / 0.915, but the live replay at 8,000 then reuses the
# prefix on only 84.0 % of assembled calls (floor 85 %; 0.75: 85.7 %).
STRONG_JOIN = 0.75
# A query keeps its 8 rarest terms (see Index.rarest). Questions have 3-8 content words and keep
# them all: LoCoMo evidence recall moved by at most 0.002 against no cap, while a compose at
# 100,000 turns of long chat queries went from ~10 ms to ~4 ms (eval/bench_live.py).
QUERY_TERMS = 8
# A custom retriever ranks without scores, but the sticky rules weigh a selection by relevance:
# rank r (from 0) weighs 1 / (RANK_OFFSET + r + 1), reciprocal rank fusion's shape (G. V.
# Cormack, C. L. A. Clarke, S. Buettcher, SIGIR 2009). With 0, the weights fell much faster over
# a selection than byheart's own BM25 scores do, so a kept context holding a query's top few
# counted as covered and the rest of its selection never joined. LoCoMo dev, yait_byheart.BM25
# as the retriever, at 4,000 / 8,000 / 20,000 (eval/custom_retriever.py): last over first
# weight of a selection (median) 0.11 / 0.07 / 0.03 at 0, 0.58 / 0.44 / 0.23 at 10, BM25's own
# 0.39 / 0.31 / 0.18; sticky evidence recall 0.662 / 0.751 / 0.809 at 0, 0.728 / 0.787 / 0.870
# at 10 (fresh 0.725 / 0.792 / 0.859); prefix reused on 80.2 / 86.3 / 92.7 % of assembled calls
# at 10, as with the built-in ranking (60: recall 0.759 / 0.817 / 0.894, reuse 71.0 / 81.1 /
# 91.4 %).
RANK_OFFSET = 10
# A stretch never takes more than this share of the budget, so at least two always fit.
MAX_UNIT_SHARE = 0.5
# How many zero-score units (newest first) may top up a selection that relevance left short.
RECENCY_FILL_SCAN = 200
# A selection stops after this many stretches in a row too large for the room left: the
# remainder is then smaller than nearly every stretch, and hunting for one that fits scanned
# every scored stretch (2.5 ms per call at 10k turns, 300-character stretches).
MISFITS = 32


class Retriever(Protocol):
    """Anything that can replace the built-in BM25 ranking of stretches."""

    def fit(self, docs: list[str]) -> Any: ...
    def rank(self, query: str) -> list[int]: ...


class Journal(Protocol):
    """Receives every change before the changing call returns (see `yait_byheart.store`)."""

    def turn_appended(self, index: int, record: dict[str, Any]) -> None: ...
    def turn_redacted(self, index: int, record: dict[str, Any]) -> None: ...
    def state_changed(self, state: dict[str, Any]) -> None: ...


External = Callable[[str], Sequence[dict[str, Any]]]
Boundaries = Callable[[list[dict[str, str]]], bool]


@dataclass
class _Context:
    """What the last call sent, kept so the next call can repeat it byte for byte.

    Items are ("u", unit) for a settled stretch or ("t", turn) for a turn sent as itself.
    Turns from `start` up to `upto` are all in it as themselves; units come before them (the
    block chosen at the last rebuild) or between them (appended later, when a query needed them).
    """

    start: int
    upto: int
    items: list[tuple[str, int]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    units: set[int] = field(default_factory=set)
    block: int = 0  # items chosen at the rebuild; the rest were appended after
    # Items that continue the message of the item before (a stretch right after its
    # predecessor, both in the block): `assemble` gets them as one piece.
    joined: set[int] = field(default_factory=set)
    sent_items: int = 0  # items the previous call sent (its cache breakpoint)
    # Unredacted turns it holds, kept as items are added (a redaction drops the whole context).
    included: set[int] = field(default_factory=set)

    @property
    def size(self) -> int:
        return sum(self.sizes)


def _check_number(call: str, name: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{call}: {name} must be a number, got {type(value).__name__}")
    if not (low <= value <= high) or math.isnan(value):
        raise ValueError(f"{call}: {name}={value!r} is out of range; use {low} to {high}")
    return float(value)


def _check_date_order(call: str, order: str | None) -> str | None:
    if order not in (None, "dmy", "mdy"):
        raise ValueError(
            f"{call}: date_order={order!r}; use 'dmy' (when='05/08/2023' is 5 August), "
            "'mdy' (May 8) or None (such a when is refused)"
        )
    return order


class Memory:
    """A conversation kept verbatim, and the composer of what to send before each model call.

    Sizes (`budget`, `chunk`) are in characters unless `measure` (a `str -> int` callable, e.g.
    a tokenizer's length) says otherwise. See the README for the four rules.
    """

    def __init__(
        self,
        *,
        budget: int = 20_000,
        chunk: int = 900,
        retriever: Retriever | None = None,
        boundaries: Boundaries | None = None,
        stability: float = 0.7,
        external: External | None = None,
        external_margin: float = 0.0,
        external_share: float = 0.3,
        external_max: float = 1.0,
        resolve_time: bool = True,
        date_order: str | None = None,
        ceiling: float = 4.0,
        measure: Callable[[str], int] | None = None,
    ) -> None:
        call = "Memory()"
        self.budget = int(_check_number(call, "budget", budget, 1, math.inf))
        self.chunk = int(_check_number(call, "chunk", chunk, 1, math.inf))
        self.stability = _check_number(call, "stability", stability, 0.0, 1.0)
        self.external_margin = _check_number(call, "external_margin", external_margin, 0, 1e9)
        self.external_share = _check_number(call, "external_share", external_share, 0.0, 1.0)
        self.external_max = _check_number(call, "external_max", external_max, 0.0, 1.0)
        if self.external_max < self.external_share:
            raise ValueError(
                f"{call}: external_max={external_max} is below external_share={external_share};"
                " external_max is the most outside material may take, so it must be >= the share"
            )
        self.ceiling = _check_number(call, "ceiling", ceiling, 1.0, 1e6)
        for name, fn in (("boundaries", boundaries), ("external", external), ("measure", measure)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{call}: {name} must be callable or None")
        if retriever is not None and not (
            callable(getattr(retriever, "fit", None)) and callable(getattr(retriever, "rank", None))
        ):
            raise TypeError(f"{call}: retriever needs fit(docs) and rank(query) methods")
        self.resolve_time = bool(resolve_time)
        self.date_order = _check_date_order(call, date_order)
        self.retriever = retriever
        self.boundaries = boundaries
        self.external = external
        self.measure: Callable[[str], int] = measure or len

        self._lock = threading.RLock()
        self._turns: list[Turn] = []
        self._sizes: list[int] = []  # measured size of each turn as passthrough sends it
        self._unit_starts: list[int] = []  # closed stretches are turns [start_k, start_k+1)
        self._unit_sizes: list[int] = []
        # What stretch k saves when sent as the continuation of stretch k - 1 (see
        # `_join_saving`); -1 until a selection first needs it, so reopening computes none.
        self._unit_joins: list[int] = []
        self._open_start = 0
        self._open_size = 0
        self._total_size = 0
        self._index = Index()
        self._retriever_fitted = -1
        self._ctx: _Context | None = None
        self._growth = float(self._unit_limit)
        self._stats: Counter[str] = Counter()
        self._journal: Journal | None = None

    # -- sizes ---------------------------------------------------------------------------

    @property
    def _unit_limit(self) -> int:
        """The stretch size that closes a stretch at the next user turn.

        A third of `chunk` (see `_retrieval`: a stretch is scored together with its
        neighbours, so `chunk` is about the span of talk scored at once), at most a twentieth
        of the budget (`Settings.stretches_per_budget`), and at most half
        the hard cap, so that the reply that usually follows still fits under the cap and
        cuts keep falling on user turns.
        """
        settings = _retrieval.SETTINGS
        own = int(self.chunk * settings.stretch_share)
        if settings.stretches_per_budget > 0:
            own = min(own, int(self.budget / settings.stretches_per_budget))
        return max(1, min(own, int(self.budget * MAX_UNIT_SHARE / 2)))

    def _measure(self, text: str) -> int:
        if self.measure is len:
            return len(text)  # the default needs no checking (reopening calls this ~135k times)
        n = self.measure(text)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise TypeError(
                f"Memory: measure({text[:20]!r}...) returned {n!r}; it must return an int >= 0"
            )
        return n

    def __len__(self) -> int:
        return len(self._turns)

    @property
    def stats(self) -> dict[str, int]:
        """Counters: composes, reselects, passthrough, appended, kept, external_admitted, ..."""
        with self._lock:
            keys = ("composes", "reselects", "passthrough", "assembled", "appended", "kept")
            out = {k: self._stats.get(k, 0) for k in keys}
            out.update(self._stats)
            out["turns"] = len(self._turns)
            out["units"] = len(self._unit_starts)
            return out

    # -- ingest --------------------------------------------------------------------------

    def append(
        self,
        role: str,
        text: str,
        *,
        kind: str = SAID,
        source: str = "",
        when: str | date | datetime = "",
    ) -> int:
        """Store one turn verbatim and return its index.

        `when` dates the turn; with `resolve_time` on, relative dates in the text are annotated
        beside the words ("last Saturday [20 May 2023]"); a numeric `when` whose day and month
        could swap (05/08/2023) needs `date_order` ("dmy" or "mdy") on the Memory.
        """
        call = "Memory.append"
        if role not in ("user", "assistant"):
            raise ValueError(f'{call}: role={role!r}; use "user" or "assistant"')
        if not isinstance(text, str):
            raise TypeError(f"{call}: text must be a str, got {type(text).__name__}")
        if not text.strip():
            # Providers refuse blank messages (Anthropic and Gemini answer HTTP 400).
            raise ValueError(f"{call}: text is blank; append only turns that say something")
        if kind not in KINDS:
            raise ValueError(f"{call}: kind={kind!r}; use SAID, SUPPLIED or DERIVED")
        if not isinstance(source, str):
            raise TypeError(f"{call}: source must be a str, got {type(source).__name__}")
        label = self._when_label(call, when)
        shown = text
        if self.resolve_time and label:
            anchor = parse_when(when, self.date_order)
            if anchor is None:
                raise ValueError(
                    f"{call}: cannot read a date in when={when!r}; pass e.g. '8 May 2023', "
                    "'1:56 pm on 8 May, 2023', an ISO date or a date object, or build the Memory "
                    "with resolve_time=False to keep free-form labels"
                )
            shown = _resolve_time(text, anchor)
        turn = Turn(role, text, shown, kind, source, label)
        with self._lock:
            self._add_turn(turn, journal=True)
            return len(self._turns) - 1

    @staticmethod
    def _when_label(call: str, when: object) -> str:
        if isinstance(when, datetime):
            return f"{format_day(when.date())} {when:%H:%M}"
        if isinstance(when, date):
            return format_day(when)
        if isinstance(when, str):
            return when.strip()
        raise TypeError(f"{call}: when must be a str, date or datetime, got {type(when).__name__}")

    def _closes_stretch(self, turn: Turn, size: int) -> bool:
        """Whether `turn` opens a new stretch (closing the open one)."""
        if self._open_start == len(self._turns):
            return False  # nothing open to close
        if self._open_size + size > self.budget * MAX_UNIT_SHARE:
            return True  # the cap wins over everything: every stretch must fit twice in the budget
        if turn.role != "user":
            return False
        if self.boundaries is not None:
            stretch = [
                {"role": t.role, "text": t.shown} for t in self._turns[self._open_start :]
            ] + [{"role": turn.role, "text": turn.shown}]
            return bool(self.boundaries(stretch))
        return self._open_size >= self._unit_limit

    def _add_turn(self, turn: Turn, *, journal: bool, opens: bool | None = None) -> None:
        index = len(self._turns)
        # Sized as passthrough sends it (with its date line and any speaker naming), so that
        # "everything fits" is judged on what would really be sent.
        with_when = index == 0 or turn.when != self._turns[-1].when
        named = index == 0 and turn.role == "assistant"
        rendered = "" if turn.redacted else render_ordinary(turn, with_when=with_when, named=named)
        size = self._measure(rendered)
        turn.opens = self._closes_stretch(turn, size) if opens is None else opens
        if journal and self._journal is not None:
            self._journal.turn_appended(index, _persist.turn_record(turn))
        if turn.opens and self._open_start < index:
            self._close_stretch(index)
        self._turns.append(turn)
        self._sizes.append(size)
        self._open_size += size
        self._total_size += size

    def _close_stretch(self, end: int) -> None:
        self._unit_starts.append(self._open_start)
        turns = self._turns[self._open_start : end]
        self._unit_sizes.append(self._measure(render_unit(turns)) if _visible(turns) else 0)
        self._unit_joins.append(-1)
        self._open_start = end
        self._open_size = 0

    def _index_closed(self) -> None:
        """Index the stretches closed since the last call that needed the index.

        Deferred from append to compose: a stretch closes on about every other user turn, and
        indexing it then (~100-200 us into large, cache-cold postings at 100,000 turns) made
        that append the median one. A compose indexes the one or two closed since the last.
        """
        for uid in range(len(self._index), len(self._unit_starts)):
            self._index.add(uid, _unit_counts(self._turns[slice(*self._unit_range(uid))]))

    def _unit_range(self, uid: int) -> tuple[int, int]:
        end = self._unit_starts[uid + 1] if uid + 1 < len(self._unit_starts) else self._open_start
        return self._unit_starts[uid], end

    # -- redaction -----------------------------------------------------------------------

    def redact(self, index: int) -> None:
        """Blank turn `index` everywhere (index, output, persistence); positions stay stable."""
        with self._lock:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"Memory.redact: index must be an int, got {type(index).__name__}")
            if not -len(self._turns) <= index < len(self._turns):
                raise IndexError(
                    f"Memory.redact: no turn {index}; valid indices are 0 to {len(self._turns) - 1}"
                )
            index %= len(self._turns)
            old = self._turns[index]
            if old.redacted:
                return
            new = Turn(old.role, "", "", old.kind, "", old.when, old.opens, redacted=True)
            if self._journal is not None:
                self._journal.turn_redacted(index, _persist.turn_record(new))
            self._apply_redaction(index, new)
            if self._journal is not None:
                self._journal.state_changed(_persist.state_record(self))

    def _apply_redaction(self, index: int, new: Turn) -> None:
        self._index_closed()
        uid = bisect_right(self._unit_starts, index) - 1
        closed = uid >= 0 and index < self._unit_range(uid)[1]
        if closed:
            start, end = self._unit_range(uid)
            self._index.remove(uid, _unit_counts(self._turns[start:end]))
        self._turns[index] = new
        self._total_size -= self._sizes[index]
        if not closed:
            self._open_size -= self._sizes[index]
        self._sizes[index] = 0
        if closed:
            turns = self._turns[start:end]
            self._index.add(uid, _unit_counts(turns))
            self._unit_sizes[uid] = self._measure(render_unit(turns)) if _visible(turns) else 0
            self._unit_joins[uid] = -1
            if uid + 1 < len(self._unit_joins):
                self._unit_joins[uid + 1] = -1
        self._retriever_fitted = -1
        self._ctx = None  # what was sent may hold the words: never send it again
        self._stats["redactions"] += 1

    # -- composition ---------------------------------------------------------------------

    def compose(self, query: str, *, external_query: str = "") -> dict[str, Any]:
        """The messages to send now: the conversation's own words, selected, then `query`.

        Returns a dict with `messages`, `mode`, `chars`, `size`, `reselected`, `selected`,
        `of_units`, `included`, `stable_upto`, `breakpoints`, `external`.
        """
        if not isinstance(query, str):
            raise TypeError(f"Memory.compose: query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("Memory.compose: query is blank; pass the user's new message")
        if not isinstance(external_query, str):
            raise TypeError("Memory.compose: external_query must be a str")
        with self._lock:
            return self._compose(query, external_query or query)

    def _compose(self, query: str, external_query: str) -> dict[str, Any]:
        self._stats["composes"] += 1
        q_size = self._measure(query)
        ext_text, ext_sources = self._external(external_query)
        ext_size = self._measure(ext_text) if ext_text else 0
        room = self.budget - q_size - ext_size

        previous = self._ctx
        ctx = self._next_context(query, room)
        reselected = ctx is not previous
        if reselected:
            self._stats["reselects"] += 1
        self._ctx = ctx

        pieces: list[tuple[str, str]] = []
        piece_of: list[int] = []  # the piece that carries each item
        for k, text in enumerate(ctx.texts):
            if k in ctx.joined:
                role, before = pieces[-1]
                pieces[-1] = (role, before + text)
            else:
                pieces.append((self._piece_role(ctx, k), text))
            piece_of.append(len(pieces) - 1)
        if ext_text:
            pieces.append(("user", ext_text))
        pieces.append(("user", query))
        messages, at = assemble(pieces)
        where = [at[p] for p in piece_of]
        stable = where[-1] if where else -1
        breakpoints = self._breakpoints(ctx, where, reselected, stable)
        ctx.sent_items = len(ctx.items)

        passthrough = ctx.start == 0 and not ctx.units
        self._stats["passthrough" if passthrough else "assembled"] += 1
        if ext_sources:
            self._stats["external_admitted"] += 1
        if self._journal is not None:
            self._journal.state_changed(_persist.state_record(self))
        return {
            "messages": messages,
            "mode": "passthrough" if passthrough else "assembled",
            "chars": sum(len(m["parts"][0]["text"]) for m in messages),
            "size": sum(ctx.sizes) + ext_size + q_size,
            "reselected": reselected,
            "selected": len(ctx.units),
            "of_units": len(self._unit_starts),
            "included": sorted(ctx.included),
            "stable_upto": stable,
            "breakpoints": breakpoints,
            "external": ext_sources,
        }

    def _piece_role(self, ctx: _Context, k: int) -> str:
        kind, i = ctx.items[k]
        if kind == "u" or k == 0:
            return "user"  # a first assistant turn is rendered named, as a user message
        return self._turns[i].role

    @staticmethod
    def _breakpoints(ctx: _Context, where: list[int], reselected: bool, stable: int) -> list[int]:
        """Where to mark the prompt cache: the rebuilt block, last call's prefix, this prefix.

        Marking last call's end guarantees the next read finds the entry even when the prefix
        grew by more than the ~20 blocks a provider looks back from a single breakpoint.
        """
        if stable < 0:
            return []
        marks = {stable}
        if ctx.block:
            marks.add(where[ctx.block - 1])
        if not reselected and 0 < ctx.sent_items <= len(ctx.items):
            marks.add(where[ctx.sent_items - 1])
        return sorted(marks)[-4:]

    # -- the selection and how long it is kept --------------------------------------------

    def _next_context(self, query: str, room: int) -> _Context:
        """Keep the last context and append to it, or rebuild: rules 1-3 of the README."""
        ctx = self._ctx
        if self._total_size <= room:
            # Rule 1: everything fits. A passthrough context just grows with the conversation.
            if ctx is not None and ctx.start == 0 and not ctx.units:
                self._extend(ctx, [])
                return ctx
            return self._rebuild_everything()
        fresh, weights = self._select(query, room - self._open_rendered_size())
        if ctx is None or self.stability == 0:
            return self._rebuild(fresh)
        joining = self._joining(ctx, fresh, weights)
        new_turn_size = sum(self._sizes[ctx.upto :])
        grown = ctx.size + new_turn_size + sum(self._unit_sizes[u] for u in joining)
        if grown > self._keep_limit() - (self.budget - room):
            return self._rebuild(fresh)
        self._extend(ctx, sorted(joining))
        return ctx

    def _joining(self, ctx: _Context, fresh: list[int], weights: list[float]) -> list[int]:
        """Rule 3: which stretches of a fresh selection must join the kept context.

        The kept context must already hold `stability` of the fresh selection's relevance
        (its BM25 score mass, above what every stretch scores anyway); the missing stretches
        join best first until it does. A chat turn spreads its score thinly and usually needs
        little; a pointed question whose best stretch is missing brings it in. Only what
        relevance chose counts: the recency top-up is either there already or was never needed.
        """
        base = min(weights, default=0.0) * SHARED_SCORE
        weights = [w - base for w in weights]
        total = sum(weights)
        covered = 0.0
        missing: list[tuple[int, float]] = []
        for uid, weight in zip(fresh, weights, strict=False):  # weights: relevant only
            if uid in ctx.units or self._unit_starts[uid] >= ctx.start:
                covered += weight
            else:
                missing.append((uid, weight))
        joining: list[int] = []
        strong = STRONG_JOIN * max(weights, default=0.0)
        for uid, weight in missing:
            if covered >= self.stability * total and weight < strong:
                break
            joining.append(uid)
            covered += weight
        return joining

    def _open_rendered_size(self) -> int:
        """The open stretch's size as a rebuild would send it (with its date lines)."""
        start = self._open_start
        if start == len(self._turns):
            return 0
        probe = _Context(start=start, upto=start)
        for i in range(start, len(self._turns)):
            if not self._turns[i].redacted:
                self._add_item(probe, "t", i)
        return probe.size

    def _keep_limit(self) -> float:
        """How large a kept context may grow before a rebuild is cheaper on average.

        A rebuild writes about `budget` to the cache at 1.25x; a kept context of size S costs
        0.10 x S per call to read, and grows by g per call. Over a cycle from R = budget to a
        limit L, the mean cost per call is 1.25 R g/(L - R) + 1.25 g + 0.10 (R + L)/2, which
        is smallest at L = R + sqrt(2 x 1.25 x R g / 0.10) = R + 5 sqrt(R g). Never above
        `ceiling` x budget.
        """
        r = float(self.budget)
        best = r + math.sqrt(2.0 * CACHE_WRITE * r * self._growth / CACHE_READ)
        return min(best, (2 * MEAN_OVER_BUDGET - 1) * r, self.ceiling * r)

    def _select(self, query: str, room: int) -> tuple[list[int], list[float]]:
        """Rule 2: whole closed stretches, best first, while they fit in `room`.

        Returns the chosen stretches, relevant ones first, and the relevance weight of each
        relevant one (the rest, beyond that list's length, only top up the room with recent talk).
        """
        chosen: list[int] = []
        taken: set[int] = set()
        weights: list[float] = []
        best: tuple[int, float] | None = None
        left = room
        misfits = 0
        exact = self._exact_k()
        sliver = self._unit_limit // 2
        for seen, (uid, weight) in enumerate(self._ranked(query)):
            if seen >= exact and (left < sliver or seen >= 2 * exact):
                # Past the exactly scored head, hunting through hundreds of stretches for a rare
                # small one that fits the last sliver costs more time than it adds.
                break
            size = self._unit_sizes[uid]
            if size == 0:
                continue
            if best is None and weight > 0:
                best = (uid, weight)
            # Next to a chosen stretch, this one is sent in the same message (see `_add_item`).
            if uid - 1 in taken:
                size -= self._join_saving(uid)
            if uid + 1 in taken:
                size -= self._join_saving(uid + 1)
            if size <= left:
                chosen.append(uid)
                taken.add(uid)
                if weight > 0:
                    weights.append(weight)
                left -= size
                misfits = 0
                if left <= 0:
                    break
            else:
                misfits += 1
                if misfits >= MISFITS:
                    break
        if best is not None and sum(weights) < best[1]:
            # If what fits is worth less than the best stretch alone (nothing fits, or only
            # neighbours lent a share of its score), the best goes alone.
            return [best[0]], [best[1]]
        return chosen, weights

    def _exact_k(self) -> int:
        """How many stretches are scored exactly: more than fit (budget / stretch size), so
        that skipping a few that do not fit still leaves the next best exact."""
        return 8 + self.budget // self._unit_limit

    def _ranked(self, query: str) -> Iterator[tuple[int, float]]:
        """Stretches best first, each with its relevance weight (0 for the recency top-up)."""
        n_units = len(self._unit_starts)
        if n_units == 0:
            return
        if self.retriever is not None:
            if self._retriever_fitted != n_units:
                docs = [
                    " ".join(t.shown for t in self._turns[slice(*self._unit_range(u))])
                    for u in range(n_units)
                ]
                self.retriever.fit(docs)
                self._retriever_fitted = n_units
            # A rank carries no score: rank r weighs 1 / (RANK_OFFSET + r + 1).
            ranked = (u for u in self.retriever.rank(query) if 0 <= u < n_units)
            yield from ((u, 1.0 / (RANK_OFFSET + r + 1)) for r, u in enumerate(ranked))
            return
        self._index_closed()
        k = self._exact_k()
        settings = _retrieval.SETTINGS
        terms = self._index.rarest(tokenize(query), QUERY_TERMS)
        head, scores = self._index.head(terms, k)
        if settings.context_weight > 0 and settings.context_width > 0 and scores:
            # Only the k best pass a share to their neighbours: their scores are exact, and
            # spreading thousands of lower bounds cost 1 ms per call at 10k turns.
            sources = {u: score for score, u in head}
            shares = _retrieval.neighbour_shares(
                sources, n_units, settings.context_weight, settings.context_width
            )
            # A neighbour outside the head may hold only a lower bound of its own score (the
            # head's pruning skips what cannot reach the top k): score those few exactly.
            own = self._index.exact([u for u in shares if u not in sources], terms)
            for uid, share in shares.items():
                scores[uid] = (sources[uid] if uid in sources else own[uid]) + share
            # Shares only raise scores, so the new head lies within the old head and the
            # neighbours it lent to: no need to search every scored stretch again.
            # (score, id) pairs compare in C: best first, ties to the newer stretch.
            pool = list(sources.keys() | shares.keys())
            head = sorted(zip(map(scores.__getitem__, pool), pool, strict=True), reverse=True)[:k]
        if settings.date_boost > 0 and _retrieval.asks_when(query):
            # A "when" question is answered by a date: among the head, stretches that carry a
            # resolved one ("last Saturday [20 May 2023]") move up (see `_retrieval`).
            boost = 1.0 + settings.date_boost
            head = sorted(((s * boost if self._dated(u) else s, u) for s, u in head), reverse=True)
        yield from ((u, score) for score, u in head)
        if len(head) < len(scores):  # rarely reached: the head usually fills the room
            seen = {u for _, u in head}
            rest = ((s, u) for u, s in scores.items() if u not in seen)
            # _select never looks past 2 x k stretches: the next k are all it can use.
            yield from ((u, score) for score, u in heapq.nlargest(k, rest))
        # Zero-score stretches, newest first, top up what relevance left: a full budget of
        # recent talk beats an empty one. They compete only for room nothing relevant wanted.
        scanned = 0
        for uid in range(n_units - 1, -1, -1):
            if uid not in scores:
                yield uid, 0.0
                scanned += 1
                if scanned >= RECENCY_FILL_SCAN:
                    return

    def _last_shown(self, uid: int) -> Turn | None:
        """The last turn of stretch `uid` that is not redacted (None if none, or no such uid)."""
        if uid < 0:
            return None
        start, end = self._unit_range(uid)
        for i in range(end - 1, start - 1, -1):
            if not self._turns[i].redacted:
                return self._turns[i]
        return None

    def _join_saving(self, uid: int) -> int:
        """What stretch `uid` saves when sent as the continuation of stretch `uid` - 1: its
        marker line, and its date line when the date does not change between them.

        Markers and date lines took 11 % of a 4,000-character context, and 45 % of the chosen
        stretches sit next to another chosen one. Costing them joined lets more talk fit:
        LoCoMo dev, fresh evidence recall 0.754 / 0.839 / 0.904 -> 0.765 / 0.844 / 0.907 at
        4,000 / 8,000 / 20,000 characters (sticky 0.760 / 0.839 / 0.911 -> 0.764 / 0.843 /
        0.907; eval/ablate_retrieval.py, row "300-char stretches + neighbours 1/2")."""
        saving = self._unit_joins[uid]
        if saving >= 0:
            return saving
        last = self._last_shown(uid - 1)
        start, end = self._unit_range(uid)
        first = next((t for t in self._turns[start:end] if not t.redacted), None)
        saving = 0
        if last is not None and first is not None:
            saving = self._measure(MEMORY_MARKER)
            if first.when and first.when == last.when:
                saving += self._measure(when_line(first.when))
        self._unit_joins[uid] = saving
        return saving

    def _dated(self, uid: int) -> bool:
        """Whether a stretch carries a resolved date: an annotation lengthened one of its turns
        (checked only for the few head stretches of a "when" question, so nothing is stored)."""
        turns = self._turns[slice(*self._unit_range(uid))]
        return any(len(t.shown) != len(t.text) for t in turns if not t.redacted)

    def _rebuild_everything(self) -> _Context:
        ctx = _Context(start=0, upto=0)
        self._extend(ctx, [])
        ctx.block = 0
        return ctx

    def _rebuild(self, fresh: list[int]) -> _Context:
        ctx = _Context(start=self._open_start, upto=self._open_start, block=len(fresh))
        for uid in sorted(fresh):
            self._add_item(ctx, "u", uid)
        self._extend(ctx, [])
        return ctx

    def _add_item(self, ctx: _Context, kind: str, i: int) -> None:
        """Render an item in its place; the text depends only on the item and its position."""
        if kind == "u":
            turns_start, turns_end = self._unit_range(i)
            turns = self._turns[turns_start:turns_end]
            after = None
            if 0 < len(ctx.items) < ctx.block and ctx.items[-1] == ("u", i - 1):
                after = self._last_shown(i - 1)
            if after is not None:
                # Adjacent stretches of the rebuilt block share one message (one marker, one
                # date line): it reads as the longer stretch it is, and the room saved holds
                # more talk (see `_join_saving`). Only inside the block, which never changes
                # once sent, so no sent message ever grows.
                ctx.texts.append(render_unit(turns, after=after))
                ctx.sizes.append(self._unit_sizes[i] - self._join_saving(i))
                ctx.joined.add(len(ctx.items))
            else:
                ctx.texts.append(render_unit(turns))
                ctx.sizes.append(self._unit_sizes[i])
            ctx.units.add(i)
            ctx.included.update(j for j, t in enumerate(turns, turns_start) if not t.redacted)
        else:
            turn = self._turns[i]
            if not turn.redacted:
                ctx.included.add(i)
            with_when = i == ctx.start or turn.when != self._turns[i - 1].when
            named = not ctx.items and turn.role == "assistant"
            ctx.texts.append(render_ordinary(turn, with_when=with_when, named=named))
            size = self._measure(ctx.texts[-1])
            if turn.role == "assistant" and len(ctx.items) > 1:
                last_kind, last = ctx.items[-1]
                if last_kind == "t" and self._turns[last].role == "assistant":
                    size += self._measure(TURN_JOIN)  # assemble joins the two messages
            ctx.sizes.append(size)
        ctx.items.append((kind, i))

    def _extend(self, ctx: _Context, units: list[int]) -> None:
        """Append the turns said since the last call, then the stretches this query needs."""
        before = ctx.size
        for i in range(ctx.upto, len(self._turns)):
            if not self._turns[i].redacted:
                self._add_item(ctx, "t", i)
        ctx.upto = len(self._turns)
        for uid in units:
            self._add_item(ctx, "u", uid)
        self._stats["appended" if units else "kept"] += 1
        # Exponential average of growth per call (weight 0.2: about the last five calls).
        self._growth = 0.8 * self._growth + 0.2 * (ctx.size - before)

    # -- outside knowledge (rule 4) -------------------------------------------------------

    def _external(self, query: str) -> tuple[str, list[str]]:
        if self.external is None:
            return "", []
        found = self.external(query)
        candidates = _persist.check_candidates(found)
        if not candidates:
            return "", []
        self._index_closed()
        counts = [Counter(tokenize(text)) for text, _ in candidates]
        unit_scores, ext_scores = self._index.scores(tokenize(query), counts)
        best_unit = max(unit_scores.values(), default=0.0)
        winners = sorted(
            (i for i, s in enumerate(ext_scores) if s > best_unit * (1 + self.external_margin)),
            key=lambda i: -ext_scores[i],
        )
        if not winners or ext_scores[winners[0]] <= 0:
            return "", []
        lead = ext_scores[winners[0]]
        decisive = 1.0 if best_unit <= 0 else min(1.0, lead / best_unit - 1.0)
        share = self.external_share + (self.external_max - self.external_share) * decisive
        room = int(self.budget * share)
        chosen: list[tuple[str, str]] = []
        left = room
        for i in winners:
            text, source = candidates[i]
            size = self._measure(text)
            if size <= left:
                chosen.append((text, source))
                left -= size
        if not chosen:
            text, source = candidates[winners[0]]
            # Outside material is not the conversation: it may be cut to its room.
            cut = max(1, len(text) * max(room, 1) // max(self._measure(text), 1))
            chosen.append((text[:cut], source))
        return render_external(chosen), [source for _, source in chosen]

    # -- persistence -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly, as plain JSON-safe data."""
        with self._lock:
            return _persist.to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> Memory:
        """Rebuild a Memory saved by `to_dict`; `kwargs` override the saved settings."""
        return _persist.from_dict(cls, data, kwargs)

    def _attach_journal(self, journal: Journal | None) -> None:
        with self._lock:
            self._journal = journal


def _visible(turns: Sequence[Turn]) -> bool:
    return any(not t.redacted for t in turns)


def _unit_counts(turns: Sequence[Turn]) -> dict[str, int]:
    return term_counts("\n".join(t.shown for t in turns if not t.redacted))
