"""Reopening from a snapshot that carries the layout (`Memory.index_snapshot(layout=True)`, what
stores keep): the turns it holds are stored as measured before, never rendered again, and the
Memory is exactly the one a full replay builds; a layout taken under other settings, from other
turns, by another version, or damaged, is ignored and the turns are laid out as before."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import yait_byheart._follow.follower as follower_module
from yait_byheart import Memory, Tuning
from yait_byheart._retrieval import snapshot
from yait_byheart._turns.conversation import Conversation, restore
from yait_byheart.store import SQLiteStore

WORDS = (
    "ferry harbour tomato violin lisbon invoice server error garden train ticket euro cafe "
    "flight hotel passport museum dinner sister birthday recipe oven pasta marathon"
).split()


def sentence(seed: int, words: int) -> str:
    out = []
    for k in range(words):
        out.append(WORDS[(seed * 7 + k * 13 + k * k) % len(WORDS)])
        if k % 11 == 10:
            out[-1] += ".\n\n" if k % 3 else "."
    return " ".join(out).capitalize() + "."


def talk(mem: Memory, turns: int, seed: int = 0) -> None:
    """Short and long turns (cut into pieces), tool rounds, dates, keys, an empty turn."""
    call = 0
    for i in range(turns):
        day = f"{1 + (i + seed) // 9} May 2023"
        if (i + seed) % 17 == 5:
            call += 1
            cid = f"c{seed}-{call}"
            mem.append_message(
                {"role": "assistant", "parts": [
                    {"type": "text", "text": sentence(i, 5)},
                    {"type": "tool_call", "id": cid, "name": "find", "arguments": "{}"},
                ]}, when=day,
            )  # fmt: skip
            result = {"type": "tool_result", "id": cid, "output": sentence(i, 40)}
            mem.append_message({"role": "user", "parts": [result]}, when=day)
            continue
        words = 300 + (i * 37) % 400 if (i + seed) % 13 == 3 else 4 + (i * 7 + seed) % 30
        role = "user" if i % 2 == 0 else "assistant"
        kind = {"kind": "supplied", "source": "notes.md"} if (i + seed) % 23 == 7 else {}
        text = "" if (i + seed) % 29 == 11 else sentence(i + seed, words)
        mem.append(role, text, when=day, key=f"k{seed}-{i}" if i % 5 == 0 else None, **kind)
        if i % 11 == 0:
            mem.compose("the oven and the " + WORDS[i % len(WORDS)])


def inside(mem: Memory) -> dict[str, Any]:
    """Everything a Memory's conversation holds, caches measured and the index synced."""
    c = mem._conv
    mem._ranker.sync()
    return {
        "dict": json.dumps(mem.to_dict(), sort_keys=True),
        "turns": [repr(t) for t in c.turns],
        "entries": [repr(e) for e in c.entries],
        "first_entry": c.first_entry,
        "sizes": c.sizes,
        "opens": c.opens,
        "starts": c.starts,
        "stretch_sizes": list(c.stretch_sizes),
        "open": (c.open_start, c.open_size, c.total_size, c.silent_entries),
        "tools": [list(d.items()) for d in (c.open_calls, c.calls, c.answered)],
        "keys": (sorted(mem._follower.keys.items()), sorted(mem._follower.key_at.items())),
        "index": (len(mem._ranker.index), len(mem._ranker.user_index)),
        "joins": [c.join_saving(k) for k in range(1, len(c.starts))],
    }


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many turns each `conversation.restore` stored (one entry per reopening that used
    a layout)."""
    calls: list[int] = []

    def spy(conv: Conversation, turns: Any, *args: Any) -> None:
        calls.append(len(turns))
        restore(conv, turns, *args)

    monkeypatch.setattr(follower_module, "restore", spy)
    return calls


def round_trip(data: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(data))
    return loaded


@pytest.mark.parametrize(("budget", "chunk"), [(2_000, 300), (6_000, 900), (20_000, 120)])
def test_a_layout_reopens_exactly_the_memory_a_replay_builds(
    restored: list[int], budget: int, chunk: int
) -> None:
    mem = Memory(budget=budget, chunk=chunk)
    talk(mem, 260)
    data = round_trip(mem.to_dict())
    plain = Memory.from_dict(data)
    assert restored == []
    fast = Memory.from_dict(data, index_snapshot=mem.index_snapshot(layout=True))
    assert restored == [len(mem)]
    assert fast.snapshot_stretches == mem.stretch_count > 20
    assert len(mem._conv.entries) > len(mem)  # some turns were cut into pieces
    expected = inside(plain)
    assert inside(fast) == expected
    assert inside(mem) == expected
    for query in ("the oven and the pasta", "what did I say about my sister?", None):
        assert fast.compose(query) == plain.compose(query) == mem.compose(query)
    mem.append("user", "and the ferry to Lisbon?")
    fast.append("user", "and the ferry to Lisbon?")
    assert inside(fast) == inside(mem)


def test_a_layout_of_fewer_turns_restores_those_and_lays_out_the_rest(restored: list[int]) -> None:
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 120)
    early, held = mem.index_snapshot(layout=True), len(mem)
    talk(mem, 80, seed=120)
    data = round_trip(mem.to_dict())
    fast = Memory.from_dict(data, index_snapshot=early)
    assert restored == [held] and 0 < fast.snapshot_stretches < mem.stretch_count
    assert inside(fast) == inside(Memory.from_dict(data))


def test_a_layout_from_other_settings_or_turns_is_ignored(restored: list[int]) -> None:
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 150)
    data = round_trip(mem.to_dict())
    layout = mem.index_snapshot(layout=True)
    others: list[dict[str, Any]] = [
        {"budget": 2_999}, {"chunk": 301}, {"tuning": Tuning(cut_over=2.5)},
        {"measure": len},  # a caller's measure, even len itself, cannot be checked
    ]  # fmt: skip
    for override in others:
        again = Memory.from_dict(data, index_snapshot=layout, **override)
        assert inside(again) == inside(Memory.from_dict(data, **override))
    assert restored == []
    # The settings a layout does not depend on keep it.
    Memory.from_dict(data, index_snapshot=layout, stability=0.2, ceiling=2.0, language="en")
    assert restored == [len(mem)]
    restored.clear()

    def edited(index: int, **fields: Any) -> dict[str, Any]:
        changed = round_trip(data)
        changed["turns"][index].update(fields)
        return changed

    turn = data["turns"][40]
    for changed in (
        edited(40, text=turn["text"] + "!"),
        edited(40, shown=turn.get("shown", turn["text"]).replace("e", "E", 1)),
        edited(40, role="assistant" if turn["role"] == "user" else "user"),
        edited(40, when="9 June 2023"),
        edited(40, kind="derived", source="a tool"),
        edited(40, text="", redacted=True),
        edited(41, opens=not data["turns"][41].get("opens", False)),
    ):
        again = Memory.from_dict(changed, index_snapshot=layout)
        assert inside(again) == inside(Memory.from_dict(changed))
    assert restored == []


def test_a_tuning_field_added_later_keeps_the_stored_layouts(restored: list[int]) -> None:
    # The key as every snapshot since layouts were kept carries it (the repr of the Tuning of
    # that time): a field added since (rank_fusion) must neither enter it nor drop a layout.
    shape = Memory(budget=3_000, chunk=300)._conv.shape
    older = (
        "3000 300 Tuning(stretch_share=0.3333333333333333, stretches_per_budget=20.0, "
        "cut_over=2.0, max_stretch_share=0.5, close_at_any_turn=False, context_weight=1.0, "
        "context_width=1, date_boost=0.25, query_terms=8, common_share=1.0, shared_score=0.65, "
        "strong_join=0.75, rank_offset=10, recency_fill_scan=200, misfits=32, cache_write=1.25, "
        "cache_read=0.1, mean_over_budget=2.0)"
    )
    assert snapshot._shape_key(shape) == older.encode()
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 120)
    data = round_trip(mem.to_dict())
    layout = mem.index_snapshot(layout=True)
    Memory.from_dict(data, index_snapshot=layout, tuning=Tuning(rank_fusion=True))
    assert restored == [len(mem)]


def test_a_reader_that_cuts_what_the_writer_did_not_restores_its_own_cuts(
    restored: list[int],
) -> None:
    writer = Memory(budget=20_000, chunk=900)
    talk(writer, 150)
    data = round_trip(writer.to_dict())
    reader = Memory.from_dict(data, chunk=150)  # cuts turns the records hold whole
    assert len(reader._conv.entries) > len(writer._conv.entries)
    layout = reader.index_snapshot(layout=True)
    again = Memory.from_dict(data, index_snapshot=layout, chunk=150)
    assert restored == [len(writer)]
    assert inside(again) == inside(reader)
    # The same turns recorded with the reader's own cuts: the layout is the same.
    recut = round_trip(reader.to_dict())
    assert inside(Memory.from_dict(recut, index_snapshot=layout, chunk=150)) == inside(reader)
    # Openings recorded for the pieces of a turn the record holds whole are replayed too.
    cut = next(
        t for t in range(len(writer)) if reader._conv.entries[reader._conv.first_entry[t]].parts > 1
    )
    first = reader._conv.first_entry[cut]
    flags = reader._conv.opens[first : first + 2]
    for second in (flags[1], not flags[1]):
        odd = round_trip(data)
        odd["turns"][cut]["opens"] = [flags[0], second]
        restored.clear()
        again = Memory.from_dict(odd, index_snapshot=layout, chunk=150)
        assert inside(again) == inside(Memory.from_dict(odd, chunk=150))
        assert restored == ([len(writer)] if second == flags[1] else [])
    # ...but a layout made from records holding other cuts is not this data's.
    coarse = Memory.from_dict(recut, chunk=900)
    wrong = coarse.index_snapshot(layout=True)
    restored.clear()
    assert inside(Memory.from_dict(data, index_snapshot=wrong, chunk=900)) == inside(
        Memory.from_dict(data, chunk=900)
    )
    assert restored == []


def test_a_memory_that_redacted_keeps_no_layout_and_a_reopened_one_does(
    restored: list[int],
) -> None:
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 120)
    mem.redact(30)
    plain = mem.index_snapshot()
    assert mem.index_snapshot(layout=True) == plain  # the index alone
    data = round_trip(mem.to_dict())
    again = Memory.from_dict(data, index_snapshot=plain)
    assert restored == [] and again.snapshot_stretches > 0
    layout = again.index_snapshot(layout=True)
    assert len(layout) > len(plain)
    third = Memory.from_dict(data, index_snapshot=layout)
    assert restored == [len(mem)]
    assert inside(third) == inside(again)


def test_a_caller_measure_keeps_no_layout() -> None:
    mem = Memory(budget=3_000, chunk=300, measure=lambda text: (len(text) + 3) // 4)
    talk(mem, 60)
    assert mem.index_snapshot(layout=True) == mem.index_snapshot()


def test_a_damaged_or_older_layout_is_ignored_never_misread(restored: list[int]) -> None:
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 120)
    data = round_trip(mem.to_dict())
    expected = inside(Memory.from_dict(data))
    layout = mem.index_snapshot(layout=True)
    head = snapshot._LAYOUT_HEAD.size
    (body,) = struct.unpack_from("<I", layout, 8)
    older = bytearray(layout)
    struct.pack_into("<I", older, 4, snapshot.INDEX_VERSION - 1)
    broken = [bytes(older), layout[:3], layout[:head], layout[: head + body // 2],
              b"BHLY" + b"\x00" * 64]  # fmt: skip
    for at in (head + 2, head + 30, head + body // 2, head + body - 1):
        flipped = bytearray(layout)
        flipped[at] ^= 0x10
        broken.append(bytes(flipped))
    for damaged in broken:
        assert inside(Memory.from_dict(data, index_snapshot=damaged)) == expected
    assert restored == []
    # A sound layout before a damaged or cut index: its checksum covers the index too, so
    # neither is used (the index is trusted without a pass over its postings when it holds).
    flipped = bytearray(layout)
    flipped[head + body + 30] ^= 0x10
    for damaged in (layout[: head + body], layout[: head + body + 40], bytes(flipped)):
        again = Memory.from_dict(data, index_snapshot=damaged)
        assert inside(again) == expected and again.snapshot_stretches == 0
    assert restored == []
    sound = Memory.from_dict(data, index_snapshot=layout)
    assert inside(sound) == expected and sound.snapshot_stretches > 0
    assert restored == [len(mem)]
    # An index snapshot of the version before (no layout) is ignored too.
    plain = bytearray(mem.index_snapshot())
    struct.pack_into("<I", plain, 4, snapshot.INDEX_VERSION - 1)
    assert Memory.from_dict(data, index_snapshot=bytes(plain)).snapshot_stretches == 0


def test_a_store_keeps_the_layout_and_reopens_with_it(tmp_path: Path, restored: list[int]) -> None:
    path = tmp_path / "chats.db"
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 200)
    with SQLiteStore(path) as store:
        store.import_("c", mem.to_dict())
    with SQLiteStore(path) as store:
        again = store.open("c")
        assert restored == [len(mem)]
        assert inside(again) == inside(mem)
        assert again.compose("the pasta recipe") == mem.compose("the pasta recipe")


def test_a_store_holding_an_older_snapshot_writes_one_with_the_layout(
    tmp_path: Path, restored: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    import yait_byheart.store as store_module

    monkeypatch.setattr(store_module, "SNAPSHOT_EVERY", 5)
    path = tmp_path / "chats.db"
    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 200)
    with SQLiteStore(path) as store:
        store.import_("c", mem.to_dict())
        conv = store._b_load("c").conv  # type: ignore[union-attr]
        older = bytearray(mem.index_snapshot())
        struct.pack_into("<I", older, 4, snapshot.INDEX_VERSION - 1)
        with store._transaction("BEGIN IMMEDIATE") as conn:
            conn.execute("UPDATE snapshots SET data = ? WHERE conv = ?", (bytes(older), conv))
    with SQLiteStore(path) as store:
        first = store.open("c")  # ignores it, indexes anew and writes a new one
        assert first.snapshot_stretches == 0 and restored == []
    with SQLiteStore(path) as store:
        again = store.open("c")
        assert again.snapshot_stretches == mem.stretch_count and restored == [len(mem)]
        assert inside(again) == inside(mem)


@settings(max_examples=40, deadline=None)
@given(
    turns=st.lists(
        st.tuples(
            st.sampled_from(["user", "assistant"]),
            st.integers(0, 700),  # words
            st.integers(0, 3),  # day
            st.booleans(),  # a tool round after it
        ),
        min_size=1,
        max_size=60,
    ),
    budget=st.integers(200, 8_000),
    chunk=st.integers(20, 1_200),
    redact=st.lists(st.integers(0, 200), max_size=3),
    prefix=st.floats(0.0, 1.0),
)
def test_reopening_with_a_layout_is_reopening_without_one(
    turns: list[tuple[str, int, int, bool]], budget: int, chunk: int, redact: list[int],
    prefix: float,
) -> None:  # fmt: skip
    mem = Memory(budget=budget, chunk=chunk)
    cut_at = int(len(turns) * prefix)
    layout = b""
    for k, (role, words, day, tool) in enumerate(turns):
        if k == cut_at:
            layout = mem.index_snapshot(layout=True)
        when = f"{day + 1} May 2023" if day else ""
        mem.append(role, sentence(k, words), when=when)
        if tool:
            mem.append_message(
                {"role": "assistant", "parts": [
                    {"type": "tool_call", "id": f"c{k}", "name": "f", "arguments": "{}"}]},
                when=when,
            )  # fmt: skip
            result = {"type": "tool_result", "id": f"c{k}", "output": sentence(k + 1, words // 3)}
            mem.append_message({"role": "user", "parts": [result]}, when=when)
    for index in redact:
        if index < len(mem):
            mem.redact(index)
    data = round_trip(mem.to_dict())
    plain = Memory.from_dict(data)
    expected = inside(plain)
    # The snapshot of a replayed Memory (stores write these), and one taken before the last
    # turns and redactions (used only where its turns are unchanged).
    full = plain.index_snapshot(layout=True)
    for given_snapshot in (full, layout):
        again = Memory.from_dict(data, index_snapshot=given_snapshot)
        assert inside(again) == expected
    assert Memory.from_dict(data, index_snapshot=full).compose("oven pasta") == plain.compose(
        "oven pasta"
    )


def test_a_store_reads_the_rows_in_one_row_as_row_by_row(tmp_path: Path) -> None:
    from yait_byheart.store._rows import joined_records

    mem = Memory(budget=3_000, chunk=300)
    talk(mem, 120)
    with SQLiteStore(tmp_path / "chats.db") as store:
        store.import_("c", mem.to_dict())
        loaded = store._read("c")
        assert loaded is not None and loaded.records is not None and loaded.turns == []
        assert loaded.records == store.export("c")["turns"] == mem.to_dict()["turns"]
    # Anything but turns 0 to n - 1 in order, one JSON value each, is read row by row.
    assert joined_records(3, "0,1,2", b'{"a":1},[2],3') == [{"a": 1}, [2], 3]
    assert joined_records(0, "", b"") == []
    for count, idxs, records in (
        (3, "0,2,1", b"1,2,3"),  # another order
        (3, "0,1,3", b"1,2,3"),  # a row missing
        (3, "0,1,2", b"1,2,3,4"),  # a row that reads as two values
        (3, "0,1,2", b'1,{"a":,3'),  # not JSON
        (2, "0,1", b"\xff\xfe,1"),  # not UTF-8
    ):
        assert joined_records(count, idxs, records) is None


def test_rows_past_sqlites_longest_string_are_read_one_by_one(
    tmp_path: Path, restored: list[int]
) -> None:
    import sqlite3

    mem = Memory(budget=20_000, chunk=20_000)
    talk(mem, 120)
    for k in range(10):  # long turns, whole: the rows outgrow the snapshot
        mem.append("user" if k % 2 else "assistant", sentence(k, 1_200))
    with SQLiteStore(tmp_path / "chats.db") as store:
        store.import_("c", mem.to_dict())
        loaded = store._b_load("c")
        assert loaded is not None and loaded.snapshot is not None
        rows = sum(len(raw) for _i, raw in loaded.turns)
        longest = max(len(loaded.snapshot), *(len(raw) for _i, raw in loaded.turns))
        assert longest < rows
        # Every row and the snapshot fit, the rows joined do not.
        store._conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, longest + 1)
        again = store._read("c")
        assert again is not None and again.records is None and len(again.turns) == len(mem)
        assert inside(store.open("c")) == inside(mem)
        assert restored == [len(mem)]
