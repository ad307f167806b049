"""Fuzz and speed check for the tokenizer (a script, not a test).

    python -m eval fuzz-tokens            # 100 KB vs 1 MB of adversarial text, each kind
    python -m eval fuzz-tokens --quick    # 10 KB vs 100 KB

For each kind of adversarial text (any code point, long runs of combining marks, stacked
Devanagari conjuncts with joiners, emoji sequences, right-to-left and zero-width marks, mixed
scripts without spaces, stop words of several languages) it times tokenize on a small and a
10x larger text and prints the ratio: linear is about 10x. Exit status 1 when a ratio exceeds
30 or a call raises.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from yait_byheart._text.tokens import Tokenizer

RATIO_LIMIT = 30.0


def _kinds(rng: random.Random) -> dict[str, Callable[[], str]]:
    return {
        "any code point": lambda: "".join(
            chr(rng.randrange(0x20, 0x3_0000)) for _ in range(rng.randrange(1, 40))
        ),
        "combining run": lambda: "a" + "\u0301" * rng.randrange(1, 3000),
        "conjuncts": lambda: "क" + "्\u200dष" * rng.randrange(1, 200),
        "emoji": lambda: "👩🏽\u200d💻🇫🇷❤️" * rng.randrange(1, 20),
        "bidi marks": lambda: "\u200fمرحبا\u200e\u202eabc\u202c\u2067ok\u2069",
        "no spaces": lambda: "我在Berlin住了三年สวัสดีครับ한국어를" * rng.randrange(1, 5),
        "invisible": lambda: "\u200b\ufeff\u00ad" * rng.randrange(1, 50) + " Straße ",
        "stop words": lambda: " ".join(
            rng.choice(["the", "die", "и", "في", "का", "de", "la"]) for _ in range(30)
        ),
    }


def adversarial(size: int, seed: int, kinds: list[str] | None = None) -> str:
    """`size` characters of the given kinds of adversarial text (all kinds by default)."""
    rng = random.Random(seed)
    table = _kinds(rng)
    makers = [table[k] for k in (kinds or list(table))]
    out: list[str] = []
    n = 0
    while n < size:
        piece = rng.choice(makers)() + rng.choice([" ", "\n", "", ".", "\u3000"])
        out.append(piece)
        n += len(piece)
    return "".join(out)[:size]


def _seconds(text: str) -> float:
    start = time.perf_counter()
    Tokenizer().tokenize(text)  # a fresh tokenizer: nothing cached from the other size
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval fuzz-tokens", description=__doc__)
    p.add_argument("--quick", action="store_true", help="10 KB vs 100 KB")
    args = p.parse_args(argv)
    small = 10_000 if args.quick else 100_000
    failed = False
    print("| kind | small | 10x | ratio |\n|---|---:|---:|---:|")
    for kind in [*_kinds(random.Random(0)), "all"]:
        kinds = None if kind == "all" else [kind]
        try:
            t1 = _seconds(adversarial(small, 1, kinds))
            t10 = _seconds(adversarial(10 * small, 1, kinds))
        except Exception as exc:
            print(f"| {kind} | raised {exc!r} | | |")
            failed = True
            continue
        ratio = t10 / max(t1, 1e-9)
        failed |= ratio > RATIO_LIMIT
        print(f"| {kind} | {t1 * 1e3:.1f} ms | {t10 * 1e3:.1f} ms | {ratio:.1f}x |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
