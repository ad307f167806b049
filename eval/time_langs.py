"""Relative dates per language: share of cases resolved exactly, and negatives annotated.

    python -m eval time-langs            # golden files and the held-out-style set
    python -m eval time-langs --misses tests/data/time/extra/heldout.json

Reads case files (lists of {"text", "when", "expected"}; a case whose expected equals its text
is a negative: nothing may be inserted) and prints, per file and per language tag, how many
come back exactly as expected and how many negatives gained an annotation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yait_byheart._dates.resolve import resolve_time

ROOT = Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT = [
    *sorted((ROOT / "time").glob("*.json")),
    *sorted((ROOT / "time" / "extra").glob("*.json")),
]


def score(path: Path) -> tuple[int, int, int, int, list[str]]:
    """(cases, exact, negatives, negatives annotated, misses) for one case file."""
    cases = json.loads(path.read_text(encoding="utf-8"))
    exact = negatives = spoiled = 0
    misses = []
    for case in cases:
        got = resolve_time(case["text"], case["when"])
        negative = case["text"] == case["expected"]
        negatives += negative
        if got == case["expected"]:
            exact += 1
        else:
            spoiled += negative
            misses.append(
                f"    {case['text']!r}\n      got  {got!r}\n      want {case['expected']!r}"
            )
    return len(cases), exact, negatives, spoiled, misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--misses", action="store_true", help="print every case missed")
    args = parser.parse_args(argv)
    print(f"{'file':<28} {'cases':>6} {'exact':>7} {'negatives':>10} {'annotated':>10}")
    for path in args.files:
        n, exact, negatives, spoiled, misses = score(path)
        name = f"{path.parent.name}/{path.name}"
        print(f"{name:<28} {n:6d} {exact / n:7.1%} {negatives:10d} {spoiled:10d}")
        if args.misses:
            print("\n".join(misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
