"""Embedding vectors: checked, scaled to unit length, and held for cosine similarity.

Pure Python by default (`math.fsum` of products); numpy, when importable, does the same sums
over a matrix that grows in place. Both give the same similarities within float rounding.

>>> rows = Rows(numpy=False); rows.put(0, unit([3.0, 4.0])); rows.put(1, unit([1.0, 0.0]))
>>> rows.dots(unit([1.0, 0.0]))
{0: 0.6, 1: 1.0}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

Vector = list[float]


def unit(vector: Sequence[float]) -> Vector:
    """`vector` scaled to length 1 (a zero vector stays zero), so a dot product is a cosine.

    >>> unit([3.0, 4.0])
    [0.6, 0.8]
    """
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


def checked(texts: Sequence[str], vectors: Any, dim: int | None) -> list[Vector]:
    """The embedder's output as float lists, or ValueError naming what is wrong and the fix.

    >>> checked(["a"], [[1, 2]], None)
    [[1.0, 2.0]]
    """
    fix = "embed(texts) must return one vector per text, in order, all of one length"
    try:
        out = [[float(x) for x in v] for v in vectors]
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"Hybrid: embed returned something that is not vectors ({exc}); {fix}"
        ) from None
    if len(out) != len(texts):
        raise ValueError(f"Hybrid: embed returned {len(out)} vectors for {len(texts)} texts; {fix}")
    for i, v in enumerate(out):
        want = dim if dim is not None else len(out[0])
        if len(v) != want or not v:
            raise ValueError(f"Hybrid: vector {i} has {len(v)} numbers, expected {want}; {fix}")
        if not all(math.isfinite(x) for x in v):
            raise ValueError(f"Hybrid: vector {i} holds NaN or infinity; {fix}")
    return out


def _numpy() -> Any:
    """numpy if importable, else None: an optional speed-up, never required."""
    try:
        import numpy
    except ImportError:
        return None
    return numpy


class Rows:
    """Unit vectors by stretch id, answering every stretch's dot product with a query."""

    def __init__(self, numpy: bool | None = None) -> None:
        np = _numpy() if numpy is not False else None
        if numpy and np is None:
            raise ImportError("Hybrid(numpy=True) needs numpy: pip install numpy")
        self._np = np
        self._row: dict[int, int] = {}  # stretch id -> row
        self._free: list[int] = []
        self._vectors: list[Vector] = []
        self._matrix: Any = None

    def __len__(self) -> int:
        return len(self._row)

    def put(self, uid: int, vector: Vector) -> None:
        """Hold `vector` (unit length) for stretch `uid`, replacing any held before."""
        row = self._row.get(uid)
        if row is None:
            row = self._free.pop() if self._free else len(self._vectors)
            self._row[uid] = row
        if row == len(self._vectors):
            self._vectors.append(vector)
        else:
            self._vectors[row] = vector
        if self._np is not None:
            self._write(row, vector)

    def _write(self, row: int, vector: Vector) -> None:
        np, matrix = self._np, self._matrix
        assert np is not None
        if matrix is None or matrix.shape[1] != len(vector):
            matrix = np.zeros((max(64, row + 1), len(vector)))
        elif row >= matrix.shape[0]:  # doubling keeps a long conversation's growth linear
            grown = np.zeros((2 * matrix.shape[0], matrix.shape[1]))
            grown[: matrix.shape[0]] = matrix
            matrix = grown
        matrix[row] = vector
        self._matrix = matrix

    def drop(self, uid: int) -> None:
        """Forget stretch `uid`'s vector (nothing if none is held)."""
        row = self._row.pop(uid, None)
        if row is not None:
            self._vectors[row] = []
            if self._matrix is not None:
                self._matrix[row] = 0.0
            self._free.append(row)

    def dots(self, query: Vector) -> dict[int, float]:
        """Each held stretch's dot product with `query` (a cosine, both being unit length)."""
        if not self._row:
            return {}
        if self._np is not None:
            sims = (self._matrix[: len(self._vectors)] @ self._np.asarray(query)).tolist()
            return {uid: sims[row] for uid, row in self._row.items()}
        vectors = self._vectors
        return {
            uid: math.fsum(map(float.__mul__, vectors[row], query))
            for uid, row in self._row.items()
        }
