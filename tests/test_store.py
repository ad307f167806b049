"""One suite for both stores: SQLite always, PostgreSQL when BYHEART_TEST_PG_DSN reaches a server.

`.ci/postgres.sh` starts a server and sets BYHEART_TEST_PG_DSN (and BYHEART_TEST_PG_REQUIRED=1,
which turns "no server" into a failure instead of a skip; CI=true does the same).
"""

from __future__ import annotations

import math
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart import store as store_module
from yait_byheart.store import (
    SCHEMA_VERSION,
    PostgresStore,
    SQLiteStore,
    StoreConflictError,
    UnknownConversationError,
)

HERE = Path(__file__).resolve().parent
CHILD = HERE / "store_child.py"
sys.path.insert(0, str(HERE))
from store_child import turn_text  # noqa: E402

PG_DSN = os.environ.get("BYHEART_TEST_PG_DSN", "")
# CI must test PostgreSQL (issue 7): there, a missing server is a failure, not a skip.
PG_REQUIRED = (
    os.environ.get("BYHEART_TEST_PG_REQUIRED") == "1" or os.environ.get("CI", "").lower() == "true"
)

Store = SQLiteStore | PostgresStore


@cache
def pg_unavailable() -> str:
    """Why the PostgreSQL half cannot run here, or "" when it can."""
    if not PG_DSN:
        return "BYHEART_TEST_PG_DSN is not set (bash .ci/postgres.sh starts a server and sets it)"
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed: pip install -e '.[postgres]'"
    try:
        psycopg.connect(PG_DSN, connect_timeout=3).close()
    except psycopg.Error as exc:
        return f"no PostgreSQL server reachable at BYHEART_TEST_PG_DSN: {exc}"
    return ""


