"""The recall index a store keeps per user (issue 46): a new store object, a new process,
loads it instead of reading every row again, and it follows the rows exactly: what other
processes append, redact or delete since it was kept is reflected on the next recall, the
bytes of a redacted or deleted conversation's words do not stay in it, and one user's kept
index never answers for another.  SQLite and PostgreSQL (see tests/test_store.py)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yait_byheart import Memory
from yait_byheart._retrieval import flat, head
from yait_byheart._retrieval.bm25 import Index
from yait_byheart._retrieval.postings import Postings, banded
from yait_byheart.store import SCHEMA_VERSION, _user_index
from yait_byheart.store import _user_kept as user_kept
from yait_byheart.store import _user_saved as user_saved
from yait_byheart.store._user_cache import SEGMENTS

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_store  # noqa: E402
from test_store import Backend  # noqa: E402
from test_store_recall import OWNER, WORDS, child, finish, write  # noqa: E402

backend = test_store.backend
FILLER = "we talked about the weather and the {k} train timetable again today"


PIECES = ("recall_users", "recall_segments", "recall_terms")


def select(b: Backend, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Rows of `statement` ({s}: the tables' prefix), read as an outside tool would."""
    if b.kind == "sqlite":
        db = sqlite3.connect(b.location)
        try:
            return db.execute(statement.format(s="").replace("%s", "?"), params).fetchall()
        finally:
            db.close()
    import psycopg

    with psycopg.connect(b.location, autocommit=True) as conn:
        return conn.execute(statement.format(s=f"{b.schema}."), params).fetchall()


def pieces(b: Backend, user: str) -> dict[str, list[tuple[Any, ...]]]:
    """The user's kept index as stored: each table's rows, without the user column."""
    out = {}
    for table in PIECES:
        rows = select(b, f"SELECT * FROM {{s}}{table} WHERE user_id = %s", (user,))
        out[table] = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r[1:])
                      for r in rows]  # fmt: skip
    return out


def kept(b: Backend, user: str) -> bytes | None:
    """The bytes of the user's kept index (None: none): segments, then terms and postings."""
    found = pieces(b, user)
    if not found["recall_segments"]:
        return None
    segments = [r[-1] for r in found["recall_segments"]]
    terms = [r[0] + r[-1] for r in found["recall_terms"]]
    return b"".join(segments + terms)


