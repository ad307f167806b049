"""Memory: keep the conversation verbatim, compose what to send before each model call.

Examples:
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

import threading
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from ._compose import checks
from ._compose.composer import Composer, Request
from ._compose.external import Admission
from ._follow.follower import Follower, check_key
from ._record import load
from ._record import state as _state
from ._retrieval import snapshot
from ._retrieval.ranker import Ranker
from ._text.tokens import shared_tokenizer
from ._turns.conversation import Conversation, Shape
from ._turns.ingest import check_date_order, make_turn, question
from ._turns.render import SAID, Turn
from ._turns.settings import Tuning
from ._turns.tools import check_pairs, read_item, split_message
from .protocols import Boundaries, ComposeResult, External, Journal, Retriever

_CONFIG = ("budget", "chunk", "stability", "external_margin", "external_share", "external_max",
           "resolve_time", "date_order", "ceiling", "language")  # fmt: skip
_CALLABLES = ("measure", "retriever", "boundaries", "external")
# The settings a kept context was chosen under: another reader's context is kept only if equal.
_FITS = ("budget", "chunk", "stability", "ceiling")


def _no_check() -> None:
    """What `append` checks once the turn is made: nothing (its text pairs with no call)."""


class Memory:
    """A conversation kept verbatim, and the composer of what to send before each model call.

    Every size below is in `measure` units: characters unless `measure` is given. Every
    argument is keyword-only and checked: a bad value raises TypeError or ValueError naming
    `Memory()` and the argument.

    Args:
        budget: What a selection aims for (default 20,000). Below it everything is sent
            verbatim (`mode="passthrough"`); above it stretches are selected by relevance to
            fill it (`mode="assembled"`). It is a target, not a cap: between rebuilds the kept,
            cache-warm context grows above it, on average to about twice the budget (see
            `ceiling` for the hard limit).
        chunk: Sets the grain of the conversation (default 900): a stretch closes at about a
            third of it (or a twentieth of the budget if that is less), never above half the
            budget; a turn longer than two thirds of it (a long reply) is cut into verbatim
            pieces of a third, which form stretches of their own.
        retriever: A second opinion fused into the built-in ranking, never in its place
            (default None: BM25 alone), e.g. `semantic.Hybrid`. Anything with `fit(docs)`
            and `rank(query)`; optionally `add`/`remove` (fed only what changed), `scores`
            (scores fused instead of ranks) and `weight`: the `Retriever` contract in
            `yait_byheart.protocols`.
        boundaries: `f(stretch_turns) -> bool` (default None: the size rule), asked at each
            user turn whether it opens a new stretch; the half-budget cap still applies
            (`Boundaries` in `yait_byheart.protocols`).
        stability: Share (0-1) of a query's relevance the kept context must already hold to
            be reused as is (default 0.7); below it the needed stretches join, or the context
            is rebuilt. 0 selects afresh every call (no cache reuse).
        external: `f(query) -> [{"text", "source"}, ...]` offering outside material (default
            None: none), admitted only when it outscores the conversation (the `External`
            contract in `yait_byheart.protocols`).
        external_margin: How much more, as a share of the best stretch's score, outside
            material must score to be admitted (default 0: beating it is enough).
        external_share: Share (0-1) of the budget outside material may take (default 0.3).
        external_max: Share (0-1) it may take when it wins decisively (default 1.0); at least
            `external_share`.
        resolve_time: Annotate relative dates at append, beside the words: "last Saturday
            [20 May 2023]" (default True).
        date_order: How to read a numeric `when` whose day and month could swap
            (05/08/2023): "dmy", "mdy", or None (default: such a `when` is refused).
        ceiling: The hard limit, as a multiple of `budget` (default 4, at least 1). Guarantee:
            no compose sends more than `ceiling` x `budget` (`ComposeResult["size"]`); the kept
            context is rebuilt or trimmed before it would. A query alone above it raises
            ValueError.
        measure: `f(text) -> int`, the size of a text (default `len`: characters); e.g. a
            tokenizer's length, or `providers.chars_per_token()`. It must return an int >= 0
            and be deterministic, since sizes decide what is cached.
        tuning: The selection rules' constants (default `Tuning()`, the measured values; for
            experiments).
        language: None (default) reads every turn and query in the language its own words
            point to; a code (en, de, fr, es, it, pt, nl, ru, ar, hi) forces that language's
            stemmer and stop words on the words of its script. Recorded by `to_dict`.

    Examples:
        >>> mem = Memory(budget=2_000, ceiling=2.0)
        >>> mem.append("user", "the oven costs 18,900 euro")
        0
        >>> r = mem.compose("what does the oven cost?")
        >>> r["mode"], r["size"] <= 2.0 * mem.budget
        ('passthrough', True)
    """

    def __init__(
        self, *, budget: int = 20_000, chunk: int = 900, retriever: Retriever | None = None,
        boundaries: Boundaries | None = None, stability: float = 0.7,
        external: External | None = None, external_margin: float = 0.0,
        external_share: float = 0.3, external_max: float = 1.0, resolve_time: bool = True,
        date_order: str | None = None,
        ceiling: float = 4.0, measure: Callable[[str], int] | None = None,
        tuning: Tuning | None = None, language: str | None = None,
    ) -> None:  # fmt: skip
        call = "Memory()"
        tokenizer, self.language = shared_tokenizer(language, call), language
        self.budget = int(checks.number(call, "budget", budget, 1, checks.MAX_SIZE))
        self.chunk = int(checks.number(call, "chunk", chunk, 1, checks.MAX_SIZE))
        self.stability = checks.number(call, "stability", stability, 0.0, 1.0)
        self.external_margin = checks.number(call, "external_margin", external_margin, 0, 1e9)
        self.external_share = checks.number(call, "external_share", external_share, 0.0, 1.0)
        self.external_max = checks.number(call, "external_max", external_max, 0.0, 1.0)
        checks.external_shares(call, self.external_share, self.external_max)
        self.ceiling = checks.number(call, "ceiling", ceiling, 1.0, 1e6)
        checks.callables(call, boundaries=boundaries, external=external, measure=measure)
        checks.retriever(call, retriever)
        if tuning is not None and not isinstance(tuning, Tuning):
            raise TypeError(f"{call}: tuning must be a yait_byheart.Tuning")
        self.resolve_time = bool(resolve_time)
        self.date_order = check_date_order(call, date_order)
        self.retriever, self.boundaries, self.external = retriever, boundaries, external
        self.measure: Callable[[str], int] = measure or len
        self.tuning = tuning or Tuning()
        sizer = len if measure is None else (lambda text: checks.measured(measure, text))
        shape = Shape(self.budget, self.chunk, self.tuning, sizer, boundaries)
        self._lock = threading.RLock()
        self._conv = Conversation(shape)
        self._ranker = Ranker(self._conv, self.tuning, tokenizer, retriever, self.date_order)
        admission = Admission(self.external_margin, self.external_share, self.external_max)
        self._composer = Composer(
            self._conv, self._ranker, stability=self.stability, ceiling=self.ceiling,
            external=external, admission=admission,
        )  # fmt: skip
        self._follower = Follower(self._conv, self._blank)  # the journal, keys, other writers
        self._fits: dict[str, Any] | None = None  # what the kept context was chosen for
        self._snapshot_stretches = 0
        self._redacted_here = False  # a turn was blanked since this Memory was built
        # Turns blanked by any writer: what tells a cache of the turns (an integration's) to
        # read them again.
        self._blanked = 0

    def __len__(self) -> int:
        return len(self._conv)

    @property
    def stats(self) -> dict[str, int]:
        """Counters, each named for what it counts:

        `turns` stored; `units` closed stretches; `composes`; `passthrough` / `assembled`
        composes that sent everything / a selection; `reselects` composes that rebuilt the
        selection; `kept` / `joined` composes that reused the kept context, adding only new
        turns / also stretches the query needed; `trimmed` composes cut to the hard limit;
        `external_admitted` composes that sent outside material; `redactions`.
        """
        with self._lock:
            keys = ("composes", "reselects", "passthrough", "assembled", "kept", "joined")
            out = {k: self._composer.stats.get(k, 0) for k in keys}
            out.update(self._composer.stats)
            out["turns"] = len(self._conv)
            out["units"] = len(self._conv.starts)
            return out

    # -- ingest ----------------------------------------------------------------------------

    def append(
        self, role: str, text: str, *, kind: str = SAID, source: str = "",
        when: str | date | datetime | None = "", key: str | None = None,
    ) -> int:  # fmt: skip
        """Store one turn verbatim and return its index.

        Bound to a store (`store.open`), the Memory first catches up with the turns other
        processes or other Memories appended to the same conversation (reading only the rows
        after the last it knows), and the store gives the turn the next index: appends from any
        number of writers are serialized, never refused.

        Args:
            role: "user" or "assistant".
            text: The turn's words, stored and sent exactly as given.
            kind: SAID (the default: spoken in the conversation), SUPPLIED (material a
                speaker pasted or attached) or DERIVED (produced by a tool or program);
                non-SAID turns are sent with a "[kind: source]" line.
            source: Where a SUPPLIED or DERIVED turn came from (a file name, a URL).
            when: The turn's date (a str such as "8 May 2023", a date or a datetime; default
                "" or None: undated); with `resolve_time`, relative dates are annotated beside the
                words, and the date is shown at the head of its stretch when sent.
            key: An idempotency key the caller chooses (default None: none), such as the
                message's id, so that a retry cannot store a message twice: a second append
                with a key already used and the same message (role, text, kind, source and
                tool parts; the date is not compared) stores nothing and returns the first
                one's index. The key is kept in the turn's record (`to_dict`, stores); a
                redacted turn keeps its key, so a late retry cannot bring its words back.

        Returns:
            The turn's index (0 for the first turn), stable for the Memory's life.

        Raises:
            ValueError: A bad role, kind or `when`, text holding a lone surrogate, or a `key`
                already used for another message (both are named); nothing is stored.
            TypeError: `text`, `source` or `key` is not a str.
            yait_byheart.store.StoreError: Bound to a store whose database failed (read-only,
                full, damaged, locked, connection lost); nothing is stored or held.
        """
        call = "Memory.append"
        if key is not None:
            key = check_key(call, key)
        turn = make_turn(call, role, text, kind=kind, source=source, when=when,
                         resolve=self.resolve_time, order=self.date_order)  # fmt: skip
        with self._lock:
            return self._follower.add(call, turn, key, _no_check)

    def append_message(
        self, message: dict[str, Any], *, kind: str = SAID, source: str = "",
        when: str | date | datetime | None = "", key: str | None = None,
    ) -> int:  # fmt: skip
        """Store one neutral message (text and tool parts) and return its turn index.

        `tool_call` parts go in assistant messages, `tool_result` parts in user messages, each
        result answering an earlier call by `id`; see `yait_byheart.protocols` for the shapes.
        An `item` (any JSON value: the framework's own record of the message) is stored with
        the turn and returned as given by `to_dict` (and stores); selection reads only the
        parts. A message with an `item` and `"parts": []` is kept and never sent.

        Args:
            message: `{"role": "user" | "assistant", "parts": [part, ...], "item"?: any}`,
                a neutral message.
            kind: SAID (default), SUPPLIED or DERIVED, as in `append`.
            source: Where a SUPPLIED or DERIVED message came from, as in `append`.
            when: The message's date, as in `append`.
            key: An idempotency key, as in `append`: the same key and message again store
                nothing and return the first one's index.

        Returns:
            The turn's index.

        Raises:
            ValueError: A malformed message, a tool result that answers no earlier call, or a
                `key` already used for another message.
            TypeError: A part of the wrong type, or an `item` that is not JSON data.
        """
        call = "Memory.append_message"
        key = check_key(call, key)
        role, text, tools = split_message(message, call)
        turn = make_turn(call, role, text, kind=kind, source=source, when=when,
                         resolve=self.resolve_time, order=self.date_order, tools=tools,
                         item=read_item(message, call))  # fmt: skip
        with self._lock:
            conv = self._conv
            return self._follower.add(call, turn, key, lambda: check_pairs(call, tools, conv.calls,
                                                                  conv.answered))  # fmt: skip

    def _follow(self) -> None:
        """Catch up with what other writers stored (a journal other writers share only)."""
        self._follower.follow()

    # -- redaction -----------------------------------------------------------------------------

    def redact(self, index: int) -> None:
        """Blank turn `index` everywhere (index, output, persistence, its `item`); positions
        stay stable.

        The kept context is dropped, so the next compose rebuilds without the words.

        Args:
            index: The turn's index as `append` returned it; negative counts from the end.

        Raises:
            TypeError: `index` is not an int.
            IndexError: No such turn.
        """
        with self._lock:
            self._follow()  # so that -1 is the last turn any writer stored
            conv = self._conv
            index = checks.turn_index("Memory.redact", index, len(conv))
            old = conv.turns[index]
            if old.redacted:
                return
            new = Turn(old.role, "", "", old.kind, "", old.when, old.opens, True, ())
            stats = dict(self._composer.stats)
            stats["redactions"] = stats.get("redactions", 0) + 1
            journal = self._follower.journal
            if journal is not None:
                key = self._follower.key_at.get(index)
                journal.turn_redacted(index, _state.turn_record(new, *conv.record_cuts(index), key))
                journal.state_changed(_state.state_record(None, self._composer.growth, stats))
            self._blank(index, new)
            self._composer.stats["redactions"] += 1

    def _blank(self, index: int, new: Turn) -> None:
        self._redacted_here = True
        self._blanked += 1
        touched = self._conv.touched_by(index)
        self._ranker.forget(touched)
        self._conv.blank(index, new)
        self._ranker.restore(touched)
        self._composer.ctx = None  # what was sent may hold the words: never send it again
        self._fits = None

    # -- composition ---------------------------------------------------------------------------

    def compose(
        self, query: str | None = None, *, when: str | date | datetime | None = "",
        external_query: str = "",
    ) -> ComposeResult:  # fmt: skip
        """The messages to send now: the conversation's own words, selected, then `query`.

        Args:
            query: The user's new message, sent last. If it is the last turn appended, it is
                not sent twice. None continues the conversation as appended (an agent calling
                the model again after a tool round): selection uses the latest user text.
            when: When `query` is asked, in any form `append` takes (default "" or None:
                undated).
                Its relative dates ("last weekend") are resolved against it and what was said
                on those days is favoured; the query is sent under its date line. Unused when
                `query` is None (the last user turn was dated when appended).
            external_query: What to ask `external` for (default "": the query).

        Returns:
            A `ComposeResult` (see `yait_byheart.protocols`). No compose sends more than
            `ceiling` x `budget`; a query larger than that alone raises ValueError. Bound to a
            store that refuses writes (read-only, full), the result is the same and a
            `yait_byheart.store.SelectionNotSavedWarning` says that the sticky selection, a
            cache, was not saved.
        """
        call = "Memory.compose"
        checks.query(call, query, external_query)
        asked = None
        if query is not None:  # read as `SQLiteStore.recall` reads one
            asked = question(call, query, when, resolve=self.resolve_time, order=self.date_order)
        with self._lock:
            self._follow()
            request = Request.make(self._conv, asked, external_query)
            plan = self._composer.plan(request)
            fits = None if plan.ctx is None else _state.fits_record(self._conv, self._settings())
            if self._follower.journal is not None:
                stats = self._composer.stats + plan.counts
                state = _state.state_record(plan.ctx, plan.growth, stats, fits)
                self._follower.journal.state_changed(state)
            self._composer.commit(plan)
            self._fits = fits
            return plan.result  # type: ignore[return-value]

    def _settings(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FITS}

    # -- persistence -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly, as plain JSON-safe data.

        Callables cannot be saved: their names are recorded under `config["callables"]`, and
        `from_dict` asks for each again.

        Returns:
            `{"format", "version", "config", "turns", "state"}`: the settings, every turn as
            stored, and the sent context and counters, so the next compose repeats the cached
            prefix.
        """
        with self._lock:
            config: dict[str, Any] = {key: getattr(self, key) for key in _CONFIG}
            given = (self.measure is not len, self.retriever, self.boundaries, self.external)
            config["callables"] = [n for n, g in zip(_CALLABLES, given, strict=True) if g]
            if self.tuning != Tuning():
                config["tuning"] = vars(self.tuning).copy()
            c = self._composer
            state = _state.state_record(c.ctx, c.growth, c.stats, self._fits)
            return _state.memory_record(config, self._conv, state, self._follower.key_at)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, index_snapshot: bytes | None = None, **settings: Any
    ) -> Memory:
        """Rebuild a Memory saved by `to_dict`; `settings` override the saved ones and supply
        the callables the data names (`config["callables"]`): without `measure` or
        `boundaries` it is refused; without `retriever` or `external` (which only add
        candidates) it is built without them and a `MissingCallableWarning` says so.

        The sticky selection is kept only if it was chosen under the same `budget`, `chunk`,
        `stability` and `ceiling` over the same entries; otherwise it is discarded and the next
        compose selects afresh (a smaller budget cuts the same turns into other entries).

        Args:
            data: What `to_dict` returned (after a JSON round trip, if you like).
            index_snapshot: Bytes from `Memory.index_snapshot`, as stores keep them: used
                instead of re-indexing when they match the turns, ignored otherwise
                (default None: re-index). With the layout, the turns it holds are stored as
                measured then, if the settings it depends on and the turns are the same.
            **settings: Settings overriding the saved ones (any `Memory` argument), and the
                callables the data names.

        Returns:
            A Memory that continues exactly where the saved one stopped.

        Raises:
            ValueError: `data` is not a saved Memory, or a named `measure` or `boundaries`
                is missing.
        """
        saved = load.parse(data, settings)
        try:
            mem = cls(**saved.config)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Memory.from_dict: config is not valid: {exc}") from exc
        with load.collector_paused():
            keys, first, checked, intact = saved.keys, 0, 0, False
            index: bytes | memoryview | None = index_snapshot
            if index_snapshot:
                known, index, intact = snapshot.load_layout(
                    mem._conv, index_snapshot, saved.turns, saved.layouts
                )
                if known is not None:
                    first = mem._follower.restore_known(known, keys)
                    checked = len(mem._conv.entries)  # their texts were checked against it
            replay, turns = mem._follower.replay, saved.turns
            for at in range(first, len(turns)):
                replay(turns[at], *saved.recorded(at), keys.get(at))
            if index:
                mem._snapshot_stretches = mem._ranker.load_snapshot(index, checked, intact)
            mem._ranker.sync()  # reopened means ready: the first compose pays nothing extra
        mem._restore_state(saved)
        return mem

    def _restore_state(self, saved: load.Saved) -> None:
        """Adopt the saved counters, and the sticky selection if it was chosen for this
        Memory's entries and settings (another reader's is discarded: rebuilt, not trusted)."""
        composer = self._composer
        composer.stats.update(saved.stats)
        fits = None if saved.context is None else saved.context.get("fits")
        if not _state.context_fits(self._conv, fits, self._settings()):
            return
        if saved.growth is not None:
            composer.growth = saved.growth
        if saved.context is not None and saved.context_readable:
            composer.ctx = _state.read_context(self._conv, saved.context)
            self._fits = dict(fits) if composer.ctx is not None and fits is not None else None

    # -- for stores ------------------------------------------------------------------------

    def attach_journal(self, journal: Journal | None) -> None:
        """Send every later change to `journal` before the changing call returns (stores).

        A `SharedJournal` (a store's) is also followed: before each append, compose and
        redaction the Memory applies what other writers stored.
        """
        with self._lock:
            self._follower.attach(journal)

    def index_snapshot(self, *, layout: bool = False) -> bytes:
        """The retrieval index of the closed stretches as bytes, for `from_dict` (stores).

        With `layout` (what stores keep), also how every turn was cut and measured, so that
        `from_dict` need not measure them again: kept only for characters as the measure, and
        only if no turn was redacted since this Memory was built (a redaction changes what
        later turns were measured against, which the stored turns then no longer tell).
        """
        with self._lock:
            data = self._ranker.dump_snapshot()
            if layout and not self._redacted_here:
                data = snapshot.with_layout(self._conv, data)
            return data

    @property
    def stretch_count(self) -> int:
        """How many stretches are closed (and so indexed by the next compose)."""
        return len(self._conv.starts)

    @property
    def snapshot_stretches(self) -> int:
        """How many stretches the `index_snapshot` given to `from_dict` supplied (0: none)."""
        return self._snapshot_stretches
