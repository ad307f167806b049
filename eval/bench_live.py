"""Live-loop speed and size: append the user's turn, compose, append the reply, forever.

    python eval/bench_live.py                 # 1k, 10k and 100k turns, budget 20,000
    python eval/bench_live.py --turns 10000   # one size

For each size it appends the history, composes for the last 1,000 user turns (the first 500
warm the sticky selection up), times the last 500 user turns (append, compose, append) and
reports median and p95 per call, and the peak memory of the whole process (maximum resident set
size). The text is generated here (a Zipf-distributed
vocabulary of made-up words with English function words), so the run needs no data.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--timed", type=int, default=500, help="user turns timed at the end")
    args = parser.parse_args()
    print(f"budget {args.budget:,} characters; last {args.timed} user turns timed", flush=True)
    # The same code runs up to ~2x slower on a busy or throttled shared machine: a fixed loop,
    # timed before and after, says how fast this machine was during the run.
    print(f"calibration before: {calibrate():.3f} s for 3 million loop additions", flush=True)
    print("| turns | append median | append p95 | compose median | compose p95 | peak memory |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.turns:
        r = run(n, args.budget, args.timed)
        print(
            f"| {n:,} | {r['append_median_us']:.1f} µs | {r['append_p95_us']:.1f} µs "
            f"| {r['compose_median_ms']:.2f} ms | {r['compose_p95_ms']:.2f} ms "
            f"| {r['peak_mb']:.0f} MB |",
            flush=True,
        )
    print(f"calibration after: {calibrate():.3f} s for 3 million loop additions", flush=True)


def calibrate() -> float:
    t0 = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
