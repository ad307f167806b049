"""Retrieval ablations on the LoCoMo dev file: byheart only, each row one `Tuning` override.

    python -m eval ablate                          # the table, fresh regime
    python -m eval ablate --regimes fresh sticky   # both regimes (docs/benchmarks.md)
    python -m eval ablate --rows kept "kept, no date boost" --budgets 4000

A row is a named set of `yait_byheart.Tuning` field overrides (`dataclasses.replace` of the
defaults), run through the LoCoMo harness's byheart system as `Memory(tuning=...)`; nothing in
the library is patched. Each cell is evidence recall over categories 1-4 / multi-hop (category
1) evidence recall (answer-token recall over categories 1-4).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import ANSWERABLE, Conversation, load
from eval.locomo.offline import Scored, Spec, run
from eval.locomo.systems import Byheart
from eval.sources import locomo_missing
from yait_byheart import Tuning

VARIANTS: dict[str, dict[str, Any]] = {
    # At 4,000 a budget holds about 20 stretches (`Tuning.stretches_per_budget`), so the
    # 300-character rows are 200 characters there; rows with stretches_per_budget 0 keep
    # their named size at every budget (the cap would make them all 200 at 4,000).
    "900-char stretches, scored alone (before)": {
        "stretch_share": 1.0,
        "context_weight": 0.0,
        "stretches_per_budget": 0.0,
    },
    "900-char stretches + neighbours 1/2": {"stretch_share": 1.0, "stretches_per_budget": 0.0},
    "300-char stretches, scored alone": {"context_weight": 0.0},
    "300-char stretches + neighbours 1/2": {"stretches_per_budget": 0.0},
    "300-char stretches + neighbours 1/2, 200 at 4,000 (kept)": {},
    "300-char stretches + neighbours 1/2, 1/4 (width 2)": {"context_width": 2},
    "300-char stretches + neighbours 3/4": {"context_weight": 1.5},
    "150-char stretches + neighbours, width 2": {
        "stretch_share": 1 / 6,
        "context_width": 2,
        "stretches_per_budget": 0.0,
    },
    # Rows below start from the kept stretches; the date boost (1.25) is on unless said.
    "kept, no date boost": {"date_boost": 0.0},
    "kept + date boost 1.25 for when-questions (kept)": {},
    "kept + date boost 1.5": {"date_boost": 0.5},
    "kept + date boost 2.0": {"date_boost": 1.0},
    # The tokenizer rows (no stemmer, no stop words) are not Tuning fields: see
    # docs/benchmarks.md "Retrieval ablations" for their last figures.
    "kept, drop query terms in > 50 % of stretches": {"common_share": 0.5},
    "kept, drop query terms in > 20 % of stretches": {"common_share": 0.2},
    # Rule 3's strong join (Tuning.strong_join, kept 0.75): off, and the 0.5 that was dropped.
    "kept, no strong join": {"strong_join": 1.0},
    "kept, long turns cut only at the cap": {"cut_over": 0.0},
    "kept, 300-char stretches at every budget": {"stretches_per_budget": 0.0},
    "kept, strong join at 0.5 of the best": {"strong_join": 0.5},
    # Finer stretches: a stretch may close at either speaker's turn, and 40 fit a budget (one
    # turn each at 4,000, one or two at 8,000; 20,000 keeps 300), smoothed over more neighbours.
    "kept, stretches close at any turn, 40 per budget": {
        "close_at_any_turn": True,
        "stretches_per_budget": 40.0,
    },
    "kept, stretches close at any turn, 40 per budget, neighbours to width 3": {
        "close_at_any_turn": True,
        "stretches_per_budget": 40.0,
        "context_width": 3,
    },
}
BUDGETS = (4_000, 8_000, 20_000)


def tuning_of(name: str) -> Tuning:
    """The `Tuning` of row `name`: the defaults with the row's overrides."""
    return dataclasses.replace(Tuning(), **VARIANTS[name])


def scored_row(data: str | Path, name: str, regime: str, budget: int) -> list[Scored]:
    """Every question of `data` scored for byheart with the tuning of row `name`."""
    return byheart_scored(load(data), regime, budget, tuning=tuning_of(name))


def byheart_scored(
    conversations: Sequence[Conversation],
    regime: str,
    budget: int,
    retriever: Callable[[], Any] | None = None,
    tuning: Tuning | None = None,
) -> list[Scored]:
    """Every question of `conversations` scored for byheart, with `retriever` and `tuning`."""
    make = partial(Byheart, budget=budget, regime=regime, retriever=retriever, tuning=tuning)
    return run([Spec("byheart", regime, budget, make)], conversations, progress=False)


def one(job: tuple[str, str, str, int]) -> tuple[str, str, int, float, float, float]:
    data, name, regime, budget = job
    scored = scored_row(data, name, regime, budget)
    return (name, regime, budget, *recall_means(scored))


def recall_means(scored: list[Scored]) -> tuple[float, float, float]:
    """Mean evidence recall over categories 1-4, over multi-hop, and answer-token recall."""
    ev = [s for s in scored if s.evidence_recall is not None]
    all_ = [s.evidence_recall or 0.0 for s in ev if s.question.category in ANSWERABLE]
    mh = [s.evidence_recall or 0.0 for s in ev if s.question.category == 1]
    ans = [
        s.answer_token_recall
        for s in scored
        if s.answer_token_recall is not None and s.question.category in ANSWERABLE
    ]
    return sum(all_) / len(all_), sum(mh) / len(mh), sum(ans) / len(ans)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", default=str(DEFAULT_DATA), help="LoCoMo JSON (default: the dev file)"
    )
    parser.add_argument("--regimes", nargs="*", choices=("fresh", "sticky"), default=["fresh"])
    parser.add_argument("--budgets", type=int, nargs="*", default=list(BUDGETS))
    parser.add_argument("--rows", nargs="*", default=list(VARIANTS), help="row names (all)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    unknown = [n for n in args.rows if n not in VARIANTS]
    if unknown:
        parser.error(f"--rows: unknown {unknown}; rows: {', '.join(VARIANTS)}")
    if not args.budgets or min(args.budgets) < 1:
        parser.error("--budgets: give one or more budgets >= 1")
    gone = locomo_missing("python -m eval ablate", args.data)
    if gone is not None:
        return gone
    jobs = [(args.data, n, r, b) for n in args.rows for r in args.regimes for b in args.budgets]
    cells: dict[tuple[str, str], list[str]] = {}
    with ProcessPoolExecutor(max(1, args.workers)) as ex:
        for name, regime, _budget, ev, mh, ans in ex.map(one, jobs):
            cells.setdefault((name, regime), []).append(f"{ev:.3f} / {mh:.3f} ({ans:.3f})")
    print("| variant | regime | " + " | ".join(f"{b:,}" for b in args.budgets) + " |")
    print("|---|---|" + "---:|" * len(args.budgets))
    for (name, regime), row in cells.items():
        print(f"| {name} | {regime} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
