"""Stores that fail the ways disks, filesystems and locks really fail (issue 45).

* files that are not what they seem: an empty path, a 0-byte file, a truncated file, an
  overwritten header, a damaged page; the advice each error gives is followed here
  (`byheart salvage`) and must bring back every turn that still reads;
* a read-only filesystem: a tmpfs mounted, then remounted read-only (root only; skipped
  where mounting is not permitted);
* another process holding the write lock (a child process in ``BEGIN IMMEDIATE``; on
  PostgreSQL a connection holding the conversations' row locks): readers do not wait;
* one damaged conversation: recall, delete, export and check name it and leave the others be.
"""

from __future__ import annotations

import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from yait_byheart.cli import main
from yait_byheart.store import (
    SelectionNotSavedWarning,
    SQLiteStore,
    StoreCorruptError,
    StoreReadOnlyError,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_store
from test_store import Backend

backend = test_store.backend  # the fixture, under the name the tests ask for

WORDS = "the oven costs 18,900 euro and the ferry leaves at nine from pier four"
PAGE = 4096


def _fill(store: Any, conversations: int = 3, turns: int = 40) -> dict[str, list[str]]:
    """Conversations c0, c1, ... of user u; the texts stored, by conversation."""
    out: dict[str, list[str]] = {}
    for c in range(conversations):
        mem = store.open(f"c{c}", user="u", budget=2_000)
        out[f"c{c}"] = [f"{WORDS} {c}.{i} " * 8 for i in range(turns)]
        for i, text in enumerate(out[f"c{c}"]):
            mem.append("user" if i % 2 == 0 else "assistant", text)
    return out


def _texts(store: SQLiteStore, name: str) -> list[str]:
    return [t["text"] for t in store.export(name)["turns"]]


# -- an empty path, a bad timeout, a 0-byte file ---------------------------------------------


def test_an_empty_path_is_refused_not_made_a_temporary_database() -> None:
    with pytest.raises(ValueError, match=r"SQLiteStore\(''\): an empty path .* temporary"):
        SQLiteStore("")


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), -1.0, "5", True, 10**30])
def test_a_timeout_that_is_not_finite_seconds_is_refused(tmp_path: Path, timeout: Any) -> None:
    with pytest.raises(ValueError, match=r"SQLiteStore: timeout must be a finite number") as e:
        SQLiteStore(tmp_path / "chats.db", timeout=timeout)
    assert repr(timeout)[:10] in str(e.value)
    assert not (tmp_path / "chats.db").exists()


@pytest.mark.parametrize("command", [["conversations"], ["check"], ["show", "c0"]])
def test_a_read_command_leaves_a_0_byte_file_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    path = tmp_path / "chats.db"
    path.touch()
    code = main([command[0], "--store", str(path), *command[1:]])
    err = capsys.readouterr().err
    assert code == 1 and "the file is empty (0 bytes)" in err and "restore it" in err
    assert path.stat().st_size == 0 and sorted(os.listdir(tmp_path)) == ["chats.db"]


# -- damaged files, and the advice followed --------------------------------------------------


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "header":  # the first 100 bytes: SQLite's header
        data = bytes(100) + data[100:]
    elif how == "truncated":
        data = data[: len(data) * 2 // 3]
    else:  # the page holding turn 20 of c1 overwritten with random bytes
        at = data.index(f"{WORDS} 1.20 ".encode()) // PAGE * PAGE
        data = data[:at] + random.Random(45).randbytes(PAGE) + data[at + PAGE :]
    path.write_bytes(data)


@pytest.fixture(params=["header", "truncated", "page"])
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Any, str]]:
    path = tmp_path / "chats.db"
    with SQLiteStore(path) as store:
        stored = _fill(store)
    _damage(path, request.param)
    yield path, stored, request.param


def _advice(message: str) -> list[str]:
    """The `byheart ...` command a message advises, as arguments."""
    found = re.search(r"byheart (salvage .*? --store \S+)", message)
    assert found, message
    return shlex.split(found.group(1))


