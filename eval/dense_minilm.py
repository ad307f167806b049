"""A dense retriever for ``--retriever eval.dense_minilm:MiniLM``: an example, not a dependency.

byheart's ``retriever`` accepts any object with ``fit(docs)`` and ``rank(query)``; this one ranks
stretches by cosine similarity of sentence-transformers embeddings (all-MiniLM-L6-v2 by
default). It needs ``pip install sentence-transformers`` and the model weights available
locally or downloadable; byheart itself never imports it.

    python -m eval locomo --retriever eval.dense_minilm:MiniLM

Memory re-fits its retriever whenever a stretch closes, with every stretch's text, so
embeddings are cached by text and a re-fit only encodes the new stretches.
"""

from __future__ import annotations

from typing import Any

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

# One loaded model per process and name: the harness builds a Memory (and so a retriever)
# per conversation, budget and regime, and loading takes seconds.
_MODELS: dict[str, Any] = {}


def _model(name: str) -> Any:
    if name not in _MODELS:
        try:
            from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
        except ImportError as err:
            raise ImportError(
                "eval.dense_minilm.MiniLM needs sentence-transformers: "
                "pip install sentence-transformers (an optional extra for this example only; "
                "byheart does not depend on it)"
            ) from err
        _MODELS[name] = SentenceTransformer(name)
    return _MODELS[name]


class MiniLM:
    """Cosine similarity of normalised sentence embeddings; ``rank`` returns every doc index."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 64) -> None:
        self._encoder = _model(model)
        self.batch_size = batch_size
        self._cache: dict[str, Any] = {}
        self._vectors: Any = None
        self._n = 0

    def _encode(self, texts: list[str]) -> Any:
        return self._encoder.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )

    def fit(self, docs: list[str]) -> MiniLM:
        new = [d for d in dict.fromkeys(docs) if d not in self._cache]
        if new:
            for text, vector in zip(new, self._encode(new), strict=True):
                self._cache[text] = vector
        import numpy as np  # present whenever sentence-transformers is

        self._n = len(docs)
        self._vectors = np.stack([self._cache[d] for d in docs]) if docs else None
        return self

    def rank(self, query: str) -> list[int]:
        if self._vectors is None:
            return []
        scores = self._vectors @ self._encode([query])[0]
        # stable sort on the negated score: ties keep document order, as BM25.rank does
        return [int(i) for i in (-scores).argsort(kind="stable")]
