"""Developer A/B: append and compose of another revision against this checkout, in one process.

    python -m eval ab-revision d712674                  # 10,000 turns, 1,000 rounds
    python -m eval ab-revision d712674 --turns 100000 --rounds 600
    python -m eval ab-revision d712674 --cold 9        # the cold path instead
    python -m eval ab-revision 6a58811 --reopen 100000 # reopening from SQLite instead
    python -m eval ab-revision bb34bbe --stateless build/stateless/user-500000.db
    python -m eval ab-revision 9ef33a1 --assemble build/stateless/user-500000.db

A shared machine's speed drifts between runs (docs/benchmarks.md, "Speed"), so two revisions
are compared inside one process: `git archive REV yait_byheart` is unpacked into a temporary
folder and imported under another package name (the package imports itself relatively), both
Memories get the same history of generated talk (eval.bench_live's), then each round appends
a user turn, composes with it and appends the reply, on both in alternating order. The medians
of the second half of the rounds and their ratio (this checkout / REV) are printed. With
`--cold N`, the cold path instead (eval.bench_live's: N generated histories of 500 turns,
each appended to a new Memory and composed once), alternated history by history, CPU time.
With `--reopen N`, reopening instead: each revision's Memory gets the same N turns, is imported
into its own SQLite file by its own store (which then writes its index snapshot on a first
open), and the two files are opened in turn, 6 times each (wall-clock medians).
With `--stateless DB`, bench-stateless's request instead (a new store object, a recall across
the user's history, two turns appended) on its SQLite fixture DB, each of `--data`'s questions
asked of both revisions in alternating order, `--rounds` times (p50, mean and p95 of each): the
revisions must keep the same pieces version, or each rewrites them for the other.
With `--assemble DB`, assembling the bench user's list of segments as DB keeps it (the
segments decoded once by each revision, then `Parts.of` alternated, 10 times each: medians).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import yait_byheart
from eval import bench_stateless
from eval.bench_live import Talk, byheart_cold, generated_histories
from eval.sources import LONGMEMEVAL, missing

ROOT = Path(__file__).resolve().parent.parent


def load_revision(rev: str, into: Path) -> ModuleType:
    """Package `yait_byheart` at git revision `rev`, imported as `byheart_at_<rev>`."""
    data = subprocess.run(
        ["git", "archive", rev, "yait_byheart"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    # The "data" filter where this Python has it (3.12, and backports): plain files only.
    safe: dict[str, Any] = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, **safe)
    name = "byheart_at_" + "".join(c if c.isalnum() else "_" for c in rev)
    folder = into / "yait_byheart"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None:
        raise RuntimeError(f"ab-revision: cannot import yait_byheart at {rev}")
    module = importlib.util.module_from_spec(spec)
    # A revision loaded before (from a folder since removed) must not lend its submodules.
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[loaded]
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def feed(mem: Any, history: list[str]) -> None:
    """Append `history` to `mem`, the speakers alternating, a new day every 80 turns."""
    for i, text in enumerate(history):
        when = f"{1 + (i // 80) % 28} May 2023"
        mem.append("user" if i % 2 == 0 else "assistant", text, when=when)


def compare(memories: dict[str, Any], turns: int, rounds: int) -> dict[str, dict[str, float]]:
    """Median append and compose seconds per memory over the second half of `rounds`."""
    talk = Talk()
    history = [talk.turn() for _ in range(turns)]
    for mem in memories.values():
        feed(mem, history)
    times: dict[str, dict[str, list[float]]] = {k: {"append": [], "compose": []} for k in memories}
    names = list(memories)
    for r in range(rounds):
        user, reply = talk.turn(), talk.turn()
        for name in names if r % 2 else reversed(names):
            mem = memories[name]
            t0 = time.perf_counter()
            mem.append("user", user, when="3 May 2023")
            t1 = time.perf_counter()
            mem.compose(user)
            t2 = time.perf_counter()
            mem.append("assistant", reply, when="3 May 2023")
            t3 = time.perf_counter()
            if r >= rounds // 2:
                times[name]["append"] += [t1 - t0, t3 - t2]
                times[name]["compose"].append(t2 - t1)
    return {k: {op: statistics.median(v) for op, v in ops.items()} for k, ops in times.items()}


def compare_cold(memories: dict[str, Any], histories: int, budget: int) -> dict[str, float]:
    """Median CPU seconds of the cold path per memory class, over `histories` histories."""
    times: dict[str, list[float]] = {k: [] for k in memories}
    names = list(memories)
    for i, history in enumerate(generated_histories(histories + 1)):
        for name in names if i % 2 else reversed(names):
            t0 = time.process_time()
            byheart_cold(history, budget, memories[name])
            if i:  # the first warms both up
                times[name].append(time.process_time() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def compare_reopen(
    packages: dict[str, Any], turns: int, budget: int, into: Path
) -> dict[str, float]:
    """Median seconds to open a conversation of `turns` turns from SQLite, per package."""
    talk = Talk()
    history = [talk.turn() for _ in range(turns)]
    stores: dict[str, tuple[Any, Path]] = {}
    for name, package in packages.items():
        store = importlib.import_module(package.__name__ + ".store")
        mem = package.Memory(budget=budget)
        feed(mem, history)
        path = into / f"{len(stores)}.db"
        with store.SQLiteStore(path) as db:
            db.import_("c", mem.to_dict())
        with store.SQLiteStore(path) as db:
            db.open("c")  # a store may write its snapshot on the first open
        stores[name] = (store, path)
    times: dict[str, list[float]] = {k: [] for k in stores}
    names = list(stores)
    for r in range(6):
        for name in names if r % 2 else reversed(names):
            store, path = stores[name]
            with store.SQLiteStore(path) as db:
                t0 = time.perf_counter()
                db.open("c")
                times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def compare_stateless(
    packages: dict[str, Any], where: str, questions: list[str], rounds: int
) -> dict[str, list[float]]:
    """Seconds of each stateless request on the SQLite fixture `where`, per package: every
    question asked of both, in alternating order, `rounds` times."""
    stores = {k: importlib.import_module(p.__name__ + ".store") for k, p in packages.items()}
    live = f"live-ab-{os.getpid()}"  # the run's own conversation, as bench-stateless's
    for module in stores.values():  # not counted: the conversation made, the processes warm
        bench_stateless.request("sqlite", where, live, questions[0], module)
    times: dict[str, list[float]] = {k: [] for k in stores}
    names = list(stores)
    for r in range(rounds):
        for i, question in enumerate(questions):
            for name in names if (r + i) % 2 else reversed(names):
                times[name].append(
                    bench_stateless.request("sqlite", where, live, question, stores[name])
                )
    return times


def compare_assembly(packages: dict[str, Any], where: str) -> dict[str, float]:
    """Median seconds to assemble the bench user's segments, as the SQLite file `where` keeps
    them, per package (each decodes them once first)."""
    with sqlite3.connect(where) as db:
        rows = db.execute(
            "SELECT seg, data FROM recall_segments WHERE user_id = ? ORDER BY seg",
            (bench_stateless.USER,),
        ).fetchall()
    assembled: dict[str, tuple[Any, list[Any]]] = {}
    for name, package in packages.items():
        saved = importlib.import_module(package.__name__ + ".store._user_saved")
        index = importlib.import_module(package.__name__ + ".store._user_index")
        tokens = importlib.import_module(package.__name__ + "._text.tokens")
        # The tokenizer and gap a store's recall gives a user's index (the pieces carry both).
        gap = max(1, package.Tuning().context_width)
        ui = index.UserIndex(bench_stateless.USER, tokens.shared_tokenizer(None), gap)
        assembled[name] = (saved.Parts, [(n, saved.load_segment(ui, d)) for n, d in rows])
    times: dict[str, list[float]] = {k: [] for k in assembled}
    names = list(assembled)
    for r in range(10):
        for name in names if r % 2 else reversed(names):
            parts, segments = assembled[name]
            t0 = time.perf_counter()
            parts.of(segments)
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _stateless(args: argparse.Namespace, packages: dict[str, Any]) -> int:
    if not Path(args.data).is_file():
        return missing("python -m eval ab-revision", args.data, LONGMEMEVAL)
    asked = [q for _h, q in bench_stateless.histories(Path(args.data))][: args.questions]
    times = compare_stateless(packages, args.stateless, asked, args.rounds)
    print(f"stateless requests on {args.stateless}, {len(asked)} questions x {args.rounds} "
          f"rounds alternated (ms):")  # fmt: skip
    for name, seen in times.items():
        ordered = sorted(seen)
        p95 = ordered[round(0.95 * (len(ordered) - 1))]
        print(f"{name}: p50 {statistics.median(seen) * 1e3:.1f}, mean "
              f"{statistics.mean(seen) * 1e3:.1f}, p95 {p95 * 1e3:.1f}")  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval ab-revision", description=__doc__)
    parser.add_argument("rev", help="git revision to compare against (e.g. d712674)")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, help="rounds (default 1,000; 4 with --stateless)")
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--cold", type=int, default=0, help="histories for the cold path")
    parser.add_argument("--reopen", type=int, default=0, help="turns for reopening")
    parser.add_argument("--stateless", help="a bench-stateless SQLite fixture to request on")
    parser.add_argument("--data", default=str(bench_stateless.DEFAULT_DATA),
                        help="LongMemEval JSON (.gz): --stateless's questions")  # fmt: skip
    parser.add_argument("--questions", type=int, default=30, help="--stateless's questions")
    parser.add_argument("--assemble", help="a bench-stateless SQLite fixture to assemble")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 4 if args.stateless else 1_000
    if args.turns < 0 or args.rounds < 2:
        parser.error("--turns must be >= 0 and --rounds >= 2")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            other = load_revision(args.rev, Path(tmp))
        except subprocess.CalledProcessError as exc:
            parser.error(f"git archive {args.rev}: {exc.stderr.decode().strip()}")
        packages = {args.rev: other, "this checkout": yait_byheart}
        if args.stateless:
            return _stateless(args, packages)
        if args.assemble:
            took = compare_assembly(packages, args.assemble)
            base_ms, this_ms = took[args.rev] * 1e3, took["this checkout"] * 1e3
            print(f"assembling the segments of {args.assemble}, 10 times alternated, medians: "
                  f"{args.rev} {base_ms:.2f} ms, this checkout {this_ms:.2f} ms, ratio "
                  f"{this_ms / base_ms:.2f}x")  # fmt: skip
            return 0
        if args.reopen > 0:
            opened = compare_reopen(packages, args.reopen, args.budget, Path(tmp))
            base_s, this_s = opened[args.rev], opened["this checkout"]
            print(f"reopening {args.reopen:,} turns from SQLite, 6 opens alternated, medians: "
                  f"{args.rev} {base_s:.3f} s, this checkout {this_s:.3f} s, ratio "
                  f"{this_s / base_s:.2f}x")  # fmt: skip
            return 0
        if args.cold > 0:
            classes = {args.rev: other.Memory, "this checkout": yait_byheart.Memory}
            cold = compare_cold(classes, args.cold, args.budget)
            base_ms, this_ms = cold[args.rev] * 1e3, cold["this checkout"] * 1e3
            print(f"cold path, {args.cold} histories alternated, CPU medians: {args.rev} "
                  f"{base_ms:.1f} ms, this checkout {this_ms:.1f} ms, ratio "
                  f"{this_ms / base_ms:.2f}x")  # fmt: skip
            return 0
        memories = {
            args.rev: other.Memory(budget=args.budget),
            "this checkout": yait_byheart.Memory(budget=args.budget),
        }
        medians = compare(memories, args.turns, args.rounds)
    base, this = medians[args.rev], medians["this checkout"]
    print(f"{args.turns:,} turns, {args.rounds} rounds alternated, medians of the last half:")
    for op, unit, scale in (("append", "µs", 1e6), ("compose", "ms", 1e3)):
        print(
            f"{op}: {args.rev} {base[op] * scale:.3f} {unit}, this checkout "
            f"{this[op] * scale:.3f} {unit}, ratio {this[op] / base[op]:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
