"""The shapes byheart exchanges with its callers: what `compose` returns, and the callables
and objects a Memory can be given.

Neutral messages are `{"role": "user" | "assistant", "parts": [part, ...]}`, a part being
`{"type": "text", "text"}`, `{"type": "tool_call", "id", "name", "arguments"}` (arguments a
JSON string, in assistant messages) or `{"type": "tool_result", "id", "output", "is_error"?}`
(in user messages). `yait_byheart.providers` converts them for each provider.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypedDict, runtime_checkable

__all__ = [
    "Boundaries",
    "ComposeResult",
    "External",
    "IncrementalRetriever",
    "Journal",
    "Retriever",
    "ScoringRetriever",
    "VectorCache",
]

#: `external(query)` offers outside material: a list of {"text": str, "source": str} dicts.
External = Callable[[str], Sequence[dict[str, Any]]]
#: `boundaries(stretch)` is asked at each user turn whether it opens a new stretch; `stretch`
#: is the open stretch plus the new turn, as [{"role", "text"}, ...].
Boundaries = Callable[[list[dict[str, str]]], bool]


class ComposeResult(TypedDict):
    """What `Memory.compose` returns.

    Attributes:
        messages: Neutral messages, always sendable: the first from the user, no two
            assistant messages in a row, the query last (if one was given).
        mode: "passthrough" (the whole conversation) or "assembled" (a selection).
        chars: Characters in all parts (tool parts counted as their text form).
        size: The size sent, in `measure` units; never above `ceiling` x `budget`.
        reselected: True when the selection was rebuilt (the cached prefix changed).
        selected: Stretches sent as selected memory.
        of_units: Closed stretches in the conversation ("units" is the old word for them).
        included: Indices of the turns sent, in whole or in part.
        partial: Those of `included` sent only in part (long turns cut into pieces).
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
    """Anything that can replace the built-in ranking of stretches.

    `fit(docs)` is given every closed stretch's text (stretch k is docs[k]); `rank(query)`
    returns stretch indices best first. Rank r weighs 1 / (10 + r + 1) in the sticky rules.
    """

    def fit(self, docs: list[str]) -> Any: ...
    def rank(self, query: str) -> list[int]: ...


@runtime_checkable
class IncrementalRetriever(Retriever, Protocol):
    """A retriever fitted once, then handed only what changed.

    `add(docs, ids=None)` indexes new stretches (ids continue after the last one held unless
    given); `remove(ids)` forgets stretches (a redaction then adds their new text back).
    """

    def add(self, docs: list[str], ids: list[int] | None = None) -> Any: ...
    def remove(self, ids: list[int]) -> Any: ...


@runtime_checkable
class ScoringRetriever(Retriever, Protocol):
    """A retriever whose scores weigh stretches in the sticky rules instead of their ranks."""

    def scores(self, query: str) -> Mapping[int, float] | Sequence[float]: ...


class Journal(Protocol):
    """Receives every change before the changing call returns (see `yait_byheart.store`)."""

    def turn_appended(self, index: int, record: dict[str, Any]) -> None: ...
    def turn_redacted(self, index: int, record: dict[str, Any]) -> None: ...
    def state_changed(self, state: dict[str, Any]) -> None: ...


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
