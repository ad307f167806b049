"""The recall segments a process keeps across store objects (issue 46): a handler that opens a
new store object per request decodes no segment another store object of the process read, and
what the process keeps never answers for another database, a copy of the database, or words a
redaction or deletion took away since.  SQLite and PostgreSQL (see tests/test_store.py)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from yait_byheart.store import _user_index
from yait_byheart.store import _user_kept as user_kept
from yait_byheart.store import _user_saved as user_saved
from yait_byheart.store._user_cache import SEGMENTS, SegmentCache

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402
from test_store_recall import child, finish  # noqa: E402

backend = test_store.backend
USER = "alice"


@pytest.fixture(autouse=True)
def empty_cache() -> Iterator[None]:
    SEGMENTS.clear()
    yield
    SEGMENTS.clear()


def said(store: Any, conversation: str, word: str, turns: int = 12) -> None:
    """`turns` turns of alice's that name `word`, in `conversation`."""
    mem = store.open(conversation, user=USER)
    for k in range(turns):
        mem.append("user", f"the {word} came up again, note {k}, with some other words around")


def recalled(b: Backend, query: str) -> str:
    """Every passage a new store object recalls for `query`, as one text."""
    with b.store() as store:
        return "\n".join(p["text"] for p in store.recall(query, user=USER, budget=100_000))


def recalled_afresh(b: Backend, query: str) -> str:
    """What `recalled` gives in a process of its own (nothing kept from this one's reads)."""
    (line,) = finish(child(b, [["recall", USER, query]]))
    return "\n".join(p["text"] for p in json.loads(line))


@pytest.fixture
def decoded() -> Iterator[mock.MagicMock]:
    """Counts the segments decoded from their stored bytes."""
    with mock.patch.object(
        user_kept.user_saved, "load_segment", wraps=user_kept.user_saved.load_segment
    ) as spy:
        yield spy


def test_a_new_store_object_decodes_no_segment_the_process_read(
    backend: Backend, decoded: mock.MagicMock
) -> None:
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)  # the pieces are written
    first = recalled(backend, "lighthouse")
    assert decoded.call_count >= 1
    decoded.reset_mock()
    assert recalled(backend, "lighthouse") == first
    assert recalled(backend, "note") and "lighthouse" in first
    assert decoded.call_count == 0


def replace_database(b: Backend) -> None:
    """The database gone and a new one made where it was (a restore, a test's new file)."""
    if b.kind == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(b.location + suffix):
                os.remove(b.location + suffix)
    else:
        b.sql(f"DROP SCHEMA {b.schema} CASCADE")


def test_a_database_made_where_another_was_is_not_answered_from_the_old_one(
    backend: Backend,
) -> None:
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)
    assert "lighthouse" in recalled(backend, "lighthouse")
    replace_database(backend)
    with backend.store() as store:  # the same user and conversation: other words, shorter
        mem = store.open("trip", user=USER)
        for k in range(12):
            mem.append("user", f"harbour note {k}" + " more" * (k % 3))
        store.recall("harbour", user=USER)
    assert "lighthouse" not in recalled(backend, "lighthouse note")
    assert recalled(backend, "harbour note") == recalled_afresh(backend, "harbour note")


def test_a_copy_of_the_database_answers_for_itself(tmp_path: Path) -> None:
    original = Backend("sqlite", str(tmp_path / "a.db"))
    with original.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)
    copy = Backend("sqlite", str(tmp_path / "b.db"))
    shutil.copy(original.location, copy.location)
    for b, word, more in ((original, "apple", 0), (copy, "banana", 40)):
        with b.store() as store:  # each writes its next segment, under the same number
            mem = store.open("trip", user=USER)
            for k in range(user_kept.SAVE_AFTER + 2):
                mem.append("user", f"{word} note {k} " + "and so on " * (more + k % 5))
            store.recall(word, user=USER)
    for b in (original, copy):
        assert recalled(b, "banana apple note") == recalled_afresh(b, "banana apple note")
    assert "banana" not in recalled(original, "banana apple")
    assert "apple" not in recalled(copy, "banana apple")


