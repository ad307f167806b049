"""The shapes byheart exchanges with its callers: what `compose` returns, and the callables
and objects a Memory can be given.

Neutral messages are `{"role": "user" | "assistant", "parts": [part, ...]}`, a part being
`{"type": "text", "text"}`, `{"type": "tool_call", "id", "name", "arguments"}` (arguments a
JSON string, in assistant messages) or `{"type": "tool_result", "id", "output", "is_error"?}`
(in user messages). `yait_byheart.providers` converts them for each provider. A message given
to `Memory.append_message` may also carry `"item"` (any JSON value, the framework's own record
of it), kept with its turn and never sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypedDict, runtime_checkable

__all__ = [
    "Boundaries",
    "ComposeResult",
    "External",
    "IncrementalRetriever",
    "Journal",
    "Retriever",
    "ScoringRetriever",
    "SharedJournal",
    "VectorCache",
]

External = Callable[[str], Sequence[dict[str, Any]]]
"""The `external` contract: `external(query) -> [{"text": str, "source": str}, ...]`.

Called once per `Memory.compose` that has a query, with `external_query` if given, else the
query. Each dict offers one document: `text` its words (sent verbatim if admitted; blank texts
are skipped), `source` (optional, default "") where it came from, listed in
`ComposeResult["external"]`. An empty list offers nothing. Documents are scored in one index
with the conversation's stretches and admitted only when they outscore the best stretch by
`external_margin`; admitted material takes at most `external_share` of the budget
(`external_max` when it wins decisively). A malformed return raises TypeError naming the
call; an exception raised by `external` propagates.
"""

Boundaries = Callable[[list[dict[str, str]]], bool]
"""The `boundaries` contract: `boundaries(stretch) -> bool`, asked at each user turn.

