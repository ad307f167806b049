"""The systems, each run on one question at one budget, timed: what they sent, as turn indices.

byheart goes through eval/locomo/systems.py's ``Byheart`` (which maps Memory's turn numbers
back to the data's) and the live replay through eval/locomo/live.py's ``Ledger``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eval.locomo.data import Turn
from eval.locomo.live import Ledger
from eval.locomo.systems import Byheart, Composed, RecentHistory, TurnBM25
from eval.longmemeval.data import Question

Result = dict[str, Any]  # Memory.compose's result


@dataclass
class Outcome:
    """What one system sent for one question, and what it took."""

    included: frozenset[int]  # turns sent, in whole or in part
    partial: frozenset[int]  # of those, sent only in part
    chars: int
    append_s: float  # building the memory or index over the history
    appended: int  # turns in the history
    compose_s: float
    composes: int
    cache: dict[str, Any] | None = field(default=None)  # the live replay's Ledger.summary()


class LmeByheart(Byheart):
    """``Byheart`` that appends turns as the data has them (its own date form, empty turns
    too) and composes each question with its date."""

    def append(self, turn: Turn) -> None:
        index = self.memory.append(turn.role, turn.text, when=turn.when)
        if index != len(self._to_turn):
            raise RuntimeError(f"Memory.append returned {index}, expected {len(self._to_turn)}")
        self._to_turn.append(turn.index)

    def ask(self, text: str, when: str) -> Result:
        """Memory.compose(text, when=when): the question read at its own time."""
        return dict(self.memory.compose(text, when=when))

    def sent(self, result: Result) -> tuple[frozenset[int], frozenset[int]]:
        """(included, partial) of a compose result, as the data's turn indices."""
        to_turn = self._to_turn
        return (
            frozenset(to_turn[i] for i in result["included"]),
            frozenset(to_turn[i] for i in result["partial"]),
        )


def byheart_fresh(
    question: Question, budget: int, retriever: Callable[[], Any] | None = None,
    tuning: Any = None,
) -> Outcome:  # fmt: skip
    """A fresh Memory over the history, one compose of the question (`tuning`: a
    `yait_byheart.Tuning` for an ablation)."""
    system = LmeByheart(budget=budget, regime="fresh", retriever=retriever, tuning=tuning)
    started = time.perf_counter()
    system.build(question.turns)
    built = time.perf_counter()
    result = system.ask(question.question, question.question_date)
    composed = time.perf_counter()
    included, partial = system.sent(result)
    return Outcome(
        included=included,
        partial=partial,
        chars=int(result["chars"]),
        append_s=built - started,
        appended=len(question.turns),
        compose_s=composed - built,
        composes=1,
    )


def byheart_live(
    question: Question, budget: int, tuning: Any = None,
    retriever: Callable[[], Any] | None = None, regime: str = "sticky",
) -> Outcome:  # fmt: skip
    """The history replayed as a chat (a compose before each user turn), then the question;
    `regime` "fresh" selects afresh on every call (the bill of sending it uncached is its
    characters)."""
    system = LmeByheart(budget=budget, regime=regime, tuning=tuning, retriever=retriever)
    system.build(())
    ledger = Ledger()
    append_s = compose_s = 0.0
    memory = system.memory
    limit = memory.ceiling * memory.budget
    unsendable = 0
    for turn in question.turns:
        # A blank user turn asks nothing; one above the hard limit could not be sent at all
        # (compose refuses it: no application could make that call), so neither is a call.
        if turn.role == "user" and len(turn.text) > limit:
            unsendable += 1
        elif turn.role == "user" and turn.text.strip():
            t = time.perf_counter()
            result = system.ask(turn.text, turn.when)
            compose_s += time.perf_counter() - t
            ledger.add(result)
        t = time.perf_counter()
        system.append(turn)
        append_s += time.perf_counter() - t
    t = time.perf_counter()
    result = system.ask(question.question, question.question_date)
    compose_s += time.perf_counter() - t
    ledger.add(result)
    included, partial = system.sent(result)
    return Outcome(
        included=included,
        partial=partial,
        chars=int(result["chars"]),
        append_s=append_s,
        appended=len(question.turns),
        compose_s=compose_s,
        composes=ledger.calls,
        cache={**ledger.summary(), "unsendable": unsendable},
    )


def recent_live(question: Question, budget: int, ceiling: float = 4.0) -> Outcome:
    """The newest turns that fit, composed before each user turn as `byheart_live` does (the
    same calls: a user turn above ceiling x budget is no call), sent uncached."""
    window = RecentHistory(budget)
    ledger = Ledger()
    seen: list[Turn] = []
    compose_s = 0.0

    def call(text: str) -> Composed:
        nonlocal compose_s
        t = time.perf_counter()
        window.build(seen)
        composed = window.compose(text)
        compose_s += time.perf_counter() - t
        ledger.add({"messages": list(composed.messages), "stable_upto": -1, "reselected": True})
        return composed

    for turn in question.turns:
        if turn.role == "user" and turn.text.strip() and len(turn.text) <= ceiling * budget:
            call(turn.text)
        seen.append(turn)
    composed = call(question.question)
    return Outcome(
        included=frozenset(composed.included),
        partial=frozenset(),
        chars=composed.chars,
        append_s=0.0,
        appended=len(question.turns),
        compose_s=compose_s,
        composes=ledger.calls,
        cache={**ledger.summary(), "unsendable": 0},
    )


def turn_bm25(question: Question, budget: int) -> Outcome:
    """Single turns by BM25, whole, best first while they fit."""
    system = TurnBM25(budget)
    started = time.perf_counter()
    system.build(question.turns)
    built = time.perf_counter()
    composed: Composed = system.compose(question.question)
    done = time.perf_counter()
    return Outcome(
        included=frozenset(composed.included),
        partial=frozenset(),  # whole turns only
        chars=composed.chars,
        append_s=built - started,
        appended=len(question.turns),
        compose_s=done - built,
        composes=1,
    )


Runner = Callable[[Question, int], Outcome]
