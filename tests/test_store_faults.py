"""A broken or refusing store fails in one line, as the store's own error (issue 37).

Each failure an operator meets is injected as it happens, on both backends where it applies:

* a damaged file: 4,096 random bytes written at offset 12,288 of a copy (SQLite only: a server
  guards its own pages);
* a read-only store: faithfully, a file of mode 444 opened by another user (a forked child that
  drops to uid 65534 when the tests run as root, whom no file mode stops; the file's own mode
  otherwise); and on both backends a connection that refuses writes (SQLite's
  ``PRAGMA query_only``, PostgreSQL's ``default_transaction_read_only``), which the database
  reports exactly as it reports a read-only store;
* a full disk: SQLite's ``PRAGMA max_page_count`` makes it report "database or disk is full"
  (no root mount of a tiny file system needed);
* a missing folder; a lock held past the timeout (both backends); a dropped PostgreSQL
  connection (``pg_terminate_backend``).

For each: the library's exception type (a `StoreError`, whose ``retry`` says whether trying
again can help), the command line's exit code, and the MCP tool's answer.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import stat
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from yait_byheart import Memory
from yait_byheart.cli import main
from yait_byheart.mcp_server._tools import Tools
from yait_byheart.store import (
    PostgresStore,
    SelectionNotSavedWarning,
    SQLiteStore,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreNotFoundError,
    StoreReadOnlyError,
    StoreUnavailableError,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_store
from test_store import Backend

backend = test_store.backend  # the fixture, under the name the tests ask for

NOBODY = 65534
WORDS = "the oven costs 18,900 euro and the ferry leaves at nine from pier four"


def _fill(store: SQLiteStore | PostgresStore, conversations: int = 3, turns: int = 40) -> None:
    for c in range(conversations):
        mem = store.open(f"c{c}", budget=2_000)
        for i in range(turns):
            mem.append("user" if i % 2 == 0 else "assistant", f"{WORDS} {c}.{i} " * 8)


def _tools(store: SQLiteStore | PostgresStore) -> Tools:
    return Tools(store, budget=2_000, max_text=10_000, clock=lambda: datetime(2026, 12, 4, 12))


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> None:
    """What the command line printed on failure: one line, no traceback."""
    assert err.count("\n") == 1 and "Traceback" not in err, err


# -- a damaged file --------------------------------------------------------------------------


@pytest.fixture
def damaged(tmp_path: Path) -> Iterator[str]:
    """A store file with 4,096 random bytes written at offset 12,288 (pages inside its data)."""
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        _fill(store)
    with open(path, "r+b") as f:
        f.seek(12_288)
        f.write(random_bytes(4_096))
    yield path


def random_bytes(n: int) -> bytes:
    return random.Random(37).randbytes(n)


def test_a_damaged_file_is_reported_by_check_and_refused_elsewhere(damaged: str) -> None:
    before = Path(damaged).read_bytes()
    with SQLiteStore(damaged) as store:
        assert store.conversations() == ["c0", "c1", "c2"]  # what still reads, reads
        found = store.check()  # the diagnostic survives exactly this
        assert found and {d.table for d in found} == {"file"}
        assert any(d.conversation == "" and "SQLite's own check" in d.problem for d in found)
        for call in (lambda: store.open("c1"), lambda: store.export("c1"), store.repair):
            with pytest.raises(StoreCorruptError) as caught:
                call()
            message = str(caught.value)
            assert damaged in message and "damaged" in message and "byheart salvage" in message
            assert "\n" not in message and not caught.value.retry
    assert Path(damaged).read_bytes() == before  # repair wrote nothing into damaged pages


def test_the_command_line_reports_a_damaged_file(
    damaged: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _cli(capsys, "check", "--store", damaged)
    assert code == 1 and err == ""
    assert "file: the database file is damaged" in out and "byheart salvage" in out
    assert "`repair` sets them aside" not in out  # that advice is for rows, not pages
    code, out, _ = _cli(capsys, "check", "--store", damaged, "--json")
    assert code == 1 and {d["table"] for d in json.loads(out)} == {"file"}
    for command in (["show", "c1"], ["repair"], ["export", "c1"], ["compose", "c1", "oven"]):
        code, out, err = _cli(capsys, command[0], "--store", damaged, *command[1:])
        assert code == 3 and out == "", command
        _one_line(err)
        assert "the database file is damaged" in err and "byheart salvage" in err


def test_mcp_says_a_damaged_file_is_not_worth_retrying(damaged: str) -> None:
    with SQLiteStore(damaged) as store:
        text, _, is_error = _tools(store).call("recall", {"conversation": "c1", "query": "oven"})
    assert is_error and "damaged" in text and "try again" not in text


# -- a read-only store -------------------------------------------------------------------------


def as_another_user(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`work()` run by a user who does not own the store file: a forked child dropped to uid
    65534 when the tests run as root (no file mode stops root); else this process, whose
    uid the file's mode 444 already refuses.  Returns what `work` returned."""
    if os.geteuid() != 0:
        return work()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.close(read)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            with warnings.catch_warnings():
                result = work()
        except BaseException as exc:  # reported, so the parent fails with it
            result = {"crashed": f"{type(exc).__name__}: {exc}"}
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data))