@pytest.mark.parametrize("op", ["redact", "delete"])
def test_words_taken_away_by_another_process_are_not_answered_from_kept_segments(
    backend: Backend, op: str
) -> None:
    with backend.store() as store:
        said(store, "secret", "lighthouse", turns=1)
        said(store, "trip", "harbour")
        store.recall("harbour", user=USER)
    assert "lighthouse" in recalled(backend, "lighthouse")
    finish(child(backend, [["redact", "secret", 0] if op == "redact" else ["delete", "secret"]]))
    assert "lighthouse" not in recalled(backend, "lighthouse harbour")
    assert "harbour" in recalled(backend, "harbour")


def test_the_cache_keeps_its_bytes_and_drops_the_least_recently_used() -> None:
    cache = SegmentCache(max_bytes=100)
    a, b, c = object(), object(), object()
    cache.put("a", a, 40)  # type: ignore[arg-type]
    cache.put("b", b, 40)  # type: ignore[arg-type]
    assert cache.get("a") is a  # a is now the most recently used
    cache.put("c", c, 40)  # type: ignore[arg-type]
    assert cache.get("b") is None
    assert cache.get("a") is a and cache.get("c") is c
    cache.put("huge", object(), 101)  # type: ignore[arg-type]
    assert cache.get("huge") is None and cache.get("a") is a
    # Pages read since: counted with what they belong to (c, the least recently used, goes).
    cache.add("a", 30)
    cache.add("gone", 1_000)  # not kept: nothing to count
    assert cache.get("c") is None and cache.get("a") is a and cache._bytes == 70


def test_pieces_written_again_after_damage_are_not_taken_for_the_ones_read(
    backend: Backend,
) -> None:
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)  # segment 0: the whole index
    assert "lighthouse" in recalled(backend, "lighthouse")  # the process reads segment 0
    with backend.store() as store:
        mem = store.open("trip", user=USER)
        for k in range(user_kept.SAVE_AFTER + 2):
            mem.append("user", f"harbour note {k} " + "and so on " * (30 + k % 5))
        store.recall("harbour", user=USER)  # segment 1: merged with 0, the whole index
    prefix = "" if backend.kind == "sqlite" else f"{backend.schema}."
    backend.sql(f"UPDATE {prefix}recall_segments SET data = %s WHERE seg = 1", (b"damaged",))
    first = recalled(backend, "harbour note")  # read from the rows, written whole again
    assert "harbour" in first
    with mock.patch.object(_user_index, "record_turn", wraps=_user_index.record_turn) as rows:
        assert recalled(backend, "harbour note") == first
    assert rows.call_count == 0  # loaded from what was written again, not from the rows
    assert recalled_afresh(backend, "harbour note") == first


def kept_parts() -> dict[Any, tuple[bytes, ...]]:
    """The assembled parts the process keeps, by name, as bytes (columns and conversations)."""
    out = {}
    for name, (kept, _size) in SEGMENTS._held.items():
        if isinstance(kept, user_saved.Parts):
            convs = json.dumps([user_saved.conv_meta(c) for c in kept.convs.values()])
            columns = (bytes(c) if isinstance(c, bytearray) else c.tobytes()
                       for c in kept.columns.values())  # fmt: skip
            out[name] = (*columns, convs.encode())
    return out