def put_back(b: Backend, user: str, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    """Store `rows` as the user's kept index (a stale copy, as a backup would restore it)."""
    prefix = "" if b.kind == "sqlite" else "{s}."
    for table in PIECES:
        b.sql(f"DELETE FROM {prefix}{table} WHERE user_id = %s", (user,))
        for row in rows[table]:
            marks = ", ".join(["%s"] * (len(row) + 1))
            b.sql(f"INSERT INTO {prefix}{table} VALUES ({marks})", (user, *row))


def fill(b: Backend, user: str = "alice", convs: int = 3, turns: int = 6) -> None:
    with b.store() as store:
        for c in range(convs):
            mem = store.open(f"{user}-{c}", user=user)
            for k in range(turns):
                mem.append("user" if k % 2 == 0 else "assistant", FILLER.format(k=f"{c}x{k}"))


@pytest.fixture
def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The turn indexes a recall index reads from the rows, in this process."""
    read: list[int] = []
    real = _user_index.record_turn

    def counted(raw: object, idx: int) -> Any:
        read.append(idx)
        return real(raw, idx)

    monkeypatch.setattr(_user_index, "record_turn", counted)
    return read


def test_a_new_store_object_loads_the_kept_index_then_reads_only_newer_rows(
    backend: Backend, rows_read: list[int]
) -> None:
    fill(backend)
    with backend.store() as store:
        store.open("trip", user="alice").append("user", "We booked the Hotel Alfama in Lisbon.")
        first = store.recall("Which hotel in Lisbon?", user="alice")
    assert first and first[0]["conversation"] == "trip"
    assert kept(backend, "alice") is not None
    rows_read.clear()
    with backend.store() as store:
        assert store.recall("Which hotel in Lisbon?", user="alice") == first
    assert rows_read == []  # loaded, not read again
    # Another process appends one turn: too few for the kept index to be written again.
    finish(child(backend, [["append", "trip", "alice", "user", "The ferry to Zanzibar too."]]))
    with backend.store() as store:
        found = store.recall("the ferry to Zanzibar", user="alice")
    assert found and "Zanzibar" in found[0]["text"]
    assert rows_read == [1]  # that row alone


def test_a_redaction_blanks_the_kept_index_and_a_stale_copy_still_follows_it(
    backend: Backend,
) -> None:
    fill(backend)
    with backend.store() as store:
        mem = store.open("notes", user="alice")
        mem.append("user", "my locker code is plumcrest")
        mem.append("assistant", "noted")
        assert store.recall("locker code plumcrest", user="alice")
    before = pieces(backend, "alice")
    assert b"plumcrest" in (kept(backend, "alice") or b"")
    finish(child(backend, [["redact", "notes", 0]]))
    assert kept(backend, "alice") is None  # the stems went with the words
    with backend.store() as store:
        assert store.recall("locker code plumcrest", user="alice") == []
    # A copy kept before the redaction (as a backup restores it) is followed to the rows: the
    # redacted turn's stretch is indexed again without it, so "noted" is not sent for it.
    put_back(backend, "alice", before)
    with backend.store() as store:
        assert store.recall("locker code plumcrest", user="alice") == []


def test_a_deletion_blanks_the_kept_index_and_an_index_built_before_it_never_writes_after(
    backend: Backend,
) -> None:
    fill(backend, convs=1, turns=4)
    with backend.store() as store:
        store.open("trip", user="alice").append("user", "the marzipanbridge tour on Friday")
        assert store.recall("marzipanbridge tour", user="alice")
        assert b"marzipan" in (kept(backend, "alice") or b"")
        finish(child(backend, [["delete", "trip"]]))
        assert kept(backend, "alice") is None
        # This store object's index was built before the deletion: it follows it (the trip is
        # gone from what it returns) but may still hold its stems, so it is never written.
        mem = store.open("alice-0", user="alice")
        for k in range(12):
            mem.append("user", FILLER.format(k=f"later{k}"))
        assert store.recall("marzipanbridge tour", user="alice") == []
        assert store.recall("the later3 train", user="alice")
    assert kept(backend, "alice") is None
    lines = finish(child(backend, [["recall", "alice", "marzipanbridge tour"]]))
    assert json.loads(lines[0]) == []
    assert b"later3" in (kept(backend, "alice") or b"")  # written again, by a new index
    assert b"marzipan" not in (kept(backend, "alice") or b"")


def test_one_users_kept_index_never_answers_for_another(backend: Backend) -> None:
    fill(backend, user="alice")
    fill(backend, user="bob", convs=1)
    with backend.store() as store:
        store.open("secret", user="alice").append("user", "the vault word is quinceharbour")
        assert store.recall("vault word quinceharbour", user="alice")
        assert store.recall("train timetable", user="bob")
    alice = pieces(backend, "alice")
    assert alice["recall_segments"]
    put_back(backend, "bob", alice)  # alice's pieces filed under bob (a bad restore)
    lines = finish(child(backend, [["recall", "bob", "vault word quinceharbour"],
                                   ["recall", "bob", "the 0x2 train timetable"]]))  # fmt: skip
    assert json.loads(lines[0]) == []
    assert {r["conversation"] for r in json.loads(lines[1])} == {"bob-0"}


@pytest.mark.parametrize("where", ["header", "middle", "end", "postings"])
def test_damaged_kept_bytes_are_rebuilt_from_the_rows(backend: Backend, where: str) -> None:
    fill(backend)
    with backend.store() as store:
        expected = store.recall("the 1x3 train timetable", user="alice")
    rows = pieces(backend, "alice")
    table = "recall_terms" if where == "postings" else "recall_segments"
    target = next(k for k, r in enumerate(rows[table]) if where != "postings" or r[0] == b"train")
    data = bytearray(rows[table][target][-1])
    at = {"header": 4, "middle": len(data) // 3, "end": len(data) - 3, "postings": 20}[where]
    data[at : at + 2] = b"\xff\xff"
    rows[table][target] = (*rows[table][target][:-1], bytes(data))
    put_back(backend, "alice", rows)
    with backend.store() as store:
        assert store.recall("the 1x3 train timetable", user="alice") == expected


def test_a_flat_index_loads_to_the_same_scores_and_names_a_damaged_list() -> None:
    index = Index()
    for doc in range(300):
        index.add(doc, {f"w{doc % 7}": 1 + doc % 3, "common": 1, f"rare{doc}": 2})
    loaded = flat.load(memoryview(b"".join(flat.dump(index))))
    terms = ["w3", "common", "rare42"]
    assert loaded.scores(terms) == index.scores(terms)
    assert loaded.head(terms, 5) == index.head(terms, 5)
    parts = flat.dump(index)
    ids = bytearray(parts[3])
    ids[-2:] = b"\xff\xff"  # the last list's last id, past every id held
    parts[3] = bytes(ids)
    damaged = flat.load(memoryview(b"".join(parts)))
    last = list(damaged._postings)[-1]
    with pytest.raises(flat.Damaged):
        damaged.holding(last)


def test_a_redacted_stretch_lends_nothing_to_the_stretches_beside_it(backend: Backend) -> None:
    # One store object keeps its index across the redaction (no kept bytes involved): the
    # old stretch stays in the index as a tombstone, and its words must not raise the
    # stretch rebuilt beside it ("noted" would be sent for the blanked code).
    fill(backend)
    with backend.store() as store:
        mem = store.open("notes", user="alice")
        mem.append("user", "my locker code is plumcrest")
        mem.append("assistant", "noted")
        assert store.recall("locker code plumcrest", user="alice")
        finish(child(backend, [["redact", "notes", 0]]))
        assert store.recall("locker code plumcrest", user="alice") == []


# -- the pieces: written by several store objects at once, read selectively --------------------


def from_rows(
    b: Backend, query: str, user: str, budget: int = 100_000, when: str | None = None
) -> list[Any]:
    """What recall returns from an index built from the rows alone (nothing kept read or
    written): what the kept pieces must give back."""
    with b.store() as store, mock.patch.object(user_kept, "save", lambda *_: None):
        store._recaller._user(user).loadable = False
        return store.recall(query, user=user, budget=budget, when=when)


def loaded(b: Backend, query: str, user: str, budget: int = 100_000) -> list[Any]:
    """What recall returns through a new store object (the kept pieces loaded)."""
    with b.store() as store:
        found = store.recall(query, user=user, budget=budget)
        assert store._recaller._users[user].fresh is not None  # the pieces were loaded
        return found


def test_two_processes_saving_and_merging_at_once_keep_a_correct_index(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(backend, convs=2, turns=4)
    assert loaded(backend, "the 1x3 train timetable", "alice")
    # Each process appends to a conversation of its own and recalls after each turn, each
    # recall saving what it indexed (SAVE_AFTER=1 in the children too) and merging segments.
    ops = {w: [op for k in range(12) for op in (
        ["append", f"alice-{w}", "alice", "user", f"the {w}{k} lantern festival in {w}town"],
        ["recall", "alice", f"{w}{k} lantern festival"],
    )] for w in ("left", "right")}  # fmt: skip
    monkeypatch.setenv("BYHEART_TEST_SAVE_AFTER", "1")
    procs = [child(backend, ops[w]) for w in ops]
    for proc in procs:
        finish(proc)
    for query in ("lantern festival lefttown", "right7 lantern", "the 0x1 train timetable"):
        assert loaded(backend, query, "alice") == from_rows(backend, query, "alice")
    saved = pieces(backend, "alice")
    assert 1 <= len(saved["recall_segments"]) <= 6  # merged as they came, not one a save
    (version,) = saved["recall_users"][0]
    assert version > 2  # both wrote, one at a time


def test_a_user_sharing_terms_with_another_gets_only_their_own_from_the_pieces(
    backend: Backend,
) -> None:
    with backend.store() as store:
        for k in range(10):
            store.open(f"a{k % 2}", user="alice").append("user", f"the lighthouse keeper {k}")
            store.open(f"b{k % 2}", user="bob").append(
                "user", f"the lighthouse password is zebrafinch{k}"
            )
        assert store.recall("lighthouse", user="alice") and store.recall("lighthouse", user="bob")
    assert b"zebrafinch" not in (kept(backend, "alice") or b"")
    assert b"zebrafinch" in (kept(backend, "bob") or b"")
    found = loaded(backend, "lighthouse password zebrafinch3", "alice")
    assert found and "zebrafinch" not in json.dumps(found)
    assert found == from_rows(backend, "lighthouse password zebrafinch3", "alice")


def test_rows_another_process_wrote_after_the_pieces_are_followed(backend: Backend) -> None:
    fill(backend)
    assert loaded(backend, "the 1x3 train timetable", "alice")
    writes = [["append", "alice-1", "alice", "user", "we moved the quokka cage"]]
    writes += [["append", f"alice-{k}", "alice", "assistant", f"noted {k}"] for k in range(3)]
    finish(child(backend, writes))  # fewer turns than a save needs: the pieces lack them
    found = loaded(backend, "quokka cage", "alice")
    assert found and "quokka" in found[0]["text"]
    assert found == from_rows(backend, "quokka cage", "alice")


# A property: whatever two store objects write, and whichever conversation their recalls leave
# out, a new store object recalls what an index built from the rows recalls (the pieces saved
# after every step, or after 8 turns: then store objects of the process borrow what another
# assembled and copy it before following the rows).
PIECE_OPS = st.lists(st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["a0", "a1", "b0"]), st.sampled_from(WORDS)),
    st.tuples(st.just("redact"), st.sampled_from(["a0", "a1"]), st.integers(0, 4)),
    st.tuples(st.just("delete"), st.sampled_from(["a1", "b0"]), st.just("")),
    # A question about the user loads only the lists of their own words.
    st.tuples(st.just("recall"), st.sampled_from(["", "a0", "a1"]),
              st.sampled_from(WORDS + tuple(f"what did I say about {w}?" for w in WORDS))),
), max_size=25)  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=PIECE_OPS, save_after=st.sampled_from([1, 8]))
def test_a_new_store_object_recalls_what_the_rows_say(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, Any]], save_after: int
) -> None:
    b = Backend("sqlite", str(tmp_path_factory.mktemp("p") / "c.db"))
    model: dict[str, list[str | None]] = {}
    with mock.patch.object(user_kept, "SAVE_AFTER", save_after), b.store() as one, b.store() as two:
        for serial, (op, name, arg) in enumerate(ops):
            if op != "recall":
                write((one, two)[serial % 2], model, op, name, arg, serial, OWNER[name])
                continue
            left_out = (one, two)[serial % 2].recall(arg, user="a", exclude=[name] if name else [])
            assert not name or all(p["conversation"] != name for p in left_out)
            query = f"{arg} and some words"
            assert loaded(b, query, "a", 400) == from_rows(b, query, "a", 400)


ABOUT_ME = "what did I say about the 1x3 train timetable?"
ABOUT_THEM = "what did they say about the 1x3 train timetable?"  # the same terms


def test_a_question_about_the_user_loads_the_lists_of_their_words_only(backend: Backend) -> None:
    fill(backend)
    assert loaded(backend, "the 1x3 train timetable", "alice")  # built from the rows, written
    SEGMENTS.clear()
    with backend.store() as store:
        found = store.recall(ABOUT_ME, user="alice")
        ui = store._recaller._users["alice"]
        assert ui.kinds == {"mine"} and ui.user_index._postings and not ui.index._postings
        # A question of the same store object with the same terms, not about the user: ranked
        # over every word, whose lists were not loaded: loaded again whole, kept for any query.
        other = store.recall(ABOUT_THEM, user="alice")
        ui = store._recaller._users["alice"]
        assert ui.kinds == _user_index.INDEXES and ui.scope is None
    assert found and found == from_rows(backend, ABOUT_ME, "alice")
    assert other and other == from_rows(backend, ABOUT_THEM, "alice")


def test_a_question_about_a_user_who_said_nothing_is_ranked_over_every_word(
    backend: Backend,
) -> None:
    with backend.store() as store:
        mem = store.open("notes", user="alice")
        for k in range(6):
            mem.append("assistant", FILLER.format(k=f"1x{k}"))
    assert loaded(backend, "the 1x3 train timetable", "alice")
    SEGMENTS.clear()
    with backend.store() as store:
        found = store.recall(ABOUT_ME, user="alice")
        assert store._recaller._users["alice"].kinds == _user_index.INDEXES
    assert found and found == from_rows(backend, ABOUT_ME, "alice")


def test_a_question_about_the_user_after_another_store_object_deleted_their_words(
    backend: Backend,
) -> None:
    with backend.store() as store:
        store.open("said", user="alice").append("user", FILLER.format(k="1x3"))
        mem = store.open("replies", user="alice")
        for k in range(6):
            mem.append("assistant", FILLER.format(k=f"1x{k}"))
    assert loaded(backend, "the 1x3 train timetable", "alice")
    SEGMENTS.clear()
    with backend.store() as reader, backend.store() as writer:
        assert reader.recall(ABOUT_ME, user="alice")  # the lists of the user's words only
        writer.delete("said")  # every word the user said
        found = reader.recall(ABOUT_ME, user="alice")  # the reader follows the deletion
    assert found and all(p["conversation"] == "replies" for p in found)
    assert found == from_rows(backend, ABOUT_ME, "alice")


def test_a_schema_5_store_upgrades_dropping_the_one_blob_index(backend: Backend) -> None:
    fill(backend)
    prefix = "" if backend.kind == "sqlite" else "{s}."
    for table in PIECES:
        backend.sql(f"DROP TABLE {prefix}{table}")
    backend.sql(f"CREATE TABLE {prefix}recall_index (user_id TEXT PRIMARY KEY, data BYTEA)"
                if backend.kind != "sqlite" else
                "CREATE TABLE recall_index (user_id TEXT PRIMARY KEY, data BLOB)")  # fmt: skip
    backend.sql(f"INSERT INTO {prefix}recall_index VALUES (%s, %s)", ("alice", b"BHUI old"))
    backend.sql(f"UPDATE {prefix}meta SET value = '5' WHERE key = 'schema_version'")
    with backend.store() as store:  # upgraded as it opens
        assert store.recall("the 1x3 train timetable", user="alice")
    tables = select(backend, "SELECT value FROM {s}meta WHERE key = 'schema_version'")
    assert tables == [(str(SCHEMA_VERSION),)] and SCHEMA_VERSION == 7
    if backend.kind == "sqlite":  # 7: a merge finds a segment's postings by an index
        found = select(backend, "SELECT name FROM sqlite_master WHERE name = 'recall_terms_seg'")
    else:
        found = select(backend, "SELECT indexname FROM pg_indexes WHERE schemaname = %s "
                       "AND indexname = 'recall_terms_seg'", (backend.schema,))  # fmt: skip
    assert len(found) == 1
    assert kept(backend, "alice") is not None  # the pieces written by that first recall
    with pytest.raises(Exception, match="recall_index"):
        select(backend, "SELECT * FROM {s}recall_index")


def test_long_lists_load_grouped_as_the_head_walks_them(backend: Backend) -> None:
    mem = Memory()
    for k in range(700):  # a stretch per exchange: 700 hold "harbor", in groups of tf, length
        mem.append("user", f"the harbor ferry number {k} " + "words and more " * (30 + k % 13))
        mem.append("assistant", "harbor noted " * (1 + k % 3) + "filler text " * 30)
    with backend.store() as store:
        store.import_("big", mem.to_dict(), user="alice")
        assert store.recall("harbor ferry", user="alice")  # written whole, the list grouped
    with mock.patch.object(user_kept, "SAVE_AFTER", 1), backend.store() as store:
        live = store.open("big", user="alice")
        live.append("user", "the harbor ferry again " * 20)
        live.append("assistant", "harbor harbor")
        live.append("user", "and one more harbor " * 30)
        assert store.recall("harbor ferry", user="alice")  # a newer segment: what changed
    assert len(pieces(backend, "alice")["recall_segments"]) == 2
    grouped_here: list[int] = []  # the lists a load left for the head walk to group

    def bands_of(entry: Postings, lengths: Any) -> Any:
        if entry.bands is None:
            grouped_here.append(len(entry.ids))
        return banded(entry, lengths)

    with backend.store() as store, mock.patch.object(head, "bands_of", bands_of):
        found = store.recall("harbor ferry", user="alice")
        assert grouped_here == []
        index = store._recaller._users["alice"].index
        entry = index._postings["harbor"]
        assert isinstance(entry, Postings) and entry.bands is not None  # loaded grouped
        kept_groups = {tf: (list(b.lengths), [sorted(g) for g in b.groups])
                       for tf, b in entry.bands.items()}  # fmt: skip
        again = banded(Postings(entry.ids, entry.tfs, -1), index._lengths)
        assert kept_groups == {tf: (list(b.lengths), [sorted(g) for g in b.groups])
                               for tf, b in again.items()}  # fmt: skip
    assert found == from_rows(backend, "harbor ferry", "alice", 6_000)


def test_a_store_object_asked_other_terms_than_it_loaded_answers_them_too(
    backend: Backend,
) -> None:
    fill(backend)
    with backend.store() as store:
        store.open("pets", user="alice").append("user", "the quokka sleeps in the garden shed")
    assert loaded(backend, "train timetable", "alice")  # the pieces kept
    with backend.store() as store:  # one object, as a long-lived process keeps it
        assert store.recall("the 2x1 train timetable", user="alice")  # loaded for these terms
        assert store._recaller._users["alice"].scope is not None
        found = store.recall("where does the quokka sleep?", user="alice", budget=100_000)
        assert store._recaller._users["alice"].scope is None  # every term, kept from now on
    assert found and "quokka" in found[0]["text"]
    assert found == from_rows(backend, "where does the quokka sleep?", "alice")


@settings(max_examples=200, deadline=None)
@given(
    every=st.sets(st.integers(0, 400), max_size=120),
    mine=st.sets(st.integers(0, 400), max_size=60),
    stale=st.sets(st.integers(0, 420), max_size=40),
)
def test_stale_stretches_drop_from_a_segments_postings_however_many(
    every: set[int], mine: set[int], stale: set[int]
) -> None:
    # A load drops from the dense segment's lists the stretches newer segments hold, one
    # lookup each when they are few: what stays is every other posting with its count.
    from array import array

    from yait_byheart._retrieval.codec import U32

    def four() -> user_saved.Four:
        e, m = sorted(every), sorted(mine)
        return (array(U32, e), array(U32, [d % 7 + 1 for d in e]),
                array(U32, m), array(U32, [d % 5 + 1 for d in m]))  # fmt: skip

    e, m = sorted(every - stale), sorted(mine - stale)
    for share in (0, 10**9):  # looked up one by one; one pass over each list
        with mock.patch.object(user_saved, "_BISECT_SHARE", share):
            got = user_saved._dropped(four(), stale)
        assert [list(a) for a in got] == [e, [d % 7 + 1 for d in e], m, [d % 5 + 1 for d in m]]


def test_a_stretch_a_newer_segment_holds_again_is_dropped_from_the_older_ones(
    backend: Backend, rows_read: list[int]
) -> None:
    # A chat's last stretch grows with each turn: a later, smaller segment holds it again,
    # and each older segment that held it (the dense one, or a newer one) drops its postings.
    mem = Memory()
    for k in range(600):
        mem.append("user" if k % 2 == 0 else "assistant", FILLER.format(k=k) * 4)
    with backend.store() as store:
        store.import_("old", mem.to_dict(), user="alice")
        assert store.recall("the train timetable", user="alice")  # the dense segment
    with mock.patch.object(user_kept, "SAVE_AFTER", 1), backend.store() as store:
        chat = store.open("chat", user="alice")
        for k in range(24):
            chat.append("user" if k % 2 == 0 else "assistant", f"the quokka {k} ate " * 20)
        assert store.recall("quokka", user="alice")  # a segment of the chat
    with mock.patch.object(user_kept, "SAVE_AFTER", 1), backend.store() as store:
        store.open("chat", user="alice").append("user", "the quokka ate again")
        assert store.recall("quokka", user="alice")  # its last stretch, held again
    assert len(pieces(backend, "alice")["recall_segments"]) == 3
    SEGMENTS.clear()
    rows_read.clear()
    found = loaded(backend, "the quokka ate again", "alice", 800)
    assert rows_read == []  # loaded from the pieces, not rebuilt from the rows
    ((parts, _),) = [held for held in SEGMENTS._held.values()
                     if isinstance(held[0], user_saved.Parts)]  # fmt: skip
    dense, sparse, newest = sorted(parts.stale)
    # Each segment's stale stretches are some it holds: none of the chat's in the dense one.
    assert parts.stale[sparse] and not parts.stale[dense] and not parts.stale[newest]
    assert found == from_rows(backend, "the quokka ate again", "alice", 800)
