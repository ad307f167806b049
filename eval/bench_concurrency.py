"""Many processes, one conversation: throughput and errors of the store (issue 24).

    python -m eval bench-concurrency [--procs 1,2,4,8] [--ops 200] [--append-ops 1000]
                                     [--rounds 3] [--pg DSN] [--no-pg]

For each backend (SQLite in a temporary folder; PostgreSQL in a throwaway schema when a DSN is
given or ``BYHEART_TEST_PG_DSN`` is set) and each number of processes, every process opens one
shared conversation (a new one each round) and, once all are ready, runs its operations on it
(``python -m eval.concurrency_worker``):

* ``appends``: ``--append-ops`` appends each (a 200-append run of one writer lasts a few
  hundredths of a second: too short to time), each with a key;
* ``mixed``: ``--ops`` operations each, appends and composes alternating;
* ``composes``: ``--ops`` composes each, on a conversation of 200 turns.

It prints operations per second (all processes together, from the start signal to the last
process's end; the median of ``--rounds`` rounds, the process counts alternating within each
round so that the machine's load changes hit them alike), appends per second, the errors the
processes saw (all rounds), and how many checks of the stored conversation failed: every
acknowledged append stored exactly once, at the index it returned, each writer's turns in its
own order.  Timings vary with the machine; the checks do not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.concurrency_worker import writer_text

ROOT = Path(__file__).resolve().parent.parent
WORKER = "eval.concurrency_worker"  # run as a module from ROOT: no path edits anywhere

WORKLOADS = {"appends": 1.0, "mixed": 0.5, "composes": 0.0}
_PRELOAD = 200  # turns in the conversation before a composes-only round


@dataclass
class Backend:
    """Where the workers' store is: a SQLite file, or a PostgreSQL DSN and schema."""

    kind: str
    location: str
    schema: str = "-"

    def store(self) -> Any:
        from yait_byheart.store import PostgresStore, SQLiteStore

        if self.kind == "sqlite":
            return SQLiteStore(self.location)
        return PostgresStore(self.location, schema=self.schema)


@dataclass
class Worker:
    """What one worker process reported."""

    writer: str
    acks: list[tuple[int, int]] = field(default_factory=list)  # (operation, turn index)
    composes: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    finished: bool = False


def spawn(backend: Backend, conversation: str, writer: str, ops: int, mix: float,
          first: int = 0) -> subprocess.Popen[str]:  # fmt: skip
    """A worker process, started and ready (it waits for "go" on stdin)."""
    args = [sys.executable, "-m", WORKER, backend.kind, backend.location, backend.schema,
            conversation, writer, str(ops), str(mix), str(first)]  # fmt: skip
    path = [p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env, cwd=ROOT)  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line != "ready\n":
        proc.kill()
        raise RuntimeError(f"worker {writer} could not open the store: {line!r}")
    return proc


def go(procs: Sequence[subprocess.Popen[str]]) -> None:
    """Start every ready worker at once."""
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()


def parse(writer: str, output: str) -> Worker:
    """A worker's printed lines, read back (a last line cut short by a kill is not one)."""
    worker = Worker(writer)
    lines = output.split("\n")[:-1]  # what follows the last newline was cut short, or empty
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "a":
            i, index = rest.split()
            worker.acks.append((int(i), int(index)))
        elif kind == "c":
            worker.composes += 1
        elif kind == "e":
            worker.errors.append(rest)
        elif kind == "done":
            worker.seconds, worker.finished = float(rest), True
    return worker


def run(backend: Backend, conversation: str, procs: int, ops: int, mix: float,
        timeout: float = 300.0) -> list[Worker]:  # fmt: skip
    """`procs` workers doing `ops` operations each on one conversation, started together."""
    writers = [f"w{k}" for k in range(procs)]
    started = [spawn(backend, conversation, w, ops, mix) for w in writers]
    go(started)
    # Read every worker's output at once: a pipe nobody reads fills and stalls its writer.
    with ThreadPoolExecutor(len(started)) as pool:
        outputs = list(pool.map(lambda p: p.communicate(timeout=timeout)[0], started))
    out = []
    for writer, proc, stdout in zip(writers, started, outputs, strict=True):
        worker = parse(writer, stdout)
        if proc.returncode != 0:
            worker.errors.append(f"exit code {proc.returncode}")
        out.append(worker)
    return out


def check(stored: list[str], workers: Sequence[Worker], extra: int = 0) -> list[str]:
    """What is wrong with the stored texts given what the workers were told (empty: nothing).

    Every acknowledged append is stored exactly once at the index it returned, each writer's
    turns are in its own order, and nothing else was stored beyond `extra` turns (those stored
    before, or in flight when a worker was killed).
    """
    problems: list[str] = []
    count: dict[str, int] = {}
    for text in stored:
        count[text] = count.get(text, 0) + 1
    problems += [f"stored {n} times: {t!r}" for t, n in count.items() if n > 1]
    acked = 0
    for worker in workers:
        last = -1
        for i, index in worker.acks:
            text = writer_text(worker.writer, i)
            if not 0 <= index < len(stored) or stored[index] != text:
                problems.append(f"{worker.writer} op {i}: acknowledged as turn {index}, not there")
            if index <= last:
                problems.append(f"{worker.writer} op {i}: turn {index} is not after turn {last}")
            last = index
        acked += len(worker.acks)
    if len(stored) > acked + extra:
        problems.append(
            f"{len(stored)} turns stored, {acked} acknowledged, {extra} expected besides"
        )
    return problems


