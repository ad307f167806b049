"""What a compose's scoring walks: the posting lists of a query's 8 rarest terms.

    python -m eval query-cost                 # LoCoMo dev vs the generated talk, then 100,000 turns
    python -m eval query-cost --turns 10000

Part 1 replays each LoCoMo dev conversation and eval.bench_live's generated talk (600 turns)
and reports, over the user turns used as queries, the mean share of stretches holding each of
the query's rarest terms (`Index.rarest` with `Tuning().query_terms`, as `compose` keeps them):
the generated talk is a fair stand-in only if its terms are about as common as real ones.
Part 2 builds `--turns` turns of
generated talk and reports the median number of postings those terms hold per query and the
cost per posting of walking them (a plain BM25 pass, timed on this machine).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

from eval.bench_live import Talk
from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import load
from eval.sources import locomo_missing
from yait_byheart import Memory, Tuning
from yait_byheart._retrieval.bm25 import Index

QUERY_TERMS = Tuning().query_terms


def index_of(mem: Memory) -> Index:
    """The BM25 index over `mem`'s closed stretches, brought up to date (as a compose would).

    It belongs to the Memory's ranker (yait_byheart/_retrieval/ranker.py), not public API: this
    script measures the index itself, so it reaches in, read-only."""
    ranker = mem._ranker
    ranker.sync()
    return ranker.index


def replay(pairs: list[tuple[str, str]]) -> tuple[Memory, list[list[str]]]:
    """Append every turn; before each user turn (once 50 stretches exist) note its rarest terms."""
    mem = Memory(budget=20_000)
    queries = []
    for role, text in pairs:
        if role == "user" and mem.stats["units"] > 50:
            terms = index_of(mem).rarest(mem._ranker.terms(text), QUERY_TERMS)
            if terms:
                queries.append(terms)
        mem.append(role, text)
    return mem, queries


def mean_share(mem: Memory, queries: list[list[str]]) -> float:
    # Measured against the final index: shares barely move over a conversation's last stretches.
    if not queries:
        return float("nan")  # too short: no user turn came after the 50th stretch
    index = index_of(mem)
    n = len(index)
    return statistics.mean(
        statistics.mean(index.document_frequency(t) / n for t in q) for q in queries
    )


def talk_pairs(turns: int) -> list[tuple[str, str]]:
    talk = Talk()
    return [("user" if i % 2 == 0 else "assistant", talk.turn()) for i in range(turns)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--talk", type=int, default=600, help="generated turns compared")
    args = parser.parse_args(argv)
    gone = locomo_missing("python -m eval query-cost", args.data)
    if gone is not None:
        return gone

    for conv in load(args.data):
        mem, queries = replay([(t.role, t.text) for t in conv.turns])
        share = mean_share(mem, queries)
        print(f"LoCoMo {conv.sample_id}: {len(mem)} turns, mean share {share:.3f}")
    mem, queries = replay(talk_pairs(args.talk))
    print(f"generated talk: {len(mem)} turns, mean share {mean_share(mem, queries):.3f}")

    mem, queries = replay(talk_pairs(args.turns))
    index = index_of(mem)
    walked = [sum(index.document_frequency(t) for t in q) for q in queries[-300:]]
    if not sum(walked):
        print(f"generated talk: {len(mem):,} turns, too few stretches to time a walk")
        return 0
    start = time.perf_counter()
    for q in queries[-300:]:
        index.scores(q)
    per = (time.perf_counter() - start) / sum(walked) * 1e9
    print(
        f"generated talk: {len(mem):,} turns, {len(index):,} stretches; the last 300 queries' "
        f"terms hold {statistics.median(walked):,.0f} postings (median); a full walk costs "
        f"{per:.0f} ns per posting here"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
