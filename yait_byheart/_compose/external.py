"""Rule 4: outside material arrives last, and only when it beats the conversation itself.

Candidates from the `external` callable are scored in one BM25 index with the conversation's
stretches and admitted only if they outscore the best stretch: a comparison, not a threshold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._retrieval.bm25 import Index
from .._turns.render import render_external

External = Callable[[str], Sequence[dict[str, Any]]]


@dataclass(frozen=True)
class Admission:
    """How much room outside material may take, as shares of the budget."""

    margin: float
    share: float
    most: float


def check_candidates(found: object) -> list[tuple[str, str]]:
    """Validate what an `external` callable returned: a list of {"text", "source"} dicts."""
    call = "Memory(external=...)"
    if isinstance(found, (str, bytes)) or not isinstance(found, Sequence):
        raise TypeError(
            f"{call}: external(query) must return a list of "
            f"{{'text': str, 'source': str}} dicts, got {type(found).__name__}"
        )
    out = []
    for i, item in enumerate(found):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise TypeError(
                f"{call}: item {i} of external(query) must be a dict with a str "
                "'text' (and optionally a str 'source')"
            )
        source = item.get("source", "")
        if not isinstance(source, str):
            raise TypeError(f"{call}: item {i}'s 'source' must be a str")
        if item["text"].strip():
            out.append((item["text"], source))
    return out


def admit(
    candidates: list[tuple[str, str]], query_terms: list[str], index: Index,
    counts: Callable[[str], list[str]], rule: Admission, budget: int, limit: int,
    measure: Callable[[str], int],
) -> tuple[str, list[str]]:  # fmt: skip
    """The admitted material as one message and its sources ("" and [] if none wins).

    The room grows from `share` to `most` of the budget with how decisively the best candidate
    beats the best stretch; it never passes `limit` (what the hard size limit leaves).
    """
    if not candidates or limit <= 0:
        return "", []
    extra = [Counter(counts(text)) for text, _ in candidates]
    unit_scores, ext_scores = index.scores(query_terms, extra)
    best_unit = max(unit_scores.values(), default=0.0)
    winners = sorted(
        (i for i, s in enumerate(ext_scores) if s > best_unit * (1 + rule.margin)),
        key=lambda i: -ext_scores[i],
    )
    if not winners or ext_scores[winners[0]] <= 0:
        return "", []
    lead = ext_scores[winners[0]]
    decisive = 1.0 if best_unit <= 0 else min(1.0, lead / best_unit - 1.0)
    share = rule.share + (rule.most - rule.share) * decisive
    room = min(int(budget * share), limit)
    chosen = _fit(candidates, winners, room, measure)
    text = render_external(chosen)
    while chosen and measure(text) > limit:  # the frame's own lines must fit too
        body, source = chosen[-1]
        chosen[-1] = (body[: len(body) // 2], source)
        if not chosen[-1][0]:
            chosen.pop()
        text = render_external(chosen) if chosen else ""
    return (text, [source for _, source in chosen]) if chosen else ("", [])


def _fit(
    candidates: list[tuple[str, str]], winners: list[int], room: int,
    measure: Callable[[str], int],
) -> list[tuple[str, str]]:  # fmt: skip
    chosen: list[tuple[str, str]] = []
    left = room
    for i in winners:
        text, source = candidates[i]
        size = measure(text)
        if size <= left:
            chosen.append((text, source))
            left -= size
    if not chosen:
        text, source = candidates[winners[0]]
        # Outside material is not the conversation: it may be cut to its room.
        cut = max(1, len(text) * max(room, 1) // max(measure(text), 1))
        chosen.append((text[:cut], source))
    return chosen
