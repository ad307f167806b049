"""Live-loop speed and size: append the user's turn, compose, append the reply, forever.

    python -m eval bench-live                 # 1k, 10k and 100k turns, budget 20,000
    python -m eval bench-live --turns 10000   # one size

For each size it appends the history, composes for the last 1,000 user turns (the first 500
warm the sticky selection up), times the last 500 user turns (append, compose, append) and
reports median and p95 per call, and the peak memory of the whole process (maximum resident set
size). The text is generated here (a Zipf-distributed
vocabulary of made-up words with English function words), so the run needs no data.

It then checks the floors of issue 19 and prints PASS or FAIL for each: compose median at most
1.5 ms at 10,000 turns and 5 ms at 100,000, append median at most 50 µs, peak memory under
300 MB. Exit status 1 when a floor measured in this run fails.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time
from collections.abc import Sequence

from yait_byheart import Memory

FUNCTION_WORDS = "the a to and of I you it is in that we for was on with my so but do".split()
SYLLABLES = "ka lo mi ne su ra to vi de po shi an el or ul im bar fen gor tus".split()


def vocabulary(rng: random.Random, size: int = 5_000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class Talk:
    """Turns of 60-240 characters: Zipf content words mixed with function words."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.weights = [1.0 / (rank + 1) for rank in range(len(self.words))]

    def turn(self) -> str:
        n = self.rng.randint(10, 40)
        content = self.rng.choices(self.words, self.weights, k=n)
        out = [w if self.rng.random() < 0.6 else self.rng.choice(FUNCTION_WORDS) for w in content]
        return " ".join(out).capitalize() + "."


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(turns: int, budget: int, timed: int) -> dict[str, float]:
    talk = Talk()

    mem = Memory(budget=budget)
    day = 0
    appends: list[float] = []
    composes: list[float] = []
    while len(mem) < turns:
        # The history before the last 4 x `timed` turns is appended without composing: how
        # fast early calls were does not matter, and the warm-up calls settle the sticky state.
        composing = len(mem) >= turns - 4 * timed
        timing = len(mem) >= turns - 2 * timed
        when = f"{1 + day % 28} May 2023"
        day += len(mem) % 40 == 0
        user, reply = talk.turn(), talk.turn()
        t0 = time.perf_counter()
        mem.append("user", user, when=when)
        t1 = time.perf_counter()
        if composing:
            mem.compose(user)
        t2 = time.perf_counter()
        mem.append("assistant", reply, when=when)
        t3 = time.perf_counter()
        if timing:
            appends += [t1 - t0, t3 - t2]
            composes.append(t2 - t1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    return {
        "turns": turns,
        "append_median_us": statistics.median(appends) * 1e6,
        "append_p95_us": percentile(appends, 0.95) * 1e6,
        "compose_median_ms": statistics.median(composes) * 1e3,
        "compose_p95_ms": percentile(composes, 0.95) * 1e3,
        "peak_mb": peak / 2**20,
        "reselects": mem.stats["reselects"],
    }


# Issue 19's floors: (turns the floor applies to, or 0 for every size; result key; limit).
FLOORS: tuple[tuple[int, str, float], ...] = (
    (10_000, "compose_median_ms", 1.5),
    (100_000, "compose_median_ms", 5.0),
    (0, "append_median_us", 50.0),
    (0, "peak_mb", 300.0),
)


def verdicts(results: Sequence[dict[str, float]]) -> list[tuple[str, bool]]:
    """One (line, passed) per floor that this run measured; sizes not run are not judged."""
    out = []
    for turns, key, limit in FLOORS:
        for r in results:
            if turns and r["turns"] != turns:
                continue
            value = r[key]
            # Peak memory is a strict bound ("under 300 MB"); the times are "at most".
            ok = value < limit if key == "peak_mb" else value <= limit
            line = f"{key} at {int(r['turns']):,} turns: {value:.2f} (limit {limit:g})"
            out.append((line, ok))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--timed", type=int, default=500, help="user turns timed at the end")
    args = parser.parse_args(argv)
    if args.timed < 1 or any(n < 2 for n in args.turns):
        parser.error("--timed must be >= 1 and every --turns >= 2")
    print(f"budget {args.budget:,} characters; last {args.timed} user turns timed", flush=True)
    # The same code runs up to ~2x slower on a busy or throttled shared machine: a fixed loop,
    # timed before and after, says how fast this machine was during the run.
    print(f"calibration before: {calibrate():.3f} s for 3 million loop additions", flush=True)
    print("| turns | append median | append p95 | compose median | compose p95 | peak memory |")
    print("|---:|---:|---:|---:|---:|---:|")
    results = []
    for n in args.turns:
        r = run(n, args.budget, args.timed)
        results.append(r)
        print(
            f"| {n:,} | {r['append_median_us']:.1f} µs | {r['append_p95_us']:.1f} µs "
            f"| {r['compose_median_ms']:.2f} ms | {r['compose_p95_ms']:.2f} ms "
            f"| {r['peak_mb']:.0f} MB |",
            flush=True,
        )
    print(f"calibration after: {calibrate():.3f} s for 3 million loop additions", flush=True)
    by_size = {int(r["turns"]): r for r in results}
    if 10_000 in by_size and 100_000 in by_size:
        ratio = by_size[100_000]["compose_median_ms"] / by_size[10_000]["compose_median_ms"]
        print(f"compose median, 100,000 / 10,000 turns in this run: {ratio:.2f}x (floors: 3.33x)")
    judged = verdicts(results)
    for line, ok in judged:
        print(f"{'PASS' if ok else 'FAIL'}  {line}")
    return 0 if all(ok for _, ok in judged) else 1


def calibrate() -> float:
    t0 = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i
    return time.perf_counter() - t0


if __name__ == "__main__":
    raise SystemExit(main())
