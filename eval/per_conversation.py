"""Does the retrieval design's gain hold on every conversation, or ride on a few?

    python eval/per_conversation.py          # LoCoMo dev, fresh regime, about 20 s

Tuning on seven conversations can fit their quirks. This reruns two rows of the ablation table
(`eval/ablate_retrieval.py`), the starting design and the kept one, and prints fresh evidence
recall (categories 1-4) per conversation: a gain that shows on each of them separately is less
likely to vanish on conversations never looked at.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.ablate_retrieval import scored_row
from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import ANSWERABLE

BEFORE, KEPT = (
    "900-char stretches, scored alone (before)",
    "300-char stretches + neighbours 1/2, 200 at 4,000 (kept)",
)
BUDGETS = (4_000, 8_000, 20_000)


def recall_per_conversation(data: Path, variant: str, budget: int) -> dict[str, float]:
    scored = scored_row(data, variant, "fresh", budget)
    per: dict[str, list[float]] = {}
    for s in scored:
        if s.question.category in ANSWERABLE and s.evidence_recall is not None:
            per.setdefault(s.sample_id, []).append(s.evidence_recall)
    return {conv: sum(v) / len(v) for conv, v in per.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    table = {
        budget: (
            recall_per_conversation(args.data, BEFORE, budget),
            recall_per_conversation(args.data, KEPT, budget),
        )
        for budget in BUDGETS
    }
    convs = list(table[BUDGETS[0]][0])
    print("| budget | " + " | ".join(convs) + " | conversations improved |")
    print("|---:|" + "---:|" * (len(convs) + 1))
    for budget, (before, kept) in table.items():
        cells = " | ".join(f"{before[c]:.3f} -> {kept[c]:.3f}" for c in convs)
        better = sum(kept[c] > before[c] for c in convs)
        print(f"| {budget:,} | {cells} | {better} of {len(convs)} |")


if __name__ == "__main__":
    main()
