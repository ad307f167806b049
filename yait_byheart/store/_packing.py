"""Embedding vectors as bytes: 4-byte IEEE 754 floats, little-endian, one after another.

Float32 keeps about 7 significant decimal digits (relative error at most 2**-24, about 6e-8),
ample for cosine similarity and half the size of float64.

>>> unpack(pack("t", [0.5, -2.0, 1e-3]))[:2]
[0.5, -2.0]
>>> len(pack("t", [0.1] * 384))
1536
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable

_BIG_ENDIAN = sys.byteorder == "big"


def pack(call: str, values: Iterable[float]) -> bytes:
    """`values` as float32 bytes; a clear error for anything that is not finite numbers."""
    # Any iterable of numbers (a list, a tuple, a numpy array); text would iterate as letters.
    if isinstance(values, (str, bytes, dict)):
        raise TypeError(
            f"{call}: a vector must be a sequence of floats, got {type(values).__name__}"
        )
    try:
        floats = array("f", values)
    except TypeError as exc:
        raise TypeError(f"{call}: a vector must hold numbers ({exc})") from exc
    if not all(math.isfinite(x) for x in floats):
        # Also what a number beyond float32's range (about 3.4e38) became.
        raise ValueError(
            f"{call}: a vector holds NaN or infinity (or a number beyond float32); "
            f"pass finite floats"
        )
    if _BIG_ENDIAN:
        floats.byteswap()
    return floats.tobytes()


def unpack(data: bytes) -> list[float]:
    """The floats `pack` wrote."""
    floats = array("f")
    floats.frombytes(data)
    if _BIG_ENDIAN:
        floats.byteswap()
    return floats.tolist()
