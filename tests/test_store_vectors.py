"""Stored embeddings: `store.vectors(conversation, name)` on both stores (issue 14).

Uses test_store.py's `backend` fixture: SQLite always, PostgreSQL when BYHEART_TEST_PG_DSN
reaches a server (a failure instead of a skip where BYHEART_TEST_PG_REQUIRED=1 or in CI).
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart.protocols import VectorCache
from yait_byheart.store import SCHEMA_VERSION, SQLiteStore, UnknownConversationError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_store
from test_store import Backend

backend = test_store.backend  # the fixture, under the name the tests ask for

DATA = Path(__file__).resolve().parent / "data"


def f32(values: list[float]) -> list[float]:
    """What a float32 keeps of `values`: the precision the store promises."""
    return array("f", values).tolist()


def vector_rows(backend: Backend) -> int:
    """Rows in the vectors table, counted on a connection of its own."""
    conn: Any
    if backend.kind == "sqlite":
        conn, table = sqlite3.connect(backend.location), "vectors"
    else:
        import psycopg

        conn, table = psycopg.connect(backend.location), f"{backend.schema}.vectors"
    try:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def test_vectors_round_trip_through_a_reopened_store(backend: Backend) -> None:
    items = {"h-pricing": [0.1, -0.5, 2.25], "h-marathon": [1e-3, 3.0, -7.125], "h-x": [0.0]}
    with backend.store() as store:
        store.open("c").append("user", "we settled on 55 euro a month")
        cache = store.vectors("c", "minilm")
        assert isinstance(cache, VectorCache)
        cache.set_many(items)
        cache["h-one"] = (1.0, 2.0)  # any sequence of numbers
    with backend.store() as store:
        cache = store.vectors("c", "minilm")
        assert dict(cache) == {k: f32(v) for k, v in {**items, "h-one": [1.0, 2.0]}.items()}
        assert cache["h-pricing"] == f32([0.1, -0.5, 2.25])
        assert abs(cache["h-pricing"][0] - 0.1) < 1e-7  # float32, about 7 significant digits
        assert len(cache) == 4 and sorted(cache) == ["h-marathon", "h-one", "h-pricing", "h-x"]
        # Another embedder's vectors and another conversation's are apart.
        store.open("d")
        assert len(store.vectors("c", "other-model")) == 0
        assert len(store.vectors("d", "minilm")) == 0
        assert store.vectors("d", "minilm").get_many(items) == {}


def test_get_many_returns_only_the_keys_present(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c")
        cache = store.vectors("c", "m")
        keys = [f"k{i}" for i in range(1200)]  # more than one IN (...) list
        cache.set_many({k: [float(i)] for i, k in enumerate(keys) if i % 3 == 0})
        got = cache.get_many([*keys, "absent", "k0"])
        assert got == {k: [float(i)] for i, k in enumerate(keys) if i % 3 == 0}
        assert cache.get_many([]) == {}
        assert "k1" not in cache and "k3" in cache
        assert cache.get("k1") is None
        with pytest.raises(KeyError):
            cache["k1"]


def test_set_many_replaces_and_delete_forgets(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c")
        cache = store.vectors("c", "m")
        cache.set_many({"a": [1.0, 2.0], "b": [3.0]})
        cache.set_many({"a": [5.0]})
        assert cache.get_many(["a", "b"]) == {"a": [5.0], "b": [3.0]}
        del cache["a"]
        assert dict(cache) == {"b": [3.0]}
        with pytest.raises(KeyError):
            del cache["a"]


def test_set_many_writes_all_or_nothing(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c")
        cache = store.vectors("c", "m")
        cache.set_many({"kept": [1.0]})
        bad: list[dict[str, Any]] = [
            {"new": [1.0], "nan": [float("nan")]},
            {"new": [1.0], "huge": [1e39]},  # beyond float32
            {"new": [1.0], "text": "0.5"},
            {"new": [1.0], "words": ["a", "b"]},
        ]
        for items in bad:
            with pytest.raises((ValueError, TypeError), match=r"VectorCache\.set_many"):
                cache.set_many(items)
        with pytest.raises(TypeError, match="key must be a str"):
            cache.set_many({7: [1.0]})  # type: ignore[dict-item]
        for key in ("nul\x00key", "\ud800"):
            with pytest.raises(ValueError, match="NUL or a lone surrogate"):
                cache.set_many({"new": [1.0], key: [1.0]})
        assert dict(cache) == {"kept": [1.0]}


def test_vectors_of_an_unknown_conversation_cannot_be_written(backend: Backend) -> None:
    with backend.store() as store:
        cache = store.vectors("never-opened", "m")
        assert cache.get_many(["a"]) == {} and len(cache) == 0
        with pytest.raises(UnknownConversationError, match=r"store\.open\('never-opened'\)"):
            cache.set_many({"a": [1.0]})
        with pytest.raises(TypeError, match="embedder name must be a str"):
            store.vectors("c", None)  # type: ignore[arg-type]
    assert vector_rows(backend) == 0


def test_deleting_a_conversation_or_a_user_deletes_its_vectors(backend: Backend) -> None:
    with backend.store() as store:
        for name, user in (("a", "alice"), ("b", "alice"), ("c", "bob"), ("d", None)):
            store.open(name, user=user)
            store.vectors(name, "m").set_many({"k1": [1.0], "k2": [2.0]})
            store.vectors(name, "other").set_many({"k1": [9.0]})
        assert vector_rows(backend) == 12
        store.delete("d")
        assert vector_rows(backend) == 9
        assert store.delete_user("alice") == 2
        assert vector_rows(backend) == 3
        assert dict(store.vectors("c", "m")) == {"k1": [1.0], "k2": [2.0]}
        # A conversation created again under a deleted id starts without vectors.
        store.open("a")
        assert len(store.vectors("a", "m")) == 0


def test_a_closed_store_refuses_vector_calls(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c")
        cache = store.vectors("c", "m")
    for call in (lambda: cache.get_many(["a"]), lambda: cache.set_many({"a": [1.0]}), cache.keys):
        with pytest.raises(ValueError, match="closed"):
            list(call())


class FakeEmbedder:
    """A retriever that embeds each stretch through its `cache`, as semantic.Hybrid will."""

    name = "fake-embedder-v1"

    def __init__(self) -> None:
        self.cache: Any = None
        self.embedded: list[str] = []
        self.docs: list[str] = []

    def key(self, text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def fit(self, docs: list[str]) -> None:
        self.docs = docs
        keys = [self.key(d) for d in docs]
        known = self.cache.get_many(keys)
        missing = {k: d for k, d in zip(keys, docs, strict=True) if k not in known}
        self.embedded += missing.values()
        self.cache.set_many({k: [float(len(d)), 1.0] for k, d in missing.items()})

    def rank(self, query: str) -> list[int]:
        return sorted(range(len(self.docs)), key=lambda k: -self.docs[k].count(query))


def test_open_gives_a_named_retriever_its_stored_vectors(backend: Backend) -> None:
    first = FakeEmbedder()
    with backend.store() as store:
        mem = store.open("c", retriever=first, budget=200, chunk=80)
        assert isinstance(first.cache, VectorCache)
        for k in range(30):
            mem.append("user" if k % 2 == 0 else "assistant", f"turn {k} about the lantern")
        mem.compose("lantern")
        assert first.embedded and len(first.cache) == len(set(first.embedded))
    again = FakeEmbedder()
    with backend.store() as store:
        mem = store.open("c", retriever=again)
        mem.compose("lantern")
        assert again.docs == first.docs and again.embedded == []  # nothing embedded again
        # A retriever whose cache is already set, or that has no name, is left alone.
        mine: dict[str, Any] = {}
        given_cache = FakeEmbedder()
        given_cache.cache = mine
        store.open("c", retriever=given_cache)
        assert given_cache.cache is mine
        unnamed = FakeEmbedder()
        unnamed.name = ""
        store.open("c", retriever=unnamed)
        assert unnamed.cache is None


def test_a_store_of_the_previous_schema_gains_the_vectors_table(tmp_path: Path) -> None:
    # Written by the store of schema 2 (the one before vectors), as tests/data/README.md says.
    path = tmp_path / "chats.db"
    shutil.copy(DATA / "store_schema2.db", path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            "2",
        )
        before = [r[0] for r in db.execute("SELECT record FROM turns ORDER BY conv, idx")]
    db.close()
    with SQLiteStore(path) as store:
        assert store.conversations() == ["conv-42", "conv-43"]
        assert store.conversations(user="alice") == ["conv-42"]
        mem = store.open("conv-42")
        assert [t["text"] for t in mem.to_dict()["turns"]][:2] == [
            "We should settle the pricing: 55 euro a month for the team plan.",
            "Noted, 55 euro a month, with an annual discount.",
        ]
        store.vectors("conv-42", "m").set_many({"h": [0.25]})
    with SQLiteStore(path) as store:
        assert store.vectors("conv-42", "m")["h"] == [0.25]
    with sqlite3.connect(path) as db:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version == (str(SCHEMA_VERSION),)
        after = [r[0] for r in db.execute("SELECT record FROM turns ORDER BY conv, idx")]
    db.close()
    assert after == before  # the rows are untouched


def test_a_store_without_the_vectors_table_is_upgraded(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c", user="alice").append("user", "written by schema 2")
    table = "meta" if backend.kind == "sqlite" else "{s}.meta"
    backend.sql("DROP TABLE vectors" if backend.kind == "sqlite" else "DROP TABLE {s}.vectors")
    backend.sql(f"UPDATE {table} SET value = '2' WHERE key = 'schema_version'")
    with backend.store() as store:
        assert [t["text"] for t in store.export("c")["turns"]] == ["written by schema 2"]
        store.vectors("c", "m").set_many({"h": [0.5]})
        store.delete_user("alice")
    assert vector_rows(backend) == 0


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    items=st.dictionaries(
        st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=20),
        st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=8),
        max_size=12,
    )
)
def test_any_float32_vectors_come_back_exactly(tmp_path: Path, items: dict[str, Any]) -> None:
    path = tmp_path / "v.db"
    with SQLiteStore(path) as store:
        store.open("c")
        cache = store.vectors("c", "m")
        cache.set_many(items)
        assert cache.get_many(items) == items
        for key in list(items)[::2]:
            del cache[key]
        assert dict(cache) == {k: v for i, (k, v) in enumerate(items.items()) if i % 2}
        store.delete("c")
    path.unlink()
