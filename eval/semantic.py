"""Live-loop speed of `yait_byheart.semantic.Hybrid` against the built-in ranking.

    python -m eval.semantic                      # 1k and 10k turns, budget 20,000
    python -m eval.semantic --turns 100000       # one size
    python -m eval.semantic --pure               # Hybrid's pure-Python vector math

Each run appends a generated conversation (user and assistant turns) to two Memories in
lockstep, one ranking with the built-in BM25, one with `Hybrid`; each composes with the user's
turn as the query over the last 4 x `--timed` user turns, and the last 2 x `--timed` composes
are timed, the two alternating, in CPU time (`time.process_time`), so that other work on a
shared machine counts for neither. The embedder is a
stand-in of fixed cost: character trigrams hashed into 384 dimensions (MiniLM's size), counting
every text it is given, so the run needs no model and checks that each stretch and each
distinct query is embedded once.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import statistics
import time
import zlib
from typing import Any

from yait_byheart import Memory
from yait_byheart.semantic import Hybrid

DIMS = 384


class TrigramEmbed:
    """Hashed character-trigram counts, `DIMS` long; counts the texts it embeds."""

    name = "trigram-384"

    def __init__(self) -> None:
        self.texts = 0
        self.calls = 0
        self.seconds = 0.0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        t0 = time.process_time()
        self.calls += 1
        self.texts += len(texts)
        out = []
        for text in texts:
            v = [0.0] * DIMS
            low = text.lower()
            for i in range(len(low) - 2):
                v[zlib.crc32(low[i : i + 3].encode()) % DIMS] += 1.0
            out.append(v)
        self.seconds += time.process_time() - t0
        return out


def words(seed: int, size: int = 4_000) -> tuple[list[str], list[float]]:
    """A made-up vocabulary and Zipf weights (rank r weighs 1 / r)."""
    rng = random.Random(seed)
    vocab = sorted({hashlib.sha1(f"{seed}-{i}".encode()).hexdigest()[: rng.randint(3, 9)]
                    for i in range(size)})  # fmt: skip
    return vocab, [1.0 / (r + 1) for r in range(len(vocab))]


def live(turns: int, timed: int, retrievers: list[Any], budget: int) -> list[dict[str, Any]]:
    """Append `turns` turns to one Memory per retriever in lockstep, composing near the end
    with each in turn (so a busy machine slows them alike); figures of each."""
    rng = random.Random(11)
    vocab, weights = words(11)
    mems = [Memory(budget=budget, retriever=r) for r in retrievers]
    times: list[list[float]] = [[] for _ in mems]
    queries: set[str] = set()
    last: list[dict[str, Any]] = [{} for _ in mems]
    while len(mems[0]) < turns:
        user = " ".join(rng.choices(vocab, weights, k=rng.randint(10, 40))) + "?"
        reply = " ".join(rng.choices(vocab, weights, k=rng.randint(10, 40)))
        composing = len(mems[0]) >= turns - 8 * timed
        if composing:
            queries.add(user)
            if len(mems[0]) == turns - 4 * timed:
                spent = [getattr(r, "embed", None) for r in retrievers]
                start = [e.seconds if e is not None else 0.0 for e in spent]
        for i, mem in enumerate(mems):
            mem.append("user", user)
            if composing:
                t0 = time.process_time()
                last[i] = dict(mem.compose(user))
                if len(mem) >= turns - 4 * timed:
                    times[i].append(time.process_time() - t0)
            mem.append("assistant", reply)
    embedding = [
        (e.seconds - s0) / len(t) * 1e3 if e is not None else 0.0
        for e, s0, t in zip(spent, start, times, strict=True)
    ]
    return [
        {
            "embed_ms": embedding[i],
            "median_ms": statistics.median(t) * 1e3,
            "p95_ms": sorted(t)[min(len(t) - 1, int(0.95 * len(t)))] * 1e3,
            "stretches": done.get("of_units", 0),
            "queries": len(queries),
            "reselects": mems[i].stats["reselects"],
        }
        for i, (t, done) in enumerate(zip(times, last, strict=True))
    ]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m eval.semantic", description=__doc__)
    p.add_argument("--turns", type=int, nargs="*", default=[1_000, 10_000])
    p.add_argument("--timed", type=int, default=50, help="composes timed per size (x2)")
    p.add_argument("--budget", type=int, default=20_000)
    p.add_argument("--pure", action="store_true", help="Hybrid without numpy")
    args = p.parse_args(argv)
    print(f"budget {args.budget:,}; last {2 * args.timed} composes timed; "
          f"{'pure Python' if args.pure else 'numpy'} vector math")  # fmt: skip
    print("| turns | ranking | compose median | compose p95 | of which embedding (mean) "
          "| stretches | queries | embedded | reselections |")  # fmt: skip
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.turns:
        embed = TrigramEmbed()
        hybrid_retriever = Hybrid(embed, numpy=False if args.pure else None)
        base, hybrid = live(n, args.timed, [None, hybrid_retriever], args.budget)
        for label, r, done in (("built-in", base, "-"), ("Hybrid", hybrid, f"{embed.texts:,}")):
            print(f"| {n:,} | {label} | {r['median_ms']:.2f} ms | {r['p95_ms']:.2f} ms "
                  f"| {r['embed_ms']:.2f} ms "
                  f"| {r['stretches']:,} | {r['queries']:,} | {done} | {r['reselects']} |",
                  flush=True)  # fmt: skip
        if embed.texts != hybrid["stretches"] + hybrid["queries"]:
            print(f"  !! embedded {embed.texts} != stretches + queries", flush=True)
        print(f"| | ratio | {hybrid['median_ms'] / base['median_ms']:.2f}x "
              f"| {hybrid['p95_ms'] / base['p95_ms']:.2f}x | | | | | |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