@pytest.fixture
def read_only_file() -> Iterator[str]:
    """A store of mode 444 in a folder every user may write (for SQLite's -shm file), as a
    shared folder is; a folder outside pytest's own, which only its owner may enter."""
    folder = tempfile.mkdtemp(prefix="byheart-ro-")
    os.chmod(folder, 0o1777)
    path = os.path.join(folder, "chats.db")
    with SQLiteStore(path) as store:
        _fill(store, conversations=1)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    yield path
    shutil.rmtree(folder)


def test_a_read_only_file_answers_reads_and_refuses_writes_clearly(read_only_file: str) -> None:
    before = Path(read_only_file).read_bytes()

    def work() -> dict[str, Any]:
        out: dict[str, Any] = {}
        with SQLiteStore(read_only_file) as store:
            out["conversations"] = store.conversations()
            mem = store.open("c0")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = mem.compose("when does the ferry leave?")
            out["composed"] = result["chars"] > 0
            out["warned"] = [f"{w.category.__name__}: {w.message}" for w in caught]
            try:
                mem.append("user", "one more")
            except StoreError as exc:
                out["append"] = [type(exc).__name__, str(exc), exc.retry]
            out["turns"] = len(mem)
            tools = _tools(store)
            text, _, is_error = tools.call("remember", {"conversation": "c0", "text": "hello"})
            out["mcp"] = [text, is_error]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SelectionNotSavedWarning)
                text, _, is_error = tools.call("recall", {"conversation": "c0", "query": "ferry"})
            out["recall"] = [text, is_error]
        out["cli"] = [main([c, "c0", "--store", read_only_file]) for c in ("show", "delete")]
        return out

    out = as_another_user(work)
    assert "crashed" not in out, out
    assert out["conversations"] == ["c0"] and out["composed"]
    assert len(out["warned"]) == 1 and out["warned"][0].startswith("SelectionNotSavedWarning")
    assert "read-only" in out["warned"][0] and "not saved" in out["warned"][0]
    kind, message, retry = out["append"]
    assert kind == "StoreReadOnlyError" and not retry and read_only_file in message
    assert "write access" in message and "\n" not in message
    assert out["turns"] == 40  # the refused turn is not held either
    text, is_error = out["mcp"]
    assert is_error and "read-only" in text and "try again" not in text
    text, is_error = out["recall"]
    assert not is_error and "ferry" in text  # for the caller a recall is a read
    assert out["cli"] == [0, 3]  # show reads; delete is refused in one line, exit 3
    assert Path(read_only_file).read_bytes() == before


def test_a_read_only_folder_is_named_as_the_fix(read_only_file: str) -> None:
    """WAL mode needs the -shm file beside the store even to read: a folder no one may write
    leaves SQLite nothing to read with; the error says so."""
    if os.geteuid() != 0:
        pytest.skip("needs another user: this user owns the folder and may chmod it back")
    os.chmod(os.path.dirname(read_only_file), 0o755)

    def work() -> dict[str, Any]:
        try:
            SQLiteStore(read_only_file)
        except StoreError as exc:
            return {"error": [type(exc).__name__, str(exc)]}
        return {"error": None}

    out = as_another_user(work)
    kind, message = out["error"]
    assert kind == "StoreReadOnlyError" and "folder is not writable" in message


