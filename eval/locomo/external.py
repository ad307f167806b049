"""Outside knowledge (rule 4): is junk kept out and needed knowledge let in?

For every answerable question with evidence, at each budget:
(a) junk: the memory holds the whole conversation; the candidates offered are the evidence turns
    of a question from another conversation (donor = the next conversation in the file, question
    k of this one -> eligible question k mod n of the donor). Admitting them is a mistake.
(b) needed: the memory is built without the question's own evidence turns (skipped at ingest,
    equivalent to redacting them); the candidates offered are those turns' texts. Admitting them
    is right.
Both use the fresh regime (stability=0), so each question's admission is decided on its own
rather than inherited from the previous question's selection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from eval.locomo.data import ANSWERABLE, Conversation, Question
from eval.locomo.systems import Byheart

Candidate = dict[str, str]


def eligible(conv: Conversation) -> list[Question]:
    return [q for q in conv.questions if q.category in ANSWERABLE and q.evidence]


def candidates(conv: Conversation, q: Question) -> list[Candidate]:
    index = conv.index_of
    return [
        {"text": conv.turns[index[d]].text, "source": f"{conv.sample_id}:{d}"} for d in q.evidence
    ]


@dataclass
class Offer:
    """The external callable handed to Memory; what it returns is swapped per question."""

    current: list[Candidate] = field(default_factory=list)
    calls: int = 0

    def __call__(self, query: str) -> list[Candidate]:
        self.calls += 1
        return list(self.current)


@dataclass
class Tally:
    offered: int = 0
    admitted: int = 0
    questions: int = 0
    questions_any: int = 0  # questions with at least one candidate admitted

    def merge(self, other: Tally) -> None:
        self.offered += other.offered
        self.admitted += other.admitted
        self.questions += other.questions
        self.questions_any += other.questions_any

    def add(self, offered: Sequence[Candidate], admitted_sources: Sequence[str]) -> None:
        sources = {c["source"] for c in offered}
        got = len(sources & set(admitted_sources))
        self.offered += len(sources)
        self.admitted += got
        self.questions += 1
        self.questions_any += got > 0


def _admitted(result: dict[str, Any]) -> list[str]:
    return [str(s) for s in result.get("external", [])]


def measure(conv: Conversation, pool: Sequence[Conversation], budget: int) -> tuple[Tally, Tally]:
    """(junk, needed) tallies of one conversation; ``pool`` (the whole file) supplies donors."""
    junk, needed = Tally(), Tally()
    questions = eligible(conv)
    ids = [c.sample_id for c in pool]
    donor = None
    if conv.sample_id in ids and len(pool) > 1:
        donor = pool[(ids.index(conv.sample_id) + 1) % len(pool)]
    donor_qs = eligible(donor) if donor is not None else []
    if donor is not None and donor_qs:
        offer = Offer()
        system = Byheart(budget=budget, regime="fresh", external=offer)
        system.build(conv.turns)
        for k, q in enumerate(questions):
            offer.current = candidates(donor, donor_qs[k % len(donor_qs)])
            junk.add(offer.current, _admitted(system.compose(q.question).raw or {}))
    # Questions with the same evidence share one memory built without it (887 memories for the
    # 1,032 dev questions): with stability=0 each compose selects afresh, so sharing is exact.
    by_evidence: dict[tuple[str, ...], list[Question]] = {}
    for q in questions:
        by_evidence.setdefault(tuple(sorted(q.evidence)), []).append(q)
    index = conv.index_of
    for evidence, group in by_evidence.items():
        offer = Offer(candidates(conv, group[0]))
        skip = frozenset(index[d] for d in evidence)
        system = Byheart(budget=budget, regime="fresh", external=offer, skip=skip)
        system.build(conv.turns)
        for q in group:
            offer.current = candidates(conv, q)
            needed.add(offer.current, _admitted(system.compose(q.question).raw or {}))
    return junk, needed


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summary(budget: int, junk: Tally, needed: Tally) -> dict[str, Any]:
    return {
        "budget": budget,
        "junk_questions": junk.questions,
        "junk_offered": junk.offered,
        "junk_admitted": junk.admitted,
        "junk_rejected": None if not junk.offered else 1 - junk.admitted / junk.offered,
        "needed_questions": needed.questions,
        "needed_offered": needed.offered,
        "needed_admitted": needed.admitted,
        "needed_admitted_share": _share(needed.admitted, needed.offered),
        "needed_any_admitted": _share(needed.questions_any, needed.questions),
    }
