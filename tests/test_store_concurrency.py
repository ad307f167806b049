"""Many processes, one conversation (issue 24): bound Memories follow the store, appends are
serialized at the next index, readers never conflict, keys make retries safe, and state written
under other settings never bricks a conversation.  SQLite always; PostgreSQL when
BYHEART_TEST_PG_DSN reaches a server (see tests/test_store.py)."""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval import bench_concurrency as bench
from yait_byheart import Memory
from yait_byheart.store import SQLiteStore, StoreConflictError

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_store
from test_store import Backend, texts

backend = test_store.backend  # the fixture, under the name the tests ask for


def workers_of(b: Backend) -> bench.Backend:
    return bench.Backend(b.kind, b.location, b.schema or "-")


def no_errors(workers: list[bench.Worker]) -> None:
    for worker in workers:
        assert worker.finished, f"{worker.writer} did not finish: {worker.errors}"
        assert worker.errors == [], f"{worker.writer}: {worker.errors[:3]}"


# -- real processes ----------------------------------------------------------------------------


def test_four_processes_appending_and_composing_lose_and_double_nothing(backend: Backend) -> None:
    workers = bench.run(workers_of(backend), "c", procs=4, ops=200, mix=0.5)
    no_errors(workers)
    assert [len(w.acks) for w in workers] == [100] * 4
    assert [w.composes for w in workers] == [100] * 4
    stored = bench.stored_texts(workers_of(backend), "c")
    # Every acknowledged append exactly once, at the index it returned, in its writer's order.
    assert bench.check(stored, workers) == []
    assert len(stored) == 400


def test_four_processes_composing_only_never_fail(backend: Backend) -> None:
    bench.preload(workers_of(backend), "c", 120)
    workers = bench.run(workers_of(backend), "c", procs=4, ops=200, mix=0.0)
    no_errors(workers)
    assert [w.composes for w in workers] == [200] * 4
    with backend.store() as store:
        again = store.open("c")  # whichever process wrote the state last, it loads
        assert again.compose("when does the ferry leave at 7?")["mode"] == "assembled"


def test_killed_mid_batch_and_retried_with_keys_stores_each_once(backend: Backend) -> None:
    seed = random.randrange(1 << 30)
    where = workers_of(backend)
    many = 100_000  # more than any machine appends before the kill
    procs = [bench.spawn(where, "k", f"w{n}", many, 1.0) for n in range(2)]
    outputs: list[list[str]] = [[], []]
    readers = [  # drained as they write: a full pipe would stall them before the kill
        threading.Thread(target=lambda p=p, o=o: o.extend(p.stdout), daemon=True)
        for p, o in zip(procs, outputs, strict=True)
    ]
    for reader in readers:
        reader.start()
    bench.go(procs)
    time.sleep(random.Random(seed).uniform(0.3, 0.8))
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
    killed = []
    for n, (proc, reader) in enumerate(zip(procs, readers, strict=True)):
        proc.wait(timeout=60)
        reader.join(timeout=60)
        assert proc.returncode == -signal.SIGKILL, "a worker finished before it was killed"
        killed.append(bench.parse(f"w{n}", "".join(outputs[n])))
    acked = [len(w.acks) for w in killed]
    assert all(acked), f"seed {seed}: no append was acknowledged before the kill"
    stored = bench.stored_texts(where, "k")
    # Besides the acknowledged turns, at most the one each worker had in flight.
    assert bench.check(stored, killed, extra=2) == [], f"seed {seed}"
    # The clients retry everything from their first message, with the same keys.
    retry = [bench.spawn(where, "k", f"w{n}", acked[n] + 5, 1.0) for n in range(2)]
    bench.go(retry)
    again = [bench.parse(f"w{n}", p.communicate(timeout=60)[0]) for n, p in enumerate(retry)]
    no_errors(again)
    stored = bench.stored_texts(where, "k")
    assert bench.check(stored, again) == [], f"seed {seed}"
    assert sorted(stored) == sorted(
        bench.writer_text(f"w{n}", i) for n in range(2) for i in range(acked[n] + 5)
    ), f"seed {seed}: something lost or doubled"
    # A retried append answers the index the first one got.
    for first, second in zip(killed, again, strict=True):
        assert second.acks[: len(first.acks)] == first.acks


