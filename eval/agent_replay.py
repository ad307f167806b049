"""Agent transcripts with large tool results, replayed live and billed as a provider would.

    python -m eval agent-replay                       # 20 histories, budgets 4000 8000 20000
    python -m eval agent-replay --histories 5 --budgets 8000

Each LongMemEval history (``--data``, default the development copy) becomes an agent's
transcript: for every session, the user's first turn is a request; the assistant calls a
tool (``read_notes``) whose result is that session's other turns as one text, its length
drawn uniformly from 2,000 to 20,000 characters (``--min-result``, ``--max-result``; text
from the sessions after it fills a short one); the assistant then replies with the session's
first reply. The data is read at run time, never copied.

A model call is a compose: ``compose(request)`` before the request is appended, and
``compose()`` after the tool result (the model reads it and answers). Every call is billed
by ``eval/locomo/live.py``'s ``Ledger`` (Anthropic-style and by an automatic longest-prefix
cache), tool parts counted with the text, for the sticky context and for the fresh selection
(``stability=0``), whose characters are what sending it uncached bills.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from eval.locomo.live import Ledger
from eval.longmemeval import data
from eval.longmemeval.cli import DEFAULT_DATA, missing_data_line
from eval.longmemeval.cli import PROG as LME_PROG
from eval.tunings import tuning_of

PROG = "python -m eval agent-replay"
REGIMES = ("sticky", "fresh")

Step = tuple[str, Any]  # ("ask", text) | ("call", id) | ("result", (id, text)) | ("reply", text)


def transcript(entry: data.Entry, rng: random.Random, low: int, high: int) -> list[Step]:
    """One history as an agent's steps (module docstring)."""
    sessions = [[t for t in s if str(t.get("content", "")).strip()] for s in
                entry["haystack_sessions"]]  # fmt: skip
    sessions = [s for s in sessions if len(s) >= 2 and s[0].get("role") == "user"]
    steps: list[Step] = []
    for k, session in enumerate(sessions):
        request = str(session[0]["content"])
        reply = next((str(t["content"]) for t in session if t.get("role") == "assistant"), "")
        size = rng.randint(low, high)
        body = "\n".join(str(t["content"]) for t in session[1:])
        for later in sessions[k + 1 :]:
            if len(body) >= size:
                break
            body += "\n" + "\n".join(str(t["content"]) for t in later)
        call = f"call_{k}"
        steps += [("ask", request), ("call", call), ("result", (call, body[:size])),
                  ("reply", reply)]  # fmt: skip
    return steps


def replay(steps: Sequence[Step], budget: int, regime: str, tuning: Any = None) -> Ledger:
    """The transcript composed live (a call before each request and after each result);
    `tuning` (a `yait_byheart.Tuning`) for the sticky context's experiments."""
    from yait_byheart import Memory

    settings: dict[str, Any] = {"stability": 0} if regime == "fresh" else {}
    if tuning is not None:
        settings["tuning"] = tuning
    mem = Memory(budget=budget, **settings)
    ledger = Ledger()
    limit = mem.ceiling * budget
    for kind, value in steps:
        if kind == "ask":
            if len(value) <= limit:
                ledger.add(dict(mem.compose(value)))
            mem.append("user", value)
        elif kind == "call":
            part = {"type": "tool_call", "id": value, "name": "read_notes", "arguments": "{}"}
            mem.append_message({"role": "assistant", "parts": [part]})
        elif kind == "result":
            part = {"type": "tool_result", "id": value[0], "output": value[1]}
            mem.append_message({"role": "user", "parts": [part]})
            ledger.add(dict(mem.compose()))
        else:
            mem.append("assistant", value)
    return ledger


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LongMemEval JSON (gzip ok)")
    p.add_argument("--histories", type=int, default=20, help="histories replayed (default 20)")
    p.add_argument("--budgets", type=int, nargs="+", default=[4000, 8000, 20000])
    p.add_argument("--min-result", type=int, default=2_000, help="shortest tool result")
    p.add_argument("--max-result", type=int, default=20_000, help="longest tool result")
    p.add_argument("--seed", type=int, default=0, help="seed of the result lengths")
    p.add_argument("--json", type=Path, default=None, metavar="PATH", help="write the rows here")
    p.add_argument(
        "--tuning", action="append", default=[], metavar="NAME=VALUE",
        help="a yait_byheart.Tuning field (repeatable), e.g. send_uncached=0",
    )  # fmt: skip
    return p


def rows(
    histories: Sequence[list[Step]], budgets: Sequence[int], tuning: Any = None
) -> Iterator[dict[str, Any]]:
    """One row per budget and regime: every history's ledgers merged."""
    for budget in budgets:
        for regime in REGIMES:
            total = Ledger()
            for steps in histories:
                total.merge(replay(steps, budget, regime, tuning))
            yield {"budget": budget, "regime": regime, **total.summary()}


def table(out: Sequence[dict[str, Any]]) -> str:
    heads = ["budget", "regime", "calls", "prefix reused", "billed/call", "longest-prefix/call",
             "sent/call", "x fresh uncached", "lp x fresh lp"]  # fmt: skip
    lines = [heads]
    for r in out:
        fresh = next(f for f in out if f["budget"] == r["budget"] and f["regime"] == "fresh")
        lines.append([
            f"{r['budget']:,}", r["regime"], f"{r['calls']:,}", f"{100 * r['hit_rate']:.1f} %",
            f"{r['billed_per_call']:,.0f}", f"{r['longest_prefix_per_call']:,.0f}",
            f"{r['mean_chars']:,.0f}", f"{r['billed_per_call'] / fresh['mean_chars']:.3f}",
            f"{r['longest_prefix_per_call'] / fresh['longest_prefix_per_call']:.3f}",
        ])  # fmt: skip
    widths = [max(len(row[c]) for row in lines) for c in range(len(heads))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
                     for row in lines)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        entries = data.load(args.data)
    except FileNotFoundError:
        print(missing_data_line(args.data).replace(LME_PROG, PROG, 1), file=sys.stderr)
        return 2
    try:
        tuning = tuning_of(args.tuning)
    except (TypeError, ValueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    rng = random.Random(args.seed)
    chosen = [e for e in entries if not data.is_abstention(e)][: args.histories]
    histories = [transcript(e, rng, args.min_result, args.max_result) for e in chosen]
    out = list(rows(histories, sorted(set(args.budgets)), tuning))
    print(f"{PROG} {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    print(f"{len(histories)} histories, {sum(len(h) // 4 for h in histories):,} tool rounds")
    print(table(out))
    print(f"\n{time.perf_counter() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
