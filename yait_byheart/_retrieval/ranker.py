"""Keeps the ranking's view of the closed stretches up to date and asks it for a query.

The built-in BM25 index is fed lazily: stretches closed since the last compose are indexed
by the next one (indexing at append made that append the median one, docs/benchmarks.md
"Speed"). A custom retriever is fitted once; one with `add` then gets only new stretches, one
with `remove` follows redactions, any other is fitted again after a change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .._text.tokens import Tokenizer
from .._turns.conversation import Conversation
from .._turns.settings import Tuning
from . import ranking as _ranking
from . import snapshot
from .bm25 import Index


class Ranker:
    """The index (or retriever) of a conversation's closed stretches."""

    def __init__(
        self, conv: Conversation, tuning: Tuning, tokenizer: Tokenizer, retriever: Any = None
    ) -> None:
        self.conv = conv
        self.tuning = tuning
        self.tokenizer = tokenizer
        self.counts = tokenizer.counts_of  # each of a stretch's texts read in its own language
        self.retriever = retriever
        self.index = Index()
        self.fed = -1  # stretches the retriever holds; -1 before its first fit

    def sync(self) -> None:
        """Index the stretches closed since the last call that needed the index."""
        conv, index = self.conv, self.index
        for uid in range(len(index), len(conv.starts)):
            index.add(uid, self.counts(conv.stretch_bodies(uid)))

    def terms(self, query: str) -> list[str]:
        """The query's terms, in the reading whose terms the conversation holds the largest
        share of (a short question may not say which language it is in)."""
        readings = self.tokenizer.readings(query)
        if len(readings) <= 1:
            return readings[0] if readings else []
        self.sync()
        rarest = self.index.rarest
        return max(readings, key=lambda r: len(rarest(r, len(r))) / max(1, len(set(r))))

    def exact_k(self) -> int:
        """How many stretches are scored exactly: more than fit, so that skipping a few that do
        not fit still leaves the next best exact."""
        shape = self.conv.shape
        return 8 + shape.budget // shape.stretch_size

    def ranked(self, query: str) -> Iterator[tuple[int, float]]:
        """Closed stretches best first, each with its weight (0 for the recency top-up)."""
        n = len(self.conv.starts)
        if n == 0:
            return iter(())
        if self.retriever is not None:
            return self._retrieved(query, n)
        self.sync()
        return _ranking.bm25_ranked(
            self.index, self.terms(query), n, self.exact_k(), self.tuning, self.conv.dated,
            _ranking.asks_when(query),
        )  # fmt: skip

    def _retrieved(self, query: str, n: int) -> Iterator[tuple[int, float]]:
        self._feed(n)
        scores = getattr(self.retriever, "scores", None)
        if callable(scores):
            return _ranking.scored_ranked(scores(query), n, self.tuning)
        return _ranking.rank_weighted(self.retriever.rank(query), n, self.tuning)

    def _feed(self, n: int) -> None:
        retriever, conv = self.retriever, self.conv
        if self.fed == n:
            return
        if self.fed >= 0 and self.fed < n and callable(getattr(retriever, "add", None)):
            retriever.add([conv.stretch_text(k) for k in range(self.fed, n)])
        else:
            retriever.fit([conv.stretch_text(k) for k in range(n)])
        self.fed = n

    def forget(self, stretches: list[int]) -> None:
        """Before a redaction changes `stretches`: take their old text out."""
        self.sync()
        for uid in stretches:
            self.index.remove(uid, self.counts(self.conv.stretch_bodies(uid)))

    def restore(self, stretches: list[int]) -> None:
        """After a redaction changed `stretches`: put their new text in."""
        for uid in stretches:
            self.index.add(uid, self.counts(self.conv.stretch_bodies(uid)))
        retriever = self.retriever
        if retriever is None or self.fed < 0:
            return
        fed = [k for k in stretches if k < self.fed]
        if (
            fed
            and callable(getattr(retriever, "remove", None))
            and callable(getattr(retriever, "add", None))
        ):
            retriever.remove(fed)
            kept = [k for k in fed if self.conv.stretch_sizes[k] > 0]
            if kept:
                retriever.add([self.conv.stretch_text(k) for k in kept], ids=kept)
        elif fed:
            self.fed = -1  # fitted again, whole, by the next compose

    def dump_snapshot(self) -> bytes:
        """The index of every closed stretch as bytes (see `_snapshot`)."""
        self.sync()
        return snapshot.dump(self.conv, self.index, self.tokenizer.snapshot_id)

    def load_snapshot(self, data: bytes) -> int:
        """Take the index from `data` if it was built from exactly these stretches by this
        tokenizer; how many stretches it supplied (0: ignored, they are indexed anew)."""
        index = snapshot.load(self.conv, data, self.tokenizer.snapshot_id)
        if index is None:
            return 0
        self.index = index
        return len(index)
