"""`store.vectors(conversation, name)`: a conversation's stored embeddings as a mapping."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence

from ._core import StoreCore
from ._packing import pack


def check_key(call: str, key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"{call}: a vector key must be a str (a content hash), got {key!r}")
    # Both databases store keys as UTF-8 text, and PostgreSQL's text holds no NUL.
    if "\x00" in key or (not key.isprintable() and _unencodable(key)):
        raise ValueError(
            f"{call}: the vector key {key!r} holds a NUL or a lone surrogate; "
            f"use a hex digest such as hashlib.sha256(text.encode()).hexdigest()"
        )
    return key


def _unencodable(key: str) -> bool:
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class StoredVectors(MutableMapping[str, list[float]]):
    """The vectors one embedder (`name`) computed for one conversation, read from the store.

    A ``MutableMapping[str, list[float]]`` keyed by a content hash that the caller computes,
    each value a float32 vector (see `yait_byheart.store._packing` for the precision).  Every
    call reads or writes the store at once; `set_many` writes in one transaction.  Writing
    needs the conversation to exist (`store.open` creates it); deleting the conversation or
    its user deletes its vectors.  Implements `yait_byheart.protocols.VectorCache`.
    """

    __slots__ = ("_conversation", "_name", "_store")

    def __init__(self, store: StoreCore, conversation: str, name: str) -> None:
        self._store = store
        self._conversation = conversation
        self._name = name

    def __repr__(self) -> str:
        return f"<vectors {self._name!r} of conversation {self._conversation!r}>"

    def get_many(self, keys: Iterable[str]) -> dict[str, list[float]]:
        """The vectors stored under `keys`, read in one snapshot; keys not stored are left out."""
        call = "VectorCache.get_many"
        wanted = list(dict.fromkeys(check_key(call, k) for k in keys))
        self._store._check_open(call)
        if not wanted:
            return {}
        with self._store._failing(call):
            return self._store._v_get(self._conversation, self._name, wanted)

    def set_many(self, items: Mapping[str, Sequence[float]]) -> None:
        """Store every vector of `items` (replacing those of the same keys), in one transaction."""
        call = "VectorCache.set_many"
        if not isinstance(items, Mapping):
            raise TypeError(f"{call}: items must be a mapping of key to vector, got {items!r}")
        rows = [(check_key(call, k), pack(call, v)) for k, v in items.items()]
        self._store._check_open(call)
        if rows:
            with self._store._failing(call):
                self._store._v_set(call, self._conversation, self._name, rows)

    def __getitem__(self, key: str) -> list[float]:
        found = self.get_many([key])
        if key not in found:
            raise KeyError(key)
        return found[key]

    def __setitem__(self, key: str, value: Sequence[float]) -> None:
        self.set_many({key: value})

    def __delitem__(self, key: str) -> None:
        call = "VectorCache.__delitem__"
        check_key(call, key)
        self._store._check_open(call)
        with self._store._failing(call):
            deleted = self._store._v_delete(self._conversation, self._name, key)
        if not deleted:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        call = "VectorCache.__iter__"
        self._store._check_open(call)
        with self._store._failing(call):
            return iter(self._store._v_keys(self._conversation, self._name))

    def __len__(self) -> int:
        call = "VectorCache.__len__"
        self._store._check_open(call)
        with self._store._failing(call):
            return self._store._v_count(self._conversation, self._name)
