"""The tuning of retrieval, selection and the sticky context, as one frozen value.

Every field's default is the measured best; the evidence for each is in docs/benchmarks.md
(the section named in the field's comment). Experiments pass a changed copy to `Memory(tuning=)`
(`python -m eval ablate` sweeps them); nothing here is process-wide state.

>>> Tuning().strong_join, Tuning(strong_join=0.5).strong_join
(0.75, 0.5)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Tuning:
    """Constants of the selection rules, for experiments; the defaults are measured.

    Each attribute's docstring names the section of docs/benchmarks.md that measured it.
    Every value must be a finite number >= 0 (ValueError otherwise).
    """

    stretch_share: float = 1 / 3
    """A stretch closes at this share of `chunk` ("Retrieval ablations")."""
    stretches_per_budget: float = 20.0
    """... or at the latest at budget / stretches_per_budget; 0 turns that off ("Retrieval
    ablations")."""
    cut_over: float = 2.0
    """A turn longer than this many stretch sizes is cut into pieces of about one; 0 cuts only
    turns that would pass the cap ("Long replies")."""
    max_stretch_share: float = 0.5
    """A stretch never takes more than this share of the budget, so at least two always fit."""
    close_at_any_turn: bool = False
    """A stretch may close at either speaker's turn (dropped: "Retrieval ablations")."""
    context_weight: float = 1.0
    """Neighbours within `context_width` get context_weight / 2 of a stretch's score
    ("Retrieval ablations")."""
    context_width: int = 1
    """How many stretches on each side count as neighbours ("Retrieval ablations")."""
    date_boost: float = 0.25
    """For "when" questions, stretches carrying a resolved date score (1 + date_boost) times
    more."""
    query_terms: int = 8
    """A query keeps only its rarest terms, this many ("Speed")."""
    common_share: float = 1.0
    """Query terms in more than this share of the stretches are dropped; 1 keeps all (dropped)."""
    shared_score: float = 0.65
    """Coverage counts scores above this share of the weakest chosen one's ("Live replay")."""
    strong_join: float = 0.75
    """A missing stretch scoring this share of the best always joins ("Live replay")."""
    rank_offset: int = 10
    """A rank-only retriever's rank r weighs (rank_offset + 1) / (rank_offset + r + 1) before
    it is fused ("A custom retriever")."""
    rank_fusion: bool = False
    """Fuse a retriever's signal by reciprocal rank instead of CombSUM (docs/semantic.md,
    "Fusion")."""
    recency_fill_scan: int = 200
    """Zero-score stretches (newest first) that may top up a selection."""
    misfits: int = 32
    """A selection stops after this many stretches in a row too large for the room ("Speed")."""
    cache_write: float = 1.25
    """Price of a cache write relative to uncached input (docs/prompt-cache.md)."""
    cache_read: float = 0.10
    """Price of a cache read relative to uncached input (docs/prompt-cache.md)."""
    mean_over_budget: float = 2.0
    """A kept context may grow to (2 x mean_over_budget - 1) x budget ("Live replay")."""
    fresh_floor: bool = False
    """The fresh selection's stretches a kept context lacks are sent after it, uncached
    (docs/prompt-cache.md, rule 5)."""
    hold_long_replies: bool = False
    """An experiment: a long reply (cut into pieces) is sent after the kept context, uncached,
    while it is the newest exchange, and carried by its pieces once older (docs/prompt-cache.md,
    "hold back long replies"). Off: it bills more on LongMemEval ("Chats with long replies")."""
    send_uncached: bool = False
    """A rebuild whose cycle of kept calls costs more per call than sending it uncached is
    sent uncached and not kept, and a trimmed compose unmarked (docs/prompt-cache.md, rule 6):
    for caches that bill a write premium and cache only where marked (Anthropic). Off: an
    automatic cache bills agent transcripts more with it ("Chats with long replies")."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"Tuning: {f.name}={value!r}; use a finite number >= 0")
