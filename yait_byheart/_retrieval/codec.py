"""Arrays of little-endian 4-byte unsigned ints: the binary layout of index snapshots.

>>> list(u32_array(u32_bytes([1, 2, 70000]), 3, 0))
[1, 2, 70000]
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable

# The typecode of 4-byte unsigned ints here ("I" on common platforms, "L" on some).
U32 = next(code for code in "IL" if array(code).itemsize == 4)


def u32_bytes(values: Iterable[int]) -> bytes:
    """`values` as little-endian 4-byte unsigned ints (the machine's order is not stored)."""
    out = array(U32, values)
    if sys.byteorder == "big":
        out.byteswap()
    return out.tobytes()


def u32_array(data: bytes | memoryview, count: int, at: int) -> array[int]:
    """`count` ints written by `u32_bytes`, read from `data` at offset `at`."""
    if at + 4 * count > len(data):
        raise ValueError("truncated")
    out = array(U32)
    out.frombytes(data[at : at + 4 * count])
    if sys.byteorder == "big":
        out.byteswap()
    return out
