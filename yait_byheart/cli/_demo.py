"""`byheart demo`: compose at work on a conversation shipped with the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, TextIO

from ..memory import Memory
from ..providers._show import messages_text, summary_line


def load_demo() -> dict[str, Any]:
    """The shipped demo conversation: title, turns (role, text, when) and questions."""
    data: dict[str, Any] = json.loads(
        resources.files("yait_byheart").joinpath("data/demo.json").read_text(encoding="utf-8")
    )
    return data


def budget_note(budget: int, ceiling: float) -> str:
    """Why "sent" can exceed the budget, in the demo's words.

    >>> print(budget_note(1_200, 4.0))
    The budget is what a rebuilt selection aims for, not a cap: between rebuilds the kept
    context grows above it, up to ceiling x budget = 4,800 characters, so the provider's
    prompt cache stays warm. "sent" can therefore exceed the budget.
    <BLANKLINE>
    """
    return (
        "The budget is what a rebuilt selection aims for, not a cap: between rebuilds the kept\n"
        f"context grows above it, up to ceiling x budget = {int(ceiling * budget):,} characters,"
        ' so the provider\'s\nprompt cache stays warm. "sent" can therefore exceed the budget.\n'
    )


def demo(budget: int, width: int, out: TextIO) -> None:
    """Replay the demo at `budget` characters and print what each question's compose sends."""
    data = load_demo()
    mem = Memory(budget=budget, chunk=max(1, budget // 4))
    for turn in data["turns"]:
        mem.append(turn["role"], turn["text"], when=turn["when"])
    print(f"{data['title']}: {len(mem)} turns, budget {budget:,} characters", file=out)
    print(budget_note(budget, mem.ceiling), file=out)
    for question in data["questions"]:
        result = mem.compose(question)
        print(f"### compose({question!r})", file=out)
        print(summary_line(result), file=out)
        if result["size"] > budget:
            print(
                "(sent is above the budget: the kept context grew to keep the cache warm)", file=out
            )
        print(
            messages_text(result["messages"], width=width, stable_upto=result["stable_upto"]),
            file=out,
        )
        print(file=out)
    print("stats:", mem.stats, file=out)