def refuse_writes(store: SQLiteStore | PostgresStore) -> None:
    """Make the store's connection refuse writes, as a read-only database does."""
    if isinstance(store, SQLiteStore):
        store._conn.execute("PRAGMA query_only = ON")
    else:
        store._conn.execute("SET default_transaction_read_only = on")


def test_a_store_refusing_writes_on_both_backends(backend: Backend) -> None:
    with backend.store() as store:
        _fill(store, conversations=1, turns=6)
        mem = store.open("c0")
        refuse_writes(store)
        with pytest.warns(SelectionNotSavedWarning, match="read-only"):
            assert mem.compose("the ferry")["messages"]
        for write in (
            lambda: mem.append("user", "refused"),
            lambda: mem.redact(0),
            lambda: store.delete("c0"),
            lambda: store.import_("c9", Memory().to_dict()),
        ):
            with pytest.raises(StoreReadOnlyError) as caught:
                write()
            assert not caught.value.retry and "read-only" in str(caught.value)
        assert len(mem) == 6 and mem.to_dict()["turns"][0]["text"].startswith(WORDS)
    with backend.store() as store:
        assert store.conversations() == ["c0"] and len(store.open("c0")) == 6


# -- a full disk -------------------------------------------------------------------------------


def test_a_full_disk_stores_nothing_and_says_so(tmp_path: Path) -> None:
    path = str(tmp_path / "chats.db")
    with SQLiteStore(path) as store:
        _fill(store, conversations=1, turns=4)
        mem = store.open("c0")
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages}")  # "database or disk is full"
        with pytest.raises(StoreFullError) as caught:
            mem.append("user", "x" * 50_000)
        assert "full" in str(caught.value) and not caught.value.retry
        big = Memory()
        big.append("user", "y" * 50_000)
        with pytest.raises(StoreFullError):
            store.import_("big", big.to_dict())
        assert len(mem) == 4
        text, _, is_error = _tools(store).call(
            "remember", {"conversation": "c0", "text": "z" * 9_000}
        )
        assert is_error and "full" in text and "try again" not in text
    with SQLiteStore(path) as store:
        assert store.conversations() == ["c0"] and len(store.open("c0")) == 4


# -- a missing folder --------------------------------------------------------------------------


def test_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "gone" / "chats.db")
    with pytest.raises(StoreNotFoundError) as caught:
        SQLiteStore(path)
    assert isinstance(caught.value, FileNotFoundError) and "does not exist" in str(caught.value)
    exported = tmp_path / "c.json"
    exported.write_text(json.dumps(Memory().to_dict()))
    code, out, err = _cli(capsys, "import", "c", str(exported), "--store", path)
    assert code == 3 and out == "" and "does not exist" in err
    _one_line(err)
    assert not (tmp_path / "gone").exists()


# -- a lock held past the timeout --------------------------------------------------------------


