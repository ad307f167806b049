"""What a compose's scoring walks: the posting lists of a query's 8 rarest terms.

    python eval/query_cost.py                 # LoCoMo dev vs the generated talk, then 100,000 turns
    python eval/query_cost.py --turns 10000

Part 1 replays each LoCoMo dev conversation and bench_live.py's generated talk (600 turns) and
reports, over the user turns used as queries, the mean share of stretches holding each of the
query's rarest terms (`Index.rarest`, as `compose` keeps them): the generated talk is a fair
stand-in only if its terms are about as common as real ones.  Part 2 builds `--turns` turns of
generated talk and reports the median number of postings those terms hold per query and the
cost per posting of walking them (a plain BM25 pass, timed on this machine).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_live import Talk

from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import load
from yait_byheart import Memory
from yait_byheart._tokens import tokenize
from yait_byheart.memory import QUERY_TERMS


def replay(pairs: list[tuple[str, str]]) -> tuple[Memory, list[list[str]]]:
    """Append every turn; before each user turn (once 50 stretches exist) note its rarest terms."""
    mem = Memory(budget=20_000)
    queries = []
    for role, text in pairs:
        if role == "user" and len(mem._unit_starts) > 50:
            mem._index_closed()
            terms = mem._index.rarest(tokenize(text), QUERY_TERMS)
            if terms:
                queries.append(terms)
        mem.append(role, text)
    mem._index_closed()
    return mem, queries


def mean_share(mem: Memory, queries: list[list[str]]) -> float:
    # Measured against the final index: shares barely move over a conversation's last stretches.
    postings, n = mem._index._postings, len(mem._index)
    return statistics.mean(statistics.mean(len(postings[t]) / n for t in q) for q in queries)


def talk_pairs(turns: int) -> list[tuple[str, str]]:
    talk = Talk()
    return [("user" if i % 2 == 0 else "assistant", talk.turn()) for i in range(turns)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--turns", type=int, default=100_000)
    args = parser.parse_args()

    for conv in load(args.data):
        mem, queries = replay([(t.role, t.text) for t in conv.turns])
        share = mean_share(mem, queries)
        print(f"LoCoMo {conv.sample_id}: {len(mem)} turns, mean share {share:.3f}")
    mem, queries = replay(talk_pairs(600))
    print(f"generated talk: {len(mem)} turns, mean share {mean_share(mem, queries):.3f}")

    mem, queries = replay(talk_pairs(args.turns))
    index = mem._index
    walked = [sum(len(index._postings[t]) for t in q) for q in queries[-300:]]
    start = time.perf_counter()
    for q in queries[-300:]:
        index.scores(q)
    per = (time.perf_counter() - start) / sum(walked) * 1e9
    print(
        f"generated talk: {len(mem):,} turns, {len(index):,} stretches; the last 300 queries' "
        f"terms hold {statistics.median(walked):,.0f} postings (median); a full walk costs "
        f"{per:.0f} ns per posting here"
    )


if __name__ == "__main__":
    main()
