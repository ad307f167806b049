"""Fuzz and speed check for resolve_time (a script, not a test).

    python -m eval fuzz-time            # 100 KB vs 1 MB adversarial texts, random Unicode, turns
    python -m eval fuzz-time --quick    # 10 KB vs 100 KB, fewer random strings

Every phrase pattern must run in linear time. For each adversarial text the
script times resolve_time on a small and a 10x larger copy and prints the
ratio: linear is about 10x; a pattern that backtracks catastrophically shows
100x or never returns. It then feeds random Unicode (lone surrogates included)
and reports the per-call cost of a typical 100-character turn, the case that
runs on every append. Exit status 1 when a ratio exceeds 30 or a call raises.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from yait_byheart._dates.resolve import resolve_time

WHEN = "1:56 pm on 25 May, 2023"
RATIO_LIMIT = 30.0

# Each unit is repeated to the target size: near-misses that make the
# pattern start, advance and back up at almost every position.
ADVERSARIAL: dict[str, str] = {
    "last (no unit)": "last ",
    "last week (all match)": "last week ",
    "last + long spaces": "last" + " " * 997 + "x",
    "nbsp/tab runs": "last\u00a0\t \u00a0week\t\t\t\u00a0",
    "a couple of a couple": "a couple of ",
    "a few a few": "a few ",
    "in a few in a few": "in a few ",
    "the day before the day": "the day before the ",
    "digits 1,1,1": "1,",
    "dashes 2-2-2": "2-",
    "days days ago": "days ",
    "ago ago": "ago ",
    "in N days, future cue": "it's in 3 days ",
    "in N days, no cue": "xx in 3 days ",
    "in N days, long clause": "word " * 30 + "in 3 days. ",
    "last Sat lower/upper": "last sat last Sat ",
    "already annotated": "last week [15-21 May 2023] ",
    "brackets": "[[[[ last ]]]] ",
    "apostrophes": "last week's ''''' ",
    "no keyword at all": "the quick brown fox jumps over the lazy dog ",
    # Other languages and the newer English phrases (yait_byheart/_dates/lang/).
    "over the weekend (past)": "We went out over the weekend ",
    "over the weekend, no stop": "over the weekend went ",
    "the Friday before": "the Friday before the Friday before last ",
    "in a fortnight": "in a fortnight in a ",
    "last summer/Christmas": "last summer last Christmas this fall ",
    "de: vor vor Tagen": "vor vor zwei Tagen gestern Morgen ",
    "de: letzte letzte": "letzte letzten nächste Woche ",
    "fr: il y a il y a": "il y a il y a trois jours hier ",
    "es: hace hace": "hace hace dos días mañana por la mañana ",
    "es: en en": "lo hice en en tres días ",
    "ru: назад": "три три дня назад вчера ",
    "ru: через": "через через неделю на прошлой ",
    "zh: 前天前天": "之前天前天上周五上上个月",
    "zh: digits": "一二三四五六七八九十天前",
    "ja: 日前": "先週の先週の金曜日3日前",
    "it: fa fa": "tre tre giorni fa fa ieri sera quest'",
    "pt: há atrás": "há há dois dias atrás daqui a daqui ",
    "cjk digits": "１２３４５６７８９０日前",
    "latin vote words": "der die das le la el los ich je yo ",
    "keyword soup": (
        "this past coming next last the day week weekend month year ago from now "
        "today tonight yesterday tomorrow night morning "
    ),
}


def _sized(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _best_ms(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _random_unicode(rng: random.Random, size: int) -> str:
    # Mostly BMP with some astral planes and surrogates: every code point is
    # a possible input to a str function.
    chars = []
    for _ in range(size):
        r = rng.random()
        if r < 0.5:
            chars.append(chr(rng.randrange(0x20, 0x7F)))  # ASCII, so keywords can appear
        elif r < 0.9:
            chars.append(chr(rng.randrange(0x80, 0x10000)))
        else:
            chars.append(chr(rng.randrange(0x10000, 0x110000)))
    return "".join(chars)


def _soup(rng: random.Random, size: int) -> str:
    words = [
        "last", "this", "next", "past", "coming", "the", "a", "in", "of", "ago", "from",
        "now", "today", "tonight", "yesterday", "tomorrow", "day", "days", "week", "weeks",
        "weekend", "month", "months", "year", "years", "night", "morning", "few", "couple",
        "two", "3", "it's", "built", "Fri", "Sat", "sat", "Saturday", "[", "]", "-", ",", ".",
    ]  # fmt: skip
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(words)
        out.append(w)
        out.append(rng.choice(" \t\u00a0\n"))
        n += len(w) + 1
    return "".join(out)[:size]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 KB vs 100 KB")
    parser.add_argument("--size", type=int, default=0, help="small text size in chars (10x)")
    parser.add_argument("--random", type=int, default=0, help="random strings of each kind")
    parser.add_argument("--calls", type=int, default=20_000, help="calls per per-append timing")
    args = parser.parse_args(argv)
    small = args.size or (10_000 if args.quick else 100_000)
    large = 10 * small
    n_random = args.random or (2_000 if args.quick else 20_000)
    if min(small, n_random, args.calls) < 1:
        parser.error("--size, --random and --calls must be >= 1")
    worst = 0.0
    failed = False

    print(f"resolve_time, anchor {WHEN!r}: {small:,} vs {large:,} characters")
    print(f"{'text':<28} {'small ms':>9} {'large ms':>9} {'ratio':>6} {'notes':>8}")
    rng = random.Random(20230525)
    for name, unit in [*ADVERSARIAL.items(), ("phrase soup", ""), ("random unicode", "")]:
        # Random texts: the large one is the small one 10 times, so both take
        # the same path (a keyword that the pre-check sees in 1 MB of random
        # text but not in 100 KB would time two different things).
        if name == "phrase soup":
            s_text = _soup(rng, small)
            l_text = s_text * (large // small)
        elif name == "random unicode":
            s_text = _random_unicode(rng, small)
            l_text = s_text * (large // small)
        else:
            s_text, l_text = _sized(unit, small), _sized(unit, large)
        t_small = _best_ms(lambda s=s_text: resolve_time(s, WHEN), 3)  # type: ignore[misc]
        t_large = _best_ms(lambda s=l_text: resolve_time(s, WHEN), 2)  # type: ignore[misc]
        out = resolve_time(l_text, WHEN)
        notes = out.count(" [") - l_text.count(" [")
        ratio = t_large / max(t_small, 1e-6)
        worst = max(worst, ratio)
        flag = "  <-- not linear" if ratio > RATIO_LIMIT else ""
        print(f"{name:<28} {t_small:9.2f} {t_large:9.2f} {ratio:6.1f} {notes:8d}{flag}")

    # Random Unicode strings of turn size: must never raise.
    strings = [_random_unicode(rng, rng.randrange(0, 400)) for _ in range(n_random)]
    strings += [_soup(rng, rng.randrange(0, 400)) for _ in range(n_random)]
    t0 = time.perf_counter()
    for s in strings:
        try:
            resolve_time(s, WHEN)
        except Exception as exc:  # report every kind: the contract is "never raises"
            print(f"RAISED {type(exc).__name__}: {exc} on {s!r}")
            failed = True
            break
    elapsed = time.perf_counter() - t0
    print(
        f"\n{len(strings):,} random strings (Unicode and phrase soup, 0-400 chars): "
        f"{'no exception' if not failed else 'FAILED'}, {elapsed * 1e6 / len(strings):.1f} us/call"
    )

    # The per-append cost: a typical 100-character turn.
    hey = "Hey Mel! Great to hear from you. "
    turns = {
        "100 chars, no date word": hey + "I've been painting a lot and trying new colors, so fun.",
        "100 chars, 'birthday'": hey + "I went to a birthday party and it was amazing, so fun.",
        "100 chars, 'this' only": hey + "This is the painting I did, it was amazing, so much fun",
        "100 chars, one phrase": hey + "I ran a race last Saturday and it was amazing, so fun.",
        "100 chars, non-ASCII": "Héllo Mél! Great to hear from you. Très bien, à bientôt, ça va?",
        "100 chars, German phrase": "Hallo Mel! Schön, von dir zu hören. Gestern war ich im Kino.",
        "100 chars, Chinese phrase": "你好。很高兴收到你的消息。我昨天去了公园。天气很好。",
    }
    print()
    for name, turn in turns.items():
        per_call = []
        for _ in range(7):
            n = args.calls
            t0 = time.perf_counter()
            for _ in range(n):
                resolve_time(turn, WHEN)
            per_call.append((time.perf_counter() - t0) / n * 1e6)
        print(
            f"{name:<28} median {statistics.median(per_call):6.2f} us, "
            f"best {min(per_call):6.2f} us per call"
        )

    print(f"\nworst large/small ratio: {worst:.1f} (limit {RATIO_LIMIT:.0f}; linear is ~10)")
    return 1 if failed or worst > RATIO_LIMIT else 0


if __name__ == "__main__":
    raise SystemExit(main())
