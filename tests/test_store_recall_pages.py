"""The dense segment's columns kept apart in pages (issue 46): a new store object reads only
the pages its recall needs, a page written over by another store object since the load is
never taken for its own (the recall loads the pieces again), and everything recalled through
pages is what an index built from the rows returns. Pages of four ids here, so a few turns
make many of them. SQLite and PostgreSQL (see tests/test_store.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart.store import _columns, _recall, _user_index
from yait_byheart.store import _user_saved as user_saved
from yait_byheart.store._user_cache import SEGMENTS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
import test_store_recall_kept as kept  # noqa: E402
from test_store import Backend  # noqa: E402

backend = test_store.backend


@pytest.fixture(autouse=True)
def pages_of_four() -> Iterator[None]:
    with (
        mock.patch.multiple(_columns, SHIFT=2, PAGE=4, _MASK=3),
        mock.patch.multiple(user_saved, SHIFT=2, PAGE=4),
    ):
        SEGMENTS.clear()
        yield
        SEGMENTS.clear()


def page_rows(b: Backend, user: str) -> int:
    rows = kept.pieces(b, user)["recall_terms"]
    return sum(1 for r in rows if user_saved.is_page_key(bytes(r[0]))
               and user_saved.page_number(bytes(r[0])) != user_saved.DAYS)  # fmt: skip


def written_whole(b: Backend) -> None:
    """Six conversations of alice's, 48 turns each, their pieces written whole by a recall;
    none kept in this process (a fresh process's next load reads them)."""
    kept.fill(b, convs=6, turns=48)
    assert kept.loaded(b, "the 0x1 train timetable", "alice")
    SEGMENTS.clear()


def test_a_new_store_object_reads_only_the_pages_its_recall_needs(backend: Backend) -> None:
    kept.fill(backend, convs=6, turns=48)
    query = "the 4x7 train timetable"
    assert kept.loaded(backend, query, "alice")  # built from the rows and written whole
    total = page_rows(backend, "alice")
    assert total >= 10
    SEGMENTS.clear()  # a fresh process
    with mock.patch.object(user_saved, "read_page", wraps=user_saved.read_page) as reads:
        found = kept.loaded(backend, query, "alice", budget=1000)
    assert found and "4x7" in found[0]["text"]
    assert 0 < reads.call_count < total / 2
    assert found == kept.from_rows(backend, query, "alice", budget=1000)
    # The pages read count in the process's bound, with the dense segment they belong to.
    ((size, segment),) = [
        (size, held) for held, size in SEGMENTS._held.values()
        if isinstance(held, user_saved.Segment) and held.ids is None
    ]  # fmt: skip
    rows = kept.pieces(backend, "alice")
    pages = {user_saved.page_number(bytes(r[0])): (r[1], len(r[2])) for r in rows["recall_terms"]
             if user_saved.is_page_key(bytes(r[0]))}  # fmt: skip
    (number,) = {seg for seg, _ in pages.values()}
    row = next(len(r[-1]) for r in rows["recall_segments"] if r[0] == number)
    assert segment.read_pages
    assert size == row + sum(pages[k][1] for k in segment.read_pages)


def test_a_page_written_over_since_the_load_makes_the_recall_load_again(
    backend: Backend,
) -> None:
    written_whole(backend)
    recalls = mock.patch.object(
        _recall.Recaller, "_recall", autospec=True, side_effect=_recall.Recaller._recall
    )
    with backend.store() as reader, backend.store() as writer:
        assert reader.recall("0x1", user="alice", budget=1000)
        assert reader.recall("0x2", user="alice", budget=1000)  # loaded again for every term
        # Another store object blanks a turn of a conversation whose pages the reader did not
        # read: every piece is dropped, and its recall writes them whole again, under the
        # same numbers, with other stamps.
        writer.open("alice-5").redact(10)
        assert writer.recall("the 5x11 train timetable", user="alice")
        with recalls as calls:
            found = reader.recall("the 5x9 train timetable", user="alice", budget=1000)
        assert calls.call_count == 2  # the first met a page of the new pieces
    assert found and "5x9" in found[0]["text"]
    assert found == kept.from_rows(backend, "the 5x9 train timetable", "alice", budget=1000)
    assert "5x10" not in str(kept.from_rows(backend, "the 5x10 train timetable", "alice"))


@pytest.mark.parametrize("rows", ["pages", "days"])
@pytest.mark.parametrize("harm", ["damaged", "gone"])
def test_pages_damaged_or_gone_are_written_again_from_the_rows(
    backend: Backend, harm: str, rows: str
) -> None:
    kept.fill(backend, convs=3, turns=48)
    assert kept.loaded(backend, "the 2x5 train timetable", "alice")
    prefix = "" if backend.kind == "sqlite" else "{s}."
    numbers = range(page_rows(backend, "alice")) if rows == "pages" else [user_saved.DAYS]
    for k in numbers:
        if harm == "damaged":
            statement = f"UPDATE {prefix}recall_terms SET data = %s WHERE term = %s"
            backend.sql(statement, (b"BHUP" + bytes(40), user_saved.page_key(k)))
        else:
            statement = f"DELETE FROM {prefix}recall_terms WHERE term = %s"
            backend.sql(statement, (user_saved.page_key(k),))
    SEGMENTS.clear()
    # A question naming days reads the days row (and a ranking some pages).
    asked = "the 2x5 train timetable we talked about last Saturday"
    with backend.store() as store:
        found = store.recall(asked, user="alice", when="30 May 2023", budget=1000)
    assert found and "2x5" in found[0]["text"]
    assert found == kept.from_rows(backend, asked, "alice", budget=1000, when="30 May 2023")
    # Written whole again: the next store object loads them, reading no row.
    SEGMENTS.clear()
    with mock.patch.object(_user_index, "record_turn", wraps=_user_index.record_turn) as rows:
        again = kept.loaded(backend, "the 2x7 train timetable", "alice", budget=1000)
    assert rows.call_count == 0
    assert again == kept.from_rows(backend, "the 2x7 train timetable", "alice", budget=1000)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=kept.PIECE_OPS, save_after=st.sampled_from([1, 8]))
