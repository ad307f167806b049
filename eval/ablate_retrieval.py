"""Retrieval ablations on the LoCoMo dev file: byheart only, each row one retrieval setting.

    PYTHONPATH=. python eval/ablate_retrieval.py                     # the table, fresh regime
    PYTHONPATH=. python eval/ablate_retrieval.py --regimes fresh sticky

Rows switch `yait_byheart._retrieval.SETTINGS` (no code edits between runs); each cell is
evidence recall over categories 1-4, with multi-hop (category 1) after the slash.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.locomo.cli import DEFAULT_DATA
from eval.locomo.data import ANSWERABLE, Conversation, load
from eval.locomo.offline import Scored, Spec, run
from eval.locomo.systems import Byheart
from yait_byheart import _lang, _retrieval, _stem, _tokens, memory
from yait_byheart._render import Turn
from yait_byheart.bm25 import Index

VARIANTS: dict[str, dict[str, Any]] = {
    # At 4,000 a budget holds about 20 stretches (`Settings.stretches_per_budget`), so the
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
    "kept, no stemmer": {"_tokens": "nostem"},
    "kept, no stop words": {"_tokens": "nostop"},
    "kept, drop query terms in > 50 % of stretches": {"_common_share": 0.5},
    "kept, drop query terms in > 20 % of stretches": {"_common_share": 0.2},
    # Rule 3's strong join (memory.STRONG_JOIN, kept 0.75): off, and the 0.5 that was dropped.
    "kept, no strong join": {"_strong_join": 1.0},
    "kept, strong join at 0.5 of the best": {"_strong_join": 0.5},
    # Finer stretches: a stretch may close at either speaker's turn, and 40 fit a budget (one
    # turn each at 4,000, one or two at 8,000; 20,000 keeps 300), smoothed over more neighbours.
    "kept, stretches close at any turn, 40 per budget": {
        "_any_turn": True,
        "stretches_per_budget": 40.0,
    },
    "kept, stretches close at any turn, 40 per budget, neighbours to width 3": {
        "_any_turn": True,
        "stretches_per_budget": 40.0,
        "context_width": 3,
    },
}
BUDGETS = (4_000, 8_000, 20_000)


def _switch_tokens(how: str) -> None:
    """Tokenizer rows: index without the stemmer ("nostem") or the stop words ("nostop");
    "" restores both. The word cache is emptied either way, as a worker runs several rows."""
    stem = (lambda word: word) if how == "nostem" else _STEM
    stop = frozenset() if how == "nostop" else _STOP
    _lang.READERS["en"] = (lambda word: "" if word in stop else stem(word)) if how else _EN
    _tokens.clear_cache()


_STEM, _STOP, _EN = _stem.stem, _tokens.STOP_WORDS, _lang.READERS["en"]
_RAREST = Index.rarest
_STRONG_JOIN = memory.STRONG_JOIN
_CLOSES = memory.Memory._closes_stretch


def _switch_selection(common_share: float) -> None:
    """A dropped row, patched here rather than kept as a switch in the library: drop query
    terms (but the rarest) found in more than `common_share` of the stretches. 1.0 restores
    the library's behaviour."""

    def rarest(index: Index, terms: Iterable[str], n: int) -> list[str]:
        kept = _RAREST(index, terms, n)
        limit = common_share * len(index)
        return kept[:1] + [t for t in kept[1:] if len(index._postings[t]) <= limit]

    Index.rarest = rarest if common_share < 1.0 else _RAREST  # type: ignore[method-assign,assignment]


def _switch_closing(any_turn: bool) -> None:
    """A dropped row: a stretch closes at the first turn of either speaker once it is long
    enough (the library waits for a user turn). False restores the library's rule."""

    def closes(mem: memory.Memory, turn: Turn, size: int) -> bool:
        if mem._open_start == len(mem._turns):
            return False
        if mem._open_size + size > mem.budget * memory.MAX_UNIT_SHARE:
            return True
        return mem._open_size >= mem._unit_limit

    memory.Memory._closes_stretch = closes if any_turn else _CLOSES  # type: ignore[method-assign,assignment]


def scored_row(data: str | Path, name: str, regime: str, budget: int) -> list[Scored]:
    """Every question of `data` scored for byheart with the settings of row `name`."""
    changes = dict(VARIANTS[name])
    _switch_tokens(changes.pop("_tokens", ""))
    _switch_selection(changes.pop("_common_share", 1.0))
    memory.STRONG_JOIN = changes.pop("_strong_join", _STRONG_JOIN)
    _switch_closing(changes.pop("_any_turn", False))
    with _retrieval.using(**changes):
        return byheart_scored(load(data), regime, budget)


def byheart_scored(
    conversations: Sequence[Conversation],
    regime: str,
    budget: int,
    retriever: Callable[[], Any] | None = None,
) -> list[Scored]:
    """Every question of `conversations` scored for byheart, with `retriever` if given."""
    make = partial(Byheart, budget=budget, regime=regime, retriever=retriever)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", default=str(DEFAULT_DATA), help="LoCoMo JSON (default: the dev file)"
    )
    parser.add_argument("--regimes", nargs="*", default=["fresh"])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    jobs = [(args.data, n, r, b) for n in VARIANTS for r in args.regimes for b in BUDGETS]
    cells: dict[tuple[str, str], list[str]] = {}
    with ProcessPoolExecutor(args.workers) as ex:
        for name, regime, _budget, ev, mh, ans in ex.map(one, jobs):
            cells.setdefault((name, regime), []).append(f"{ev:.3f} / {mh:.3f} ({ans:.3f})")
    print("| variant | regime | 4,000 | 8,000 | 20,000 |")
    print("|---|---|---:|---:|---:|")
    for (name, regime), row in cells.items():
        print(f"| {name} | {regime} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