`stretch` is the open stretch plus the new turn, as `[{"role": ..., "text": ...}, ...]`;
True opens a new stretch at that turn. It replaces the size rule, but a stretch is still
closed at half the budget, so every stretch fits.
"""


class ComposeResult(TypedDict):
    """What `Memory.compose` returns: the messages to send and the facts about them.

    All sizes are in the Memory's `measure` units (characters unless `measure` was given),
    except `chars`, which always counts characters.

    Attributes:
        messages: Neutral messages, always sendable: the first from the user, no two
            assistant messages in a row, the query last (if one was given).
        mode: "passthrough" (the whole conversation fits the budget and is sent) or
            "assembled" (stretches were selected).
        chars: Characters in all parts (tool parts counted as their text form).
        size: The size sent, in `measure` units; never above `ceiling` x `budget`. It may
            exceed `budget` while the kept context grows between rebuilds.
        reselected: True when the selection was rebuilt (the cached prefix changed, so the
            provider's cache is written afresh on this call).
        selected: Stretches sent as selected memory.
        of_units: Closed stretches in the conversation ("units" is the old word for them).
        included: Indices of the turns sent, in whole or in part.
        partial: Those of `included` sent only in part: long turns cut into pieces, and the
            turns of an open tool round over the hard limit, sent with their middles elided.
        stable_upto: Index of the last message that repeats on the next call if the
            selection is kept (the cache breakpoint), or -1.
        breakpoints: Up to four message indices worth marking for the provider's cache.
        external: Sources of the outside material admitted.
    """

    messages: list[dict[str, Any]]
    mode: str
    chars: int
    size: int
    reselected: bool
    selected: int
    of_units: int
    included: list[int]
    partial: list[int]
    stable_upto: int
    breakpoints: list[int]
    external: list[str]


@runtime_checkable
class Retriever(Protocol):
    """The retriever contract: a second opinion added to the built-in ranking of stretches.

    Pass it as `Memory(retriever=...)`. `fit(docs)` is given every closed stretch's text
    (stretch k is docs[k]), again whenever stretches change unless the retriever is an
    `IncrementalRetriever`; `rank(query)` returns stretch indices best first (indices it
    omits are treated as irrelevant). Its best stretches (as many as the lexical ranking
    weighs exactly) are fused into byheart's own ranking, which keeps every signal it has
    (the user's own words, a question's dates, neighbours, the sticky joins): rank r weighs
    (`Tuning.rank_offset` + 1) / (`Tuning.rank_offset` + r + 1) unless the retriever is a
    `ScoringRetriever`, and `weight` (an attribute, default 1) weighs it against the lexical
    ranking. Ranking stays deterministic if the retriever is.
    """

    def fit(self, docs: list[str]) -> Any:
        """Index `docs`, one text per closed stretch (stretch k is `docs[k]`)."""

    def rank(self, query: str) -> list[int]:
        """Stretch indices for `query`, best first."""


@runtime_checkable
class IncrementalRetriever(Retriever, Protocol):
    """A retriever fitted once, then handed only what changed.

    `add(docs, ids=None)` indexes new stretches (ids continue after the last one held unless
    given); `remove(ids)` forgets stretches (a redaction then adds their new text back).
    """

    def add(self, docs: list[str], ids: list[int] | None = None) -> Any:
        """Index new stretches; `ids` default to those after the last one held."""

    def remove(self, ids: list[int]) -> Any:
        """Forget the stretches `ids` (a redaction then adds their new text back)."""


@runtime_checkable
class ScoringRetriever(Retriever, Protocol):
    """A retriever whose scores, over its best one's, are fused instead of its ranks."""

    def scores(self, query: str) -> Mapping[int, float] | Sequence[float]:
        """Each stretch's score for `query` (higher is better; 0 or less adds nothing): by
        index, or a sequence."""


class Journal(Protocol):
    """Receives every change before the changing call returns (see `yait_byheart.store`)."""

    def turn_appended(self, index: int, record: dict[str, Any]) -> bool | None:
        """Turn `index` was appended; `record` is its saved form (as in `Memory.to_dict`).

        Only a `SharedJournal` may return False: nothing stored, another writer was first.
        """

    def turn_redacted(self, index: int, record: dict[str, Any]) -> None:
        """Turn `index` was blanked; `record` is its new saved form."""

    def state_changed(self, state: dict[str, Any]) -> None:
        """The sent context or the counters changed; `state` is their saved form."""


StoredTurns = list[tuple[int, dict[str, Any]]]
"""Turn records by index, in index order, as `SharedJournal.follow` yields them."""


@runtime_checkable
class SharedJournal(Journal, Protocol):
    """A journal over storage that other writers share (a store): the Memory follows them.

    Before a bound Memory appends, composes or redacts, it reads what other writers stored
    and applies it, so it never acts on a stale conversation and never has to be reopened.
    An append is first tried `tries` times without holding the conversation (each a write that
    fails if another writer appended since, followed by catching up), then inside
    `follow(hold=True)`; 0 appends only there.
    """

    @property
    def tries(self) -> int:
        """Appends tried without holding the conversation before one inside it (0: none)."""
        ...

    def follow(self, turns: int, *, hold: bool = False) -> AbstractContextManager[StoredTurns]:
        """A block that yields what other writers stored that this Memory has not seen.

        That is every turn record from index `turns` on and the earlier turns they rewrote
        (redactions), in index order; they count as seen once the block ends without an
        error. With `hold=True` no other writer can append until the block ends, so an
        append made inside it gets the next index. Outside that block `turn_appended` returns
        False when it stored nothing because another writer appended first.
        """
        ...


@runtime_checkable
class VectorCache(Protocol):
    """Stored embeddings of one embedder, keyed by a content hash the caller computes.

    `store.vectors(conversation, name)` returns one (see `yait_byheart.store`); a plain dict
    with these methods works too. `get_many` returns only the keys present; `set_many` writes
    all of `items` at once (one transaction in a store); `del cache[key]` forgets one vector.
    """

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]: ...
    def set_many(self, items: Mapping[str, Sequence[float]]) -> None: ...
    def __delitem__(self, key: str) -> None: ...
