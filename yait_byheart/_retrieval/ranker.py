"""Keeps the ranking's view of the closed stretches up to date and asks it for a query.

The built-in BM25 index is fed lazily: stretches closed since the last compose are indexed
by the next one (indexing at append made that append the median one, docs/benchmarks.md
"Speed"). A second index holds only the user's words of each stretch, for questions about what
the user said (`ranking.asked_speaker`; docs/benchmarks.md, "LongMemEval"). A custom
retriever is fitted once; one with `add` then gets only new stretches, one
with `remove` follows redactions, any other is fitted again after a change. Its signal is
fused into the lexical ranking (`ranking.fused`), never put in its place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .._dates.resolve import parse_when
from .._dates.spans import asked_days, said_on, without_annotations
from .._text.tokens import Tokenizer
from .._turns.conversation import Conversation
from .._turns.settings import Tuning
from . import fusion, snapshot
from . import ranking as _ranking
from .bm25 import Index
from .checked import WHO, checked_rank, checked_scores

# The stretches a first sync indexes in one batch (the rest one by one): their term counts and
# postings lists are held until packed, a few megabytes for this many.
_BATCH = 4096


class Ranker:
    """The index (or retriever) of a conversation's closed stretches."""

    def __init__(
        self, conv: Conversation, tuning: Tuning, tokenizer: Tokenizer, retriever: Any = None,
        date_order: str | None = None,
    ) -> None:  # fmt: skip
        self.conv = conv
        self.date_order = date_order
        self.days: list[tuple[int, int]] = []  # each stretch's first and last day (ordinals)
        self.tuning = tuning
        self.tokenizer = tokenizer
        self.counts = tokenizer.counts_of  # each of a stretch's texts read in its own language
        self.retriever = retriever
        self.index = Index()
        self.user_index = Index()  # the user's words of each stretch that has some
        self.fed = -1  # stretches the retriever holds; -1 before its first fit

    def sync(self) -> None:
        """Index the stretches closed since the last call that needed the index."""
        first, n = len(self.index), len(self.conv.starts)
        if first >= n:
            return
        if first == 0:  # the first sync: indexed in batches (`Inverted.add_many`)
            first = self._add_batch(0, min(n, _BATCH))
        for uid, said in enumerate(self.conv.bodies_by_role(first, n), first):
            self._add_counts(uid, *self._merged(*map(self.counts, said)))

    def _add_batch(self, first: int, end: int) -> int:
        """Index stretches `first` to `end` in one batch each index; `end`."""
        counted = [self._merged(*map(self.counts, said))
                   for said in self.conv.bodies_by_role(first, end)]  # fmt: skip
        self.index.add_many((uid, every) for uid, (every, _) in enumerate(counted, first))
        self.user_index.add_many(
            (uid, user) for uid, (_, user) in enumerate(counted, first) if user
        )
        return end

    def _counts(self, uid: int) -> tuple[dict[str, int], dict[str, int]]:
        """Stretch `uid`'s term counts: all its words, and the user's alone."""
        (said,) = self.conv.bodies_by_role(uid, uid + 1)
        return self._merged(*map(self.counts, said))

    @staticmethod
    def _merged(
        user: dict[str, int], other: dict[str, int]
    ) -> tuple[dict[str, int], dict[str, int]]:
        """All of a stretch's term counts (the assistant's first), and the user's alone."""
        if not user:
            return other, user
        if not other:
            return user, user
        both = dict(other)
        for term, tf in user.items():
            both[term] = both.get(term, 0) + tf
        return both, user

    def _add(self, uid: int) -> None:
        self._add_counts(uid, *self._counts(uid))

    def _add_counts(self, uid: int, every: dict[str, int], user: dict[str, int]) -> None:
        self.index.add(uid, every)
        if user:
            self.user_index.add(uid, user)

    def _remove(self, uid: int) -> None:
        every, user = self._counts(uid)
        self.index.remove(uid, every)
        if uid in self.user_index:
            self.user_index.remove(uid, user)

    def terms(self, query: str) -> list[str]:
        """The query's terms, in the reading whose terms the conversation holds the largest
        share of (a short question may not say which language it is in). Its date
        annotations are not terms: `ranked` reads them as days."""
        readings = self.tokenizer.readings(without_annotations(query))
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
        index = self.index_for(query)
        spans = asked_days(query)
        other = None if self.retriever is None else self._retrieved(query, n, index)
        return _ranking.bm25_ranked(
            index, self.terms(query), n, self.exact_k(), self.tuning, self.conv.dated,
            _ranking.asks_when(query), self._in_spans(spans, n) if spans else None,
            other, float(getattr(self.retriever, "weight", 1.0)),
        )  # fmt: skip

    def index_for(self, query: str) -> Index:
        """The index a query is ranked in: the user's words for a question about them."""
        self.sync()
        if _ranking.asked_speaker(query) == "user" and len(self.user_index):
            return self.user_index  # the user's own words are the evidence
        return self.index

    def uncovered(self, query: str, held: set[int], among: list[int]) -> list[int]:
        """Of `among` (best first), for each of the query's distinctive terms that no stretch
        in `held` holds, the first stretch that holds it: what a kept context must add so no
        part of a question goes unanswered ("When does our flight leave, and which hotel did
        we book?")."""
        index = self.index_for(query)
        terms = _ranking.query_terms(index, self.terms(query), self.tuning)
        out: list[int] = []
        for term in terms:
            holders = index.holding(term)
            # A word more stretches hold than a selection weighs says little about where the
            # answer is: only rarer ones count as a part of the question.
            if len(holders) > self.exact_k() or any(uid in holders for uid in held):
                continue
            first = next((uid for uid in among if uid in holders), None)
            if first is not None and first not in out:
                out.append(first)
        return out

    def _in_spans(self, spans: list[tuple[int, int]], n: int) -> Callable[[int], bool]:
        """Whether a stretch was said on a day of `spans` (ordinal ranges)."""
        days = self.days
        for uid in range(len(days), n):
            days.append(self._days_of(uid))

        def said_then(uid: int) -> bool:
            return said_on(*days[uid], spans)

        return said_then

    def _days_of(self, uid: int) -> tuple[int, int]:
        """Stretch `uid`'s first and last day, from its turns' `when` ((1, 0): none known)."""
        conv = self.conv
        start, end = conv.stretch_range(uid)
        found = {conv.turns[e.turn].when for e in conv.entries[start:end]}
        ordinals = [
            d.toordinal() for d in (parse_when(w, self.date_order) for w in found if w) if d
        ]
        return (min(ordinals), max(ordinals)) if ordinals else (1, 0)

    def _retrieved(self, query: str, n: int, index: Index) -> dict[int, float]:
        """The retriever's stretches, scaled so the best weighs 1: by its scores, or by rank.
        Under a question about one speaker's words (`index` holds only theirs), a stretch
        without them is no evidence, as in the lexical ranking."""
        self._feed(n)
        words = without_annotations(query)  # its dates are read as days, not as words
        keep = index.__contains__ if len(index) < n else None
        return retrieved(self.retriever, words, n, self.tuning.rank_offset, keep)

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
            self._remove(uid)

    def restore(self, stretches: list[int]) -> None:
        """After a redaction changed `stretches`: put their new text in."""
        for uid in stretches:
            self._add(uid)
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
        return snapshot.dump(self.conv, self.index, self.user_index, self.tokenizer.snapshot_id)

    def load_snapshot(
        self, data: bytes | memoryview, checked: int = 0, intact: bool = False
    ) -> int:
        """Take the index from `data` if it was built from exactly these stretches by this
        tokenizer; how many stretches it supplied (0: ignored, they are indexed anew). The
        first `checked` entries are known to be the ones it was built from; `intact`: a
        checksum showed `data` to be the bytes written."""
        loaded = snapshot.load(self.conv, data, self.tokenizer.snapshot_id, checked, intact)
        if loaded is None:
            return 0
        self.index, self.user_index = loaded
        return len(self.index)


def retrieved(
    retriever: Any, words: str, n: int, rank_offset: int,
    keep: Callable[[int], bool] | None = None, who: str = WHO,
) -> dict[int, float]:  # fmt: skip
    """The stretches (ids below `n`) a retriever finds for `words`, scaled so the best weighs
    1: by its `scores`, or by its `rank` (`rank_offset` as `Tuning.rank_offset`). `keep`: which
    stretches may count (None: all); what the lexical ranking cannot hold is no evidence.
    `who`: the call the retriever was given to, named by an error in what it returns."""
    scores = getattr(retriever, "scores", None)
    if callable(scores):
        found = checked_scores(scores(words), n, retriever, who)
    else:
        order = checked_rank(retriever.rank(words), n, retriever, who)
        found = fusion.rank_scaled(order, rank_offset)
    if keep is not None:
        found = {u: s for u, s in found.items() if keep(u)}
    return fusion.max_scaled(found)
