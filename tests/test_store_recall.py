"""Recall across a user's conversations (issue 36): verbatim passages of the same user's
conversations only, through every public path; deletions and redactions by any process are
out of what recall returns at once; material reaches compose by rule 4.  SQLite always;
PostgreSQL when BYHEART_TEST_PG_DSN reaches a server (see tests/test_store.py)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart import cli
from yait_byheart._retrieval import ranking
from yait_byheart._turns.render import render_external
from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import PostgresStore, SQLiteStore
from yait_byheart.store._recall import source_line

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402

backend = test_store.backend  # the fixture, under the name the tests ask for
CHILD = HERE / "recall_child.py"
ALICE = "the marmalade orchard code is quince {k}"
BOB = "the zebrafinch lighthouse password is hunter{k}"


def child(b: Backend, ops: list[list[Any]]) -> subprocess.Popen[str]:
    """A process of its own running `ops` (see tests/recall_child.py) through its own store."""
    args = [sys.executable, str(CHILD), b.kind, b.location, b.schema or "-", json.dumps(ops)]
    path = [p for p in (os.environ.get("PYTHONPATH"), str(HERE.parent)) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def finish(proc: subprocess.Popen[str]) -> list[str]:
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    lines = out.splitlines()
    assert lines[-1] == "done"
    return lines[:-1]


def all_text(found: list[dict[str, Any]]) -> str:
    return "\n".join(r["text"] for r in found)


# -- the API -----------------------------------------------------------------------------------


def test_recall_returns_the_users_words_verbatim_with_where_and_when(backend: Backend) -> None:
    with backend.store() as store:
        a = store.open("trip", user="alice")
        a.append("user", "We booked the Hotel Alfama in Lisbon for 14 nights.", when="2 May 2023")
        a.append("assistant", "Noted: Hotel Alfama, Lisbon, 14 nights.", when="2 May 2023")
        store.open("cooking", user="alice").append("user", "My sourdough starter is called Bob.")
        found = store.recall("Which hotel did we book in Lisbon?", user="alice")
    assert found[0]["conversation"] == "trip"
    assert found[0]["turns"] == [0, 1]
    assert found[0]["when"] == "2 May 2023"
    assert found[0]["text"] == (
        "user: We booked the Hotel Alfama in Lisbon for 14 nights.\n"
        "assistant: Noted: Hotel Alfama, Lisbon, 14 nights."
    )
    assert all(r["conversation"] != "cooking" for r in found)  # nothing of it matches


def test_exclude_and_budget_are_kept(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        for c in range(30):
            mem = store.open(f"c{c}", user="u")
            mem.append("user", f"note {c}: the invoice for the garden shed is due " + "x " * 100)
            mem.append("assistant", "Understood, the garden shed invoice. " + "y " * 100)
        found = store.recall("garden shed invoice", user="u", budget=2_000, exclude=["c3"])
        assert found and all(r["conversation"] != "c3" for r in found)
        assert sum(len(r["text"]) for r in found) <= 2_000
        assert store.recall("garden shed invoice", user="u", exclude="c3", budget=1) == []


def test_bad_arguments_are_named_and_a_user_less_conversation_recalls_nothing(
    tmp_path: Path,
) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        store.open("free").append("user", "a conversation with no user: the tulip bulbs")
        store.open("a", user="alice").append("user", "alice planted tulip bulbs")
        assert store.recall("tulip bulbs", user=None) == []
        with pytest.raises(ValueError, match=r"SQLiteStore\.recall: query is blank"):
            store.recall("   ", user="alice")
        assert [r["conversation"] for r in store.recall("tulip bulbs", user="alice")] == ["a"]
        with pytest.raises(TypeError, match=r"SQLiteStore\.recall: query must be a str"):
            store.recall(3, user="alice")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="budget must be an int >= 1"):
            store.recall("tulip", user="alice", budget=0)
        with pytest.raises(TypeError, match="exclude must be a conversation id"):
            store.recall("tulip", user="alice", exclude=[1])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="cannot read a date in when='soon'"):
            store.recall("tulip", user="alice", when="soon")
        with pytest.raises(ValueError, match="user must be a non-empty string"):
            store.recall_source(user="")


def test_relative_dates_in_the_question_find_the_days_they_name(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        for day in range(1, 29):
            mem = store.open(f"day{day}", user="u")
            mem.append("user", "we went for a walk by the river", when=f"{day} May 2023")
        found = store.recall(
            "where did we walk last Saturday?", user="u", when="30 May 2023", budget=100
        )
    assert [r["conversation"] for r in found] == ["day27"]  # Saturday 27 May 2023


# -- isolation, deletion and redaction, several processes --------------------------------------


def test_another_users_words_never_come_back_through_any_path(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    writers = [
        child(backend, [["append", f"a{k % 3}", "alice", "user", ALICE.format(k=k)]
                        for k in range(20)]),
        child(backend, [["append", f"b{k % 3}", "bob", "user", BOB.format(k=k)]
                        for k in range(20)]),
        child(backend, [["append", "nobody", None, "user", BOB.format(k=99)]]),
    ]  # fmt: skip
    with backend.store() as store:
        while any(w.poll() is None for w in writers):  # recalling while they write
            assert "zebrafinch" not in all_text(store.recall("zebrafinch hunter", user="alice"))
        for w in writers:
            finish(w)
        bob_words = "zebrafinch lighthouse password hunter"
        assert store.recall(bob_words, user="alice", budget=100_000) == []
        assert len(store.recall("marmalade quince", user="alice", budget=100_000)) == 3
        assert "zebrafinch" in all_text(store.recall(bob_words, user="bob"))
        lookalikes = ["alice ", "ALICE", "%", "*"] + (
            ["alice\x00"] if backend.kind == "sqlite" else []
        )
        for user in lookalikes:
            assert store.recall(bob_words, user=user) == []
        # A conversation of no user is nobody's: not even a user-less caller gets it.
        assert store.recall(bob_words, user=None) == []
        # compose: alice's new conversation with her recall source offers nothing of bob's.
        source = store.recall_source(user="alice", exclude="new")
        mem = store.open("new", user="alice", external=source)
        result = mem.compose(bob_words)
        sent = json.dumps(result["messages"])
        assert result["external"] == [] and "lighthouse password is" not in sent
        # MCP: the tool names the user, and only that user's words come back.
        tools = Tools(store, budget=2_000, max_text=1_000, clock=lambda: datetime(2026, 1, 1))
        text, structured, error = tools.call("recall_across", {"user": "alice", "query": bob_words})
        assert not error and structured["passages"] == [] and "zebrafinch" not in text
        text, _, error = tools.call("recall_across", {"user": "alice", "query": "quince code"})
        assert not error and "marmalade orchard" in text and "zebrafinch" not in text
    # The CLI, in a process of its own (SQLite) or in this one (the test's PostgreSQL schema).
    if backend.kind == "sqlite":
        run = [sys.executable, "-m", "yait_byheart", "recall", "--store", backend.location,
               "--user", "alice", "--json", bob_words]  # fmt: skip
        out = subprocess.run(run, capture_output=True, text=True, check=True, cwd=HERE.parent)
        assert json.loads(out.stdout) == []
    else:
        schema = functools.partial(PostgresStore, schema=backend.schema)
        monkeypatch.setattr("yait_byheart.cli._io.PostgresStore", schema)
        code = cli.main(["recall", "--store", backend.location, "--user", "alice", bob_words])
        assert code == 0 and "zebrafinch" not in capsys.readouterr().out


def test_deletions_and_redactions_by_other_processes_are_out_at_once(backend: Backend) -> None:
    setup = [["append", f"a{k % 2}", "alice", "user", ALICE.format(k=k)] for k in range(6)]
    setup += [["append", "b0", "bob", "user", BOB.format(k=0)]]
    finish(child(backend, setup))
    with backend.store() as store:
        assert len(store.recall("quince 4", user="alice")) == 2  # the index is warm now
        # a0 holds turns k = 0, 2, 4; a1 holds k = 1, 3, 5 (turn k // 2 of each).
        finish(child(backend, [["redact", "a1", 1]]))  # quince 3, blanked elsewhere
        found = store.recall("marmalade quince 3", user="alice", budget=100_000)
        assert "quince 3" not in all_text(found) and "quince 5" in all_text(found)
        finish(child(backend, [["delete", "a0"]]))
        found = store.recall("marmalade quince", user="alice", budget=100_000)
        assert {r["conversation"] for r in found} == {"a1"}
        finish(child(backend, [["append", "a2", "alice", "user", "the quince jam recipe"]]))
        assert store.recall("jam recipe", user="alice")[0]["conversation"] == "a2"
        finish(child(backend, [["delete_user", "alice"]]))
        assert store.recall("marmalade quince jam", user="alice", budget=100_000) == []
        # Another process's recall sees the same.
        lines = finish(
            child(backend, [["recall", "alice", "quince"], ["recall", "bob", "hunter0"]])
        )
        assert json.loads(lines[0]) == []
        assert "hunter0" in json.loads(lines[1])[0]["text"]


def test_a_conversation_recreated_under_a_deleted_ones_name_is_read_as_new(
    tmp_path: Path,
) -> None:
    # SQLite gives a new row the id of the last one deleted: the recreated conversation, at
    # the same id and sequence number, must not be taken for the one the index holds.
    path = tmp_path / "c.db"
    with SQLiteStore(path) as store, SQLiteStore(path) as other:
        store.open("a0", user="a").append("user", "car one")
        assert store.recall("car", user="a")[0]["text"] == "user: car one"
        other.delete("a0")
        other.open("a0", user="a").append("user", "piano two")
        assert [r["text"] for r in store.recall("piano", user="a")] == ["user: piano two"]
        assert store.recall("car", user="a") == []


def test_an_index_with_many_tombstones_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    with SQLiteStore(path) as store, SQLiteStore(path) as other:
        for c in range(8):
            store.open(f"c{c}", user="u").append("user", f"the walnut tree number {c}")
        assert len(store.recall("walnut tree", user="u", budget=100_000)) == 8
        for c in range(5):
            other.delete(f"c{c}")
        found = store.recall("walnut tree", user="u", budget=100_000)
        assert sorted(r["conversation"] for r in found) == ["c5", "c6", "c7"]
        ui = store._recaller._users["u"]
        assert ui.dead == 0 and len(ui.index) == 3  # rebuilt from the rows left


# -- compose, rule 4 ---------------------------------------------------------------------------


def test_recalled_material_arrives_last_framed_and_only_when_it_wins(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        old = store.open("last-week", user="alice")
        old.append("user", "My locker combination is 4-8-15, remember it.", when="1 May 2023")
        old.append("assistant", "Locker combination 4-8-15 noted.", when="1 May 2023")
        source = store.recall_source(user="alice", exclude="today", budget=1_000)
        mem = store.open("today", user="alice", budget=2_000, external=source)
        mem.append("user", "Let's plan the picnic on Sunday by the lake.", when="8 May 2023")
        mem.append("assistant", "Sure: the lake picnic on Sunday.", when="8 May 2023")
        for k in range(4):  # later talk closes the picnic's stretch: ranked, so compared
            mem.append("user", f"Another thing, number {k}, about the weather.", when="8 May 2023")
            mem.append("assistant", f"Weather note {k}.", when="8 May 2023")
        r = mem.compose("what is my locker combination?")
        material = r["messages"][-2]["parts"][0]["text"]
        assert r["external"] == ["the user's conversation 'last-week', 1 May 2023, turns 0-1"]
        assert "[source: the user's conversation 'last-week', 1 May 2023, turns 0-1]" in material
        assert "user: My locker combination is 4-8-15, remember it." in material
        assert r["messages"][-1]["parts"][0]["text"].endswith("what is my locker combination?")
        assert r["size"] <= mem.ceiling * mem.budget
        # The conversation itself answers the picnic: the other chat's words do not come.
        old.append("user", "the picnic basket is blue", when="2 May 2023")
        r = mem.compose("Sunday picnic by the lake: what did we plan?")
        assert r["external"] == []


def test_material_that_passes_the_budget_framed_is_refilled_from_one_ranking(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    with backend.store() as store:
        for c in range(12):
            mem = store.open(f"c{c}", user="alice")
            mem.append("user", ALICE.format(k=c) + ", and the hedge is trimmed " * 4)
    ranked: list[str] = []
    real = ranking.bm25_ranked

    def counted(*args: Any, **kwargs: Any) -> Any:
        ranked.append("ranked")
        return real(*args, **kwargs)

    monkeypatch.setattr(ranking, "bm25_ranked", counted)
    with backend.store() as store:  # a new store object, as a request makes
        plain = store.recall("what is the orchard code?", user="alice", budget=1_000)
        framed = render_external([(f["text"], source_line(f)) for f in plain])
        assert len(framed) > 1_000  # the frame pushes the material over: filled again
        ranked.clear()
        source = store.recall_source(user="alice", budget=1_000)
        material = source("what is the orchard code?")
    assert ranked == ["ranked"]  # one ranking, however often it is filled
    assert material and len(render_external([(m["text"], m["source"]) for m in material])) <= 1_000
    texts = [f["text"] for f in plain]
    assert [m["text"] for m in material] == texts[: len(material)]  # the best, in order


# -- a property: whatever the history, recall returns only live words of the asking user ------

WORDS = ("apple", "birch", "cobalt", "dune", "ember")
OPS = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["a0", "a1", "b0", "n0"]), st.sampled_from(WORDS)),
    st.tuples(st.just("redact"), st.sampled_from(["a0", "a1", "b0"]), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.sampled_from(["a0", "a1", "b0"]), st.just("")),
    st.tuples(st.just("recall"), st.sampled_from(["a", "b"]), st.sampled_from(WORDS)),
)
OWNER = {"a0": "a", "a1": "a", "b0": "b", "n0": None}


def write(
    writer: Any, model: dict[str, list[str | None]], op: str, name: str, arg: Any, serial: int,
    owner: str | None,
) -> None:  # fmt: skip
    """Apply an append, redact or delete of `OPS` to the store and to `model` (conversation ->
    its turns' texts, None for a blanked one)."""
    if op == "append":
        # About 150 characters: a stretch closes every two or three turns.
        text = f"{arg} {name} n{serial} " + "and then some more words " * 5
        writer.open(name, user=owner).append("user", text)
        model.setdefault(name, []).append(text)
    elif op == "redact" and name in model and arg < len(model[name]):
        writer.open(name).redact(arg)
        model[name][arg] = None
    elif op == "delete" and name in model:
        writer.delete(name)
        del model[name]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(OPS, max_size=30))