def test_the_advice_for_a_damaged_file_recovers_every_turn_that_reads(
    damaged: tuple[Path, Any, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, stored, how = damaged
    before = path.read_bytes()
    try:
        with SQLiteStore(path) as store:
            store.export("c1")  # the page case opens: its one damaged conversation does not
        pytest.fail("a damaged conversation was exported")
    except StoreCorruptError as exc:
        message = str(exc)
    assert "damaged" in message and not re.search(r"\.recover", message)
    if how == "page":
        assert "export('c1')" in message  # the conversation is named
    args = _advice(message)
    monkeypatch.chdir(path.parent)  # the advice names recovered.db in the current folder
    code = main(args)
    out = capsys.readouterr().out
    assert path.read_bytes() == before  # the damaged file is only read
    with SQLiteStore(path.parent / "recovered.db") as new:
        names = new.conversations()
        recovered = {name: _texts(new, name) for name in names}
    if how == "header":  # everything but the header reads
        assert code == 0 and recovered == stored
        return
    lost = 0
    for name, texts in recovered.items():
        for i, text in enumerate(texts):  # each turn verbatim, or blank where it did not read
            assert text in ("", stored[name][i]), (name, i)
            lost += text == ""
    if how == "page":  # one page of one conversation lost, the others whole
        assert code == 1 and "lost turns" in out
        assert names == ["c0", "c1", "c2"] and recovered["c0"] == stored["c0"]
        assert recovered["c2"] == stored["c2"] and 0 < lost < 10
        assert recovered["c1"][:19] == stored["c1"][:19]
    else:  # the first two thirds of the file read (turns past its end are not known of)
        assert recovered["c0"] == stored["c0"] and code in (0, 1)


def test_salvage_refuses_to_mix_into_a_store_that_holds_the_same_ids(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "a.db") as store:
        _fill(store, conversations=1, turns=2)
    with SQLiteStore(tmp_path / "b.db") as other:
        _fill(other, conversations=1, turns=1)
        with pytest.raises(ValueError, match=r"already holds 'c0'; nothing was copied"):
            other.salvage(tmp_path / "a.db")
        assert len(other.open("c0")) == 1


# -- a read-only filesystem -------------------------------------------------------------------


@pytest.fixture
def read_only_mount() -> Iterator[Path]:
    """A store on a tmpfs remounted read-only (needs root and mount(2); skipped otherwise)."""
    folder = Path(tempfile.mkdtemp(prefix="byheart-rofs-"))
    if os.geteuid() != 0:
        pytest.skip("mounting a filesystem needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(folder)])
    if mounted.returncode != 0:
        pytest.skip("mount is not permitted here")
    try:
        with SQLiteStore(folder / "chats.db") as store:
            _fill(store, conversations=1, turns=10)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)
        folder.rmdir()


def test_a_read_only_filesystem_serves_reads_and_refuses_writes(read_only_mount: Path) -> None:
    path = read_only_mount / "chats.db"
    with SQLiteStore(path) as store:
        assert store.conversations() == ["c0"] and store.check() == []
        mem = store.open("c0")
        with pytest.warns(SelectionNotSavedWarning, match="filesystem mounted read-only"):
            assert "ferry" in str(mem.compose("when does the ferry leave?")["messages"])
        assert store.recall("ferry", user="u")
        with pytest.raises(StoreReadOnlyError, match="remount its filesystem read-write") as e:
            mem.append("user", "one more")
        assert not e.value.retry and len(mem) == 10
    with pytest.raises(StoreReadOnlyError, match="no store can be created on it"):
        SQLiteStore(read_only_mount / "new.db")
    assert sorted(os.listdir(read_only_mount)) == ["chats.db"]


# -- another process's write lock -------------------------------------------------------------

_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@pytest.fixture
def writer_holding_the_lock(backend: Backend) -> Iterator[Backend]:
    """Another process (SQLite) or connection (PostgreSQL) inside a write transaction."""
    with backend.store() as store:
        _fill(store, conversations=2, turns=12)
    if backend.kind == "sqlite":
        child = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, backend.location],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        yield backend
        assert child.stdin is not None
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(10)
        return
    import psycopg

    with psycopg.connect(backend.location) as conn:  # a transaction until the block ends
        s = backend.schema
        conn.execute(f"SELECT * FROM {s}.conversations FOR UPDATE")
        conn.execute(f"SELECT * FROM {s}.state FOR UPDATE")
        yield backend
        conn.rollback()


def test_readers_do_not_wait_for_a_writer(
    writer_holding_the_lock: Backend, capsys: pytest.CaptureFixture[str]
) -> None:
    backend = writer_holding_the_lock
    kwargs = {"timeout": 2.0} if backend.kind == "sqlite" else {}
    with backend.store(**kwargs) as store:  # opening takes no write lock
        assert store.conversations() == ["c0", "c1"] and store.check() == []
        mem = store.open("c0")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert "ferry" in str(mem.compose("when does the ferry leave?")["messages"])
            assert store.recall("ferry", user="u", exclude="c1")
        saved = [w for w in caught if w.category is SelectionNotSavedWarning]
        # Its one write, a cache, does not wait for the writer (PostgreSQL: the state row).
        assert len(saved) == 1 and "write lock" in str(saved[0].message)
    if backend.kind == "sqlite":
        code = main(["check", "--store", backend.location])
        assert code == 0 and "no damaged rows in 2 conversations" in capsys.readouterr().out


# -- one damaged conversation -----------------------------------------------------------------


@pytest.fixture
def one_damaged(tmp_path: Path) -> Iterator[tuple[Path, dict[str, list[str]]]]:
    path = tmp_path / "chats.db"
    with SQLiteStore(path) as store:
        stored = _fill(store)
    _damage(path, "page")
    yield path, stored


def test_recall_leaves_out_a_damaged_conversation_and_names_it(
    one_damaged: tuple[Path, dict[str, list[str]]],
) -> None:
    path, _ = one_damaged
    with SQLiteStore(path) as store:
        with pytest.warns(RuntimeWarning, match=r"recall left out conversation 'c1'.*salvage"):
            found = store.recall("the ferry at pier four", user="u")
        assert found and {r["conversation"] for r in found} <= {"c0", "c2"}
        assert [d.conversation for d in store.check() if d.conversation] == ["c1"]


def test_recall_from_kept_pieces_names_a_conversation_damaged_since(tmp_path: Path) -> None:
    path = tmp_path / "chats.db"
    with SQLiteStore(path) as store:
        _fill(store)
        assert store.recall("the ferry at pier four", user="u")  # the pieces kept, c1 in them
    _damage(path, "page")  # the rows of c1 a passage reads: the pieces say nothing changed
    with SQLiteStore(path) as store:  # a new store object loads the pieces
        with pytest.warns(RuntimeWarning, match=r"recall left out conversation 'c1'.*salvage"):
            found = store.recall(f"{WORDS} 1.20", user="u", budget=20_000)
        assert found and {r["conversation"] for r in found} <= {"c0", "c2"}


def test_a_damaged_conversation_can_be_deleted(
    one_damaged: tuple[Path, dict[str, list[str]]],
) -> None:
    path, stored = one_damaged
    with SQLiteStore(path) as store:
        with pytest.warns(RuntimeWarning, match=r"could not be overwritten.*salvage"):
            store.delete("c1")
        assert store.conversations() == ["c0", "c2"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing damaged is left to skip
            assert store.recall("ferry", user="u")
        assert _texts(store, "c2") == stored["c2"]
    with SQLiteStore(path) as store:
        assert store.conversations() == ["c0", "c2"]
        store.open("c1").append("user", "a new conversation under the old id")
        assert _texts(store, "c1") == ["a new conversation under the old id"]
    with SQLiteStore(path.parent / "new.db") as new:  # salvage does not bring c1's rows back
        assert sorted(c.conversation for c in new.salvage(path)) == ["c0", "c1", "c2"]
        assert _texts(new, "c1") == ["a new conversation under the old id"]
