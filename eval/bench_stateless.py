"""Stateless requests: a new store object per request, recalling across a user's history.

    python -m eval bench-stateless                          # 10,000 and 100,000 turns
    python -m eval bench-stateless --turns 500000           # the large user (fixture: minutes)
    python -m eval bench-stateless --backends sqlite --requests 10   # a quick look

One user's conversations are LongMemEval histories (`--data`, the gzip JSON; about 500 turns
each, assistant replies about 1,700 characters), taken in order and again from the first when
there are fewer than needed, until the user has `--turns` turns; another user's conversation is
stored beside them. Fixtures are built once and kept (SQLite under `--keep`, by default the
ignored build/stateless/; PostgreSQL in a schema per size), then reused.

A request does what a web handler does: a new store object; `store.open(live, user=u,
external=store.recall_source(user=u, exclude=live))`; compose the question (a LongMemEval
question); append the question and a reply; close. `live` is a conversation of the run's own
(each worker and fresh process has one too), so runs on a kept fixture compare. Measured:

* "first recall, nothing kept": the first recall of a fresh store (it reads every row of the
  user, builds the index and keeps it in the store);
* "request p50 / p95": `--requests` requests in this process, each with a new store object;
* "fresh process": the first request of a new Python process, imports included (timed inside
  it from before `import yait_byheart`), and the process's whole wall time; bytecode is
  written and read, as an installed package's is (one process not counted writes it);
* "byheart recall": the command line's wall time (SQLite only: the CLI opens the default
  PostgreSQL schema);
* "N workers": `--workers` processes, each making requests on its own conversation of the user
  at once, on PostgreSQL: p50 / p95 per request and requests per second.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from eval.deployed import deployed_env
from eval.sources import LONGMEMEVAL, missing

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"
DEFAULT_KEEP = ROOT / "build" / "stateless"
DEFAULT_DSN = "postgresql://postgres@127.0.0.1:38743/byheart_test"
PROG = "python -m eval bench-stateless"
USER = "bench-user"
REPLY = "Noted. I will keep that in mind for the next steps we plan together."


def histories(path: Path) -> list[tuple[list[tuple[str, str, str]], str]]:
    """Each LongMemEval history as (role, text, date) turns, with its question."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        items = json.load(fh)
    out = []
    for item in items:
        turns = [(m["role"], m["content"], day.split(" (")[0])
                 for session, day in zip(item["haystack_sessions"], item["haystack_dates"],
                                         strict=True)
                 for m in session]  # fmt: skip
        out.append((turns, item["question"]))
    return out


def conversations(data: Path, total: int) -> tuple[list[dict[str, Any]], list[str]]:
    """`Memory.to_dict()` of each distinct history used, and the questions."""
    from yait_byheart import Memory

    found = histories(data)
    used, turns = [], 0
    while turns < total and found:
        history, _q = found[len(used) % len(found)]
        turns += len(history)
        used.append(len(used) % len(found))
    dicts: dict[int, dict[str, Any]] = {}
    for k in sorted(set(used)):
        mem = Memory()
        for role, text, when in found[k][0]:
            mem.append(role, text, when=when)
        dicts[k] = mem.to_dict()
    return [dicts[k] for k in used], [q for _h, q in found]


def open_store(backend: str, where: str, stores: Any = None) -> Any:
    """A new store object of `stores` (a `yait_byheart.store` module: this checkout's if None,
    another revision's for `ab-revision --stateless`)."""
    if stores is None:
        import yait_byheart.store as stores
    if backend == "sqlite":
        return stores.SQLiteStore(where)
    dsn, _, schema = where.rpartition("#")
    return stores.PostgresStore(dsn, schema=schema)


def location(backend: str, args: argparse.Namespace, total: int) -> str:
    if backend == "sqlite":
        return str(Path(args.keep) / f"user-{total}.db")
    return f"{args.dsn}#stateless_{total}"


def build(backend: str, where: str, args: argparse.Namespace, total: int) -> float | None:
    """Fill the store if it holds nothing yet; the seconds the first recall then took."""
    with open_store(backend, where) as store:
        if store.conversations(user=USER):
            return None
        dicts, _ = conversations(Path(args.data), total)
        print(f"  {backend}: storing {len(dicts)} conversations...", file=sys.stderr, flush=True)
        for i, data in enumerate(dicts):
            store.import_(f"h{i:05d}", data, user=USER)
        store.import_("other", dicts[0], user="someone-else")
    with open_store(backend, where) as store:
        t0 = time.perf_counter()
        store.recall("what did I say about my plans", user=USER)
        return time.perf_counter() - t0


