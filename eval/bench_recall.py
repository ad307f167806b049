"""Recall across conversations at scale: one user, 1,000 conversations, 500,000 turns.

    python -m eval bench-recall                              # the issue 36 scale
    python -m eval bench-recall --conversations 100 --turns 500   # a quick look

The store (SQLite, in a temporary folder) is filled through ``store.import_`` with synthetic
dated talk (eval/bench_live.py's ``Talk``: Zipf content words, 60-240 characters a turn,
seeded), user and assistant turns alternating; another user's conversation is stored beside
it.  Then, on a fresh store object (a new connection, as a restarted process would):

* "first recall after reopening": the first ``store.recall`` builds the user's index from the
  rows (it is kept in the process, not in the store);
* "warm recall": median and 95th percentile of ``--queries`` recalls (questions made of three
  words of a random stored turn), at budget 6,000 (the default) and 20,000;
* "append then recall": one turn appended by another store object, then a recall, which reads
  only that conversation's new row;
* memory: the process's resident set size grown by building the index.

Goal (issue 36): warm recall <= 50 ms for a user with 500,000 turns.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from typing import Any

from eval.bench_live import Talk, percentile
from yait_byheart import Memory
from yait_byheart.store import SQLiteStore

USER = "bench-user"


def rss_mb() -> float:
    """This process's resident set size, MB (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def conversation(talk: Talk, turns: int, day: int) -> dict[str, Any]:
    """One synthetic conversation as ``Memory.to_dict()``, dated from `day` (of 2023)."""
    mem = Memory(budget=20_000)
    for i in range(turns):
        when = f"{1 + (day + i // 100) % 28} {('March', 'April', 'May')[(day // 28) % 3]} 2023"
        mem.append("user" if i % 2 == 0 else "assistant", talk.turn(), when=when)
    return mem.to_dict()


def fill(path: str, conversations: int, turns: int, seed: int) -> list[str]:
    """Store the user's conversations (and one of another user); some of their texts."""
    talk = Talk(seed)
    samples: list[str] = []
    with SQLiteStore(path, synchronous="OFF") as store:
        for c in range(conversations):
            data = conversation(talk, turns, c)
            store.import_(f"conv-{c:05d}", data, user=USER)
            samples += [t["text"] for t in data["turns"][:: max(1, turns // 5)]]
            if c % 100 == 99:
                print(f"  {c + 1:,} conversations stored", file=sys.stderr, flush=True)
        store.import_("other", conversation(talk, 50, 0), user="someone-else")
    return samples


def stored_samples(path: str, turns: int) -> list[str]:
    """The texts `fill` picked, read back from a kept store (plain SQL: a bench's shortcut)."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT t.record FROM turns t JOIN conversations c ON c.id = t.conv "
            "WHERE c.name LIKE 'conv-%' AND t.idx % ? = 0 ORDER BY c.name, t.idx",
            (max(1, turns // 5),),
        ).fetchall()
    finally:
        db.close()
    return [json.loads(r[0])["text"] for r in rows]


def questions(samples: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [w.strip(".,") for w in rng.choice(samples).split() if len(w) > 4]
        picked = rng.sample(words, min(3, len(words))) if words else ["nothing"]
        out.append(f"What did I say about {' and '.join(picked)}?")
    return out


def timed(store: SQLiteStore, asked: list[str], budget: int) -> list[float]:
    out = []
    for q in asked:
        t0 = time.perf_counter()
        store.recall(q, user=USER, budget=budget)
        out.append(time.perf_counter() - t0)
    return out


def measure(path: str, asked: list[str]) -> dict[str, str]:
    before = rss_mb()
    with SQLiteStore(path) as store:
        t0 = time.perf_counter()
        store.recall(asked[0], user=USER)
        first = time.perf_counter() - t0
        grown = rss_mb() - before
        row = {"first recall after reopening": f"{first:.1f} s", "index memory": f"{grown:,.0f} MB"}
        for budget in (6_000, 20_000):
            times = timed(store, asked, budget)
            row[f"warm, budget {budget:,}: median"] = f"{statistics.median(times) * 1e3:.1f} ms"
            row[f"warm, budget {budget:,}: p95"] = f"{percentile(times, 0.95) * 1e3:.1f} ms"
        with SQLiteStore(path) as writer:
            writer.open("conv-00000").append("user", "a new turn about the harbour ferry")
        t0 = time.perf_counter()
        found = store.recall("the harbour ferry", user=USER)
        row["append then recall"] = f"{(time.perf_counter() - t0) * 1e3:.1f} ms"
        assert found and found[0]["conversation"] == "conv-00000", "the new turn was not found"
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval bench-recall", description=__doc__)
    parser.add_argument("--conversations", type=int, default=1_000)
    parser.add_argument("--turns", type=int, default=500, help="turns per conversation")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--keep", metavar="PATH", help="store here and keep it; an existing one is measured again"
    )
    args = parser.parse_args(argv)
    total = args.conversations * args.turns
    with tempfile.TemporaryDirectory(prefix="byheart-recall-") as folder:
        path = args.keep or os.path.join(folder, "chats.db")
        if os.path.exists(path):
            samples = stored_samples(path, args.turns)
        else:
            print(f"storing {args.conversations:,} conversations, {total:,} turns...",
                  file=sys.stderr)  # fmt: skip
            t0 = time.perf_counter()
            samples = fill(path, args.conversations, args.turns, args.seed)
            print(f"  stored in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        row = measure(path, questions(samples, args.queries, args.seed))
    print(f"python -m eval bench-recall --conversations {args.conversations} --turns {args.turns}")
    print(f"one user: {args.conversations:,} conversations, {total:,} turns (SQLite)")
    print("| measure | value |")
    print("|---|---|")
    for key, value in row.items():
        print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