class Backend:
    """A store location that the test and its child processes can each open."""

    def __init__(self, kind: str, location: str, schema: str = "") -> None:
        self.kind = kind
        self.location = location
        self.schema = schema

    def store(self, **kwargs: Any) -> Store:
        if self.kind == "sqlite":
            return SQLiteStore(self.location, **kwargs)
        return PostgresStore(self.location, schema=self.schema, **kwargs)

    def child(
        self, conversation: str, start: int, count: int, pause_at: int = -1
    ) -> subprocess.Popen[str]:
        args = [
            sys.executable,
            str(CHILD),
            self.kind,
            self.location,
            self.schema or "-",
            conversation,
            str(start),
            str(count),
        ]
        if pause_at >= 0:
            args.append(str(pause_at))
        path = [p for p in (os.environ.get("PYTHONPATH"), str(HERE.parent)) if p]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n", "the child could not open the store"
        return proc

    def sql(self, statement: str, params: tuple[Any, ...] = ()) -> None:
        """Run raw SQL against the store's tables, as an outside tool would."""
        if self.kind == "sqlite":
            db = sqlite3.connect(self.location)
            with db:
                db.execute(statement.replace("%s", "?"), params)
            db.close()
        else:
            import psycopg

            with psycopg.connect(self.location, autocommit=True) as conn:
                conn.execute(statement.replace("{s}", self.schema), params)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        yield Backend("sqlite", str(tmp_path / "chats.db"))
        return
    reason = pg_unavailable()
    if reason:
        if PG_REQUIRED:
            pytest.fail(
                f"PostgreSQL is required here (CI or BYHEART_TEST_PG_REQUIRED=1) but {reason}"
            )
        pytest.skip(reason)
    schema = "t_" + uuid.uuid4().hex[:12]
    yield Backend("postgres", PG_DSN, schema)
    import psycopg

    with psycopg.connect(PG_DSN, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def texts(mem: Memory) -> list[str]:
    return [t["text"] for t in mem.to_dict()["turns"]]


def file_bytes(path: str) -> bytes:
    """The store's bytes on disk: the database and its write-ahead log."""
    out = b""
    for suffix in ("", "-wal"):
        if os.path.exists(path + suffix):
            out += Path(path + suffix).read_bytes()
    return out


# A conversation long enough that a 150-character budget must select (mode "assembled")
# and rebuilds its selection once along the way (hand-checked: included [3, 6, 11] at the end).
SCRIPT = [
    ("user", "We should settle the pricing: 55 euro a month for the team plan."),
    ("assistant", "Noted, 55 euro a month, with an annual discount."),
    ("user", "My sister ran the Lisbon marathon last Saturday in the rain."),
    ("assistant", "Impressive, a marathon in the rain is hard."),
    ("user", "The garden needs new orchids before the ferry trip."),
    ("assistant", "Orchids like shade; plant them before you leave."),
    ("user", "Back to pricing: should the invoice show VAT separately?"),
    ("assistant", "Yes, show VAT on its own line on every invoice."),
    ("user", "I started learning the cello, scales every morning."),
    ("assistant", "Scales every morning will pay off quickly."),
    ("user", "The quartz lantern from the market broke in the rain."),
    ("assistant", "Quartz is fragile; glue may still save the lantern."),
]  # fmt: skip
WHEN = "1:56 pm on 8 May, 2023"
BUDGET = 150


def play(mem: Memory) -> list[dict[str, Any]]:
    """The same calls on any Memory; returns the compose outputs."""
    out = []
    for k, (role, text) in enumerate(SCRIPT):
        assert mem.append(role, text, when=WHEN) == k
        if k % 4 == 3:
            out.append(mem.compose("what did we decide about pricing?"))
    out.append(mem.compose("how was the marathon?"))
    return out


# -- durability and reopening ----------------------------------------------------------------


def test_reopen_composes_exactly_as_before_closing(backend: Backend) -> None:
    reference = Memory(budget=BUDGET)
    expected = play(reference)
    with backend.store() as store:
        mem = store.open("conv-42", user="alice", budget=BUDGET)
        assert play(mem) == expected
        assert expected[-1]["mode"] == "assembled"  # the sticky selection is what is at stake
    with backend.store() as store:
        again = store.open("conv-42")
        assert len(again) == len(SCRIPT)
        assert again.to_dict() == reference.to_dict()
        # The sticky selection survived: the next composes match the never-closed Memory's.
        for query in ("how was the marathon?", "pricing and VAT on the invoice", "cello"):
            assert again.compose(query) == reference.compose(query)


def test_every_append_is_committed_before_it_returns(backend: Backend) -> None:
    # A second connection (as another process would) sees each turn as soon as append returns.
    with backend.store() as writer, backend.store() as reader:
        mem = writer.open("c")
        for k in range(5):
            mem.append("user", f"turn number {k}")
            assert [t["text"] for t in reader.export("c")["turns"]] == [
                f"turn number {j}" for j in range(k + 1)
            ]


def test_export_equals_to_dict_and_import_round_trips(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("a", budget=BUDGET)
        play(mem)
        exported = store.export("a")
        assert exported == mem.to_dict()
        assert exported["format"] == "yait_byheart.memory"
        store.import_("b", exported, user="bob")
        assert store.conversations(user="bob") == ["b"]
        copy = store.open("b")
        assert copy.to_dict() == mem.to_dict()
        assert copy.compose("marathon") == mem.compose("marathon")


def test_import_of_data_without_state_exports_it_unchanged(backend: Backend) -> None:
    source = Memory(budget=BUDGET)
    play(source)
    data = source.to_dict()
    del data["state"]  # from_dict accepts it: a fresh selection
    with backend.store() as store:
        store.import_("c", data)
        assert store.export("c") == data
        assert store.open("c").compose("cello") == Memory.from_dict(data).compose("cello")


def test_settings_are_stored_and_overridable_on_reopen(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c", budget=1234, chunk=300)
    with backend.store() as store:
        assert store.open("c").to_dict()["config"]["budget"] == 1234
        assert store.open("c", budget=999).budget == 999
        assert store.export("c")["config"]["budget"] == 1234  # an override is not stored


# -- conversations, users, deletion ----------------------------------------------------------


def test_conversations_by_user_and_delete(backend: Backend) -> None:
    with backend.store() as store:
        for name, user in (("c2", "alice"), ("c1", "alice"), ("c3", "bob"), ("c4", None)):
            store.open(name, user=user).append("user", f"hello from {name}")
        assert store.conversations() == ["c1", "c2", "c3", "c4"]
        assert store.conversations(user="alice") == ["c1", "c2"]
        assert store.conversations(user="nobody") == []
        store.delete("c2")
        assert store.conversations() == ["c1", "c3", "c4"]
        assert store.delete_user("alice") == 1
        assert store.delete_user("alice") == 0
        assert store.conversations() == ["c3", "c4"]
        assert texts(store.open("c3")) == ["hello from c3"]
        # A deleted id is free again, and starts empty.
        assert len(store.open("c2")) == 0


def test_unknown_ids_are_clear_errors(backend: Backend) -> None:
    with backend.store() as store:
        store.open("known").append("user", "kept")
        for call in (
            lambda: store.export("nope"),
            lambda: store.delete("nope"),
            lambda: store.open("nope", create=False),
        ):
            with pytest.raises(UnknownConversationError, match="no conversation 'nope'") as info:
                call()
            assert isinstance(info.value, ValueError) and isinstance(info.value, KeyError)
        assert store.conversations() == ["known"]
        assert texts(store.open("known")) == ["kept"]


def test_bad_arguments_are_refused_and_nothing_is_lost(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c", user="alice").append("user", "kept")
        with pytest.raises(TypeError, match="conversation id must be a str"):
            store.open(42)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="non-empty"):
            store.open("")
        with pytest.raises(TypeError, match="user must be a str"):
            store.conversations(user=7)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="belongs to user 'alice'"):
            store.open("c", user="mallory")
        with pytest.raises(ValueError, match="budget"):
            store.open("new", budget=-5)
        with pytest.raises(TypeError, match="data must be a dict"):
            store.import_("d", "not a dict")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not a valid Memory.to_dict"):
            store.import_("d", {"format": "something else", "turns": []})
        with pytest.raises(ValueError, match="already exists"):
            store.import_("c", Memory().to_dict())
        assert store.conversations() == ["c"]
        assert texts(store.open("c")) == ["kept"]


def test_closed_store_refuses_calls_and_its_memories_refuse_changes(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("c")
        mem.append("user", "before closing")
    with pytest.raises(ValueError, match="closed"):
        store.conversations()
    with pytest.raises(ValueError, match="closed"):
        mem.append("user", "after closing")
    assert len(mem) == 1  # the Memory undid the append the store refused
    with backend.store() as store:
        assert texts(store.open("c")) == ["before closing"]


# -- redaction and physical deletion ---------------------------------------------------------

SECRET = "card 4929-7731-0263-5548"


def test_redact_rewrites_the_stored_row(backend: Backend) -> None:
    reference = Memory(budget=BUDGET)
    with backend.store() as store:
        mem = store.open("c", budget=BUDGET)
        for m in (mem, reference):
            play(m)
            m.append("user", f"my {SECRET}, please remember it")
            m.compose("what is my card?")
            m.redact(len(SCRIPT))
    with backend.store() as store:
        again = store.open("c")
        record = again.to_dict()["turns"][len(SCRIPT)]
        assert record["redacted"] is True and record["text"] == ""
        assert again.to_dict() == reference.to_dict()
        assert again.compose("what is my card?") == reference.compose("what is my card?")


def test_redacted_and_deleted_text_is_gone_from_the_file_bytes(tmp_path: Path) -> None:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        keep = store.open("keep", user="u-keep")
        keep.append("user", "the lantern-7Q2 stays")
        mem = store.open("c", user="u-zq81")
        mem.append("user", f"my {SECRET}")
        mem.append("user", "the orchid-K9X is a second secret")
        mem.compose("card")
        other = store.open("other", user="u-zq81")
        other.append("user", "ferry-P4L, a third secret")
        # Read while the store is open, as an attacker with the disk would.
        before = file_bytes(path)
        assert SECRET.encode() in before  # so the checks below can fail
        mem.redact(0)
        assert SECRET.encode() not in file_bytes(path)
        assert b"orchid-K9X" in file_bytes(path)
        store.delete("c")
        assert b"orchid-K9X" not in file_bytes(path)
        assert store.delete_user("u-zq81") == 1
        after = file_bytes(path)
        assert b"ferry-P4L" not in after and b"u-zq81" not in after
        assert b"lantern-7Q2" in after  # the other user's data is untouched


def test_a_reader_holding_an_old_snapshot_delays_the_purge_with_a_warning(tmp_path: Path) -> None:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path, timeout=0.2) as store:
        store.open("c").append("user", f"my {SECRET}")
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM turns").fetchone() == (1,)  # snapshot held
        with pytest.warns(RuntimeWarning, match="another connection still reads"):
            store.delete("c")
        assert store.conversations() == []
        assert SECRET.encode() in file_bytes(path)  # the old page: the warning was no false alarm
        reader.execute("COMMIT")
        reader.close()
        assert store.purge() is True
        assert SECRET.encode() not in file_bytes(path)


# -- several writers and readers -------------------------------------------------------------


def test_two_writers_on_one_conversation_follow_each_other(backend: Backend) -> None:
    with backend.store() as s1, backend.store() as s2:
        a = s1.open("c")
        a.append("user", "one")
        b = s2.open("c")  # sees "one"
        assert a.append("assistant", "two") == 1
        assert b.append("user", "three") == 2  # b caught up first: the next index, no error
        assert texts(b) == ["one", "two", "three"]
        b.compose("anything")  # composing never conflicts either
        assert a.compose("three")["included"] == [0, 1, 2]  # a caught up before composing
        # The same holds for two opens in one store.
        c = s1.open("c")
        assert c.append("assistant", "four from c") == 3
        assert a.append("user", "five from a") == 4
        everything = ["one", "two", "three", "four from c", "five from a"]
        assert texts(s2.open("c")) == everything
        for mem in (b, c):  # each follows at its next call
            mem.compose("five")
            assert texts(mem) == everything
        # Each follower is the Memory a fresh open builds, turn for turn.
        assert a.to_dict()["turns"] == s1.open("c").to_dict()["turns"] == b.to_dict()["turns"]


def test_a_memory_whose_conversation_was_deleted_refuses_changes(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("c")
        mem.append("user", "one")
        store.delete("c")
        with pytest.raises(StoreConflictError, match="was deleted"):
            mem.append("user", "two")
        assert store.conversations() == []


def wait(proc: subprocess.Popen[str]) -> list[str]:
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, f"child failed: {out!r}"
    return out.split()


def test_two_processes_append_to_different_conversations(backend: Backend) -> None:
    n = 300
    a, b = backend.child("a", 0, n), backend.child("b", 0, n)
    wait(a), wait(b)
    with backend.store() as store:
        for name in ("a", "b"):
            assert texts(store.open(name)) == [turn_text(name, i) for i in range(n)]


def test_a_reader_reads_while_another_process_writes(backend: Backend) -> None:
    n, pause = 600, 150
    proc = backend.child("w", 0, n, pause_at=pause)
    assert proc.stdout is not None and proc.stdin is not None
    expected = [turn_text("w", i) for i in range(n)]
    with backend.store() as reader:
        for line in iter(proc.stdout.readline, "paused\n"):
            assert line.strip().isdigit()
        assert texts(reader.open("w", create=False)) == expected[:pause]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        seen = [pause]
        while proc.poll() is None:
            got = texts(reader.open("w", create=False))
            assert got == expected[: len(got)]  # a prefix, never a torn or reordered read
            assert len(got) >= seen[-1]
            seen.append(len(got))
        proc.communicate(timeout=60)
        assert texts(reader.open("w")) == expected


def test_sigkill_mid_append_leaves_an_exact_prefix(backend: Backend) -> None:
    # More appends than any machine does in the 0.4 s before the kill (~50 us each here), so
    # the SIGKILL always lands mid-stream; the moment within it is random.
    n = 50_000
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    start = 0
    for _round in range(2):  # the second round continues a conversation that was killed
        proc = backend.child("k", start, n)
        assert proc.stdout is not None
        time.sleep(rng.uniform(0.02, 0.4))
        proc.send_signal(signal.SIGKILL)
        lines = proc.stdout.read().split()  # each: a turn whose append had returned
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the child finished before it was killed"
        acked = int(lines[-1]) + 1 if lines else start
        with backend.store() as store:
            got = texts(store.open("k"))
        # Everything acknowledged is there; at most the one in flight besides; nothing else.
        assert acked <= len(got) <= acked + 1, f"seed {seed}: {len(got)} rows, {acked} acked"
        assert got == [turn_text("k", i) for i in range(len(got))], f"seed {seed}"
        start = len(got)


# -- files and schemas that are not ours -----------------------------------------------------


def test_a_file_that_is_not_a_store_is_refused_untouched(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_bytes(b"shopping list: lanterns, orchids\n" * 50)
    with pytest.raises(ValueError, match="not a SQLite database"):
        SQLiteStore(junk)
    assert junk.read_bytes() == b"shopping list: lanterns, orchids\n" * 50
    other = tmp_path / "app.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.execute("INSERT INTO invoices (total) VALUES (55.0)")
    db.commit()
    db.close()
    before = other.read_bytes()
    with pytest.raises(ValueError, match="not a byheart store"):
        SQLiteStore(other)
    assert other.read_bytes() == before
    with pytest.raises(ValueError, match="directory"):
        SQLiteStore(tmp_path)


def test_a_schema_from_a_newer_version_is_refused_and_kept(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c").append("user", "written by the old version")
    table = "meta" if backend.kind == "sqlite" else "{s}.meta"
    backend.sql(
        f"UPDATE {table} SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    with pytest.raises(ValueError, match="newer yait_byheart"):
        backend.store()
    backend.sql(
        f"UPDATE {table} SET value = %s WHERE key = 'schema_version'", (str(SCHEMA_VERSION),)
    )
    with backend.store() as store:
        assert texts(store.open("c")) == ["written by the old version"]


# -- index snapshots ----------------------------------------------------------------------------


def snapshot_rows(backend: Backend) -> int:
    if backend.kind == "sqlite":
        db = sqlite3.connect(backend.location)
        (n,) = db.execute("SELECT count(*) FROM snapshots").fetchone()
        db.close()
        return int(n)
    import psycopg

    with psycopg.connect(backend.location, autocommit=True) as conn:
        row = conn.execute(f"SELECT count(*) FROM {backend.schema}.snapshots").fetchone()
        return int(row[0])


def long_memory(turns: int = 60) -> Memory:
    mem = Memory(budget=BUDGET)
    for k in range(turns):
        role, text = SCRIPT[k % len(SCRIPT)]
        mem.append(role, f"{text} (round {k // len(SCRIPT)})", when=WHEN)
    return mem


def test_reopening_loads_the_index_snapshot_and_composes_as_before(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = long_memory()
    with backend.store() as store:
        store.import_("c", reference.to_dict())
    assert snapshot_rows(backend) == 1  # import writes it
    with backend.store() as store:
        again = store.open("c")
        # Every stretch came from the snapshot; none was re-indexed.
        assert again.snapshot_stretches == reference.stretch_count > 10
        # The last two are about the user: ranked in the user's-words index, from the snapshot.
        queries = ("how was the marathon in round 3?", "VAT on the invoice", "cello",
                   "what did I say about my sister?", "my marathon in the rain?")  # fmt: skip
        for query in queries:
            assert again.compose(query) == reference.compose(query)


def test_closing_refreshes_the_snapshot_of_a_grown_conversation(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", 5)
    reference = Memory(budget=BUDGET)
    with backend.store() as store:
        mem = store.open("c", budget=BUDGET)
        for m in (mem, reference):
            for k in range(8):
                m.append(*SCRIPT[k], when=WHEN)
        assert snapshot_rows(backend) == 0  # three stretches so far: below the threshold
        for m in (mem, reference):
            for k in range(8, 40):
                m.append(*SCRIPT[k % len(SCRIPT)], when=WHEN)
    assert snapshot_rows(backend) == 1  # written on close
    with backend.store() as store:
        snapshot = store._b_load("c").snapshot  # type: ignore[union-attr]
        loaded = Memory.from_dict(store.export("c"), index_snapshot=snapshot)
        assert loaded.snapshot_stretches == reference.stretch_count
        assert store.open("c").compose("pricing") == reference.compose("pricing")


def test_a_store_opened_per_request_keeps_its_snapshot_close_to_the_rows(
    backend: Backend,
) -> None:
    # Each request opens the store, appends an exchange and closes it. The snapshot is written
    # again once it lacks about sqrt(2n) of n stretches, not 1,000: a reopening indexes little.
    lacking = []
    for k in range(0, 160, 2):
        with backend.store() as store:
            mem = store.open("c", budget=BUDGET)
            for role, text in SCRIPT[k % len(SCRIPT) : k % len(SCRIPT) + 2]:
                mem.append(role, f"{text} ({k})", when=WHEN)
            if k % 20 == 0:
                lacking.append((mem.stretch_count - mem.snapshot_stretches, mem.stretch_count))
    assert lacking[-1][1] > 100  # enough stretches that 1,000 would never have been reached
    assert all(0 <= gap <= math.isqrt(2 * n) + 2 for gap, n in lacking[1:])


# A writer process that appends and ends without closing its store: with `hang`, a daemon
# thread is inside a call (holding the Memory's lock) when the process ends; with `fork`, a
# forked child ends first (it inherited the store: closing it is the parent's business).
UNCLOSED_WRITER = """
import os, sqlite3, sys, threading, time
from yait_byheart import store as store_module
store_module.SNAPSHOT_EVERY = 5
store = store_module.SQLiteStore(sys.argv[1])
mem = store.open("c", budget=300)
for i in range(60):
    mem.append("user" if i % 2 == 0 else "assistant", f"turn {i}: pricing of the cello {i}")
if sys.argv[2] == "hang":
    held = threading.Event()
    def hold():
        with mem._lock:
            held.set()
            time.sleep(3600)
    threading.Thread(target=hold, daemon=True).start()
    held.wait()
if sys.argv[2] == "fork":
    child = os.fork()
    if child == 0:
        sys.exit(0)  # an ordinary exit: atexit handlers run
    os.waitpid(child, 0)
    (n,) = sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM snapshots").fetchone()
    assert n == 0, "the forked child wrote a snapshot through its parent's connection"
print(mem.stretch_count)
"""


@pytest.mark.parametrize("how", ["idle", "hang", "fork"])
def test_a_process_that_ends_without_closing_its_store_leaves_a_snapshot(
    tmp_path: Path, how: str
) -> None:
    if how == "fork" and not hasattr(os, "fork"):
        pytest.skip("no os.fork here")
    path = str(tmp_path / "chats.db")
    hang = how == "hang"
    args = [sys.executable, "-c", UNCLOSED_WRITER, path, how]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, check=True)
    stretches = int(out.stdout)
    with SQLiteStore(path) as store:
        mem = store.open("c")
        assert len(mem) == 60 and mem.stretch_count == stretches > 5
        # Closed at exit as `with` would have: the snapshot covers every stretch. A daemon
        # thread inside a call could hold the lock for ever: the exit then writes nothing.
        assert mem.snapshot_stretches == (0 if hang else stretches)


def test_redaction_deletes_the_snapshot_with_the_words_it_indexed(tmp_path: Path) -> None:
    path = str(tmp_path / "chats.db")
    mem = long_memory(30)
    mem.append("user", "the zebras of Quokkaville ate my invoice")
    mem.append("user", "and then the ferry left")  # closes the stretch above: now it is indexed
    with SQLiteStore(path) as store:
        store.import_("c", mem.to_dict())
        # The snapshot holds stems ("quokkavil"), not the words: check the stem itself.
        assert b"quokkavil" in file_bytes(path)
        bound = store.open("c")
        bound.redact(len(bound) - 2)
        assert b"quokkavil" not in file_bytes(path) and b"Quokkaville" not in file_bytes(path)
        bound.append("user", "so the invoice is gone")
    with SQLiteStore(path) as store:
        out = store.open("c").compose("quokkaville zebras")
        assert "Quokkaville" not in str(out["messages"][:-1])  # the last one is the query
        assert len(mem) - 2 not in out["included"]


def test_a_snapshot_that_does_not_match_the_rows_is_ignored() -> None:
    reference = long_memory()

    # A prefix of the same conversation is a valid snapshot: the rest is indexed on top.
    def restored(snapshot: bytes) -> int:
        return Memory.from_dict(reference.to_dict(), index_snapshot=snapshot).snapshot_stretches

    shorter = long_memory(40)
    mem = Memory.from_dict(reference.to_dict(), index_snapshot=shorter.index_snapshot())
    assert 0 < mem.snapshot_stretches == shorter.stretch_count < reference.stretch_count
    # Same stretch boundaries, other words: refused (the texts' checksum differs).
    other = Memory(budget=BUDGET)
    for k in range(60):
        role, text = SCRIPT[k % len(SCRIPT)]
        other.append(role, f"{text.swapcase()} (round {k // len(SCRIPT)})", when=WHEN)
    assert other.to_dict()["turns"][-1].get("opens") == reference.to_dict()["turns"][-1].get(
        "opens"
    )
    assert other.stretch_count == reference.stretch_count
    assert restored(other.index_snapshot()) == 0
    redacted = long_memory()
    redacted.redact(3)
    snapshot = redacted.index_snapshot()
    assert restored(snapshot) == 0
    for broken in (b"", b"BHSN", snapshot[:-7], b"x" * 64):
        assert restored(broken) == 0
    assert restored(reference.index_snapshot()) > 0
    assert mem.compose("marathon") == reference.compose("marathon")


def test_a_store_of_the_previous_schema_is_upgraded_in_place(backend: Backend) -> None:
    with backend.store() as store:
        store.open("c").append("user", "written by schema 1")
    table = "meta" if backend.kind == "sqlite" else "{s}.meta"
    backend.sql("DROP TABLE snapshots" if backend.kind == "sqlite" else "DROP TABLE {s}.snapshots")
    backend.sql(f"UPDATE {table} SET value = '1' WHERE key = 'schema_version'")
    with backend.store() as store:
        assert texts(store.open("c")) == ["written by schema 1"]
        store.import_("d", long_memory().to_dict())
    assert snapshot_rows(backend) == 1


def test_a_turn_removed_behind_the_stores_back_is_reported_not_shifted(backend: Backend) -> None:
    with backend.store() as store:
        mem = store.open("c")
        for word in ("zero", "one", "two"):
            mem.append("user", word)
    table = "turns" if backend.kind == "sqlite" else "{s}.turns"
    backend.sql(f"DELETE FROM {table} WHERE idx = 1")
    with backend.store() as store:
        with pytest.raises(ValueError, match="has no turn 1"):
            store.open("c")
        assert store.conversations() == ["c"]


def test_a_postgres_schema_of_something_else_is_refused(backend: Backend) -> None:
    if backend.kind != "postgres":
        pytest.skip("PostgreSQL only: a schema that holds another application's tables")
    backend.sql("CREATE SCHEMA {s}")
    backend.sql("CREATE TABLE {s}.invoices (id int)")
    with pytest.raises(ValueError, match="not a byheart store"):
        backend.store()


def test_postgres_store_names_the_extra_when_psycopg_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # makes `import psycopg` fail
    extra = r"pip install 'psycopg\[binary\]>=3\.1'.*pip install -e '\.\[postgres\]'"
    with pytest.raises(ImportError, match=extra):
        PostgresStore("postgresql://localhost/none")


def test_store_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="synchronous must be one of"):
        SQLiteStore("x.db", synchronous="SOMETIMES")
    with pytest.raises(TypeError, match="path must be"):
        SQLiteStore(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="schema must be"):
        PostgresStore("postgresql://localhost/none", schema="drop table")


# -- the invariant: a stored Memory is the Memory it would have been --------------------------

WORDS = ["pricing", "euro", "marathon", "rain", "garden", "orchid", "cello", "invoice", "ferry"]
OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("append"),
            st.sampled_from(["user", "assistant"]),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
        ),
        st.tuples(st.just("compose"), st.sampled_from(WORDS), st.just("")),
        st.tuples(st.just("redact"), st.integers(0, 40), st.just("")),
        st.tuples(st.just("reopen"), st.just(""), st.just("")),
    ),
    max_size=40,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_any_sequence_of_calls_survives_reopening(backend: Backend, ops: list[Any]) -> None:
    name = uuid.uuid4().hex  # a fresh conversation per example, in the test's one store
    reference = Memory(budget=200, chunk=80)
    store = backend.store()
    mem = store.open(name, budget=200, chunk=80)
    try:
        for op, a, b in ops:
            if op == "append":
                assert mem.append(a, b) == reference.append(a, b)
            elif op == "compose":
                assert mem.compose(a) == reference.compose(a)
            elif op == "redact" and a < len(reference):
                mem.redact(a)
                reference.redact(a)
            elif op == "reopen":
                store.close()
                store = backend.store()
                mem = store.open(name)
        store.close()
        store = backend.store()
        again = store.open(name)
        assert again.to_dict() == reference.to_dict()
        assert again.compose("pricing") == reference.compose("pricing")
    finally:
        store.close()