def request(backend: str, where: str, live: str, question: str, stores: Any = None) -> float:
    """One stateless request (with `stores`' store objects, as `open_store`); its seconds."""
    t0 = time.perf_counter()
    with open_store(backend, where, stores) as store:
        source = store.recall_source(user=USER, exclude=live)
        mem = store.open(live, user=USER, external=source)
        mem.compose(question)
        mem.append("user", question)
        mem.append("assistant", REPLY)
    return time.perf_counter() - t0


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.0f} ms"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fresh_process(backend: str, where: str, question: str) -> tuple[float, float]:
    """(inside: imports + one request, whole process wall time)."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "eval.bench_stateless", "--child", backend, where, question],
        check=True, capture_output=True, text=True, env=deployed_env(ROOT),
    )  # fmt: skip
    return float(out.stdout.split()[-1]), time.perf_counter() - t0


def child(backend: str, where: str, question: str) -> None:
    t0 = time.perf_counter()
    import yait_byheart.store  # noqa: F401  (timed: the imports are part of the first request)

    request(backend, where, f"live-fresh-{os.getpid()}", question)
    print(time.perf_counter() - t0)


def cli_recall(where: str, question: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "yait_byheart", "recall", question, "--user", USER,
         "--store", where],
        check=True, capture_output=True, env=deployed_env(ROOT),
    )  # fmt: skip
    return time.perf_counter() - t0


def worker(backend: str, where: str, live: str, questions: list[str]) -> None:
    times = [request(backend, where, live, q) for q in questions]
    print(json.dumps(times))


def workers(backend: str, where: str, n: int, questions: list[str]) -> tuple[list[float], float]:
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "eval.bench_stateless",
                "--worker",
                backend,
                where,
                f"live-{os.getpid()}-w{k}",
                json.dumps(questions),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=deployed_env(ROOT),
        )
        for k in range(n)
    ]
    times: list[float] = []
    for p in procs:
        out, _ = p.communicate()
        times += json.loads(out.strip().splitlines()[-1])
    return times, time.perf_counter() - t0


def measure(backend: str, args: argparse.Namespace, total: int, asked: list[str]) -> dict[str, str]:
    where = location(backend, args, total)
    first = build(backend, where, args, total)
    row: dict[str, str] = {}
    if first is not None:
        row["first recall, nothing kept"] = f"{first:.1f} s"
    live = f"live-{os.getpid()}"  # the run's own: runs on a kept fixture compare
    request(backend, where, live, asked[0])  # the live conversation exists from here on
    times = [request(backend, where, live, q) for q in asked[: args.requests]]
    row["request p50"] = ms(statistics.median(times))
    row["request p95"] = ms(pct(times, 0.95))
    fresh_process(backend, where, asked[0])  # not counted: writes the .pyc files
    inside, whole = zip(*(fresh_process(backend, where, q) for q in asked[: args.processes]),
                        strict=True)  # fmt: skip
    row["fresh process: imports + request (median)"] = ms(statistics.median(inside))
    row["fresh process: wall (median)"] = ms(statistics.median(whole))
    if backend == "sqlite":
        cli_recall(where, asked[0])  # not counted: writes the command line's .pyc files
        row["byheart recall (median)"] = ms(statistics.median(
            [cli_recall(where, q) for q in asked[: args.processes]]))  # fmt: skip
    if backend == "postgres" and args.workers > 1:
        per, wall = workers(backend, where, args.workers, asked[: args.requests])
        row[f"{args.workers} workers: p50"] = ms(statistics.median(per))
        row[f"{args.workers} workers: p95"] = ms(pct(per, 0.95))
        row[f"{args.workers} workers: requests/s"] = f"{len(per) / wall:.1f}"
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="LongMemEval JSON (.gz)")
    parser.add_argument("--turns", default="10000,100000", help="users' sizes, comma-separated")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--dsn", default=os.environ.get("BYHEART_TEST_PG_DSN", DEFAULT_DSN))
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--processes", type=int, default=3, help="fresh processes timed")
    parser.add_argument("--workers", type=int, default=4, help="PostgreSQL worker processes")
    parser.add_argument("--keep", default=str(DEFAULT_KEEP), help="folder of SQLite fixtures")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if args.worker:
        backend, where, live, asked = args.worker
        worker(backend, where, live, json.loads(asked))
        return 0
    if not Path(args.data).is_file():
        return missing(PROG, args.data, LONGMEMEVAL)
    Path(args.keep).mkdir(parents=True, exist_ok=True)
    asked = [q for _h, q in histories(Path(args.data))]
    asked = (asked * (1 + args.requests // max(1, len(asked))))[: max(args.requests, 1)]
    print(f"{PROG} --turns {args.turns} --backends {args.backends} --requests {args.requests}")
    for total in map(int, args.turns.split(",")):
        for backend in args.backends.split(","):
            row = measure(backend, args, total, asked)
            print(f"\none user, {total:,} turns ({backend})\n| measure | value |\n|---|---|")
            for key, value in row.items():
                print(f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