# -- followers in one process ---------------------------------------------------------------------


def test_a_follower_blanks_a_turn_another_writer_redacted(backend: Backend) -> None:
    with backend.store() as s1, backend.store() as s2:
        a = s1.open("c", budget=2_000)
        for k in range(6):
            a.append("user", f"turn {k}: the ferry leaves at {k}")
        a.append("user", "my card is 4929-7731-0263-5548")
        b = s2.open("c")
        assert "4929" in str(b.compose("what is my card?")["messages"])
        a.redact(6)
        a.append("assistant", "noted")
        out = b.compose("what is my card?")
        assert "4929" not in str(out["messages"])
        assert b.to_dict()["turns"] == s1.open("c").to_dict()["turns"]


def test_a_memory_whose_conversation_was_deleted_says_so(backend: Backend) -> None:
    with backend.store() as s1, backend.store() as s2:
        a = s1.open("c")
        a.append("user", "one")
        s2.delete("c")
        for call in (lambda: a.append("user", "two"), lambda: a.compose("one")):
            with pytest.raises(StoreConflictError, match="was deleted"):
                call()
        assert len(a) == 1


WORDS = ["pricing", "euro", "marathon", "rain", "garden", "orchid", "cello", "invoice", "ferry"]
STEPS = st.lists(
    st.tuples(
        st.integers(0, 1),  # which Memory acts
        st.sampled_from(["append", "append", "retry", "compose", "redact"]),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
        st.integers(0, 30),
    ),
    max_size=30,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_two_writers_interleaved_equal_one_writer(backend: Backend, steps: list[Any]) -> None:
    """Any interleaving of two bound Memories' calls stores what one Memory doing the same calls
    in the same order would hold, and each follower is that Memory, turn for turn."""
    name = uuid.uuid4().hex
    reference = Memory(budget=300, chunk=80)
    stores = [backend.store(), backend.store()]
    try:
        mems = [s.open(name, budget=300, chunk=80) for s in stores]
        keys: dict[str, int] = {}  # key -> the turn it named
        for who, op, words, n in steps:
            mem = mems[who]
            if op == "append":
                key = f"k{len(keys)}"
                keys[key] = reference.append("user", words, key=key)
                assert mem.append("user", words, key=key) == keys[key]
            elif op == "retry" and keys:
                key = sorted(keys)[n % len(keys)]
                record = reference.to_dict()["turns"][keys[key]]
                # The same message again; a redacted turn answers any message with its key.
                text = "anything" if record.get("redacted") else record["text"]
                assert mem.append("user", text, key=key) == keys[key]
                assert reference.append("user", text, key=key) == keys[key]  # stores nothing
            elif op == "compose":
                mem.compose(words)
            elif op == "redact" and n < len(reference):
                mem.redact(n)
                reference.redact(n)
        for mem in mems:
            mem.compose("pricing")  # follows
            assert mem.to_dict()["turns"] == reference.to_dict()["turns"]
            assert mem.stretch_count == reference.stretch_count
        again = stores[0].open(name)
        assert again.to_dict()["turns"] == reference.to_dict()["turns"]
    finally:
        for s in stores:
            s.close()


# -- idempotency keys ----------------------------------------------------------------------------


def test_a_key_stores_a_message_once_and_refuses_another_message() -> None:
    mem = Memory()
    assert mem.append("user", "we fixed 55 euro", key="m1") == 0
    assert mem.append("assistant", "noted") == 1
    assert mem.append("user", "we fixed 55 euro", key="m1", when="8 May 2023") == 0  # a retry
    assert len(mem) == 2
    with pytest.raises(ValueError, match=r"key 'm1' already names turn 0 .*55 euro.*other words"):
        mem.append("user", "other words", key="m1")
    with pytest.raises(ValueError, match="key 'm1'"):
        mem.append("assistant", "we fixed 55 euro", key="m1")  # another role: another message
    assert len(mem) == 2
    message = {"role": "user", "parts": [{"type": "text", "text": "the ferry leaves at 7"}]}
    assert mem.append_message(message, key="m2") == 2
    assert mem.append_message(message, key="m2") == 2
    with pytest.raises(TypeError, match="key must be a str"):
        mem.append("user", "x", key=7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key must be 1 to"):
        mem.append("user", "x", key="")
    # Kept in the records, so it survives a round trip.
    data = json.loads(json.dumps(mem.to_dict()))
    assert [t.get("key") for t in data["turns"]] == ["m1", None, "m2"]
    copy = Memory.from_dict(data)
    assert copy.append("user", "we fixed 55 euro", key="m1") == 0
    assert copy.to_dict() == mem.to_dict()
    # A redacted turn keeps its key: a late retry cannot bring its words back.
    copy.redact(0)
    assert copy.append("user", "we fixed 55 euro", key="m1") == 0
    assert len(copy) == 3 and copy.to_dict()["turns"][0]["text"] == ""


def test_a_key_on_two_turns_is_refused_by_from_dict() -> None:
    mem = Memory()
    mem.append("user", "one", key="k")
    mem.append("user", "two", key="j")
    data = mem.to_dict()
    data["turns"][1]["key"] = "k"
    with pytest.raises(ValueError, match=r"turns\[1\].key 'k' is also turns\[0\]'s"):
        Memory.from_dict(data)
    data["turns"][1]["key"] = 5
    with pytest.raises(ValueError, match=r"turns\[1\].key should be a non-empty str"):
        Memory.from_dict(data)


def test_keys_are_shared_by_every_writer_of_a_conversation(backend: Backend) -> None:
    with backend.store() as s1, backend.store() as s2:
        a, b = s1.open("c"), s2.open("c")
        assert a.append("user", "hello", key="msg-1") == 0
        assert b.append("user", "hello", key="msg-1") == 0  # b catches up, finds the key
        with pytest.raises(ValueError, match="msg-1"):
            b.append("user", "goodbye", key="msg-1")
        assert texts(s1.open("c")) == ["hello"]


# -- state written under other settings --------------------------------------------------------

TEN = [f"turn {k}: " + " ".join(WORDS[(k + j) % len(WORDS)] for j in range(40)) for k in range(10)]
VARIANTS: list[dict[str, Any]] = [
    {"budget": 100}, {"budget": 700}, {"chunk": 1}, {"chunk": 50}, {"stability": 0.0},
    {"stability": 1.0}, {"ceiling": 1.0}, {"budget": 100, "chunk": 3, "ceiling": 1.0},
]  # fmt: skip


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: ",".join(f"{k}={v[k]}" for k in v))
def test_a_read_with_any_settings_leaves_state_every_open_loads(
    backend: Backend, variant: dict[str, Any]
) -> None:
    with backend.store() as store:
        mem = store.open("c")
        for k, text in enumerate(TEN):
            mem.append("user" if k % 2 == 0 else "assistant", text[:340])
        mem.compose("marathon rain")
        store.open("c", **variant).compose("marathon and the garden")
        again = store.open("c")  # default settings: the other reader's state is discarded
        assert again.compose("cello invoice")["messages"]
        assert store.open("c", **variant).compose("ferry")["messages"]
        again.append("user", "and one more turn")
        assert store.open("c").compose("marathon")["messages"]


def test_a_state_an_older_version_stored_under_other_settings_is_discarded(
    backend: Backend,
) -> None:
    # What the previous version stored after store.open(c, budget=100).compose(q): a context
    # of entries only a 100-character budget cuts, with no record of the settings it fits.
    with backend.store() as store:
        mem = store.open("c")
        for k, text in enumerate(TEN):
            mem.append("user" if k % 2 == 0 else "assistant", text[:340])
        small = store.open("c", budget=100)
        small.compose("marathon")
        state = small.to_dict()["state"]
        del state["context"]["fits"]
    table = "state" if backend.kind == "sqlite" else "{s}.state"
    backend.sql(f"UPDATE {table} SET state = %s", (json.dumps(state),))
    with backend.store() as store:
        with pytest.raises(ValueError, match="do not fit 10 entries"):
            Memory.from_dict(store.export("c"))  # what every open did, and so every call
        again = store.open("c")
        assert again.compose("marathon")["messages"]
        assert store.open("c", budget=100).compose("marathon")["messages"]


def test_from_dict_with_other_settings_rebuilds_the_selection() -> None:
    mem = Memory()
    for k, text in enumerate(TEN):
        mem.append("user" if k % 2 == 0 else "assistant", text[:340])
    small = Memory.from_dict(mem.to_dict(), budget=100)
    small.compose("marathon")
    data = json.loads(json.dumps(small.to_dict()))
    assert data["state"]["context"]["fits"]["budget"] == 100
    same = Memory.from_dict(data)  # the settings it was chosen under: kept, the call continues
    assert same.to_dict() == small.to_dict()
    assert same.compose("garden") == small.compose("garden")
    for other in ({"budget": 20_000}, {"chunk": 50}, {"stability": 0.2}, {"ceiling": 2.0}):
        fresh = Memory.from_dict(data, **other)  # not its own: discarded, rebuilt
        assert "context" not in fresh.to_dict()["state"], other
        assert fresh.to_dict()["state"]["stats"] == data["state"]["stats"]  # counters kept
        assert fresh.compose("marathon")["reselected"]


# -- damaged rows --------------------------------------------------------------------------------


def test_a_damaged_row_is_named_contained_and_repaired(backend: Backend) -> None:
    with backend.store() as store:
        for name in ("a", "b"):
            mem = store.open(name)
            for k in range(5):
                mem.append("user", f"{name} turn {k} about the ferry")
    keeper = backend.store()
    live = keeper.open("a")  # a Memory another process holds since before the damage
    table = "turns" if backend.kind == "sqlite" else "{s}.turns"
    conv = "(SELECT id FROM conversations WHERE name = 'a')"
    if backend.kind != "sqlite":
        conv = conv.replace("conversations", "{s}.conversations")
    backend.sql(f"UPDATE {table} SET record = '{{\"role\": ' WHERE idx = 2 AND conv = {conv}")
    with backend.store() as store:
        with pytest.raises(
            ValueError, match=r"conversation 'a', turns row 2 is damaged \(not JSON"
        ):
            store.open("a")
        with pytest.raises(ValueError, match="turns row 2"):
            store.export("a")
        assert texts(store.open("b"))[-1] == "b turn 4 about the ferry"  # others stay readable
        found = store.check()
        assert [(d.conversation, d.table, d.row) for d in found] == [("a", "turns", 2)]
        assert store.repair() == found
        assert store.check() == []
        assert texts(store.open("a")) == [f"a turn {k} about the ferry" if k != 2 else ""
                                          for k in range(5)]  # fmt: skip
        assert store.quarantined("a") == [("turns", 2, found[0].problem)]
    # The Memory held since before blanks the turn at its next call, as for a redaction.
    assert live.to_dict()["turns"][2]["text"] == "a turn 2 about the ferry"
    live.compose("ferry")
    assert live.to_dict()["turns"][2]["redacted"] is True
    keeper.close()


def test_junk_bytes_in_a_sqlite_row_are_named(tmp_path: Path) -> None:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        mem = store.open("c")
        for k in range(3):
            mem.append("user", f"turn {k}")
        mem.compose("turn")
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("UPDATE turns SET record = ? WHERE idx = 1", (b"\xff\xfe junk",))
    db.execute("UPDATE state SET state = 'not json'")
    db.commit()
    db.close()
    with SQLiteStore(path) as store:
        with pytest.raises(ValueError, match=r"turns row 1 is damaged \(not UTF-8 text"):
            store.open("c")
        assert [(d.table, d.row) for d in store.check()] == [("turns", 1), ("state", None)]
        store.repair()
        mem = store.open("c")  # the state row was a cache: set aside, rebuilt
        assert [t["text"] for t in mem.to_dict()["turns"]] == ["turn 0", "", "turn 2"]
        assert mem.compose("turn 2")["included"]
