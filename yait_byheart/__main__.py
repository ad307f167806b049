"""Command line: `python -m yait_byheart demo` shows compose at work on a shipped conversation."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from importlib import resources
from typing import Any

from .memory import Memory
from .protocols import ComposeResult


def load_demo() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        resources.files("yait_byheart").joinpath("data/demo.json").read_text(encoding="utf-8")
    )
    return data


def show(result: ComposeResult, width: int) -> str:
    out = [
        f"mode={result['mode']}  sent {result['chars']:,} chars  "
        f"stretches {result['selected']} of {result['of_units']}  "
        f"reselected={result['reselected']}  turns included {result['included']}",
    ]
    for i, m in enumerate(result["messages"]):
        text = m["parts"][0]["text"]
        body = "\n".join(
            textwrap.fill(line, width, subsequent_indent="    ") or line
            for line in text.splitlines()
        )
        out.append(f"--- message {i}, {m['role']} ---\n{body}")
        if i == result["stable_upto"]:
            out.append(
                f"=== cache breakpoint (stable_upto={i}): everything above repeats on the "
                "next call ==="
            )
    return "\n".join(out)


def demo(budget: int, width: int) -> None:
    data = load_demo()
    mem = Memory(budget=budget, chunk=budget // 4)
    for turn in data["turns"]:
        mem.append(turn["role"], turn["text"], when=turn["when"])
    print(f"{data['title']}: {len(mem)} turns, budget {budget:,} characters\n")
    for question in data["questions"]:
        print(f"### compose({question!r})")
        print(show(mem.compose(question), width))
        print()
    print("stats:", mem.stats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m yait_byheart", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("demo", help="replay a short shipped conversation and show what is sent")
    d.add_argument("--budget", type=int, default=1_200, help="characters (default 1,200)")
    d.add_argument("--width", type=int, default=100, help="wrap printed text at this width")
    args = parser.parse_args(argv)
    if args.command == "demo":
        demo(args.budget, args.width)
    return 0


if __name__ == "__main__":
    sys.exit(main())
