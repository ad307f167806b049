"""Store speed: append latency through a bound Memory, and reopening a 100,000-turn conversation.

    python -m eval.bench_store                  # SQLite, synchronous NORMAL and FULL
    python -m eval.bench_store --pg "$DSN"      # also PostgreSQL (needs psycopg)

Floors (issue 7): reopening 100,000 turns <= 2 s; append <= 300 us median with NORMAL.
Each append is timed alone (perf_counter_ns around ``mem.append``); "Memory alone" is the same
appends on an unbound Memory, so the difference is what the store adds.  Reopen is the median
of 3 runs of ``store.open`` on a fresh store object (a new connection, as a restarted process
would): "reopen" with the index snapshot the store keeps (see docs/store.md), "of which rows"
the part spent reading the rows (``store.export``), and "reopen, no snapshot" with the snapshot
deleted first, as after a crash that came before any snapshot was written.  The texts are
bench_live.py's synthetic talk (seeded; 160 characters a turn, printed below, against LoCoMo's
150-167).  The store is reached
only through its public interface and plain SQL on a second connection, so the same script
measures any version of ``yait_byheart.store`` that ``PYTHONPATH`` points at.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from eval.bench_live import Talk
from yait_byheart import Memory
from yait_byheart.store import PostgresStore, SQLiteStore

Store = SQLiteStore | PostgresStore


def make_texts(n: int, seed: int = 7) -> list[str]:
    talk = Talk(seed)
    return [talk.turn() for _ in range(n)]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def us(ns: float) -> str:
    return f"{ns / 1000:.0f} us"


def time_appends(mem: Memory, texts: list[str]) -> list[int]:
    out = []
    for i, text in enumerate(texts):
        role = "user" if i % 2 == 0 else "assistant"
        t0 = time.perf_counter_ns()
        mem.append(role, text)
        out.append(time.perf_counter_ns() - t0)
    return out


def pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def bench(
    label: str,
    make_store: Callable[[], Store],
    drop_snapshots: Callable[[], None],
    appends: int,
    turns: int,
    big: dict[str, Any],
) -> dict[str, str]:
    texts = make_texts(appends, seed=11)
    with make_store() as store:
        lat = time_appends(store.open("appends", budget=20_000), texts)
        store.import_("big", big)
    reopen, read, cold = [], [], []
    for _ in range(3):
        with make_store() as store:
            t0 = time.perf_counter()
            mem = store.open("big")
            reopen.append(time.perf_counter() - t0)
            assert len(mem) == turns
            t0 = time.perf_counter()
            store.export("big")
            read.append(time.perf_counter() - t0)
    for _ in range(3):
        drop_snapshots()
        with make_store() as store:
            t0 = time.perf_counter()
            store.open("big")  # re-indexes everything (and stores a new snapshot)
            cold.append(time.perf_counter() - t0)
    return {
        "store": label,
        "append median": us(statistics.median(lat)),
        "append p95": us(pct(lat, 0.95)),
        f"reopen {turns:,}": ms(statistics.median(reopen)),
        "of which rows": ms(statistics.median(read)),
        "reopen, no snapshot": ms(statistics.median(cold)),
    }


def sqlite_drop(path: str) -> Callable[[], None]:
    """Delete the stored index snapshots through a connection of its own, as a tool would."""

    def drop() -> None:
        db = sqlite3.connect(path)
        with db:
            db.execute("DELETE FROM snapshots")
        db.close()

    return drop


def pg_drop(dsn: str, schema: str) -> Callable[[], None]:
    def drop() -> None:
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"DELETE FROM {schema}.snapshots")

    return drop


def sqlite_factory(path: str, synchronous: str) -> Callable[[], Store]:
    return lambda: SQLiteStore(path, synchronous=synchronous)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=100_000, help="turns for the reopen test")
    parser.add_argument("--appends", type=int, default=3_000, help="appends timed per store")
    parser.add_argument(
        "--pg",
        default=os.environ.get("BYHEART_TEST_PG_DSN", ""),
        help="a PostgreSQL DSN to measure too (default $BYHEART_TEST_PG_DSN)",
    )
    args = parser.parse_args(argv)

    print(f"building a {args.turns:,}-turn conversation...", file=sys.stderr)
    source = Memory(budget=20_000)
    for i, text in enumerate(make_texts(args.turns)):
        source.append("user" if i % 2 == 0 else "assistant", text)
    big = source.to_dict()
    chars = sum(len(t["text"]) for t in big["turns"])
    print(f"texts: {chars / args.turns:.0f} characters a turn", file=sys.stderr)

    rows = []
    baseline = time_appends(Memory(budget=20_000), make_texts(args.appends, seed=11))
    rows.append(
        {
            "store": "Memory alone (no store)",
            "append median": us(statistics.median(baseline)),
            "append p95": us(pct(baseline, 0.95)),
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        for sync in ("NORMAL", "FULL"):
            path = os.path.join(tmp, f"{sync}.db")
            print(f"SQLite synchronous={sync}...", file=sys.stderr)
            rows.append(
                bench(
                    f"SQLite, synchronous={sync}",
                    sqlite_factory(path, sync),
                    sqlite_drop(path),
                    args.appends,
                    args.turns,
                    big,
                )
            )
    if args.pg:
        schema = "bench_" + uuid.uuid4().hex[:10]
        print("PostgreSQL...", file=sys.stderr)
        try:
            rows.append(
                bench(
                    "PostgreSQL (server's synchronous_commit)",
                    lambda: PostgresStore(args.pg, schema=schema),
                    pg_drop(args.pg, schema),
                    args.appends,
                    args.turns,
                    big,
                )
            )
        finally:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    columns = list(rows[1])
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        print("| " + " | ".join(row.get(c, "") for c in columns) + " |")


if __name__ == "__main__":
    main()
