"""Per-question metrics: evidence recall, answer-token recall, token F1, BLEU-1.

All text metrics share one normalisation (lower-case, punctuation deleted, articles a/an/the
removed, whitespace split), the SQuAD convention, so "8 May, 2023" and "8 may 2023" match.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

_ARTICLES = re.compile(r"\b(a|an|the)\b")


# Unicode categories P* cover ASCII punctuation and the curly quotes LoCoMo texts use; the
# basic-plane table (65,536 code points, ~20 ms to build) makes deletion one str.translate call,
# which took a full offline run's scoring from ~60 s (a per-character loop) to ~1 s.
_DELETE: dict[int, None] = {
    cp: None for cp in range(0x10000) if unicodedata.category(chr(cp)).startswith("P")
}
_DELETE.update((ord(ch), None) for ch in "$+<=>^`|~")


def normalise(text: str) -> list[str]:
    """Normalised tokens of ``text``.

    >>> normalise("The 8th of May, 2023!")
    ['8th', 'of', 'may', '2023']
    >>> normalise("Mel's an artist")
    ['mels', 'artist']
    """
    return _ARTICLES.sub(" ", text.lower().translate(_DELETE)).split()


@lru_cache(maxsize=65536)
def _token_set(text: str) -> frozenset[str]:
    # The same turn and message texts come back question after question: tokenise them once.
    return frozenset(normalise(text))


def evidence_recall(evidence: Iterable[int], included: Iterable[int]) -> float | None:
    """|evidence ∩ included| / |evidence|, or None when there is no evidence to find.

    >>> evidence_recall([3, 7], [1, 3, 4])
    0.5
    >>> evidence_recall([], [1]) is None
    True
    """
    wanted = set(evidence)
    if not wanted:
        return None
    return len(wanted & set(included)) / len(wanted)


def answer_token_recall(answer: str, texts: Iterable[str]) -> float | None:
    """Share of the gold answer's distinct normalised tokens found among the tokens of ``texts``.

    None when the answer normalises to nothing (it cannot be found or missed).

    >>> answer_token_recall("a beagle, Rex", ["Ben: my beagle!", "Ada: cute"])
    0.5
    """
    gold = set(normalise(answer))
    if not gold:
        return None
    sets = [_token_set(text) for text in texts]
    return sum(any(t in s for s in sets) for t in gold) / len(gold)


def token_f1(prediction: str, gold: str) -> float:
    """Harmonic mean of token precision and recall over normalised token multisets.

    >>> round(token_f1("beagle dog", "a beagle"), 4)
    0.6667
    """
    pred, ref = normalise(prediction), normalise(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    """Unigram BLEU: clipped unigram precision times the brevity penalty exp(1 - r/c) when c <= r.

    >>> round(bleu1("beagle", "beagle dog"), 4)  # precision 1, BP = exp(1 - 2/1)
    0.3679
    """
    pred, ref = normalise(prediction), normalise(gold)
    if not pred or not ref:
        return 0.0
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    c, r = len(pred), len(ref)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return precision * brevity


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, None for no values (reported as null, never as 0)."""
    return sum(values) / len(values) if values else None
