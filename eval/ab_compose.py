"""The live loop of this checkout against another revision's, in one process, call by call.

    python eval/ab_compose.py --against f1ea260            # 10,000 turns
    python eval/ab_compose.py --against f1ea260 --turns 100000

bench_live.py's numbers move with the machine (its calibration loop has measured 0.11-0.21 s
for the same work), so a change's cost is measured here instead: the other revision's package is
loaded beside this one under another name, both get the same generated conversation, and each
timed step composes with one then the other, the order swapped every step. A step is bench_live's
(append the user's turn, compose with it, append the reply); only compose is timed.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yait_byheart
from eval.ab_head import git
from eval.bench_live import Talk


def package_at(revision: str, into: Path) -> Any:
    """yait_byheart as it was at `revision`, importable as `yait_byheart_other`."""
    names = git("ls-tree", "-r", "--name-only", revision, "yait_byheart/").split()
    for name in names:
        if name.endswith(".py"):
            target = into / "yait_byheart_other" / Path(name).relative_to("yait_byheart")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(git("show", f"{revision}:{name}"))
    sys.path.insert(0, str(into))
    return importlib.import_module("yait_byheart_other")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="git revision to compare with")
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--timed", type=int, default=500, help="steps timed at the end")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        other = package_at(args.against, Path(tmp))
        mems = {
            "other": other.Memory(budget=args.budget),
            "this": yait_byheart.Memory(budget=args.budget),
        }
        talk, day, step = Talk(), 0, 0
        times: dict[str, list[float]] = {"other": [], "this": []}
        differ = 0
        while len(mems["this"]) < args.turns:
            composing = len(mems["this"]) >= args.turns - 4 * args.timed
            timing = len(mems["this"]) >= args.turns - 2 * args.timed
            when = f"{1 + day % 28} May 2023"
            day += len(mems["this"]) % 40 == 0
            user, reply = talk.turn(), talk.turn()
            order = ("other", "this") if step % 2 == 0 else ("this", "other")
            step += 1
            results = {}
            for name in order:
                mem = mems[name]
                mem.append("user", user, when=when)
                if composing:
                    t0 = time.perf_counter()
                    results[name] = mem.compose(user)
                    if timing:
                        times[name].append(time.perf_counter() - t0)
                mem.append("assistant", reply, when=when)
            if timing and results["this"]["included"] != results["other"]["included"]:
                differ += 1
    o, n = times["other"], times["this"]
    print(
        f"{args.turns:,} turns, budget {args.budget:,}, {len(n)} composes each; "
        f"{differ} of them sent different turns in the two revisions"
    )
    print(f"| | {args.against} | this checkout | this / other |")
    print("|---|---:|---:|---:|")
    for label, f in (("median", statistics.median), ("mean", statistics.mean)):
        print(f"| {label} | {f(o) * 1e3:.3f} ms | {f(n) * 1e3:.3f} ms | {f(n) / f(o):.2f}x |")


if __name__ == "__main__":
    main()