def test_recall_returns_exactly_the_live_words_of_the_user(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, Any]]
) -> None:
    path = tmp_path_factory.mktemp("p") / "c.db"
    model: dict[str, list[str | None]] = {}  # conversation -> its turns' texts (None: blanked)
    serial = 0
    # Two store objects: one writes, the other recalls (as two processes would).
    with SQLiteStore(path) as writer, SQLiteStore(path) as reader:
        for op, name, arg in ops:
            if op == "append":
                serial += 1
            if op != "recall":
                write(writer, model, op, name, arg, serial, OWNER[name])
            else:
                found = reader.recall(arg, user=name, budget=100_000)
                lines = {line for r in found for line in r["text"].split("\n")}
                live = {
                    f"user: {t}" for c, turns in model.items() if OWNER[c] == name
                    for t in turns if t is not None
                }  # fmt: skip
                assert lines <= live  # only the user's words, as they are now
                assert {t for t in live if arg in t.split()} <= lines  # and all that match


def test_a_store_keeps_the_indexes_of_the_users_recalled_for_last(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "c.db") as store:
        store._recaller.users = 2
        for user in ("u1", "u2", "u3"):
            store.open(f"c-{user}", user=user).append("user", f"{user} grows chestnuts")
        for user in ("u1", "u2", "u3", "u2"):
            assert store.recall("chestnuts", user=user)[0]["conversation"] == f"c-{user}"
        assert list(store._recaller._users) == ["u3", "u2"]
        assert store.recall("chestnuts", user="u1")[0]["conversation"] == "c-u1"  # built again
