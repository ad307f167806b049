"""Speed as a user feels it, as ratios measured in one process (issue 34).

    python -m eval bench-cold                          # both parts, LongMemEval histories
    python -m eval bench-cold --data PATH --histories 7 --requests 7
    python -m eval bench-cold --profile                # and where the time goes (cProfile)

The cold path: a LongMemEval history (about 500 turns, 500,000 characters) appended to a new
Memory, then composed once (its question), against `PlainBM25` below: a plain pure-Python
turn-level BM25 of about 40 lines (lowercase `\\w+` words, Okapi k1 1.2, b 0.75) that indexes
each turn as it is appended, then answers the same question. Both run in this process, history
by history in alternating order, timed in CPU seconds (a shared machine's load moves wall
time, not the ratio); the first history warms both up. The ratio (byheart / plain, summed over
the histories) is judged against 3x.

A per-request application: the first history is written to a SQLite store through a bound
Memory (`store.open`, then each turn appended), and the store is closed; then fresh processes
(`python -m eval.bench_cold --child ...`) each open the conversation and compose its question
once, timing that open and compose inside the process (its interpreter start and imports are
printed apart). The first of them is the first reopen right after the conversation was
written; the median of the later ones is what each later request pays. The same again for a
writer process that ends without closing its store (closed at its exit, which writes the index
snapshot), for requests that each append an exchange and close the store, and for a writer
that is still running with its store open (no snapshot covers what it appended since it
opened: the first reopen indexes it and stores one). Judged against 15 ms, all but the last.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval.sources import LONGMEMEVAL, missing

if TYPE_CHECKING:  # the child process imports nothing of the package before it times it
    from eval.bench_live import History

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "longmemeval" / "longmemeval_s_dev.json.gz"
PROG = "python -m eval bench-cold"
BUDGET = 20_000
COLD_LIMIT = 3.0  # the cold path at most 3x the plain BM25
REQUEST_LIMIT_MS = 15.0  # a fresh process's open and compose

_WORD = re.compile(r"\w+")
K1, B = 1.2, 0.75


class PlainBM25:
    """A plain turn-level BM25 that indexes each turn at append (the cold path's baseline)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.lengths: list[int] = []
        self.postings: dict[str, dict[int, int]] = {}
        self.total = 0

    def append(self, text: str) -> int:
        doc = len(self.texts)
        counts = Counter(_WORD.findall(text.lower()))
        for word, tf in counts.items():
            self.postings.setdefault(word, {})[doc] = tf
        length = sum(counts.values())
        self.texts.append(text)
        self.lengths.append(length)
        self.total += length
        return doc

    def top(self, query: str, k: int = 10) -> list[str]:
        """The texts of the `k` turns scoring best for `query`, best first."""
        n = len(self.texts)
        avg = self.total / n if n else 1.0
        scores: dict[int, float] = {}
        for word in set(_WORD.findall(query.lower())):
            held = self.postings.get(word)
            if not held:
                continue
            idf = math.log(1.0 + (n - len(held) + 0.5) / (len(held) + 0.5))
            for doc, tf in held.items():
                norm = K1 * (1.0 - B + B * self.lengths[doc] / avg) if avg else K1
                scores[doc] = scores.get(doc, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm)
        best = heapq.nlargest(k, scores, key=scores.__getitem__)
        return [self.texts[d] for d in best]


def plain_cold(history: History) -> int:
    turns, question = history
    index = PlainBM25()
    for _, text, _ in turns:
        index.append(text)
    return len(index.top(question))


def byheart_cold(history: History, budget: int = BUDGET) -> int:
    from yait_byheart import Memory

    turns, question = history
    mem = Memory(budget=budget)
    for role, text, when in turns:
        mem.append(role, text, when=when)
    return len(mem.compose(question)["messages"])


def cold_path(histories: list[History], budget: int) -> dict[str, float]:
    """CPU seconds of both, history by history in alternating order (the first warms up)."""
    ours: list[float] = []
    plain: list[float] = []
    runs: list[tuple[Callable[[History], int], list[float]]] = [
        (plain_cold, plain), (lambda h: byheart_cold(h, budget), ours),
    ]  # fmt: skip
    for i, history in enumerate(histories):
        for run, into in runs if i % 2 else reversed(runs):
            t0 = time.process_time()
            run(history)
            if i:
                into.append(time.process_time() - t0)
    turns = statistics.median(len(h[0]) for h in histories[1:])
    return {
        "histories": len(ours),
        "turns": turns,
        "byheart_ms": statistics.median(ours) * 1e3,
        "plain_ms": statistics.median(plain) * 1e3,
        "ratio": sum(ours) / sum(plain),
    }


# The features of the cold path: (label, the module whose path ends so, the function whose
# cumulative time is the feature's). A label starts with the total (TOTALS) it is part of.
FEATURES: tuple[tuple[str, str, str], ...] = (
    ("append: relative dates resolved", "_dates/resolve.py", "resolve_time"),
    ("append: layout (stretches, long-turn pieces)", "_turns/conversation.py", "layout"),
    ("compose: tokenizing (words, stop words, stems, languages)", "_text/tokens.py", "counts_of"),
    ("compose: indexing (every word, the user's words)", "_retrieval/postings.py", "add_many"),
    ("compose: stretch sizes (rendered, on first read)", "_turns/conversation.py",
     "stretch_sizes"),
)  # fmt: skip
TOTALS = (("append", "memory.py", "append"), ("compose", "memory.py", "compose"))


# The stages of a fresh process's open and compose, as FEATURES above.
STAGES: tuple[tuple[str, str, str], ...] = (
    ("open: rows read (SQLite, JSON)", "store/__init__.py", "_read"),
    ("open: turn records read and checked", "_record/load.py", "parse"),
    ("open: stored layout checked against the turns", "_retrieval/snapshot.py", "load_layout"),
    ("open: turns restored from the layout", "_follow/follower.py", "restore_known"),
    ("open: index snapshot loaded", "_retrieval/ranker.py", "load_snapshot"),
    ("open: sticky selection restored", "memory.py", "_restore_state"),
    ("compose: state written", "store/_journal.py", "state_changed"),
)
STAGE_TOTALS = (("open", "store/__init__.py", "open"), ("compose", "memory.py", "compose"))


def shares(
    profile: Any, parts: Sequence[tuple[str, str, str]], totals: Sequence[tuple[str, str, str]]
) -> list[tuple[str, float]]:
    """Each part's share of the profiled total, and each total's rest (a part is in the total
    its label starts with). cProfile's overhead weighs on many small calls: approximate."""
    import pstats

    stats: dict[tuple[str, int, str], tuple[float, ...]] = vars(pstats.Stats(profile))["stats"]

    def cumulative(path: str, name: str) -> float:  # the 4th field: cumulative seconds
        return sum(v[3] for (f, _, n), v in stats.items() if f.endswith(path) and n == name)

    whole = {label: cumulative(path, name) for label, path, name in totals}
    out = [(label, cumulative(path, name)) for label, path, name in parts]
    for op, total in whole.items():
        out.append((f"{op}: the rest", total - sum(t for label, t in out if label.startswith(op))))
    return [(label, t / sum(whole.values())) for label, t in out]


def profile_shares(histories: list[History], budget: int) -> list[tuple[str, float]]:
    """Each feature's share of the cold path, profiled over `histories` after the first."""
    import cProfile

    byheart_cold(histories[0], budget)
    profile = cProfile.Profile()
    profile.enable()
    for history in histories[1:]:
        byheart_cold(history, budget)
    profile.disable()
    return shares(profile, FEATURES, TOTALS)


# -- a per-request application -------------------------------------------------------------


# How the writer leaves its store: closed (as `with` does), left open by a process that then
# ends (the store is closed at exit), or still open in a process that goes on running.
WRITERS = {"closed": "store closed by its writer", "exited": "writer ended without closing",
           "requests": "written a request per exchange",
           "running": "writer still running, never closed"}  # fmt: skip


def write(path: Path, turns: Sequence[Sequence[Any]], close: bool) -> tuple[object, object]:
    """Store `turns` (role, text, when) through a bound Memory, one by one; `close`: close the
    store after. The store and the Memory."""
    from yait_byheart.store import SQLiteStore

    store = SQLiteStore(path)
    mem = store.open("c", budget=BUDGET)
    for role, text, when in turns:
        mem.append(role, text, when=when)
    if close:
        store.close()
    return store, mem


_ENDING_WITH: list[object] = []  # what `--write` leaves open when the process ends


def write_by_requests(path: Path, turns: Sequence[Sequence[Any]]) -> None:
    """Store `turns` as a per-request application does: each request opens the store, appends
    a user turn, composes, appends the reply and closes the store (here in one process)."""
    from yait_byheart.store import SQLiteStore

    at = 0
    while at < len(turns):
        with SQLiteStore(path) as store:
            mem = store.open("c", budget=BUDGET)
            role, text, when = turns[at]
            mem.append(role, text, when=when)
            mem.compose(None)
            for role, text, when in turns[at + 1 : at + 2]:
                mem.append(role, text, when=when)
        at += 2


def writer_process(path: Path, turns: Sequence[Sequence[Any]]) -> None:
    """`write` in a process of its own that ends without closing the store."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(list(turns), f)
    try:
        subprocess.run([sys.executable, "-m", "eval.bench_cold", "--write", str(path), f.name],
                       check=True, cwd=ROOT, env=child_env())  # fmt: skip
    finally:
        os.unlink(f.name)


def child(path: str, question: str, profiled: bool) -> int:
    """In a fresh process: open the conversation and compose once, timed (or profiled: then
    the stages' shares); one JSON line."""
    import cProfile

    started = time.perf_counter()
    from yait_byheart.store import SQLiteStore

    imported = time.perf_counter()
    profile = cProfile.Profile()
    with SQLiteStore(path) as store:
        t0, c0 = time.perf_counter(), time.process_time()
        if profiled:
            profile.enable()
        mem = store.open("c")
        sent = mem.compose(question)
        profile.disable()
        t1, c1 = time.perf_counter(), time.process_time()
    # What the time went to beside the history: the characters sent (a kept sticky context
    # may be larger than a fresh one) and the stretches the stored snapshot lacked.
    out: dict[str, Any] = {"ms": (t1 - t0) * 1e3, "cpu_ms": (c1 - c0) * 1e3,
                           "import_ms": (imported - started) * 1e3, "chars": sent["chars"],
                           "lacking": mem.stretch_count - mem.snapshot_stretches}  # fmt: skip
    if profiled:
        out = {"shares": shares(profile, STAGES, STAGE_TOTALS)}
    print(json.dumps(out))
    return 0


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)}  # fmt: skip


