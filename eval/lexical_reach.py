"""How much of LoCoMo's evidence a lexical ranker can reach at all, and how much byheart takes.

    python eval/lexical_reach.py                      # dev file, budgets 4,000 8,000 20,000
    python eval/lexical_reach.py --budgets 8000 --data PATH

An evidence turn is *reachable in its own words* when it shares a content-word stem (byheart's
tokenizer: stop words dropped, Porter stems) with the question, and *reachable through its
context* when a turn within `CONTEXT` turns of it does: byheart scores a stretch with half of each
neighbour's score, and a 300-character stretch and its two neighbours span about five turns.
The speakers' names do not count as shared words: LoCoMo writes "Name: " before every turn, so
a name matches every turn its speaker said and says nothing about the content.

Part 1, per category, question-averaged like evidence recall: the share of each question's
evidence that is reachable. Part 2: byheart's fresh selection at each budget, over evidence
turns, split by reach: a better lexical ranking could still win what the reachable rows
miss; an unreachable turn is sent only when it happens to sit in a stretch sent for other
words, or in the recent talk. Part 3: byheart's evidence recall beside an ideal lexical
ranker's (every reachable turn sent, unreachable ones at byheart's rate) and issue 5's goal,
and the share of the reachable evidence byheart sends against the share the goal needs (both
with the unreachable evidence sent at byheart's rate).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import ANSWERABLE, CATEGORY_NAMES, Conversation, load
from eval.locomo.systems import Byheart
from yait_byheart._tokens import tokenize

CONTEXT = 2  # turns on either side
REACH = ("own words", "context only", "unreachable")
ALL, MULTI_HOP = "all (1-4)", f"{CATEGORY_NAMES[1]} (1)"
GOALS: dict[tuple[int | str, int], float] = {
    ("all", 4_000): 0.80,
    ("all", 8_000): 0.87,
    ("all", 20_000): 0.93,
    (1, 20_000): 0.80,
}


def content_stems(text: str, names: frozenset[str]) -> frozenset[str]:
    """The stems byheart would index for `text`, without the speakers' names.

    >>> sorted(content_stems("Ada: I went swimming with Ada's kids", frozenset({"ada"})))
    ['kid', 'swim', 'went']
    """
    return frozenset(tokenize(text)) - names


def reach(question: str, texts: Sequence[str], evidence: int, names: frozenset[str]) -> str:
    """How turn `evidence` of `texts` can be reached from `question`: one of `REACH`.

    >>> talk = ["Ada: Any plans?", "Ben: I bought a kayak.", "Ada: Where to paddle?", "Ben: Lakes."]
    >>> names = frozenset({"ada", "ben"})
    >>> [reach("Where did Ben paddle?", talk, i, names) for i in (2, 3)]
    ['own words', 'context only']
    >>> reach("What did Ben buy for Ada?", talk, 1, names)
    'unreachable'
    """
    wanted = content_stems(question, names)
    if wanted & content_stems(texts[evidence], names):
        return REACH[0]
    near = range(max(0, evidence - CONTEXT), min(len(texts), evidence + CONTEXT + 1))
    if any(wanted & content_stems(texts[i], names) for i in near):
        return REACH[1]
    return REACH[2]


def speaker_names(conv: Conversation) -> frozenset[str]:
    return frozenset(tokenize(f"{conv.speaker_a} {conv.speaker_b}"))


def question_reach(conversations: Sequence[Conversation]) -> dict[int | str, list[float]]:
    """Per category (and "all"): [questions, own-words share, own-or-context share], averaged
    over questions like evidence recall."""
    sums: dict[int | str, list[float]] = {}
    for conv in conversations:
        names, texts = speaker_names(conv), [t.text for t in conv.turns]
        for q in conv.questions:
            if q.category not in ANSWERABLE or not q.evidence:
                continue
            kinds = [reach(q.question, texts, conv.index_of[d], names) for d in q.evidence]
            own = kinds.count(REACH[0]) / len(kinds)
            near = own + kinds.count(REACH[1]) / len(kinds)
            for key in (q.category, "all"):
                row = sums.setdefault(key, [0.0, 0.0, 0.0])
                row[0] += 1
                row[1] += own
                row[2] += near
    return {k: [n, own / n, near / n] for k, (n, own, near) in sums.items()}


def taken_by_reach(
    conversations: Sequence[Conversation], budget: int
) -> tuple[dict[tuple[str, str], tuple[int, int]], dict[str, float]]:
    """Evidence turns of each (questions, reach kind), questions "all (1-4)" or "multi-hop (1)":
    (how many, how many byheart's fresh compose sent); and byheart's evidence recall for each
    questions group."""
    counts: dict[tuple[str, str], list[int]] = {}
    recall: dict[str, list[float]] = {}
    for conv in conversations:
        names, texts = speaker_names(conv), [t.text for t in conv.turns]
        system = Byheart(budget=budget, regime="fresh")
        system.build(conv.turns)
        for q in conv.questions:
            if q.category not in ANSWERABLE or not q.evidence:
                continue
            sent = set(system.compose(q.question).included)
            groups = [ALL] + ([MULTI_HOP] if q.category == 1 else [])
            found = len({conv.index_of[d] for d in q.evidence} & sent) / len(q.evidence)
            for group in groups:
                recall.setdefault(group, []).append(found)
            for d in q.evidence:
                turn = conv.index_of[d]
                kind = reach(q.question, texts, turn, names)
                for group in groups:
                    row = counts.setdefault((group, kind), [0, 0])
                    row[0] += 1
                    row[1] += turn in sent
    taken = {k: (n, got) for k, (n, got) in counts.items()}
    return taken, {group: sum(v) / len(v) for group, v in recall.items()}


def ideal_lexical(reachable: float, unreachable_rate: float) -> float:
    """About the evidence recall of a ranker that sends every reachable evidence turn and the
    unreachable ones at `unreachable_rate` (byheart's own rate: they only fall in by chance).

    >>> round(ideal_lexical(0.9, 0.2), 3)
    0.92
    """
    return reachable + (1.0 - reachable) * unreachable_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--budgets", type=int, nargs="+", default=[4000, 8000, 20000])
    args = parser.parse_args()
    conversations = load(args.data)

    print(f"Reachable evidence per question (context: {CONTEXT} turns either side)\n")
    print("| category | questions | in its own words | own words or context |")
    print("|---|---:|---:|---:|")
    rows = question_reach(conversations)
    keys: list[int | str] = [*sorted(k for k in rows if isinstance(k, int)), "all"]
    for key in keys:
        n, own, near = rows[key]
        label = f"{CATEGORY_NAMES[key]} ({key})" if isinstance(key, int) else ALL
        print(f"| {label} | {int(n):,} | {own:.3f} | {near:.3f} |")

    print("\nEvidence turns byheart sends (fresh), by reach\n")
    print("| questions | reach | turns | " + " | ".join(f"{b:,}" for b in args.budgets) + " |")
    print("|---|---|---:|" + "---:|" * len(args.budgets))
    runs = {b: taken_by_reach(conversations, b) for b in args.budgets}
    taken = {b: run[0] for b, run in runs.items()}
    for group in (ALL, MULTI_HOP):
        for kind in REACH:
            n = taken[args.budgets[0]].get((group, kind), (0, 0))[0]
            cells = " | ".join(
                f"{taken[b][(group, kind)][1] / n:.3f}" if n else "-" for b in args.budgets
            )
            print(f"| {group} | {kind} | {n:,} | {cells} |")

    print("\nEvidence recall (fresh) against an ideal lexical ranker\n")
    print(
        "| questions | budget | byheart | ideal lexical ranker | issue 5 goal "
        "| reachable share sent | reachable share the goal needs |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for group, category in ((ALL, "all"), (MULTI_HOP, 1)):
        reachable = rows[category][2]
        for b in args.budgets:
            n, got = taken[b][(group, REACH[2])]
            chance = (1.0 - reachable) * got / n
            recall, goal = runs[b][1][group], GOALS.get((category, b))
            figures = [
                f"{recall:.3f}",
                f"{ideal_lexical(reachable, got / n):.3f}",
                f"{goal:.2f}" if goal else "-",
                f"{100 * (recall - chance) / reachable:.1f} %",
                f"{100 * (goal - chance) / reachable:.1f} %" if goal else "-",
            ]
            print(f"| {group} | {b:,} | " + " | ".join(figures) + " |")


if __name__ == "__main__":
    main()