def test_pieces_in_pages_recall_what_the_rows_say(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, Any]], save_after: int
) -> None:
    # The kept-pieces property (tests/test_store_recall_kept.py) with pages of four ids:
    # newer segments' values for ids of pages not read yet are put in when they are read.
    inner = kept.test_a_new_store_object_recalls_what_the_rows_say.hypothesis.inner_test
    inner(tmp_path_factory, ops, save_after)


def test_a_question_naming_days_reads_the_days_row_once_with_newer_days_put_in(
    backend: Backend,
) -> None:
    with backend.store() as store:
        for c in range(3):
            mem = store.open(f"alice-{c}", user="alice")
            for k in range(16):
                role = "user" if k % 2 == 0 else "assistant"
                mem.append(role, f"we walked by the river, stop {c}x{k}", when=f"{1 + k} May 2023")
    assert kept.loaded(backend, "the river", "alice")  # built from the rows, written whole
    # A newer segment holds alice-0's open stretch again, now said on 27 May too: the
    # dense segment's days of it are stale, the newer segment's put in over them.
    with mock.patch.object(kept.user_kept, "SAVE_AFTER", 1), backend.store() as store:
        mem = store.open("alice-0", user="alice")
        mem.append("user", "we walked by the river once more", when="27 May 2023")
        assert store.recall("river", user="alice")
    SEGMENTS.clear()  # a fresh process
    asked = "where did we walk last Saturday?"  # 27 May 2023
    reads_days = mock.patch.object(user_saved, "read_days", wraps=user_saved.read_days)
    reads_page = mock.patch.object(user_saved, "read_page", wraps=user_saved.read_page)
    with reads_days as days, reads_page as pages, backend.store() as store:
        found = store.recall(asked, user="alice", when="30 May 2023", budget=200)
        assert store.recall(asked, user="alice", when="30 May 2023", budget=200) == found
    with reads_days as again, backend.store() as store:  # kept with the dense segment
        assert store.recall(asked, user="alice", when="30 May 2023", budget=200) == found
    assert days.call_count == 1 and again.call_count == 0
    assert pages.call_count < page_rows(backend, "alice") / 2  # the scan read no page
    assert found and "once more" in found[0]["text"]
    assert found == kept.from_rows(backend, asked, "alice", budget=200, when="30 May 2023")


def test_a_days_row_written_over_since_the_load_makes_the_recall_load_again(
    backend: Backend,
) -> None:
    written_whole(backend)
    asked, when = "the 5x9 train timetable we talked about last Saturday", "30 May 2023"
    with backend.store() as reader, backend.store() as writer:
        assert reader.recall("0x1", user="alice", budget=1000)
        assert reader.recall("0x2", user="alice", budget=1000)  # loaded again for every term
        # Another store object deletes a conversation: every piece is dropped and written
        # whole again by its recall, with other stamps. The reader follows the deletion
        # without a page; the first row of the new pieces it meets is the days row.
        writer.delete("alice-4")
        assert writer.recall("the 5x11 train timetable", user="alice")
        outcomes: list[str] = []
        real = user_saved.read_days

        def read_days(*args: Any) -> Any:
            try:
                found = real(*args)
            except user_saved.StalePieces:
                outcomes.append("stale")
                raise
            outcomes.append("read")
            return found

        with mock.patch.object(user_saved, "read_days", read_days):
            found = reader.recall(asked, user="alice", budget=1000, when=when)
        # The row under the old stamp refused (the pieces loaded again), then the new one.
        assert outcomes == ["stale", "read"]
    assert found and "5x9" in found[0]["text"]
    assert not any(p["conversation"] == "alice-4" for p in found)
    assert found == kept.from_rows(backend, asked, "alice", budget=1000, when=when)


def test_a_conversation_newer_than_the_dense_segment_is_assembled_from_its_segment(
    backend: Backend,
) -> None:
    written_whole(backend)
    # A new conversation's stretches take ids past every page of the dense segment: a newer
    # segment holds them, and an assembly puts their columns in pages of their own.
    with mock.patch.object(kept.user_kept, "SAVE_AFTER", 1), backend.store() as store:
        mem = store.open("alice-new", user="alice")
        for k in range(12):
            said = f"the quokka ferry, leg {k}: " + "we counted the gulls on the pier " * 4
            mem.append("user" if k % 2 == 0 else "assistant", said)
        assert store.recall("quokka ferry", user="alice")
    SEGMENTS.clear()  # a fresh process assembles the segments
    found = kept.loaded(backend, "the quokka ferry leg 7", "alice")
    (parts,) = [held for held, _ in SEGMENTS._held.values() if isinstance(held, user_saved.Parts)]
    assert parts.top > user_saved.PAGE * -(-parts.dense_top // user_saved.PAGE)  # ids past them
    assert found and found[0]["conversation"] == "alice-new" and 7 in found[0]["turns"]
    assert found == kept.from_rows(backend, "the quokka ferry leg 7", "alice")