def stored_texts(backend: Backend, conversation: str) -> list[str]:
    with backend.store() as store:
        return [str(t["text"]) for t in store.export(conversation)["turns"]]


def preload(backend: Backend, conversation: str, turns: int) -> None:
    with backend.store() as store:
        mem = store.open(conversation, budget=2_000)
        for i in range(turns):
            mem.append("assistant", writer_text("pre", i))


@dataclass
class Row:
    backend: str
    procs: int
    workload: str
    ops_per_s: float
    appends_per_s: float
    errors: int
    problems: int


def round_row(backend: Backend, procs: int, ops: int, workload: str) -> Row:
    """One round: `procs` processes doing `ops` operations each on a new conversation."""
    conversation = f"bench-{uuid.uuid4().hex[:10]}"
    mix = WORKLOADS[workload]
    extra = 0
    if workload == "composes":
        preload(backend, conversation, _PRELOAD)
        extra = _PRELOAD
    workers = run(backend, conversation, procs, ops, mix)
    seconds = max((w.seconds for w in workers), default=0.0) or float("nan")
    appends = sum(len(w.acks) for w in workers)
    done = appends + sum(w.composes for w in workers)
    errors = sum(len(w.errors) for w in workers)
    stored = stored_texts(backend, conversation)
    problems = check(stored[extra:], workers) if not extra else check(stored, workers, extra)
    for worker in workers:
        for error in worker.errors[:3]:
            print(f"  {worker.writer}: {error}", file=sys.stderr)
    for problem in problems[:5]:
        print(f"  problem: {problem}", file=sys.stderr)
    return Row(backend.kind, procs, workload, done / seconds, appends / seconds, errors,
               len(problems))  # fmt: skip


def median_row(rounds: Sequence[Row]) -> Row:
    """The rounds of one setting as one row: median speeds, every error and problem counted."""
    first = rounds[0]
    return Row(first.backend, first.procs, first.workload,
               statistics.median(r.ops_per_s for r in rounds),
               statistics.median(r.appends_per_s for r in rounds),
               sum(r.errors for r in rounds), sum(r.problems for r in rounds))  # fmt: skip


def rows_of(backend: Backend, workload: str, counts: Sequence[int], ops: int,
            rounds: int) -> list[Row]:  # fmt: skip
    """One row per process count: `rounds` rounds, the counts alternating within each."""
    runs: dict[int, list[Row]] = {n: [] for n in counts}
    for _round in range(rounds):
        for n in counts:
            runs[n].append(round_row(backend, n, ops, workload))
    return [median_row(runs[n]) for n in counts]


def table(rows: Sequence[Row]) -> str:
    lines = [
        "| backend | processes | workload | operations/s | appends/s | errors | stored wrong |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.backend} | {r.procs} | {r.workload} | {r.ops_per_s:,.0f} | "
            f"{r.appends_per_s:,.0f} | {r.errors} | {r.problems} |"
        )
    return "\n".join(lines)


def backends(args: argparse.Namespace, folder: str) -> list[Backend]:
    out = [Backend("sqlite", os.path.join(folder, "bench.db"))]
    dsn = args.pg or os.environ.get("BYHEART_TEST_PG_DSN", "")
    if dsn and not args.no_pg:
        out.append(Backend("postgres", dsn, "bench_" + uuid.uuid4().hex[:10]))
    return out


def drop_schema(backend: Backend) -> None:
    if backend.kind == "postgres":
        import psycopg

        with psycopg.connect(backend.location, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {backend.schema} CASCADE")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eval bench-concurrency",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--procs", default="1,2,4,8", help="process counts (default 1,2,4,8)")
    parser.add_argument("--ops", type=int, default=200, help="operations per process")
    parser.add_argument("--append-ops", type=int, default=1000, help="appends per process")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; medians are shown")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="which workloads")
    parser.add_argument("--pg", default="", help="PostgreSQL DSN (default $BYHEART_TEST_PG_DSN)")
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.procs.split(",")]
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="byheart-bench-") as folder:
        for backend in backends(args, folder):
            try:
                for workload in workloads:
                    ops = args.append_ops if workload == "appends" else args.ops
                    rows += rows_of(backend, workload, counts, ops, args.rounds)
                    print(table(rows[-len(counts) :]), file=sys.stderr)
            finally:
                drop_schema(backend)
    print(
        f"python -m eval bench-concurrency --procs {args.procs} --ops {args.ops} "
        f"--append-ops {args.append_ops} --rounds {args.rounds}"
    )
    print(table(rows))
    failed = sum(r.errors + r.problems for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
