"""``--across``: each haystack session stored as its own conversation of one user, the question
asked in a new, empty conversation that recalls from the others (issue 36).

The sessions go into a SQLite store in a temporary folder, one conversation each, appended turn
by turn with their dates as a chat application would; the question's conversation gets
``store.recall_source`` as its ``external`` source, so what it sends of the other sessions is
what rule 4 admits.  A turn counts as sent when an admitted passage holds it; in part when the
passage was cut to fit.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

from eval.longmemeval.data import Question
from eval.longmemeval.systems import Outcome
from yait_byheart.protocols import ComposeResult
from yait_byheart.store import SQLiteStore

USER = "longmemeval-user"
ASKING = "question"


def _stored(store: SQLiteStore, question: Question, budget: int, tuning: Any) -> dict[Any, int]:
    """Store each session as conversation ``s<position>``; (conversation, turn) -> data turn."""
    where: dict[Any, int] = {}
    extra = {} if tuning is None else {"tuning": tuning}
    mem = None
    session = -1
    for turn in question.turns:
        if turn.session != session:
            session = turn.session
            mem = store.open(f"s{session}", user=USER, budget=budget, stability=0, **extra)
        assert mem is not None
        index = mem.append(turn.role, turn.text, when=turn.when)
        where[(f"s{session}", index)] = turn.index
    return where


def sent_turns(
    result: ComposeResult, recalled: list[Any], where: dict[Any, int]
) -> tuple[frozenset[int], frozenset[int]]:
    """(included, partial): the data's turns in the admitted passages, and those cut."""
    from yait_byheart.store._recall import source_line

    admitted = set(result["external"])
    sent = "\n".join(
        part["text"] for m in result["messages"] for part in m["parts"] if part["type"] == "text"
    )
    included: set[int] = set()
    partial: set[int] = set()
    for found in recalled:
        if source_line(found) not in admitted:
            continue
        turns = {where[(found["conversation"], i)] for i in found["turns"]}
        included |= turns
        if found["text"] not in sent:
            partial |= turns
    return frozenset(included), frozenset(partial)


def byheart_across(question: Question, budget: int, tuning: Any = None) -> Outcome:
    """The sessions as conversations of one user; one compose of the question in a new one."""
    with tempfile.TemporaryDirectory(prefix="byheart-across-") as folder:
        store = SQLiteStore(os.path.join(folder, "chats.db"), synchronous="OFF")
        try:
            started = time.perf_counter()
            where = _stored(store, question, budget, tuning)
            built = time.perf_counter()
            source = store.recall_source(
                user=USER, exclude=ASKING, budget=budget, when=question.question_date or None
            )
            extra = {} if tuning is None else {"tuning": tuning}
            mem = store.open(ASKING, user=USER, budget=budget, stability=0, external=source,
                             **extra)  # fmt: skip
            result = mem.compose(question.question, when=question.question_date)
            composed = time.perf_counter()
            included, partial = sent_turns(result, source.last, where)
        finally:
            store.close()
    # One compose, as `byheart_fresh` times it: building the history, then the question.
    timing = (built - started, len(question.turns), composed - built, 1)
    return Outcome(included, partial, int(result["chars"]), *timing)