@pytest.fixture
def locked(backend: Backend) -> Iterator[tuple[Backend, Callable[[], None]]]:
    """The backend, and a function that holds conversation c0 locked by another connection."""
    with backend.store() as store:
        _fill(store, conversations=1, turns=4)
    held: list[Any] = []

    def hold() -> None:
        if backend.kind == "sqlite":
            conn = sqlite3.connect(backend.location, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
        else:
            import psycopg

            conn = psycopg.connect(backend.location)  # a transaction until commit
            conn.execute(f"SELECT * FROM {backend.schema}.conversations FOR UPDATE")
        held.append(conn)

    yield backend, hold
    for conn in held:
        conn.rollback() if backend.kind == "postgres" else conn.execute("ROLLBACK")
        conn.close()


def _waiting_store(backend: Backend) -> SQLiteStore | PostgresStore:
    if backend.kind == "sqlite":
        return SQLiteStore(backend.location, timeout=0.2)
    # The server's own limit on waiting for a row lock (the application sets it in the DSN).
    dsn = backend.location + ("&" if "?" in backend.location else "?")
    return PostgresStore(dsn + "options=-c%20lock_timeout%3D200", schema=backend.schema)


def test_a_lock_held_past_the_timeout_says_try_again(
    locked: tuple[Backend, Callable[[], None]],
) -> None:
    backend, hold = locked
    with _waiting_store(backend) as store:
        mem = store.open("c0")
        hold()
        with pytest.raises(StoreUnavailableError) as caught:
            mem.append("user", "waits")
        assert caught.value.retry and "locked" in str(caught.value)
        assert "try again" in str(caught.value)
        text, _, is_error = _tools(store).call(
            "remember", {"conversation": "c0", "text": "waits too"}
        )
        assert is_error and "try again" in text
        assert len(mem) == 4


# -- a dropped PostgreSQL connection -----------------------------------------------------------


def test_a_dropped_connection_fails_one_call_and_the_next_reconnects(backend: Backend) -> None:
    if backend.kind != "postgres":
        pytest.skip("a file has no connection to lose")
    import psycopg

    with backend.store() as store:
        _fill(store, conversations=1, turns=4)
        mem = store.open("c0")

        def drop() -> None:
            pid = store._conn.info.backend_pid
            with psycopg.connect(backend.location, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))

        drop()
        with pytest.raises(StoreUnavailableError) as caught:
            mem.append("user", "lost", key="m5")
        assert caught.value.retry and "connection" in str(caught.value)
        assert "try again" in str(caught.value) and "\n" not in str(caught.value)
        assert mem.append("user", "lost", key="m5") == 4  # the next call reconnected
        drop()
        text, _, is_error = _tools(store).call("recall", {"conversation": "c0", "query": "x"})
        assert is_error and "try again" in text
        assert store.conversations() == ["c0"]
    with backend.store() as store:
        assert len(store.open("c0")) == 5


def test_an_unreachable_server_is_one_line_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("psycopg")
    dsn = "postgresql://nobody@127.0.0.1:9/none"  # port 9: discard, nothing listens
    with pytest.raises(StoreUnavailableError, match="cannot reach the database server"):
        PostgresStore(dsn, connect_timeout=2)
    code, _, err = _cli(capsys, "conversations", "--store", dsn)
    assert code == 3
    _one_line(err)


# -- text no store can encode ------------------------------------------------------------------

BAD = "bad \ud800"  # a lone surrogate: a valid str, not Unicode text


@pytest.mark.parametrize("bound", [False, True])
def test_a_lone_surrogate_is_refused_at_the_call_bound_or_not(
    backend: Backend, bound: bool
) -> None:
    with backend.store() as store:
        mem = store.open("c") if bound else Memory()
        mem.append("user", "fine words")
        calls: list[Callable[[], object]] = [
            lambda: mem.append("user", BAD),
            lambda: mem.append("user", "ok", source=BAD, kind="supplied"),
            lambda: mem.append_message({"role": "user", "parts": [{"type": "text", "text": BAD}]}),
            lambda: mem.compose(BAD),
        ]
        for call in calls:
            with pytest.raises(ValueError, match=r"lone surrogate \('\\ud800' at character 4\)"):
                call()
        assert [t["text"] for t in mem.to_dict()["turns"]] == ["fine words"]
        if bound:
            assert len(store.open("c")) == 1  # nothing stored


def test_mcp_refuses_a_lone_surrogate_in_its_own_words(tmp_path: Path) -> None:
    with SQLiteStore(str(tmp_path / "chats.db")) as store:
        tools = _tools(store)
        text, _, is_error = tools.call("remember", {"conversation": "new", "text": BAD})
        assert is_error and "lone surrogate" in text and "codec" not in text, text
        assert store.conversations() == []  # the refused first turn created nothing
        assert not tools.call("remember", {"conversation": "c", "text": "hello"})[2]
        for name, args in (
            ("remember", {"conversation": "c", "text": BAD}),
            ("recall", {"conversation": "c", "query": BAD}),
        ):
            text, _, is_error = tools.call(name, args)
            assert is_error and "lone surrogate" in text and "codec" not in text, text
        assert len(store.open("c")) == 1
