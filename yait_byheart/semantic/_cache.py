"""Where `Hybrid` keeps embeddings: any mapping, or a store's batch interface.

A key is the embedder's name and the text's SHA-256, so a vector is found again only for the
same text embedded by the same model, and the key itself reveals nothing of the text.

>>> key("minilm", "hello")[:17]
'minilm:2cf24dba5f'
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Vector = list[float]


def key(name: str, text: str) -> str:
    """The cache key of `text` embedded by the embedder called `name`."""
    return f"{name}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"


def get_many(cache: Any, keys: Sequence[str]) -> dict[str, Vector]:
    """The vectors `cache` holds for `keys`: one call when it has `get_many`."""
    batch = getattr(cache, "get_many", None)
    if callable(batch):
        return {k: list(v) for k, v in batch(list(keys)).items()}
    return {k: list(cache[k]) for k in keys if k in cache}


def set_many(cache: Any, vectors: Mapping[str, Vector]) -> None:
    """Keep `vectors` in `cache`: one call when it has `set_many`."""
    batch = getattr(cache, "set_many", None)
    if callable(batch):
        batch(dict(vectors))
    else:
        for k, v in vectors.items():
            cache[k] = v


def delete_many(cache: Any, keys: Iterable[str]) -> None:
    """Take `keys` out of `cache` (those it lacks are skipped): `delete_many` when it has it."""
    keys = list(keys)
    batch = getattr(cache, "delete_many", None)
    if callable(batch):
        batch(keys)
        return
    for k in keys:
        if k in cache:
            del cache[k]


class Recent:
    """A bounded least-recently-used map of query text to vector, kept in memory only.

    >>> r = Recent(2); r.put("a", [1.0]); r.put("b", [2.0]); r.put("c", [3.0])
    >>> r.get("a"), r.get("c")
    (None, [3.0])
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[str, Vector] = OrderedDict()

    def get(self, text: str) -> Vector | None:
        found = self._items.get(text)
        if found is not None:
            self._items.move_to_end(text)
        return found

    def put(self, text: str, vector: Vector) -> None:
        self._items[text] = vector
        self._items.move_to_end(text)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def discard(self, text: str) -> None:
        self._items.pop(text, None)
