"""Past tool rounds in an agent loop: sent as native call/result parts, or as text.

    python -m eval agent-rounds                        # budgets 24,000 and 60,000
    python -m eval agent-rounds --budgets 24000 --requests 12 --seed 3

A scripted agent loop (no model): each request is a user question, then one to four tool
rounds (an assistant call, a user result of 2,000 to 20,000 characters), then an answer.
`Memory.compose()` runs before every model call, and each past round in what it sends is
counted once per compose, by how its call travels:

- native: a `tool_call` part (its result a `tool_result` part);
- text, memory: a `[tool call ...]` line inside a selected stretch ("[from earlier ...]");
- text, entry: a `[tool call ...]` line sent as the conversation's own entry (a cut turn),
  split by whether the round (its call and result lines) fits the budget.

A round that fits the budget but travels as an entry in text is what issue 43 names; memory
(a stretch chosen for the question) is text by design, and a round over the budget is cut.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from yait_byheart import Memory
from yait_byheart._turns.render import MEMORY_MARKER, tool_line

PROG = "python -m eval agent-rounds"
WORDS = (
    "invoice ledger shard replica latency region quota cache eviction batch window retry "
    "backoff cursor offset partition schema column index vacuum checkpoint snapshot"
).split()


def filler(rng: random.Random, size: int) -> str:
    """About `size` characters of sentences (a tool's long output)."""
    out: list[str] = []
    total = 0
    while total < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + ". "
        out.append(sentence)
        total += len(sentence)
    return "".join(out)[:size]


CALL_LINE = re.compile(r"\[tool call (c\d+):")


def count_rounds(
    messages: list[dict[str, Any]], counts: Counter[str], fits: dict[str, bool]
) -> None:
    """Add each call in `messages` to `counts` by how it travels (`fits`: whether each call's
    round fits the budget)."""
    for message in messages:
        for part in message["parts"]:
            if part["type"] == "tool_call":
                counts["native"] += 1
            elif part["type"] == "text":
                ids = CALL_LINE.findall(part["text"])
                if part["text"].startswith(MEMORY_MARKER):
                    counts["text, memory"] += len(ids)
                    continue
                for call in ids:
                    counts["text, entry, fits" if fits[call] else "text, entry, over"] += 1


def run(budget: int, requests: int, seed: int) -> Counter[str]:
    """The loop at `budget`; the counts over all its composes."""
    rng = random.Random(seed)
    mem = Memory(budget=budget)
    counts: Counter[str] = Counter()
    fits: dict[str, bool] = {}
    for r in range(requests):
        mem.append("user", f"request {r}: look up the {rng.choice(WORDS)} figures")
        for _ in range(rng.randint(1, 4)):
            count_rounds(mem.compose()["messages"], counts, fits)
            counts["composes"] += 1
            cid = f"c{len(fits) + 1}"
            call = {"type": "tool_call", "id": cid, "name": "lookup",
                    "arguments": json.dumps({"n": len(fits) + 1})}  # fmt: skip
            mem.append_message({"role": "assistant", "parts": [call]})
            output = filler(rng, rng.randint(2_000, 20_000))
            mem.append_message({"role": "user", "parts": [
                {"type": "tool_result", "id": cid, "output": output}]})  # fmt: skip
            fits[cid] = len(tool_line(call)) + len(output) + 40 <= budget  # with its tool lines
        count_rounds(mem.compose()["messages"], counts, fits)
        counts["composes"] += 1
        mem.append("assistant", f"answer {r}: the figures are in.")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[24_000, 60_000])
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)
    print("| budget | composes | native | text, entry: round fits | text, entry: round over "
          "the budget | text, in memory |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    for budget in args.budgets:
        c = run(budget, args.requests, args.seed)
        print(
            f"| {budget:,} | {c['composes']} | {c['native']} | {c['text, entry, fits']} "
            f"| {c['text, entry, over']} | {c['text, memory']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
