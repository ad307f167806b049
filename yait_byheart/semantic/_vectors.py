"""Embedding vectors: checked, scaled to unit length, and held for cosine similarity.

Pure Python by default (a sum of products); numpy, when importable, does the same sums
over a matrix that grows in place. Both give the same similarities within float rounding.

>>> rows = Rows(numpy=False); rows.put(0, unit([3.0, 4.0])); rows.put(1, unit([1.0, 0.0]))
>>> rows.dots(unit([1.0, 0.0]))
{0: 0.6, 1: 1.0}
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from operator import mul
from typing import Any

Vector = list[float]


def unit(vector: Sequence[float]) -> Vector:
    """`vector` scaled to length 1 (a zero vector stays zero), so a dot product is a cosine.

    >>> unit([3.0, 4.0])
    [0.6, 0.8]
    """
    norm = math.hypot(*vector)
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
        if not math.isfinite(sum(v)) and not all(math.isfinite(x) for x in v):
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
        self._live: Any = None  # numpy array of the held rows, rebuilt after a change

    def __len__(self) -> int:
        return len(self._row)

    def put(self, uid: int, vector: Vector) -> None:
        """Hold `vector` (unit length) for stretch `uid`, replacing any held before."""
        row = self._row.get(uid)
        if row is None:
            row = self._free.pop() if self._free else len(self._vectors)
            self._row[uid] = row
        self._live = None
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
            self._live = None
            self._vectors[row] = []
            if self._matrix is not None:
                self._matrix[row] = 0.0
            self._free.append(row)

    def dots(self, query: Vector) -> dict[int, float]:
        """Each held stretch's dot product with `query` (a cosine, both being unit length)."""
        return self.similar(query).of(list(self._row))

    def similar(self, query: Vector) -> Sims:
        """Every held stretch's cosine with `query`, for `Sims` to summarise and look up."""
        if self._np is not None and self._row:
            np = self._np
            if self._live is None:
                self._live = np.fromiter(self._row.values(), dtype=np.intp, count=len(self._row))
            # einsum, not BLAS: a matrix-vector product this small is slower threaded on a
            # busy machine (BLAS threads wait for cores), and einsum runs on one.
            sims = np.einsum("ij,j->i", self._matrix[: len(self._vectors)], np.asarray(query))
            return Sims(self._row, sims, np, self._live)
        vectors = self._vectors
        found = {row: sum(map(mul, vectors[row], query)) for row in self._row.values()}
        return Sims(self._row, found, None, None)


class Sims:
    """Cosines by row (a numpy array, or a dict in pure Python), read by stretch id."""

    def __init__(self, rows: dict[int, int], sims: Any, np: Any, live: Any) -> None:
        self._rows, self._sims, self._np, self._live = rows, sims, np, live

    def summary(self) -> tuple[float, float]:
        """The mean and the largest cosine over the held stretches."""
        if not self._rows:
            return 0.0, 0.0
        if self._np is None:
            values = list(self._sims.values())
            return sum(values) / len(values), max(values)
        live = self._sims[self._live]
        return float(live.mean()), float(live.max())

    def of(self, uids: list[int]) -> dict[int, float]:
        """The cosines of stretches `uids` (each held)."""
        rows = [self._rows[u] for u in uids]
        if self._np is None:
            return {u: self._sims[r] for u, r in zip(uids, rows, strict=True)}
        return dict(zip(uids, self._sims[rows].tolist(), strict=True))

    def best(self, m: int) -> list[int]:
        """The ids of the `m` stretches of largest cosine (any order among them)."""
        if len(self._rows) <= m:
            return list(self._rows)
        ids = list(self._rows)
        if self._np is None:
            return heapq.nlargest(m, ids, key=lambda u: self._sims[self._rows[u]])
        live = self._sims[self._live]
        picked = self._np.argpartition(-live, m - 1)[:m]
        return [ids[i] for i in picked.tolist()]