def test_an_index_that_follows_the_rows_leaves_what_the_process_keeps_as_it_was(
    backend: Backend,
) -> None:
    # Two store objects borrow one assembly; the one that reads new rows copies it first.
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        said(store, "garden", "tomato")
        store.recall("lighthouse", user=USER)
    before = recalled(backend, "lighthouse tomato harbour")
    kept = kept_parts()
    assert kept
    with backend.store() as reader, backend.store() as writer:
        assert reader.recall("lighthouse", user=USER)
        said(writer, "trip", "harbour", turns=3)
        said(writer, "garden", "harbour", turns=1)
        text = "\n".join(p["text"] for p in writer.recall("harbour", user=USER, budget=100_000))
        assert "harbour" in text and not writer._recaller._users[USER].borrowed
        assert reader._recaller._users[USER].borrowed  # it read no row since its load
        assert {n: kept_parts()[n] for n in kept} == kept  # the borrowed ones as they were
    assert "harbour" not in before
    assert recalled(backend, "lighthouse tomato harbour") != before
    assert recalled(backend, "lighthouse tomato harbour") == recalled_afresh(
        backend, "lighthouse tomato harbour"
    )


def test_a_recall_that_leaves_a_conversation_out_reads_its_rows_when_asked_for_it(
    backend: Backend,
) -> None:
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        said(store, "live", "harbour")
        store.recall("lighthouse", user=USER)
        live = store.open("live", user=USER)
        live.append("user", "the marmalade recipe from grandma")
        source = store.recall_source(user=USER, exclude="live")
        assert "marmalade" not in json.dumps(source("marmalade"))
        found = store.recall("marmalade", user=USER)
        assert found and "marmalade" in found[0]["text"]
    assert "marmalade" in recalled(backend, "marmalade")
    assert recalled(backend, "marmalade harbour") == recalled_afresh(backend, "marmalade harbour")


@pytest.mark.parametrize("unsaved", [0, 2])
def test_the_requests_of_one_chat_borrow_without_copying(backend: Backend, unsaved: int) -> None:
    # Each request: a new store object, recall leaving out the chat it serves, two turns.
    # With turns of another conversation the pieces lack, the first request reads and writes
    # them, the chat's place (no ids yet: it is empty) with them.
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)
        if unsaved:
            said(store, "garden", "tomato", turns=unsaved)
    assemble = user_saved.Parts.of
    with (
        mock.patch.object(
            _user_index.UserIndex,
            "_copy_borrowed",
            autospec=True,
            side_effect=_user_index.UserIndex._copy_borrowed,
        ) as copies,
        mock.patch.object(user_saved.Parts, "of", side_effect=assemble) as assembled,
    ):
        for k in range(6):
            with backend.store() as store:
                source = store.recall_source(user=USER, exclude="live")
                mem = store.open("live", user=USER, external=source)
                mem.compose(f"what about the lighthouse, {k}?")
                mem.append("user", f"what about the lighthouse, {k}?")
                mem.append("assistant", "it is still there")
                assert source.last and "lighthouse" in source.last[0]["text"]
    # The second request, the first to find the chat holding rows, gives it its first ids and
    # writes them (copying what it borrowed, unless it assembled it itself after the first
    # request's write); the third assembles that list of segments; every later request
    # borrows it as it is.
    assert (copies.call_count, assembled.call_count) == ((1, 2) if not unsaved else (0, 3))
    assert recalled(backend, "lighthouse still there") == recalled_afresh(
        backend, "lighthouse still there"
    )


def test_threads_with_a_store_object_per_request_keep_the_index_right(backend: Backend) -> None:
    # Four threads of one process: each request a new store object on its own chat of the
    # user, borrowing, copying, assembling and writing what the process keeps at once.
    with backend.store() as store:
        said(store, "trip", "lighthouse")
        store.recall("lighthouse", user=USER)
    failures: list[BaseException] = []

    def serve(chat: str) -> None:
        try:
            for k in range(5):
                with backend.store() as store:
                    source = store.recall_source(user=USER, exclude=chat)
                    mem = store.open(chat, user=USER, external=source)
                    mem.compose(f"the lighthouse and the {chat} {k}?")
                    mem.append("user", f"the {chat} marmot number {k}")
                    mem.append("assistant", "noted")
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=serve, args=(f"chat{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    found = recalled(backend, "marmot number 4")
    assert all(f"chat{n} marmot number 4" in found for n in range(4))
    assert found == recalled_afresh(backend, "marmot number 4")