def fresh_process(path: Path, question: str, profiled: bool = False) -> dict[str, Any]:
    args = ["--child", str(path), question, *(["--profile"] if profiled else [])]
    out = subprocess.run(
        [sys.executable, "-m", "eval.bench_cold", *args],
        capture_output=True, text=True, check=True, cwd=ROOT, env=child_env(),
    )  # fmt: skip
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def per_request(history: History, requests: int, writer: str, profiled: bool) -> dict[str, Any]:
    """The first reopen after writing as `writer` (a key of WRITERS) says, then the median of
    `requests - 1` more (and, profiled, the stages of one more)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.db"
        running = None  # a running writer's store and Memory, open until the readers are done
        if writer == "exited":
            writer_process(path, history[0])
        elif writer == "requests":
            write_by_requests(path, history[0])
        else:
            running = write(path, history[0], close=writer == "closed")
        runs = [fresh_process(path, history[1]) for _ in range(requests)]
        stages = fresh_process(path, history[1], True)["shares"] if profiled else []
        del running
    later = runs[1:]
    return {
        "first": runs[0],
        "later": {k: statistics.median(r[k] for r in later) for k in runs[0]},
        "stages": stages,
    }


def show(label: str, run: dict[str, Any]) -> str:
    first, later = run["first"], run["later"]
    return (
        f"{label}: first reopen {first['ms']:.1f} ms ({first['cpu_ms']:.1f} ms CPU; "
        f"{first['chars']:,.0f} chars sent, {first['lacking']:.0f} stretches indexed), later "
        f"reopens {later['ms']:.1f} ms ({later['cpu_ms']:.1f} ms CPU; {later['chars']:,.0f} "
        f"chars, {later['lacking']:.0f} indexed), medians; imports {later['import_ms']:.0f} ms "
        "apart"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["--child"]:
        return child(args_list[1], args_list[2], "--profile" in args_list[3:])
    if args_list[:1] == ["--write"]:  # `writer_process`: ends without closing the store,
        # the store and Memory held until the process ends, as a script's top-level names are
        turns = json.loads(Path(args_list[2]).read_text())
        _ENDING_WITH.append(write(Path(args_list[1]), turns, close=False))
        return 0
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LongMemEval gzip JSON")
    parser.add_argument("--histories", type=int, default=7, help="cold path histories (>= 2)")
    parser.add_argument("--requests", type=int, default=7, help="fresh processes (>= 2)")
    parser.add_argument("--profile", action="store_true", help="each feature's cold-path share")
    args = parser.parse_args(args_list)
    if args.histories < 2 or args.requests < 2:
        parser.error("--histories and --requests must be >= 2")
    if not args.data.is_file():
        return missing(PROG, args.data, LONGMEMEVAL)
    from eval.bench_live import longmemeval_histories

    histories = longmemeval_histories(str(args.data), args.histories)
    cold = cold_path(histories, BUDGET)
    print(
        f"cold path (LongMemEval, {cold['histories']} histories of {cold['turns']:.0f} turns "
        f"after one to warm up): append all + compose once {cold['byheart_ms']:.1f} ms CPU, "
        f"plain turn-BM25 {cold['plain_ms']:.1f} ms, ratio {cold['ratio']:.2f}x "
        f"({'MET' if cold['ratio'] <= COLD_LIMIT else 'MISSED'}: at most {COLD_LIMIT:g}x)",
        flush=True,
    )
    if args.profile:
        for label, share in profile_shares(histories, BUDGET):
            print(f"  {share:6.1%}  {label}", flush=True)
    met = True
    for writer, label in WRITERS.items():
        run = per_request(histories[0], args.requests, writer, args.profile and writer == "closed")
        worst = max(run["first"]["ms"], run["later"]["ms"])
        if writer != "running":  # no snapshot can cover what a running writer still appends
            met = met and worst <= REQUEST_LIMIT_MS
        print(f"per request, {len(histories[0][0])} turns, {show(label, run)}", flush=True)
        for stage, share in run["stages"]:
            print(f"  {share:6.1%}  {stage}", flush=True)
    print(f"per request {'MET' if met else 'MISSED'}: open + compose at most "
          f"{REQUEST_LIMIT_MS:g} ms, first reopen included")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
