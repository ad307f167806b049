"""Recall with a retriever (issue 36): its signal fused into recall's ranking as compose fuses
one, fed with the asking user's stretches alone, told to forget what was deleted or blanked.
SQLite always; PostgreSQL when BYHEART_TEST_PG_DSN reaches a server (see tests/test_store.py).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart.semantic import Hybrid
from yait_byheart.store import SQLiteStore, _recall

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402
from test_store_recall import write  # noqa: E402

backend = test_store.backend  # the fixture, under the name the tests ask for

# Words that mean alike share a dimension: the toy embedder knows "car" and "automobile" are
# one thing, which no lexical ranking can.
_MEANING = {"car": 0, "automobile": 0, "sedan": 0, "parked": 1, "left": 1, "garage": 1,
            "piano": 2, "sister": 2, "soup": 3, "broth": 3, "tomato": 3}  # fmt: skip
QUERY = "Where is my car parked?"
PARKED = "I left the automobile on level three."


def embed(texts: list[str]) -> list[list[float]]:
    out = []
    for text in texts:
        v = [0.1] * 6
        for word in re.findall(r"\w+", text.lower()):
            if word in _MEANING:
                v[_MEANING[word]] += 1.0
        out.append(v)
    return out


class Spy(Hybrid):
    """A Hybrid that shows what it holds and what it was told to forget."""

    def __init__(self, **kwargs: Any) -> None:
        self.held: dict[int, str] = {}
        self.removed: list[int] = []
        super().__init__(embed, name="toy", **kwargs)

    def fit(self, docs: list[str]) -> Spy:
        self.held = {}
        super().fit(docs)
        return self

    def add(self, docs: list[str], ids: list[int] | None = None) -> Spy:
        super().add(docs, ids)
        self.held.update(zip(ids or [], docs, strict=True))
        return self

    def remove(self, ids: list[int]) -> Spy:
        super().remove(ids)
        self.removed += ids
        for uid in ids:
            self.held.pop(uid, None)
        return self


class Stale(Spy):
    """A retriever that never forgets: recall must not return what it still holds."""

    def remove(self, ids: list[int]) -> Stale:
        self.removed += ids
        return self


def fill(store: Any) -> None:
    a = store.open("garage", user="alice")
    a.append("user", PARKED, when="3 May 2023")
    a.append("assistant", "Noted: level three.", when="3 May 2023")
    store.open("music", user="alice").append("user", "My sister plays the piano on Sundays.")
    store.open("lunch", user="alice").append("user", "Tomato soup with a rich broth today.")
    store.open("bob-car", user="bob").append("user", "My sedan is parked in the garage, bay 42.")


def test_a_retriever_finds_a_stretch_that_shares_no_word_with_the_query(
    backend: Backend,
) -> None:
    with backend.store() as store:
        fill(store)
        assert store.recall(QUERY, user="alice") == []  # lexically, nothing matches
        found = store.recall(QUERY, user="alice", retriever=Spy())
        bob = store.recall(QUERY, user="bob", retriever=Spy())
    assert found[0]["conversation"] == "garage"
    assert found[0]["text"] == f"user: {PARKED}\nassistant: Noted: level three."
    assert "bay 42" not in json.dumps(found)  # never another user's words
    assert [r["conversation"] for r in bob] == ["bob-car"]


def test_without_a_retriever_recall_is_what_it_was(tmp_path: Path) -> None:
    queries = ["which piano day?", QUERY, "tomato soup", "what did I say about level three?"]
    with SQLiteStore(tmp_path / "c.db") as store:
        fill(store)
        before = [store.recall(q, user="alice") for q in queries]
        spy = Spy()
        store.recall(QUERY, user="alice", retriever=spy)
        after = [store.recall(q, user="alice") for q in queries]  # the index feeding `spy`
        off = [store.recall(q, user="alice", retriever=Spy(weight=0)) for q in queries]
    assert json.dumps(after) == json.dumps(before)
    assert json.dumps(off) == json.dumps(before)
    assert before[1] == [] and before[0][0]["conversation"] == "music"


def test_the_retriever_holds_only_the_users_stretches_one_object_per_user(
    backend: Backend,
) -> None:
    spy = Spy()
    with backend.store() as store:
        fill(store)
        store.recall(QUERY, user="alice", retriever=spy)
        assert sorted(spy.held.values()) == sorted(
            [f"{PARKED}\nNoted: level three.", "My sister plays the piano on Sundays.",
             "Tomato soup with a rich broth today."]
        )  # fmt: skip
        with pytest.raises(ValueError, match=r"recall: this retriever already holds another"):
            store.recall(QUERY, user="bob", retriever=spy)
        source = store.recall_source(user="bob", retriever=spy)
        with pytest.raises(ValueError, match="one retriever object per user"):
            source(QUERY)
        assert "bay 42" not in json.dumps(spy.held)


@pytest.mark.parametrize("retriever_class", [Spy, Stale])
def test_deleted_and_blanked_words_leave_the_retriever(
    backend: Backend, retriever_class: type[Spy]
) -> None:
    spy = retriever_class()
    with backend.store() as store:
        fill(store)
        store.open("garage2", user="alice").append("user", "The automobile is at bay 7.")
        assert store.recall(QUERY, user="alice", retriever=spy)[0]["conversation"] in {
            "garage", "garage2"}  # fmt: skip
        store.open("garage").redact(0)
        store.delete("garage2")
        found = store.recall(QUERY, user="alice", retriever=spy)
        assert "automobile" not in json.dumps(found)
        assert spy.removed  # told, whether or not it listens
        if retriever_class is Spy:
            assert "automobile" not in json.dumps(spy.held)
        again = store.recall("the automobile", user="alice", retriever=spy)
        assert "automobile" not in json.dumps(again)


def test_a_dropped_index_empties_its_retriever(tmp_path: Path) -> None:
    spy = Spy()
    with SQLiteStore(tmp_path / "c.db") as store:
        fill(store)
        store._recaller.users = 1
        store.recall(QUERY, user="alice", retriever=spy)
        assert spy.held
        store.recall(QUERY, user="bob")  # alice's index is dropped for bob's
        assert spy.held == {}
        assert store.recall(QUERY, user="alice", retriever=spy)[0]["conversation"] == "garage"
    assert spy.held == {}  # closing the store drops every index


def test_recall_source_offers_what_the_retriever_finds(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        fill(store)
        source = store.recall_source(user="alice", exclude="garage", retriever=Spy())
        assert source(QUERY) == []  # the only match is left out
        source = store.recall_source(user="alice", exclude="today", retriever=source.retriever)
        offered = source(QUERY)
    assert offered[0]["source"] == "the user's conversation 'garage', 3 May 2023, turns 0-1"
    assert source.last[0]["text"].startswith(f"user: {PARKED}")


WORDS = ("car", "automobile", "piano", "soup")
OPS = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["a0", "a1", "b0"]), st.sampled_from(WORDS)),
    st.tuples(st.just("redact"), st.sampled_from(["a0", "a1", "b0"]), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.sampled_from(["a0", "a1", "b0"]), st.just("")),
    st.tuples(st.just("recall"), st.sampled_from(["a", "b"]), st.sampled_from(WORDS)),
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(OPS, max_size=25))
@pytest.mark.parametrize("share", [_recall.REBUILD_SHARE, 1e9])  # 1e9: never rebuilt
def test_a_retriever_holds_exactly_the_live_stretches_of_its_user(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, share: float,
    ops: list[tuple[str, str, Any]],
) -> None:  # fmt: skip
    monkeypatch.setattr(_recall, "REBUILD_SHARE", share)
    path = tmp_path_factory.mktemp("p") / "c.db"
    model: dict[str, list[str | None]] = {}  # conversation -> its turns' texts (None: blanked)
    spies = {"a": Spy(), "b": Spy()}
    serial = 0
    deleted: set[str] = set()
    with SQLiteStore(path) as writer, SQLiteStore(path) as reader:
        for op, name, arg in ops:
            if op == "append" and name in deleted:
                # Not stored again: SQLite may give it the deleted one's row id, and with as
                # many changes its seq too, which the user's index (lexical too) cannot tell
                # apart from the old one (a known gap of `UserIndex.changed`, not of feeding).
                continue
            serial += 1
            if op != "recall":
                if op == "delete" and name in model:
                    deleted.add(name)
                write(writer, model, op, name, arg, serial, name[0])
            else:
                found = reader.recall(arg, user=name, budget=100_000, retriever=spies[name])
                live = {t for c, turns in model.items() if c[0] == name for t in turns if t}
                held = {line for text in spies[name].held.values() for line in text.split("\n")}
                assert held == live  # all of the user's words as they are now, nothing else
                assert {line[6:] for r in found for line in r["text"].split("\n")} <= live


class RankOnly:
    def fit(self, docs: list[str]) -> None:
        pass

    def rank(self, query: str) -> list[int]:
        return []


def test_a_retriever_recall_cannot_keep_fed_is_refused_by_name(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        fill(store)
        for call in (store.recall, store.recall_source):
            kwargs: dict[str, Any] = {"user": "alice", "retriever": RankOnly()}
            args = (QUERY,) if call == store.recall else ()
            with pytest.raises(TypeError, match=r"SQLiteStore\.recall.*lacks add, remove.*Hybrid"):
                call(*args, **kwargs)
        assert store.recall("piano", user="alice")[0]["conversation"] == "music"  # all kept


class FloatIds(Spy):
    """A retriever whose scores come back keyed by float ids: its own bug."""

    def scores(self, query: str) -> dict[int, float]:
        return {float(u): s for u, s in super().scores(query).items()}  # type: ignore[misc]


def test_a_bad_retriever_output_is_named_by_the_recall_it_was_given_to(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        fill(store)
        assert store.recall(QUERY, user="alice", retriever=Spy())  # found by its meaning
        with pytest.raises(TypeError, match=r"^SQLiteStore\.recall\(retriever=\.\.\.\): FloatIds"):
            store.recall(QUERY, user="alice", retriever=FloatIds())
