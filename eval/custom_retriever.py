"""A custom retriever in the sticky context: how much rank r weighs (`memory.RANK_OFFSET`).

    python eval/custom_retriever.py                                # yait_byheart.BM25, dev file
    python eval/custom_retriever.py --retriever eval.dense_minilm:Hybrid

A `fit`/`rank` retriever gives ranks, not scores, and byheart weighs rank r (from 0) as
1 / (offset + r + 1). Fresh selection ignores the weights' size; the sticky rules do not (the
kept context must hold `stability` of a selection's weight, see `Memory._joining`). For offsets
0, 10 and 60, at 4,000 / 8,000 / 20,000 characters on the LoCoMo dev file:

1. how fast the weights fall over a selection: the last chosen stretch's weight over the
   first's, median over questions, beside byheart's own BM25 scores for the same questions;
2. evidence recall, fresh and sticky (the default), over categories 1-4, multi-hop after
   the slash;
3. the live replay (each user turn composed, sticky): the share of assembled calls that reuse
   the previous prefix, and the bill against sending the same characters uncached.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.ablate_retrieval import BUDGETS, byheart_scored, recall_means
from eval.locomo import live
from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import load
from eval.locomo.systems import Byheart, load_retriever
from yait_byheart import memory

OFFSETS = (0, 10, 60)


def selections(data: str, budget: int) -> list[tuple[int, float]]:
    """Per question, byheart's own fresh selection: how many stretches relevance chose, and
    the last one's BM25 weight over the first's."""
    out = []
    for conv in load(data):
        system = Byheart(budget=budget, regime="fresh")
        system.build(conv.turns)
        for q in conv.questions:
            _, weights = system.memory._select(q.question, budget - len(q.question))
            if len(weights) > 1:
                out.append((len(weights), weights[-1] / weights[0]))
    return out


def rank_fall(offset: int, n: int) -> float:
    """The last of `n` rank weights over the first.

    >>> rank_fall(0, 4), rank_fall(10, 12)
    (0.25, 0.5)
    """
    return (offset + 1) / (offset + n)


def measure(job: tuple[str, str, int, int]) -> tuple[int, int, dict[str, float]]:
    """One offset at one budget: evidence recall fresh and sticky, and the sticky live replay."""
    data, spec, offset, budget = job
    make, _ = load_retriever(spec)
    memory.RANK_OFFSET = offset
    conversations = load(data)
    out: dict[str, float] = {}
    for regime in ("fresh", "sticky"):
        out[regime] = recall_means(byheart_scored(conversations, regime, budget, make))[0]
    assembled = live.Ledger()
    for conv in conversations:
        calls, _ = live.replay(conv, budget, "sticky", make)
        assembled.merge(calls)
    summary = assembled.summary()
    out["reuse"], out["billed"] = summary["hit_rate"], summary["billed_ratio"]
    return offset, budget, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="LoCoMo JSON (default: dev)")
    parser.add_argument("--retriever", default="yait_byheart:BM25", help="module:Class")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(args.data, args.retriever, o, b) for o in OFFSETS for b in BUDGETS]
    with ProcessPoolExecutor(args.workers) as ex:
        cells = {(o, b): out for o, b, out in ex.map(measure, jobs)}
        chosen = dict(zip(BUDGETS, ex.map(selections, [args.data] * 3, BUDGETS), strict=True))

    def falls(offset: int | None) -> str:  # None: BM25's own
        def fall(n: int, bm25: float) -> float:
            return bm25 if offset is None else rank_fall(offset, n)

        return " / ".join(f"{statistics.median(fall(*c) for c in chosen[b]):.2f}" for b in BUDGETS)

    def joined(o: int, key: str, scale: float = 1.0) -> str:
        return " / ".join(f"{scale * cells[o, b][key]:.{1 if scale > 1 else 3}f}" for b in BUDGETS)

    print(f"retriever {args.retriever}; each cell at 4,000 / 8,000 / 20,000 characters\n")
    print("| weight of rank r | last / first weight | evidence recall, fresh "
          "| evidence recall, sticky | prefix reused (%) | billed vs uncached |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    print(f"| byheart's own BM25 scores | {falls(None)} | | | | |")
    for o in OFFSETS:
        print(f"| 1 / ({o} + r + 1) | {falls(o)} "
              f"| {joined(o, 'fresh')} | {joined(o, 'sticky')} | {joined(o, 'reuse', 100.0)} "
              f"| {joined(o, 'billed')} |")  # fmt: skip


if __name__ == "__main__":
    main()
