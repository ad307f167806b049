"""SQLiteStore(path) where no store can be: a clear error, nothing written (issue 19)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from yait_byheart.store import SQLiteStore, StoreCorruptError


def refused(path: Path, error: type[Exception], why: str, fix: str) -> str:
    """The message of SQLiteStore(path)'s error, checked to name the call, the path and why."""
    with pytest.raises(error) as info:
        SQLiteStore(path)
    message = str(info.value)
    assert message.startswith(f"SQLiteStore({str(path)!r})"), message
    assert re.search(why, message), message
    assert re.search(fix, message), message
    return message


def sqlite_file(path: Path, *statements: str) -> Path:
    """A SQLite database made by another application with `statements`."""
    with sqlite3.connect(path) as db:
        for statement in statements:
            db.execute(statement)
    db.close()
    return path


def test_a_missing_folder_is_named_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "folder" / "chats.db"
    message = refused(path, FileNotFoundError, "does not exist", "create it first")
    assert repr(str(tmp_path / "no" / "such" / "folder")) in message
    assert not (tmp_path / "no").exists()


def test_a_directory_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, ValueError, "is a directory", "pass a file path")


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"orchids, lanterns, ferry tickets\n" * 20)
    refused(path, ValueError, "not a SQLite database", "pass another path")
    assert path.read_bytes() == b"orchids, lanterns, ferry tickets\n" * 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]  # no -wal, no -shm


@pytest.mark.parametrize("tail", [b"", b"\x07" * 4000])
def test_a_damaged_sqlite_file_is_refused_untouched(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "chats.db"
    data = b"SQLite format 3\x00" + tail
    path.write_bytes(data)
    refused(path, StoreCorruptError, "the database file is damaged", "byheart salvage")
    assert path.read_bytes() == data


def test_a_sqlite_database_of_another_application_is_refused_untouched(tmp_path: Path) -> None:
    path = sqlite_file(tmp_path / "app.db", "CREATE TABLE invoices (id INTEGER, total REAL)")
    before = path.read_bytes()
    refused(path, ValueError, r"something else \(tables: invoices\)", "pass another path")
    assert path.read_bytes() == before


def test_a_meta_table_of_another_format_is_refused(tmp_path: Path) -> None:
    path = sqlite_file(
        tmp_path / "other.db",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "INSERT INTO meta VALUES ('format', 'some.other.tool')",
    )
    refused(path, ValueError, "not a byheart store", "pass another location")


def test_after_a_refusal_a_good_path_still_works(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SQLiteStore(tmp_path / "missing" / "chats.db")
    (tmp_path / "missing").mkdir()
    with SQLiteStore(tmp_path / "missing" / "chats.db") as store:
        store.open("c").append("user", "kept")
    with SQLiteStore(tmp_path / "missing" / "chats.db") as store:
        assert [t["text"] for t in store.export("c")["turns"]] == ["kept"]


def test_a_tilde_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MCP host's config or an .env file passes "~/chats.db" with no shell to expand it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    with SQLiteStore("~/chats.db") as store:
        store.open("c").append("user", "hello")
        assert store.path == str(tmp_path / "chats.db")
    assert (tmp_path / "chats.db").is_file() and not Path("~").exists()
