"""Index.head of this checkout against another revision's, alternated on the same queries.

    python eval/ab_head.py                       # against 536f568 (before grouped postings)
    python eval/ab_head.py --against main~3 --turns 10000 --rounds 5

This machine's speed drifts by up to 1.8x between runs, so two implementations are compared
only within one process, query by query, the order swapped every round.  The corpus is
bench_live.py's generated talk; the queries are 300 user turns' 8 rarest terms (as `compose`
keeps them), k as `Memory(budget=20_000)` uses it.  Every query's head is first checked against
an exhaustive BM25 pass: same documents, same order, scores within 1e-9.
"""

from __future__ import annotations

import argparse
import heapq
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.bench_live import Talk
from yait_byheart import Memory, bm25
from yait_byheart._tokens import tokenize
from yait_byheart.memory import QUERY_TERMS, _unit_counts

ROOT = Path(__file__).resolve().parents[1]


def git(*args: str) -> str:
    """The output of a git command run in this repository (raises if it fails)."""
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def module_at(revision: str) -> types.ModuleType:
    """yait_byheart/bm25.py as it was at `revision`, loaded beside the current one."""
    source = git("show", f"{revision}:yait_byheart/bm25.py")
    module = types.ModuleType("yait_byheart._bm25_other")
    module.__package__ = "yait_byheart"
    sys.modules[module.__name__] = module
    exec(compile(source, f"bm25.py@{revision}", "exec"), module.__dict__)
    return module


def corpus(turns: int) -> tuple[list[dict[str, int]], list[list[str]], int]:
    """Each stretch's term counts, 300 queries' kept terms, and k, from generated talk."""
    talk, mem = Talk(), Memory(budget=20_000)
    queries = []
    for i in range(turns):
        text = talk.turn()
        if i % 2 == 0 and i >= turns - 600:
            mem._index_closed()
            queries.append(mem._index.rarest(tokenize(text), QUERY_TERMS))
        mem.append("user" if i % 2 == 0 else "assistant", text)
    counts = [
        _unit_counts(mem._turns[slice(*mem._unit_range(u))]) for u in range(len(mem._unit_starts))
    ]
    return counts, queries, mem._exact_k()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="536f568", help="git revision to compare with")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    counts, queries, k = corpus(args.turns)
    other = module_at(args.against)
    old, new = other.Index(), bm25.Index()
    for uid, c in enumerate(counts):
        old.add(uid, c)
        new.add(uid, c)
    wrong = 0
    for q in queries:
        exact, _ = new.scores(q)
        want = heapq.nlargest(k, ((s, d) for d, s in exact.items()))
        got, _ = new.head(q, k)
        wrong += [d for _, d in got] != [d for _, d in want] or any(
            abs(g - w) > 1e-9 for (g, _), (w, _) in zip(got, want, strict=True)
        )
    print(
        f"{args.turns:,} turns, {len(counts):,} stretches, k={k}: {wrong} of {len(queries)} "
        f"heads differ from exhaustive scoring"
    )
    print(f"| round | {args.against} mean / median | this checkout mean / median | speed-up |")
    print("|---:|---:|---:|---:|")
    for r in range(args.rounds):
        first, second = (old, new) if r % 2 == 0 else (new, old)
        times: dict[int, list[float]] = {id(old): [], id(new): []}
        for q in queries:
            for index in (first, second):
                t0 = time.perf_counter()
                index.head(q, k)
                times[id(index)].append((time.perf_counter() - t0) * 1e3)
        o, n = times[id(old)], times[id(new)]
        print(
            f"| {r + 1} | {statistics.mean(o):.2f} / {statistics.median(o):.2f} ms "
            f"| {statistics.mean(n):.2f} / {statistics.median(n):.2f} ms "
            f"| {statistics.mean(o) / statistics.mean(n):.2f}x |"
        )


if __name__ == "__main__":
    main()
