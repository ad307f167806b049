"""The systems under test, behind one interface: ``build(turns)`` then ``compose(question)``.

Baselines render what they select the same way: the chosen turns in conversation order, one
message per turn, the session's date on the first chosen turn of each session, and the question
as the last user message. Their character count covers all of it, the question included, and
must stay within the budget.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from eval.locomo.data import Turn

Message = dict[str, Any]  # {"role": "user" | "assistant", "parts": [{"type": "text", "text": str}]}


def message_text(message: Message) -> str:
    return "".join(
        str(p.get("text", "")) for p in message.get("parts", ()) if p.get("type") == "text"
    )


@dataclass(frozen=True)
class Composed:
    included: tuple[int, ...]  # indices of the conversation's turns whose text was sent
    messages: tuple[Message, ...]
    chars: int
    raw: dict[str, Any] | None = None  # Memory.compose's own result, for byheart

    @property
    def texts(self) -> list[str]:
        return [message_text(m) for m in self.messages]


class System(Protocol):
    name: str

    def build(self, turns: Sequence[Turn]) -> None: ...

    def compose(self, question: str) -> Composed: ...


def _msg(role: str, text: str) -> Message:
    return {"role": role, "parts": [{"type": "text", "text": text}]}


def date_header(when: str) -> str:
    return f"[{when}]\n" if when else ""


class _Baseline:
    """Shared rendering and budget arithmetic for the three baselines."""

    name = "baseline"

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.turns: tuple[Turn, ...] = ()

    def build(self, turns: Sequence[Turn]) -> None:
        self.turns = tuple(turns)

    def _cost(self, indices: Iterable[int], sessions: set[int]) -> int:
        """Chars that ``indices`` add to a selection already holding turns of ``sessions``."""
        cost, seen = 0, set(sessions)
        for i in indices:
            t = self.turns[i]
            cost += len(t.text)
            if t.session not in seen:
                seen.add(t.session)
                cost += len(date_header(t.when))
        return cost

    def _render(self, chosen: Iterable[int], question: str) -> Composed:
        included = tuple(sorted(set(chosen)))
        messages: list[Message] = []
        last_session: int | None = None
        for i in included:
            t = self.turns[i]
            head = date_header(t.when) if t.session != last_session else ""
            last_session = t.session
            messages.append(_msg(t.role, head + t.text))
        messages.append(_msg("user", question))
        return Composed(included, tuple(messages), sum(len(message_text(m)) for m in messages))

    def _fill(
        self, groups: Iterable[Sequence[int]], question: str, *, stop_early: bool
    ) -> Composed:
        """Take groups of turns in the given order while they fit; skip (or stop at) misfits."""
        room = self.budget - len(question)
        chosen: list[int] = []
        sessions: set[int] = set()
        for group in groups:
            cost = self._cost(group, sessions)
            if cost > room:
                if stop_early:
                    break
                continue
            room -= cost
            chosen.extend(group)
            sessions.update(self.turns[i].session for i in group)
        return self._render(chosen, question)


class RecentHistory(_Baseline):
    """The newest turns that fit: a sliding window, what most chat apps do."""

    name = "recent"

    def compose(self, question: str) -> Composed:
        newest_first = ([i] for i in range(len(self.turns) - 1, -1, -1))
        return self._fill(newest_first, question, stop_early=True)


class TurnBM25(_Baseline):
    """Plain RAG: single turns ranked by BM25 against the question, best first, until full."""

    name = "bm25-turns"

    def build(self, turns: Sequence[Turn]) -> None:
        from yait_byheart import BM25

        super().build(turns)
        self.bm25 = BM25().fit([t.text for t in self.turns])

    def compose(self, question: str) -> Composed:
        ranked = ([i] for i in self.bm25.rank(question))
        return self._fill(ranked, question, stop_early=False)


class SessionBM25(_Baseline):
    """Whole sessions ranked by BM25 against the question; sessions that do not fit are skipped."""

    name = "bm25-sessions"

    def build(self, turns: Sequence[Turn]) -> None:
        from yait_byheart import BM25

        super().build(turns)
        order: list[int] = []
        members: dict[int, list[int]] = {}
        for t in self.turns:
            if t.session not in members:
                order.append(t.session)
                members[t.session] = []
            members[t.session].append(t.index)
        self.sessions = [members[s] for s in order]
        docs = [
            date_header(self.turns[m[0]].when) + "\n".join(self.turns[i].text for i in m)
            for m in self.sessions
        ]
        self.bm25 = BM25().fit(docs)

    def compose(self, question: str) -> Composed:
        ranked = (self.sessions[s] for s in self.bm25.rank(question))
        return self._fill(ranked, question, stop_early=False)


@dataclass
class Byheart:
    """yait_byheart.Memory: fresh (stability=0) or sticky (defaults), optional custom retriever.

    ``skip`` leaves turns out at ingest (outside-knowledge runs); ``external`` and ``tuning``
    (a ``yait_byheart.Tuning``, for ablations) are passed through.
    """

    budget: int
    regime: str = "sticky"
    retriever: Callable[[], Any] | None = None
    retriever_name: str = ""
    external: Callable[[str], list[dict[str, str]]] | None = None
    skip: frozenset[int] = frozenset()
    tuning: Any = None  # yait_byheart.Tuning | None; Any keeps the import lazy
    name: str = field(init=False)

    def __post_init__(self) -> None:
        if self.regime not in ("fresh", "sticky"):
            raise ValueError(f"Byheart: regime must be 'fresh' or 'sticky', not {self.regime!r}")
        self.name = "byheart" + (f"+{self.retriever_name}" if self.retriever_name else "")
        self._to_turn: list[int] = []

    def memory_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"budget": self.budget}
        if self.regime == "fresh":
            kwargs["stability"] = 0
        if self.retriever is not None:
            kwargs["retriever"] = self.retriever()
        if self.external is not None:
            kwargs["external"] = self.external
        if self.tuning is not None:
            kwargs["tuning"] = self.tuning
        return kwargs

    def build(self, turns: Sequence[Turn]) -> None:
        from yait_byheart import Memory

        self.memory = Memory(**self.memory_kwargs())
        self._to_turn = []
        for t in turns:
            if t.index in self.skip:
                continue
            self.append(t)

    def append(self, turn: Turn) -> None:
        index = self.memory.append(turn.role, turn.text, when=turn.when)
        # Memory numbers its own turns; map them back to the conversation's (and so to dia_ids).
        if index != len(self._to_turn):
            raise RuntimeError(f"Memory.append returned {index}, expected {len(self._to_turn)}")
        self._to_turn.append(turn.index)

    def compose(self, question: str) -> Composed:
        r = self.memory.compose(question)
        included = tuple(self._to_turn[i] for i in r["included"])
        return Composed(included, tuple(r["messages"]), int(r["chars"]), raw=dict(r))


# Retrievers named on the command line: `--retriever hybrid-minilm`.
REGISTERED = {"hybrid-minilm": "eval.minilm:HybridMiniLM"}


def fusion_weight(text: str) -> float | None:
    """`text` as a retriever's fusion weight (a finite number >= 0), or None if it is not one.

    >>> [fusion_weight(t) for t in ("0.5", "-1", "nan", "inf", "x")]
    [0.5, None, None, None, None]
    """
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value < math.inf else None


def load_retriever(spec: str) -> tuple[Callable[[], Any], str]:
    """``module:Class`` or a name in ``REGISTERED`` -> (factory, short name); the class needs
    ``fit(docs)``, ``rank(query)``. ``NAME@WEIGHT`` (``hybrid-minilm@1``): a registered
    retriever with that fusion weight instead of its own."""
    name, at, weight = spec.partition("@")
    if at and name in REGISTERED:
        value = fusion_weight(weight)
        if value is None:
            raise ValueError(f"--retriever {spec}: the weight after @ must be a number >= 0")
        factory, _ = load_retriever(name)
        return functools.partial(factory, weight=value), spec
    if spec in REGISTERED:
        factory, _ = load_retriever(REGISTERED[spec])
        return factory, spec
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(
            f"--retriever expects module:Class (e.g. eval.dense_minilm:MiniLM), got {spec!r}"
        )
    cls = getattr(importlib.import_module(module_name), attr, None)
    if cls is None or not callable(cls):
        raise ValueError(f"--retriever: {module_name} has no class {attr!r}")
    for method in ("fit", "rank"):
        if not callable(getattr(cls, method, None)):
            raise ValueError(f"--retriever: {spec} lacks a {method}() method (needs fit/rank)")
    factory: Callable[[], Any] = cls
    return factory, attr


BASELINES: tuple[Callable[[int], System], ...] = (RecentHistory, TurnBM25, SessionBM25)
