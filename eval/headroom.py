"""Where the evidence a hybrid compose missed ranks, in the lexical list and in the retriever's.

    python -m eval headroom                       # LoCoMo dev, MiniLM, 4,000 / 8,000 / 20,000
    python -m eval headroom --budgets 8000 --data PATH

Each answerable LoCoMo question (categories 1-4) is composed afresh with byheart and `Hybrid`
(all-MiniLM-L6-v2, the `eval` extra). For each evidence turn that was not sent, its stretch's
place is read in the two lists the fusion takes: the lexical ranking alone (`bm25_ranked`
without a retriever, every stretch holding a query term) and the retriever's scores (every
stretch it scores above the typical one). A miss the retriever puts among the first few is
one a fusion could still win; one it does not score, or scores far down, is one only a
stronger model can. Reads the Memory's ranker, read-only (not public API).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from typing import Any

from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import ANSWERABLE, Conversation, load
from eval.locomo.systems import Byheart
from eval.sources import locomo_missing
from yait_byheart._retrieval import ranking

PROG = "python -m eval headroom"
BANDS = (10, 20, 40, 80, 160)


def band(place: int | None) -> str:
    """A place in a list (0: first) as its band; None: not in the list.

    >>> band(0), band(15), band(500), band(None)
    ('1-10', '11-20', 'past 160', 'unscored')
    """
    if place is None:
        return "unscored"
    low = 1
    for high in BANDS:
        if place < high:
            return f"{low}-{high}"
        low = high + 1
    return f"past {BANDS[-1]}"


def places(memory: Any, question: str) -> tuple[dict[int, int], dict[int, int]]:
    """Each stretch's place in the lexical list and in the retriever's, for `question`."""
    ranker, conv = memory._ranker, memory._conv
    n = len(conv.starts)
    index = ranker.index_for(question)
    lexical = ranking.bm25_ranked(
        index, ranker.terms(question), n, n, ranker.tuning, conv.dated, False
    )
    scored = [uid for uid, weight in lexical if weight > 0]
    other = ranker._retrieved(question, n, index)
    dense = sorted(other, key=lambda u: (-other[u], u))
    return {u: i for i, u in enumerate(scored)}, {u: i for i, u in enumerate(dense)}


def misses(conv: Conversation, budget: int, retriever: Any) -> Counter[tuple[str, str]]:
    """(lexical band, retriever band) of each evidence turn a fresh compose left out."""
    system = Byheart(budget=budget, regime="fresh", retriever=retriever)
    system.build(conv.turns)
    memory = system.memory
    stretch_of: dict[int, int] = {}  # the data's turn index -> its (first) stretch
    for uid in range(memory.stretch_count):
        start, end = memory._conv.stretch_range(uid)
        for entry in memory._conv.entries[start:end]:
            stretch_of.setdefault(system._to_turn[entry.turn], uid)
    found: Counter[tuple[str, str]] = Counter()
    for q in conv.questions:
        if q.category not in ANSWERABLE:
            continue
        sent = system.compose(q.question).included
        left = [conv.index_of[d] for d in q.evidence if d in conv.index_of]
        left = [i for i in left if i not in sent and i in stretch_of]
        if not left:
            continue
        lexical, dense = places(memory, q.question)
        for i in left:
            uid = stretch_of[i]
            found[band(lexical.get(uid)), band(dense.get(uid))] += 1
    return found


def matrix(found: Counter[tuple[str, str]]) -> str:
    """The misses as a markdown table: lexical band by row, the retriever's by column."""
    names = [band(b - 1) for b in BANDS] + [band(BANDS[-1]), band(None)]
    lines = [
        "| lexical \\ retriever | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for row in names:
        cells = [str(found.get((row, col), 0) or "") for col in names]
        lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="LoCoMo JSON")
    parser.add_argument("--budgets", default="4000,8000,20000", help="comma-separated")
    args = parser.parse_args(argv)
    gone = locomo_missing(PROG, args.data)
    if gone is not None:
        return gone
    from eval.minilm import HybridMiniLM

    conversations = load(args.data)
    for budget in (int(b) for b in args.budgets.split(",")):
        found: Counter[tuple[str, str]] = Counter()
        for conv in conversations:
            found.update(misses(conv, budget, HybridMiniLM))
        total = max(1, sum(found.values()))
        first_20 = {band(place) for place in range(20)}
        first_40 = {band(place) for place in range(40)}
        near = sum(c for (_, dense), c in found.items() if dense in first_20)
        far = sum(c for (lex, dense), c in found.items()
                  if lex not in first_40 and dense not in first_40)  # fmt: skip
        print(f"\nbudget {budget:,}: {sum(found.values())} evidence turns left out, by place")
        print(matrix(found))
        print(f"in the retriever's first 20: {near} ({near / total:.1%}); past 40 in both "
              f"lists (or unscored): {far} ({far / total:.1%})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
